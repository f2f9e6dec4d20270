/* SPDX-License-Identifier: MIT */
/* live-prog.c - the program the live-tracing tests (tests/recorder/test-live.py) run.
 *
 *   live-prog basic          a fixed sequence of events on the main thread,
 *                            then the tunables' values on stdout
 *   live-prog threads N      4 threads print N events each, concurrently
 *   live-prog api FILE       runtime control: fdr_trace_set (also "@FILE"),
 *                            fdr_record_set, fdr_tunable_*, fdr_event_list
 *   live-prog bench N        N printed events; ns/event on stdout
 *
 * stdout carries the program's own report, stderr (or FDR_TRACE_FILE) the
 * printed events. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fdr/fdr.h>

static void tunables(const char *when)
{
    printf("%s: batch_size=%lld level=%lld gain=%g ratio=%g\n", when,
           (long long)FDR_TUNABLE(batch_size, 32),
           (long long)FDR_TUNABLE_RANGE(level, 3, 0, 9), FDR_TUNABLE_DOUBLE(gain, 0.5),
           FDR_TUNABLE_DOUBLE_RANGE(ratio, 0.25, 0.0, 1.0));
}

static void sequence(void)
{
    fdr_trace(live, start, "n=%d name=%s", 3, "alpha");
    fdr_trace(live, value, "x=%u ratio=%.3f neg=%d pad=%05d hex=%#010x", 42u, 0.125, -7,
              -42, 0xbeefu);
    fdr_trace(live, skip, "never=%d", 1);
    fdr_trace(live, empty);
    fdr_trace(other, ping, "seq=%llu", 9ULL);
}

static int per_thread;

static void *thread_main(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < per_thread; i++)
        fdr_trace(
            live, thr, "t=%d i=%d pad=%s", t, i,
            "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz");
    return NULL;
}

static void list_one(void *arg, const fdr_event_info_t *e)
{
    (void)arg;
    printf("event %s:%s %s%s\n", e->provider, e->event, e->recorded ? "R" : "-",
           e->printed ? "P" : "-");
}

static void list_tunable(void *arg, const fdr_tunable_info_t *t)
{
    (void)arg;
    if (t->is_double)
        printf("tunable %s=%g def=%g range=%d\n", t->name, t->value, t->def,
               t->has_range);
    else
        printf("tunable %s=%lld def=%lld range=%d\n", t->name, t->value_int, t->def_int,
               t->has_range);
}

static void api(const char *file)
{
    /* Each step: set, print the marker on stdout (flushed), emit a and b. */
    const char *steps[] = {"live:a", "live:*:-live:a", "-live:*", "", NULL};
    char at[4096];
    snprintf(at, sizeof at, "@%s", file);
    steps[3] = at;
    for (int i = 0; steps[i]; i++) {
        int rc = fdr_trace_set(steps[i]);
        fprintf(stderr, "step %d rc=%d\n", i, rc);
        fdr_trace(live, a, "step=%d", i);
        fdr_trace(live, b, "step=%d", i);
    }
    fflush(stderr);
    tunables("after file");
    printf("set batch_size=64: %d\n", fdr_tunable_set("batch_size", 64));
    printf("set level=10: %d\n", fdr_tunable_set("level", 10));
    printf("set level=9: %d\n", fdr_tunable_set("level", 9));
    printf("set_double level=2.5: %d\n", fdr_tunable_set_double("level", 2.5));
    printf("set_double level=4: %d\n", fdr_tunable_set_double("level", 4.0));
    printf("set_double ratio=1.5: %d\n", fdr_tunable_set_double("ratio", 1.5));
    printf("set_double ratio=0.75: %d\n", fdr_tunable_set_double("ratio", 0.75));
    printf("set gain=2: %d\n", fdr_tunable_set("gain", 2));
    printf("set nosuch=1: %d\n", fdr_tunable_set("nosuch", 1));
    fdr_tunable_info_t info;
    int rc = fdr_tunable_get("level", &info);
    printf("get level: %d value=%lld def=%lld min=%lld max=%lld range=%d double=%d\n", rc,
           info.value_int, info.def_int, info.min_int, info.max_int, info.has_range,
           info.is_double);
    printf("get nosuch: %d\n", fdr_tunable_get("nosuch", &info));
    tunables("after api");
    fflush(stdout);
    fdr_trace_set("live:b,gain=-1");
    fdr_record_set("-live:a");
    fdr_event_list(list_one, NULL);
    fdr_tunable_list(list_tunable, NULL);
}

static void bench(long n)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++)
        fdr_trace(live, bench, "i=%ld x=%u name=%s", i, 7u, "bench");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%.0f ns/event\n", ns / (double)n);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "basic";
    printf("pid=%d\n", (int)getpid());
    if (strcmp(mode, "basic") == 0) {
        sequence();
        tunables("tunables");
    } else if (strcmp(mode, "threads") == 0 && argc > 2) {
        per_thread = atoi(argv[2]);
        pthread_t th[4];
        for (long t = 0; t < 4; t++)
            pthread_create(&th[t], NULL, thread_main, (void *)t);
        for (int t = 0; t < 4; t++)
            pthread_join(th[t], NULL);
    } else if (strcmp(mode, "api") == 0 && argc > 2) {
        api(argv[2]);
    } else if (strcmp(mode, "bench") == 0 && argc > 2) {
        bench(atol(argv[2]));
    } else {
        fprintf(stderr, "usage: live-prog basic|threads N|api FILE|bench N\n");
        return 2;
    }
    printf("done\n");
    return 0;
}
