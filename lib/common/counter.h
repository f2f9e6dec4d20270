/* SPDX-License-Identifier: MIT */
/* common/counter.h - the event counter's frequency, measured against
 * CLOCK_MONOTONIC, and the file fdrd shares its measure in.
 *
 * Where the counter is not exact (the TSC, riscv64's time CSR:
 * FDR__COUNTER_MEASURED), its frequency is the ratio of two intervals.
 * libfdr measured it from the program's start, so a program registering
 * with fdrd slept until 200 us had passed (1 ms), and still got only
 * ~1e-4. fdrd measures the same counter over its whole life and writes
 * what it found into its run directory (FDR__COUNTER_FILE: its first
 * (counter, monotonic) pair and the frequency since then, rewritten as the
 * measure gets better); a program reads it at start, checks that its own
 * counter, now, is where that line says, and takes the frequency
 * (libfdr's daemon.c and clock.c): no wait, ~1e-7, and the same frequency
 * in every trace and class file of that process.
 *
 * Header-only: fdr__now may be libfdr's CLOCK_MONOTONIC fallback
 * elsewhere, which fdr_common must not need (tests/common/check-layers.sh). */
#ifndef FDR_COMMON_COUNTER_H
#define FDR_COMMON_COUNTER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fdr/internal/fastpath.h" /* fdr__now */

#if defined(__x86_64__) || defined(__i386__) || (defined(__riscv) && __riscv_xlen == 64)
#define FDR__COUNTER_MEASURED 1
#else
#define FDR__COUNTER_MEASURED 0
#endif

/* In the run directory, written by fdrd (mode 0600, replaced whole). */
#define FDR__COUNTER_FILE "counter"
#define FDR__COUNTER_MAX 128 /* bytes of the file, at most */

/* Reads the counter and CLOCK_MONOTONIC (ns) as close together as
 * possible: the monotonic read bracketed by two counter reads, the best of
 * three. */
static inline void fdr__counter_pair(uint64_t *count, uint64_t *mono)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        struct timespec ts;
        uint64_t a = fdr__now();
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t b = fdr__now();
        if (i == 0 || b - a < best) { /* the first always: *count, *mono set */
            best = b - a;
            *count = a + (b - a) / 2;
            *mono = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        }
    }
}

/* Ticks per second between two pairs (0 when no time passed). */
static inline uint64_t fdr__counter_freq(uint64_t c0, uint64_t m0, uint64_t c1,
                                         uint64_t m1)
{
    if (m1 <= m0 || c1 <= c0)
        return 0;
    return (uint64_t)((double)(c1 - c0) * 1e9 / (double)(m1 - m0) + 0.5);
}

/* fdrd's measure: counter value c0 at CLOCK_MONOTONIC m0 (ns), freq
 * ticks per second since. */
struct fdr__counter_ref {
    uint64_t c0, m0, freq;
};

/* The file's one line, into out (FDR__COUNTER_MAX); its length. */
static inline int fdr__counter_format(char *out, const struct fdr__counter_ref *r)
{
    return snprintf(out, FDR__COUNTER_MAX, "fdr-counter 1 %llu %llu %llu\n",
                    (unsigned long long)r->c0, (unsigned long long)r->m0,
                    (unsigned long long)r->freq);
}

/* Parses the file's n bytes (untrusted: a stale or foreign file, or any
 * bytes). 0, or -1 when it is not one line as fdr__counter_format writes. */
static inline int fdr__counter_parse(const char *buf, size_t n,
                                     struct fdr__counter_ref *r)
{
    char line[FDR__COUNTER_MAX];
    if (n == 0 || n >= sizeof line || buf[n - 1] != '\n')
        return -1;
    for (size_t i = 0; i < n; i++)
        line[i] = buf[i];
    line[n - 1] = 0;
    static const char magic[] = "fdr-counter 1 ";
    for (size_t i = 0; i < sizeof magic - 1; i++)
        if (line[i] != magic[i])
            return -1;
    uint64_t v[3];
    char *p = line + sizeof magic - 1;
    for (int i = 0; i < 3; i++) {
        if (*p < '0' || *p > '9')
            return -1;
        char *end;
        v[i] = strtoull(p, &end, 10);
        if (*end != (i < 2 ? ' ' : 0))
            return -1;
        p = end + (i < 2);
    }
    if (v[2] < 1000000 || v[2] > 100000000000ull) /* 1 MHz .. 100 GHz */
        return -1;
    *r = (struct fdr__counter_ref){v[0], v[1], v[2]};
    return 0;
}

/* Whether this process's counter, read now as (c, m), runs as r says:
 * where r's frequency puts it after m - m0 ns, within 1e-4 of the
 * interval and 20 us. A file from before a reboot, of another counter
 * (an emulator's), or made up, fails it. */
static inline int fdr__counter_fits(const struct fdr__counter_ref *r, uint64_t c,
                                    uint64_t m)
{
    if (m <= r->m0 || c <= r->c0)
        return 0;
    double dt = (double)(m - r->m0) * 1e-9;
    double want = (double)r->freq * dt, got = (double)(c - r->c0);
    double slack = want * 1e-4 + (double)r->freq * 20e-6;
    return got > want - slack && got < want + slack;
}

#endif
