/* SPDX-License-Identifier: MIT */
/*
 * Adapters of the side-by-side benchmark: one per tracer (column), each with
 * one benchfn_fn per workload (row). An adapter function runs `iters`
 * iterations of one event call with changing arguments; the loop shape is
 * the same in every adapter (BENCH_LOOP) so that loop overhead cancels out
 * of the ratios.
 *
 * Workloads:
 *   disabled           an event that exists but is switched off
 *   two_ints           (int a, int b)
 *   int_double_string  (int i, double d, const char *s), s is bench_str
 */
#ifndef FDR_BENCH_ADAPTERS_H
#define FDR_BENCH_ADAPTERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "benchfn.h"

enum {
    BENCH_W_DISABLED,
    BENCH_W_TWO_INTS,
    BENCH_W_IDS,
    BENCH_NWORKLOADS
};

extern const char *const bench_workload_names[BENCH_NWORKLOADS];

/* The string of int_double_string (22 characters); not a compile-time
 * constant so that no adapter can fold its length. */
extern const char *bench_str;

typedef struct bench_adapter {
    /* Column name; setup() may change it (fdr-discard, fdr-overwrite). */
    const char *tracer;
    /* 0 when usable; otherwise a negative errno and a reason in why[]. */
    int (*setup)(struct bench_adapter *self, char *why, size_t whysz);
    /* Prints "info <tracer> <key> <value>" lines after the run; may be NULL. */
    void (*report)(struct bench_adapter *self, FILE *out);
    benchfn_fn fn[BENCH_NWORKLOADS];
} bench_adapter;

extern bench_adapter bench_floor_adapter;
extern bench_adapter bench_lttng_adapter;
extern bench_adapter bench_barectf_adapter;
extern bench_adapter bench_fdr_adapter;

/*
 * The common loop: i counts iterations, a/b/d derive from it so that no
 * argument is loop-invariant. `body` is one event call.
 */
#define BENCH_LOOP(iters, body)                                            \
    do {                                                                   \
        const char *s = bench_str;                                         \
        for (uint64_t i_ = 0; i_ < (iters); i_++) {                        \
            int a = (int)i_;                                               \
            int b = (int)(i_ * 7u);                                        \
            double d = (double)i_ * 0.5;                                   \
            (void)a; (void)b; (void)d; (void)s;                            \
            body;                                                          \
        }                                                                  \
    } while (0)

#endif
