/* SPDX-License-Identifier: MIT */
/* recorder/clock.h - the trace clock (clock.c): calibration and the
 * parameters the metadata describes it with. */
#ifndef FDR_RECORDER_CLOCK_H
#define FDR_RECORDER_CLOCK_H

#include <stdint.h>

#include "common/tsdl.h" /* struct fdr__line_clock */

struct fdr__clock_params {
    uint64_t freq;    /* Hz */
    int64_t offset_s; /* seconds from the epoch at clock value 0 */
    uint64_t offset;  /* plus this many cycles */
    uint64_t start;   /* clock value when the library started */
};
void fdr__clock_init(void);
void fdr__clock_params(struct fdr__clock_params *p);
/* The clock of text lines (start and the frequency they use), which the
 * class file keeps for readers. */
void fdr__clock_line(struct fdr__line_clock *k);
uint64_t fdr__clock_to_ns_since_start(uint64_t value);

#endif
