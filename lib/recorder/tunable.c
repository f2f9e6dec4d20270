/* SPDX-License-Identifier: MIT */
/* tunable.c - named integer and floating knobs (include/fdr/tunable.h).
 *
 * A program reads a tunable with FDR_TUNABLE(name, default): one relaxed
 * load of a static struct fdr__tunable (a "use"). Uses are listed in the
 * section "fdr_tunables" of their module and registered here when it is
 * loaded, like call sites (registry.c).
 *
 * DESIGN. The authoritative state is a table of entries, one per name,
 * without pointers (names in fixed arrays, numbers inline), so that it can
 * move to shared memory for the daemon and the scope. Next to it, process-
 * local, the list of uses and the entry of each. Setting a tunable (from a
 * NAME=VALUE item of FDR_TRACES / FDR_EVENTS / fdr_trace_set, or from
 * fdr_tunable_set*) validates the value against the entry's type and range,
 * stores it in the entry and then, with relaxed stores, in every use of
 * that name: readers on other threads see it at their next read. Both the
 * integer and the double form are stored in every use, so that two uses of
 * one name declared with different types still agree. Everything but the
 * readers runs under one mutex.
 *
 * A value may be set before any use of its name is registered (the
 * environment is parsed before the program's constructors have run, and a
 * library may be dlopen()ed later): the assignment then waits, with its
 * text and origin, in a short list of pending values (64), and is checked
 * and applied, in order, when the first use of its name is registered.
 * Once the main program is registered (control.c), each pending assignment
 * is warned about once: "unknown tunable". */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdr/fdr.h"
#include "common/pattern.h"
#include "recorder/cold.h"
#include "recorder/config.h"
#include "recorder/init.h"
#include "recorder/registry.h"
#include "recorder/self.h"
#include "recorder/tunable.h"

static void self_no_tunable(const char *name, double value)
{
    (void)name;
    (void)value;
}

static void self_no_change(const char *event, const char *what, int on)
{
    (void)event;
    (void)what;
    (void)on;
}

struct fdr__self_hooks fdr__self_hooks = {self_no_tunable, self_no_change};

#define MAX_TUNABLES 1024
#define NAME_LEN 64
#define ORIGIN_LEN 32
#define ITEM_LEN 96
#define MAX_PENDING 64

/* One tunable by name. Pointer-free: may live in shared memory. */
struct entry {
    char name[NAME_LEN];
    uint8_t declared; /* always 1 for now: entries are made by declarations */
    uint8_t is_double;
    uint8_t has_range;
    uint8_t reserved;
    uint32_t line;
    int64_t value, def, min, max;
    double value_double, def_double, min_double, max_double;
};

/* A NAME=VALUE for a name not declared yet, applied (in order) when it is. */
struct pending {
    char name[NAME_LEN];
    char origin[ORIGIN_LEN]; /* for its warning */
    char item[ITEM_LEN];     /* NAME=VALUE as written (cut if long) */
    int64_t ll;
    double dbl;
    uint8_t is_integer, used, warned;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FDR__COLD struct entry table[MAX_TUNABLES];
static uint32_t n_entries;
static FDR__COLD struct pending pend[MAX_PENDING];
static uint32_t n_pend;

/* Process-local. */
static FDR__COLD const char *entry_file[MAX_TUNABLES];
static struct fdr__tunable **uses;
static uint32_t *use_entry;
static size_t n_uses, cap_uses;
static const void *ranges[256];
static size_t n_ranges;

/* Around fork() (init.c): taken before, released after, in both. */
void fdr__tunables_fork(enum fdr__fork_phase ph)
{
    if (ph == FDR__FORK_PREPARE)
        pthread_mutex_lock(&lock);
    else
        pthread_mutex_unlock(&lock);
}

static int find(const char *name)
{
    for (uint32_t i = 0; i < n_entries; i++)
        if (strcmp(table[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int add(const char *name)
{
    if (n_entries >= MAX_TUNABLES || strlen(name) >= NAME_LEN)
        return -1;
    struct entry *e = &table[n_entries];
    memset(e, 0, sizeof *e);
    strcpy(e->name, name);
    return (int)n_entries++;
}

static int64_t to_i64(double d)
{
    if (!(d == d))
        return 0;
    if (d >= 9.2233720368547758e18)
        return INT64_MAX;
    if (d <= -9.2233720368547758e18)
        return INT64_MIN;
    return (int64_t)d;
}

/* Stores entry i's value into every use of it. */
static void publish(uint32_t i)
{
    const struct entry *e = &table[i];
    for (size_t k = 0; k < n_uses; k++) {
        if (use_entry[k] != i)
            continue;
        /* Relaxed: a tunable orders nothing; readers just see a new value. */
        __atomic_store_n(&uses[k]->value, e->value, __ATOMIC_RELAXED);
        double d = e->value_double;
        __atomic_store(&uses[k]->value_double, &d, __ATOMIC_RELAXED);
    }
}

/* Validates a value for declared entry e: integer form `ll` (exact when
 * is_integer) and double `dbl`. Returns 0 and stores it in e, or -EINVAL
 * (a fraction for an integer tunable, NaN) or -ERANGE. */
static int set_value(struct entry *e, int is_integer, long long ll, double dbl)
{
    if (!(dbl == dbl))
        return -EINVAL;
    if (!e->is_double) {
        if (!is_integer)
            return -EINVAL;
        if (e->has_range && (ll < e->min || ll > e->max))
            return -ERANGE;
        e->value = ll;
        e->value_double = (double)ll;
    } else {
        if (is_integer)
            dbl = (double)ll;
        if (isinf(dbl) || (e->has_range && (dbl < e->min_double || dbl > e->max_double)))
            return -ERANGE;
        e->value_double = dbl;
        e->value = to_i64(dbl);
    }
    return 0;
}

static void range_text(const struct entry *e, char *buf, size_t cap)
{
    if (e->is_double)
        snprintf(buf, cap, "%g to %g", e->min_double, e->max_double);
    else
        snprintf(buf, cap, "%lld to %lld", (long long)e->min, (long long)e->max);
}

/* The warning for a value refused by set_value (rc), item as written. */
static void warn_refused(const char *origin, const char *item, const struct entry *e,
                         int rc)
{
    char range[96];
    if (rc == -ERANGE && e->has_range) {
        range_text(e, range, sizeof range);
        fdr__warn("%s: ignoring \"%s\": out of range for tunable %s (%s)", origin, item,
                  e->name, range);
    } else if (rc == -ERANGE) {
        fdr__warn("%s: ignoring \"%s\": out of range for tunable %s", origin, item,
                  e->name);
    } else {
        fdr__warn("%s: ignoring \"%s\": tunable %s takes %s", origin, item, e->name,
                  e->is_double ? "a number" : "an integer");
    }
}

/* Declares entry i from use u (its first registered use). */
static void declare(uint32_t i, const struct fdr__tunable *u)
{
    struct entry *e = &table[i];
    e->declared = 1;
    e->is_double = u->is_double;
    e->has_range = u->has_range;
    e->line = u->line;
    entry_file[i] = u->file;
    e->def = u->def;
    e->min = u->min;
    e->max = u->max;
    e->def_double = u->def_double;
    e->min_double = u->min_double;
    e->max_double = u->max_double;
    if (e->is_double) {
        e->value_double = e->def_double;
        e->value = to_i64(e->def_double);
    } else {
        e->value = e->def;
        e->value_double = (double)e->def;
    }
    for (uint32_t k = 0; k < n_pend; k++) {
        struct pending *pv = &pend[k];
        if (pv->used || strcmp(pv->name, e->name) != 0)
            continue;
        pv->used = 1;
        int rc = set_value(e, pv->is_integer, pv->ll, pv->dbl);
        if (rc < 0)
            warn_refused(pv->origin, pv->item, e, rc);
    }
}

static int same_declaration(const struct entry *e, const struct fdr__tunable *u)
{
    if (e->is_double != u->is_double || e->has_range != u->has_range)
        return 0;
    if (e->is_double)
        return e->def_double == u->def_double &&
               (!e->has_range ||
                (e->min_double == u->min_double && e->max_double == u->max_double));
    return e->def == u->def && (!e->has_range || (e->min == u->min && e->max == u->max));
}

static void register_use(struct fdr__tunable *u)
{
    if (!u->name)
        return;
    if (n_uses == cap_uses) {
        size_t cap = cap_uses ? cap_uses * 2 : 64;
        struct fdr__tunable **nu = realloc(uses, cap * sizeof *nu);
        if (!nu)
            return;
        uses = nu;
        uint32_t *ne = realloc(use_entry, cap * sizeof *ne);
        if (!ne)
            return;
        use_entry = ne;
        cap_uses = cap;
    }
    int i = find(u->name);
    if (i < 0 && (i = add(u->name)) < 0) {
        fdr__warn("too many tunables, or a name too long: %s keeps its default", u->name);
        return;
    }
    struct entry *e = &table[i];
    if (!e->declared)
        declare((uint32_t)i, u);
    else if (!same_declaration(e, u))
        fdr__warn("tunable %s at %s:%u is declared at %s:%u with another type, default "
                  "or range; the first declaration is used",
                  e->name, u->file, u->line, entry_file[i], e->line);
    uses[n_uses] = u;
    use_entry[n_uses] = (uint32_t)i;
    n_uses++;
    publish((uint32_t)i);
}

void fdr__tunables_add(struct fdr__tunable *const *begin, struct fdr__tunable *const *end)
{
    pthread_mutex_lock(&lock);
    int known = 0;
    for (size_t i = 0; i < n_ranges && !known; i++)
        known = ranges[i] == begin;
    if (!known && begin != end) {
        if (n_ranges < sizeof ranges / sizeof ranges[0])
            ranges[n_ranges++] = begin;
        for (struct fdr__tunable *const *p = begin; p < end; p++)
            if (*p)
                register_use(*p);
    }
    pthread_mutex_unlock(&lock);
}

/* Forgets the uses of an unloaded module. A name left with no use is no
 * longer listed nor settable (-ENOENT) until a module declares it again;
 * its value is then the new declaration's default. */
void fdr__unregister_tunables(struct fdr__tunable *const *begin,
                              struct fdr__tunable *const *end)
{
    uintptr_t lo, hi;
    pthread_mutex_lock(&lock);
    fdr__range_forget(ranges, &n_ranges, (void *const *)begin, (void *const *)end, &lo,
                      &hi);
    size_t k = 0;
    for (size_t i = 0; i < n_uses; i++) {
        if ((uintptr_t)uses[i] >= lo && (uintptr_t)uses[i] <= hi)
            continue;
        uses[k] = uses[i];
        use_entry[k++] = use_entry[i];
    }
    n_uses = k;
    for (uint32_t e = 0; e < n_entries; e++) {
        int used = 0;
        for (size_t i = 0; i < n_uses && !used; i++)
            used = use_entry[i] == e;
        if (!used && table[e].declared) {
            table[e].declared = 0;
            entry_file[e] = NULL; /* the module's string */
        }
    }
    pthread_mutex_unlock(&lock);
}

void fdr__tunables_apply(const struct fdr__rules *r, const char *origin, int ready,
                         int record)
{
    size_t n = fdr__rules_tunable_count(r);
    /* The values taken, recorded once the lock is left (self.h). */
    struct {
        char name[NAME_LEN];
        double value;
    } taken[16];
    size_t n_taken = 0;
    pthread_mutex_lock(&lock);
    for (size_t k = 0; k < n; k++) {
        const char *name = NULL, *text = NULL;
        double dbl = 0;
        long long ll = 0;
        int is_integer = 0;
        if (fdr__rules_tunable(r, k, &name, &text) < 0 ||
            fdr__rules_tunable_number(r, k, &dbl, &ll, &is_integer) < 0)
            continue;
        char item[2 * FDR__PATTERN_ITEM_MAX + 2];
        snprintf(item, sizeof item, "%s=%s", name, text);
        int i = find(name);
        if (i >= 0 && table[i].declared) {
            int rc = set_value(&table[i], is_integer, ll, dbl);
            if (rc < 0) {
                warn_refused(origin, item, &table[i], rc);
                continue;
            }
            publish((uint32_t)i);
            if (record && n_taken < sizeof taken / sizeof *taken) {
                memcpy(taken[n_taken].name, table[i].name, NAME_LEN);
                taken[n_taken++].value =
                    table[i].is_double ? table[i].value_double : (double)table[i].value;
            }
            continue;
        }
        /* Not declared (yet): keep it for a later declaration. */
        if (ready)
            fdr__warn("%s: unknown tunable \"%s\" in \"%s\"", origin, name, item);
        if (n_pend >= MAX_PENDING || strlen(name) >= NAME_LEN) {
            if (!ready)
                fdr__warn("%s: ignoring \"%s\": too many values for unknown tunables",
                          origin, item);
            continue;
        }
        struct pending *pv = &pend[n_pend++];
        memset(pv, 0, sizeof *pv);
        strcpy(pv->name, name);
        snprintf(pv->origin, sizeof pv->origin, "%s", origin);
        size_t il = strlen(item) < ITEM_LEN - 1 ? strlen(item) : ITEM_LEN - 1;
        memcpy(pv->item, item, il); /* a long item is cut: it is only shown */
        pv->item[il] = '\0';
        pv->ll = ll;
        pv->dbl = dbl;
        pv->is_integer = (uint8_t)is_integer;
        pv->warned = (uint8_t)ready;
    }
    pthread_mutex_unlock(&lock);
    for (size_t k = 0; k < n_taken; k++)
        fdr__self_hooks.tunable(taken[k].name, taken[k].value);
}

void fdr__tunables_check_unknown(void)
{
    pthread_mutex_lock(&lock);
    for (uint32_t k = 0; k < n_pend; k++) {
        struct pending *pv = &pend[k];
        if (pv->used || pv->warned)
            continue;
        pv->warned = 1;
        fdr__warn("%s: unknown tunable \"%s\" in \"%s\"", pv->origin, pv->name, pv->item);
    }
    pthread_mutex_unlock(&lock);
}

static void fill_info(uint32_t i, fdr_tunable_info_t *info)
{
    const struct entry *e = &table[i];
    memset(info, 0, sizeof *info);
    info->size = sizeof *info;
    info->name = e->name;
    info->file = entry_file[i];
    info->line = (int)e->line;
    info->is_double = e->is_double;
    info->has_range = e->has_range;
    if (e->is_double) {
        info->value = e->value_double;
        info->def = e->def_double;
        info->min = e->min_double;
        info->max = e->max_double;
        info->value_int = e->value;
        info->def_int = to_i64(e->def_double);
        info->min_int = to_i64(e->min_double);
        info->max_int = to_i64(e->max_double);
    } else {
        info->value_int = e->value;
        info->def_int = e->def;
        info->min_int = e->min;
        info->max_int = e->max;
        info->value = (double)e->value;
        info->def = (double)e->def;
        info->min = (double)e->min;
        info->max = (double)e->max;
    }
}

static int set_api(const char *name, int is_integer, long long ll, double dbl)
{
    if (!name)
        return -EINVAL;
    pthread_mutex_lock(&lock);
    int i = find(name), rc;
    if (i < 0 || !table[i].declared) {
        rc = -ENOENT;
    } else {
        rc = set_value(&table[i], is_integer, ll, dbl);
        if (rc == 0)
            publish((uint32_t)i);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int fdr__tunable_set(const char *name, long long value)
{
    return set_api(name, 1, value, (double)value);
}

int fdr__tunable_set_double(const char *name, double value)
{
    /* A whole number within int64_t is also an integer value. */
    int whole = value == value && value >= -9.2233720368547758e18 &&
                value < 9.2233720368547758e18 && value == floor(value);
    return set_api(name, whole, whole ? (long long)value : 0, value);
}

int fdr__tunable_get(const char *name, fdr_tunable_info_t *info)
{
    if (!name || !info)
        return -EINVAL;
    pthread_mutex_lock(&lock);
    int i = find(name), rc = -ENOENT;
    if (i >= 0 && table[i].declared) {
        fill_info((uint32_t)i, info);
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int fdr__tunable_list(fdr_tunable_cb cb, void *arg)
{
    if (!cb)
        return -EINVAL;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n_entries; i++) {
        if (!table[i].declared)
            continue;
        fdr_tunable_info_t info;
        fill_info(i, &info);
        cb(arg, &info);
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

static void help_one(void *arg, const fdr_tunable_info_t *t)
{
    int *n = arg;
    if ((*n)++ == 0)
        fprintf(stderr, "tunables (name=value to set):\n");
    char range[96] = "";
    if (t->has_range && t->is_double)
        snprintf(range, sizeof range, ", %g to %g", t->min, t->max);
    else if (t->has_range)
        snprintf(range, sizeof range, ", %lld to %lld", t->min_int, t->max_int);
    if (t->is_double)
        fprintf(stderr, "  %s=%g  (double, default %g%s)\n", t->name, t->value, t->def,
                range);
    else
        fprintf(stderr, "  %s=%lld  (integer, default %lld%s)\n", t->name, t->value_int,
                t->def_int, range);
}

void fdr__tunables_help(void)
{
    int n = 0;
    fdr__tunable_list(help_one, &n);
    if (n == 0)
        fprintf(stderr, "tunables: none\n");
}
