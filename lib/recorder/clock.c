/* SPDX-License-Identifier: MIT */
/* clock.c - the trace clock: raw counter values, converted by readers.
 *
 * Events store the raw value of a free-running counter (fdr__now): the TSC
 * on x86-64 and i686, CNTVCT_EL0 on aarch64, the time CSR (rdtime) on
 * riscv64, CLOCK_MONOTONIC in ns elsewhere (armhf, s390x: its measured
 * cost is in docs/portability.md). The
 * conversion to time is left to the reader: the CTF clock class carries the
 * counter frequency and the offset of counter value 0 from the Unix epoch.
 *
 * Calibration costs nothing at start: the library records one triple
 * (counter, CLOCK_MONOTONIC, CLOCK_REALTIME) when it starts, and each time
 * the parameters are needed (metadata written at flush, exit, snapshot) it
 * takes a second (counter, CLOCK_MONOTONIC) pair: the frequency is the ratio
 * of the two intervals. Over 1 ms the error of the ratio is ~1e-4 (clock
 * read jitter / interval); over a second it is below 1e-6. On aarch64 the
 * frequency is read from CNTFRQ_EL0 instead. */
#define _GNU_SOURCE
#include <time.h>

#include "fdr/internal/fastpath.h"
#include "recorder/clock.h"

static uint64_t start_count, start_mono, start_real;

static uint64_t ns_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t fdr__clock_mono_ns(void)
{
    return ns_of(CLOCK_MONOTONIC);
}

uint64_t fdr__now_fallback(void)
{
    return ns_of(CLOCK_MONOTONIC);
}

/* Reads the counter and CLOCK_MONOTONIC as close together as possible:
 * the monotonic read bracketed by two counter reads, the best of three. */
static void pair(uint64_t *count, uint64_t *mono)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t a = fdr__now();
        uint64_t m = ns_of(CLOCK_MONOTONIC);
        uint64_t b = fdr__now();
        if (i == 0 || b - a < best) { /* the first always: *count, *mono set */
            best = b - a;
            *count = a + (b - a) / 2;
            *mono = m;
        }
    }
}

void fdr__clock_init(void)
{
    pair(&start_count, &start_mono);
    start_real = ns_of(CLOCK_REALTIME) - (ns_of(CLOCK_MONOTONIC) - start_mono);
}

void fdr__clock_start_get(uint64_t t[3])
{
    t[0] = start_count;
    t[1] = start_mono;
    t[2] = start_real;
}

void fdr__clock_start_set(const uint64_t t[3])
{
    start_count = t[0];
    start_mono = t[1];
    start_real = t[2];
}

static uint64_t frequency(void)
{
#if defined(__aarch64__)
    uint64_t f;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
    return f;
#elif defined(__x86_64__) || defined(__i386__) || (defined(__riscv) && __riscv_xlen == 64)
    uint64_t c, m;
    pair(&c, &m);
    if (m - start_mono < 200000) { /* too short to calibrate: wait a bit */
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
        pair(&c, &m);
    }
    return (uint64_t)((double)(c - start_count) * 1e9 / (double)(m - start_mono) + 0.5);
#else
    return 1000000000u;
#endif
}

void fdr__clock_params(struct fdr__clock_params *p)
{
    uint64_t f = frequency();
    if (f == 0)
        f = 1;
    /* time(v) = start_real + (v - start_count) / f, written as
     * offset_s + (offset + v) / f with offset_s, offset >= 0. */
    int64_t real_s = (int64_t)(start_real / 1000000000u);
    uint64_t real_frac = start_real % 1000000000u;
    int64_t c_s = (int64_t)(start_count / f);
    uint64_t c_rem = start_count % f;
    int64_t off_s = real_s - c_s;
    int64_t off = (int64_t)((double)real_frac * (double)f / 1e9) - (int64_t)c_rem;
    while (off < 0) {
        off += (int64_t)f;
        off_s--;
    }
    p->freq = f;
    p->offset_s = off_s;
    p->offset = (uint64_t)off;
    p->start = start_count;
}

/* The frequency text lines use, calibrated once, on first use. */
static uint64_t line_freq(void)
{
    static uint64_t freq;
    uint64_t f = __atomic_load_n(&freq, __ATOMIC_RELAXED);
    if (!f) {
        struct fdr__clock_params p;
        fdr__clock_params(&p);
        uint64_t zero = 0;
        /* The first thread to calibrate sets it for all: two threads
         * printing their first lines at once calibrate a few ns apart,
         * and every line (and the class file) must use one frequency. */
        if (__atomic_compare_exchange_n(&freq, &zero, p.freq, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            f = p.freq;
        else
            f = zero;
    }
    return f;
}

/* The counter's ticks per second, roughly (within ~1e-3 once 1 ms has
 * passed since the start), for the writer's rules of thumb (writer.c,
 * growing: "begun less than 10 s ago"). Neither waits nor fixes the line
 * clock's frequency: a ring that grew in the first milliseconds fixed it
 * there, 1.3 ppm from the metadata's, and `fdr export` then differed from
 * babeltrace2 by 23 ns over 18 ms (fdr-export, ASan build). */
uint64_t fdr__clock_rough_freq(void)
{
#if defined(__x86_64__) || defined(__i386__) || (defined(__riscv) && __riscv_xlen == 64)
    static uint64_t rough;
    uint64_t f = __atomic_load_n(&rough, __ATOMIC_RELAXED);
    if (f)
        return f;
    uint64_t c = fdr__now(), m = ns_of(CLOCK_MONOTONIC);
    if (m <= start_mono || c <= start_count)
        return 1000000000u;
    f = (uint64_t)((double)(c - start_count) * 1e9 / (double)(m - start_mono));
    if (m - start_mono >= 1000000)
        __atomic_store_n(&rough, f, __ATOMIC_RELAXED);
    return f ? f : 1;
#else
    return frequency();
#endif
}

void fdr__clock_line(struct fdr__line_clock *k)
{
    k->start = start_count;
    k->freq = line_freq();
}

uint64_t fdr__clock_to_ns_since_start(uint64_t v)
{
    struct fdr__line_clock k;
    fdr__clock_line(&k);
    return fdr__line_clock_ns(&k, v);
}
