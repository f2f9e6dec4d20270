/* SPDX-License-Identifier: MIT */
/* counter.h - fdrd's measure of the event counter's frequency, shared with
 * the programs through its run directory (common/counter.h says why). */
#ifndef FDRD_COUNTER_H
#define FDRD_COUNTER_H

/* Takes fdrd's first (counter, monotonic) pair, measures for 5 ms and
 * writes <rundir>/counter: before the socket listens, so that a program
 * that finds the socket finds the file. Nothing where the counter is
 * exact (common/counter.h, FDR__COUNTER_MEASURED). */
void fdrd_counter_start(const char *rundir);

/* Milliseconds until the file is due to be written again with a longer
 * measure (at 100 ms, 1 s, 10 s, 100 s, 1000 s of fdrd's life, then every
 * 1000 s), -1 for never; writes it when due. For poll's timeout. */
int fdrd_counter_tick(void);

#endif
