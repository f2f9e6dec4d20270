/* SPDX-License-Identifier: MIT */
/* recorder/print.h - live text tracing (print.c). */
#ifndef FDR_RECORDER_PRINT_H
#define FDR_RECORDER_PRINT_H

#include <stddef.h>
#include <stdint.h>

#include "fdr/internal/fastpath.h"

extern int fdr__print_fd;
void fdr__print_open(void);
void fdr__print_event(const struct fdr__site *s, const char *payload, size_t len,
                      uint64_t ts);

#endif
