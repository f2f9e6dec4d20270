/* SPDX-License-Identifier: MIT */
/*
 * fdr adapter. Built against <fdr/fdr.h> only when FDR_BENCH_HAVE_FDR is
 * defined (the CMake fragment defines it when the fdr library target
 * exists); otherwise setup() reports "built without fdr" and the fdr
 * columns print n/a.
 *
 * The mode is fixed per process by the environment, before the process
 * starts: the driver (main.c) runs one measurement process per mode with
 *   FDR_MODE=discard   FDR_OUTPUT=<tmp dir>   (recorded to disk, like LTTng)
 *   FDR_MODE=overwrite                        (flight recorder, in memory)
 * and FDR_EVENTS=-bench:disabled in both, which switches the `disabled`
 * event off. The column name is "fdr-<FDR_MODE>".
 */
#define _DEFAULT_SOURCE /* usleep */
#define _POSIX_C_SOURCE 200809L
#include "adapters.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef FDR_BENCH_HAVE_FDR
#include <fdr/fdr.h>

static void fdr_disabled(void *arg, uint64_t iters)
{
    (void)arg;
    BENCH_LOOP(iters, fdr_trace(bench, disabled, "a=%d b=%d", a, b));
}

static void fdr_two_ints(void *arg, uint64_t iters)
{
    (void)arg;
    BENCH_LOOP(iters, fdr_trace(bench, two_ints, "a=%d b=%d", a, b));
}

static void fdr_ids(void *arg, uint64_t iters)
{
    (void)arg;
    BENCH_LOOP(iters, fdr_trace(bench, int_double_string, "i=%d d=%f s=%s", a, d, s));
}

static char fdr_name[64];

static int fdr_setup(bench_adapter *self, char *why, size_t whysz)
{
    (void)why; (void)whysz;
    const char *mode = getenv("FDR_MODE");
    snprintf(fdr_name, sizeof fdr_name, "fdr-%s",
             mode != NULL && mode[0] != '\0' ? mode : "default");
    self->tracer = fdr_name;
    /* Recording through fdrd (FDR_RUNDIR set by the driver): one event
     * registers the process, and fdrd routes it within milliseconds; the
     * measured events all go to fdrd's rings. */
    const char *wait = getenv("FDR_BENCH_ROUTE_WAIT_MS");
    if (wait != NULL) {
        fdr_trace(bench, two_ints, "a=%d b=%d", 0, 0);
        usleep((useconds_t)atoi(wait) * 1000u);
    }
    /* TODO(fdr runtime API): switch bench:disabled off here too, and check
     * that bench:two_ints is enabled, instead of trusting FDR_EVENTS. */
    return 0;
}

/* TODO(fdr runtime API): report recorded / discarded counts. */
#define FDR_REPORT NULL

#else /* !FDR_BENCH_HAVE_FDR */

static void fdr_none(void *arg, uint64_t iters)
{
    (void)arg;
    (void)iters;
}

static int fdr_setup(bench_adapter *self, char *why, size_t whysz)
{
    const char *mode = getenv("FDR_MODE");
    self->tracer = (mode != NULL && strcmp(mode, "overwrite") == 0)
                       ? "fdr-overwrite"
                       : "fdr-discard";
    snprintf(why, whysz, "built without fdr (FDR_BENCH_HAVE_FDR undefined)");
    return -ENOSYS;
}

#define fdr_disabled fdr_none
#define fdr_two_ints fdr_none
#define fdr_ids fdr_none
#define FDR_REPORT NULL

#endif

bench_adapter bench_fdr_adapter = {
    .tracer = "fdr",
    .setup = fdr_setup,
    .report = FDR_REPORT,
    .fn = {fdr_disabled, fdr_two_ints, fdr_ids},
};
