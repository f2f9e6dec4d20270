/* SPDX-License-Identifier: MIT */
/* common/validate.h - the one check of buffers and packets.
 *
 * A buffer's bytes may be written by anyone who maps it (the traced
 * program, a stray pointer in it), so every reader (consumer, snapshot,
 * crash dump, later fdrd and fdr) checks what it reads here, on a copy,
 * before it follows a size or an offset. The geometry of a buffer (packet
 * size, number of packets, mapping size) comes from the side that created
 * the mapping, is checked once, and is what readers use; the header in the
 * mapping is only compared with it. */
#ifndef FDR_COMMON_VALIDATE_H
#define FDR_COMMON_VALIDATE_H

#include <stdint.h>

#include "common/ring.h"

#define FDR__PACKET_MIN 4096u
#define FDR__PACKET_MAX (16u << 20)

/* What the creator of a buffer knows about it. */
struct fdr__ring_geom {
    uint32_t packet_size; /* bytes per slot */
    uint32_t n_packets;   /* slots */
    uint32_t index;       /* stream instance id */
    uint64_t size;        /* bytes of the whole mapping */
};

/* 0 when g is a possible geometry that fits in `mapped` bytes: packet_size
 * a power of two in [FDR__PACKET_MIN, FDR__PACKET_MAX], at least 2 packets,
 * size == FDR__BUF_HEADER + n_packets * packet_size <= mapped; else -EINVAL. */
int fdr__geom_check(const struct fdr__ring_geom *g, uint64_t mapped);
/* 0 when the header at h (read once) says what g says: magic, version 1,
 * packet size, number of packets, index and size; else -EINVAL. */
int fdr__ring_check(const struct fdr__buf_hdr *h, const struct fdr__ring_geom *g);
/* The start of slot seq of a buffer of geometry g mapped at base. */
const char *fdr__ring_slot(const void *base, const struct fdr__ring_geom *g,
                           uint64_t seq);

/* Copies the packet header at pkt into *out, then checks the copy: magic,
 * sequence number `seq`, stream instance id g->index, and sizes: content a
 * whole number of bytes, at least the header, at most packet_size, which is
 * at most g->packet_size bytes. 0 or -EINVAL. Only *out is to be used
 * afterwards (the bytes at pkt may change meanwhile). */
int fdr__pkt_check(const void *pkt, const struct fdr__ring_geom *g, uint64_t seq,
                   struct fdr__pkt *out);

#endif
