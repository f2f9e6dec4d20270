/* SPDX-License-Identifier: MIT */
/* recorder/consumer.h - the in-process consumer thread (consumer.c). */
#ifndef FDR_RECORDER_CONSUMER_H
#define FDR_RECORDER_CONSUMER_H

#include "common/ring.h"

int fdr__consumer_start(void);
void fdr__consumer_stop(void);
void fdr__consumer_forget(void); /* forked child: no thread */
void fdr__consumer_kick(void);
/* Writes out every complete packet now. With flush (fdr_flush, exit) it
 * also rewrites the metadata (its clock calibration improves with time)
 * and returns -EIO for a write that failed since the last flush, in this
 * pass or in the consumer thread's. */
int fdr__consumer_drain(int flush);
int fdr__consumer_prepare(void); /* creates FDR_OUTPUT/<name>-<pid>/ */
/* A new buffer exists: hands it to the drain helper (consumer.c). */
struct fdr__buf;
void fdr__consumer_buffer_added(const struct fdr__buf *b);

#endif
