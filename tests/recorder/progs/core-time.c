/* SPDX-License-Identifier: MIT */
/* core-time.c - events whose payload carries the CLOCK_REALTIME read just
 * before them, then many events from three threads, for
 * tests/test-core-time.py (wall-clock time and monotonic timestamps). */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <fdr/fdr.h>

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&d, NULL);
}

static void *worker(void *arg)
{
    unsigned idx = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0; i < 5000; i++) {
        fdr_trace(clk, tick, "thread=%u i=%u", idx, i);
        if (i % 1000 == 999)
            sleep_ms(1);
    }
    return NULL;
}

int main(void)
{
    /* The very first event of the process: library start, writer creation
     * and the first packet all happen inside this call. */
    uint64_t rt = realtime_ns();
    fdr_trace(clk, first, "rt=%" PRIu64, rt);
    /* The time after it: on a busy machine the thread may be preempted
     * between the clock read and the event; the checker then accepts a
     * timestamp inside [before, after] (see tests/test-core-time.py). */
    rt = realtime_ns();
    fdr_trace(clk, first_after, "rt=%" PRIu64, rt);
    sleep_ms(20);
    rt = realtime_ns();
    fdr_trace(clk, later, "rt=%" PRIu64, rt);
    rt = realtime_ns();
    fdr_trace(clk, later_after, "rt=%" PRIu64, rt);
    pthread_t t[2];
    for (unsigned i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    worker((void *)0);
    for (unsigned i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    sleep_ms(200);
    rt = realtime_ns();
    fdr_trace(clk, last, "rt=%" PRIu64, rt);
    rt = realtime_ns();
    fdr_trace(clk, last_after, "rt=%" PRIu64, rt);
    return 0;
}
