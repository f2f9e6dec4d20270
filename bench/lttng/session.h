/* SPDX-License-Identifier: MIT */
/*
 * Driver side of the LTTng-UST column: makes sure a session daemon runs
 * (starting `lttng-sessiond --no-kernel --daemonize` only when none
 * answers, and stopping it again at the end only if we started it), and
 * manages one recording session with a unique name, a per-UID channel and
 * an output directory of our own. All through the `lttng` command-line
 * tool, executed directly (no shell).
 */
#ifndef FDR_BENCH_LTTNG_SESSION_H
#define FDR_BENCH_LTTNG_SESSION_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

typedef struct bench_lttng_session {
    char name[64];      /* fdr-bench-<pid>-<time> */
    char outdir[512];   /* the trace output directory (caller's choice) */
    char subbuf[16];    /* e.g. "4M" */
    char nsubbuf[16];   /* e.g. "4" */
    int overwrite;      /* channel mode: 0 discard, 1 overwrite */
    int defaults;       /* 1: no enable-channel, LTTng's default channel
                           (channel0, its default sizes and mode); subbuf,
                           nsubbuf and overwrite are ignored */
    const char *events; /* NULL: two_ints and int_double_string */
    const char *url;    /* not NULL: streamed there (--set-url), not outdir */
    pid_t our_sessiond; /* > 0: we started this session daemon */
    int created;
    int started;
} bench_lttng_session;

/*
 * Runs argv[0] (searched in PATH) with argv, stdout and stderr captured into
 * out (NUL-terminated, truncated to outsz). Returns the exit status (0..255),
 * or a negative errno when it could not run or died from a signal.
 */
int bench_run_cmd(const char *const argv[], char *out, size_t outsz);

/* What the last command bench_run_cmd ran used (wait4): its page faults
 * and CPU time, which a busy machine's load does not change as it changes
 * wall times (bench/sections.c, start-up). */
extern struct rusage bench_last_rusage;

/*
 * Starts the session daemon if needed, then creates, configures and starts
 * the session described by s (name, outdir, subbuf, nsubbuf, overwrite must
 * be filled in). On error returns a negative errno with a reason in why[];
 * whatever was set up is recorded in s, so bench_lttng_end() still cleans
 * up.
 */
int bench_lttng_begin(bench_lttng_session *s, char *why, size_t whysz);

/*
 * Stops and destroys the session (if created), then stops the session
 * daemon if we started it. *discarded receives the number of discarded
 * event records of our channel, or -1 if unknown. Idempotent. Returns 0 or
 * a negative errno (reason in why[]).
 */
int bench_lttng_end(bench_lttng_session *s, long long *discarded, char *why,
                    size_t whysz);

#endif
