/* SPDX-License-Identifier: MIT */
/* test-flight-snapshot-packets.c - a snapshot holds, packet by packet,
 * what the ring held: every complete packet still in it, oldest first,
 * then the open packet's committed events, with and without an open
 * packet (issue 27: the oldest closed packet of a ring with no open
 * packet could go missing unnoticed).
 *
 *     FDR_PACKET_SIZE=4096 FDR_BUFFER_SIZE=16384 FDR_RUNDIR=DIR/no-fdrd \
 *     test-flight-snapshot-packets DIR
 *
 * A flight recorder (no FDR_OUTPUT: overwrite mode), small rings. A thread
 * records 5,000 events (its ring of a few packets wraps many times) and
 * stays: fdr_snapshot() with its packet open. Then it ends (its exit
 * closes the packet; no writer holds the ring) and another snapshot is
 * taken. Each time the test reads the ring itself after the snapshot
 * (nothing records meanwhile: the ring is as the snapshot saw it) and
 * compares with the snapshot's stream file: after the anchor packet
 * (sequence 0, empty: the packets before were overwritten), packet k is
 * the ring's slot of sequence first + k, same header fields and same
 * bytes of events, where
 *
 *   a packet open:  first = produced - n + 1 .. produced - 1, then the open
 *                   packet (sequence produced) up to its committed end
 *   none open:      first = produced - n .. produced - 1 (the oldest slot
 *                   holds a complete packet too)
 *
 * and nothing after. Linked statically: it reads the rings (buffer.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fdr/fdr.h>
#include <fdr/flight.h>

#include "check.h"
#include "common/ring.h"
#include "common/validate.h"
#include "recorder/buffer.h"
#include "recorder/writer.h"

#define EVENTS 5000

static int recorded, may_end;

static void *worker(void *arg)
{
    (void)arg;
    for (unsigned i = 0; i < EVENTS; i++)
        fdr_trace(snap, ev, "i=%u", i);
    __atomic_store_n(&recorded, 1, __ATOMIC_RELEASE);
    WAIT_UNTIL(__atomic_load_n(&may_end, __ATOMIC_ACQUIRE), "main's snapshot");
    return NULL;
}

static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        return NULL;
    char *buf = malloc((size_t)st.st_size + 1);
    ssize_t k = buf ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    if (k != st.st_size) {
        free(buf);
        return NULL;
    }
    *len = (size_t)k;
    return buf;
}

/* The snapshot in dir against the ring of the one thread that recorded. */
static void compare(const char *dir, const char *what)
{
    REQUIRE(fdr__buf_count() >= 1);
    struct fdr__buf *b = NULL;
    for (uint32_t i = 0; i < fdr__buf_count(); i++)
        if (fdr__buf_at(i)->hdr->produced)
            b = fdr__buf_at(i);
    REQUIRE(b);
    const struct fdr__ring_geom *g = &b->geom;
    uint64_t produced = b->hdr->produced, n = g->n_packets;
    REQUIRE(produced > n); /* wrapped: the oldest packets were overwritten */
    /* Is a packet open in it (a writer holds one), and how much of it is
     * committed (its tail, ring.h)? */
    pthread_mutex_lock(&fdr__writers_lock);
    int open = 0;
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        open |= w->buf == b && w->pkt != NULL;
    pthread_mutex_unlock(&fdr__writers_lock);
    const char *slot = fdr__ring_slot(b->hdr, g, produced);
    const struct fdr__pkt_tail *tail =
        (const void *)(slot + g->packet_size - sizeof(struct fdr__pkt_tail));
    uint64_t open_len = open ? tail->committed - tail->base : 0;
    CHECK_MSG(!strcmp(what, "open") == !!open &&
                  (!open || open_len > sizeof(struct fdr__pkt)),
              "%s: the case is not what the test meant: a packet open %d, %llu bytes",
              what, open, (unsigned long long)open_len);

    char path[4200];
    snprintf(path, sizeof path, "%s/stream_%u", dir, b->index);
    size_t len = 0;
    char *file = slurp(path, &len);
    REQUIRE(file);
    size_t off = 0;
    struct fdr__pkt f;
    memcpy(&f, file, sizeof f);
    CHECK_MSG(len >= sizeof f && f.seq == 0 && f.content_size == sizeof f * 8,
              "%s: the stream does not start with its anchor packet", what);
    off += f.packet_size / 8;
    uint64_t first = produced - n + (open ? 1 : 0);
    for (uint64_t s = first; s <= produced; s++) {
        if (s == produced && !open)
            break;
        struct fdr__pkt r;
        const char *p = fdr__ring_slot(b->hdr, g, s);
        memcpy(&r, p, sizeof r);
        if (s == produced)
            r.content_size = open_len * 8; /* the committed events */
        if (off + sizeof f > len) {
            CHECK_MSG(0,
                      "%s: packet %llu of the ring (packets %llu..%llu%s) is not in the "
                      "snapshot",
                      what, (unsigned long long)s, (unsigned long long)first,
                      (unsigned long long)produced - 1, open ? " and the open one" : "");
            break;
        }
        memcpy(&f, file + off, sizeof f);
        uint64_t body = r.content_size / 8 - sizeof r;
        int same = f.seq == r.seq && f.ts_begin == r.ts_begin &&
                   (s == produced || f.ts_end == r.ts_end) &&
                   f.content_size == r.content_size && f.discarded == r.discarded &&
                   f.tid == r.tid && off + f.content_size / 8 <= len &&
                   !memcmp(file + off + sizeof f, p + sizeof r, body);
        CHECK_MSG(
            same,
            "%s: the snapshot's packet at byte %zu (seq %llu, %llu bits) is not the "
            "ring's packet %llu (%llu bits)",
            what, off, (unsigned long long)f.seq, (unsigned long long)f.content_size,
            (unsigned long long)s, (unsigned long long)r.content_size);
        if (!same || f.packet_size < 8 * sizeof f)
            break;
        off += f.packet_size / 8;
    }
    CHECK_MSG(off == len, "%s: %zu bytes of the snapshot after the ring's packets", what,
              len - off);
    free(file);
}

static int rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int main(int argc, char **argv)
{
    REQUIRE(argc == 2 && !getenv("FDR_OUTPUT"));
    nftw(argv[1], rm, 16, FTW_DEPTH | FTW_PHYS);
    mkdir(argv[1], 0755);
    char dir[4096];

    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, worker, NULL) == 0);
    WAIT_UNTIL(__atomic_load_n(&recorded, __ATOMIC_ACQUIRE), "the thread's %d events",
               EVENTS);
    snprintf(dir, sizeof dir, "%s/open", argv[1]);
    CHECK_ERR(fdr_snapshot(dir), 0);
    compare(dir, "open");

    __atomic_store_n(&may_end, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    snprintf(dir, sizeof dir, "%s/closed", argv[1]);
    CHECK_ERR(fdr_snapshot(dir), 0);
    compare(dir, "closed");
    return check_status();
}
