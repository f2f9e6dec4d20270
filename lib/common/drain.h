/* SPDX-License-Identifier: MIT */
/* common/drain.h - a ring's packets to its stream file, by whoever holds a
 * mapping of the ring: libfdr's consumer thread and drain helper, and
 * fdrd for the buffers it gives out. One code, so that a packet reaches
 * disk the same way whoever writes it.
 *
 * The ring's bytes are untrusted (common/validate.h): every packet is
 * checked first, header and events, against the stream written so far
 * (struct fdr__stream_state, kept by the caller, never in the ring:
 * fdr__packet_valid), and a corrupt one is skipped whole and counted. A stream file
 * only ever holds whole packets: the ring's header page records where they
 * end (out_bytes), and a write that fails (full disk, any error) is cut
 * back to it; the failed packet's events are counted in out_lost and
 * carried in the discarded count of every later packet (first in a
 * header-only copy of the failed one), so that emitted = recorded +
 * discarded still holds. Async-signal-safe: no malloc, no stdio. */
#ifndef FDR_COMMON_DRAIN_H
#define FDR_COMMON_DRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/classes.h"
#include "common/ring.h"
#include "common/validate.h"

/* Writes a packet: its header with packet_size trimmed to the content,
 * then the content (body: the bytes after the header). 0 or -errno. */
int fdr__packet_write(int fd, struct fdr__pkt *hdr, const char *body);

/* Appends an empty packet of sequence seq saying 0 discarded, a copy of
 * *first's header otherwise (same stream and thread, at its begin time),
 * and counts it in h->out_bytes: the first packet of a stream file, so
 * that a reader counts every loss reported by the packets after it (the
 * "First-packet rule", docs/design.md). 0 or -errno (then cut back). */
int fdr__drain_anchor(int fd, struct fdr__buf_hdr *h, const struct fdr__pkt *first,
                      uint64_t seq);

/* Cuts stream file fd back to its last whole packet (h->out_bytes). */
void fdr__drain_cut(int fd, const struct fdr__buf_hdr *h);

/* Appends closed packet seq of ring h (geometry g) to fd, if it is valid
 * after stream st (fdr__packet_valid, which moves st), and stores in
 * *grown the bytes appended (the caller adds them to h->out_bytes after
 * storing `consumed`). Returns 0, 1 when the packet was corrupt and
 * skipped, or the write's -errno (then its events are in h->out_lost).
 * `classes` decodes its events (and counts those of a packet that could
 * not be written). */
int fdr__drain_packet(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                      uint64_t seq, const struct fdr__classes *classes,
                      struct fdr__stream_state *st, uint64_t *grown);
/* Most packets fdr__drain_packets writes in one call. */
#define FDR__DRAIN_BATCH 16

/* Packets to write in the next batch of a ring of n_packets with `waiting`
 * closed: up to FDR__DRAIN_BATCH, at most a quarter of the ring (so that a
 * writer in discard mode gets slots back while the rest are written), at
 * least 1. */
unsigned fdr__drain_batch(uint64_t n_packets, uint64_t waiting);

/* Appends closed packets [seq, seq + n) of ring h (n <= FDR__DRAIN_BATCH)
 * to fd in one writev, packet seq + i taken from slot[i]: the ring's slot
 * (fdr__ring_slot), or a private copy (fdrd: the process may write over
 * its ring meanwhile), or NULL for a packet to skip; each checked as
 * fdr__drain_packet checks it. The kernel's cost per call and per partly
 * written page is then paid once per batch instead of once per packet
 * (issue 12: ~40 % less CPU per GB written). grown[i] is the bytes
 * appended for packet seq + i (0 for a skipped or corrupt packet).
 * Returns the number of packets skipped or corrupt, or the write's
 * -errno: then fd is cut back to h->out_bytes, nothing of the batch is
 * written, and the caller writes its packets one by one
 * (fdr__drain_slot), which counts the events of each packet that cannot
 * be written. Consumed and out_bytes are the caller's to publish, packet
 * by packet, as for fdr__drain_packet. */
int fdr__drain_packets(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                       uint64_t seq, unsigned n, const char *const slot[],
                       const struct fdr__classes *classes, struct fdr__stream_state *st,
                       uint64_t grown[]);
/* Copies the packet in slot (of a ring of `packet_size`-byte slots) to
 * dst: its header, then as many bytes as that copy of the header says it
 * holds, at most the slot. What a reader checks and writes is then this
 * copy, whatever the program writes over its ring meanwhile; the rest of
 * the slot is not read (a page of shared memory the writer never touched
 * would be made resident by reading it). */
void fdr__packet_copy(char *dst, const char *slot, uint32_t packet_size);
/* Test hook: called by fdr__drain_packets between its checks and its
 * write. A test that writes over the ring there shows that what is
 * written is what was checked (the callers pass private copies). */
extern void (*fdr__drain_checked_hook)(void);
/* fdr__drain_packet, the packet's bytes taken from `slot` (e.g. a private
 * copy of slot seq that the writer cannot change; NULL: skipped). */
int fdr__drain_slot(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                    uint64_t seq, const char *slot, const struct fdr__classes *classes,
                    struct fdr__stream_state *st, uint64_t *grown);

/* The open packet of a writer that is gone (killed, or no longer writing
 * this ring): written up to its last committed event that parses (found
 * from the packet's tail, common/committed.h), closed with the size of
 * what is committed and the time of its last event, then followed, when
 * events were discarded after it was opened, by a header-only packet that
 * reports them (an open packet 0 with no event is written then, empty,
 * as the stream's first packet saying 0: libfdr may put a count lost to
 * the route in a ring a thread holds, recorder/buffer.c); with no open
 * packet, that header-only packet alone when the last closed one does
 * not report every discarded event.
 * `produced` is the number of closed packets already written: the open
 * packet must be the next one, and follow stream st (its events up to
 * the first that fdr__packet_prefix refuses). Returns 1 when fd grew,
 * 0 when not, -1 when the packet was corrupt (skipped). */
int fdr__drain_open_packet(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                           uint64_t produced, const struct fdr__classes *classes,
                           struct fdr__stream_state *st);

#endif
