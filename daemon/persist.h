/* SPDX-License-Identifier: MIT */
/* persist.h - trace definitions kept across fdrd's restarts (persist.c). */
#ifndef FDRD_PERSIST_H
#define FDRD_PERSIST_H

#include "traces.h"

/* Writes t's definition to RUNDIR/traces/NAME (atomically); ephemeral
 * traces are not kept. A failure is logged, nothing more. */
void fdrd_persist_save(const struct fdrd_traces *ts, const struct fdrd_trace *t);
/* Removes the definition of trace `name`. */
void fdrd_persist_forget(const struct fdrd_traces *ts, const char *name);
/* Makes every kept trace again (a bad definition: one log line, skipped)
 * and cuts each stream file of their output directories back to whole
 * packets. Before serving. */
void fdrd_persist_load(struct fdrd_traces *ts);

#endif
