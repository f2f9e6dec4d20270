/* SPDX-License-Identifier: MIT */
/* recorder/print.h - live text tracing (print.c). */
#ifndef FDR_RECORDER_PRINT_H
#define FDR_RECORDER_PRINT_H

#include <stddef.h>
#include <stdint.h>

#include "fdr/internal/fastpath.h"

void fdr__print_open(void);
/* Prints one event of site s, recorded at ts by thread tid (the writer
 * caches it: no gettid system call per line). */
void fdr__print_event(const struct fdr__site *s, const char *payload, size_t len,
                      uint64_t ts, uint32_t tid);

#endif
