/* SPDX-License-Identifier: MIT */
/* recorder/init.h - library start (init.c). fdr__init() is called by the
 * public entry points only; internal functions assume it has run. */
#ifndef FDR_RECORDER_INIT_H
#define FDR_RECORDER_INIT_H

#include <sys/types.h>

void fdr__init(void);
extern int fdr__initialized;
extern pid_t fdr__pid;
pid_t fdr__gettid(void);

#endif
