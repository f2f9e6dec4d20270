/* SPDX-License-Identifier: MIT */
/* recorder/daemon.h - registration with fdrd, when one runs (daemon.c). */
#ifndef FDR_RECORDER_DAEMON_H
#define FDR_RECORDER_DAEMON_H

/* At start: if fdrd's socket exists, starts the thread that registers the
 * process and its providers; never blocks, never fails the program. */
void fdr__daemon_start(void);
/* At start, before anything calibrates the clock: fdrd's measure of the
 * counter from its run directory (common/counter.h), adopted when it fits
 * (clock.c). A few system calls; nothing when fdrd never ran. */
void fdr__daemon_counter(void);
/* In a forked child: drops the parent's connection (no thread here). */
int fdr__daemon_forget(void); /* 1 when it was registered */
void fdr__daemon_noop(void);
/* At the end of a thread or of the process (init.c): while a registration
 * with fdrd is under way, waits (at most 3 s) for fdrd's answer, so that
 * the routes of the traces started already reach the process first and
 * what it recorded is handed over to them (writer.c, backfill). A stuck
 * fdrd costs those 3 s once per process (no more waits until it answers),
 * said under FDR_DEBUG. */
void fdr__daemon_settle(void);
/* At the process's end, after its threads moved: what its threads lost to
 * fdrd's routes and no ring of them holds (buffer.c, route_lost) goes to
 * fdrd, which counts it in the trace (LOST); waits 1 s at most. */
void fdr__daemon_lost_send(void);

#endif
