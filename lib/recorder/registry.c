/* SPDX-License-Identifier: MIT */
/* registry.c - event classes, call sites and their on/off state.
 *
 * An event class is what a trace reader needs to decode an event: id,
 * provider, name, field names and types, format, source location. Classes
 * live in a table without pointers (strings are offsets into a pool in the
 * same mapping), so that the table can later live in shared memory and be
 * shared by processes through the daemon. Class ids are indexes + 1.
 *
 * A call site (struct fdr__site, a static in the instrumented code) is
 * registered once: at load time through the "fdr_sites" section, or on its
 * first use. Two sites with the same provider, name, field names, types and
 * format share a class; a site with the same name but other fields gets a
 * class of its own (CTF allows several classes with one name).
 *
 * The state of every site (recorded? printed?) is a function of its
 * provider:event name and two rule lists (pattern.c): the recording rules
 * (FDR_EVENTS, fdr_record_set) and the printing rules (FDR_TRACES,
 * fdr_trace_set). When a rule list changes, every site is recomputed and
 * its state byte stored with a relaxed store: the fast path sees the change
 * at its next event. All of this happens under one mutex, never on the fast
 * path. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fdr/fdr.h"
#include "common/format.h"
#include "common/pattern.h"
#include "recorder/cold.h"
#include "recorder/config.h"
#include "recorder/registry.h"
#include "recorder/buffer.h"

#define POOL_SIZE FDR__CLASS_POOL_SIZE
#define region fdr__class_table

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct region *reg;
static int reg_fd = -1; /* its memfd, sealed: fdrd maps it (daemon.c) */

/* Process-local: every known site, for state updates. */
static struct fdr__site **sites;
static size_t n_sites, cap_sites;

/* Process-local: hash of (provider, event) -> first class id with it.
 * One page of heads: chains of 8 at the most classes, looked up only when
 * a site registers; a larger table costs a page fault per class at start.
 * From a page of its own: one that straddled two (as the cold arrays
 * before it grew) cost a one-event program two faults, not one. */
#define HASH_SIZE 2048
static FDR__COLD_PAGE uint16_t hash_head[HASH_SIZE];
static FDR__COLD uint16_t hash_next[FDR__MAX_CLASSES + 1];

/* Known module ranges of the fdr_sites section. */
static const void *ranges[256];
static size_t n_ranges;

static struct fdr__rules *record_rules, *print_rules;
/* The fdrd traces the process records into (daemon.c), one per route slot:
 * while any is on, they decide what is recorded instead of record_rules.
 * An event is recorded by slot i when the slot's rules select it and bit
 * `category` of the slot's filter mask is set. The lowest slot on is the
 * primary: the fast path writes into its ring; an event of any other slot
 * takes the slow path (FDR__S_MULTI), which copies it (writer.c). */
static struct fdr__rules *route_rules[FDR__ROUTE_SLOTS];
static int route_default[FDR__ROUTE_SLOTS];
static uint32_t route_mask[FDR__ROUTE_SLOTS];
static uint32_t route_on; /* slots on; read by writers (relaxed) */
/* Per class id: the slots that record it (relaxed stores, under the lock;
 * read by writers, writer.c). */
uint32_t fdr__class_sel[FDR__MAX_CLASSES + 1] FDR__COLD;
/* What the recording rules decide for an event no item matches: all events
 * are recorded when FDR_EVENTS is unset or empty or starts with a '-' item
 * ("-net:rx": all but net:rx); "net:*" records only what it names. */
static int record_default = 1;

void fdr__registry_lock(void)
{
    pthread_mutex_lock(&lock);
}

void fdr__registry_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

/* A zeroed table, shared (MAP_SHARED): in a memfd whose size is sealed when
 * memfds work (*fd, else -1), so that fdrd can map it and read it without
 * fearing a SIGBUS (daemon.c). NULL when nothing could be mapped. */
static struct region *table_new(int *fd)
{
    size_t size = sizeof(struct region);
    int m = memfd_create("fdr-classes", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (m >= 0 &&
        (ftruncate(m, (off_t)size) < 0 ||
         fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)) {
        close(m);
        m = -1;
    }
    void *p =
        mmap(NULL, size, PROT_READ | PROT_WRITE,
             m >= 0 ? MAP_SHARED : MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, m, 0);
    if (p == MAP_FAILED) {
        if (m >= 0)
            close(m);
        return NULL;
    }
    *fd = m;
    return p;
}

void fdr__registry_init(void)
{
    if (reg)
        return;
    /* Shared, so that the drain helper (consumer.c) sees classes added
     * after it was cloned, and fdrd too (table_new). */
    int fd;
    struct region *p = table_new(&fd);
    if (!p) {
        fdr__warn("cannot map the event registry; tracing is off");
        return;
    }
    reg = p;
    reg_fd = fd;
    reg->magic = FDR__CLASS_TABLE_MAGIC;
    reg->pool_used = 1; /* offset 0 is "" */
}

int fdr__registry_share(uint64_t *size)
{
    *size = sizeof(struct region);
    return reg_fd;
}

/* The pool is mapped zeroed, so every offset below POOL_SIZE starts a
 * NUL-terminated string; classes are published by the release store of
 * n_classes (register_class), which the acquire load here pairs with. */
void fdr__registry_classes(struct fdr__classes *out)
{
    memset(out, 0, sizeof *out);
    if (!reg)
        return;
    out->classes = reg->classes;
    out->n = __atomic_load_n(&reg->n_classes, __ATOMIC_ACQUIRE);
    out->pool = reg->pool;
    out->pool_size = POOL_SIZE;
}

static const char *fdr__str(uint32_t off)
{
    struct fdr__classes t;
    fdr__registry_classes(&t);
    return fdr__classes_str(&t, off);
}

uint64_t fdr__registry_generation(void)
{
    return reg ? __atomic_load_n(&reg->generation, __ATOMIC_ACQUIRE) : 0;
}

static uint32_t intern(const char *s, size_t len)
{
    if (!s || len == 0)
        return 0;
    if (reg->pool_used + len + 1 > POOL_SIZE)
        return 0;
    uint32_t off = reg->pool_used;
    memcpy(reg->pool + off, s, len);
    reg->pool[off + len] = 0;
    reg->pool_used += (uint32_t)len + 1;
    return off;
}

static uint32_t intern_str(const char *s)
{
    return s ? intern(s, strlen(s)) : 0;
}

static unsigned hash_name(const char *p, const char *e)
{
    unsigned h = 2166136261u;
    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    h = (h ^ ':') * 16777619u;
    for (; *e; e++)
        h = (h ^ (unsigned char)*e) * 16777619u;
    return h % HASH_SIZE;
}

static int is_ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* Field names: from s->names ("a,b,c") or from the format ("len=%u"). A
 * missing, invalid or repeated name becomes argN. */
static void field_names(const struct fdr__site *s, char names[][64])
{
    for (unsigned i = 0; i < s->nargs; i++)
        names[i][0] = 0;
    if (s->names) {
        const char *p = s->names;
        for (unsigned i = 0; i < s->nargs && *p; i++) {
            size_t n = strcspn(p, ",");
            while (n && p[n - 1] == ' ')
                n--;
            if (n < 64) {
                memcpy(names[i], p, n);
                names[i][n] = 0;
            }
            p += strcspn(p, ",");
            if (*p == ',')
                p++;
            while (*p == ' ')
                p++;
        }
    } else if (s->format) {
        const char *f = s->format;
        unsigned i = 0;
        for (const char *c = f; *c && i < s->nargs; c++) {
            if (*c != '%')
                continue;
            if (c[1] == '%') {
                c++;
                continue;
            }
            /* a name is the identifier just before "=%" or ":%" */
            const char *e = c;
            if (e > f && (e[-1] == '=' || e[-1] == ':')) {
                const char *b = e - 1;
                while (b > f && is_ident_char(b[-1]))
                    b--;
                size_t n = (size_t)(e - 1 - b);
                if (n > 0 && n < 64) {
                    memcpy(names[i], b, n);
                    names[i][n] = 0;
                }
            }
            i++;
        }
    }
    for (unsigned i = 0; i < s->nargs; i++) {
        int ok = names[i][0] != 0 && !(names[i][0] >= '0' && names[i][0] <= '9');
        for (const char *c = names[i]; ok && *c; c++)
            ok = is_ident_char(*c);
        for (unsigned j = 0; ok && j < i; j++)
            ok = strcmp(names[i], names[j]) != 0;
        if (!ok) {
            names[i][0] = 'a';
            names[i][1] = 'r';
            names[i][2] = 'g';
            fdr__fmt_u64(names[i] + 3, i, 10, 0);
        }
    }
}

static int same_class(const struct fdr__class *c, const struct fdr__site *s,
                      char names[][64])
{
    if (c->kind != s->kind || c->nfields != s->nargs || c->category != s->category ||
        strcmp(fdr__str(c->format), s->format ? s->format : "") != 0)
        return 0;
    for (unsigned i = 0; i < s->nargs; i++)
        if (c->types[i] != fdr__class_type(s->types[i]) ||
            strcmp(fdr__str(c->names[i]), names[i]) != 0)
            return 0;
    return 1;
}

/* Returns the class id for site s, creating the class; 0 when full. */
static uint16_t class_for(const struct fdr__site *s)
{
    char names[FDR_MAX_FIELDS][64];
    field_names(s, names);
    unsigned h = hash_name(s->provider, s->event);
    for (uint16_t id = hash_head[h]; id; id = hash_next[id]) {
        const struct fdr__class *c = &reg->classes[id - 1];
        if (strcmp(fdr__str(c->provider), s->provider) == 0 &&
            strcmp(fdr__str(c->event), s->event) == 0 && same_class(c, s, names))
            return id;
    }
    if (reg->n_classes >= FDR__MAX_CLASSES || reg->n_classes >= 65535) {
        fdr__warn("too many event classes; %s:%s is not recorded", s->provider, s->event);
        return 0;
    }
    struct fdr__class *c = &reg->classes[reg->n_classes];
    memset(c, 0, sizeof *c);
    c->id = (uint16_t)(reg->n_classes + 1);
    c->nfields = s->nargs;
    c->kind = s->kind; /* FDR__SITE_TRACE or FDR__SITE_RAW */
    c->category = s->category < 32 ? s->category : 0;
    c->line = s->line;
    c->provider = intern_str(s->provider);
    c->event = intern_str(s->event);
    c->format = intern_str(s->format);
    c->file = intern_str(s->file);
    for (unsigned i = 0; i < s->nargs; i++) {
        c->types[i] = fdr__class_type(s->types[i]);
        c->names[i] = intern_str(names[i]);
    }
    hash_next[c->id] = hash_head[h];
    hash_head[h] = c->id;
    /* Observable: the class is complete before readers see the count. */
    __atomic_store_n(&reg->n_classes, reg->n_classes + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&reg->generation, reg->generation + 1, __ATOMIC_RELEASE);
    return c->id;
}

static int rules_take(struct fdr__rules *r, int def, const struct fdr__site *s)
{
    int m = r ? fdr__rules_match(r, s->provider, s->event) : -1;
    return m == 1 || (m == -1 && def);
}

/* The site's state, and in *sel the route slots that record it. */
static uint8_t compute_state(const struct fdr__site *s, uint32_t *sel)
{
    uint8_t st = 0;
    *sel = 0;
    if (route_on) {
        for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
            if ((route_on >> i & 1) && (route_mask[i] >> (s->category & 31) & 1) &&
                rules_take(route_rules[i], route_default[i], s))
                *sel |= 1u << i;
        /* With a trace of its own on disk (FDR_OUTPUT: fdr record), the
         * process keeps recording it as chosen, in its own rings: every
         * fdrd trace is then a copy. */
        uint32_t primary = fdr__cfg.output[0] ? 0 : route_on & -route_on;
        if (!primary && rules_take(record_rules, record_default, s))
            st |= FDR__S_RECORD;
        if (*sel & primary)
            st |= FDR__S_RECORD;
        if (*sel & ~primary)
            st |= FDR__S_MULTI;
    } else if (rules_take(record_rules, record_default, s))
        st |= FDR__S_RECORD;
    int pr = print_rules ? fdr__rules_match(print_rules, s->provider, s->event) : -1;
    if (pr == 1)
        st |= FDR__S_PRINT;
    return st;
}

static void set_state(struct fdr__site *s)
{
    uint32_t sel;
    uint8_t st = compute_state(s, &sel);
    if (s->kind != FDR__SITE_GUARD && s->id == 0)
        st = 0; /* no class: cannot be recorded */
    if (s->id && s->kind != FDR__SITE_GUARD)
        __atomic_store_n(&fdr__class_sel[s->id], sel, __ATOMIC_RELAXED);
    __atomic_store_n(&s->state, st, __ATOMIC_RELAXED);
}

void fdr__registry_fork_child(void)
{
    if (!reg)
        return;
    /* A table of the child's own, for its drain helper and its fdrd
     * registration: the parent's goes on changing. */
    int fd;
    struct region *p = table_new(&fd);
    if (!p)
        return; /* unlikely; the child then shares the parent's classes */
    memcpy(p, reg,
           offsetof(struct region, classes) + reg->n_classes * sizeof reg->classes[0]);
    memcpy(p->pool, reg->pool, reg->pool_used);
    munmap(reg, sizeof(struct region));
    reg = p;
    if (reg_fd >= 0)
        close(reg_fd);
    reg_fd = fd;
    /* The parent's fdrd traces are the parent's: the child records as
     * FDR_EVENTS says until fdrd routes it (the lock is ours: fork). */
    if (route_on) {
        for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++) {
            fdr__rules_free(route_rules[i]);
            route_rules[i] = NULL;
        }
        route_on = 0;
        for (size_t i = 0; i < n_sites; i++)
            set_state(sites[i]);
    }
}

uint32_t fdr__registry_routes_on(void)
{
    return __atomic_load_n(&route_on, __ATOMIC_RELAXED);
}

void fdr__registry_set_route(unsigned slot, struct fdr__rules *r, uint32_t mask)
{
    if (slot >= FDR__ROUTE_SLOTS) {
        fdr__rules_free(r);
        return;
    }
    pthread_mutex_lock(&lock);
    struct fdr__rules *old = route_rules[slot];
    route_rules[slot] = r;
    route_mask[slot] = mask;
    /* As FDR_TRACES (docs/daemon.md): an event no item matches is not
     * recorded, and a trace with no item records nothing. */
    route_default[slot] = 0;
    uint32_t bits = r ? route_on | 1u << slot : route_on & ~(1u << slot);
    __atomic_store_n(&route_on, bits, __ATOMIC_RELAXED);
    for (size_t i = 0; i < n_sites; i++)
        set_state(sites[i]);
    pthread_mutex_unlock(&lock);
    fdr__rules_free(old);
}

static void register_locked(struct fdr__site *s)
{
    if (!(__atomic_load_n(&s->state, __ATOMIC_RELAXED) & FDR__S_NEW))
        return;
    if (n_sites == cap_sites) {
        size_t cap = cap_sites ? cap_sites * 2 : 256;
        struct fdr__site **n = realloc(sites, cap * sizeof *n);
        if (!n) {
            __atomic_store_n(&s->state, 0, __ATOMIC_RELAXED);
            return;
        }
        sites = n;
        cap_sites = cap;
    }
    sites[n_sites++] = s;
    if (s->kind != FDR__SITE_GUARD && reg)
        s->id = class_for(s);
    set_state(s);
}

void fdr__site_register(struct fdr__site *s)
{
    pthread_mutex_lock(&lock);
    register_locked(s);
    pthread_mutex_unlock(&lock);
}

int fdr__registry_add_sites(struct fdr__site *const *begin, struct fdr__site *const *end)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_ranges; i++) {
        if (ranges[i] == begin) {
            pthread_mutex_unlock(&lock);
            return 0;
        }
    }
    if (n_ranges < sizeof ranges / sizeof ranges[0])
        ranges[n_ranges++] = begin;
    for (struct fdr__site *const *p = begin; p < end; p++)
        if (*p)
            register_locked(*p);
    pthread_mutex_unlock(&lock);
    return 1;
}

/* Removes the module list [begin, end) from the known ranges (list, *n)
 * and gives its lowest and highest pointer: every site (or tunable) of one
 * module is a static of its data segment, so [lo, hi] holds no other
 * module's. */
void fdr__range_forget(const void **list, size_t *n, void *const *begin, void *const *end,
                       uintptr_t *lo, uintptr_t *hi)
{
    for (size_t i = 0; i < *n; i++)
        if (list[i] == (const void *)begin)
            list[i--] = list[--*n];
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (void *const *p = begin; p < end; p++) {
        if (*p && (uintptr_t)*p < *lo)
            *lo = (uintptr_t)*p;
        if (*p && (uintptr_t)*p > *hi)
            *hi = (uintptr_t)*p;
    }
}

/* Forgets the sites of an unloaded module: a state change or a listing no
 * longer touches them. Their classes stay (traces already hold events of
 * them); dlopen() again registers the sites anew and finds the classes. */
void fdr__unregister_sites(struct fdr__site *const *begin, struct fdr__site *const *end)
{
    uintptr_t lo, hi;
    pthread_mutex_lock(&lock);
    fdr__range_forget(ranges, &n_ranges, (void *const *)begin, (void *const *)end, &lo,
                      &hi);
    size_t k = 0;
    for (size_t i = 0; i < n_sites; i++)
        if ((uintptr_t)sites[i] < lo || (uintptr_t)sites[i] > hi)
            sites[k++] = sites[i];
    n_sites = k;
    pthread_mutex_unlock(&lock);
}

int fdr__guard_check(struct fdr__site *s)
{
    if (__atomic_load_n(&s->state, __ATOMIC_RELAXED) & FDR__S_NEW)
        fdr__site_register(s);
    /* A yes in the middle of a change of routes (daemon.c) would come
     * before the events it guards are selected: wait for its end. */
    fdr__route_hold_wait();
    return __atomic_load_n(&s->state, __ATOMIC_RELAXED) != 0;
}

/* Replaces one rule list (takes ownership of r) and recomputes every site. */
void fdr__registry_set_rules(int which, struct fdr__rules *r)
{
    pthread_mutex_lock(&lock);
    struct fdr__rules **slot = which == FDR__RULES_PRINT ? &print_rules : &record_rules;
    struct fdr__rules *old = *slot;
    *slot = r;
    if (which != FDR__RULES_PRINT) {
        int on = 0;
        record_default = fdr__rules_count(r) == 0 ||
                         (fdr__rules_rule(r, 0, NULL, NULL, &on) == 0 && !on);
    }
    for (size_t i = 0; i < n_sites; i++)
        set_state(sites[i]);
    pthread_mutex_unlock(&lock);
    fdr__rules_free(old);
}

/* Calls fn for each distinct provider:event known, with its state. */
void fdr__registry_each(void (*fn)(void *arg, const struct fdr__site *s, uint8_t state),
                        void *arg)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_sites; i++) {
        struct fdr__site *s = sites[i];
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(sites[j]->provider, s->provider) == 0 &&
                   strcmp(sites[j]->event, s->event) == 0;
        if (!seen) {
            uint32_t sel;
            fn(arg, s, compute_state(s, &sel));
        }
    }
    pthread_mutex_unlock(&lock);
}
