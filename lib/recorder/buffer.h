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
    int out_fd;             /* stream file, consumer only */
    int bad_ring;           /* its ring header was found corrupt, consumer only */
    uint32_t route;         /* 0: the process's own; else the fdrd route it came with */
    uint64_t bell_consumed; /* its `consumed` + 1 when the doorbell was rung */
};

struct fdr__buf *fdr__buf_get(void); /* from the pool or new */
/* The registration window (daemon.c): from the start of a process that
 * finds fdrd's socket until fdrd has answered its class table (the routes
 * of the traces started then came before the answer), own rings of a
 * flight recorder are made in discard mode: a trace started before the
 * process gets its first events handed over (backfill), and those its
 * ring could not keep counted, instead of overwritten uncounted. Ended
 * (rings back to overwrite) by the answer, by no fdrd, or after 1 s. */
extern uint32_t fdr__buf_window;
void fdr__buf_window_end(void);
void fdr__buf_put(struct fdr__buf *b); /* back to the pool */
struct fdr__buf *fdr__buf_at(uint32_t index);
uint32_t fdr__buf_count(void);
/* The writer's slot of seq (trusts the header: its own). Readers use
 * fdr__ring_slot(b->hdr, &b->geom, seq) instead. */
char *fdr__buf_slot(const struct fdr__buf_hdr *h, uint64_t seq);
extern uint8_t fdr__trace_uuid[16];
/* In a forked child: unmaps every buffer (they are the parent's). */
void fdr__buf_forget_all(void);
/* ---- rings from fdrd (daemon.c) ----
 * A route is an fdrd trace the process records into, numbered by fdrd
 * from 1, in one of FDR__ROUTE_SLOTS slots (the slot is the trace's bit
 * in the sites' selections, registry.c). Writers compare their copy of
 * fdr__route_gen with it in the slow path and move (writer.c). Rings of a
 * route are not among the process's own (fdr__buf_at): fdrd writes them
 * out. Under their own lock (a leaf: writers take it inside their
 * tracing section), but the words read with acquire loads. */
#define FDR__ROUTE_SLOTS 32
/* Set while routes change (writer.c, fdr__writers_hold). */
extern uint32_t fdr__route_hold;
/* Waits (up to ~100 ms) while routes change: the site states are being
 * recomputed one by one, so that one (fdr_enabled's) may say yes while
 * another (the fdr_trace after it) does not yet. Not in a tracing section. */
void fdr__route_hold_wait(void);
extern uint32_t fdr__route_gen;                /* bumped by every change */
extern uint32_t fdr__routes[FDR__ROUTE_SLOTS]; /* route per slot, 0: none */
/* The route of the slot when its trace wants what threads recorded
 * before it came (FDR__ROUTE_BACKFILL), else 0. */
extern uint32_t fdr__route_backfill[FDR__ROUTE_SLOTS];
/* Maps a ring fdrd made (fd is kept): checks its header against `size`.
 * A ring of a current route or of one not announced yet (fdrd sends rings
 * before their route) is kept; one of a route that ended is unmapped.
 * Returns 0, or -EINVAL (then fd is closed). */
int fdr__buf_adopt(int fd, uint64_t size, uint32_t route);
/* Adds n events to what route lost (threads that ended before a ring of it
 * came): put in the count of a free ring of it that was used (fdrd reports
 * it), else reported by the next ring of the route taken. */
void fdr__buf_route_lost(uint32_t route, uint64_t n);
/* A free ring of route `route`, or NULL; asks for more when few are left.
 * fresh 0: one used before if there is one (unused rings are kept for
 * threads with past events to hand over: backfill needs a stream that has
 * no later ones); 1: an unused one if there is one; 2: only an unused one. */
struct fdr__buf *fdr__buf_get_routed(uint32_t route, int fresh);
/* Gives back a ring of a route: kept while its route is current, else
 * unmapped (fdrd keeps its own mapping). */
void fdr__buf_put_routed(struct fdr__buf *b);
/* Around fork() (init.c), after the writers lock. */
void fdr__buf_route_lock(void);
void fdr__buf_route_unlock(void);
/* Sets the route of a slot (0: none); free rings of ended routes are
 * unmapped. fdr__buf_drop_routes: every slot none (fdrd went away). */
void fdr__buf_set_route(unsigned slot, uint32_t route, int backfill);
void fdr__buf_drop_routes(void);
/* The eventfd rung when a routed ring is half full (fd is taken). It
 * replaces the previous one, whose number stays taken: a writer may be
 * ringing it. */
void fdr__buf_set_doorbell(int fd);
/* Unmaps a routed ring no list holds (a forked child's copy). */
void fdr__buf_unmap(struct fdr__buf *b);
void fdr__buf_ring_bell(void);
/* Called when the free rings of a route run low (route lock held). */
extern void (*fdr__buf_low_hook)(uint32_t route);

/* Called with each new buffer (writers lock held). Installed by init.c
 * before any buffer exists (the consumer's fdr__consumer_buffer_added):
 * the layer above is told without buffer.c calling up into it. */
extern void (*fdr__buf_added_hook)(const struct fdr__buf *b);

#endif
