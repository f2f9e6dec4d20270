/* SPDX-License-Identifier: MIT */
/* validate.c - the one check of buffers and packets (common/validate.h).
 *
 * Every header is copied out of the mapping once and checked on the copy,
 * so that a writer (or a scribbler) that changes it meanwhile cannot make
 * a reader follow a size it did not check. Async-signal-safe: the crash
 * handler uses it. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "common/iter.h"
#include "common/validate.h"

int fdr__geom_check(const struct fdr__ring_geom *g, uint64_t mapped)
{
    uint32_t ps = g->packet_size;
    if (ps < FDR__PACKET_MIN || ps > FDR__PACKET_MAX || (ps & (ps - 1)) ||
        g->n_packets < 2 || g->size > mapped)
        return -EINVAL;
    if (g->size != FDR__BUF_HEADER + (uint64_t)g->n_packets * ps)
        return -EINVAL;
    return 0;
}

int fdr__ring_check(const struct fdr__buf_hdr *h, const struct fdr__ring_geom *g)
{
    /* The geometry only: `mode` (the registration window's end sets it,
     * recorder/buffer.c) and the words after it (produced, reported, ...)
     * are written by the ring's process while a consumer checks. */
    struct fdr__buf_hdr c;
    memcpy(&c, h, offsetof(struct fdr__buf_hdr, mode));
    memcpy(&c.index, &h->index,
           offsetof(struct fdr__buf_hdr, pad0) - offsetof(struct fdr__buf_hdr, index));
    return c.magic == FDR__BUF_MAGIC && c.version == 1 &&
                   c.packet_size == g->packet_size && c.n_packets == g->n_packets &&
                   c.index == g->index && c.size == g->size
               ? 0
               : -EINVAL;
}

const char *fdr__ring_slot(const void *base, const struct fdr__ring_geom *g, uint64_t seq)
{
    return (const char *)base + FDR__BUF_HEADER +
           (uint64_t)(seq % g->n_packets) * g->packet_size;
}

int fdr__pkt_check(const void *pkt, const struct fdr__ring_geom *g, uint64_t seq,
                   struct fdr__pkt *out)
{
    memcpy(out, pkt, sizeof *out);
    uint64_t bits = out->content_size;
    if (out->magic != FDR__CTF_MAGIC || out->seq != seq ||
        out->stream_instance_id != g->index || bits % 8 || bits / 8 < sizeof *out ||
        out->packet_size < bits || out->packet_size % 8 ||
        out->packet_size / 8 > g->packet_size)
        return -EINVAL;
    return 0;
}

size_t fdr__packet_prefix(const char *pkt, uint64_t bytes, const struct fdr__pkt *hdr,
                          const struct fdr__classes *t, uint64_t ts_max, uint64_t *last)
{
    struct fdr__iter it;
    struct fdr__event ev;
    size_t good = sizeof *hdr;
    *last = hdr->ts_begin;
    fdr__iter_init(&it, pkt, bytes, t);
    while (fdr__iter_next(&it, &ev) > 0 && ev.ts >= *last && ev.ts <= ts_max) {
        good = (size_t)(ev.payload + ev.len - pkt);
        *last = ev.ts;
    }
    return good;
}

uint64_t fdr__stream_ts_limit(const struct fdr__stream_state *st)
{
    return st->ts_max && st->ts_max < FDR__TS_LIMIT ? st->ts_max + 1 : FDR__TS_LIMIT;
}

int fdr__packet_follows(const struct fdr__pkt *hdr, const struct fdr__stream_state *st)
{
    /* All ones is babeltrace2's "not set" (it asserts on it); anything
     * near it is a stray write, not a count. */
    if (hdr->seq < st->next_seq || hdr->seq >= FDR__TS_LIMIT ||
        hdr->discarded >= FDR__TS_LIMIT ||
        (st->next_seq && hdr->discarded < st->discarded))
        return -EINVAL;
    if (hdr->ts_begin < st->last_ts || hdr->ts_end < hdr->ts_begin ||
        hdr->ts_end >= fdr__stream_ts_limit(st))
        return -EINVAL;
    return 0;
}

int fdr__packet_valid(const char *pkt, const struct fdr__pkt *hdr,
                      const struct fdr__classes *t, struct fdr__stream_state *st)
{
    uint64_t last, bytes = hdr->content_size / 8;
    if (fdr__packet_follows(hdr, st) < 0)
        return -EINVAL;
    if (fdr__packet_prefix(pkt, bytes, hdr, t, hdr->ts_end, &last) != bytes)
        return -EINVAL;
    fdr__stream_advance(st, hdr);
    return 0;
}

void fdr__stream_advance(struct fdr__stream_state *st, const struct fdr__pkt *hdr)
{
    st->last_ts = hdr->ts_end;
    st->next_seq = hdr->seq + 1;
    st->discarded = hdr->discarded;
}
