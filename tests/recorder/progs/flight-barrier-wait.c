/* SPDX-License-Identifier: MIT */
/* flight-barrier-wait.c - a snapshot waits for a writer that answers the
 * signal barrier late, driven by tests/recorder/test-flight-barrier-wait.py
 * (run with FDR_SECTION_BARRIER=signal).
 *
 *     flight-barrier-wait DIR
 *
 * Two writer threads, "held" and "free", record wait:held i=0..N-1 and
 * wait:free i=0..N-1, then idle (outside any tracing section). Main takes
 * fdr_snapshot(DIR). Its signal barrier sends the barrier signal to both;
 * the test hook fdr__section_barrier_hook (section.c) runs in each
 * thread's barrier handler, before it answers, and holds "held" there:
 * it reads a pipe that a third thread, the releaser, writes to only once
 * fdr__section_barrier_retries says that the controller has passed its
 * deadline (1 s) without the answer and decided to wait on. The releaser
 * records nothing (it is no writer: no barrier signal for it).
 *
 * So, on any machine however fast or slow, the slow-writer path of the
 * signal barrier is taken (retries > 0 is how the release comes, not a
 * guess about time) and the snapshot must still succeed (0) and hold every
 * event of both threads, which the driver reads with babeltrace2. Before
 * the fix of issue 9 the barrier gave up at the deadline (-ETIMEDOUT);
 * and a controller that took "the signal is blocked" (a thread inside its
 * barrier handler has it blocked) for "it never answers" fails here too.
 * Nothing depends on timing: a slow machine only waits longer.
 *
 * Prints "snapshot R retries N held H" (R the return of fdr_snapshot, N
 * the counter, H the number of times "held" was held: 1). A failure in
 * the program itself (pipes, threads) exits 2. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fdr/fdr.h>

#include "recorder/section.h"

#define N 1000

static int held_in[2]; /* hook -> releaser: "held is inside the handler" */
static int release[2]; /* releaser -> hook: answer now */
static __thread int is_held_thread;
static int held_count; /* times the hook held "held" */
static int snapshot_done;
static pthread_barrier_t recorded;
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static int finished;

/* In the barrier signal handler of every writer, before it answers: only
 * async-signal-safe calls (read, write). */
static void hold(void)
{
    if (!is_held_thread || __atomic_load_n(&held_count, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&held_count, 1, __ATOMIC_RELAXED);
    char c = 'h';
    if (write(held_in[1], &c, 1) != 1)
        _exit(2);
    while (read(release[0], &c, 1) < 0 && errno == EINTR)
        ;
}

static void idle(void)
{
    pthread_mutex_lock(&idle_lock);
    while (!finished)
        pthread_cond_wait(&idle_cond, &idle_lock);
    pthread_mutex_unlock(&idle_lock);
}

static void *held_writer(void *arg)
{
    (void)arg;
    is_held_thread = 1;
    for (int i = 0; i < N; i++)
        fdr_trace(wait, held, "i=%d", i);
    pthread_barrier_wait(&recorded);
    idle();
    return NULL;
}

static void *free_writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++)
        fdr_trace(wait, free, "i=%d", i);
    pthread_barrier_wait(&recorded);
    idle();
    return NULL;
}

/* Waits for states, never for a time: "held" is in its handler, then the
 * controller has counted a wait past its deadline (or the snapshot has
 * returned: then the verdict is the snapshot's). */
static void *releaser(void *arg)
{
    (void)arg;
    char c;
    while (read(held_in[0], &c, 1) < 0 && errno == EINTR)
        ;
    while (!__atomic_load_n(&fdr__section_barrier_retries, __ATOMIC_RELAXED) &&
           !__atomic_load_n(&snapshot_done, __ATOMIC_RELAXED)) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    c = 'r';
    if (write(release[1], &c, 1) != 1)
        _exit(2);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: flight-barrier-wait DIR\n");
        return 2;
    }
    if (pipe(held_in) < 0 || pipe(release) < 0)
        return perror("pipe"), 2;
    pthread_barrier_init(&recorded, NULL, 3);
    pthread_t h, f, r;
    if (pthread_create(&h, NULL, held_writer, NULL) ||
        pthread_create(&f, NULL, free_writer, NULL) ||
        pthread_create(&r, NULL, releaser, NULL))
        return fprintf(stderr, "pthread_create failed\n"), 2;
    pthread_barrier_wait(&recorded);
    __atomic_store_n(&fdr__section_barrier_hook, hold, __ATOMIC_RELAXED);
    int rc = fdr_snapshot(argv[1]);
    __atomic_store_n(&snapshot_done, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&fdr__section_barrier_hook, (void (*)(void))NULL, __ATOMIC_RELAXED);
    if (!__atomic_load_n(&held_count, __ATOMIC_RELAXED)) {
        char c = 'h'; /* never held (no signal barrier?): let the releaser go */
        if (write(held_in[1], &c, 1) != 1)
            return 2;
    }
    pthread_join(r, NULL);
    pthread_mutex_lock(&idle_lock);
    finished = 1;
    pthread_cond_broadcast(&idle_cond);
    pthread_mutex_unlock(&idle_lock);
    pthread_join(h, NULL);
    pthread_join(f, NULL);
    printf("snapshot %d retries %llu held %d\n", rc,
           (unsigned long long)__atomic_load_n(&fdr__section_barrier_retries,
                                               __ATOMIC_RELAXED),
           held_count);
    return 0;
}
