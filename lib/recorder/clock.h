/* SPDX-License-Identifier: MIT */
/* recorder/clock.h - the trace clock (clock.c): calibration and the
 * parameters the metadata describes it with. */
#ifndef FDR_RECORDER_CLOCK_H
#define FDR_RECORDER_CLOCK_H

#include <stdint.h>

#include "common/counter.h"        /* struct fdr__counter_ref */
#include "common/tsdl.h"           /* struct fdr__line_clock */
#include "fdr/internal/fastpath.h" /* fdr__now */

struct fdr__clock_params {
    uint64_t freq;    /* Hz */
    int64_t offset_s; /* seconds from the epoch at clock value 0 */
    uint64_t offset;  /* plus this many cycles */
    uint64_t start;   /* clock value when the library started */
};
void fdr__clock_init(void);
/* CLOCK_MONOTONIC in ns, for deadlines and waits (async-signal-safe). */
uint64_t fdr__clock_mono_ns(void);
/* The (counter, CLOCK_MONOTONIC, CLOCK_REALTIME) triple of the start, which
 * the calibration measures from, and the frequency adopted from fdrd (or
 * 0): taken by the program for fdr-drain, and set there (drainer.h), whose
 * metadata then describes the same clock. */
void fdr__clock_start_get(uint64_t t[4]);
void fdr__clock_start_set(const uint64_t t[4]);
/* fdrd's measure of the counter (common/counter.h, read by daemon.c at
 * start), taken as the frequency of the trace clock and of the line clock
 * when this process's counter, read now, fits it: 0, or -1 (the
 * calibration is then the process's own, as without fdrd). */
int fdr__clock_adopt(const struct fdr__counter_ref *r);
void fdr__clock_params(struct fdr__clock_params *p);
/* The clock of text lines (start and the frequency they use), which the
 * class file keeps for readers. */
void fdr__clock_line(struct fdr__line_clock *k);
uint64_t fdr__clock_to_ns_since_start(uint64_t value);
/* The counter's ticks per second, roughly, at no wait (clock.c). */
uint64_t fdr__clock_rough_freq(void);
/* A bound of every time this process has recorded so far: the counter now
 * and a little more (a read of the counter may run ahead of the load that
 * saw a packet closed). Readers of the rings refuse a time above it
 * (struct fdr__stream_state, ts_max): a stray write, not an event. */
static inline uint64_t fdr__now_bound(void)
{
    uint64_t now = fdr__now();
    return now + now / 1024 + 1000000;
}

#endif
