/* SPDX-License-Identifier: MIT */
/* clock-cost.c - what a clock read costs on this machine: fdr's fallback
 * clock (clock_gettime(CLOCK_MONOTONIC), for targets without a counter
 * user space can read) against the counter fdr uses here, if any. Best of
 * five runs of 2,000,000 reads; prints one line. Built and run by
 * scripts/portability.sh (docs/portability.md). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "fdr/internal/fastpath.h" /* fdr__now: the counter of this target */

uint64_t fdr__now_fallback(void);
uint64_t fdr__now_fallback(void) /* as lib/recorder/clock.c */
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void)
{
    enum { N = 2000000 };
    volatile uint64_t sink = 0;
    double best_fallback = 1e9, best_counter = 1e9;
    for (int r = 0; r < 5; r++) {
        uint64_t a = fdr__now_fallback();
        for (int i = 0; i < N; i++)
            sink += fdr__now_fallback();
        uint64_t b = fdr__now_fallback();
        double f = (double)(b - a) / N;
        best_fallback = f < best_fallback ? f : best_fallback;
        a = fdr__now_fallback();
        for (int i = 0; i < N; i++)
            sink += fdr__now();
        b = fdr__now_fallback();
        double c = (double)(b - a) / N;
        best_counter = c < best_counter ? c : best_counter;
    }
    printf(
        "clock_gettime(CLOCK_MONOTONIC) %.1f ns a read, this target's counter (fdr__now) "
        "%.1f ns\n",
        best_fallback, best_counter);
    return 0;
}
