/* SPDX-License-Identifier: MIT */
/* recorder/metadata.h - the metadata of this process's trace (metadata.c). */
#ifndef FDR_RECORDER_METADATA_H
#define FDR_RECORDER_METADATA_H

#include <stddef.h>

/* Writes dir/metadata whole (temporary file and rename) through buf (no
 * malloc, no stdio). Async-signal-safe. */
int fdr__metadata_write(int dir_fd, char *buf, size_t cap);

/* With on, env.procname is from now on `known` (the drain helper, which
 * writes the program's metadata under a name of its own, "fdr-drain":
 * drainer.c), or the program's name as it is now when known is NULL or
 * empty; with 0, read again each time. */
void fdr__metadata_freeze_procname(int on, const char *known);
/* The program's name now: `known` when the caller has it (the main
 * thread's own name, from prctl), else read from /proc/self/comm. */
void fdr__metadata_procname(char out[17], const char *known);

#endif
