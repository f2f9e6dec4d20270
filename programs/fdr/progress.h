/* SPDX-License-Identifier: MIT */
/* progress.h - the progress bar of verbs that read a whole trace (export,
 * stats, recover): on a terminal only (stderr), and only once the work has taken
 * longer than a second (FDR_PROGRESS_DELAY_MS, default 1000), so that a
 * quick run and a run whose stderr is a file or a pipe print nothing. */
#ifndef FDR_PROGRAMS_PROGRESS_H
#define FDR_PROGRAMS_PROGRESS_H

#include <stdint.h>

struct progress {
    const char *verb;
    int on;            /* stderr is a terminal */
    int shown;         /* a line is on the screen */
    uint64_t t0, last; /* ns */
    uint64_t delay;    /* ns before the first line */
};

void progress_start(struct progress *p, const char *verb);
/* Cheap to call often: redraws at most every 200 ms. */
void progress_update(struct progress *p, uint64_t done, uint64_t total);
/* Clears the line. */
void progress_end(struct progress *p);

#endif
