/* SPDX-License-Identifier: MIT */
/* core-stress.c - many threads recording at full speed while the library
 * flushes and snapshots, threads coming and going, and every wait bounded:
 * the hunt for issue 30's 32-bit hang (a 3-thread program that hung on
 * i686 with its trace empty), run under qemu-user by the cross stage
 * (tests/recorder/test-core-stress.py).
 *
 *   core-stress run THREADS EVENTS ROUNDS SNAPDIR
 *       ROUNDS rounds; in each, THREADS new threads record EVENTS events
 *       "stress:ev" (thread = a number of its own across rounds, seq =
 *       0..EVENTS-1) as fast as they can and exit, while main calls
 *       fdr_flush() in a loop until they are done, with one
 *       fdr_snapshot(SNAPDIR) among the flushes. Prints "emitted <thread>
 *       <EVENTS>" per thread, then "done", and returns through the
 *       library's exit (its consumer's last pass).
 *   core-stress term THREADS
 *       THREADS threads record without end; once each has recorded prints
 *       "ready" (the driver then sends SIGTERM at some moment).
 *   core-stress hold THREADS EVENTS
 *       THREADS threads record EVENTS events each and wait, never ending;
 *       once all have, prints "ready": their last packets are open, and
 *       only the drain helper can write them when the process is killed.
 *
 * A watchdog thread gives the run 120 s without progress (events
 * recorded, a thread ended or joined; not main's flushes, which go on
 * while it waits): past that it says on stderr what main still waited
 * for (which threads had not ended, and how far each got) and ends the
 * process with status 3, so that a hang is a failure with a message,
 * never a ctest TIMEOUT. It also covers the
 * library's exit (main's return: the consumer thread joined). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fdr/control.h>
#include <fdr/fdr.h>
#include <fdr/flight.h>

#define MAX_THREADS 64
#define STALL_SECONDS 120

static uint32_t events;
static unsigned threads;
static int hold; /* threads wait once they have recorded (hold) */
/* What main waits for, for the watchdog: a phase and each thread's count
 * of events recorded (UINT32_MAX once the thread has returned), by its
 * slot in the round (its number % threads). */
static const char *volatile phase = "start";
static uint32_t done_at[MAX_THREADS];
static uint32_t first_of_round;
static uint32_t progress; /* bumped at each step: the watchdog's clock */

static void step(void)
{
    __atomic_add_fetch(&progress, 1, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
    uint32_t idx = (uint32_t)(uintptr_t)arg;
    for (uint32_t i = 0; events == 0 || i < events; i++) {
        fdr_trace(stress, ev, "thread=%u seq=%u", idx, i);
        __atomic_store_n(&done_at[idx % threads], i + 1, __ATOMIC_RELAXED);
        if ((i & 1023) == 0)
            step();
    }
    __atomic_store_n(&done_at[idx % threads], UINT32_MAX, __ATOMIC_RELEASE);
    step();
    while (hold)
        pause();
    return NULL;
}

static void *watchdog(void *arg)
{
    (void)arg;
    uint32_t seen = __atomic_load_n(&progress, __ATOMIC_RELAXED);
    time_t since = time(NULL);
    for (;;) {
        sleep(1);
        uint32_t now = __atomic_load_n(&progress, __ATOMIC_RELAXED);
        if (now != seen) {
            seen = now;
            since = time(NULL);
            continue;
        }
        if (time(NULL) - since < STALL_SECONDS)
            continue;
        char msg[4096];
        int n = snprintf(msg, sizeof msg,
                         "core-stress: no progress for %d s; main still waits in: %s;",
                         STALL_SECONDS, phase);
        for (unsigned i = 0; i < threads && n < (int)sizeof msg - 64; i++) {
            uint32_t d = __atomic_load_n(&done_at[i], __ATOMIC_RELAXED);
            if (d != UINT32_MAX)
                n += snprintf(msg + n, sizeof msg - (size_t)n,
                              " thread %u not ended (%u events recorded);",
                              first_of_round + i, d);
        }
        fprintf(stderr, "%s\n", msg);
        _exit(3);
    }
    return NULL;
}

static pthread_t start(unsigned i, uint32_t idx)
{
    pthread_t t;
    char name[16];
    done_at[i] = 0;
    if (pthread_create(&t, NULL, worker, (void *)(uintptr_t)idx) != 0) {
        fprintf(stderr, "core-stress: pthread_create failed\n");
        exit(1);
    }
    snprintf(name, sizeof name, "w%u", idx);
    pthread_setname_np(t, name);
    return t;
}

static int all_done(void)
{
    for (unsigned i = 0; i < threads; i++)
        if (__atomic_load_n(&done_at[i], __ATOMIC_ACQUIRE) != UINT32_MAX)
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    pthread_t w[MAX_THREADS], dog;
    int term = argc == 3 && strcmp(argv[1], "term") == 0;
    hold = argc == 4 && strcmp(argv[1], "hold") == 0;
    if (!term && !hold && (argc != 6 || strcmp(argv[1], "run") != 0)) {
        fprintf(stderr, "usage: core-stress run THREADS EVENTS ROUNDS SNAPDIR | "
                        "core-stress term THREADS | core-stress hold THREADS EVENTS\n");
        return 2;
    }
    threads = (unsigned)atoi(argv[2]);
    if (threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "core-stress: THREADS is 1 to %d\n", MAX_THREADS);
        return 2;
    }
    if (term || hold) {
        events = hold ? (uint32_t)strtoul(argv[3], NULL, 10) : 0;
        for (unsigned i = 0; i < threads; i++)
            w[i] = start(i, i);
        /* term: each has recorded; hold: each has recorded them all */
        for (unsigned i = 0; i < threads; i++) {
            uint32_t d;
            while ((d = __atomic_load_n(&done_at[i], __ATOMIC_ACQUIRE)) == 0 ||
                   (hold && d != UINT32_MAX))
                usleep(1000);
        }
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    events = (uint32_t)strtoul(argv[3], NULL, 10);
    unsigned rounds = (unsigned)atoi(argv[4]);
    const char *snapdir = argv[5];
    pthread_create(&dog, NULL, watchdog, NULL);
    for (unsigned r = 0; r < rounds; r++) {
        first_of_round = r * threads;
        phase = "starting threads";
        for (unsigned i = 0; i < threads; i++)
            w[i] = start(i, first_of_round + i);
        /* Flushes while they record, and one snapshot a round (it
         * replaces its files, which a busy disk makes slow): each stops
         * every writer for a moment (section.c). Threads that finish
         * before the second pass still get their round's snapshot, after
         * the loop: the driver reads it whatever the machine's speed. */
        bool snapped = false;
        for (unsigned k = 0; !all_done() || !snapped; k++) {
            bool snap = k == 1 || all_done();
            phase = snap ? "fdr_snapshot" : "fdr_flush";
            int e = snap ? fdr_snapshot(snapdir) : fdr_flush();
            if (e < 0) {
                fprintf(stderr, "core-stress: %s: %s\n", phase, strerror(-e));
                return 1;
            }
            snapped |= snap;
        }
        phase = "pthread_join";
        for (unsigned i = 0; i < threads; i++) {
            pthread_join(w[i], NULL);
            step();
        }
        for (unsigned i = 0; i < threads; i++)
            printf("emitted %u %u\n", first_of_round + i, events);
    }
    phase = "the library's exit (its consumer thread's last pass and join)";
    printf("done\n");
    fflush(stdout);
    return 0;
}
