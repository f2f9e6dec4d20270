/* SPDX-License-Identifier: MIT */
/*
 * fdr-bench-load-{none,fdr,lttng}: the small programs behind the
 * process-level sections of fdr-bench (sustained recording, start-up,
 * memory, trace size, snapshot). One source, built three times:
 *   LOAD_FDR    events through fdr_trace() (libfdr, embedded mode: the
 *               environment chooses output and mode, as for a user)
 *   LOAD_LTTNG  events through LTTng-UST tracepoints, the probes linked
 *               into the executable (static tracepoint linkage), so
 *               liblttng-ust registers with lttng-sessiond before main()
 *   neither     no tracer: the baseline
 * The driver (sections.c) runs them with a fresh trace directory or LTTng
 * session and reads what they print and what they recorded.
 *
 * Commands (one per run; every result on stdout as "key value" lines):
 *   startup              records one two_ints event as the first statement
 *                        of main(), then prints "first_ns <CLOCK_MONOTONIC>"
 *                        (the driver took the time just before fork) and
 *                        "enabled <0|1>" (LTTng: the tracepoint was enabled
 *                        by then, i.e. the event was recorded)
 *   emit W T N R         T threads emit N events in all of workload W
 *                        (two_ints or int_double_string), each at R events
 *                        per second (0: as fast as possible), from a common
 *                        start; prints "elapsed_ns" (fdr: including
 *                        fdr_flush(), the data is on disk) and "emitted"
 *   memory T E           T threads each emit E two_ints events, then all
 *                        wait while main() reads VmRSS: "rss_kb <kB>"
 *   snapshot T E R DIR   (fdr) T threads each emit E events and wait;
 *                        main() takes R snapshots into DIR: "snap_ns" lines
 *   snapshot-busy T R DIR (fdr) T threads record without pause while main()
 *                        takes R snapshots into DIR: "snap_ns" lines
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#if defined(LOAD_FDR)
#include <fdr/fdr.h>
#if defined(FDR_BENCH_HAVE_SNAPSHOT)
#include <fdr/flight.h>
#endif
#define EMIT_TWO_INTS(a, b) fdr_trace(bench, two_ints, "a=%d b=%d", a, b)
#define EMIT_IDS(i, d, s) fdr_trace(bench, int_double_string, "i=%d d=%f s=%s", i, d, s)
#define TRACER_ENABLED() 1
#elif defined(LOAD_LTTNG)
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng/tp.h"
#define EMIT_TWO_INTS(a, b) lttng_ust_tracepoint(bench_lttng, two_ints, a, b)
#define EMIT_IDS(i, d, s) lttng_ust_tracepoint(bench_lttng, int_double_string, i, d, s)
#define TRACER_ENABLED() (lttng_ust_tracepoint_enabled(bench_lttng, two_ints) != 0)
#else
static volatile int sink;
#define EMIT_TWO_INTS(a, b) (sink = (a) + (b))
#define EMIT_IDS(i, d, s) (sink = (i) + (int)(d) + (s)[0])
#define TRACER_ENABLED() 0
#endif

/* 16 bytes, as the workload says; shared with fdr-bench. */
static const char *volatile load_str = "flight-recorder!";

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct job {
    int ids;     /* workload int_double_string */
    uint64_t n;  /* events of this thread */
    double rate; /* per second, 0 = unpaced */
    uint64_t t0; /* common start */
    pthread_barrier_t *start, *done, *release;
} job;

/* Emits j->n events; when paced, checks the clock every 64 events and
 * spins until the schedule allows the next 64 (bursts of 64 at most). */
static void emit(job *j)
{
    const char *s = load_str;
    uint64_t i = 0;
    while (i < j->n) {
        uint64_t chunk = j->n - i < 64 ? j->n - i : 64;
        if (j->rate > 0) {
            uint64_t due = j->t0 + (uint64_t)((double)i * 1e9 / j->rate);
            while (now_ns() < due)
                ;
        }
        for (uint64_t k = i; k < i + chunk; k++) {
            if (j->ids)
                EMIT_IDS((int)k, (double)k * 0.5, s);
            else
                EMIT_TWO_INTS((int)k, (int)(k * 7u));
        }
        i += chunk;
    }
}

static void *thread_main(void *arg)
{
    job *j = arg;
    pthread_barrier_wait(j->start);
    emit(j);
    if (j->done != NULL) {
        pthread_barrier_wait(j->done);    /* main measures now */
        pthread_barrier_wait(j->release); /* then lets us exit */
    }
    return NULL;
}

/* Runs T threads of `proto` each; main() waits for them at `done` (if
 * hold) and calls measure(), then releases them. Returns the ns from the
 * common start until every thread finished emitting. */
#define MAX_THREADS 2000
static uint64_t run_threads(int t, job proto, int hold, void (*measure)(void *),
                            void *marg)
{
    static pthread_t th[MAX_THREADS];
    static job jobs[MAX_THREADS];
    pthread_barrier_t start, done, release;
    pthread_attr_t attr; /* small stacks: the memory section runs 1,000 */
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    pthread_barrier_init(&start, NULL, (unsigned)t + 1);
    pthread_barrier_init(&done, NULL, (unsigned)t + 1);
    pthread_barrier_init(&release, NULL, (unsigned)t + 1);
    for (int k = 0; k < t; k++) {
        jobs[k] = proto;
        jobs[k].start = &start;
        jobs[k].done = hold ? &done : NULL;
        jobs[k].release = &release;
        if (pthread_create(&th[k], &attr, thread_main, &jobs[k]) != 0) {
            fprintf(stderr, "fdr-bench-load: pthread_create failed\n");
            exit(1);
        }
    }
    uint64_t t0 = now_ns();
    for (int k = 0; k < t; k++)
        jobs[k].t0 = t0;
    pthread_barrier_wait(&start); /* orders the t0 stores before the reads */
    uint64_t elapsed = 0;
    if (hold) {
        pthread_barrier_wait(&done);
        elapsed = now_ns() - t0;
        measure(marg);
        pthread_barrier_wait(&release);
    }
    for (int k = 0; k < t; k++)
        pthread_join(th[k], NULL);
    if (!hold)
        elapsed = now_ns() - t0;
    return elapsed;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kb;
}

/* Pss of process pid (smaps_rollup), kB; -1 when unknown. */
static long pss_kb(long pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/smaps_rollup", pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "Pss: %ld", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kb;
}

/* Pss of this process's children: fdr's drain helper process, the only
 * child the load program has (fdr-discard); 0 when there is none. */
static long children_pss_kb(void)
{
    char line[4096];
    long sum = 0;
    FILE *f = fopen("/proc/self/task/self/children", "r");
    if (f == NULL) {
        snprintf(line, sizeof line, "/proc/self/task/%ld/children", (long)getpid());
        f = fopen(line, "r");
    }
    if (f != NULL && fgets(line, sizeof line, f) != NULL)
        for (char *p = line, *end; *p; p = end) {
            long pid = strtol(p, &end, 10);
            if (end == p)
                break;
            long kb = pss_kb(pid);
            sum += kb > 0 ? kb : 0;
        }
    if (f != NULL)
        fclose(f);
    return sum;
}

static void print_rss(void *arg)
{
    (void)arg;
    printf("rss_kb %ld\npss_kb %ld\nhelper_pss_kb %ld\n", rss_kb(),
           pss_kb((long)getpid()), children_pss_kb());
}

#if defined(LOAD_FDR) && defined(FDR_BENCH_HAVE_SNAPSHOT)
typedef struct snap_args {
    int reps;
    const char *dir;
} snap_args;

static void take_snapshots(void *arg)
{
    snap_args *a = arg;
    for (int r = 0; r < a->reps; r++) {
        uint64_t t0 = now_ns();
        int rc = fdr_snapshot(a->dir);
        uint64_t t1 = now_ns();
        if (rc != 0)
            printf("error fdr_snapshot: %s\n", fdr_strerror(rc));
        else
            printf("snap_ns %llu\n", (unsigned long long)(t1 - t0));
    }
}

static int busy_stop;

static void *busy_main(void *arg)
{
    (void)arg;
    for (int k = 0; !__atomic_load_n(&busy_stop, __ATOMIC_RELAXED); k++)
        EMIT_TWO_INTS(k, k * 7);
    return NULL;
}

/* Snapshots while T threads record without pause: on a machine with fewer
 * cores than T, most writers are preempted, some inside their section. */
static int snapshot_busy(int t, snap_args *a)
{
    pthread_t th[256];
    for (int k = 0; k < t; k++)
        if (pthread_create(&th[k], NULL, busy_main, NULL) != 0) {
            fprintf(stderr, "fdr-bench-load: pthread_create failed\n");
            exit(1);
        }
    struct timespec settle = {0, 200000000}; /* every thread has recorded */
    nanosleep(&settle, NULL);
    take_snapshots(a);
    __atomic_store_n(&busy_stop, 1, __ATOMIC_RELAXED);
    for (int k = 0; k < t; k++)
        pthread_join(th[k], NULL);
    return 0;
}
#endif

static int usage(void)
{
    fprintf(stderr, "usage: fdr-bench-load startup | emit W T N R | memory T E"
                    " | snapshot T E R DIR | snapshot-busy T R DIR\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "startup") == 0) {
        EMIT_TWO_INTS(argc, 7);
        uint64_t t = now_ns();
        printf("first_ns %llu\nenabled %d\n", (unsigned long long)t, TRACER_ENABLED());
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "emit") == 0) {
        int t = atoi(argv[3]);
        uint64_t n = strtoull(argv[4], NULL, 10);
        if (t < 1 || t > 256)
            return usage();
        job proto = {.ids = strcmp(argv[2], "int_double_string") == 0,
                     .n = n / (uint64_t)t,
                     .rate = atof(argv[5])};
        uint64_t elapsed = run_threads(t, proto, 0, NULL, NULL);
#if defined(LOAD_FDR)
        /* Until the events are in the stream files: the flush is part of
         * recording to disk. */
        uint64_t f0 = now_ns();
        int rc = fdr_flush();
        if (rc != 0 && rc != -ENOTSUP)
            printf("error fdr_flush: %s\n", fdr_strerror(rc));
        elapsed += now_ns() - f0;
#endif
        printf("elapsed_ns %llu\nemitted %llu\n", (unsigned long long)elapsed,
               (unsigned long long)(proto.n * (uint64_t)t));
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "memory") == 0) {
        int t = atoi(argv[2]);
        if (t < 0 || t > MAX_THREADS)
            return usage();
        job proto = {.n = strtoull(argv[3], NULL, 10)};
        if (t == 0)
            print_rss(NULL);
        else
            run_threads(t, proto, 1, print_rss, NULL);
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "snapshot") == 0) {
#if defined(LOAD_FDR) && defined(FDR_BENCH_HAVE_SNAPSHOT)
        int t = atoi(argv[2]);
        if (t < 1 || t > 256)
            return usage();
        job proto = {.n = strtoull(argv[3], NULL, 10)};
        snap_args sa = {atoi(argv[4]), argv[5]};
        run_threads(t, proto, 1, take_snapshots, &sa);
        return 0;
#else
        printf("unsupported snapshot: no fdr_snapshot() in this build\n");
        return 0;
#endif
    }
    if (argc == 5 && strcmp(argv[1], "snapshot-busy") == 0) {
#if defined(LOAD_FDR) && defined(FDR_BENCH_HAVE_SNAPSHOT)
        int t = atoi(argv[2]);
        snap_args sa = {atoi(argv[3]), argv[4]};
        if (t < 1 || t > 256)
            return usage();
        return snapshot_busy(t, &sa);
#else
        printf("unsupported snapshot: no fdr_snapshot() in this build\n");
        return 0;
#endif
    }
    return usage();
}
