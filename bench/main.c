/* SPDX-License-Identifier: MIT */
/*
 * fdr-bench: per-event cost of fdr side by side with a physical floor,
 * LTTng-UST and barectf, on the same machine in the same run, as ratios.
 *
 * DESIGN. One executable, two roles.
 *   driver (default)  sets up an LTTng session (lttng/session.c), then runs
 *                     measurement processes (this same executable with
 *                     --worker) one after the other, alternating the fdr
 *                     mode: discard, overwrite, discard, overwrite, ...
 *                     (--procs rounds). It merges their samples, prints the
 *                     table and writes the JSON file.
 *   worker            sets up every adapter (floor, lttng-ust, barectf,
 *                     fdr in the mode of its environment) and runs all of
 *                     them interleaved with benchfn (A B C D A B C D ...),
 *                     printing "sample <tracer> <workload> <ns>" lines.
 * The fdr mode is fixed when a process starts, hence one process per mode;
 * floor, lttng-ust and barectf run in every process, so each fdr column is
 * measured in the same processes as the columns it is divided by, and
 * process-to-process noise (page placement, ASLR, frequency) is spread over
 * all columns. The LTTng session is started before any worker exists
 * because liblttng-ust registers with the session daemon when loaded.
 *
 * Nothing is pinned; run on an idle machine. --quick is for the test
 * suite: it checks that everything runs, its numbers mean little.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adapters.h"
#include "benchfn.h"
#include "lttng/session.h"
#include "report.h"
#include "sections.h"

#ifndef FDR_BENCH_RESULTS_DEFAULT
#define FDR_BENCH_RESULTS_DEFAULT "bench/results/latest.json"
#endif

/* 16 bytes, the int_double_string (the same in load.c). */
const char *bench_str = "flight-recorder!";

typedef struct options {
    int worker;
    int quick;
    int no_lttng;
    int keep_traces;
    int lttng_overwrite;
    int only_fdr;    /* worker: floor and fdr columns only */
    int no_sections; /* per-event section only */
    const char *section; /* --section NAME: that process-level section only */
    int no_per_event;
    int strict;      /* unaccounted events fail the run */
    unsigned long long iters;
    unsigned reps;  /* measured repetitions per worker process */
    unsigned procs; /* rounds of (discard, overwrite) worker processes */
    const char *out;
    const char *subbuf;
    const char *nsubbuf;
} options;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: fdr-bench [options]\n"
        "  --quick            small run for the test suite (JSON default:\n"
        "                     ./bench-quick.json)\n"
        "  --out FILE         JSON output (default %s)\n"
        "  --iters N          events per batch (default 1000000)\n"
        "  --reps R           batches per tracer per process (default 5)\n"
        "  --procs P          rounds of processes, one per fdr mode (default 3)\n"
        "  --no-lttng         skip LTTng-UST (no session daemon touched)\n"
        "  --lttng-subbuf S   sub-buffer size (default 4M)\n"
        "  --lttng-nsubbuf N  sub-buffers per CPU (default 4)\n"
        "  --lttng-overwrite  LTTng channel in overwrite mode (default discard)\n"
        "  --keep-traces      keep the trace directory under /tmp\n"
        "  --section NAME     only that process-level section (sustained, startup,\n"
        "                     memory, snapshot, print, daemon, threads_1000, relay)\n"
        "  --no-sections      per-event section only (no sustained, startup,\n"
        "                     memory, size, snapshot)\n"
        "  --no-per-event     the other sections only\n"
        "  --strict           fail when emitted != recorded + discarded\n"
        "                     (otherwise a note in the output)\n",
        FDR_BENCH_RESULTS_DEFAULT);
}

static int parse_args(int argc, char **argv, options *o)
{
    *o = (options){.iters = 1000000, .reps = 5, .procs = 3,
                   .subbuf = "4M", .nsubbuf = "4"};
    int iters_set = 0, reps_set = 0, procs_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
#define NEED_VALUE() do { if (v == NULL) { fprintf(stderr, "%s: missing value\n", a); return -1; } i++; } while (0)
        if (strcmp(a, "--worker") == 0) o->worker = 1;
        else if (strcmp(a, "--quick") == 0) o->quick = 1;
        else if (strcmp(a, "--no-lttng") == 0) o->no_lttng = 1;
        else if (strcmp(a, "--keep-traces") == 0) o->keep_traces = 1;
        else if (strcmp(a, "--lttng-overwrite") == 0) o->lttng_overwrite = 1;
        else if (strcmp(a, "--only-fdr") == 0) o->only_fdr = 1;
        else if (strcmp(a, "--no-sections") == 0) o->no_sections = 1;
        else if (strcmp(a, "--section") == 0) { NEED_VALUE(); o->section = v; }
        else if (strcmp(a, "--no-per-event") == 0) o->no_per_event = 1;
        else if (strcmp(a, "--strict") == 0) o->strict = 1;
        else if (strcmp(a, "--out") == 0) { NEED_VALUE(); o->out = v; }
        else if (strcmp(a, "--lttng-subbuf") == 0) { NEED_VALUE(); o->subbuf = v; }
        else if (strcmp(a, "--lttng-nsubbuf") == 0) { NEED_VALUE(); o->nsubbuf = v; }
        else if (strcmp(a, "--iters") == 0) { NEED_VALUE(); o->iters = strtoull(v, NULL, 10); iters_set = 1; }
        else if (strcmp(a, "--reps") == 0) { NEED_VALUE(); o->reps = (unsigned)strtoul(v, NULL, 10); reps_set = 1; }
        else if (strcmp(a, "--procs") == 0) { NEED_VALUE(); o->procs = (unsigned)strtoul(v, NULL, 10); procs_set = 1; }
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { usage(stdout); exit(0); }
        else { fprintf(stderr, "unknown option %s\n", a); usage(stderr); return -1; }
#undef NEED_VALUE
    }
    if (o->quick) {
        if (!iters_set) o->iters = 20000;
        if (!reps_set) o->reps = 3;
        if (!procs_set) o->procs = 1;
    }
    if (o->out == NULL)
        o->out = o->quick ? "bench-quick.json" : FDR_BENCH_RESULTS_DEFAULT;
    if (o->iters == 0 || o->reps == 0 || o->procs == 0) {
        fprintf(stderr, "--iters, --reps and --procs must be > 0\n");
        return -1;
    }
    return 0;
}

/* ---- worker ------------------------------------------------------------ */

static int worker_main(const options *o)
{
    bench_adapter *all[] = {&bench_floor_adapter, &bench_lttng_adapter,
                            &bench_barectf_adapter, &bench_fdr_adapter};
    enum { NADAPTERS = sizeof all / sizeof all[0] };
    benchfn_case cases[NADAPTERS * BENCH_NWORKLOADS];
    const bench_adapter *owner[NADAPTERS * BENCH_NWORKLOADS];
    int workload[NADAPTERS * BENCH_NWORKLOADS];
    size_t ncases = 0;
    int ready[NADAPTERS] = {0};

    for (size_t k = 0; k < NADAPTERS; k++) {
        if (o->only_fdr && all[k] != &bench_floor_adapter &&
            all[k] != &bench_fdr_adapter)
            continue;
        char why[512] = "";
        int rc = all[k]->setup(all[k], why, sizeof why);
        if (rc != 0) {
            printf("skip %s %s\n", all[k]->tracer, why);
            continue;
        }
        ready[k] = 1;
        for (int w = 0; w < BENCH_NWORKLOADS; w++) {
            cases[ncases] = (benchfn_case){all[k]->tracer, all[k]->fn[w], NULL};
            owner[ncases] = all[k];
            workload[ncases] = w;
            ncases++;
        }
    }
    fflush(stdout);

    benchfn_params p = {.iters = o->iters, .reps = o->reps, .warmups = 1};
    double *res = malloc(sizeof *res * p.reps * ncases);
    if (res == NULL || benchfn_run(cases, ncases, &p, res) != 0) {
        fprintf(stderr, "fdr-bench worker: benchfn_run failed\n");
        free(res);
        return 1;
    }
    for (unsigned rep = 0; rep < p.reps; rep++)
        for (size_t c = 0; c < ncases; c++)
            printf("sample %s %s %.6f\n", owner[c]->tracer,
                   bench_workload_names[workload[c]], res[rep * ncases + c]);
    for (size_t k = 0; k < NADAPTERS; k++)
        if (ready[k] && all[k]->report != NULL)
            all[k]->report(all[k], stdout);
    free(res);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* ---- driver ------------------------------------------------------------ */

static const char *dirname_of(const char *path)
{
    static char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    return dir;
}

/* --quick sanity: every column has a positive number for every workload,
 * and enabled events cost more than disabled ones (they did something). */
static int check_per_event(const bench_results *r, int lttng)
{
    int bad = 0;
    for (int t = 0; t < BENCH_NTRACERS; t++) {
        if (t == BENCH_T_LTTNG && !lttng)
            continue;
        for (int w = 0; w < BENCH_NWORKLOADS; w++) {
            benchfn_stats s = benchfn_stats_of(r->s[t][w].v, r->s[t][w].n);
            if (s.n == 0 || !(s.median > 0)) {
                fprintf(stderr, "fdr-bench: no per-event number for %s %s\n",
                        bench_tracer_names[t], bench_workload_names[w]);
                bad = 1;
            }
        }
    }
    return bad;
}

static volatile sig_atomic_t interrupted;

/* Why the run exits 1, repeated as its last line: the lines that said so
 * during the run are above the tables, out of sight. */
static char why_failed[1024];

static void failed_because(int *failed, const char *what)
{
    size_t n = strlen(why_failed);
    if (!strstr(why_failed, what))
        snprintf(why_failed + n, sizeof why_failed - n, "%s%s", n ? "; " : "", what);
    *failed = 1;
}

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* Runs one worker with FDR_MODE=mode; output captured into buf. */
static int run_worker(const char *self, const options *o, const char *mode,
                      const char *fdr_out, const char *tp_path, char *buf,
                      size_t bufsz)
{
    char iters[32], reps[32];
    snprintf(iters, sizeof iters, "%llu", o->iters);
    snprintf(reps, sizeof reps, "%u", o->reps);
    int printed = strcmp(mode, "printed") == 0;
    setenv("FDR_MODE", printed ? "overwrite" : mode, 1);
    setenv("FDR_EVENTS", "-bench:disabled", 1);
    if (printed) {
        /* Issue 5: every event recorded and printed, the text thrown away. */
        setenv("FDR_TRACES", "bench:two_ints,bench:int_double_string", 1);
        setenv("FDR_TRACE_FILE", "/dev/null", 1);
    } else {
        unsetenv("FDR_TRACES");
        unsetenv("FDR_TRACE_FILE");
    }
    if (strcmp(mode, "discard") == 0)
        setenv("FDR_OUTPUT", fdr_out, 1);
    else
        unsetenv("FDR_OUTPUT");
    /* "discard" with FDR_RUNDIR set by the caller: the fdr column records
     * into a started fdrd trace instead of FDR_OUTPUT. */
    if (getenv("FDR_RUNDIR") != NULL) {
        unsetenv("FDR_OUTPUT");
        setenv("FDR_BENCH_ROUTE_WAIT_MS", "300", 1);
    } else
        unsetenv("FDR_BENCH_ROUTE_WAIT_MS");
    if (tp_path != NULL)
        setenv("FDR_BENCH_LTTNG_TP", tp_path, 1);
    else
        unsetenv("FDR_BENCH_LTTNG_TP");
    setenv("LTTNG_UST_REGISTER_TIMEOUT", "10000", 1);
    const char *argv[] = {self, "--worker", "--iters", iters, "--reps", reps,
                          printed ? "--only-fdr" : NULL, NULL};
    return bench_run_cmd(argv, buf, bufsz);
}

static void merge_worker_output(bench_results *r, char *buf, FILE *log)
{
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char tracer[64], workload[64];
        double ns;
        if (sscanf(line, "sample %63s %63s %lf", tracer, workload, &ns) == 3) {
            if (bench_results_add(r, tracer, workload, ns) != 0)
                fprintf(log, "  ? %s\n", line);
        } else if (strncmp(line, "skip ", 5) == 0) {
            char *name = line + 5, *why = strchr(name, ' ');
            if (why != NULL) {
                *why++ = '\0';
                int t = bench_tracer_index(name);
                if (t >= 0)
                    snprintf(r->note[t], sizeof r->note[t], "%s", why);
            }
        } else {
            fprintf(log, "  %s\n", line);
        }
    }
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

static int driver_main(const options *o)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        perror("readlink /proc/self/exe");
        return 1;
    }
    self[n] = '\0';

    char tmpdir[] = "/tmp/fdr-bench-XXXXXX";
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    char fdr_out[PATH_MAX];
    snprintf(fdr_out, sizeof fdr_out, "%s/fdr", tmpdir);
    mkdir(fdr_out, 0777);

    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    bench_results r = {0};

    /* LTTng: probe library next to us, session before any worker. */
    char tp_path[PATH_MAX];
    const char *env_tp = getenv("FDR_BENCH_LTTNG_TP");
    if (env_tp != NULL && env_tp[0] != '\0')
        snprintf(tp_path, sizeof tp_path, "%s", env_tp);
    else {
        snprintf(tp_path, sizeof tp_path, "%s", self);
        char *slash = strrchr(tp_path, '/');
        snprintf(slash + 1, sizeof tp_path - (size_t)(slash + 1 - tp_path),
                 "libfdr-bench-lttng-tp.so");
    }
    bench_lttng_session ls = {0};
    const char *use_tp = NULL;
    if (o->no_lttng) {
        snprintf(r.note[BENCH_T_LTTNG], sizeof r.note[0], "--no-lttng");
    } else if (access(tp_path, R_OK) != 0) {
        snprintf(r.note[BENCH_T_LTTNG], sizeof r.note[0],
                 "probe library %.200s missing", tp_path);
    } else {
        snprintf(ls.name, sizeof ls.name, "fdr-bench-%ld-%ld", (long)getpid(),
                 (long)time(NULL));
        snprintf(ls.outdir, sizeof ls.outdir, "%s/lttng", tmpdir);
        snprintf(ls.subbuf, sizeof ls.subbuf, "%s", o->subbuf);
        snprintf(ls.nsubbuf, sizeof ls.nsubbuf, "%s", o->nsubbuf);
        ls.overwrite = o->lttng_overwrite;
        char why[512] = "";
        if (bench_lttng_begin(&ls, why, sizeof why) == 0) {
            use_tp = tp_path;
            fprintf(stderr, "lttng: session %s (%s x %s per CPU, per-UID, %s)%s\n",
                    ls.name, ls.subbuf, ls.nsubbuf,
                    ls.overwrite ? "overwrite" : "discard",
                    ls.our_sessiond ? ", started lttng-sessiond" : "");
        } else {
            snprintf(r.note[BENCH_T_LTTNG], sizeof r.note[0], "%s", why);
            fprintf(stderr, "lttng: unavailable: %s\n", why);
        }
    }

    static char buf[1 << 20];
    static const char *const modes[] = {"discard", "overwrite"};
    int failed = 0;

    /* Through fdrd (issue 13): a discard trace started before the worker. */
    char rundir[PATH_MAX], dout[PATH_MAX];
    snprintf(rundir, sizeof rundir, "%s/fdrd-run", tmpdir);
    snprintf(dout, sizeof dout, "%s/fdrd-out", tmpdir);
    mkdir(rundir, 0700);
    int have_fdrd =
        !o->no_per_event &&
        bench_fdr(dirname_of(self), rundir, "create", "perevent", "-o", dout, NULL) == 0 &&
        bench_fdr(dirname_of(self), rundir, "enable", "perevent", "bench:two_ints",
                "bench:int_double_string", NULL) == 0;
    /* And 1, 2, 4 flight-recorder traces at once (nothing drained: the
     * cost of recording into k traces, against the embedded overwrite). */
    static const char *const fr[] = {"fr1", "fr2", "fr3", "fr4"};
    for (int i = 0; i < 4 && have_fdrd; i++)
        have_fdrd =
            bench_fdr(dirname_of(self), rundir, "create", fr[i], "--overwrite", "-o", dout) ==
                0 &&
            bench_fdr(dirname_of(self), rundir, "enable", fr[i], "bench:two_ints",
                    "bench:int_double_string", NULL) == 0;
    if (!o->no_per_event && !have_fdrd)
        bench_note(&r, "through fdrd: not measured: fdrd could not be started or "
                       "the traces not made (the 'fdr-bench: fdr ...' lines above)");
    bench_results dr = {0}, dk[3];
    memset(dk, 0, sizeof dk);
    for (unsigned round = 0; round < o->procs && !interrupted && !o->no_per_event;
         round++) {
        for (size_t m = 0; m < 2 && !interrupted; m++) {
            fprintf(stderr, "round %u/%u: worker FDR_MODE=%s\n", round + 1,
                    o->procs, modes[m]);
            int rc = run_worker(self, o, modes[m], fdr_out, use_tp, buf,
                                sizeof buf);
            merge_worker_output(&r, buf, stderr);
            if (rc != 0) {
                fprintf(stderr, "worker exited with %d\n", rc);
                failed_because(&failed, "a per-event worker failed (its lines above)");
            }
        }
        /* Through fdrd: the discard trace alone, then 1, 2, 4 flight
         * recorders (k = 0, 1, 2 of dk). */
        for (int k = -1; k < 3 && have_fdrd && !interrupted; k++) {
            const char *bin = dirname_of(self);
            if (k < 0)
                bench_fdr(bin, rundir, "start", "perevent", NULL, NULL, NULL);
            /* k = 0: start fr1; 1: fr2; 2: fr3 and fr4 */
            for (int i = k; k >= 0 && i < (k == 2 ? 4 : k + 1); i++)
                bench_fdr(bin, rundir, "start", fr[i], NULL, NULL, NULL);
            static const char *const what[] = {"the discard trace", "1 flight trace",
                                               "2 flight traces", "4 flight traces"};
            fprintf(stderr, "round %u/%u: worker through fdrd (%s)\n", round + 1,
                    o->procs, what[k + 1]);
            setenv("FDR_RUNDIR", rundir, 1);
            int rc = run_worker(self, o, k < 0 ? "discard" : "overwrite", fdr_out, NULL,
                                buf, sizeof buf);
            unsetenv("FDR_RUNDIR");
            merge_worker_output(k < 0 ? &dr : &dk[k], buf, stderr);
            if (rc != 0) {
                fprintf(stderr, "fdrd worker exited with %d\n", rc);
                failed_because(&failed, "a worker through fdrd failed (its lines above)");
            }
            if (k < 0)
                bench_fdr(bin, rundir, "stop", "perevent", NULL, NULL, NULL);
        }
        for (int i = 0; i < 4 && have_fdrd; i++)
            bench_fdr(dirname_of(self), rundir, "stop", fr[i], NULL, NULL, NULL);
    }
    if (have_fdrd) {
        bench_fdr(dirname_of(self), rundir, "destroy", "perevent", NULL, NULL, NULL);
        for (int i = 0; i < 4; i++)
            bench_fdr(dirname_of(self), rundir, "destroy", fr[i], NULL, NULL, NULL);
    }
    /* Stopped whether or not the traces could be made: the first `fdr
     * create` started it (a failed one left it running after the bench). */
    if (!o->no_per_event)
        bench_fdrd_stop(rundir);
    if (have_fdrd) {
        for (int w = BENCH_W_TWO_INTS; w < BENCH_NWORKLOADS; w++) {
            static const char *const kn[] = {"fdr-daemon-1-trace", "fdr-daemon-2-traces",
                                             "fdr-daemon-4-traces"};
            double med[3] = {0};
            for (int k = 0; k < 3; k++) {
                const bench_samples *v = &dk[k].s[BENCH_T_FDR_OVERWRITE][w];
                for (size_t i = 0; i < v->n; i++)
                    bench_extra_add(&r, "through_fdrd", kn[k], bench_workload_names[w],
                                    "ns", v->v[i]);
                med[k] = benchfn_stats_of(v->v, v->n).median;
            }
            benchfn_stats e = benchfn_stats_of(r.s[BENCH_T_FDR_OVERWRITE][w].v,
                                               r.s[BENCH_T_FDR_OVERWRITE][w].n);
            if (med[0] > 0 && e.n)
                bench_note(&r,
                           "through fdrd, %s, flight-recorder traces: %.2f ns into 1 "
                           "(%.3fx the embedded overwrite %.2f), %.2f into 2 (%.3fx 1), "
                           "%.2f into 4 (%.3fx 1)",
                           bench_workload_names[w], med[0], med[0] / e.median, e.median,
                           med[1], med[1] / med[0], med[2], med[2] / med[0]);
        }
        for (int k = 0; k < 3; k++)
            bench_results_free(&dk[k]);
        for (int w = BENCH_W_TWO_INTS; w < BENCH_NWORKLOADS; w++) {
            static const int cols[] = {BENCH_T_FLOOR, BENCH_T_FDR_DISCARD};
            for (int k = 0; k < 2; k++)
                for (size_t i = 0; i < dr.s[cols[k]][w].n; i++)
                    bench_extra_add(&r, "through_fdrd", k ? "fdr-daemon" : "floor",
                                    bench_workload_names[w], "ns",
                                    dr.s[cols[k]][w].v[i]);
            benchfn_stats d = benchfn_stats_of(dr.s[BENCH_T_FDR_DISCARD][w].v,
                                               dr.s[BENCH_T_FDR_DISCARD][w].n);
            benchfn_stats e = benchfn_stats_of(r.s[BENCH_T_FDR_DISCARD][w].v,
                                               r.s[BENCH_T_FDR_DISCARD][w].n);
            if (d.n && e.n)
                bench_note(&r,
                           "through fdrd, %s: %.2f ns per event into a started discard "
                           "trace against %.2f embedded (FDR_OUTPUT, discard): %.3fx",
                           bench_workload_names[w], d.median, e.median,
                           d.median / e.median);
        }
        bench_results_free(&dr);
    }

    /* Events printed (issue 5): one more worker, fdr columns only. */
    if (!interrupted && !o->no_per_event) {
        fprintf(stderr, "printed: worker FDR_MODE=overwrite FDR_TRACES=bench:...\n");
        bench_results pr = {0};
        if (run_worker(self, o, "printed", fdr_out, NULL, buf, sizeof buf) != 0) {
            fprintf(stderr, "printed worker failed\n");
            failed_because(&failed, "the printed-events worker failed");
        }
        merge_worker_output(&pr, buf, stderr);
        for (int w = BENCH_W_TWO_INTS; w < BENCH_NWORKLOADS; w++)
            for (int t = BENCH_T_FLOOR; t <= BENCH_T_FDR_OVERWRITE; t += 2)
                for (size_t i = 0; i < pr.s[t][w].n; i++)
                    bench_extra_add(&r, "printed", bench_tracer_names[t],
                                    bench_workload_names[w], "ns", pr.s[t][w].v[i]);
        bench_results_free(&pr);
    }

    /* What the per-event discard workers recorded (the last one's trace):
     * read back with babeltrace2, and how much the full ring dropped. */
    if (!o->no_per_event && !interrupted) {
        unsigned long long rec, disc;
        if (bench_count_trace(dirname_of(self), fdr_out, &rec, &disc) == 0) {
            size_t len = strlen(r.note[BENCH_T_FDR_DISCARD]);
            snprintf(r.note[BENCH_T_FDR_DISCARD] + len,
                     sizeof r.note[0] - len,
                     "%sper-event trace of the last worker read back: %llu "
                     "recorded, %llu discarded (%.0f%%) at default settings",
                     len ? "; " : "", rec, disc,
                     rec + disc ? 100.0 * (double)disc / (double)(rec + disc) : 0.0);
        } else {
            fprintf(stderr, "fdr-discard per-event trace does not read back\n");
            failed_because(&failed, "the per-event trace does not read back");
        }
    }

    /* Read: the per-event traces go before the sections, whose rows write
     * to the same disk. Kept, their 1.7 GB still waiting to be written
     * back made fdrd's row of the daemon section discard 48 % of its events
     * (and cost 1.8 x the embedded one, whose trace happened to be written
     * below the kernel's background threshold): 6 % and 1.02 x without them. */
    if (!o->keep_traces) {
        nftw(fdr_out, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        nftw(dout, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }

    /* The other sections need the session daemon but not this session
     * (whose events would be recorded twice). */
    pid_t our_sessiond = ls.our_sessiond;
    ls.our_sessiond = 0;
    int lttng_ok = use_tp != NULL;
    if (ls.created) {
        long long discarded = -1;
        char why[512] = "";
        if (bench_lttng_end(&ls, &discarded, why, sizeof why) != 0)
            fprintf(stderr, "lttng: teardown: %s\n", why);
        if (discarded >= 0) {
            size_t len = strlen(r.note[BENCH_T_LTTNG]);
            snprintf(r.note[BENCH_T_LTTNG] + len, sizeof r.note[0] - len,
                     "%sdiscarded events in the session: %lld (%s mode, %s x %s)",
                     len ? "; " : "", discarded,
                     o->lttng_overwrite ? "overwrite" : "discard", o->subbuf,
                     o->nsubbuf);
        }
    }
    if (!o->no_sections && !interrupted) {
        bench_sections_ctx sc = {.bindir = dirname_of(self), .tmpdir = tmpdir,
                                 .quick = o->quick, .lttng = lttng_ok,
                                 .keep_traces = o->keep_traces,
                                 .strict = o->strict, .only = o->section, .r = &r};
        char names[256] = "";
        sc.failed = names;
        sc.failed_cap = sizeof names;
        if (bench_sections_run(&sc) != 0) {
            char what[300];
            snprintf(what, sizeof what, "section(s) not measured: %s", names);
            failed_because(&failed, what);
        }
    }
    if (our_sessiond > 0) {
        bench_lttng_session stop = {.our_sessiond = our_sessiond};
        long long d;
        char why[512] = "";
        if (bench_lttng_end(&stop, &d, why, sizeof why) != 0)
            fprintf(stderr, "lttng: stopping lttng-sessiond: %s\n", why);
    }
    if (o->quick && !o->no_per_event && check_per_event(&r, use_tp != NULL))
        failed_because(&failed, "a per-event column has no number");
    if (o->keep_traces)
        fprintf(stderr, "traces kept in %s\n", tmpdir);
    else
        nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

    printf("fdr-bench: %llu events/batch, %u batches x %u processes per mode%s\n",
           o->iters, o->reps, o->procs, o->quick ? " (--quick)" : "");
    bench_machine_probe(&r.machine);
    bench_machine_print(&r.machine, stdout);
    bench_results_print(&r, stdout);
    int rc = bench_results_write_json(&r, o->out);
    if (rc != 0)
        fprintf(stderr, "writing %s: %s\n", o->out, strerror(-rc));
    else
        printf("\nwrote %s\n", o->out);
    bench_results_free(&r);
    if (interrupted)
        return 130;
    if (failed)
        printf("fdr-bench: exit 1: %s\n", why_failed);
    return (failed || rc != 0) ? 1 : 0;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_args(argc, argv, &o) != 0)
        return 2;
    return o.worker ? worker_main(&o) : driver_main(&o);
}
