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

#include <stddef.h>
#include <stdint.h>

#include "common/classes.h"
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

/* ---- the events: what a reader (babeltrace2) needs to read a stream ----
 *
 * A packet whose header is sane can still hold what stops a reader: an
 * event that does not parse with the class table, a few bytes after the
 * last event that are not one, a time outside the packet's [ts_begin,
 * ts_end] or older than the event before it, a packet that begins before
 * the one before it ended, a sequence number or discarded count that goes
 * back. Every writer of a stream from untrusted ring bytes (libfdr's
 * consumer, snapshot, crash snapshot and drain helper, fdrd, fdr recover)
 * checks each packet with fdr__packet_valid against the state of the
 * stream it is writing, and writes only what passes. A closed packet that
 * fails is skipped whole (its events are unknown: the gap in sequence
 * numbers it leaves is what babeltrace2 reports, as discarded packets);
 * an open packet (fdr__packet_prefix) is cut after its last good event. */

/* What the packets written so far to one stream imply for the next one. */
struct fdr__stream_state {
    uint64_t last_ts;   /* ts_end of the last packet written */
    uint64_t next_seq;  /* its seq + 1; 0: none written yet */
    uint64_t discarded; /* its discarded count (cumulative) */
    uint64_t ts_max;    /* the writer's clock now, when the caller knows it; 0: not */
};
/* No time is at or above this either: babeltrace2 takes all ones for "no
 * time", and converts counts to int64 nanoseconds (a counter of 1 GHz or
 * more stays below in any case; ts_max bounds slower ones). */
#define FDR__TS_LIMIT ((uint64_t)1 << 62)
/* The bound of every time in stream st: FDR__TS_LIMIT, or ts_max + 1. */
uint64_t fdr__stream_ts_limit(const struct fdr__stream_state *st);

/* Length (header included) of the events at the start of packet pkt
 * (header checked into *hdr) that are whole, parse with t, run forward
 * from hdr->ts_begin and are not later than ts_max, within its first
 * `bytes` bytes; the time of the last one in *last (hdr->ts_begin when
 * none). Never reads past pkt + bytes. */
size_t fdr__packet_prefix(const char *pkt, uint64_t bytes, const struct fdr__pkt *hdr,
                          const struct fdr__classes *t, uint64_t ts_max, uint64_t *last);

/* 0 when the header of a packet (checked by fdr__pkt_check) can follow
 * stream st: seq, ts_begin and discarded not below what st says, seq and
 * discarded below FDR__TS_LIMIT, ts_begin <= ts_end < fdr__stream_ts_limit;
 * else -EINVAL. The events are fdr__packet_valid's. */
int fdr__packet_follows(const struct fdr__pkt *hdr, const struct fdr__stream_state *st);
/* 0 when packet pkt (header checked into *hdr by fdr__pkt_check) can
 * follow stream st (fdr__packet_follows), and its content (hdr->content_size) whole
 * events that fdr__packet_prefix takes to the last byte, none after ts_end. Then *st
 * moves past it. -EINVAL otherwise (*st unchanged). */
int fdr__packet_valid(const char *pkt, const struct fdr__pkt *hdr,
                      const struct fdr__classes *t, struct fdr__stream_state *st);
/* Moves *st past a packet written without fdr__packet_valid (a header
 * made by the writer of the stream itself, e.g. a header-only packet). */
void fdr__stream_advance(struct fdr__stream_state *st, const struct fdr__pkt *hdr);

#endif
