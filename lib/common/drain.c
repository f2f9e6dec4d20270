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

int fdr__drain_sane(const char *slot, const struct fdr__pkt *hdr,
                    const struct fdr__classes *t, uint64_t *last)
{
    if (hdr->ts_begin < *last || hdr->ts_end < hdr->ts_begin)
        return -EINVAL;
    struct fdr__iter it;
    struct fdr__event ev;
    uint64_t prev = hdr->ts_begin;
    int r;
    fdr__iter_init(&it, slot, hdr->content_size / 8, t);
    while ((r = fdr__iter_next(&it, &ev)) > 0) {
        if (ev.ts < prev || ev.ts > hdr->ts_end)
            return -EINVAL;
        prev = ev.ts;
    }
    if (r < 0)
        return -EINVAL;
    *last = hdr->ts_end;
    return 0;
}

int fdr__drain_packet(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                      uint64_t seq, const struct fdr__classes *classes, uint64_t *grown)
{
    return fdr__drain_slot(fd, h, g, seq, fdr__ring_slot(h, g, seq), classes, grown);
}

int fdr__drain_slot(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                    uint64_t seq, const char *slot, const struct fdr__classes *classes,
                    uint64_t *grown)
{
    struct fdr__pkt hdr, orig;
    if (fdr__pkt_check(slot, g, seq, &orig) < 0)
        return 1;
    hdr = orig;
    uint64_t lost = h->out_lost;
    hdr.discarded += lost;
    int r = fdr__packet_write(fd, &hdr, slot + sizeof hdr);
    if (r == 0) {
        *grown = hdr.packet_size / 8;
        h->out_reported = hdr.discarded;
        return 0;
    }
    fdr__drain_cut(fd, h);
    lost += count_events(slot, orig.content_size / 8, classes);
    h->out_lost = lost;
    /* The same packet without its events, to carry the count now. */
    hdr = orig;
    hdr.discarded += lost;
    hdr.content_size = sizeof hdr * 8;
    if (fdr__packet_write(fd, &hdr, NULL) == 0) {
        *grown = sizeof hdr;
        h->out_reported = hdr.discarded;
    } else
        fdr__drain_cut(fd, h);
    return r;
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
                       uint64_t grown[])
{
    struct fdr__pkt hdr[FDR__DRAIN_BATCH];
    struct iovec iov[2 * FDR__DRAIN_BATCH];
    int niov = 0, corrupt = 0;
    uint64_t reported = h->out_reported;
    if (n > FDR__DRAIN_BATCH)
        n = FDR__DRAIN_BATCH;
    for (unsigned i = 0; i < n; i++) {
        grown[i] = 0;
        if (!slot[i] || fdr__pkt_check(slot[i], g, seq + i, &hdr[i]) < 0) {
            corrupt++;
            continue;
        }
        /* As fdr__packet_write: packet_size trimmed to the content, and
         * the events lost to earlier failed writes carried. */
        uint64_t bytes = hdr[i].content_size / 8;
        hdr[i].discarded += h->out_lost;
        hdr[i].packet_size = hdr[i].content_size;
        iov[niov++] = (struct iovec){&hdr[i], sizeof hdr[i]};
        iov[niov++] =
            (struct iovec){(char *)slot[i] + sizeof hdr[i], bytes - sizeof hdr[i]};
        grown[i] = bytes;
        reported = hdr[i].discarded;
    }
    int r = niov ? fdr__writev_full(fd, iov, niov) : 0;
    if (r < 0) {
        fdr__drain_cut(fd, h);
        for (unsigned i = 0; i < n; i++)
            grown[i] = 0;
        return r;
    }
    h->out_reported = reported;
    return corrupt;
}

/* No packet is open, but events were discarded after the last one closed
 * (a writer that left while its ring was full, before a packet could carry
 * the count): a header-only packet after the last one reports them. */
static int carry_only(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                      uint64_t produced)
{
    struct fdr__pkt hdr;
    if (fdr__pkt_check(fdr__ring_slot(h, g, produced - 1), g, produced - 1, &hdr) < 0)
        return 0;
    uint64_t total =
        h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED) + h->out_lost;
    if (total <= hdr.discarded + h->out_lost)
        return 0;
    hdr.seq = produced;
    hdr.ts_begin = hdr.ts_end;
    hdr.content_size = sizeof hdr * 8;
    hdr.discarded = total;
    if (fdr__packet_write(fd, &hdr, NULL) < 0) {
        fdr__drain_cut(fd, h);
        return 0;
    }
    h->out_bytes += sizeof hdr;
    return 1;
}

size_t fdr__drain_committed(const char *slot, size_t bytes,
                            const struct fdr__classes *classes,
                            const struct fdr__pkt *hdr, uint64_t *last)
{
    struct fdr__iter it;
    struct fdr__event ev;
    size_t good = sizeof *hdr;
    *last = hdr->ts_begin;
    fdr__iter_init(&it, slot, bytes, classes);
    /* Up to the first event whose time runs backwards too: a reader
     * stops there (only a writer that scribbled makes one). */
    while (fdr__iter_next(&it, &ev) > 0 && ev.ts >= *last) {
        good = (size_t)(ev.payload + ev.len - slot);
        *last = ev.ts;
    }
    return good;
}

int fdr__drain_open_packet(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                           uint64_t produced, const struct fdr__classes *classes)
{
    struct fdr__open_packet op;
    struct fdr__pkt hdr;
    int open = fdr__committed(h, g->size, &op);
    if (open == 0 && produced > 0)
        return carry_only(fd, h, g, produced);
    if (open != 1 || op.seq != produced ||
        op.offset != (size_t)(fdr__ring_slot(h, g, op.seq) - (const char *)h))
        return 0;
    const char *slot = (const char *)h + op.offset;
    if (fdr__pkt_check(slot, g, op.seq, &hdr) < 0)
        return -1;
    uint64_t last;
    size_t good = fdr__drain_committed(slot, op.bytes, classes, &hdr, &last);
    uint64_t total =
        h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED) + h->out_lost;
    int grew = 0;
    if (good > sizeof hdr) {
        hdr.ts_end = last;
        hdr.content_size = (uint64_t)good * 8;
        hdr.discarded += h->out_lost;
        if (fdr__packet_write(fd, &hdr, slot + sizeof hdr) < 0) {
            fdr__drain_cut(fd, h);
            return 0;
        }
        h->out_bytes += good;
        hdr.seq++;
        grew = 1;
    }
    if (total > hdr.discarded && (hdr.seq > 0 || grew)) {
        /* Never as the stream's first packet, which must say 0. */
        hdr.ts_begin = hdr.ts_end = last;
        hdr.content_size = sizeof hdr * 8;
        hdr.discarded = total;
        if (fdr__packet_write(fd, &hdr, NULL) < 0)
            fdr__drain_cut(fd, h);
        else
            h->out_bytes += sizeof hdr;
        grew = 1;
    }
    return grew;
}
