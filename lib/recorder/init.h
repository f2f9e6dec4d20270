/* SPDX-License-Identifier: MIT */
/* recorder/init.h - library start (init.c). fdr__init() is called by the
 * entry points of api.c only (the top layer); the files below assume it
 * has run. */
#ifndef FDR_RECORDER_INIT_H
#define FDR_RECORDER_INIT_H

void fdr__init(void);

/* fork() safety: every lock is taken before fork and released after it,
 * in one order: daemon (route rules), control (ready), tunables,
 * snapshot trigger, providers, registry, writers. A lock held for long (a
 * snapshot writing files) is made anew in the child instead. */
enum fdr__fork_phase { FDR__FORK_PREPARE, FDR__FORK_PARENT, FDR__FORK_CHILD };
void fdr__control_fork(enum fdr__fork_phase ph);  /* control.c */
void fdr__tunables_fork(enum fdr__fork_phase ph); /* tunable.c */
void fdr__snapshot_fork(enum fdr__fork_phase ph); /* snapshot.c */
void fdr__provider_fork(enum fdr__fork_phase ph); /* provider.c */
void fdr__daemon_fork(enum fdr__fork_phase ph);   /* daemon.c */

#endif
