/* SPDX-License-Identifier: MIT */
/* recorder/consumer.h - the in-process consumer thread (consumer.c). */
#ifndef FDR_RECORDER_CONSUMER_H
#define FDR_RECORDER_CONSUMER_H

#include "common/ring.h"

int fdr__consumer_start(void);
void fdr__consumer_stop(void);
void fdr__consumer_forget(void); /* forked child: no thread */
void fdr__consumer_kick(void);
/* 1 while the consumer thread sleeps until a kick (or FDR_FLUSH_MS), its
 * pass done: tests that run the consumer by hand wait for this first. */
int fdr__consumer_asleep(void);
/* Writes out every complete packet now. With flush (fdr_flush, exit) it
 * also rewrites the metadata (its clock calibration improves with time)
 * and returns -EIO for a write that failed since the last flush, in this
 * pass or in the consumer thread's. */
int fdr__consumer_drain(int flush);
int fdr__consumer_prepare(void); /* creates FDR_OUTPUT/<name>-<pid>/ */
/* Overwrite mode with FDR_OUTPUT: prepares the directory and starts the
 * drain helper, which writes the newest packets of every ring if the
 * program ends without its exit handler (SIGKILL, _exit). */
int fdr__consumer_flight(void);
/* Overwrite mode with FDR_CRASH_DIR and no FDR_OUTPUT: starts the drain
 * helper without a directory; if the program dies without its exit
 * handler or a crash snapshot (SIGKILL, _exit), the helper writes the
 * newest packets of every ring as FDR_CRASH_DIR/crash-<pid>. 0, or
 * -ENOTSUP (no helper: FDR_DRAIN=off, or it could not start). */
int fdr__consumer_crash_flight(void);
/* The program's events are kept already (exit handler, crash snapshot):
 * a helper of fdr__consumer_crash_flight writes nothing. Async-signal-safe. */
void fdr__consumer_clean_end(void);
/* Every event recorded is written or counted (the final flush at exit):
 * the trace directory's open mark goes (common/tracedir.h). */
void fdr__consumer_finished(void);
/* A new buffer exists: hands it to the drain helper (consumer.c). */
struct fdr__buf;
void fdr__consumer_buffer_added(const struct fdr__buf *b);

#endif
