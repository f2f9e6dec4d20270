/* SPDX-License-Identifier: MIT */
/* recorder/writer.h - writers, one per recording thread (writer.c), and
 * the list of them that controllers walk under the writers lock. */
#ifndef FDR_RECORDER_WRITER_H
#define FDR_RECORDER_WRITER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fdr/internal/fastpath.h"
#include "recorder/buffer.h"

/* A thread's ring of one more fdrd trace (route slot) than its primary:
 * events of that trace are copied into it in the slow path. */
struct fdr__lane {
    struct fdr__buf *buf;
    struct fdr__pkt *pkt; /* open packet, NULL when none */
    char *pos;
    char *tail;     /* the open packet's tail (lane_room): no loads through buf */
    uint64_t floor; /* the ring's time when it was opened: no event before */
    uint64_t limit; /* the open packet's ts_begin + FDR__TS_SPAN (lane_fits) */
};

struct fdr__writer {
    struct fdr__thread *self; /* the thread's TLS block */
    struct fdr__buf *buf;
    struct fdr__pkt *pkt; /* current packet, NULL when none is open */
    pid_t tid;
    struct fdr__writer *next, *prev;
    uint32_t user_enabled;  /* fdr_thread_set_tracing_enabled; under the lock */
    uint32_t barrier_ack;   /* section.c signal barrier: last round answered */
    uint32_t out_seen;      /* section.c: last wait round it was seen out */
    struct fdr__buf *local; /* its own ring; buf is this or a routed one */
    uint32_t route_gen;     /* fdr__route_gen when it last chose its ring */
    uint32_t past_gen;      /* the same, read by daemon.c (fdr__writers_unhold) */
    uint32_t route_wanting; /* slots routed with no ring free for them yet */
    uint32_t exiting;       /* its thread is ending: only unused rings */
    char *idle_pos;    /* its thread's pos when fdr's thread looked (fdr__writers_note) */
    uint32_t pslot;    /* primary slot + 1 when buf is a routed ring */
    uint32_t lanes_on; /* slots whose lane has a ring (not the primary) */
    /* Nested events (signal handlers) while the rings were being changed
     * (lanes_busy 1, or a move holding the writers) or a trace waited for
     * its ring, counted once they are not (writer.c, nested_keep):
     * nested_all not yet anywhere, nested_lanes in the primary only.
     * lanes_busy 2: the lanes are gone (thread exit). */
    uint32_t lanes_busy;
    uint64_t nested_lanes;
    uint64_t nested_all;
    uint32_t multi_sel; /* lanes the event being written is copied to */
    char *multi_start;  /* that event's first byte */
    uint64_t slow_ts;   /* the time of the event the slow path reserved */
    struct fdr__lane lane[FDR__ROUTE_SLOTS];
    uint32_t backfilled[FDR__ROUTE_SLOTS]; /* route it handed its past to */
    uint64_t local_lost0; /* its own ring's discarded events when it took it */
    uint64_t grow_after;  /* no larger own ring asked for before this time */
    uint64_t took_at;     /* when it took its own ring (writer.c, outgrown) */
    uint32_t grow_gen;    /* fdr__buf_routed_gen when no larger routed ring was free */
    char *scratch;        /* where an event not written in a ring is built */
    /* A slot waiting for a ring (fdrd sends them after the route, more on
     * request): since when, its own ring's discarded count then, and the
     * events of it lost meanwhile, put in the ring's count when it comes. */
    uint64_t want_since[FDR__ROUTE_SLOTS];
    uint64_t want_d0[FDR__ROUTE_SLOTS];
    uint64_t want_lost[FDR__ROUTE_SLOTS];
    /* Of those, the events recorded into its own ring while fdrd does not
     * hold it, shown to fdrd until handed over (writer.c, pending_add),
     * and the route they were shown for. */
    uint64_t pending[FDR__ROUTE_SLOTS];
    uint32_t pending_route[FDR__ROUTE_SLOTS];
    /* Events of the dead fdrd's ring it left in a slot (daemon.c: fdrd
     * died), put in the count of the slot's next ring. */
    uint64_t carry[FDR__ROUTE_SLOTS];
    /* The first ledger, when its events were counted in a ledger while
     * fdrd lacked its own ring (writer.c, unheld), and its entry (in that
     * ledger or another own ring's; NULL: entry 0 of the first). */
    struct fdr__ledger *ledger;
    struct fdr__ledger *ledger_in;
};

/* The events of a ring of a dead fdrd that are in no stream file and were
 * reported by no packet in one: those of its packets fdrd had not written
 * (consumed .. produced) and its discards since the last packet written
 * (out_reported). Its packets are closed. Queues the cut for the new fdrd
 * (buffer.h, fdr__buf_dead_counted). */
uint64_t fdr__writer_dead_lost(const struct fdr__buf *b);
/* Reports the count of fresh routed ring b in packets of thread tid: the
 * empty packet 0, then a header-only one (buffer.h, fdr__buf_carry_hook). */
void fdr__writer_carry_as(struct fdr__buf *b, uint32_t tid);

/* Routes change in three steps (daemon.c): fdr__writers_hold(1) makes
 * every event take the slow path, which counts it as discarded, until
 * fdr__writers_hold(0); in between the caller changes the registry and the
 * routes (buffer.c). Then each writer's next event moves it to the rings
 * of the routes. Writers lock not held. */
void fdr__writers_hold(int on);

extern pthread_mutex_t fdr__writers_lock;
extern struct fdr__writer *fdr__writers; /* list, under the lock */
extern uint32_t fdr__enabled_default;    /* for new threads */
/* Closes w's current packet (if it holds an event) and publishes it.
 * Caller is w's thread, or holds the writers lock with w quiesced. */
void fdr__writer_close_packet(struct fdr__writer *w, uint64_t now);
/* Frees a writer and its scratch area (a forked child frees its parent's,
 * init.c). */
void fdr__writer_free(struct fdr__writer *w);
/* When events were discarded since the last closed packet of w's buffer,
 * closes an empty packet that carries the count, so that readers see it.
 * Same callers as fdr__writer_close_packet, after it. -ENOSPC when the ring
 * is full (discard mode): write packets out and retry. */
int fdr__writer_carry_discards(struct fdr__writer *w, uint64_t now);
/* The same for a buffer no thread uses (in the pool); writers lock held. */
int fdr__buf_carry_discards(struct fdr__buf *b, uint64_t now);
/* What the writer tells the layers above it, through pointers that init.c
 * sets once, before any writer exists (until then they do nothing): the
 * consumer (a ring is full or half full: kick; a thread leaves a ring
 * that the consumer has fallen behind on: drain) and the crash handler (a
 * thread starts or stops recording: its alternate signal stack). A call
 * through one is as cheap as the direct call it replaces, and none is on
 * the inline fast path. */
struct fdr__writer_hooks {
    void (*kick)(void);
    int (*drain)(int refresh);
    void (*thread_start)(void);
    void (*thread_exit)(void);
};
extern struct fdr__writer_hooks fdr__writer_hooks;
/* Called by a thread that ends, before it gives its rings back: waits
 * (bounded) for a registration with fdrd under way (daemon.c), so that the
 * routes of the traces started already reach it first. */
extern void (*fdr__writer_settle_hook)(void);
/* Notes where each thread writes now, for fdr__writers_move(1). */
void fdr__writers_note(void);
/* The registration window has ended (daemon.c, after fdr__buf_window_end):
 * the consumer may write out the own ring of every thread that has moved
 * to the routes of the answer (its past handed over: backfill), the
 * others' once they move (reroute); with `all`, of every thread now (no
 * answer came: no route will want their past any more). */
void fdr__writers_unhold(int all);
/* Moves every writer still on the old routes (or waiting for a ring) to
 * the current ones, on its behalf: writers held and stopped meanwhile
 * (section.c). idle_only: only those that recorded nothing since the last
 * fdr__writers_note. The number moved. */
int fdr__writers_move(int idle_only);
/* The threads not on the current routes yet, or waiting for a ring of one
 * (fdrd sends them on request). */
int fdr__writers_behind(void);
/* w is on an old route or waits for a ring (and, with idle_only, has
 * recorded nothing since fdr__writers_note). Writers lock held. */
int fdr__writer_behind(const struct fdr__writer *w, uint32_t gen, int idle_only);
/* Moves w to the current routes now, on its thread's behalf (writers
 * stopped: fdr__section_quiesce); `now` is the caller's clock. */
void fdr__writer_move_now(struct fdr__writer *w, uint64_t now);
/* fdr__reserve_slow() once the library has started (api.c). */
char *fdr__writer_reserve(struct fdr__site *s, size_t payload, char **tail);
/* The calling thread's writer, created if needed; NULL when out of memory. */
struct fdr__writer *fdr__writer_self(void);
/* For raw events (provider.c): enters the tracing section and reserves a
 * payload of `payload` bytes for site s, like fdr__reserve(); finish with
 * fdr__commit(). NULL and *why < 0 when not recorded (see writer.c,
 * reserve()); a result with *why == -ENOSPC is only printed. */
char *fdr__reserve_raw(struct fdr__site *s, size_t payload, int *why, char **tail);
#endif
