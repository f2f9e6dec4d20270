/* SPDX-License-Identifier: MIT */
/* flight-scribble.c - a program that writes over its own ring, driven by
 * tests/recorder/test-flight-scribble.py.
 *
 *     flight-scribble snapshot DIR | crash | flush
 *
 * Records scr:ev i=0..N-1 from the main thread (FDR_PACKET_SIZE=4096 and
 * FDR_BUFFER_SIZE=64K, set by the driver: about ten packets in a ring of
 * sixteen), then, as a stray pointer would, writes garbage over the ring
 * header's geometry (magic, packet size, packet count, mapping size) and
 * over the headers of packets 1 (magic) and 2 (content size), found
 * through /proc/self/maps (the ring is the memfd "fdr-buffer"). Then it
 * takes fdr_snapshot(DIR), or aborts (crash dump), or calls fdr_flush()
 * (FDR_OUTPUT, overwrite mode). fdr must not crash: it skips the bad
 * headers, counts them, and writes the rest.
 *
 *     flight-scribble random SEED snapshot DIR | flush | exit | crash | kill
 *
 * The fuzz of issue 25: two threads record scr:ev (main i = 0.., a
 * worker i = 100000..); then main writes SEED's random bytes over the
 * rings (1 to 8 writes of 1 to 16 bytes: into the header page, mostly
 * its fields, or into packets, mostly their headers and first events);
 * both threads record on into what was written over (the writer must
 * not follow it: writer.c), the worker exits (thread exit), and main
 * ends as asked: fdr_snapshot(DIR), fdr_flush() (FDR_OUTPUT), return
 * from main (exit), abort() (crash dump, FDR_CRASH_DIR) or SIGKILL (the
 * drain helper; after "kill" on stdout, once a line is read). Prints
 * "scribbled K" before it ends.
 *
 *     flight-scribble bounds packet|content snapshot DIR | flush | exit | crash | kill
 *
 * A header that claims more bytes than its slot (issue 27). Records
 * scr:ev i=0..N-1 from main (about seven packets: the ring does not wrap),
 * then makes packet 2 claim its events plus as many copies of its last
 * event as fit in the rest of its slot and the next one, written there:
 * every byte it claims parses as events in order, so only the bound on its
 * size rejects it. "packet": packet and content size both larger than a
 * slot; "content": content size larger than the packet size (a slot's).
 * Packet 3's header is one of those copies now (bad magic). Ends as in
 * random mode; a reader must skip packets 2 and 3 (2 corrupt packets):
 * one that took packet 2 would hold its last event hundreds of times.
 *
 *     flight-scribble bounds packet|content dump
 *
 * The same lie for the crash dump, which reads a ring from its newest
 * packet back and stops at the first bad one: a thread records scr:ev
 * i=0.. (eight packets) and ends (its last packet closed, none open), main makes that
 * newest packet claim more than its slot (the copies go into the unused
 * slot after it), records nothing itself, and aborts. The dump must skip
 * the packet (1 corrupt packet); one that took it would print the last
 * event FDR_CRASH_EVENTS times. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fdr/fdr.h>

#include "overclaim.h"

#define N 2000
#define PACKET 4096

/* The largest ring: the one a thread that records this much has moved to
 * (its first, small ring is retired: lib/recorder/buffer.c). */
static char *find_ring(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    char *ring = NULL;
    unsigned long best = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (strstr(line, "fdr-buffer") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
            hi - lo > best) {
            best = hi - lo;
            ring = (char *)(uintptr_t)lo;
        }
    }
    if (f)
        fclose(f);
    return ring;
}

static int end_as(const char *end, const char *dir);

/* ---- random mode ---- */

static uint64_t rng;
static uint32_t next_rand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int phase; /* 1: worker recorded its first part; 2: scribbled */

static void *worker(void *arg)
{
    (void)arg;
    unsigned i = 100000;
    for (; i < 100000 + 1500; i++)
        fdr_trace(scr, ev, "i=%u", i);
    pthread_mutex_lock(&mu);
    phase = 1;
    pthread_cond_broadcast(&cv);
    while (phase < 2)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    for (; i < 100000 + 2000; i++)
        fdr_trace(scr, ev, "i=%u", i);
    return NULL;
}

/* Writes SEED's garbage over every ring of the process. */
static unsigned scribble_rings(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned done = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (!strstr(line, "fdr-buffer") || sscanf(line, "%lx-%lx", &lo, &hi) != 2 ||
            hi - lo <= 4096)
            continue;
        char *base = (char *)lo;
        size_t size = hi - lo;
        unsigned writes = 1 + next_rand() % 8;
        for (unsigned w = 0; w < writes; w++) {
            size_t at, len = 1 + next_rand() % 16;
            unsigned where = next_rand() % 10;
            if (where < 4) /* the header page: its fields, or anywhere */
                at = next_rand() % 2 ? next_rand() % 192 : next_rand() % 4096;
            else { /* a packet: its header, its first events, or anywhere */
                size_t slot =
                    4096 + (size_t)(next_rand() % ((size - 4096) / PACKET)) * PACKET;
                unsigned k = next_rand() % 3;
                at = slot + (k == 0   ? next_rand() % 100
                             : k == 1 ? 100 + next_rand() % 200
                                      : next_rand() % PACKET);
            }
            if (at + len > size)
                len = size - at;
            unsigned kind = next_rand() % 4;
            for (size_t b = 0; b < len; b++)
                base[at + b] = kind == 0   ? 0
                               : kind == 1 ? (char)0xff
                               : kind == 2 ? (char)(next_rand() % 4)
                                           : (char)next_rand();
            done++;
        }
    }
    if (f)
        fclose(f);
    return done;
}

static int random_mode(int argc, char **argv)
{
    rng = strtoull(argv[2], NULL, 10) * 2654435761u + 1;
    const char *end = argv[3];
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0)
        return 1;
    unsigned i = 0;
    for (; i < 1500; i++)
        fdr_trace(scr, ev, "i=%u", i);
    pthread_mutex_lock(&mu);
    while (phase < 1)
        pthread_cond_wait(&cv, &mu);
    unsigned k = scribble_rings();
    printf("scribbled %u\n", k);
    fflush(stdout);
    phase = 2;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    for (; i < 2000; i++)
        fdr_trace(scr, ev, "i=%u", i);
    pthread_join(th, NULL);
    return end_as(end, argc == 5 ? argv[4] : NULL);
}

/* Ends the program as asked (random and bounds modes). */
static int end_as(const char *end, const char *dir)
{
    if (strcmp(end, "snapshot") == 0 && dir) {
        int r = fdr_snapshot(dir);
        printf("snapshot %d\n", r);
        return r == 0 ? 0 : 1;
    }
    if (strcmp(end, "flush") == 0) {
        int r = fdr_flush();
        printf("flush %d\n", r);
        return r == 0 ? 0 : 1;
    }
    if (strcmp(end, "crash") == 0)
        abort();
    if (strcmp(end, "kill") == 0) {
        /* Once the driver has the drain helper's pid (it waits for it). */
        char go[8];
        printf("kill\n");
        fflush(stdout);
        if (fgets(go, sizeof go, stdin))
            raise(SIGKILL);
        return 1;
    }
    return strcmp(end, "exit") == 0 ? 0 : 2;
}

/* Records until its ring has closed seven packets, then 150 events more:
 * its last packet, closed at its exit, has room for them (the bounds need
 * a packet of several events). */
static void *dump_worker(void *arg)
{
    (void)arg;
    unsigned i = 0;
    fdr_trace(scr, ev, "i=%u", i++);
    const char *ring = find_ring();
    uint64_t produced = 0;
    while (ring && produced < 7) {
        fdr_trace(scr, ev, "i=%u", i++);
        ring = find_ring(); /* it grows */
        memcpy(&produced, ring + 64, 8);
    }
    for (unsigned k = 0; k < 150; k++)
        fdr_trace(scr, ev, "i=%u", i++);
    return NULL;
}

/* The thread's ring has no open packet: its newest packet is the last one
 * it closed (the header's produced - 1; n_packets at 12, produced at 64). */
static int bounds_dump(const char *kind)
{
    pthread_t th;
    if (pthread_create(&th, NULL, dump_worker, NULL) != 0 || pthread_join(th, NULL) != 0)
        return 3;
    char *ring = find_ring();
    if (!ring)
        return 3;
    uint32_t n;
    uint64_t produced;
    memcpy(&n, ring + 12, 4);
    memcpy(&produced, ring + 64, 8);
    if (!produced || produced >= n) /* the slot after it must be unused */
        return 3;
    uint64_t claimed = fdr_test_overclaim(ring + 4096 + (produced - 1) % n * PACKET,
                                          PACKET, 4, strcmp(kind, "content") == 0);
    if (!claimed)
        return 3;
    printf("claims %llu bytes in a slot of %d\n", (unsigned long long)claimed, PACKET);
    fflush(stdout);
    abort();
}

static int bounds_mode(int argc, char **argv)
{
    if (strcmp(argv[3], "dump") == 0)
        return bounds_dump(argv[2]);
    for (unsigned i = 0; i < N; i++)
        fdr_trace(scr, ev, "i=%u", i);
    char *ring = find_ring();
    if (!ring)
        return 3;
    uint64_t claimed = fdr_test_overclaim(ring + 4096 + 2 * PACKET, PACKET, 4,
                                          strcmp(argv[2], "content") == 0);
    if (!claimed)
        return 3;
    printf("claims %llu bytes in a slot of %d\n", (unsigned long long)claimed, PACKET);
    fflush(stdout);
    return end_as(argv[3], argc > 4 ? argv[4] : NULL);
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "random") == 0)
        return random_mode(argc, argv);
    if (argc >= 4 && strcmp(argv[1], "bounds") == 0)
        return bounds_mode(argc, argv);
    if (argc < 2) {
        fprintf(stderr, "usage: flight-scribble snapshot DIR | crash | flush\n");
        return 2;
    }
    for (unsigned i = 0; i < N; i++)
        fdr_trace(scr, ev, "i=%u", i);
    char *ring = find_ring();
    if (!ring) {
        fprintf(stderr, "flight-scribble: no ring in /proc/self/maps\n");
        return 1;
    }
    uint32_t junk[8];
    memset(junk, 0xa5, sizeof junk);
    memcpy(ring, junk, 16);                /* magic, version, packet_size, n_packets */
    memcpy(ring + 24, junk, 8);            /* size */
    memcpy(ring + 4096 + PACKET, junk, 4); /* packet 1: magic */
    uint64_t huge = (uint64_t)1 << 60;
    /* packet 2: content_size (after magic, uuid, stream id, two times) */
    memcpy(ring + 4096 + 2 * PACKET + 4 + 16 + 8 + 8 + 8, &huge, 8);
    if (strcmp(argv[1], "snapshot") == 0 && argc == 3) {
        int r = fdr_snapshot(argv[2]);
        printf("snapshot %d\n", r);
        return r == 0 ? 0 : 1;
    }
    if (strcmp(argv[1], "crash") == 0)
        abort();
    if (strcmp(argv[1], "flush") == 0) {
        int r = fdr_flush();
        printf("flush %d\n", r);
        return r == 0 ? 0 : 1;
    }
    return 2;
}
