/* SPDX-License-Identifier: MIT */
/* recorder/flight.h - the flight recorder: snapshots (snapshot.c) and
 * crash dumps (crash.c). */
#ifndef FDR_RECORDER_FLIGHT_H
#define FDR_RECORDER_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

void fdr__flight_init(void);       /* from init_once: handlers, snapshot signal */
void fdr__crash_thread_init(void); /* alternate stack, writer creation */
void fdr__crash_thread_exit(void);
void fdr__crash_init(void);
/* 1 when the crash handler is installed for sig (crash.c). */
int fdr__crash_owns(int sig);
/* 1 for the signals a faulting instruction raises: SEGV BUS ILL FPE TRAP SYS. */
int fdr__signal_is_fault(int sig);
/* What a reader skipped because it was not valid (common/validate.h). */
struct fdr__skips {
    uint64_t rings;   /* ring headers that do not match their buffer */
    uint64_t packets; /* packets whose header is not valid */
};
/* Writes the rings as a CTF trace into dir; the caller has quiesced the
 * writers. Adds what it skipped to *sk. Async-signal-safe (open/write/close
 * only). */
int fdr__snapshot_write_live(int dir_fd, struct fdr__skips *sk);
struct fdr__buf;
struct fdr__writer;
/* Where the content of b's open packet ends (its writer w's position), or
 * NULL when w has no open packet in the slot of sequence `produced` or its
 * position is outside it. Writers quiesced. Async-signal-safe. */
const char *fdr__open_end(const struct fdr__buf *b, const struct fdr__writer *w,
                          uint64_t produced);
/* out = dir/name<number> (no number when < 0); -ENAMETOOLONG. AS-safe. */

#endif
