/* SPDX-License-Identifier: MIT */
/* flight-snapshot.c - snapshots and the tracing-activity API, driven by
 * tests/recorder/test-flight-snapshot.py.
 *
 *   flight-snapshot snap DIR1 DIR2
 *       API checks (exit 1 with a message on failure), then two writer
 *       threads "wa" and "wb" record load:ev seq=0..N-1 (enough to wrap
 *       their rings), a thread "gone" records gone:ev k=0..49 and exits,
 *       main records main:last v=777 and takes snapshot DIR1; then main
 *       records main:more i=0..4 and main:after v=888 and takes snapshot
 *       DIR2. Prints "N <n>" and "pid <pid>".
 *   flight-snapshot wait
 *       records sig:ev i=0..99, prints "ready", waits for EOF on stdin
 *       (the driver sends the snapshot signal meanwhile).
 *   flight-snapshot cost THREADS
 *       THREADS threads fill their ring (FDR_BUFFER_SIZE), then prints the
 *       time of one fdr_snapshot: "snapshot of T threads: X ms". */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fdr/fdr.h>

#include "check.h"

#define N 20000

static pthread_barrier_t start, snapped, more_done, snapped2;

static void *writer(void *arg)
{
    const char *who = arg;
    pthread_setname_np(pthread_self(), who);
    REQUIRE(fdr_thread_self() != NULL);
    pthread_barrier_wait(&start);
    for (unsigned seq = 0; seq < N; seq++)
        fdr_trace(load, ev, "who=%s seq=%u sq=%llu", who, seq,
                  (unsigned long long)seq * seq);
    pthread_barrier_wait(&snapped); /* main: ready for snapshot 1 */
    pthread_barrier_wait(&snapped); /* main: snapshot 1 taken */
    pthread_barrier_wait(&more_done);
    pthread_barrier_wait(&snapped2);
    return NULL;
}

static void *gone(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "gone");
    for (int k = 0; k < 50; k++)
        fdr_trace(gone, ev, "k=%d", k);
    return NULL;
}

static void api_checks(const char *dir)
{
    fdr_thread_t *self = fdr_thread_self();
    REQUIRE(self != NULL);
    REQUIRE(fdr_thread_self() == self);
    REQUIRE(fdr_is_tracing_enabled());
    REQUIRE(fdr_thread_is_tracing_enabled(self));
    REQUIRE(!fdr_is_in_tracing_section(self));
    volatile const uint32_t *in = fdr_is_in_tracing_section_ptr(self);
    REQUIRE(in != NULL && *in == 0);
    fdr_trace(api, before, "x=%d", 1);

    fdr_set_tracing_enabled(false);
    REQUIRE(!fdr_is_tracing_enabled());
    fdr_trace(api, off, "x=%d", 2); /* not recorded, not counted */
    fdr_set_tracing_enabled(true);
    REQUIRE(fdr_is_tracing_enabled());

    fdr_thread_set_tracing_enabled(self, false);
    REQUIRE(!fdr_thread_is_tracing_enabled(self));
    REQUIRE(fdr_is_tracing_enabled());
    fdr_trace(api, thread_off, "x=%d", 3); /* not recorded */
    fdr_thread_set_tracing_enabled(self, true);
    REQUIRE(fdr_thread_is_tracing_enabled(self));
    fdr_trace(api, on, "x=%d", 4);

    /* A snapshot and a flush stop every thread and resume them: a thread
     * the user disabled stays disabled. */
    char pre[4096];
    snprintf(pre, sizeof pre, "%s.off", dir);
    fdr_thread_set_tracing_enabled(self, false);
    REQUIRE(fdr_snapshot(pre) == 0);
    fdr_flush(); /* no FDR_OUTPUT: nothing to write, it still resumes */
    REQUIRE(!fdr_thread_is_tracing_enabled(self));
    fdr_trace(api, off_after_snap, "x=%d", 5); /* not recorded */
    fdr_thread_set_tracing_enabled(self, true);

    /* bad inputs: an error code, never a crash */
    REQUIRE(fdr_snapshot(NULL) == -EINVAL);
    REQUIRE(fdr_snapshot("") == -EINVAL);
    char file[4096];
    snprintf(file, sizeof file, "%s.file", dir);
    FILE *f = fopen(file, "w");
    REQUIRE(f != NULL);
    fclose(f);
    REQUIRE(fdr_snapshot(file) == -ENOTDIR || fdr_snapshot(file) == -EEXIST);
    unlink(file);
    REQUIRE(fdr_snapshot("/proc/no-such-dir/x") < 0);
    REQUIRE(fdr_snapshot_on_signal(SIGKILL, dir) == -EINVAL);
    REQUIRE(fdr_snapshot_on_signal(SIGUSR2, NULL) == -EINVAL);
    REQUIRE(fdr_snapshot_on_signal(-1, dir) == -EINVAL);
    REQUIRE(fdr_snapshot_on_signal(0, NULL) == 0);
    fdr_thread_set_tracing_enabled(NULL, false); /* ignored */
    REQUIRE(!fdr_is_in_tracing_section(NULL));
}

static int snap(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    api_checks(argv[2]);
    pthread_barrier_init(&start, NULL, 3);
    pthread_barrier_init(&snapped, NULL, 3);
    pthread_barrier_init(&more_done, NULL, 3);
    pthread_barrier_init(&snapped2, NULL, 3);
    pthread_t a, b, g;
    pthread_create(&a, NULL, writer, "wa");
    pthread_create(&b, NULL, writer, "wb");
    pthread_barrier_wait(&start); /* both writers own a buffer now */
    pthread_create(&g, NULL, gone, NULL);
    pthread_join(g, NULL);
    pthread_barrier_wait(&snapped); /* writers done with 0..N-1 */
    fdr_trace(main, last, "v=%d", 777);
    int r = fdr_snapshot(argv[2]);
    REQUIRE(r == 0);
    pthread_barrier_wait(&snapped);
    pthread_barrier_wait(&more_done);
    for (int i = 0; i < 5; i++) /* main's ring does not wrap: snap2 is a superset */
        fdr_trace(main, more, "i=%d", i);
    fdr_trace(main, after, "v=%d", 888);
    r = fdr_snapshot(argv[3]);
    REQUIRE(r == 0);
    pthread_barrier_wait(&snapped2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("N %d\npid %d\n", N, (int)getpid());
    return 0;
}

static int wait_mode(void)
{
    for (int i = 0; i < 100; i++)
        fdr_trace(sig, ev, "i=%d", i);
    printf("ready\n");
    fflush(stdout);
    /* poll with a short timeout, then read: under TSan a signal is only
     * handled at such points, not inside a buffered fread */
    char buf[64];
    for (;;) {
        struct pollfd pfd = {0, POLLIN, 0};
        if (poll(&pfd, 1, 10) == 1 && read(0, buf, sizeof buf) <= 0)
            break;
    }
    return 0;
}

static pthread_barrier_t filled, measured, round1;

/* Every thread starts with a small ring and moves to one of
 * FDR_BUFFER_SIZE once it wraps it (lib/recorder/buffer.c). Two rounds,
 * all threads between them: in the first, on a machine with fewer CPUs
 * than threads (8 under qemu-user on 2 CPUs), a thread may try to grow
 * many times while another, preempted, holds the lock it needs (riscv64
 * in CI: one thread grew after 48,000 events, and the snapshot held 6 of
 * the 8 MiB); by the second no other thread is growing, and 100,000
 * events fill the ring it moved to. */
static void *filler(void *arg)
{
    (void)arg;
    /* 40-byte events: 1 MiB holds about 26,000 */
    for (int round = 0; round < 2; round++) {
        for (unsigned i = 0; i < 100000; i++)
            fdr_trace(cost, ev, "a=%u b=%u c=%llu", i, i * 2, (unsigned long long)i * 3);
        if (round == 0)
            pthread_barrier_wait(&round1);
    }
    pthread_barrier_wait(&filled);
    pthread_barrier_wait(&measured);
    return NULL;
}

static int cost(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 8;
    if (n < 1 || n > 64)
        return 2;
    pthread_barrier_init(&round1, NULL, (unsigned)n);
    pthread_barrier_init(&filled, NULL, (unsigned)n + 1);
    pthread_barrier_init(&measured, NULL, (unsigned)n + 1);
    pthread_t th[64];
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, filler, NULL);
    pthread_barrier_wait(&filled);
    char dir[] = "/tmp/fdr-snapshot-cost-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int r = fdr_snapshot(dir);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    REQUIRE(r == 0);
    pthread_barrier_wait(&measured);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    printf("snapshot of %d threads: %.3f ms\n", n,
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
               (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    printf("dir %s\n", dir);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "snap") == 0)
        return snap(argc, argv);
    if (argc == 2 && strcmp(argv[1], "wait") == 0)
        return wait_mode();
    if (argc >= 2 && strcmp(argv[1], "cost") == 0)
        return cost(argc, argv);
    fprintf(stderr, "usage: %s snap DIR1 DIR2 | wait | cost [THREADS]\n", argv[0]);
    return 2;
}
