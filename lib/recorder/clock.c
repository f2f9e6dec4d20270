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
 * frequency is read from CNTFRQ_EL0 instead. Where fdrd runs, it has
 * measured the same counter over its life and says so in its run
 * directory (common/counter.h): a program that finds its counter where
 * that measure puts it takes the frequency from there (fdr__clock_adopt),
 * for its traces and its line clock alike, and never waits to calibrate. */
#define _GNU_SOURCE
#include <time.h>

#include "common/counter.h"
#include "fdr/internal/fastpath.h"
#include "recorder/clock.h"

static uint64_t start_count, start_mono, start_real;
/* fdrd's measure of the counter, taken (fdr__clock_adopt), or 0. */
static uint64_t adopted;

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

void fdr__clock_init(void)
{
    fdr__counter_pair(&start_count, &start_mono);
    start_real = ns_of(CLOCK_REALTIME) - (ns_of(CLOCK_MONOTONIC) - start_mono);
}

void fdr__clock_start_get(uint64_t t[4])
{
    t[0] = start_count;
    t[1] = start_mono;
    t[2] = start_real;
    t[3] = __atomic_load_n(&adopted, __ATOMIC_RELAXED);
}

static void adopt(uint64_t f);

void fdr__clock_start_set(const uint64_t t[4])
{
    start_count = t[0];
    start_mono = t[1];
    start_real = t[2];
    if (t[3])
        adopt(t[3]);
}

static uint64_t frequency(void)
{
#if defined(__aarch64__)
    uint64_t f;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
    return f;
#elif FDR__COUNTER_MEASURED
    uint64_t c, m, f = __atomic_load_n(&adopted, __ATOMIC_RELAXED);
    if (f)
        return f;
    fdr__counter_pair(&c, &m);
    if (m - start_mono < 200000) { /* too short to calibrate: wait a bit */
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
        fdr__counter_pair(&c, &m);
    }
    return fdr__counter_freq(start_count, start_mono, c, m);
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

/* The frequency text lines use, calibrated once, on first use (or fdrd's
 * measure, adopted before). */
static uint64_t freq_of_lines;
static uint64_t line_freq(void)
{
    uint64_t f = __atomic_load_n(&freq_of_lines, __ATOMIC_RELAXED);
    if (!f) {
        struct fdr__clock_params p;
        fdr__clock_params(&p);
        uint64_t zero = 0;
        /* The first thread to calibrate sets it for all: two threads
         * printing their first lines at once calibrate a few ns apart,
         * and every line (and the class file) must use one frequency. */
        if (__atomic_compare_exchange_n(&freq_of_lines, &zero, p.freq, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            f = p.freq;
        else
            f = zero;
    }
    return f;
}

static void adopt(uint64_t f)
{
    __atomic_store_n(&adopted, f, __ATOMIC_RELAXED);
    uint64_t zero = 0; /* the line clock too, unless a line fixed it already */
    __atomic_compare_exchange_n(&freq_of_lines, &zero, f, 0, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
}

int fdr__clock_adopt(const struct fdr__counter_ref *r)
{
#if FDR__COUNTER_MEASURED
    uint64_t c, m;
    fdr__counter_pair(&c, &m);
    if (!fdr__counter_fits(r, c, m))
        return -1;
    adopt(r->freq);
    return 0;
#else
    (void)r;
    return -1; /* the frequency is exact here */
#endif
}

/* The counter's ticks per second, roughly (within ~1e-3 once 1 ms has
 * passed since the start), for the writer's rules of thumb (writer.c,
 * growing: "begun less than 10 s ago"). Neither waits nor fixes the line
 * clock's frequency: a ring that grew in the first milliseconds fixed it
 * there, 1.3 ppm from the metadata's, and `fdr export` then differed from
 * babeltrace2 by 23 ns over 18 ms (fdr-export, ASan build). */
uint64_t fdr__clock_rough_freq(void)
{
#if FDR__COUNTER_MEASURED
    static uint64_t rough;
    uint64_t f = __atomic_load_n(&rough, __ATOMIC_RELAXED);
    if (f || (f = __atomic_load_n(&adopted, __ATOMIC_RELAXED)) != 0)
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
