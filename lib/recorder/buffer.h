/* SPDX-License-Identifier: MIT */
/* recorder/buffer.h - the process's buffers (buffer.c): one ring of packets
 * per writing thread, created under the writers lock, kept in a pool when
 * their thread exits. */
#ifndef FDR_RECORDER_BUFFER_H
#define FDR_RECORDER_BUFFER_H

#include <stdint.h>

#include "common/ring.h"
#include "common/validate.h"

struct fdr__buf {
    struct fdr__buf_hdr *hdr;
    struct fdr__ring_geom geom; /* as created: what readers use, not hdr's */
    int fd;
    uint32_t index;
    struct fdr__buf *next_free;
    int out_fd;   /* stream file, consumer only */
    int bad_ring; /* its ring header was found corrupt, consumer only */
};

struct fdr__buf *fdr__buf_get(void);   /* from the pool or new */
void fdr__buf_put(struct fdr__buf *b); /* back to the pool */
struct fdr__buf *fdr__buf_at(uint32_t index);
uint32_t fdr__buf_count(void);
/* The writer's slot of seq (trusts the header: its own). Readers use
 * fdr__ring_slot(b->hdr, &b->geom, seq) instead. */
char *fdr__buf_slot(const struct fdr__buf_hdr *h, uint64_t seq);
extern uint8_t fdr__trace_uuid[16];
/* In a forked child: unmaps every buffer (they are the parent's). */
void fdr__buf_forget_all(void);
/* Called with each new buffer (writers lock held). Installed by init.c
 * before any buffer exists (the consumer's fdr__consumer_buffer_added):
 * the layer above is told without buffer.c calling up into it. */
extern void (*fdr__buf_added_hook)(const struct fdr__buf *b);

#endif
