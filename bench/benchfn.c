/* SPDX-License-Identifier: MIT */
/*
 * benchfn — see benchfn.h. Timing is CLOCK_MONOTONIC around each batch;
 * the harness adds one indirect call per batch and nothing per iteration.
 */
#define _POSIX_C_SOURCE 200809L
#include "benchfn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t benchfn_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int benchfn_run(const benchfn_case *cases, size_t ncases,
                const benchfn_params *p, double *results)
{
    if (cases == NULL || ncases == 0 || p == NULL || p->iters == 0 ||
        p->reps == 0 || results == NULL)
        return -EINVAL;

    for (unsigned rep = 0; rep < p->warmups + p->reps; rep++) {
        for (size_t c = 0; c < ncases; c++) {
            uint64_t t0 = benchfn_now_ns();
            cases[c].fn(cases[c].arg, p->iters);
            uint64_t t1 = benchfn_now_ns();
            if (rep >= p->warmups)
                results[(rep - p->warmups) * ncases + c] =
                    (double)(t1 - t0) / (double)p->iters;
        }
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

benchfn_stats benchfn_stats_of(const double *samples, size_t n)
{
    benchfn_stats s = {0, 0, 0, n};
    if (n == 0)
        return s;
    double *v = malloc(n * sizeof *v);
    if (v == NULL) {
        s.n = 0;
        return s;
    }
    memcpy(v, samples, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    s.min = v[0];
    s.max = v[n - 1];
    s.median = (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
    free(v);
    return s;
}
