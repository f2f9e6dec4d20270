/* SPDX-License-Identifier: MIT */
/* common/ring.h - the byte layout of a buffer (ring of CTF packets) and of
 * the header every packet starts with.
 *
 * Shared by everything that writes or reads buffers: the recorder (the
 * writing side), and every reader (consumer, snapshot, crash dump, later
 * fdrd and the fdr tools). A buffer may come from another process: its
 * contents are input, never state; readers validate before use.
 *
 *   offset 0          FDR__BUF_HEADER (4096)       + packet_size * k
 *   +----------------+------------------+-----+------------------+
 *   | struct         | packet slot 0    | ... | packet slot n-1  |
 *   | fdr__buf_hdr   | fdr__pkt, events |     |                  |
 *   +----------------+------------------+-----+------------------+
 *
 *   one packet slot (packet_size bytes)
 *   +----------+---------+---------+-----+-------------+------------------+
 *   | fdr__pkt | event 0 | event 1 | ... | (unused)    | fdr__pkt_tail    |
 *   | 100 B    |         |         |     |             | base, committed  |
 *   +----------+---------+---------+-----+-------------+------------------+
 *                                     committed -^       last 16 bytes
 *
 * Drawn in full, field by field, in docs/trace-format.md. */
#ifndef FDR_COMMON_RING_H
#define FDR_COMMON_RING_H

#include <stddef.h>
#include <stdint.h>

#define FDR__BUF_MAGIC 0x46445242u /* "FDRB" */
#define FDR__CTF_MAGIC 0xC1FC1FC1u
#define FDR__BUF_HEADER 4096
#define FDR__LEDGER 128               /* entries of an own ring's ledger (below) */
#define FDR__LEDGER_CLAIM 0xffffffffu /* an entry's tid while it is being taken */

struct fdr__buf_hdr {
    uint32_t magic;
    uint32_t version;
    uint32_t packet_size;
    uint32_t n_packets;
    uint32_t mode;
    uint32_t index; /* stream instance id */
    uint64_t size;  /* whole mapping */
    char pad0[32];
    /* writer's line */
    uint64_t produced;  /* packets closed; release store by the writer */
    uint64_t discarded; /* events discarded, cumulative; writer only */
    uint64_t nested;    /* events discarded while nested or paused; atomic add */
    uint64_t reported;  /* discarded count carried by the last closed packet */
    char pad1[32];
    /* reader's line */
    uint64_t consumed;     /* packets written out; release store by the reader */
    uint64_t out_bytes;    /* bytes of whole packets in the stream file */
    uint64_t out_lost;     /* events that failed to reach the file (write error) */
    uint64_t out_reported; /* discarded count of the last packet written out */
    char pad2[32];
    /* A process's own ring, handed to fdrd at registration (docs/daemon.md,
     * "Events before the route"): per route slot, what of it its threads
     * handed over themselves (writer.c), so that fdrd, copying the early
     * events of a process that ended first, copies no event twice: every
     * packet below handed_below[slot], and every packet of thread
     * handed_tid[slot] (the ring's current thread, moved). Written by the
     * writer after the events reached the route's ring; fdrd only reads. */
    uint32_t handed_tid[32];
    uint64_t handed_below[32];
    /* The copy under way, marked before it (writer.c, reroute): thread
     * handing_tid[slot] copies its past into ring handing_ring[slot] of
     * route handing_route[slot], a ring it is the first to use. A process
     * killed before handed_tid says that thread leaves fdrd a copy it
     * cannot tell whole: fdrd drops that ring's stream and copies the past
     * from the own ring instead (collect.c, early_cut): never twice, never
     * lost. */
    uint32_t handing_tid[32];
    uint32_t handing_route[32];
    uint32_t handing_ring[32];
    /* The ledger, in the first own ring fdrd holds (libfdr's writer.c,
     * docs/daemon.md "Events before the route"): a thread whose own ring
     * could not reach fdrd in the registration window (fdrd's socket
     * queue full, or more rings than fdrd keeps) records nothing there
     * meanwhile and counts each event here instead, thread tid in entry
     * k >= 1; once those are taken, in an entry k >= 1 of another own
     * ring fdrd holds; entry 0 of the first, any thread's, once all are
     * (atomic adds). fdrd, when the process ends, counts them as discarded in
     * every trace that wanted its past (collect.c, early_out), but for
     * the route slots in `handed`: those the thread counted them in
     * itself when it moved with its past (writer.c, reroute; set after
     * its handed_tid, so a kill in between counts them twice, never
     * none), or, for the events of a packet reused after it was handed
     * over to some of those traces, the slots it was handed over to
     * (writer.c, early_gone). Entry 0 is never handed. */
    struct fdr__ledger {
        uint32_t tid;
        uint32_t handed;
        uint64_t count;
    } ledger[FDR__LEDGER];
    /* Events lost to a route that no ring of it in the process could
     * count (none had come: libfdr's buffer.c, route_lost), per route
     * slot, in the first own ring fdrd holds, beside the ledger: route
     * (fdrd's number), the last losing thread, the count and the time of
     * the last loss. fdrd counts each as discarded in that route's trace
     * when the process ends, however it ends (collect.c,
     * fdrd_collect_release): before, a process killed or ending by _exit
     * took them along. libfdr clears an entry after a ring of the route
     * took its count (a kill in between counts it twice, never none). */
    struct fdr__route_lost {
        uint32_t route;
        uint32_t tid;
        uint64_t count;
        uint64_t ts;
    } route_lost[32];
};
_Static_assert(sizeof(struct fdr__buf_hdr) <= FDR__BUF_HEADER, "header page");
/* Where tests scribble on it (tests/programs/progs/session-prog.c). */
_Static_assert(offsetof(struct fdr__buf_hdr, route_lost) == 3008, "route_lost's place");

/* CTF packet header + packet context, as laid out at the start of every
 * packet (docs/trace-format.md). Byte-aligned, native byte order. */
struct fdr__pkt {
    uint32_t magic;
    uint8_t uuid[16];
    uint64_t stream_instance_id;
    uint64_t ts_begin;
    uint64_t ts_end;
    uint64_t content_size; /* bits */
    uint64_t packet_size;  /* bits */
    uint64_t seq;
    uint64_t discarded;
    uint32_t pid;
    uint32_t tid;
    char thread_name[16];
} __attribute__((packed));

/* The last 16 bytes of every packet slot, never part of the content (the
 * content ends before it, and what lies between is CTF padding).
 *
 * The committed position: every commit stores `committed` (release), the
 * address just past its event, after every byte of the event. `base` is
 * the address of the slot in the writer's address space, stored when the
 * packet is opened, before its header. A reader that has only the mapping
 * (the writer stopped or dead) takes committed - base as the committed
 * length of the open packet: every event below it is whole, and no byte of
 * a half-written one is below it. Addresses, not offsets, so that the
 * commit stores the value it already has in a register.
 * common/committed.h is the reader's side. */
struct fdr__pkt_tail {
    uint64_t base;
    uint64_t committed;
};
#define FDR__PKT_TAIL 16

/* The memory budget of a process's rings in one of fdrd's traces (its own
 * rings, bounded by FDR_MEMORY, start small and grow instead: libfdr's
 * buffer.c): a new ring has the size asked while the rings
 * the process holds (`held` bytes) leave room for it in `budget`; past
 * that, the smallest ring, two packets of at most FDR__RING_MIN_PACKET
 * bytes (12 KiB with its header). Every thread still records, in a ring of
 * its own, and what the smaller ring loses is counted in its stream like
 * any discard: the ring memory of N threads is at most
 * budget + N * 12 KiB, never N full rings. *packet and *n are the asked
 * geometry on entry and the one to make on return. */
#define FDR__RING_MIN_PACKET 4096u
static inline void fdr__ring_budget(uint64_t held, uint64_t budget, uint32_t *packet,
                                    uint32_t *n)
{
    uint64_t size = FDR__BUF_HEADER + (uint64_t)*n * *packet;
    if (held + size <= budget)
        return;
    if (*packet > FDR__RING_MIN_PACKET)
        *packet = FDR__RING_MIN_PACKET;
    *n = 2;
}

/* Bytes of events one packet of `packet_size` bytes holds at most. */
#define FDR__PKT_ROOM(packet_size)                                                       \
    ((size_t)(packet_size) - sizeof(struct fdr__pkt) - FDR__PKT_TAIL)

#endif
