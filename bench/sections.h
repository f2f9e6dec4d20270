/* SPDX-License-Identifier: MIT */
/*
 * The process-level sections of fdr-bench (issue 3, sections 2-5, and
 * issue 4's snapshot): each runs the fdr-bench-load-* programs (load.c)
 * and, for the traces, fdr-bench-count (btcount.c, libbabeltrace2).
 */
#ifndef FDR_BENCH_SECTIONS_H
#define FDR_BENCH_SECTIONS_H

#include "report.h"

typedef struct bench_sections_ctx {
    const char *bindir;   /* where fdr-bench and its helpers are */
    const char *tmpdir;   /* scratch space, removed by the caller */
    int quick;            /* small N; failures of sanity checks are errors */
    int lttng;            /* a session daemon answers: measure LTTng-UST */
    int keep_traces;
    int strict;           /* emitted != recorded + discarded is a failure
                             (otherwise a note): see --strict */
    bench_results *r;
} bench_sections_ctx;

/* Runs sustained, startup, memory, size and snapshot. Returns the number
 * of sanity failures (a tracer produced no number, a trace did not read
 * back, emitted != recorded + discarded), each also printed on stderr. */
int bench_sections_run(const bench_sections_ctx *c);

/* Counts the events of every CTF trace under dir with fdr-bench-count.
 * Returns 0 and sets *events, *discarded, or -1 with a message on stderr. */
int bench_count_trace(const char *bindir, const char *dir,
                      unsigned long long *events, unsigned long long *discarded);

#endif
