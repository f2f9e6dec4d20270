/* SPDX-License-Identifier: MIT */
/*
 * LTTng-UST adapter (worker side). The call sites are compiled here with
 * dynamic probe linkage: the executable itself only needs
 * liblttng-ust-tracepoint (dlopen()ed by the tracepoint constructors) and
 * does not register with lttng-sessiond. setup() dlopen()s the probe
 * library named by FDR_BENCH_LTTNG_TP (set by the driver once its session
 * is started); its liblttng-ust constructor registers this process with the
 * session daemon and waits for the enablers (up to
 * LTTNG_UST_REGISTER_TIMEOUT ms, set by the driver). We then poll until
 * bench_lttng:two_ints is really enabled, so a slow registration can never
 * turn the numbers into "disabled tracepoint" numbers silently.
 */
#define _POSIX_C_SOURCE 200809L
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "lttng/tp.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "adapters.h"

static void lttng_disabled(void *arg, uint64_t iters)
{
    (void)arg;
    BENCH_LOOP(iters, lttng_ust_tracepoint(bench_lttng, disabled, a, b));
}

static void lttng_two_ints(void *arg, uint64_t iters)
{
    (void)arg;
    BENCH_LOOP(iters, lttng_ust_tracepoint(bench_lttng, two_ints, a, b));
}

static void lttng_ids(void *arg, uint64_t iters)
{
    (void)arg;
    BENCH_LOOP(iters,
               lttng_ust_tracepoint(bench_lttng, int_double_string, a, d, s));
}

static int lttng_setup(bench_adapter *self, char *why, size_t whysz)
{
    (void)self;
    const char *path = getenv("FDR_BENCH_LTTNG_TP");
    if (path == NULL || path[0] == '\0') {
        snprintf(why, whysz, "no LTTng session (FDR_BENCH_LTTNG_TP unset)");
        return -ENOENT;
    }
    if (dlopen(path, RTLD_NOW | RTLD_GLOBAL) == NULL) {
        snprintf(why, whysz, "dlopen %s: %s", path, dlerror());
        return -ENOENT;
    }
    /* Wait (max 10 s) until the session daemon has enabled our events. */
    for (int ms = 0; ms < 10000; ms += 10) {
        if (lttng_ust_tracepoint_enabled(bench_lttng, two_ints) &&
            lttng_ust_tracepoint_enabled(bench_lttng, int_double_string))
            return 0;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    snprintf(why, whysz, "events not enabled after 10 s (registration?)");
    return -ETIMEDOUT;
}

bench_adapter bench_lttng_adapter = {
    .tracer = "lttng-ust",
    .setup = lttng_setup,
    .report = NULL,
    .fn = {lttng_disabled, lttng_two_ints, lttng_ids},
};
