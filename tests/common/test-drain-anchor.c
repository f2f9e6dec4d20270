/* SPDX-License-Identifier: MIT */
/* test-drain-anchor.c - the anchor packet of common/drain.c, without time
 * or a full disk: a stream whose first packets failed to be written
 * (out_lost, nothing in the file yet) gets an empty packet saying 0 before
 * the next one (the first-packet rule). Its bytes must be in what the call
 * reports written (`grown`): the consumer and fdrd add that to their own
 * count of the file, and a count short of the file had the next cut (the
 * drain helper's, at exit) take the anchor's size off the end of the
 * packet after it, which babeltrace2 could not index (disk-full). And a
 * batch whose anchor cannot be written leaves the stream state as it was:
 * advanced, the packets written again one by one were found out of
 * sequence and skipped, their events uncounted. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/drain.h"

static unsigned failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

#define PACKET 4096u
#define SLOTS 4u
static _Alignas(64) char ring[FDR__BUF_HEADER + SLOTS * PACKET];
static const struct fdr__ring_geom geom = {PACKET, SLOTS, 7,
                                           FDR__BUF_HEADER + SLOTS *PACKET};

/* The ring as a consumer finds it after packet 0 failed to be written:
 * nothing in the file, its events in out_lost; packet 1 (header only)
 * waits in its slot. */
static struct fdr__buf_hdr *ring_after_failure(void)
{
    memset(ring, 0, sizeof ring);
    struct fdr__buf_hdr *h = (struct fdr__buf_hdr *)(void *)ring;
    h->out_lost = 5;
    h->out_bytes = 0;
    struct fdr__pkt p = {0};
    p.magic = FDR__CTF_MAGIC;
    p.stream_instance_id = geom.index;
    p.ts_begin = 10;
    p.ts_end = 20;
    p.content_size = sizeof p * 8;
    p.packet_size = (uint64_t)PACKET * 8;
    p.seq = 1;
    memcpy(ring + FDR__BUF_HEADER + PACKET, &p, sizeof p);
    return h;
}

static uint64_t file_size(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? (uint64_t)st.st_size : (uint64_t)-1;
}

int main(void)
{
    struct fdr__classes none = {0};
    for (int batch = 0; batch < 2; batch++) {
        struct fdr__buf_hdr *h = ring_after_failure();
        struct fdr__stream_state st = {0, 1, 0, 0}; /* packet 0 was checked */
        int fd = memfd_create("anchor", 0);
        uint64_t grown[FDR__DRAIN_BATCH] = {0};
        const char *slot[1] = {fdr__ring_slot(h, &geom, 1)};
        int r = batch ? fdr__drain_packets(fd, h, &geom, 1, 1, slot, &none, &st, grown)
                      : fdr__drain_slot(fd, h, &geom, 1, slot[0], &none, &st, &grown[0]);
        char what[160];
        snprintf(
            what, sizeof what,
            "%s: written %d, %llu bytes reported of a file of %llu (anchor + packet: "
            "%zu)",
            batch ? "fdr__drain_packets" : "fdr__drain_slot", r,
            (unsigned long long)(h->out_bytes + grown[0]),
            (unsigned long long)file_size(fd), 2 * sizeof(struct fdr__pkt));
        check(r == 0 && h->out_bytes + grown[0] == file_size(fd) &&
                  file_size(fd) == 2 * sizeof(struct fdr__pkt),
              what);
        close(fd);
    }
    /* The anchor cannot be written (a descriptor open for reading only):
     * the batch fails, the stream state is as before, and packet 1 written
     * alone is not taken for a packet out of sequence (1: skipped). */
    struct fdr__buf_hdr *h = ring_after_failure();
    struct fdr__stream_state st = {0, 1, 0, 0};
    int fd = memfd_create("anchor", 0);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int ro = open(path, O_RDONLY);
    uint64_t grown[FDR__DRAIN_BATCH] = {0};
    const char *slot[1] = {fdr__ring_slot(h, &geom, 1)};
    int r = fdr__drain_packets(ro, h, &geom, 1, 1, slot, &none, &st, grown);
    check(r < 0, "a batch into a read-only descriptor was written");
    check(st.next_seq == 1, "a batch whose anchor failed left the stream state advanced");
    r = fdr__drain_slot(ro, h, &geom, 1, slot[0], &none, &st, &grown[0]);
    check(r != 1, "packet 1, written alone after the batch failed, was skipped as "
                  "out of sequence");
    close(ro);
    close(fd);
    if (failures)
        return 1;
    printf("ok\n");
    return 0;
}
