/* SPDX-License-Identifier: MIT */
/* committed.c - the committed part of a buffer's open packet, from the
 * mapping alone (committed.h; layout in common/ring.h and
 * docs/trace-format.md). The buffer is input: every field is checked
 * before it is used, nothing is written. */
#include "common/committed.h"

#include <errno.h>
#include <string.h>

#include "common/ring.h"

int fdr__committed(const void *map, size_t size, struct fdr__open_packet *out)
{
    const struct fdr__buf_hdr *h = map;
    if (!map || size < FDR__BUF_HEADER ||
        __atomic_load_n(&h->magic, __ATOMIC_RELAXED) != FDR__BUF_MAGIC)
        return -EINVAL;
    uint64_t psize = __atomic_load_n(&h->packet_size, __ATOMIC_RELAXED);
    uint64_t n = __atomic_load_n(&h->n_packets, __ATOMIC_RELAXED);
    if (psize < sizeof(struct fdr__pkt) + FDR__PKT_TAIL || psize % 8 || n == 0 ||
        n > (size - FDR__BUF_HEADER) / psize)
        return -EINVAL;
    /* Acquire pairs with the writer's release of `produced`: the slot of
     * the open packet is not the one just closed. */
    uint64_t seq = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
    size_t off = FDR__BUF_HEADER + (size_t)(seq % n) * (size_t)psize;
    const char *slot = (const char *)map + off;
    struct fdr__pkt p;
    memcpy(&p, slot, sizeof p);
    if (p.magic != FDR__CTF_MAGIC || p.seq != seq)
        return 0; /* not opened since the last close: no open packet */
    /* Acquire: the writer reset the tail before it wrote the header. */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const struct fdr__pkt_tail *t = (const void *)(slot + psize - FDR__PKT_TAIL);
    uint64_t base = __atomic_load_n(&t->base, __ATOMIC_RELAXED);
    uint64_t committed = __atomic_load_n(&t->committed, __ATOMIC_ACQUIRE);
    if (committed < base || committed - base < sizeof p ||
        committed - base > psize - FDR__PKT_TAIL)
        return -EINVAL;
    out->seq = seq;
    out->offset = off;
    out->bytes = (size_t)(committed - base);
    return 1;
}
