/* SPDX-License-Identifier: MIT */
/* common/committed.h - the committed part of a buffer's open packet, found
 * from the buffer's mapping alone.
 *
 * For a reader that holds only a mapping of a buffer (common/ring.h) whose
 * writing thread may be stopped or dead: the daemon collecting a killed
 * process, a recovery tool. The writer's commit stores the end of each
 * event in the packet's tail (struct fdr__pkt_tail) after every byte of
 * the event; this reads it back and checks it against the mapping. */
#ifndef FDR_COMMON_COMMITTED_H
#define FDR_COMMON_COMMITTED_H

#include <stddef.h>
#include <stdint.h>

struct fdr__open_packet {
    uint64_t seq;  /* its sequence number (== the buffer's `produced`) */
    size_t offset; /* of its slot in the mapping */
    size_t bytes;  /* committed: header and whole events, from the slot */
};

/* `map` is `size` bytes of one buffer, from offset 0. Returns 1 and fills
 * *out when the buffer has an open packet (bytes is then at least the
 * packet header: no event committed yet), 0 when it has none (never used,
 * or between packets), -EINVAL when the mapping is not a buffer or its
 * open packet's tail is out of bounds. Reads each shared word once. Exact
 * when the writer is stopped or dead; with a live writer the packet may
 * have been closed meanwhile (check `produced` again). */
int fdr__committed(const void *map, size_t size, struct fdr__open_packet *out);

#endif
