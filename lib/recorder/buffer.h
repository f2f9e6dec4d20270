/* SPDX-License-Identifier: MIT */
/* recorder/buffer.h - the process's buffers (buffer.c): one ring of packets
 * per writing thread, created under the writers lock, kept in a pool when
 * their thread exits. */
#ifndef FDR_RECORDER_BUFFER_H
#define FDR_RECORDER_BUFFER_H

#include <stdint.h>

#include "common/io.h"
#include "common/ring.h"
#include "common/validate.h"

struct fdr__buf {
    struct fdr__buf_hdr *hdr;
    struct fdr__ring_geom geom; /* as created: what readers use, not hdr's */
    int fd;
    struct fdr__fd_id fd_id; /* what fd names: closed only if it still does */
    uint32_t index;
    struct fdr__buf *next_free;
    struct fdr__buf *route_next; /* a routed ring: buffer.c's list of them all */
    /* A routed ring a packet was opened in (writer.c; atomic, set once):
     * fdrd writes a count put in it out, with the packet or after it, even
     * when no thread writes the ring again (common/drain.h,
     * fdr__drain_open_packet; buffer.c, fdr__buf_route_lost). */
    uint32_t opened;
    int out_fd;               /* stream file, consumer only */
    struct fdr__fd_id out_id; /* what out_fd names (common/io.h) */
    int bad_ring;             /* its ring header was found corrupt, consumer only */
    uint32_t route;           /* 0: the process's own; else the fdrd route it came with */
    uint64_t bell_consumed;   /* its `consumed` + 1 when the doorbell was rung */
    /* Non-zero: the consumer (FDR_OUTPUT, fdr_flush too) writes the
     * ring's packets out but frees no slot, because what its thread
     * recorded may still be handed to fdrd's traces (backfill, writer.c):
     * a written packet's slot reused took its events from fdrd's trace
     * and its count. Set
     * when a thread takes the ring in the registration window, cleared
     * once the thread has moved to the routes that came (writer.c), when
     * the registration ends without an answer, and when the ring is put
     * back. A held ring in discard mode that fills counts what it
     * cannot take, as always. */
    uint32_t held;
    /* Made in the registration window: handed to fdrd (daemon.c), which
     * copies what the process recorded there before its route, should the
     * process end first without handing it over (docs/daemon.md). */
    uint32_t early;
    /* An early ring fdrd holds: its OWN_RING reached fdrd's socket
     * (daemon.c, atomic). Until then its thread records nothing in it
     * while the window lasts, and counts in fdr__buf_ledger (writer.c). */
    uint32_t sent;
    uint32_t grow; /* a routed ring for threads that fill theirs (fdr__buf_adopt) */
    /* Left to fdrd by a thread that ended without handing its past over
     * (writer.c, want_at_exit): out of the pool, and a packet of it reused
     * (a flush's packet carrying its discards) is counted for fdrd
     * (writer.c, early_gone). */
    uint32_t kept;
};

/* The ledger of the first own ring fdrd holds (common/ring.h), NULL while
 * there is none (daemon.c sets it; atomic). */
extern struct fdr__ledger *fdr__buf_ledger;

/* A small ring (buffer.c), from the pool or new, for a new thread. */
struct fdr__buf *fdr__buf_get(void);
/* A larger ring than `old` for a thread that outgrew it (writer.c): the
 * largest free one, or a new one of FDR_BUFFER_SIZE (halved while FDR_MEMORY
 * has no room for it), whichever is larger; NULL when neither is larger
 * than `old`. The caller puts `old` back (fdr__buf_put). Writers lock held. */
struct fdr__buf *fdr__buf_grow(const struct fdr__buf *old);

/* Whether threads start with the smallest ring and grow (buffer.c): the
 * flight recorder in memory (overwrite mode, no FDR_OUTPUT) and writing
 * to disk (FDR_OUTPUT, discard mode). */
int fdr__buf_starts_small(void);
/* Makes a ring ahead, into the pool, for the first thread that records
 * (daemon.c hands it to fdrd at start); writers lock held. */
void fdr__buf_spare(void);
/* Rings made, less that one while no thread took it. */
uint32_t fdr__buf_used(void);
/* The registration window (daemon.c): from the start of a process that
 * finds fdrd's socket until fdrd has answered its class table (the routes
 * of the traces started then came before the answer), own rings of a
 * flight recorder are made in discard mode, and the consumer of a
 * process with FDR_OUTPUT holds the rings taken meanwhile (`held`): a
 * trace started before the process gets its first events handed over
 * (backfill), and those its ring could not keep counted, instead of
 * overwritten or freed uncounted. Ended (rings back to overwrite) by the
 * answer, or by no fdrd (no connection, or it ended); never on a timer. */
extern uint32_t fdr__buf_window;
void fdr__buf_window_end(void);
/* Clears `held` on every buffer of the process (writers lock held). */
void fdr__buf_unhold_all(void);
void fdr__buf_put(struct fdr__buf *b); /* back to the pool */
struct fdr__buf *fdr__buf_at(uint32_t index);
uint32_t fdr__buf_count(void);
/* The writer's slot of seq, by the geometry the buffer was made with
 * (b->geom), never its header's: the program may write over that. */
char *fdr__buf_slot(const struct fdr__buf *b, uint64_t seq);
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
/* Non-zero while routes change (writer.c, fdr__writers_hold: a count of
 * the threads holding). */
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
/* Maps a ring fdrd made (fd is kept): checks its header against `size`;
 * `grow`: one for a thread that fills its ring (fdr__buf_grow_routed).
 * A ring of a current route or of one not announced yet (fdrd sends rings
 * before their route) is kept; one of a route that ended is unmapped.
 * Returns 0, or -EINVAL (then fd is closed). */
int fdr__buf_adopt(int fd, uint64_t size, uint32_t route, int grow);
/* Adds n events, lost by thread tid, to what route lost (threads that
 * ended before a ring of it came, a dead fdrd's rings): put in the count
 * of a ring of it that has published a packet (free, or in a thread's
 * hands: its next packet reports it, or fdrd at the route's or the
 * process's end), else reported at once in a fresh free ring
 * (fdr__buf_carry_hook), else, with no ring of the route at all, by the
 * first ring of it that comes (fdr__buf_adopt) or is taken. Dropped only
 * when the route has ended: its trace is closed. */
void fdr__buf_route_lost(uint32_t route, uint64_t n, uint32_t tid);
/* What route_lost still holds for routes that are live (no ring of them
 * came): taken, for the process's end (daemon.c sends each to fdrd:
 * LOST). Up to max, the number returned. */
struct fdr__lost_count {
    uint32_t route, tid;
    uint64_t n, ts; /* ts: of the last loss */
};
unsigned fdr__buf_lost_take(struct fdr__lost_count *out, unsigned max);
/* Events a thread waiting for a ring of `route` recorded into its own
 * ring, which fdrd does not hold, to hand them over when a ring comes
 * (writer.c): delta more (or fewer, once handed over or counted) shown
 * beside the route's kept count, where fdrd reads it however the process
 * ends. A kill between a hand-over and its -delta counts them twice,
 * never not at all. */
void fdr__buf_route_pending(uint32_t route, int64_t delta, uint32_t tid);
/* Publishes, in fresh free ring b (route lock held, no thread writes it),
 * the empty packet 0 of its stream and a header-only packet reporting its
 * count (nested), both in the name of thread tid (writer.c,
 * fdr__writer_carry_as; set by daemon.c: writer.c is a layer above). */
extern void (*fdr__buf_carry_hook)(struct fdr__buf *b, uint32_t tid);
/* A free ring of route `route`, or NULL; asks for more when few are left.
 * fresh 0: one used before if there is one (unused rings are kept for
 * threads with past events to hand over: backfill needs a stream that has
 * no later ones); 1: an unused one if there is one; 2: only an unused one. */
struct fdr__buf *fdr__buf_get_routed(uint32_t route, int fresh);
/* A free ring of old's route kept for growth and larger than old (fdrd
 * keeps one ready for a discard trace whose rings grow: daemon/collect.c,
 * route_spare), the largest, or NULL. fdr__buf_get_routed never gives
 * those: a thread gets one only once it fills its ring. */
struct fdr__buf *fdr__buf_grow_routed(const struct fdr__buf *old);
/* Bumped when a routed ring becomes free (fdrd sent it, or a thread gave
 * it back): a thread that found none larger looks again only then. */
extern uint32_t fdr__buf_routed_gen;
/* Gives back a ring of a route: kept while its route is current, else
 * unmapped (fdrd keeps its own mapping). */
void fdr__buf_put_routed(struct fdr__buf *b);
/* Around fork() (init.c), after the writers lock. */
void fdr__buf_route_lock(void);
void fdr__buf_route_unlock(void);
/* Sets the route of a slot (0: none); free rings of ended routes are
 * unmapped (those of a dead fdrd counted first, fdr__buf_dead_lost_hook). */
void fdr__buf_set_route(unsigned slot, uint32_t route, int backfill);
/* Routes up to this number were made by an fdrd that died (daemon.c):
 * nobody writes their rings out any more. */
extern uint32_t fdr__route_dead_max;
/* Counts the events of a free ring of a dead fdrd that reached no stream
 * file (writer.c, fdr__writer_dead_lost; set by daemon.c: writer.c is a
 * layer above this one). */
extern uint64_t (*fdr__buf_dead_lost_hook)(const struct fdr__buf *b);
/* What a dead ring's count assumed: packets from `consumed` on are not in
 * stream `index` of its route's trace. Queued (fdr__buf_dead_counted,
 * called by fdr__writer_dead_lost; then fdr__buf_dead_hook) for daemon.c,
 * which takes them (fdr__buf_dead_take) and tells the new fdrd. */
struct fdr__dead_cut {
    uint32_t route, index;
    uint64_t consumed;
};
void fdr__buf_dead_counted(uint32_t route, uint32_t index, uint64_t consumed);
unsigned fdr__buf_dead_take(struct fdr__dead_cut *out, unsigned max);
extern void (*fdr__buf_dead_hook)(void);
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
/* Called when a ring is made in the registration window (writers lock
 * held): daemon.c hands it to fdrd at once, without waiting. */
extern void (*fdr__buf_early_hook)(void);

#endif
