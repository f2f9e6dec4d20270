/* SPDX-License-Identifier: MIT */
/* common/signal.h - signal names as users write them (FDR_CRASH_SIGNALS,
 * FDR_SNAPSHOT_SIGNAL, and later the fdr command's options). */
#ifndef FDR_COMMON_SIGNAL_H
#define FDR_COMMON_SIGNAL_H

#include <stddef.h>

/* "USR2", "SIGUSR2", "12", "RTMIN+3" (len bytes at s, case-insensitive):
 * the signal number, or -EINVAL. */
int fdr__signal_parse(const char *s, size_t len);

#endif
