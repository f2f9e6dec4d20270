/* SPDX-License-Identifier: MIT */
/*
 * Process-level sections of fdr-bench: sustained recording to disk,
 * start-up, memory, trace size and snapshot cost (see sections.h).
 *
 * DESIGN. Every measurement is a fresh process of one of the three load
 * programs (load.c: no tracer, fdr, LTTng-UST), run at the tracers'
 * DEFAULT settings: fdr with only FDR_OUTPUT set (discard mode, 1 MiB ring
 * per thread, 64 KiB packets), LTTng-UST with a session whose only
 * configuration is `lttng enable-event -u` (channel0: LTTng's default
 * per-UID sub-buffers and discard mode). A fresh LTTng session per run, so
 * that one trace directory holds exactly one run's events.
 *
 * Recorded and discarded counts come from reading the traces with
 * libbabeltrace2 (fdr-bench-count), never from the tracers' own counters,
 * and every run checks emitted == recorded + discarded.
 *
 * Tracer names in the records: "floor" is the program without a tracer
 * (the baseline a tracer's cost is added to), "fdr-discard" fdr recording
 * to disk, "fdr-overwrite" fdr as a flight recorder in memory,
 * "lttng-ust" LTTng-UST.
 *
 * Sections (records: section / workload / unit):
 *   sustained  1_thread, 2_threads (as fast as possible), 10M_per_s_1_thread
 *              (paced): events_per_s (emitted / time until on disk for
 *              fdr; until the last event for LTTng, whose consumer daemon
 *              flushes at `lttng stop`), discarded, recorded
 *   startup    first_event ms: fork to the first event recorded (returned)
 *              in main(); added ms: the same minus the no-tracer program;
 *              page_faults_added faults, cpu_added ms: the whole run's
 *              minor faults and CPU time (wait4) minus the no-tracer
 *              program's, which a busy machine does not change as it
 *              changes wall times
 *   memory     per_thread bytes: VmRSS slope over traced threads (each
 *              emits enough to cycle a 1 MiB ring), minus the no-tracer
 *              slope; process bytes: the fixed part at one thread
 *   size       two_ints, int_double_string bytes: stream bytes on disk
 *              (metadata and LTTng's index files excluded) / recorded
 *   snapshot   8_threads_x_1MiB ms: one fdr_snapshot() of 8 full rings;
 *              64_busy_threads ms: one while 64 threads record without pause
 */
#define _GNU_SOURCE
#include "sections.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lttng/session.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The environment of a load run: every FDR_* variable the benchmark may
 * have set is cleared first, so each run sees only what it asks for. */
static void env_reset(void)
{
    static const char *const vars[] = {"FDR_OUTPUT",         "FDR_MODE",
                                       "FDR_EVENTS",         "FDR_TRACES",
                                       "FDR_TRACE_FILE",     "FDR_BUFFER_SIZE",
                                       "FDR_PACKET_SIZE",    "LTTNG_UST_REGISTER_TIMEOUT",
                                       "FDR_BENCH_LTTNG_TP", "FDR_DRAIN",
                                       "FDR_RUNDIR",         "FDR_DAEMON",
                                       "FDR_MEMORY"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

/* Value of "key <number>" in out, or -1. */
static double out_value(const char *out, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
        if (strncmp(p, key, kl) == 0 && p[kl] == ' ')
            return strtod(p + kl + 1, NULL);
    return -1;
}

static int run_load(const bench_sections_ctx *c, const char *which,
                    const char *const args[], char *out, size_t outsz, uint64_t *t_spawn)
{
    char exe[PATH_MAX];
    snprintf(exe, sizeof exe, "%s/fdr-bench-load-%s", c->bindir, which);
    const char *argv[16] = {exe};
    int n = 1;
    for (; args[n - 1] != NULL && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    if (t_spawn != NULL)
        *t_spawn = now_ns();
    int rc = bench_run_cmd(argv, out, outsz);
    const char *err = strstr(out, "error ");
    if (rc != 0 || err != NULL) {
        fprintf(stderr, "fdr-bench: %s %s: exit %d: %.300s\n", exe, args[0], rc,
                err ? err : out);
        return -1;
    }
    return 0;
}

int bench_count_trace(const char *bindir, const char *dir, unsigned long long *events,
                      unsigned long long *discarded)
{
    char exe[PATH_MAX], out[4096];
    snprintf(exe, sizeof exe, "%s/fdr-bench-count", bindir);
    const char *argv[] = {exe, dir, NULL};
    int rc = bench_run_cmd(argv, out, sizeof out);
    if (rc != 0 || sscanf(out, "events %llu discarded %llu", events, discarded) != 2) {
        fprintf(stderr, "fdr-bench: reading %s: %.300s\n", dir, out);
        return -1;
    }
    return 0;
}

static unsigned long long stream_bytes;

static int add_stream(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    const char *base = path + ftw->base;
    if (flag == FTW_F && strcmp(base, "metadata") != 0 && strstr(path, "/index/") == NULL)
        stream_bytes += (unsigned long long)st->st_size;
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void rm_tree(const bench_sections_ctx *c, const char *dir)
{
    if (!c->keep_traces)
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* One LTTng session at default settings around a run. */
static int lttng_open(const bench_sections_ctx *c, bench_lttng_session *s,
                      const char *tag, const char *events)
{
    *s = (bench_lttng_session){.defaults = 1, .events = events};
    snprintf(s->name, sizeof s->name, "fdr-bench-%ld-%s", (long)getpid(), tag);
    snprintf(s->outdir, sizeof s->outdir, "%s/lttng-%s", c->tmpdir, tag);
    char why[512] = "";
    if (bench_lttng_begin(s, why, sizeof why) != 0) {
        fprintf(stderr, "fdr-bench: lttng session %s: %s\n", s->name, why);
        long long d;
        bench_lttng_end(s, &d, why, sizeof why);
        return -1;
    }
    return 0;
}

static void lttng_close(bench_lttng_session *s)
{
    char why[512];
    long long d;
    pid_t ours = s->our_sessiond; /* the driver's daemon is not ours to stop */
    s->our_sessiond = 0;
    if (bench_lttng_end(s, &d, why, sizeof why) != 0)
        fprintf(stderr, "fdr-bench: lttng teardown: %s\n", why);
    if (ours > 0)
        kill(ours, SIGTERM);
}

/* ---- sustained and size --------------------------------------------------- */

typedef struct emit_run {
    const char *tracer;   /* record name */
    const char *workload; /* record name */
    const char *events;   /* "two_ints" or "int_double_string" */
    int threads;
    unsigned long long n;
    double rate;               /* per thread, 0 = unpaced */
    const char *size_workload; /* also a size record, or NULL */
} emit_run;

static int emit_one(const bench_sections_ctx *c, const emit_run *e)
{
    int is_fdr = strncmp(e->tracer, "fdr", 3) == 0;
    char dir[PATH_MAX], tag[96], tn[16], nn[32], rn[32];
    snprintf(tag, sizeof tag, "%s-%s-%s", e->tracer, e->workload, e->events);
    snprintf(dir, sizeof dir, "%s/%s", c->tmpdir, tag);
    snprintf(tn, sizeof tn, "%d", e->threads);
    snprintf(nn, sizeof nn, "%llu", e->n);
    snprintf(rn, sizeof rn, "%.0f", e->rate);
    env_reset();
    bench_lttng_session ls;
    if (is_fdr) {
        setenv("FDR_OUTPUT", dir, 1); /* nothing else: default settings */
    } else {
        char ev[64];
        snprintf(ev, sizeof ev, "bench_lttng:%s", e->events);
        if (lttng_open(c, &ls, tag, ev) != 0)
            return 1;
        snprintf(dir, sizeof dir, "%s", ls.outdir);
    }
    char out[4096];
    const char *args[] = {"emit", e->events, tn, nn, rn, NULL};
    int rc = run_load(c, is_fdr ? "fdr" : "lttng", args, out, sizeof out, NULL);
    if (!is_fdr)
        lttng_close(&ls); /* stop: the consumer daemon flushes */
    env_reset();
    if (rc != 0)
        return 1;
    double elapsed = out_value(out, "elapsed_ns");
    double emitted = out_value(out, "emitted");
    unsigned long long rec, disc;
    if (bench_count_trace(c->bindir, dir, &rec, &disc) != 0) {
        rm_tree(c, dir);
        return 1;
    }
    stream_bytes = 0;
    nftw(dir, add_stream, 16, FTW_PHYS);
    rm_tree(c, dir);
    int bad = 0;
    if ((double)(rec + disc) != emitted) {
        fprintf(stderr,
                "fdr-bench: %s %s: emitted %.0f != recorded %llu + discarded %llu\n",
                e->tracer, e->workload, emitted, rec, disc);
        bench_note(c->r, "%s %s: emitted %.0f but recorded %llu + discarded %llu = %llu",
                   e->tracer, e->workload, emitted, rec, disc, rec + disc);
        bad = c->strict;
    }
    if (elapsed > 0 && e->workload[0] != '\0') {
        bench_extra_add(c->r, "sustained", e->tracer, e->workload, "events_per_s",
                        emitted * 1e9 / elapsed);
        bench_extra_add(c->r, "sustained", e->tracer, e->workload, "discarded",
                        (double)disc);
        bench_extra_add(c->r, "sustained", e->tracer, e->workload, "recorded",
                        (double)rec);
    }
    if (e->size_workload != NULL && rec > 0)
        bench_extra_add(c->r, "size", e->tracer, e->size_workload, "bytes",
                        (double)stream_bytes / (double)rec);
    fprintf(stderr,
            "  %s %s %s x%d: %.0f events in %.1f ms, recorded %llu, "
            "discarded %llu, %llu stream bytes\n",
            e->tracer, e->workload, e->events, e->threads, emitted, elapsed / 1e6, rec,
            disc, stream_bytes);
    return bad;
}

static int sustained_and_size(const bench_sections_ctx *c)
{
    unsigned long long big = c->quick ? 400000 : 50000000;
    unsigned long long paced = c->quick ? 400000 : 50000000;
    unsigned long long sz = c->quick ? 100000 : 5000000;
    int bad = 0;
    for (int l = 0; l < 2; l++) {
        const char *tr = l == 0 ? "fdr-discard" : "lttng-ust";
        if (l == 1 && !c->lttng)
            break;
        emit_run runs[] = {
            {tr, "1_thread", "two_ints", 1, big, 0, NULL},
            {tr, "2_threads", "two_ints", 2, big, 0, NULL},
            {tr, "10M_per_s_1_thread", "two_ints", 1, paced, 1e7, "two_ints"},
            {tr, "", "int_double_string", 1, sz, 1e6, "int_double_string"},
        };
        for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
            bad += emit_one(c, &runs[i]);
    }
    return bad;
}

/* ---- start-up ------------------------------------------------------------- */

static int startup(const bench_sections_ctx *c)
{
    int reps = c->quick ? 3 : 21, bad = 0;
    /* Row 3: fdr-discard without the drain helper process (FDR_DRAIN=off):
     * what the helper adds to start-up (issue 11); row 4: LTTng-UST. */
    const char *names[] = {"floor", "fdr-discard", "fdr-overwrite", "fdr-discard"};
    const char *exes[] = {"none", "fdr", "fdr", "fdr"};
    const char *lt_name = "lttng-ust";
    int lt = c->lttng ? 5 : 4;
    bench_lttng_session ls;
    if (c->lttng && lttng_open(c, &ls, "startup", "bench_lttng:two_ints") != 0)
        lt = 4;
    char fdrdir[PATH_MAX];
    snprintf(fdrdir, sizeof fdrdir, "%s/startup-fdr", c->tmpdir);
    double first[5][64], faults[5][64], cpu[5][64];
    int got[5] = {0};
    unsigned long long traced = 0; /* fdr-discard runs: one event each */
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < lt; k++) {
            env_reset();
            if (k == 1 || k == 3)
                setenv("FDR_OUTPUT", fdrdir, 1);
            if (k == 3)
                setenv("FDR_DRAIN", "off", 1);
            char out[4096];
            const char *args[] = {"startup", NULL};
            uint64_t t0;
            if (run_load(c, k == 4 ? "lttng" : exes[k], args, out, sizeof out, &t0) !=
                0) {
                bad++;
                continue;
            }
            traced += k == 1 || k == 3;
            double f = out_value(out, "first_ns");
            if (k == 4 && out_value(out, "enabled") != 1) {
                bench_note(c->r, "startup: lttng-ust event not enabled at the first "
                                 "call (registration not finished): not recorded");
                continue;
            }
            if (f > 0) {
                /* And what the load does not change: the program's page
                 * faults and CPU time (its threads; not a helper process). */
                const struct rusage *u = &bench_last_rusage;
                faults[k][got[k]] = (double)u->ru_minflt;
                cpu[k][got[k]] =
                    (double)(u->ru_utime.tv_sec + u->ru_stime.tv_sec) * 1e3 +
                    (double)(u->ru_utime.tv_usec + u->ru_stime.tv_usec) / 1e3;
                first[k][got[k]++] = (f - (double)t0) / 1e6;
            }
        }
    env_reset();
    if (lt == 5)
        lttng_close(&ls);
    /* Every fdr-discard run's trace (a run keeps the traces of the ones
     * before it in FDR_OUTPUT: docs/environment.md) holds its one event. */
    unsigned long long rec, disc;
    if (bench_count_trace(c->bindir, fdrdir, &rec, &disc) != 0 || rec != traced) {
        fprintf(stderr, "fdr-bench: startup: the fdr traces hold %llu events, not %llu\n",
                rec, traced);
        bad++;
    }
    rm_tree(c, fdrdir);
    benchfn_stats base = benchfn_stats_of(first[0], (size_t)got[0]);
    benchfn_stats base_f = benchfn_stats_of(faults[0], (size_t)got[0]);
    benchfn_stats base_c = benchfn_stats_of(cpu[0], (size_t)got[0]);
    for (int k = 0; k < lt; k++) {
        const char *name = k == 4 ? lt_name : names[k];
        if (got[k] == 0) {
            fprintf(stderr, "fdr-bench: startup: no number for %s\n", name);
            bad++;
            continue;
        }
        for (int i = 0; i < got[k]; i++) {
            bench_extra_add(c->r, "startup", name,
                            k == 3 ? "first_event_no_drain" : "first_event", "ms",
                            first[k][i]);
            if (k == 0)
                continue;
            bench_extra_add(c->r, "startup", name, k == 3 ? "added_no_drain" : "added",
                            "ms", first[k][i] - base.median);
            bench_extra_add(c->r, "startup", name,
                            k == 3 ? "page_faults_added_no_drain" : "page_faults_added",
                            "faults", faults[k][i] - base_f.median);
            bench_extra_add(c->r, "startup", name,
                            k == 3 ? "cpu_added_no_drain" : "cpu_added", "ms",
                            cpu[k][i] - base_c.median);
        }
    }
    return bad;
}

/* ---- memory --------------------------------------------------------------- */

static int memory(const bench_sections_ctx *c)
{
    int reps = c->quick ? 1 : 3, bad = 0;
    int t_lo = 1, t_hi = c->quick ? 3 : 9;
    /* Enough events to fill the default ring when writing to disk (8 MiB
     * at 18 bytes an event): the resident size then is its upper bound. */
    const char *ev = c->quick ? "100000" : "600000";
    const char *names[] = {"floor", "fdr-discard", "lttng-ust"};
    const char *exes[] = {"none", "fdr", "lttng"};
    int n = c->lttng ? 3 : 2;
    bench_lttng_session ls;
    if (c->lttng && lttng_open(c, &ls, "memory", "bench_lttng:two_ints") != 0)
        n = 2;
    char fdrdir[PATH_MAX];
    snprintf(fdrdir, sizeof fdrdir, "%s/memory-fdr", c->tmpdir);
    double slope[3] = {0}, fixed[3] = {0};
    for (int k = 0; k < n; k++) {
        double lo[8], hi[8];
        for (int r = 0; r < reps; r++) {
            for (int h = 0; h < 2; h++) {
                env_reset();
                if (k == 1)
                    setenv("FDR_OUTPUT", fdrdir, 1);
                char tn[16], out[4096];
                snprintf(tn, sizeof tn, "%d", h ? t_hi : t_lo);
                const char *args[] = {"memory", tn, ev, NULL};
                double kb = -1;
                if (run_load(c, exes[k], args, out, sizeof out, NULL) == 0)
                    kb = out_value(out, "rss_kb");
                if (k == 1 && h == 0 && kb > 0) {
                    /* The drain helper process next to the program: Pss
                     * (its pages are mostly the program's, shared). */
                    bench_extra_add(c->r, "memory", "fdr-discard", "program_pss", "bytes",
                                    out_value(out, "pss_kb") * 1024);
                    bench_extra_add(c->r, "memory", "fdr-discard", "drain_helper_pss",
                                    "bytes", out_value(out, "helper_pss_kb") * 1024);
                }
                (h ? hi : lo)[r] = kb * 1024;
                if (kb <= 0)
                    bad++;
            }
        }
        env_reset();
        double mlo = benchfn_stats_of(lo, (size_t)reps).median;
        double mhi = benchfn_stats_of(hi, (size_t)reps).median;
        slope[k] = (mhi - mlo) / (t_hi - t_lo);
        fixed[k] = mlo - slope[k];
        fprintf(stderr, "  memory %s: RSS %.0f kB with %d thread(s), %.0f kB with %d\n",
                names[k], mlo / 1024, t_lo, mhi / 1024, t_hi);
    }
    if (n == 3)
        lttng_close(&ls);
    rm_tree(c, fdrdir);
    bench_extra_add(c->r, "memory", "floor", "per_thread", "bytes", slope[0]);
    bench_extra_add(c->r, "memory", "floor", "process", "bytes", fixed[0]);
    for (int k = 1; k < n; k++) {
        bench_extra_add(c->r, "memory", names[k], "per_thread", "bytes",
                        slope[k] - slope[0]);
        bench_extra_add(c->r, "memory", names[k], "process", "bytes",
                        fixed[k] - fixed[0]);
    }
    return bad;
}

/* ---- snapshot -------------------------------------------------------------- */

static int snapshot(const bench_sections_ctx *c)
{
    env_reset();
    setenv("FDR_MODE", "overwrite", 1);
    setenv("FDR_BUFFER_SIZE", "1M", 1);
    char dir[PATH_MAX], out[8192];
    snprintf(dir, sizeof dir, "%s/snapshot", c->tmpdir);
    /* 100k two_ints events = 1.8 MB per thread: every ring has wrapped. */
    const char *args[] = {"snapshot", "8", "100000", c->quick ? "2" : "15", dir, NULL};
    int rc = run_load(c, "fdr", args, out, sizeof out, NULL);
    env_reset();
    if (rc == 0 && strstr(out, "unsupported") != NULL) {
        bench_note(c->r,
                   "snapshot: fdr_snapshot() not in this tree yet (lib/snapshot.c)");
        return 0;
    }
    if (rc != 0)
        return 1;
    int got = 0;
    for (const char *p = strstr(out, "snap_ns "); p; p = strstr(p + 1, "snap_ns ")) {
        bench_extra_add(c->r, "snapshot", "fdr-overwrite", "8_threads_x_1MiB", "ms",
                        strtod(p + 8, NULL) / 1e6);
        got++;
    }
    unsigned long long rec = 0, disc = 0;
    if (got == 0 || bench_count_trace(c->bindir, dir, &rec, &disc) != 0 || rec == 0) {
        fprintf(stderr, "fdr-bench: snapshot: %d snapshots, %llu events read back\n", got,
                rec);
        rm_tree(c, dir);
        return 1;
    }
    bench_note(c->r,
               "snapshot: the last snapshot reads back with %llu events "
               "(8 threads x 1 MiB rings)",
               rec);
    rm_tree(c, dir);
    return 0;
}

/* Snapshots while 64 threads record without pause (more threads than
 * cores): the controller waits only for writers inside their section. */
static int snapshot_busy(const bench_sections_ctx *c)
{
    env_reset();
    setenv("FDR_MODE", "overwrite", 1);
    char dir[PATH_MAX], out[8192];
    snprintf(dir, sizeof dir, "%s/snapshot-busy", c->tmpdir);
    /* --quick (in the test suite, on a machine busy with other tests):
     * fewer threads, one snapshot; the number is quoted from a full run. */
    const char *args[] = {"snapshot-busy", c->quick ? "8" : "64", c->quick ? "1" : "5",
                          dir, NULL};
    int rc = run_load(c, "fdr", args, out, sizeof out, NULL);
    env_reset();
    if (rc == 0 && strstr(out, "unsupported") != NULL)
        return 0;
    int got = 0;
    for (const char *p = strstr(out, "snap_ns "); rc == 0 && p;
         p = strstr(p + 1, "snap_ns ")) {
        bench_extra_add(c->r, "snapshot", "fdr-overwrite",
                        c->quick ? "8_busy_threads" : "64_busy_threads", "ms",
                        strtod(p + 8, NULL) / 1e6);
        got++;
    }
    rm_tree(c, dir);
    if (got == 0) {
        fprintf(stderr, "fdr-bench: snapshot with 64 busy threads: no snapshot\n");
        return 1;
    }
    return 0;
}

/* Reads one trace of N int_double_string events (written by fdr-discard)
 * with `fdr print` and with the babeltrace2 CLI, both printing text into a
 * pipe the bench drains: events per second, median of 3 runs each,
 * interleaved. */
static int print_speed(const bench_sections_ctx *c)
{
#ifdef FDR_BENCH_FDR_CLI
    char dir[PATH_MAX], out[8192];
    snprintf(dir, sizeof dir, "%s/print", c->tmpdir);
    env_reset();
    setenv("FDR_OUTPUT", dir, 1);
    setenv("FDR_BUFFER_SIZE", "64M", 1); /* every event reaches the file */
    const char *n = c->quick ? "200000" : "10000000";
    const char *args[] = {"emit", "int_double_string", "1", n, "0", NULL};
    int rc = run_load(c, "fdr", args, out, sizeof out, NULL);
    env_reset();
    unsigned long long rec = 0, disc = 0;
    if (rc != 0 || bench_count_trace(c->bindir, dir, &rec, &disc) != 0 || rec == 0) {
        fprintf(stderr, "fdr-bench: print: no trace to read\n");
        rm_tree(c, dir);
        return 1;
    }
    const char *fdr_argv[] = {FDR_BENCH_FDR_CLI, "print", dir, NULL};
    const char *bt_argv[] = {"babeltrace2", dir, NULL};
    double rate[2][3];
    int bad = 0;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++) {
            uint64_t t0 = now_ns();
            rc = bench_run_cmd(k ? bt_argv : fdr_argv, NULL, 0);
            uint64_t t1 = now_ns();
            if (rc != 0) {
                fprintf(stderr, "fdr-bench: print: %s exited %d\n",
                        k ? "babeltrace2" : "fdr", rc);
                bad = 1;
            }
            rate[k][i] = (double)rec / ((double)(t1 - t0) / 1e9);
            bench_extra_add(c->r, "print", "fdr-discard",
                            k ? "babeltrace2_events_per_s" : "fdr_print_events_per_s",
                            "events_per_s", rate[k][i]);
        }
    bench_note(
        c->r,
        "print: %llu events of int_double_string; fdr print / babeltrace2, run by run: "
        "%.2f %.2f %.2f",
        rec, rate[0][0] / rate[1][0], rate[0][1] / rate[1][1], rate[0][2] / rate[1][2]);
    rm_tree(c, dir);
    return bad;
#else
    (void)c;
    return 0;
#endif
}

/* ---- through fdrd (issue 13) ---------------------------------------------- */

/* fdr ARGS... (NULL-terminated, at most 9) with fdrd's run directory;
 * the caller's FDR_RUNDIR is left as it was (unset after, the programs
 * the daemon section runs next found no fdrd and recorded nothing). */
static int fdr_cmd(const char *bindir, const char *rundir, const char *const *args)
{
    char exe[PATH_MAX], fdrd[PATH_MAX], out[4096], was[PATH_MAX] = "";
    snprintf(exe, sizeof exe, "%s/../programs/fdr/fdr", bindir);
    snprintf(fdrd, sizeof fdrd, "%s/../daemon/fdrd", bindir);
    if (access(fdrd, X_OK) != 0)
        return -1;
    const char *w = getenv("FDR_RUNDIR");
    if (w)
        snprintf(was, sizeof was, "%s", w);
    setenv("FDR_RUNDIR", rundir, 1);
    setenv("FDR_FDRD", fdrd, 1);
    const char *argv[11] = {exe};
    for (int i = 0; i < 9 && args[i]; i++)
        argv[i + 1] = args[i];
    int rc = bench_run_cmd(argv, out, sizeof out);
    unsetenv("FDR_FDRD");
    if (w)
        setenv("FDR_RUNDIR", was, 1);
    else
        unsetenv("FDR_RUNDIR");
    if (rc != 0)
        fprintf(stderr, "fdr-bench: fdr %s %s: exit %d: %.300s\n", args[0], args[1], rc,
                out);
    return rc;
}

int bench_fdr(const char *bindir, const char *rundir, const char *a1, const char *a2,
              const char *a3, const char *a4, const char *a5)
{
    const char *args[] = {a1, a2, a3, a4, a5, NULL};
    return fdr_cmd(bindir, rundir, args);
}

void bench_fdrd_stop(const char *rundir)
{
    char pidf[PATH_MAX + 16];
    snprintf(pidf, sizeof pidf, "%s/fdrd.pid", rundir);
    FILE *f = fopen(pidf, "r");
    long pid = 0;
    if (f) {
        if (fscanf(f, "%ld", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    if (pid > 0)
        kill((pid_t)pid, SIGTERM);
}

/* d as a percentage of d + r (0 when both are 0). */
static double percent(unsigned long long d, unsigned long long r)
{
    return d + r ? 100.0 * (double)d / (double)(d + r) : 0;
}

/* A started discard trace "bench" of fdrd in `out` (removed first), for
 * bench:*. 0, or 1 when one of the three fdr commands failed. */
static int daemon_trace(const bench_sections_ctx *c, const char *rundir, const char *out)
{
    rm_tree(c, out);
    return bench_fdr(c->bindir, rundir, "create", "bench", "-o", out, NULL) != 0 ||
           bench_fdr(c->bindir, rundir, "enable", "bench", "bench:*", NULL, NULL) != 0 ||
           bench_fdr(c->bindir, rundir, "start", "bench", NULL, NULL, NULL) != 0;
}

/* Start-up and per-event cost of a program recording into a started fdrd
 * trace, side by side with the embedded mode, and 8 programs x 2 threads
 * through one fdrd (next to LTTng-UST, one per-UID session). */
static int daemon_rows(const bench_sections_ctx *c)
{
    char rundir[PATH_MAX], out[PATH_MAX], emb[PATH_MAX], exe[PATH_MAX];
    snprintf(exe, sizeof exe, "%s/../daemon/fdrd", c->bindir);
    if (access(exe, X_OK) != 0) {
        bench_note(c->r, "daemon: no fdrd next to fdr-bench (%s): not measured", exe);
        return 0;
    }
    snprintf(rundir, sizeof rundir, "%s/fdrd-run", c->tmpdir);
    snprintf(out, sizeof out, "%s/daemon-out", c->tmpdir);
    snprintf(emb, sizeof emb, "%s/daemon-embedded", c->tmpdir);
    mkdir(rundir, 0700);
    env_reset();
    if (daemon_trace(c, rundir, out) != 0)
        return 1;
    int bad = 0, reps = c->quick ? 3 : 11;
    unsigned long long n = c->quick ? 200000 : 20000000;
    char nn[32], o[4096];
    snprintf(nn, sizeof nn, "%llu", n);
    /* Start-up: the first event's time after fork, and per event: n
     * events of one thread (ns per event, start and flush included). */
    double first[3][64], per[3][64], sfault[3][64], scpu[3][64];
    int gf[3] = {0}, gp[3] = {0};
    unsigned long long recorded[3] = {0}, discarded[3] = {0};
    static const char *const names[] = {"floor", "fdr-discard", "fdr-daemon"};
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < 3; k++) {
            env_reset();
            /* fdrd's runs each have a trace of their own, as the embedded
             * ones have: the traces of earlier runs, kept, were written
             * back to disk under the later ones (dirty pages past the
             * kernel's background ratio: 11 runs x 280 MB), which the
             * embedded traces, removed each time, never were (run 1 13.4
             * ns per event, the next ones 21-24, Intel guest). */
            if (k == 2 && r > 0 && daemon_trace(c, rundir, out) != 0)
                bad++;
            if (k == 2)
                setenv("FDR_RUNDIR", rundir, 1);
            if (k == 1)
                setenv("FDR_OUTPUT", emb, 1);
            const char *em[] = {"emit", "two_ints", "1", nn, "0", NULL};
            if (run_load(c, k ? "fdr" : "none", em, o, sizeof o, NULL) == 0 &&
                out_value(o, "elapsed_ns") > 0)
                per[k][gp[k]++] = out_value(o, "elapsed_ns") / (double)n;
            else
                bad++;
            /* Start-up: in memory (k 1), or joining fdrd's trace once
             * its emitter has run (a fresh trace's first process starts
             * ~0.1 ms later: fdrd makes the trace's directory meanwhile). */
            unsetenv("FDR_OUTPUT");
            const char *st[] = {"startup", NULL};
            uint64_t t0;
            if (run_load(c, k ? "fdr" : "none", st, o, sizeof o, &t0) == 0 &&
                out_value(o, "first_ns") > 0) {
                const struct rusage *u = &bench_last_rusage; /* as startup() */
                sfault[k][gf[k]] = (double)u->ru_minflt;
                scpu[k][gf[k]] =
                    (double)(u->ru_utime.tv_sec + u->ru_stime.tv_sec) * 1e3 +
                    (double)(u->ru_utime.tv_usec + u->ru_stime.tv_usec) / 1e3;
                first[k][gf[k]++] = (out_value(o, "first_ns") - (double)t0) / 1e6;
            } else
                bad++;
            if (k == 0)
                continue;
            /* What each run recorded and discarded (fdrd's trace once
             * destroyed: all written; with the start-up's one event). */
            unsigned long long rec = 0, disc = 0, want = n + (k == 2);
            if (k == 2 &&
                bench_fdr(c->bindir, rundir, "destroy", "bench", NULL, NULL, NULL) != 0)
                bad++;
            if (bench_count_trace(c->bindir, k == 1 ? emb : out, &rec, &disc) != 0 ||
                rec + disc != want) {
                fprintf(
                    stderr,
                    "fdr-bench: daemon: %s: %llu recorded + %llu discarded, not %llu\n",
                    names[k], rec, disc, want);
                bad++;
            }
            recorded[k] += rec;
            discarded[k] += disc;
            /* Each removed once read, the two alike (what waits to be
             * written back is the same for the next runs). */
            rm_tree(c, k == 1 ? emb : out);
        }
    env_reset();
    rm_tree(c, emb);
    benchfn_stats f0 = benchfn_stats_of(first[0], (size_t)gf[0]);
    benchfn_stats ff0 = benchfn_stats_of(sfault[0], (size_t)gf[0]);
    benchfn_stats fc0 = benchfn_stats_of(scpu[0], (size_t)gf[0]);
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < gf[k]; i++) {
            bench_extra_add(c->r, "daemon", names[k], "first_event", "ms", first[k][i]);
            if (!k)
                continue;
            bench_extra_add(c->r, "daemon", names[k], "startup_added", "ms",
                            first[k][i] - f0.median);
            bench_extra_add(c->r, "daemon", names[k], "startup_page_faults_added",
                            "faults", sfault[k][i] - ff0.median);
            bench_extra_add(c->r, "daemon", names[k], "startup_cpu_added", "ms",
                            scpu[k][i] - fc0.median);
        }
        for (int i = 0; i < gp[k]; i++)
            bench_extra_add(c->r, "daemon", names[k], "two_ints_1_thread", "ns",
                            per[k][i]);
    }
    benchfn_stats pe = benchfn_stats_of(per[1], (size_t)gp[1]);
    benchfn_stats pd = benchfn_stats_of(per[2], (size_t)gp[2]);
    benchfn_stats fd = benchfn_stats_of(first[2], (size_t)gf[2]);
    fprintf(stderr,
            "  daemon: per event %.2f ns embedded, %.2f ns through fdrd (%.3fx)\n",
            pe.median, pd.median, pe.median > 0 ? pd.median / pe.median : 0);
    bench_note(c->r,
               "daemon: two_ints, 1 thread, %llu events, start and flush included: "
               "%.2f ns per event through a started fdrd trace (discard) against %.2f "
               "embedded (FDR_OUTPUT, discard): %.3fx; discarded %.1f%% through fdrd, "
               "%.1f%% embedded; start-up added by fdrd with a "
               "started trace: %.3f ms (fdr-daemon column of the JSON)",
               n, pd.median, pe.median, pe.median > 0 ? pd.median / pe.median : 0,
               percent(discarded[2], recorded[2]), percent(discarded[1], recorded[1]),
               fd.median - f0.median);

    /* 8 programs x 2 threads at full speed, all at once. */
    for (int l = 0; l < 2; l++) {
        if (l == 1 && !c->lttng)
            break;
        bench_lttng_session ls;
        char dir[PATH_MAX];
        env_reset();
        if (l == 0) {
            rm_tree(c, out); /* "bench" was destroyed after its last run */
            if (bench_fdr(c->bindir, rundir, "create", "bench8", "-o", out, NULL) != 0 ||
                bench_fdr(c->bindir, rundir, "enable", "bench8", "bench:*", NULL, NULL) !=
                    0 ||
                bench_fdr(c->bindir, rundir, "start", "bench8", NULL, NULL, NULL) != 0) {
                bad++;
                continue;
            }
            setenv("FDR_RUNDIR", rundir, 1);
            snprintf(dir, sizeof dir, "%s", out);
        } else {
            if (lttng_open(c, &ls, "daemon8", "bench_lttng:two_ints") != 0)
                continue;
            snprintf(dir, sizeof dir, "%s", ls.outdir);
        }
        char load[PATH_MAX], n8[32];
        snprintf(load, sizeof load, "%s/fdr-bench-load-%s", c->bindir,
                 l ? "lttng" : "fdr");
        snprintf(n8, sizeof n8, "%llu", n / 4);
        const char *argv[] = {
            "/bin/sh",
            "-c",
            "for i in 1 2 3 4 5 6 7 8; do \"$0\" emit two_ints 2 $1 0 & "
            "done; wait",
            load,
            n8,
            NULL};
        uint64_t t0 = now_ns();
        int rc = bench_run_cmd(argv, o, sizeof o);
        double wall = (double)(now_ns() - t0);
        if (l == 0)
            rc |= bench_fdr(c->bindir, rundir, "destroy", "bench8", NULL, NULL,
                            NULL); /* all written */
        else
            lttng_close(&ls);
        env_reset();
        unsigned long long rec = 0, disc = 0;
        if (rc != 0 || bench_count_trace(c->bindir, dir, &rec, &disc) != 0) {
            bad++;
            continue;
        }
        double emitted = 8.0 * (double)(n / 4);
        const char *tr = l ? "lttng-ust" : "fdr-daemon";
        bench_extra_add(c->r, "daemon", tr, "8_procs_x_2_threads", "events_per_s",
                        emitted * 1e9 / wall);
        bench_extra_add(c->r, "daemon", tr, "8_procs_x_2_threads", "recorded",
                        (double)rec);
        bench_extra_add(c->r, "daemon", tr, "8_procs_x_2_threads", "discarded",
                        (double)disc);
        double unseen = emitted - (double)(rec + disc);
        fprintf(stderr,
                "  daemon: 8 procs x 2 threads (%s): %.0f events in %.0f ms, recorded "
                "%llu, discarded %llu, neither %.0f\n",
                tr, emitted, wall / 1e6, rec, disc, unseen);
        bench_note(c->r,
                   "daemon: 8 programs x 2 threads at full speed (%s): %.3g events/s in "
                   "all, %llu recorded, %llu discarded, %.0f neither recorded nor "
                   "counted%s",
                   tr, emitted * 1e9 / wall, rec, disc, unseen,
                   l || unseen == 0 ? "" : ": events lost uncounted, a bug of fdr's");
        /* fdr counts every event it does not record (a program's first
         * events included: docs/daemon.md, "Events before the route"). */
        if (l == 0 && unseen != 0)
            bad++;
        rm_tree(c, dir);
    }
    bench_fdrd_stop(rundir); /* fdrd goes with its run directory */
    return bad;
}

/* ---- 1,000 threads: ring memory against the budget -------------------------- */

/* 1,000 threads each record enough two_ints events to fill a 256 KiB ring
 * (20,000 of 18 bytes), then wait while the program reads its VmRSS: the
 * memory its rings hold, against the budget. Rows: no tracer; fdr's
 * flight recorder with no budget to speak of (FDR_MEMORY=1T: 1,000 rings);
 * with a 16 MiB budget; through fdrd (an overwrite trace, --memory 16M);
 * LTTng-UST (per-UID buffers, its defaults). The added RSS is what each
 * adds to the program over the no-tracer run. */
static int thousand_threads(const bench_sections_ctx *c)
{
    const char *ev = c->quick ? "2000" : "20000";
    static const char *const names[] = {"floor", "fdr-no-budget", "fdr-budget-16M",
                                        "fdr-daemon-16M", "lttng-ust"};
    char rundir[PATH_MAX], out[PATH_MAX];
    snprintf(rundir, sizeof rundir, "%s/fdrd-mem", c->tmpdir);
    snprintf(out, sizeof out, "%s/fdrd-mem-out", c->tmpdir);
    mkdir(rundir, 0700);
    int bad = 0, reps = c->quick ? 1 : 3;
    double rss[5][8];
    int n[5] = {0};
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < 5; k++) {
            bench_lttng_session ls;
            env_reset();
            setenv("FDR_DAEMON", "0", 1);
            setenv("FDR_BUFFER_SIZE", "256K", 1);
            if (k == 1)
                setenv("FDR_MEMORY", "1T", 1);
            if (k >= 2) /* and through fdrd, the threads' own rings */
                setenv("FDR_MEMORY", "16M", 1);
            if (k == 3) {
                unsetenv("FDR_DAEMON");
                const char *create[] = {
                    "create", "mem",           "-o",   out,           "--memory",
                    "16M",    "--buffer-size", "256K", "--overwrite", NULL};
                if (fdr_cmd(c->bindir, rundir, create) != 0 ||
                    bench_fdr(c->bindir, rundir, "enable", "mem", "bench:*", NULL,
                              NULL) != 0 ||
                    bench_fdr(c->bindir, rundir, "start", "mem", NULL, NULL, NULL) != 0) {
                    bad++;
                    continue;
                }
                setenv("FDR_RUNDIR", rundir, 1);
            }
            if (k == 4 && (!c->lttng ||
                           lttng_open(c, &ls, "thousand", "bench_lttng:two_ints") != 0))
                continue;
            const char *args[] = {"memory", "1000", ev, NULL};
            char o[4096];
            double kb = -1;
            if (run_load(c,
                         k == 0   ? "none"
                         : k == 4 ? "lttng"
                                  : "fdr",
                         args, o, sizeof o, NULL) == 0)
                kb = out_value(o, "rss_kb");
            if (k == 3) {
                env_reset();
                bench_fdr(c->bindir, rundir, "destroy", "mem", NULL, NULL, NULL);
                rm_tree(c, out);
            }
            if (k == 4)
                lttng_close(&ls);
            if (kb > 0)
                rss[k][n[k]++] = kb * 1024;
            else
                bad++;
        }
    env_reset();
    bench_fdrd_stop(rundir);
    double floor_rss = benchfn_stats_of(rss[0], (size_t)n[0]).median;
    for (int k = 0; k < 5; k++) {
        if (!n[k])
            continue;
        double m = benchfn_stats_of(rss[k], (size_t)n[k]).median;
        for (int i = 0; i < n[k]; i++) {
            bench_extra_add(c->r, "threads_1000", names[k], "rss", "bytes", rss[k][i]);
            if (k)
                bench_extra_add(c->r, "threads_1000", names[k], "rss_added", "bytes",
                                rss[k][i] - floor_rss);
        }
        fprintf(stderr, "  1,000 threads %s: RSS %.1f MiB (%+.1f MiB)\n", names[k],
                m / 1048576, (m - floor_rss) / 1048576);
    }
    bench_note(
        c->r,
        "threads_1000: 1,000 threads x %s two_ints events, 256 KiB rings; RSS added "
        "over no tracer: the budget bounds fdr's rings to 16 MiB + 12 KiB per "
        "thread past it (docs/daemon.md, memory budget)",
        ev);
    return bad;
}

/* ---- streaming to lttng-relayd (issue 16) ----------------------------------- */

/* A free TCP port on 127.0.0.1 (bound then released: good enough here). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static int port_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

double bench_cpu_s(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    unsigned long ut, st;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
                     &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

long bench_pid_file(const char *rundir)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/fdrd.pid", rundir);
    FILE *f = fopen(path, "r");
    long pid = -1;
    if (f) {
        if (fscanf(f, "%ld", &pid) != 1)
            pid = -1;
        fclose(f);
    }
    return pid;
}

/* One program of 2 threads emits n two_ints events as fast as it can into
 * (k=0) an fdrd trace on local disk, (k=1) an fdrd trace streamed to
 * relayd, (k=2) an LTTng-UST session streamed to the same relayd. Rows:
 * the program's events/s, the end-to-end MB/s (bytes on disk, or stored by
 * relayd, over the time from the program's start until the trace is
 * destroyed: everything written or sent), and fdrd's CPU per MB. */
static int relay_rows(const bench_sections_ctx *c)
{
    static const char *const names[] = {"fdr-daemon-disk", "fdr-daemon-relayd",
                                        "lttng-ust-relayd"};
    char rundir[PATH_MAX], out[PATH_MAX], rout[PATH_MAX], url[128], where[128];
    snprintf(rundir, sizeof rundir, "%s/fdrd-relay", c->tmpdir);
    snprintf(out, sizeof out, "%s/relay-local", c->tmpdir);
    snprintf(rout, sizeof rout, "%s/relayd-out", c->tmpdir);
    mkdir(rundir, 0700);
    int p1 = free_port(), p2 = free_port(), p3 = free_port();
    char ca[64], da[64], la[64];
    snprintf(ca, sizeof ca, "tcp://127.0.0.1:%d", p1);
    snprintf(da, sizeof da, "tcp://127.0.0.1:%d", p2);
    snprintf(la, sizeof la, "tcp://127.0.0.1:%d", p3);
    pid_t relayd = fork();
    if (relayd == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 1);
        dup2(null, 2);
        execlp("lttng-relayd", "lttng-relayd", "-C", ca, "-D", da, "-L", la, "-o", rout,
               (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100 && relayd > 0 && !port_open(p1); i++)
        usleep(50000);
    if (relayd < 0 || !port_open(p1)) {
        bench_note(c->r, "relay: lttng-relayd did not start: not measured");
        if (relayd > 0) {
            kill(relayd, SIGKILL);
            waitpid(relayd, NULL, 0);
        }
        return 0;
    }
    snprintf(where, sizeof where, "127.0.0.1:%d:%d", p1, p2);
    snprintf(url, sizeof url, "net://127.0.0.1:%d:%d", p1, p2);
    int bad = 0, reps = c->quick ? 1 : 3;
    unsigned long long n = c->quick ? 400000 : 20000000;
    char nn[32], o[4096];
    snprintf(nn, sizeof nn, "%llu", n / 2);
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < 3; k++) {
            bench_lttng_session ls;
            env_reset();
            rm_tree(c, out);
            rm_tree(c, rout);
            int rc;
            if (k < 2) {
                const char *create[] = {"create", "rel", k ? "--relayd" : "-o",
                                        k ? where : out, NULL};
                rc = fdr_cmd(c->bindir, rundir, create);
                if (!rc)
                    rc = bench_fdr(c->bindir, rundir, "enable", "rel", "bench:*", NULL,
                                   NULL);
                if (!rc)
                    rc = bench_fdr(c->bindir, rundir, "start", "rel", NULL, NULL, NULL);
                setenv("FDR_RUNDIR", rundir, 1);
            } else {
                if (!c->lttng)
                    continue;
                ls = (bench_lttng_session){
                    .defaults = 1, .events = "bench_lttng:two_ints", .url = url};
                snprintf(ls.name, sizeof ls.name, "fdr-bench-relay-%d-%d", (int)getpid(),
                         r);
                char why[256];
                rc = bench_lttng_begin(&ls, why, sizeof why);
                if (rc)
                    fprintf(stderr, "fdr-bench: lttng streaming session: %s\n", why);
            }
            long fdrd = bench_pid_file(rundir);
            double cpu0 = k < 2 ? bench_cpu_s(fdrd) : 0;
            uint64_t t0 = now_ns();
            const char *em[] = {"emit", "two_ints", "2", nn, "0", NULL};
            double prog_ns = -1;
            if (!rc &&
                (rc = run_load(c, k < 2 ? "fdr" : "lttng", em, o, sizeof o, NULL)) == 0)
                prog_ns = out_value(o, "elapsed_ns");
            env_reset();
            if (k < 2)
                rc |= bench_fdr(c->bindir, rundir, "destroy", "rel", NULL, NULL, NULL);
            else {
                long long d;
                char why[256];
                bench_lttng_end(&ls, &d, why, sizeof why);
            }
            double wall = (double)(now_ns() - t0);
            double cpu = k < 2 ? bench_cpu_s(fdrd) - cpu0 : -1;
            stream_bytes = 0;
            nftw(k ? rout : out, add_stream, 16, FTW_PHYS);
            if (rc || prog_ns <= 0 || !stream_bytes) {
                fprintf(stderr, "  relay %s: run %d not measured: %s\n", names[k], r + 1,
                        rc             ? "a command failed (its message above)"
                        : prog_ns <= 0 ? "the program printed no elapsed_ns"
                                       : "no stream bytes on disk");
                bad++;
                continue;
            }
            double mb = (double)stream_bytes / 1e6;
            bench_extra_add(c->r, "relay", names[k], "events_per_s", "events_per_s",
                            (double)n * 1e9 / prog_ns);
            bench_extra_add(c->r, "relay", names[k], "end_to_end", "MB_per_s",
                            mb * 1e9 / wall);
            if (cpu >= 0)
                bench_extra_add(c->r, "relay", names[k], "fdrd_cpu_per_MB", "ms",
                                cpu * 1e3 / mb);
            fprintf(stderr,
                    "  relay %s: %.3g events/s in the program, %.1f MB in %.0f ms end to "
                    "end (%.1f MB/s), %.2f ms of fdrd CPU per MB\n",
                    names[k], (double)n * 1e9 / prog_ns, mb, wall / 1e6, mb * 1e9 / wall,
                    cpu >= 0 ? cpu * 1e3 / mb : 0);
        }
    env_reset();
    bench_fdrd_stop(rundir);
    kill(relayd, SIGTERM);
    waitpid(relayd, NULL, 0);
    rm_tree(c, out);
    rm_tree(c, rout);
    bench_note(
        c->r,
        "relay: one program, 2 threads, %llu two_ints events as fast as it can, into "
        "fdrd to local disk, through fdrd to lttng-relayd on loopback, and LTTng-UST "
        "streaming to the same relayd (per-UID, its defaults)",
        n);
    return bad;
}

int bench_sections_run(const bench_sections_ctx *c)
{
    static const struct {
        const char *name;
        int (*run)(const bench_sections_ctx *);
    } sections[] = {{"sustained", sustained_and_size},
                    {"startup", startup},
                    {"memory", memory},
                    {"snapshot", snapshot},
                    {"snapshot", snapshot_busy},
                    {"print", print_speed},
                    {"daemon", daemon_rows},
                    {"threads_1000", thousand_threads},
                    {"relay", relay_rows},
                    {"scope", bench_scope}};
    int bad = 0;
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++) {
        if (c->only && strcmp(c->only, sections[i].name) != 0)
            continue;
        /* Not in the quick run (the bench-quick test): 1,000 threads, a
         * relayd of its own and the scope take long and measure nothing a
         * test checks. */
        if (c->quick && !c->only &&
            (!strcmp(sections[i].name, "threads_1000") ||
             !strcmp(sections[i].name, "relay") || !strcmp(sections[i].name, "scope")))
            continue;
        fprintf(stderr, "sections: %s\n", sections[i].name);
        /* Each section starts from the bench's own environment: a variable
         * one leaves set (threads_1000's FDR_DAEMON=0) kept the relay and
         * scope programs away from fdrd. */
        env_reset();
        if (sections[i].run(c) != 0) {
            /* The exit status says a row is missing; this line says which. */
            fprintf(stderr, "sections: %s: not measured (its lines above say why)\n",
                    sections[i].name);
            if (c->failed) {
                size_t n = strlen(c->failed);
                snprintf(c->failed + n, c->failed_cap - n, "%s%s", n ? ", " : "",
                         sections[i].name);
            }
            bad++;
        }
    }
    return bad;
}
