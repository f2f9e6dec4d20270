/* SPDX-License-Identifier: MIT */
/* recorder/section.h - stopping writers with the tracing-section protocol
 * (section.c) so that a controller reads a ring that holds still. */
#ifndef FDR_RECORDER_SECTION_H
#define FDR_RECORDER_SECTION_H

#include <stdbool.h>
#include <stdint.h>

struct fdr__writer;

/* Values of fdr__thread.enabled: 1 records; 0 is off by the user's choice;
 * FDR__PAUSED is off while fdr itself reads the buffers (flush, snapshot,
 * crash): events then are counted as discarded. */
#define FDR__PAUSED 2u

void fdr__section_init(void);
/* With the writers lock held: disables every writer and waits until none
 * is inside a tracing section, as long as it takes. Afterwards no writer
 * touches its buffer until fdr__section_resume(). 0, or -ENOTSUP when no
 * barrier is available (then resumed). */
int fdr__section_quiesce(void);
void fdr__section_resume(void);
/* fdr_set_tracing_enabled once the library has started (api.c). */
void fdr__section_set_enabled(bool enabled);
extern int fdr__section_no_barrier; /* test hook: skip the barrier */
/* Test counters: signal barriers that had to wait past one deadline and
 * were retried (they never give up where a snapshot or flush asks). */
extern uint64_t fdr__section_barrier_retries;
/* Test hook: when set, run by every thread that answers a signal barrier,
 * in the signal handler, before it answers (a writer held there is a slow
 * one: test-flight-barrier-wait.c). */
extern void (*fdr__section_barrier_hook)(void);
/* Lock-free variant for the crash handler: stops every writer but `self`,
 * waits at most timeout_ns; returns 0 or -ETIMEDOUT. Async-signal-safe. */
int fdr__section_quiesce_unlocked(const struct fdr__writer *self, uint64_t timeout_ns);

#endif
