/* SPDX-License-Identifier: MIT */
/* recorder/metadata.h - the metadata of this process's trace (metadata.c). */
#ifndef FDR_RECORDER_METADATA_H
#define FDR_RECORDER_METADATA_H

#include <stddef.h>

/* Writes dir/metadata whole (temporary file and rename) through buf (no
 * malloc, no stdio). Async-signal-safe. */
int fdr__metadata_write(int dir_fd, char *buf, size_t cap);

#endif
