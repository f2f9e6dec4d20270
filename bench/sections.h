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
    const char *bindir; /* where fdr-bench and its helpers are */
    const char *tmpdir; /* scratch space, removed by the caller */
    int quick;          /* small N; failures of sanity checks are errors */
    int lttng;          /* a session daemon answers: measure LTTng-UST */
    int keep_traces;
    int strict;       /* emitted != recorded + discarded is a failure
                         (otherwise a note): see --strict */
    const char *only; /* run this section alone (--section), or NULL */
    bench_results *r;
    char *failed; /* the names of the sections not measured, ", "-separated */
    size_t failed_cap;
} bench_sections_ctx;

/* Runs sustained, startup, memory, size and snapshot. Returns the number
 * of sanity failures (a tracer produced no number, a trace did not read
 * back, emitted != recorded + discarded), each also printed on stderr. */
int bench_sections_run(const bench_sections_ctx *c);

/* Runs the fdr command of the build tree (BINDIR/../programs/fdr/fdr) with
 * fdrd's run directory RUNDIR, starting that fdrd when it is not running;
 * arguments up to the first NULL. 0 when it exits 0; -1 with no fdrd built. */
int bench_fdr(const char *bindir, const char *rundir, const char *a1, const char *a2,
              const char *a3, const char *a4, const char *a5);
/* SIGTERM to the fdrd of RUNDIR (its pid file): it writes out and exits. */
void bench_fdrd_stop(const char *rundir);

/* The scope section (scope_bench.c): fdr scope's and fdrd's CPU while a
 * program records 1,000,000 events/s under `fdr scope` with one reader. */
int bench_scope(const bench_sections_ctx *c);

/* Counts the events of every CTF trace under dir with fdr-bench-count.
 * Returns 0 and sets *events, *discarded, or -1 with a message on stderr. */
int bench_count_trace(const char *bindir, const char *dir, unsigned long long *events,
                      unsigned long long *discarded);

/* CPU seconds (user + system) process pid has used; -1 if unknown
 * (sections.c, also used by scope_bench.c). */
double bench_cpu_s(long pid);
/* The pid in RUNDIR/fdrd.pid, -1 when there is none. */
long bench_pid_file(const char *rundir);

#endif
