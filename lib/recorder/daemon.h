/* SPDX-License-Identifier: MIT */
/* recorder/daemon.h - registration with fdrd, when one runs (daemon.c). */
#ifndef FDR_RECORDER_DAEMON_H
#define FDR_RECORDER_DAEMON_H

/* At start: if fdrd's socket exists, starts the thread that registers the
 * process and its providers; never blocks, never fails the program. */
void fdr__daemon_start(void);
/* In a forked child: drops the parent's connection (no thread here). */
int fdr__daemon_forget(void); /* 1 when it was registered */
void fdr__daemon_noop(void);

#endif
