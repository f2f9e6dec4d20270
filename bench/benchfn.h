/* SPDX-License-Identifier: MIT */
/*
 * benchfn — a small generic timing harness (in the style of zstd's
 * programs/benchfn.h).
 *
 * A case is a named function that runs `iters` iterations of the measured
 * operation. benchfn_run() times each case in batches with
 * clock_gettime(CLOCK_MONOTONIC) and interleaves the cases: for every
 * repetition it runs A B C ... once, so slow drifts of the machine (frequency,
 * a neighbour's load, a consumer daemon waking up) spread over all cases
 * instead of landing on one. Nothing is pinned.
 *
 * The cost of reading the clock (~20 ns) is paid once per batch, so with
 * batches of 1,000,000 iterations it is below 0.0001 ns per iteration.
 */
#ifndef FDR_BENCH_BENCHFN_H
#define FDR_BENCH_BENCHFN_H

#include <stddef.h>
#include <stdint.h>

/* Runs `iters` iterations of the measured operation. */
typedef void (*benchfn_fn)(void *arg, uint64_t iters);

typedef struct benchfn_case {
    const char *name; /* for messages only */
    benchfn_fn fn;
    void *arg;
} benchfn_case;

typedef struct benchfn_params {
    uint64_t iters;   /* iterations per batch (one batch per repetition) */
    unsigned reps;    /* measured repetitions per case */
    unsigned warmups; /* unmeasured repetitions run first (interleaved too) */
} benchfn_params;

/*
 * Runs every case p->warmups + p->reps times, interleaved.
 * results: caller-owned array of p->reps * ncases doubles; on success
 * results[rep * ncases + c] is the ns per iteration of case c in repetition
 * rep. Returns 0, or -EINVAL on bad parameters (results unchanged).
 */
int benchfn_run(const benchfn_case *cases, size_t ncases,
                const benchfn_params *p, double *results);

typedef struct benchfn_stats {
    double median;
    double min;
    double max;
    size_t n;
} benchfn_stats;

/*
 * Median (mean of the two middle values for even n), min and max of n
 * samples. Does not change `samples` (sorts a copy). n == 0 gives all zeros.
 */
benchfn_stats benchfn_stats_of(const double *samples, size_t n);

/* Monotonic time in ns. */
uint64_t benchfn_now_ns(void);

#endif
