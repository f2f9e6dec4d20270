/* SPDX-License-Identifier: MIT */
/* test-flight-stress.c - the tracing-section protocol under load.
 *
 *     test-flight-stress CYCLES barrier|nobarrier [MAX_SECONDS]
 *
 * Two writer threads record without pause while the main thread, the
 * controller, stops them CYCLES times with the real protocol
 * (fdr__section_quiesce: enabled = paused, barrier, wait until out of the
 * section). While they are stopped it takes a fingerprint of each writer's
 * state: write position, packet end, packet count, and a checksum of the
 * current packet from its start to 64 bytes past the write position (where
 * the next event would go) and of its tail (the committed position); it spins a little,
 * takes it again, then resumes. A difference is a violation: a writer touched its packet
 * after the controller had seen it outside its section.
 *
 * Each writer dirties 64 uncached lines before each event, which holds
 * its store of in_section in the store buffer while its load of `end`
 * goes ahead: the window the barrier closes is open on every event, not
 * by chance. A first, quick fingerprint (from the write position) is taken
 * before the full one, so that an event that slipped through is caught
 * even when it completes while the full one is being summed.
 *
 * "barrier" must see zero violations. "nobarrier" sets the test hook
 * fdr__section_no_barrier, which leaves out the asymmetric barrier (the
 * barectf bug), and must see some: it shows that the check can fail. The
 * exit status is 0 when the outcome is the expected one.
 *
 * On an idle 2-core machine a cycle costs a few microseconds (membarrier
 * IPIs); on an overloaded one the controller or a writer is preempted and
 * a cycle can take a millisecond, so the run also stops after MAX_SECONDS
 * (default 100) and says how many cycles it made. The verdict never depends
 * on that number: every cycle must see zero violations, and no quiesce may
 * fail (with the signal fallback, a slow writer is waited for, never given
 * up on: fdr__section_barrier_retries counts the waits past a deadline). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fdr/fdr.h>

#include "check.h"
#include "recorder/section.h"
#include "recorder/writer.h"

#define WRITERS 2

static int stop;
static uint64_t written[WRITERS];

/* Lines each writer dirties right before an event (see writer()): more
 * than a store buffer holds, spread over more memory than the caches. */
#define DIRTY_LINES 64
#define DIRTY_BYTES (8u << 20)
static unsigned char *dirty[WRITERS];

static void *writer(void *arg)
{
    int idx = (int)(intptr_t)arg;
    uint64_t i = 0;
    fdr_thread_self(); /* the writer exists before the controller starts */
    unsigned char *d = dirty[idx];
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        /* Stores that miss the cache, just before the event: the store of
         * in_section queues behind them in the store buffer (x86 makes
         * stores visible in program order) while the load of `end` that
         * follows it goes ahead. This holds the window the barrier closes
         * open for the time of ~64 cache misses on every event, instead of
         * a few cycles now and then; with the barrier it changes nothing
         * (the barrier drains the store buffer). */
        size_t at = (size_t)(i * 4160) % (DIRTY_BYTES - DIRTY_LINES * 64);
        for (int k = 0; k < DIRTY_LINES; k++)
            d[at + (size_t)k * 64] = (unsigned char)i;
        __asm__ __volatile__("" ::: "memory");
        fdr_trace(stress, ev, "i=%lu idx=%d", (unsigned long)i, idx);
        i++;
        /* A short gap between events: the controller then often finds the
         * writer outside its section right when it is about to enter one,
         * which is the moment the missing barrier matters. */
        for (volatile int s = 0; s < (int)(i & 31); s++)
            ;
        /* Three busy threads on two cores: a writer preempted inside its
         * section holds the controller for a time slice (~ms). Writers
         * therefore give their core away often, by themselves, between
         * events; they still run on both cores nearly all the time. */
        if ((i & 1023) == 0)
            sched_yield();
    }
    __atomic_store_n(&written[idx], i, __ATOMIC_RELAXED);
    return NULL;
}

struct print {
    const char *pos, *end;
    uint64_t produced, sum;
};

/* quick: from the write position only, taken first, before a writer that
 * slipped through has finished; otherwise from the packet's start. */
static void fingerprint(const struct fdr__writer *w, struct print *f, int quick)
{
    f->pos = __atomic_load_n(&w->self->pos, __ATOMIC_RELAXED);
    f->end = __atomic_load_n(&w->self->end, __ATOMIC_RELAXED);
    f->produced = __atomic_load_n(&w->buf->hdr->produced, __ATOMIC_RELAXED);
    f->sum = 1469598103934665603ull;
    if (!w->pkt || !f->pos)
        return;
    /* The slot that holds pos (the writer may have moved to another
     * packet than w->pkt when it slipped through): nothing is read outside
     * it. Not f->end: a paused writer's end is NULL. */
    const unsigned char *base = (const unsigned char *)w->buf->hdr + FDR__BUF_HEADER;
    size_t psize = w->buf->geom.packet_size;
    const unsigned char *pos = (const unsigned char *)f->pos;
    const unsigned char *slot = base + (size_t)(pos - base) / psize * psize;
    const unsigned char *slot_end = slot + psize;
    const unsigned char *p = quick ? pos : slot;
    const unsigned char *e = pos + 64;
    if (e > slot_end - FDR__PKT_TAIL)
        e = slot_end - FDR__PKT_TAIL;
    for (; p < e; p++)
        f->sum = (f->sum ^ __atomic_load_n(p, __ATOMIC_RELAXED)) * 1099511628211ull;
    /* The slot's last bytes (the tail, with the committed position). */
    for (p = slot_end - FDR__PKT_TAIL; p < slot_end; p++)
        f->sum = (f->sum ^ __atomic_load_n(p, __ATOMIC_RELAXED)) * 1099511628211ull;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int writers(void)
{
    int n = 0;
    pthread_mutex_lock(&fdr__writers_lock);
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        n++;
    pthread_mutex_unlock(&fdr__writers_lock);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4 ||
        (strcmp(argv[2], "barrier") && strcmp(argv[2], "nobarrier"))) {
        fprintf(stderr, "usage: %s CYCLES barrier|nobarrier [MAX_SECONDS]\n", argv[0]);
        return 2;
    }
    long cycles = atol(argv[1]);
    double max_secs = argc > 3 ? atof(argv[3]) : 100;
    int expect_violations = strcmp(argv[2], "nobarrier") == 0;
    fdr__section_no_barrier = expect_violations;
    pthread_t th[WRITERS];
    for (int i = 0; i < WRITERS; i++)
        if (!(dirty[i] = calloc(1, DIRTY_BYTES))) {
            printf("FAIL: out of memory\n");
            return 1;
        }
    for (int i = 0; i < WRITERS; i++)
        pthread_create(&th[i], NULL, writer, (void *)(intptr_t)i);
    WAIT_UNTIL(writers() >= WRITERS, "%d writers, %d exist", WRITERS, writers());
    uint64_t t0 = now_ns();
    long violations = 0, quiesce_failed = 0, cycle;
    for (cycle = 0; cycle < cycles; cycle++) {
        pthread_mutex_lock(&fdr__writers_lock);
        if (fdr__section_quiesce() < 0) {
            quiesce_failed++;
            pthread_mutex_unlock(&fdr__writers_lock);
            continue;
        }
        struct print a[2 * (WRITERS + 1)], b[2 * (WRITERS + 1)];
        int n = 0;
        for (struct fdr__writer *w = fdr__writers; w && n <= WRITERS; w = w->next)
            fingerprint(w, &a[n++], 1);
        n = 0;
        for (struct fdr__writer *w = fdr__writers; w && n <= WRITERS; w = w->next)
            fingerprint(w, &a[WRITERS + 1 + n++], 0);
        /* a short wait: long enough for a writer that slipped through to
         * finish its event (~20-100 ns), short enough for 1M cycles */
        for (volatile int s = 0; s < 2000; s++)
            ;
        n = 0;
        for (struct fdr__writer *w = fdr__writers; w && n <= WRITERS; w = w->next)
            fingerprint(w, &b[WRITERS + 1 + n++], 0);
        n = 0;
        for (struct fdr__writer *w = fdr__writers; w && n <= WRITERS; w = w->next)
            fingerprint(w, &b[n++], 1);
        for (int i = 0; i < n; i++)
            if (memcmp(&a[i], &b[i], sizeof a[i]) != 0 ||
                memcmp(&a[WRITERS + 1 + i], &b[WRITERS + 1 + i], sizeof a[i]) != 0)
                violations++;
        fdr__section_resume();
        pthread_mutex_unlock(&fdr__writers_lock);
        if (expect_violations && violations >= 3)
            break; /* shown; no need to go on */
        if ((double)(now_ns() - t0) / 1e9 >
            max_secs) /* checked every cycle: one may be slow */
            break;
    }
    double secs = (double)(now_ns() - t0) / 1e9;
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    uint64_t total = 0;
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(th[i], NULL);
        total += written[i];
    }
    printf("%s: %ld quiesce cycles in %.2f s (%.2f us each), %ld violations, "
           "%ld failed quiesces, %lu slow barriers waited for, %lu events attempted "
           "by the writers\n",
           argv[2], cycle, secs, secs * 1e6 / (double)(cycle ? cycle : 1), violations,
           quiesce_failed, (unsigned long)fdr__section_barrier_retries,
           (unsigned long)total);
    if (total == 0) {
        printf("FAIL: the writers did not run\n");
        return 1;
    }
    if (!expect_violations && cycle < cycles) {
        printf(
            "note: stopped after %.0f s with %ld of %ld cycles (machine overloaded?)\n",
            max_secs, cycle, cycles);
        /* How many cycles a busy machine allows says nothing about the
         * protocol: what is checked is that each one that ran was right
         * and that none gave up (a snapshot a user would not get). */
        if (cycle == 0) {
            printf("FAIL: no cycle ran\n");
            return 1;
        }
    }
    if (quiesce_failed) {
        printf("FAIL: quiesce failed\n");
        return 1;
    }
    if (expect_violations ? violations == 0 : violations != 0) {
        printf("FAIL: expected %s violations\n", expect_violations ? "some" : "no");
        return 1;
    }
    return 0;
}
