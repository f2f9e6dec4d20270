/* SPDX-License-Identifier: MIT */
/* api.c - the entry points that start the library: the top layer.
 *
 * The library starts on the first call into it (init.c, fdr__init: once;
 * then one load and a predicted branch). Only the functions here call
 * fdr__init(), then the subsystem that does the work, which assumes the
 * library has started: so no file below calls up into init.c, and the
 * files of lib/recorder form layers without a cycle (docs/design.md,
 * Layers; tests/common/check-layers.sh checks it with nm). The entry
 * points that need no start stay in their subsystem's file
 * (fdr_provider_register, fdr_thread_set_tracing_enabled and the others
 * that take an fdr_thread_t, which only fdr_thread_self gives,
 * fdr__unregister_*, fdr__commit_slow, the inline fast path); fdr_flush is
 * init.c's. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "fdr/fdr.h"
#include "recorder/control.h"
#include "recorder/flight.h"
#include "recorder/init.h"
#include "recorder/provider.h"
#include "recorder/registry.h"
#include "recorder/section.h"
#include "recorder/self.h"
#include "recorder/tunable.h"
#include "recorder/writer.h"

/* ---- from the inline code of include/fdr: the slow path, module constructors */

char *fdr__reserve_slow(struct fdr__site *s, size_t payload, char **tail)
{
    /* A thread with a writer has seen the library started (writers are
     * made after it): then nothing but this test and a jump. Not when
     * nested either (a signal handler's event inside this thread's event,
     * which may be the first one, starting the library). */
    if (__builtin_expect(!fdr__self.writer, 0) && payload != (size_t)-1)
        fdr__init();
    return fdr__writer_reserve(s, payload, tail);
}

/* fdr's own events (self.h), recorded here for tunable.c and control.c,
 * below this layer: their hooks are filled when the library is loaded,
 * before any controller can change anything. */
static void self_tunable(const char *name, double value)
{
    FDR__SELF_EVENT("tunable", "name=%s value=%g", name, value);
}

static void self_change(const char *event, const char *what, int on)
{
    FDR__SELF_EVENT("switch", "event=%s what=%s on=%d", event, what, on);
}

__attribute__((constructor)) static void self_hooks_install(void)
{
    fdr__self_hooks = (struct fdr__self_hooks){self_tunable, self_change};
}

void fdr__register_sites(struct fdr__site *const *begin, struct fdr__site *const *end)
{
    fdr__init();
    if (fdr__registry_add_sites(begin, end))
        fdr__control_ready(begin);
}

void fdr__register_tunables(struct fdr__tunable *const *begin,
                            struct fdr__tunable *const *end,
                            struct fdr__site *const *sites_begin,
                            struct fdr__site *const *sites_end)
{
    fdr__init();
    fdr__tunables_add(begin, end);
    if (sites_begin != sites_end)
        fdr__register_sites(sites_begin, sites_end); /* then fdr__control_ready */
    else if (begin != end)
        fdr__control_ready(begin);
}

/* ---- control (control.c, section.c) ------------------------------------------ */

int fdr_trace_set(const char *spec)
{
    fdr__init();
    return fdr__control_set_rules(1, spec, "fdr_trace_set");
}

int fdr_record_set(const char *spec)
{
    fdr__init();
    return fdr__control_set_rules(0, spec, "fdr_record_set");
}

int fdr_event_list(fdr_event_cb cb, void *arg)
{
    if (!cb)
        return -EINVAL;
    fdr__init();
    return fdr__control_event_list(cb, arg);
}

void fdr_set_tracing_enabled(bool enabled)
{
    fdr__init();
    fdr__section_set_enabled(enabled);
}

bool fdr_is_tracing_enabled(void)
{
    fdr__init();
    return __atomic_load_n(&fdr__enabled_default, __ATOMIC_RELAXED) != 0;
}

fdr_thread_t *fdr_thread_self(void)
{
    fdr__init();
    if (!fdr__writer_self())
        return NULL;
    return (fdr_thread_t *)(void *)&fdr__self;
}

/* ---- tunables (tunable.c) ------------------------------------------------------ */

int fdr_tunable_set(const char *name, long long value)
{
    fdr__init();
    return fdr__tunable_set(name, value);
}

int fdr_tunable_set_double(const char *name, double value)
{
    fdr__init();
    return fdr__tunable_set_double(name, value);
}

int fdr_tunable_get(const char *name, fdr_tunable_info_t *info)
{
    fdr__init();
    return fdr__tunable_get(name, info);
}

int fdr_tunable_list(fdr_tunable_cb cb, void *arg)
{
    fdr__init();
    return fdr__tunable_list(cb, arg);
}

/* ---- the flight recorder (snapshot.c) ------------------------------------------ */

int fdr_snapshot(const char *dir)
{
    fdr__init();
    return fdr__snapshot(dir);
}

int fdr_snapshot_on_signal(int sig, const char *dir)
{
    fdr__init();
    return fdr__snapshot_on_signal(sig, dir);
}

/* ---- raw events (provider.c) --------------------------------------------------- */

size_t fdr_raw_event_max(void)
{
    fdr__init();
    return fdr__raw_event_max();
}

int fdr_raw_event(fdr_provider_t *p, unsigned event_id, const void *data, size_t size)
{
    fdr__init();
    return fdr__raw_event(p, event_id, data, size);
}
