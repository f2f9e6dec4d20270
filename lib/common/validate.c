/* SPDX-License-Identifier: MIT */
/* validate.c - the one check of buffers and packets (common/validate.h).
 *
 * Every header is copied out of the mapping once and checked on the copy,
 * so that a writer (or a scribbler) that changes it meanwhile cannot make
 * a reader follow a size it did not check. Async-signal-safe: the crash
 * handler uses it. */
#include <errno.h>
#include <string.h>

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
    struct fdr__buf_hdr c;
    memcpy(&c, h, sizeof c);
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
