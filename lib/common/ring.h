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
 * Drawn in full, field by field, in docs/trace-format.md. */
#ifndef FDR_COMMON_RING_H
#define FDR_COMMON_RING_H

#include <stdint.h>

#define FDR__BUF_MAGIC 0x46445242u /* "FDRB" */
#define FDR__CTF_MAGIC 0xC1FC1FC1u
#define FDR__BUF_HEADER 4096

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
    uint64_t consumed; /* packets written out; release store by the reader */
    char pad2[56];
};

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


#endif
