/* SPDX-License-Identifier: MIT */
/* counter.h - fdrd's measure of the event counter's frequency, shared with
 * the programs through its run directory (common/counter.h says why). */
#ifndef FDRD_COUNTER_H
#define FDRD_COUNTER_H

/* Takes fdrd's first (counter, monotonic) pair, measures for 5 ms and
 * writes <rundir>/counter (fdrd holds the run directory's lock). Nothing
 * where the counter is exact (common/counter.h, FDR__COUNTER_MEASURED). */
void fdrd_counter_start(const char *rundir);
/* At a clean stop: the file goes with fdrd's other files (one left by a
 * killed fdrd is still checked by each program against its counter). */
void fdrd_counter_stop(void);

/* Milliseconds until the file is due to be written again with a longer
 * measure (at 100 ms, 1 s, 10 s, 100 s, 1000 s of fdrd's life, then every
 * 1000 s), -1 for never; writes it when due. For poll's timeout. */
int fdrd_counter_tick(void);

#endif
