/* SPDX-License-Identifier: MIT */
/* flight-pool.c - memory that follows activity (lib/recorder/buffer.c):
 * many threads, a few busy, the rest quiet, for
 * tests/recorder/test-flight-pool.py.
 *
 *   flight-pool memory THREADS BUSY DIR
 *       THREADS threads: BUSY record pool:busy (who, seq) as fast as they
 *       can, in bursts, the others pool:quiet (who, seq) once a second.
 *       Once every busy thread recorded 60,000 events (three 256 KiB
 *       rings' worth: its ring has wrapped) and every quiet one 2, all
 *       stop where they are and the program prints its VmRSS ("rss_kb N")
 *       and the size of its rings ("rings_kb N"), takes fdr_snapshot(DIR)
 *       and prints each thread's last seq ("last WHO SEQ"), then ends
 *       them all.
 *   flight-pool disk THREADS BUSY N
 *       Writing to disk (FDR_OUTPUT): the THREADS - BUSY idle threads
 *       record pool:quiet once each, then the BUSY ones, one after the
 *       other (none waits for another's larger ring being made), record
 *       pool:busy N times as fast as they can. The program prints its
 *       VmRSS, the size of its rings and "big K", the number of rings
 *       larger than a small one, then ends them all; the trace is written
 *       at exit.
 * With FDR_EVENTS matching nothing the same program records nothing: its
 * RSS is the one fdr's rings are added to. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fdr/fdr.h>

static unsigned threads, busy, target;
static unsigned *last;         /* per thread: seq of its last event + 1 */
static unsigned stop, ready;   /* atomic */
static pthread_barrier_t held; /* every thread stopped, main's snapshot */
static pthread_barrier_t done; /* the snapshot taken */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
    unsigned who = (unsigned)(uintptr_t)arg, seq = 0;
    int is_busy = who < busy;
    int counted = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        if (is_busy) {
            for (int k = 0; k < 500; k++, seq++)
                fdr_trace(pool, busy, "who=%u seq=%u", who, seq);
            if (!counted && seq >= target) {
                counted = 1;
                __atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
            }
            sleep_ms(1); /* bursts: 1,000 threads share the CPUs */
        } else {
            fdr_trace(pool, quiet, "who=%u seq=%u", who, seq);
            seq++;
            if (!counted && seq >= 2) {
                counted = 1;
                __atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
            }
            for (int k = 0; k < 10 && !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); k++)
                sleep_ms(100);
        }
    }
    last[who] = seq;
    pthread_barrier_wait(&held);
    pthread_barrier_wait(&done);
    return NULL;
}

static void *disk_worker(void *arg)
{
    unsigned who = (unsigned)(uintptr_t)arg;
    if (who >= busy)
        fdr_trace(pool, quiet, "who=%u seq=%u", who, 0u);
    else {
        /* Its turn: every idle thread and the busy ones before it done. */
        while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < threads - busy + who)
            sleep_ms(1);
        for (unsigned seq = 0; seq < target; seq++)
            fdr_trace(pool, busy, "who=%u seq=%u", who, seq);
    }
    __atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
    pthread_barrier_wait(&held);
    pthread_barrier_wait(&done);
    return NULL;
}

/* Bytes of all the process's rings (the fdr-buffer memfds it maps), and
 * in *big the number of those larger than a small ring (12 KiB). */
static unsigned long rings_kb(unsigned *big)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long kb = 0, lo, hi;
    *big = 0;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "/memfd:fdr-buffer") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
            kb += (hi - lo) / 1024;
            *big += hi - lo > 12 * 1024;
        }
    if (f)
        fclose(f);
    return kb;
}

static long vmrss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    int disk = argc == 5 && !strcmp(argv[1], "disk");
    if (argc != 5 || (strcmp(argv[1], "memory") && !disk)) {
        fprintf(stderr,
                "usage: flight-pool memory THREADS BUSY DIR | disk THREADS BUSY N\n");
        return 2;
    }
    threads = (unsigned)atoi(argv[2]);
    busy = (unsigned)atoi(argv[3]);
    target = disk ? (unsigned)atoi(argv[4]) : 60000;
    last = calloc(threads, sizeof *last);
    pthread_t *th = calloc(threads, sizeof *th);
    if (!last || !th || busy > threads)
        return 2;
    pthread_barrier_init(&held, NULL, threads + 1);
    pthread_barrier_init(&done, NULL, threads + 1);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 256 * 1024); /* 1,000 threads, sanitizers too */
    for (unsigned i = 0; i < threads; i++)
        if (pthread_create(&th[i], &at, disk ? disk_worker : worker,
                           (void *)(uintptr_t)i) != 0) {
            fprintf(stderr, "flight-pool: thread %u not started\n", i);
            return 3;
        }
    /* Every thread recorded what it should: no time bet, a count. */
    while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < threads)
        sleep_ms(20);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_barrier_wait(&held);
    unsigned big;
    unsigned long kb = rings_kb(&big);
    printf("rss_kb %ld\nrings_kb %lu\nbig %u\n", vmrss_kb(), kb, big);
    if (!disk)
        printf("snapshot %d\n", fdr_snapshot(argv[4]));
    for (unsigned i = 0; i < threads; i++)
        printf("last %u %u\n", i, last[i]);
    fflush(stdout);
    pthread_barrier_wait(&done);
    for (unsigned i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    free(th);
    free(last);
    return 0;
}
