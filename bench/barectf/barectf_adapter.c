/* SPDX-License-Identifier: MIT */
/*
 * barectf adapter: the tracing functions generated from config.yaml by the
 * Debian barectf 3.x at build time, writing into the in-memory platform
 * (platform.c: 64 packets of 64 KiB, overwrite the oldest, rdtsc clock).
 *
 * barectf has no per-event enable switch, only a per-context one
 * (bbench_enable_tracing), so "disabled" calls the `disabled` event on a
 * second context whose tracing is switched off. Note that the generated
 * tracing functions read the clock *before* testing the enable flag, so a
 * disabled barectf event still costs one rdtsc.
 */
#include "adapters.h"
#include "barectf/platform.h"

#include <errno.h>

#define BB_PKT_SIZE (64u * 1024u)
#define BB_NPKTS 64u

static bench_barectf_platform *bb_on, *bb_off;

static void bb_disabled(void *arg, uint64_t iters)
{
    (void)arg;
    struct bbench_default_ctx *ctx = bench_barectf_platform_ctx(bb_off);
    BENCH_LOOP(iters, bbench_default_trace_disabled(ctx, a, b));
}

static void bb_two_ints(void *arg, uint64_t iters)
{
    (void)arg;
    struct bbench_default_ctx *ctx = bench_barectf_platform_ctx(bb_on);
    BENCH_LOOP(iters, bbench_default_trace_two_ints(ctx, a, b));
}

static void bb_ids(void *arg, uint64_t iters)
{
    (void)arg;
    struct bbench_default_ctx *ctx = bench_barectf_platform_ctx(bb_on);
    BENCH_LOOP(iters, bbench_default_trace_int_double_string(ctx, a, d, s));
}

static int bb_setup(bench_adapter *self, char *why, size_t whysz)
{
    (void)self;
    bb_on = bench_barectf_platform_create(BB_PKT_SIZE, BB_NPKTS);
    bb_off = bench_barectf_platform_create(BB_PKT_SIZE, 1);
    if (bb_on == NULL || bb_off == NULL) {
        snprintf(why, whysz, "out of memory");
        return -ENOMEM;
    }
    bbench_enable_tracing(bench_barectf_platform_ctx(bb_off), 0);
    return 0;
}

static void bb_report(bench_adapter *self, FILE *out)
{
    fprintf(out, "info %s packets_closed %llu\n", self->tracer,
            (unsigned long long)bench_barectf_platform_packets(bb_on));
    fprintf(out, "info %s packets_overwritten %llu\n", self->tracer,
            (unsigned long long)bench_barectf_platform_overwritten(bb_on));
}

bench_adapter bench_barectf_adapter = {
    .tracer = "barectf",
    .setup = bb_setup,
    .report = bb_report,
    .fn = {bb_disabled, bb_two_ints, bb_ids},
};
