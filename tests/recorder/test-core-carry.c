/* SPDX-License-Identifier: MIT */
/* test-core-carry.c - the carry of a ring's last discards waits for room
 * when the ring is full, at a thread's exit and at a flush, instead of
 * giving up at its first try (issue 27: a carry that gave up at once went
 * unnoticed; the count then reaches the trace late, in another thread's
 * packet, or not at all after an _exit).
 *
 *     FDR_OUTPUT=DIR FDR_PACKET_SIZE=4096 FDR_BUFFER_SIZE=16384 \
 *     FDR_FLUSH_MS=60000 FDR_RUNDIR=DIR/no-fdrd test-core-carry
 *
 * Small rings (4 packets of 4 KiB), FDR_FLUSH_MS at its maximum (60 s), no
 * fdrd (the process's own rings). Once libfdr has started, the test replaces the writer's
 * hooks to the consumer (writer.c's fdr__writer_hooks, so linked
 * statically): kick and drain do nothing, so the consumer thread never
 * runs while the test does, and every ring a thread fills stays full.
 *
 * exit: a thread records until its ring is full and events are discarded,
 *     then ends. Its exit closes its packet, finds the ring full (the carry
 *     packet has no slot: -ENOSPC) and retries, kicking the consumer each
 *     time; the test's kick lets the consumer write the ring out (the real
 *     drain) only at the third kick of that exit. The ring must report its
 *     every discarded event (reported == discarded) when the thread is
 *     joined, after three kicks or more.
 * flush: another thread fills its ring the same way and stays; fdr_flush()
 *     from main finds the ring full at the carry (the consumer is asleep)
 *     and must write the ring out and carry again (init.c's
 *     carry_all_discards): reported == discarded when fdr_flush returns.
 *
 * Nothing depends on time: the consumer runs only when the test lets it
 * (the test starts once its first pass is done and it sleeps). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <fdr/fdr.h>

#include "check.h"
#include "common/ring.h"
#include "recorder/buffer.h"
#include "recorder/consumer.h"
#include "recorder/writer.h"

#define EVENTS 20000 /* 4 packets of 4 KiB hold about 1,000 */

static struct fdr__writer_hooks real;
static __thread int exiting; /* this thread has recorded: its exit is next */
static int exit_kicks;       /* kicks by the exiting thread's carry */
static int drains_asked;

static void test_kick(void)
{
    if (!exiting)
        return;
    if (++exit_kicks == 3)
        real.drain(0); /* the consumer makes room, late */
}

static int test_drain(int flush)
{
    (void)flush;
    drains_asked++;
    return 0;
}

static void record(unsigned t)
{
    for (unsigned i = 0; i < EVENTS; i++)
        fdr_trace(carry, ev, "t=%u i=%u", t, i);
}

static void *exiting_thread(void *arg)
{
    (void)arg;
    record(1);
    exiting = 1;
    return NULL;
}

static int recorded, flushed;

static void *staying_thread(void *arg)
{
    (void)arg;
    record(2);
    __atomic_store_n(&recorded, 1, __ATOMIC_RELEASE);
    WAIT_UNTIL(__atomic_load_n(&flushed, __ATOMIC_ACQUIRE), "main's flush");
    return NULL;
}

/* The ring (of the process's own) whose discards are not all reported
 * yet, or the one with discards when all are: -1 if none has any. */
static int ring_with_discards(uint64_t *discarded, uint64_t *reported)
{
    int found = -1;
    for (uint32_t i = 0; i < fdr__buf_count(); i++) {
        struct fdr__buf_hdr *h = fdr__buf_at(i)->hdr;
        uint64_t d = h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED);
        if (d && (found < 0 || h->reported != d)) {
            found = (int)i;
            *discarded = d;
            *reported = h->reported;
        }
    }
    return found;
}

int main(int argc, char **argv)
{
    (void)argv;
    /* libfdr reads its configuration before main: the CMake file sets it */
    REQUIRE(argc == 1 && getenv("FDR_OUTPUT") && getenv("FDR_FLUSH_MS"));
    fdr_trace(carry, ev, "t=%u i=%u", 0u, 0u); /* starts libfdr: hooks set */
    real = fdr__writer_hooks;
    fdr__writer_hooks.kick = test_kick;
    fdr__writer_hooks.drain = test_drain;
    /* The consumer's first pass (it may start late on a busy machine)
     * would make room no kick asked for: the test begins once it sleeps. */
    WAIT_UNTIL(fdr__consumer_asleep(), "the consumer thread's first pass and sleep");

    /* exit */
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, exiting_thread, NULL) == 0);
    pthread_join(t, NULL);
    uint64_t d = 0, rep = 0;
    int i = ring_with_discards(&d, &rep);
    CHECK_MSG(i >= 0, "exit: no ring discarded events (the ring never filled)");
    CHECK_MSG(d == rep,
              "exit: the thread's ring reports %llu of its %llu discarded events: "
              "its exit's carry gave up while the ring was full",
              (unsigned long long)rep, (unsigned long long)d);
    CHECK_MSG(exit_kicks >= 3,
              "exit: the carry kicked the consumer %d times, expected 3 or more "
              "(the retry until there is room)",
              exit_kicks);
    CHECK_MSG(drains_asked >= 1,
              "exit: the full ring was not handed to the consumer first");

    /* flush */
    REQUIRE(pthread_create(&t, NULL, staying_thread, NULL) == 0);
    WAIT_UNTIL(__atomic_load_n(&recorded, __ATOMIC_ACQUIRE),
               "the staying thread's %d events", EVENTS);
    i = ring_with_discards(&d, &rep);
    CHECK_MSG(
        i >= 0 && d != rep,
        "flush: the staying thread's ring holds no unreported discards (%llu of %llu)",
        (unsigned long long)rep, (unsigned long long)d);
    CHECK_ERR(fdr_flush(), 0);
    i = ring_with_discards(&d, &rep);
    CHECK_MSG(i >= 0 && d == rep,
              "flush: the ring reports %llu of its %llu discarded events: "
              "the carry gave up while the ring was full",
              (unsigned long long)rep, (unsigned long long)d);
    __atomic_store_n(&flushed, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    fdr__writer_hooks = real;
    return check_status();
}
