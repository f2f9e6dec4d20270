/* SPDX-License-Identifier: MIT */
/* drain.c - a ring's packets to its stream file (common/drain.h). */
#define _GNU_SOURCE
#include "common/drain.h"
#include <errno.h>

#include <sys/uio.h>
#include <unistd.h>

#include "common/committed.h"
#include "common/io.h"
#include "common/iter.h"

int fdr__packet_write(int fd, struct fdr__pkt *hdr, const char *body)
{
    uint64_t bytes = hdr->content_size / 8;
    hdr->packet_size = hdr->content_size;
    struct iovec iov[2] = {{hdr, sizeof *hdr}, {(char *)body, bytes - sizeof *hdr}};
    return fdr__writev_full(fd, iov, 2);
}

/* The anchor packet appended, not counted in h->out_bytes: 0, or -errno
 * (then cut back to h->out_bytes). */
static int write_anchor(int fd, const struct fdr__buf_hdr *h,
                        const struct fdr__pkt *first, uint64_t seq)
{
    struct fdr__pkt a = *first;
    a.seq = seq;
    a.ts_end = a.ts_begin;
    a.discarded = 0;
    a.content_size = sizeof a * 8;
    int r = fdr__packet_write(fd, &a, NULL);
    if (r < 0)
        fdr__drain_cut(fd, h);
    return r;
}

int fdr__drain_anchor(int fd, struct fdr__buf_hdr *h, const struct fdr__pkt *first,
                      uint64_t seq)
{
    int r = write_anchor(fd, h, first, seq);
    if (r == 0)
        __atomic_store_n(&h->out_bytes, h->out_bytes + sizeof *first, __ATOMIC_RELEASE);
    return r;
}

/* A stream file's first packet must say 0 discarded (docs/design.md,
 * "First-packet rule"): a reader ignores the count of the first packet, so
 * events lost before it (writes that failed on a full disk, out_lost)
 * would vanish. Before packet *hdr goes into an empty file with a count,
 * an empty packet of the sequence before it, saying 0, goes first; a
 * packet 0 (the header-only copy of a failed packet 0) says 0 itself, the
 * count staying in out_lost for the packets after it. 0 or -errno.
 * *anchor: the bytes appended, which the caller counts with the packet's
 * (its `grown`: the consumer and fdrd add that to their own count of the
 * file, not h->out_bytes; counted in neither, the anchor was cut off the
 * file with the end of the packet after it, which babeltrace2 then could
 * not read: disk-full, a stream whose first packets failed). */
static int first_says_zero(int fd, struct fdr__buf_hdr *h, struct fdr__pkt *hdr,
                           uint64_t *anchor)
{
    *anchor = 0;
    if (h->out_bytes != 0 || hdr->discarded == 0 || h->out_lost == 0)
        return 0; /* not after failed writes: as the writer made it */
    if (hdr->seq == 0) {
        hdr->discarded = 0;
        return 0;
    }
    int r = write_anchor(fd, h, hdr, hdr->seq - 1);
    if (r == 0)
        *anchor = sizeof *hdr;
    return r;
}

void fdr__drain_cut(int fd, const struct fdr__buf_hdr *h)
{
    off_t at = (off_t)__atomic_load_n(&h->out_bytes, __ATOMIC_RELAXED);
    if (ftruncate(fd, at) == 0)
        lseek(fd, at, SEEK_SET);
}

/* Number of events in a checked packet (content `bytes`, header included);
 * stops at the first that does not parse. */
static uint64_t count_events(const char *pkt, uint64_t bytes,
                             const struct fdr__classes *t)
{
    struct fdr__iter it;
    struct fdr__event ev;
    uint64_t n = 0;
    fdr__iter_init(&it, pkt, bytes, t);
    while (fdr__iter_next(&it, &ev) > 0)
        n++;
    return n;
}

int fdr__drain_packet(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                      uint64_t seq, const struct fdr__classes *classes,
                      struct fdr__stream_state *st, uint64_t *grown)
{
    return fdr__drain_slot(fd, h, g, seq, fdr__ring_slot(h, g, seq), classes, st, grown);
}

int fdr__drain_slot(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                    uint64_t seq, const char *slot, const struct fdr__classes *classes,
                    struct fdr__stream_state *st, uint64_t *grown)
{
    struct fdr__pkt hdr, orig;
    *grown = 0;
    if (!slot || fdr__pkt_check(slot, g, seq, &orig) < 0 ||
        orig.discarded + h->out_lost >= FDR__TS_LIMIT ||
        fdr__packet_valid(slot, &orig, classes, st) < 0)
        return 1;
    hdr = orig;
    uint64_t lost = h->out_lost, anchor;
    hdr.discarded += lost;
    int r = first_says_zero(fd, h, &hdr, &anchor);
    if (r == 0)
        r = fdr__packet_write(fd, &hdr, slot + sizeof hdr);
    if (r == 0) {
        *grown = anchor + hdr.packet_size / 8;
        __atomic_store_n(&h->out_reported, hdr.discarded, __ATOMIC_RELAXED);
        return 0;
    }
    fdr__drain_cut(fd, h);
    lost += count_events(slot, orig.content_size / 8, classes);
    /* Atomic: read by libfdr's flush (writer.c, lost_unreported). */
    __atomic_store_n(&h->out_lost, lost, __ATOMIC_RELAXED);
    /* The same packet without its events, to carry the count now. */
    hdr = orig;
    hdr.discarded += lost;
    hdr.content_size = sizeof hdr * 8;
    if (first_says_zero(fd, h, &hdr, &anchor) == 0 &&
        fdr__packet_write(fd, &hdr, NULL) == 0) {
        *grown = anchor + sizeof hdr;
        __atomic_store_n(&h->out_reported, hdr.discarded, __ATOMIC_RELAXED);
    } else
        fdr__drain_cut(fd, h);
    return r;
}

void (*fdr__drain_checked_hook)(void);

void fdr__packet_copy(char *dst, const char *slot, uint32_t packet_size)
{
    struct fdr__pkt hdr;
    memcpy(&hdr, slot, sizeof hdr);
    memcpy(dst, &hdr, sizeof hdr);
    uint64_t bytes = hdr.content_size / 8;
    if (bytes > packet_size)
        bytes = packet_size;
    if (bytes > sizeof hdr)
        memcpy(dst + sizeof hdr, slot + sizeof hdr, (size_t)bytes - sizeof hdr);
}

unsigned fdr__drain_batch(uint64_t n_packets, uint64_t waiting)
{
    uint64_t n = n_packets / 4;
    if (n > FDR__DRAIN_BATCH)
        n = FDR__DRAIN_BATCH;
    if (n > waiting)
        n = waiting;
    return n ? (unsigned)n : 1;
}

int fdr__drain_packets(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                       uint64_t seq, unsigned n, const char *const slot[],
                       const struct fdr__classes *classes, struct fdr__stream_state *st,
                       uint64_t grown[])
{
    struct fdr__pkt hdr[FDR__DRAIN_BATCH];
    struct iovec iov[2 * FDR__DRAIN_BATCH];
    int niov = 0, corrupt = 0;
    uint64_t reported = h->out_reported;
    struct fdr__stream_state before = *st;
    if (n > FDR__DRAIN_BATCH)
        n = FDR__DRAIN_BATCH;
    for (unsigned i = 0; i < n; i++) {
        grown[i] = 0;
        if (!slot[i] || fdr__pkt_check(slot[i], g, seq + i, &hdr[i]) < 0 ||
            hdr[i].discarded + h->out_lost >= FDR__TS_LIMIT ||
            fdr__packet_valid(slot[i], &hdr[i], classes, st) < 0) {
            corrupt++;
            continue;
        }
        /* As fdr__packet_write: packet_size trimmed to the content, and
         * the events lost to earlier failed writes carried. */
        uint64_t bytes = hdr[i].content_size / 8, anchor = 0;
        hdr[i].discarded += h->out_lost;
        hdr[i].packet_size = hdr[i].content_size;
        if (niov == 0 && first_says_zero(fd, h, &hdr[i], &anchor) < 0) {
            for (unsigned k = 0; k < n; k++)
                grown[k] = 0;
            /* As for a failed writev: the caller checks them again one
             * by one (left advanced, it found them all out of sequence
             * and skipped them uncounted: disk-full, 18,000 events). */
            *st = before;
            return -EIO;
        }
        iov[niov++] = (struct iovec){&hdr[i], sizeof hdr[i]};
        iov[niov++] =
            (struct iovec){(char *)slot[i] + sizeof hdr[i], bytes - sizeof hdr[i]};
        grown[i] = anchor + bytes;
        reported = hdr[i].discarded;
    }
    void (*hook)(void) = __atomic_load_n(&fdr__drain_checked_hook, __ATOMIC_RELAXED);
    if (hook && niov)
        hook(); /* tests/recorder/progs/flight-scribble-race.c: writes over the ring */
    int r = niov ? fdr__writev_full(fd, iov, niov) : 0;
    if (r < 0) {
        fdr__drain_cut(fd, h);
        for (unsigned i = 0; i < n; i++)
            grown[i] = 0;
        *st = before; /* the caller writes them one by one */
        return r;
    }
    __atomic_store_n(&h->out_reported, reported, __ATOMIC_RELAXED);
    return corrupt;
}

/* No packet is open, but events were discarded after the last one closed
 * (a writer that left while its ring was full, before a packet could carry
 * the count): a header-only packet after the last one reports them. */
static int carry_only(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                      uint64_t produced, struct fdr__stream_state *st)
{
    struct fdr__pkt hdr;
    if (fdr__pkt_check(fdr__ring_slot(h, g, produced - 1), g, produced - 1, &hdr) < 0 ||
        hdr.seq + 1 != st->next_seq)
        return 0; /* not the packet last written: its count is not the stream's */
    hdr.ts_end = st->last_ts; /* as written, whatever its slot says now */
    uint64_t total =
        h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED) + h->out_lost;
    if (total <= hdr.discarded + h->out_lost || total >= FDR__TS_LIMIT)
        return 0; /* nothing more to say, or a count written over */
    hdr.seq = produced;
    hdr.ts_begin = hdr.ts_end;
    hdr.content_size = sizeof hdr * 8;
    hdr.discarded = total;
    uint64_t anchor;
    if (first_says_zero(fd, h, &hdr, &anchor) < 0 ||
        fdr__packet_write(fd, &hdr, NULL) < 0) {
        fdr__drain_cut(fd, h);
        return 0;
    }
    h->out_bytes += anchor + sizeof hdr;
    st->next_seq = hdr.seq + 1;
    return 1;
}

int fdr__drain_open_packet(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                           uint64_t produced, const struct fdr__classes *classes,
                           struct fdr__stream_state *st)
{
    struct fdr__open_packet op;
    struct fdr__pkt hdr;
    int open = fdr__committed(h, g->size, &op);
    if (open == 0 && produced > 0)
        return carry_only(fd, h, g, produced, st);
    if (open != 1 || op.seq != produced ||
        op.offset != (size_t)(fdr__ring_slot(h, g, op.seq) - (const char *)h))
        return 0;
    const char *slot = (const char *)h + op.offset;
    /* As a closed packet (fdr__packet_valid), but cut after its last good
     * event: what follows is not committed, or was written over. */
    uint64_t limit = fdr__stream_ts_limit(st);
    if (fdr__pkt_check(slot, g, op.seq, &hdr) < 0)
        return -1;
    hdr.ts_end = hdr.ts_begin; /* not closed: its events say when it ends */
    if (fdr__packet_follows(&hdr, st) < 0)
        return -1;
    uint64_t last;
    size_t good = fdr__packet_prefix(slot, op.bytes, &hdr, classes, limit - 1, &last);
    uint64_t total =
        h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED) + h->out_lost;
    int grew = 0;
    uint64_t anchor;
    if (good > sizeof hdr) {
        hdr.ts_end = last;
        hdr.content_size = (uint64_t)good * 8;
        hdr.discarded += h->out_lost;
        if (first_says_zero(fd, h, &hdr, &anchor) < 0 ||
            fdr__packet_write(fd, &hdr, slot + sizeof hdr) < 0) {
            fdr__drain_cut(fd, h);
            return 0;
        }
        h->out_bytes += anchor + good;
        fdr__stream_advance(st, &hdr);
        hdr.seq++;
        grew = 1;
    } else if (hdr.seq == 0 && total > hdr.discarded && total < FDR__TS_LIMIT) {
        /* An open packet 0 with no event, and a count to report (libfdr
         * put events lost to the route into a ring in a thread's hands:
         * recorder/buffer.c, fdr__buf_route_lost): it goes out as the
         * stream's empty first packet, saying 0, and the count after it.
         * Before, nothing was written: the count was lost uncounted. */
        hdr.ts_end = hdr.ts_begin;
        hdr.content_size = sizeof hdr * 8;
        hdr.discarded = 0;
        last = hdr.ts_begin;
        if (fdr__packet_write(fd, &hdr, NULL) < 0) {
            fdr__drain_cut(fd, h);
            return 0;
        }
        h->out_bytes += sizeof hdr;
        fdr__stream_advance(st, &hdr);
        hdr.seq++;
        grew = 1;
    }
    if (total > hdr.discarded && total < FDR__TS_LIMIT && (hdr.seq > 0 || grew)) {
        /* Never as the stream's first packet, which must say 0. */
        hdr.ts_begin = hdr.ts_end = last;
        hdr.content_size = sizeof hdr * 8;
        hdr.discarded = total;
        if (first_says_zero(fd, h, &hdr, &anchor) < 0 ||
            fdr__packet_write(fd, &hdr, NULL) < 0)
            fdr__drain_cut(fd, h);
        else {
            h->out_bytes += anchor + sizeof hdr;
            st->next_seq = hdr.seq + 1;
        }
        grew = 1;
    }
    return grew;
}
