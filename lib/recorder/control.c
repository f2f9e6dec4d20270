/* SPDX-License-Identifier: MIT */
/* control.c - runtime control from the program and from the environment:
 * which events are recorded and printed, tunables, the list of known
 * events, help.
 *
 * FDR_EVENTS (recorded; default all) and FDR_TRACES (printed; default none)
 * are parsed when the library starts; fdr_record_set() and fdr_trace_set()
 * take the same syntax (pattern.c) at any time. A new rule list replaces
 * the old one as a whole and every call site is recomputed under the
 * registry lock (registry.c), so concurrent calls are serialized and the
 * last one to take the lock wins; the fast path sees the new state byte at
 * its next event. NAME=VALUE items set tunables (tunable.c). A spec with
 * only NAME=VALUE and help items leaves the event rules as they were, so
 * that a console can set a knob without switching printing off.
 *
 * DEFERRED WORK. The environment is parsed before the program's call sites
 * and tunables are registered (the first constructor that registers a
 * module starts the library), so three things wait until every name is
 * known: FDR_TRACES=help, the warning about a pattern that matches no known
 * event, and the warning about an unknown tunable. "Every name is known"
 * is taken to be the moment the main program's own module registers (its
 * libraries' constructors have run before, see dl_iterate_phdr: the first
 * object is the program). A program whose executable has no call site and
 * no tunable gets the deferred work at its first fdr_trace_set,
 * fdr_record_set or fdr_event_list call, or at exit. A library dlopen()ed
 * later may still bring names that were warned about.
 *
 * Every warning is one line on stderr naming the bad item (fdr__warn), and
 * the rest of the setting applies: nothing here ever stops the program. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdr/fdr.h"
#include "common/pattern.h"
#include "recorder/config.h"
#include "recorder/control.h"
#include "recorder/init.h" /* enum fdr__fork_phase */
#include "recorder/registry.h"
#include "recorder/self.h"
#include "recorder/tunable.h"

static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static int ready;    /* all names known; see DEFERRED WORK */
static int env_help; /* FDR_TRACES or FDR_EVENTS said help */

static void warn_cb(void *ctx, const char *msg)
{
    (void)ctx;
    fdr__warn("%s", msg + (strncmp(msg, "fdr: ", 5) == 0 ? 5 : 0));
}

/* ---- known events ------------------------------------------------------- */

/* A snapshot of the known events (one per provider:event) and their states.
 * The site strings are the program's literals: they stay valid while the
 * module that holds them is loaded. */
struct known_event {
    const struct fdr__site *site;
    uint8_t state;
};

struct known {
    struct known_event *ev;
    size_t n, cap;
};

static void collect(void *arg, const struct fdr__site *s, uint8_t state)
{
    struct known *k = arg;
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        struct known_event *ne = realloc(k->ev, cap * sizeof *ne);
        if (!ne)
            return;
        k->ev = ne;
        k->cap = cap;
    }
    k->ev[k->n++] = (struct known_event){s, state};
}

static void known_free(struct known *k)
{
    free(k->ev);
}

/* Warns once per event rule of r that matches no known event. Rules that
 * match everything ("*", "all", "none") are never warned about. */
static void check_unknown(const struct fdr__rules *r, const char *origin)
{
    size_t n = fdr__rules_count(r);
    if (n == 0)
        return;
    struct known k = {0};
    fdr__registry_each(collect, &k);
    for (size_t i = 0; i < n; i++) {
        const char *p = NULL, *e = NULL;
        int on = 1;
        if (fdr__rules_rule(r, i, &p, &e, &on) < 0)
            continue;
        if (strcmp(e, "*") == 0 && (!p || strcmp(p, "*") == 0))
            continue;
        int hit = 0;
        for (size_t j = 0; j < k.n && !hit; j++)
            hit = (!p || fdr__glob_match(p, k.ev[j].site->provider)) &&
                  fdr__glob_match(e, k.ev[j].site->event);
        if (!hit)
            fdr__warn("%s: \"%s%s%s%s\" matches no known event", origin, on ? "" : "-",
                      p ? p : "", p ? ":" : "", e);
    }
    known_free(&k);
}

/* ---- rules ---------------------------------------------------------------- */

/* Parses spec, applies its tunables and installs its event rules as the
 * printing (print = 1) or recording rules. Checks for unknown names when
 * `check`; records the tunables it set when `record` (self.h). Returns the
 * help flag, or -ENOMEM. */
static int install(int print, const char *spec, const char *origin, int check, int record)
{
    struct fdr__rules *r = NULL;
    int e = fdr__rules_parse(spec, origin, warn_cb, NULL, &r);
    if (e < 0)
        return e;
    int help = fdr__rules_wants_help(r);
    if (check)
        check_unknown(r, origin);
    fdr__tunables_apply(r, origin, fdr__control_is_ready(), record);
    if (fdr__rules_count(r) == 0 && (help || fdr__rules_tunable_count(r) > 0))
        fdr__rules_free(r); /* only knobs or help: event rules unchanged */
    else
        fdr__registry_set_rules(print, r);
    return help;
}

static void print_help(void);

static void at_exit_ready(void)
{
    fdr__control_ready(NULL);
}

void fdr__control_init(void)
{
    if (install(0, fdr__cfg.events, "FDR_EVENTS", 0, 0) > 0)
        env_help = 1;
    if (install(1, fdr__cfg.traces, "FDR_TRACES", 0, 0) > 0)
        env_help = 1;
    atexit(at_exit_ready);
}

struct in_main {
    const void *addr;
    int found;
};

static int in_main_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct in_main *m = arg;
    uintptr_t a = (uintptr_t)m->addr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz)
            m->found = 1;
    }
    return 1; /* the first object is the main program: stop there */
}

/* Around fork() (init.c): ready_lock is taken first, before the
 * tunables' and the registry's, the order every other path uses. */
void fdr__control_fork(enum fdr__fork_phase ph)
{
    if (ph == FDR__FORK_PREPARE)
        pthread_mutex_lock(&ready_lock);
    else
        pthread_mutex_unlock(&ready_lock);
}

int fdr__control_is_ready(void)
{
    return __atomic_load_n(&ready, __ATOMIC_ACQUIRE);
}

void fdr__control_ready(const void *range)
{
    if (fdr__control_is_ready())
        return;
    if (range) {
        struct in_main m = {range, 0};
        dl_iterate_phdr(in_main_cb, &m);
        if (!m.found)
            return;
    }
    pthread_mutex_lock(&ready_lock);
    if (!ready) {
        /* Release pairs with the acquire in fdr__control_is_ready: a thread
         * that sees it also sees the deferred work below as begun (its
         * warnings are issued under ready_lock, which API calls take). */
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
        /* The rule lists may have been replaced since; the warnings are
         * about what the environment said, so parse it again, silently. */
        const char *spec[2] = {fdr__cfg.events, fdr__cfg.traces};
        const char *origin[2] = {"FDR_EVENTS", "FDR_TRACES"};
        for (int i = 0; i < 2; i++) {
            struct fdr__rules *r = NULL;
            if (spec[i] && fdr__rules_parse(spec[i], origin[i], NULL, NULL, &r) == 0) {
                check_unknown(r, origin[i]);
                fdr__rules_free(r);
            }
        }
        fdr__tunables_check_unknown();
        if (env_help)
            print_help();
    }
    pthread_mutex_unlock(&ready_lock);
}

static int set_rules(int print, const char *spec, const char *origin, int record)
{
    fdr__control_ready(NULL);
    /* Serializes with the deferred work so warnings come in order. */
    pthread_mutex_lock(&ready_lock);
    int help = install(print, spec, origin, 1, record);
    if (help > 0)
        print_help();
    pthread_mutex_unlock(&ready_lock);
    return help < 0 ? help : 0;
}

int fdr__control_set_rules(int print, const char *spec, const char *origin)
{
    return set_rules(print, spec, origin, 0);
}

/* ---- listing -------------------------------------------------------------- */

static void info_of(const struct fdr__site *s, uint8_t state, fdr_event_info_t *info)
{
    *info = (fdr_event_info_t){sizeof *info,
                               s->provider,
                               s->event,
                               s->format,
                               s->file,
                               (int)s->line,
                               (state & FDR__S_RECORD) != 0,
                               (state & FDR__S_PRINT) != 0};
}

int fdr__control_event_list(fdr_event_cb cb, void *arg)
{
    if (!cb)
        return -EINVAL;
    fdr__control_ready(NULL);
    return fdr__control_event_each(cb, arg);
}

int fdr__control_event_each(fdr_event_cb cb, void *arg)
{
    /* Collected first so that cb runs without the registry lock. */
    struct known k = {0};
    fdr__registry_each(collect, &k);
    for (size_t i = 0; i < k.n; i++) {
        fdr_event_info_t info;
        info_of(k.ev[i].site, k.ev[i].state, &info);
        cb(arg, &info);
    }
    known_free(&k);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const struct fdr__site *x = ((const struct known_event *)a)->site;
    const struct fdr__site *y = ((const struct known_event *)b)->site;
    int c = strcmp(x->provider, y->provider);
    return c ? c : strcmp(x->event, y->event);
}

int fdr__control_set_recorded(int print, const char *spec, const char *origin)
{
    struct known before = {0}, after = {0};
    fdr__registry_each(collect, &before);
    int rc = set_rules(print, spec, origin, 1);
    fdr__registry_each(collect, &after);
    qsort(before.ev, before.n, sizeof *before.ev, by_name);
    qsort(after.ev, after.n, sizeof *after.ev, by_name);
    uint8_t bit = print ? FDR__S_PRINT : FDR__S_RECORD;
    /* One event per provider:event whose switch changed; an event first
     * registered meanwhile is not a change of the controller's. */
    for (size_t i = 0, j = 0; i < after.n && j < before.n;) {
        int c = by_name(&after.ev[i], &before.ev[j]);
        if (c < 0) {
            i++;
            continue;
        }
        if (c > 0) {
            j++;
            continue;
        }
        uint8_t on = (after.ev[i].state & bit) != 0;
        if (on != ((before.ev[j].state & bit) != 0)) {
            char id[2 * FDR__PATTERN_ITEM_MAX + 2];
            snprintf(id, sizeof id, "%s:%s", after.ev[i].site->provider,
                     after.ev[i].site->event);
            fdr__self_hooks.change(id, print ? "print" : "record", (int)on);
        }
        i++;
        j++;
    }
    known_free(&before);
    known_free(&after);
    return rc;
}

/* Prints the syntax, the known events (sorted by name) and the tunables to
 * stderr. Called with ready_lock held; calls no public function that would
 * take it. */
static void print_help(void)
{
    fprintf(stderr,
            "fdr: FDR_TRACES (printed), FDR_EVENTS (recorded), fdr_trace_set(): items "
            "separated by ',' ';' or spaces\n"
            "  provider:event   glob patterns (* ? [a-z] [!x]), e.g. net:*  net:rx_?\n"
            "  event            an event glob in any provider, e.g. virtio_*\n"
            "  -pattern         switch off; later items override earlier ones\n"
            "  all, none        the same as * and -*\n"
            "  name=value       set a tunable (integer or floating: 64, 0x40, 1.5e3)\n"
            "  @file            read items from a file (# comments)\n"
            "  help, list       print this list; the program continues\n"
            "  By default nothing is printed and everything is recorded; an FDR_EVENTS\n"
            "  list that starts with a name records only what it names.\n"
            "  FDR_SNAPSHOT_SIGNAL=SIG takes a snapshot on SIG; a signal that every\n"
            "  thread blocks is never delivered and takes none.\n");
    struct known k = {0};
    fdr__registry_each(collect, &k);
    if (k.n)
        qsort(k.ev, k.n, sizeof *k.ev, by_name);
    fprintf(stderr, "events (R recorded, P printed):%s\n", k.n ? "" : " none");
    for (size_t i = 0; i < k.n; i++) {
        const struct fdr__site *s = k.ev[i].site;
        fprintf(stderr, "  %c%c %s:%s  \"%s\"\n",
                (k.ev[i].state & FDR__S_RECORD) ? 'R' : '-',
                (k.ev[i].state & FDR__S_PRINT) ? 'P' : '-', s->provider, s->event,
                s->format ? s->format : "");
    }
    known_free(&k);
    fdr__tunables_help();
    fflush(stderr);
}
