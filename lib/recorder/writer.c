/* SPDX-License-Identifier: MIT */
/* writer.c - the writing side: one writer per thread, its packets, its exit.
 *
 * Each thread that records gets a writer: its TLS block (fdr__self, read by
 * the inline fast path), a buffer taken from the pool (buffer.c) and, at
 * any time, at most one open packet in that buffer.
 *
 * The fast path (include/fdr/internal/fastpath.h) only ever appends to the
 * open packet, below its tail (common/ring.h), and only while `end` is set:
 * the slow path sets it when it opens a packet or finds room in the open
 * one, controllers pull it down to NULL when they pause or disable
 * tracing (section.c). Everything else comes here, to fdr__reserve_slow():
 *
 *   - first use of a call site: register its event class (registry.c);
 *   - first event of a thread: create its writer, take a buffer;
 *   - the event does not fit: close the packet and open the next one. In
 *     discard mode the next one must have been written out by the consumer,
 *     otherwise the event is dropped and counted; in overwrite mode the
 *     oldest packet is reused;
 *   - printing: the event is built in a scratch area (or in the packet if
 *     it is also recorded) and fdr__commit_slow() prints it;
 *   - nested: a signal handler recorded while this thread was inside an
 *     event; the nested event is counted as discarded (hdr->nested).
 *
 * Closing a packet fills in its end time, content size and cumulative
 * discarded count, then publishes it with a release store of `produced`
 * (the consumer's acquire load pairs with it).
 *
 * When fdrd gives the process a route (a trace to record into, daemon.c),
 * each thread moves itself: fdr__writers_reroute pulls every `end` down,
 * and the next event of each thread, in the slow path, closes its packet
 * and takes a ring of the route (or its own ring back). No thread ever
 * writes into another's ring, and no test is added to the fast path.
 *
 * At thread exit (a pthread key destructor) the open packet is closed and
 * the buffer goes back to the pool: ten thousand short threads reuse a
 * handful of buffers. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr.h"
#include "common/iter.h"
#include "recorder/buffer.h"
#include "recorder/config.h"
#include "recorder/print.h"
#include "recorder/registry.h"
#include "recorder/section.h"
#include "recorder/writer.h"

__thread struct fdr__thread fdr__self __attribute__((tls_model("initial-exec")));

pthread_mutex_t fdr__writers_lock = PTHREAD_MUTEX_INITIALIZER;
struct fdr__writer *fdr__writers;
uint32_t fdr__enabled_default = 1;

static void no_hook(void) {}
static int no_drain(int refresh)
{
    (void)refresh;
    return 0;
}
struct fdr__writer_hooks fdr__writer_hooks = {no_hook, no_drain, no_hook, no_hook};

static pthread_key_t writer_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* Scratch space for events that are printed but not recorded. */
#define SCRATCH_SIZE (FDR_MAX_FIELDS * 4100 + 64)
/* In the writer, malloc'ed (not calloc'ed: its pages are touched only when
 * an event is built there): as a TLS array it would be zeroed by glibc in
 * every thread the program starts, 48 KiB of resident memory each, 48 MiB
 * for 1,000 threads that never print (bench: threads_1000). */
/* Nested events discarded before the thread had a writer (signal handler
 * during the thread's first event); moved to its buffer at creation. */
static __thread uint64_t nested_early;

static void thread_exit(void);
static void want_gone(struct fdr__writer *w, uint64_t seq);

static void writer_destructor(void *arg)
{
    (void)arg;
    thread_exit();
}

static void make_key(void)
{
    pthread_key_create(&writer_key, writer_destructor);
}

static void leave_section(struct fdr__thread *t)
{
    __atomic_store_n(&t->in_section, 0, __ATOMIC_RELEASE);
}

static void count_discarded(struct fdr__writer *w)
{
    if (w && w->buf)
        w->buf->hdr->discarded++;
}

static uint64_t discarded_total(const struct fdr__buf_hdr *h)
{
    return h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED);
}

/* The library has started (its entry points saw to it, api.c). */
static struct fdr__writer *writer_create(struct fdr__thread *t)
{
    pthread_once(&key_once, make_key);
    struct fdr__writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->scratch = malloc(SCRATCH_SIZE);
    if (!w->scratch) {
        free(w);
        return NULL;
    }
    w->self = t;
    w->tid = fdr__gettid();
    w->user_enabled = 1;
    pthread_mutex_lock(&fdr__writers_lock);
    w->buf = w->local = fdr__buf_get();
    w->route_gen = 0; /* != fdr__route_gen once a route was set: moves at once */
    if (!w->buf) {
        pthread_mutex_unlock(&fdr__writers_lock);
        free(w->scratch);
        free(w);
        return NULL;
    }
    w->next = fdr__writers;
    if (fdr__writers)
        fdr__writers->prev = w;
    fdr__writers = w;
    t->writer = w;
    /* Events nested in this thread's first event before it had a buffer
     * (flight-reentry test): counted now, in the first packet. */
    w->local_lost0 = discarded_total(w->buf->hdr);
    __atomic_fetch_add(&w->buf->hdr->nested, nested_early, __ATOMIC_RELAXED);
    nested_early = 0;
    __atomic_store_n(&t->enabled,
                     __atomic_load_n(&fdr__enabled_default, __ATOMIC_RELAXED),
                     __ATOMIC_RELEASE);
    pthread_mutex_unlock(&fdr__writers_lock);
    pthread_setspecific(writer_key, w);
    fdr__writer_hooks.thread_start(); /* alternate signal stack (crash.c) */
    return w;
}

struct fdr__writer *fdr__writer_self(void)
{
    struct fdr__thread *t = &fdr__self;
    return t->writer ? t->writer : writer_create(t);
}

static void fill_header(const struct fdr__writer *w, const struct fdr__buf *b,
                        struct fdr__pkt *p, uint64_t seq, uint64_t now,
                        uint64_t discarded)
{
    const struct fdr__buf_hdr *h = b->hdr;
    p->magic = FDR__CTF_MAGIC;
    memcpy(p->uuid, fdr__trace_uuid, 16);
    p->stream_instance_id = h->index;
    p->ts_begin = now;
    p->ts_end = now;
    p->content_size = sizeof *p * 8;
    p->packet_size = (uint64_t)h->packet_size * 8;
    p->seq = seq;
    p->discarded = discarded;
    p->pid = (uint32_t)fdr__pid;
    p->tid = (uint32_t)w->tid;
    char name[17] = {0};
    prctl(PR_GET_NAME, name);
    memcpy(p->thread_name, name, 16);
}

static int ring_full(struct fdr__buf_hdr *h)
{
    /* The mode of an own ring changes once, at the end of the
     * registration window (buffer.c, fdr__buf_window_end). */
    return __atomic_load_n(&h->mode, __ATOMIC_RELAXED) == FDR__MODE_DISCARD &&
           h->produced - __atomic_load_n(&h->consumed, __ATOMIC_ACQUIRE) >= h->n_packets;
}

static char *tail_of(const struct fdr__writer *w)
{
    return (char *)w->pkt + w->buf->hdr->packet_size - FDR__PKT_TAIL;
}

/* Lets the fast path write below `tail` again. A controller may pause this
 * thread meanwhile (enabled, fence, end = NULL; section.c): the fence
 * here and the one there make sure that either its NULL comes after this
 * store, or this thread sees the pause below and pulls `end` down itself. */
static void set_end(struct fdr__thread *t, char *tail)
{
    __atomic_store_n(&t->end, tail, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    /* The same for a change of route (fdr__writers_reroute stores the
     * generation, then a fence, then pulls `end` down). */
    if (__atomic_load_n(&t->enabled, __ATOMIC_RELAXED) != 1 ||
        __atomic_load_n(&fdr__route_hold, __ATOMIC_RELAXED) ||
        (t->writer && ((struct fdr__writer *)t->writer)->route_gen !=
                          __atomic_load_n(&fdr__route_gen, __ATOMIC_RELAXED)))
        __atomic_store_n(&t->end, (char *)NULL, __ATOMIC_RELAXED);
}

/* While routes change (daemon.c): no fast path; an event waits in the slow
 * path (out of its tracing section) for the change, counted as discarded
 * only if it lasts over ~100 ms. The fast path writes with the state it
 * loaded into the ring it has: only with every thread's `end` down, and
 * raised again only after the change, can no event reach a ring its
 * trace did not select. */

void fdr__writers_hold(int on)
{
    __atomic_store_n(&fdr__route_hold, (uint32_t)on, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* pairs with set_end's */
    pthread_mutex_lock(&fdr__writers_lock);
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        __atomic_store_n(&w->self->end, (char *)NULL, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&fdr__writers_lock);
}

/* Wakes whoever writes this ring out: fdrd for a routed ring, once until
 * fdrd has written something (a system call per discarded event would
 * make a full ring slower still). */
static void kick(const struct fdr__writer *w)
{
    struct fdr__buf *b = w->buf;
    if (!b->route) {
        fdr__writer_hooks.kick();
        return;
    }
    uint64_t consumed = __atomic_load_n(&b->hdr->consumed, __ATOMIC_RELAXED);
    if (b->bell_consumed == consumed + 1)
        return; /* rung already, and fdrd has not moved since */
    b->bell_consumed = consumed + 1;
    fdr__buf_ring_bell();
}

static void publish(struct fdr__buf_hdr *h, const struct fdr__pkt *p)
{
    h->reported = p->discarded;
    /* Observable: the packet is complete; pairs with the acquire load of
     * `produced` in the consumer and in snapshots. */
    __atomic_store_n(&h->produced, h->produced + 1, __ATOMIC_RELEASE);
}

/* Opens the packet of sequence number hdr->produced.
 *
 * events_discarded is the count when the packet is opened: discards happen
 * between packets (no room) or while one is open (nested, paused), and the
 * next packet reports them. The first packet of a stream must say 0
 * (babeltrace2 reads a non-zero first value as "an unknown number was
 * lost"), so if events were already lost, an empty packet 0 comes first. */
static int open_packet(struct fdr__writer *w, uint64_t now)
{
    struct fdr__buf_hdr *h = w->buf->hdr;
    if (ring_full(h)) {
        kick(w);
        return -ENOSPC;
    }
    uint64_t discarded = discarded_total(h);
    if (h->produced == 0 && discarded != 0) {
        struct fdr__pkt *p0 = (struct fdr__pkt *)fdr__buf_slot(h, 0);
        fill_header(w, w->buf, p0, 0, now, 0);
        publish(h, p0);
        if (ring_full(h))
            return -ENOSPC;
    }
    uint64_t seq = h->produced;
    if (w->route_wanting && seq >= w->buf->geom.n_packets)
        want_gone(w, seq - w->buf->geom.n_packets);
    struct fdr__pkt *p = (struct fdr__pkt *)fdr__buf_slot(h, seq);
    w->pkt = p;
    /* The tail first: a reader that sees the new header (seq) also sees
     * that nothing of it is committed yet, not the slot's last use. */
    struct fdr__pkt_tail *tl = (struct fdr__pkt_tail *)(void *)tail_of(w);
    tl->base = (uint64_t)(uintptr_t)p;
    __atomic_store_n(&tl->committed, (uint64_t)(uintptr_t)(p + 1), __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    fill_header(w, w->buf, p, seq, now, discarded);
    struct fdr__thread *t = w->self;
    __atomic_store_n(&t->pos, (char *)(p + 1), __ATOMIC_RELAXED);
    /* Only a thread raises its own `end`. A controller that opens a
     * paused thread's packet (flush carrying its discards) must not, not
     * even for the moment set_end takes to pull it down again: the thread,
     * seen out of its section, could start an event on that moment's
     * `end` and write while the controller closes the packet under it. */
    if (t == &fdr__self)
        set_end(t, tail_of(w));
    return 0;
}

static void close_packet(struct fdr__writer *w, uint64_t now, int even_empty)
{
    struct fdr__pkt *p = w->pkt;
    if (!p)
        return;
    struct fdr__thread *t = w->self;
    char *pos = __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
    __atomic_store_n(&t->pos, (char *)NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&t->end, (char *)NULL, __ATOMIC_RELAXED);
    w->pkt = NULL;
    if (pos == (char *)(p + 1) && !even_empty)
        return; /* empty: the slot is simply reused by the next open */
    struct fdr__buf_hdr *h = w->buf->hdr;
    if (now < p->ts_begin)
        now = p->ts_begin;
    p->ts_end = now;
    p->content_size = (uint64_t)(pos - (char *)p) * 8;
    publish(h, p);
    if (__atomic_load_n(&h->mode, __ATOMIC_RELAXED) == FDR__MODE_DISCARD &&
        (h->produced - __atomic_load_n(&h->consumed, __ATOMIC_RELAXED)) * 2 >=
            h->n_packets)
        kick(w);
}

void fdr__writer_close_packet(struct fdr__writer *w, uint64_t now)
{
    close_packet(w, now, 0);
}

int fdr__writer_carry_discards(struct fdr__writer *w, uint64_t now)
{
    struct fdr__buf_hdr *h = w->buf->hdr;
    if (w->pkt || discarded_total(h) == h->reported)
        return 0;
    int r = open_packet(w, now);
    if (r < 0)
        return r;
    close_packet(w, now, 1);
    return 0;
}

int fdr__buf_carry_discards(struct fdr__buf *b, uint64_t now)
{
    struct fdr__thread idle = {0};
    struct fdr__writer w = {.self = &idle, .buf = b, .tid = 0};
    return fdr__writer_carry_discards(&w, now);
}

/* ---- lanes: the rings of the other fdrd traces ------------------------------ */

static char *lane_tail(const struct fdr__lane *l)
{
    return l->tail;
}

static void lane_close(const struct fdr__writer *w, struct fdr__lane *l, uint64_t now)
{
    struct fdr__pkt *p = l->pkt;
    (void)w;
    if (!p)
        return;
    l->pkt = NULL;
    if (l->pos == (char *)(p + 1))
        return; /* empty: the slot is reused */
    if (now < p->ts_begin)
        now = p->ts_begin;
    p->ts_end = now;
    p->content_size = (uint64_t)(l->pos - (char *)p) * 8;
    struct fdr__buf_hdr *h = l->buf->hdr;
    publish(h, p);
    if (h->mode == FDR__MODE_DISCARD &&
        (h->produced - __atomic_load_n(&h->consumed, __ATOMIC_RELAXED)) * 2 >=
            h->n_packets)
        fdr__buf_ring_bell();
}

/* Room for `total` bytes in lane l, as make_room does for the primary. */
static char *lane_room(const struct fdr__writer *w, struct fdr__lane *l, size_t total,
                       uint64_t now)
{
    struct fdr__buf_hdr *h = l->buf->hdr;
    if (total > FDR__PKT_ROOM(h->packet_size))
        return NULL;
    if (l->pkt) {
        if ((size_t)(lane_tail(l) - l->pos) >= total)
            return l->pos;
        lane_close(w, l, now);
    }
    if (ring_full(h)) {
        fdr__buf_ring_bell();
        return NULL;
    }
    uint64_t discarded = discarded_total(h);
    if (h->produced == 0 && discarded != 0) {
        struct fdr__pkt *p0 = (struct fdr__pkt *)fdr__buf_slot(h, 0);
        fill_header(w, l->buf, p0, 0, now, 0);
        publish(h, p0);
        if (ring_full(h))
            return NULL;
    }
    /* As make_room: not before the ring's last packet (another thread's);
     * lanes_copy gives its events that time too. */
    l->floor = 0;
    if (h->produced)
        l->floor =
            ((const struct fdr__pkt *)(const void *)fdr__buf_slot(h, h->produced - 1))
                ->ts_end;
    if (now < l->floor)
        now = l->floor;
    struct fdr__pkt *p = (struct fdr__pkt *)fdr__buf_slot(h, h->produced);
    l->pkt = p;
    l->tail = (char *)p + l->buf->geom.packet_size - FDR__PKT_TAIL;
    struct fdr__pkt_tail *tl = (struct fdr__pkt_tail *)(void *)lane_tail(l);
    tl->base = (uint64_t)(uintptr_t)p;
    __atomic_store_n(&tl->committed, (uint64_t)(uintptr_t)(p + 1), __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    fill_header(w, l->buf, p, h->produced, now, discarded);
    l->pos = (char *)(p + 1);
    return l->pos;
}

/* Copies the event [start, end) into the lanes of `sel`. */
static void lanes_copy(struct fdr__writer *w, uint32_t sel, const char *start,
                       const char *end)
{
    uint64_t now;
    memcpy(&now, start + 2, 8);
    size_t len = (size_t)(end - start);
    for (; sel; sel &= sel - 1) {
        struct fdr__lane *l = &w->lane[__builtin_ctz(sel)];
        char *p = l->pkt && (size_t)(lane_tail(l) - l->pos) >= len
                      ? l->pos /* the common case: room in the open packet */
                      : lane_room(w, l, len, now);
        if (!p) {
            l->buf->hdr->discarded++;
            continue;
        }
        memcpy(p, start, len);
        if (now < l->floor)
            memcpy(p + 2, &l->floor, 8);
        l->pos = p + len;
        /* As fdr__commit: the committed position, after the event. */
        __atomic_store_n((uint64_t *)(void *)lane_tail(l) + 1,
                         (uint64_t)(uintptr_t)l->pos, __ATOMIC_RELEASE);
    }
}

/* Hands the events this thread recorded in its own ring to the routes of
 * the slots in `slots` (lanes with a ring), as far as the ring still holds
 * them: each event a route's selection takes is copied, in order, with its
 * time; packets of other threads (the ring was theirs before) stay. For a
 * trace started before the process registered (FDR__ROUTE_BACKFILL): the
 * program's first events are not lost to it. */
static void backfill(struct fdr__writer *w, uint32_t slots, uint64_t since,
                     uint64_t lost0)
{
    /* A ring another thread used already holds later events: its stream's
     * time would run backwards. Into such a ring the past is counted as
     * discarded instead (the ring came back from a thread that ended). */
    uint32_t fresh = 0;
    for (uint32_t s = slots; s; s &= s - 1) {
        const struct fdr__buf_hdr *lh = w->lane[__builtin_ctz(s)].buf->hdr;
        if (__atomic_load_n(&lh->produced, __ATOMIC_ACQUIRE) == 0 &&
            !w->lane[__builtin_ctz(s)].pkt)
            fresh |= s & -s;
    }
    const struct fdr__buf *b = w->local;
    const struct fdr__buf_hdr *h = b->hdr;
    struct fdr__classes t;
    fdr__registry_classes(&t);
    uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
    uint64_t first = produced > b->geom.n_packets ? produced - b->geom.n_packets : 0;
    for (uint64_t seq = first; seq < produced; seq++) {
        struct fdr__pkt hdr;
        const char *slot = fdr__ring_slot(h, &b->geom, seq);
        if (fdr__pkt_check(slot, &b->geom, seq, &hdr) < 0 ||
            hdr.tid != (uint32_t)w->tid || hdr.ts_end < since)
            continue;
        struct fdr__iter it;
        struct fdr__event ev;
        fdr__iter_init(&it, slot, hdr.content_size / 8, &t);
        while (fdr__iter_next(&it, &ev) > 0) {
            if (ev.ts < since)
                continue;
            uint32_t sel =
                __atomic_load_n(&fdr__class_sel[ev.id], __ATOMIC_RELAXED) & slots;
            if (sel & fresh)
                lanes_copy(w, sel & fresh, ev.payload - FDR__EVENT_HEADER_SIZE,
                           ev.payload + ev.len);
            for (uint32_t u = sel & ~fresh; u; u &= u - 1)
                w->lane[__builtin_ctz(u)].buf->hdr->discarded++;
        }
    }
    /* What it lost meanwhile (a full ring, a snapshot, the change of
     * route itself) is counted in each: of every class, so perhaps more
     * than the trace would have taken, never less. */
    uint64_t lost = discarded_total(h) - lost0;
    for (uint32_t s = slots; s && lost; s &= s - 1) {
        struct fdr__lane *l = &w->lane[__builtin_ctz(s)];
        l->buf->hdr->discarded += lost;
        /* A packet open in it, so that the count is reported even if no
         * event follows: a fresh ring first publishes an empty packet 0
         * (a stream's first packet says 0), and fdrd closes the open one
         * with the count when the route ends (common/drain.h). */
        if (!l->pkt)
            lane_room(w, l, 0, fdr__now());
    }
}

/* Events of this thread's own ring, in packet seq (about to be reused),
 * that the primary slot waiting for its ring would have taken: counted as
 * lost to it (backfill finds only what the ring still holds). */
static void want_gone(struct fdr__writer *w, uint64_t seq)
{
    uint32_t ps = w->route_wanting & ~w->want_counted;
    if (!ps || w->buf != w->local)
        return;
    unsigned i = (unsigned)__builtin_ctz(ps);
    const struct fdr__buf *b = w->local;
    struct fdr__pkt hdr;
    const char *slot = fdr__ring_slot(b->hdr, &b->geom, seq);
    if (fdr__pkt_check(slot, &b->geom, seq, &hdr) < 0 || hdr.tid != (uint32_t)w->tid ||
        hdr.ts_end < w->want_since[i])
        return;
    struct fdr__classes t;
    fdr__registry_classes(&t);
    struct fdr__iter it;
    struct fdr__event ev;
    fdr__iter_init(&it, slot, hdr.content_size / 8, &t);
    while (fdr__iter_next(&it, &ev) > 0)
        if (ev.ts >= w->want_since[i] &&
            (__atomic_load_n(&fdr__class_sel[ev.id], __ATOMIC_RELAXED) >> i & 1))
            w->want_lost[i]++;
}

/* Counts an event that lanes waiting for their ring would have taken. */
static void want_count(struct fdr__writer *w, uint32_t sel)
{
    for (uint32_t u = sel & w->want_counted; u; u &= u - 1)
        w->want_lost[__builtin_ctz(u)]++;
}

/* Moves w to the rings of the current routes (buffer.c), or back to its
 * own ring: its thread only, in the slow path. The primary (lowest) slot's
 * ring becomes w->buf, the fast path's; the other slots' rings are lanes.
 * Every packet open in a ring it leaves is closed; a routed ring goes back
 * to its route's free list (or is unmapped when the route has ended: fdrd
 * has its own mapping). A slot with no free ring is asked for more and
 * tried again at the next packet; meanwhile a primary without one records
 * into the thread's own ring (the flight recorder). A process that writes
 * a trace of its own (FDR_OUTPUT) keeps its own ring as the primary, and
 * every route is a lane. */
static void reroute(struct fdr__writer *w, uint64_t now)
{
    uint32_t gen = __atomic_load_n(&fdr__route_gen, __ATOMIC_ACQUIRE);
    uint32_t on = fdr__registry_routes_on();
    close_packet(w, now, 0);
    /* No writers lock here: a controller holding it may be waiting for
     * this thread to leave its section. The routed rings' lock is a leaf. */
    if (w->pslot) {
        w->lane[w->pslot - 1].pkt = NULL; /* its packet was w->pkt, closed */
        w->pslot = 0;
    }
    uint32_t was = w->route_wanting, late = 0;
    w->route_wanting = 0;
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++) {
        struct fdr__lane *l = &w->lane[i];
        uint32_t route = __atomic_load_n(&fdr__routes[i], __ATOMIC_ACQUIRE);
        if (l->buf) {
            lane_close(w, l, now);
            if (!(on >> i & 1) || l->buf->route != route) {
                fdr__buf_put_routed(l->buf);
                l->buf = NULL;
            }
        }
        if (!l->buf && (on >> i & 1) && route) {
            int past_to_give =
                (was >> i & 1) ||
                (__atomic_load_n(&fdr__route_backfill[i], __ATOMIC_RELAXED) == route &&
                 w->backfilled[i] != route);
            l->buf = fdr__buf_get_routed(route, w->exiting ? 2 : past_to_give);
            if (l->buf) {
                late |= was & 1u << i;
            } else {
                w->route_wanting |= 1u << i;
                if (!(was >> i & 1)) {
                    /* From now on; or from the start when the route
                     * takes its past too (backfill, below, once a ring
                     * comes). */
                    int all = __atomic_load_n(&fdr__route_backfill[i],
                                              __ATOMIC_RELAXED) == route &&
                              w->backfilled[i] != route;
                    w->want_since[i] = all ? 0 : now;
                    w->want_d0[i] = all ? w->local_lost0 : discarded_total(w->local->hdr);
                    w->want_lost[i] = 0;
                }
            }
        }
    }
    w->lanes_on = 0;
    uint32_t past = 0; /* slots that take this thread's past events */
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++) {
        struct fdr__lane *l = &w->lane[i];
        if (!l->buf)
            continue;
        w->lanes_on |= 1u << i;
        uint32_t bf = __atomic_load_n(&fdr__route_backfill[i], __ATOMIC_RELAXED);
        if (bf && bf == l->buf->route && w->backfilled[i] != bf) {
            w->backfilled[i] = bf;
            past |= 1u << i;
        }
    }
    if (past) {
        backfill(w, past, 0, w->local_lost0);
        /* The primary's ring is written through w->pkt from now on. */
        for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
            if (past >> i & 1)
                lane_close(w, &w->lane[i], now);
    }
    /* Rings that came late: the primary slot's events are in the own ring
     * since it waited (backfilled from then); a lane's were counted. */
    for (uint32_t u = late; u; u &= u - 1) {
        unsigned i = (unsigned)__builtin_ctz(u);
        if (!(w->want_counted >> i & 1) && !(past >> i & 1))
            backfill(w, 1u << i, w->want_since[i], w->want_d0[i]);
        w->lane[i].buf->hdr->discarded += w->want_lost[i];
        lane_close(w, &w->lane[i], now);
    }
    unsigned ps = on ? (unsigned)__builtin_ctz(on) : 0;
    /* The primary slot's events are recorded in the own ring while it
     * waits; the other slots' are counted (want_count). */
    w->want_counted = w->route_wanting;
    if (!fdr__cfg.output[0] && (w->route_wanting >> ps & 1))
        w->want_counted &= ~(1u << ps);
    /* FDR_OUTPUT (registry.c, compute_state): the own ring stays primary. */
    if (on && w->lane[ps].buf && !fdr__cfg.output[0]) {
        w->buf = w->lane[ps].buf;
        w->pslot = ps + 1;
        w->lanes_on &= ~(1u << ps);
    } else
        w->buf = w->local;
    w->route_gen = gen;
}

/* At thread exit: every lane closed and its ring given back. */
static void lanes_release(struct fdr__writer *w, uint64_t now)
{
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++) {
        struct fdr__lane *l = &w->lane[i];
        if (!l->buf)
            continue;
        if (w->pslot != i + 1) {
            lane_close(w, l, now);
            fdr__buf_put_routed(l->buf);
        }
        l->buf = NULL;
    }
    w->lanes_on = 0;
}

/* Finds room for `total` bytes in the current packet, switching packets if
 * needed. Returns the write position (and in *tail the packet's tail) or
 * NULL (event discarded). `end` may have been pulled down while the packet
 * is open (section.c): room is measured against the tail, and `end` set
 * again. */
static char *make_room(struct fdr__writer *w, size_t total, uint64_t *nowp, char **tail)
{
    uint64_t now = *nowp;
    struct fdr__thread *t = w->self;
    struct fdr__buf_hdr *h = w->buf->hdr;
    if (total > FDR__PKT_ROOM(h->packet_size))
        return NULL; /* can never fit */
    if (w->pkt) {
        char *pos = __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
        if ((size_t)(tail_of(w) - pos) >= total) {
            set_end(t, tail_of(w));
            *tail = tail_of(w);
            return pos;
        }
        fdr__writer_close_packet(w, now);
    }
    if (w->route_wanting)
        reroute(w, now);
    /* A ring another thread used (fdrd's rings pass from a thread that
     * ended to the next) may end later than this event's time, read
     * before the ring was taken: the event takes the ring's last time, so
     * that the stream's time never runs backwards. */
    h = w->buf->hdr;
    if (h->produced) {
        const struct fdr__pkt *last = (const void *)fdr__buf_slot(h, h->produced - 1);
        if (now < last->ts_end)
            *nowp = now = last->ts_end;
    }
    if (open_packet(w, now) < 0)
        return NULL;
    *tail = tail_of(w);
    return __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
}

/* The work of fdr__reserve_slow(); *why tells why the event is not recorded
 * (0 when it is): -EBUSY nested or paused, -ENODATA disabled, -ENOMEM no
 * writer, -ENOSPC no room (counted), -E2BIG too large to print. A result
 * with *why == -ENOSPC is an event that is only printed. */
static char *reserve(struct fdr__site *s, size_t payload, int *why, char **tail)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__writer *w = t->writer;
    *why = 0;
    *tail = NULL;
    if (payload == (size_t)-1) {
        /* Nested in another event of this thread (signal handler). The
         * section still belongs to the interrupted event: do not leave it. */
        if (w && w->buf)
            __atomic_fetch_add(&w->buf->hdr->nested, 1, __ATOMIC_RELAXED);
        else /* the interrupted event is this thread's first: no buffer yet */
            nested_early++;
        *why = -EBUSY;
        return NULL;
    }
    uint8_t st = fdr__site_state(s);
    if (st & FDR__S_NEW) {
        fdr__site_register(s);
        st = fdr__site_state(s);
    }
    if (!(st & (FDR__S_RECORD | FDR__S_PRINT | FDR__S_MULTI))) {
        *why = -ENODATA;
        goto out;
    }
    if (!w) {
        w = writer_create(t);
        if (!w) {
            *why = -ENOMEM;
            goto out;
        }
    }
    if (__atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE)) {
        /* Routes are changing (fdr__writers_hold: a few microseconds in
         * fdr's own thread). Wait for the change, out of the tracing
         * section and yielding, so that the event goes where the new
         * routes say: a program that records a burst and exits at once
         * would otherwise lose it to its trace. That thread holds no lock
         * a writer may hold and waits for nothing: on a busy machine it
         * may only wait for a CPU. Past ~100 ms it is counted below, not
         * written. */
        for (int i = 0; i < 1100 && __atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE);
             i++) {
            leave_section(t);
            if (i < 100)
                sched_yield();
            else {
                struct timespec ts = {0, 100000};
                nanosleep(&ts, NULL);
            }
            __atomic_store_n(&t->in_section, 1, __ATOMIC_RELAXED);
            fdr__barrier();
        }
        st = fdr__site_state(s); /* the change may select it, or not */
        if (!(st & (FDR__S_RECORD | FDR__S_PRINT | FDR__S_MULTI))) {
            *why = -ENODATA;
            goto out;
        }
    }
    uint32_t on = __atomic_load_n(&t->enabled, __ATOMIC_ACQUIRE);
    if (on != 1) {
        /* Paused by fdr itself (flush, snapshot): the event is lost and
         * must be counted. The controller may be reading the buffer, so
         * only the atomic counter is touched. Off by the user's choice
         * (fdr_set_tracing_enabled): not recorded, not counted. */
        if (on == FDR__PAUSED && (st & FDR__S_RECORD))
            __atomic_fetch_add(&w->buf->hdr->nested, 1, __ATOMIC_RELAXED);
        *why = on == FDR__PAUSED ? -EBUSY : -ENODATA;
        if (on == FDR__PAUSED) {
            /* A snapshot or flush is reading: this event is lost anyway,
             * so give the CPU to the controller, which on a machine with
             * more busy threads than cores would otherwise wait its turn
             * behind every one of them (issue 11: 64 threads, 2 cores). */
            leave_section(t);
            sched_yield();
            return NULL;
        }
        goto out;
    }
    if (__atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE)) {
        /* Routes are changing (fdr__writers_hold): counted, not written. */
        if (st & (FDR__S_RECORD | FDR__S_MULTI))
            __atomic_fetch_add(&w->buf->hdr->nested, 1, __ATOMIC_RELAXED);
        *why = -EBUSY;
        goto out;
    }
    size_t total = payload + FDR__EVENT_HEADER_SIZE;
    uint64_t now = fdr__now();
    char *p;
    if (w->route_gen != __atomic_load_n(&fdr__route_gen, __ATOMIC_ACQUIRE))
        reroute(w, now);
    /* The other traces that take this event and have a lane here. */
    uint32_t multi = 0;
    if (st & FDR__S_MULTI) {
        uint32_t all = __atomic_load_n(&fdr__class_sel[s->id], __ATOMIC_RELAXED);
        multi = all & w->lanes_on;
        if (w->want_counted)
            want_count(w, all);
    }
    if (st & FDR__S_RECORD) {
        p = make_room(w, total, &now, tail);
        if (!p) {
            count_discarded(w);
            *why = -ENOSPC;
            if (!(st & FDR__S_PRINT) && !multi)
                goto out;
            p = w->scratch; /* still printed or copied */
        }
    } else {
        if (total > SCRATCH_SIZE) {
            *why = -E2BIG;
            goto out;
        }
        p = w->scratch;
    }
    uint16_t id = s->id;
    memcpy(p, &id, 2);
    memcpy(p + 2, &now, 8);
    if (st & FDR__S_PRINT) {
        t->printing = s;
        t->print_start = p;
    }
    w->multi_sel = multi;
    w->multi_start = p;
    return p + FDR__EVENT_HEADER_SIZE;
out:
    leave_section(t);
    return NULL;
}

char *fdr__writer_reserve(struct fdr__site *s, size_t payload, char **tail)
{
    int why;
    return reserve(s, payload, &why, tail);
}

/* Raw events (provider.c) do not go through the inline fdr__reserve(): they
 * enter the tracing section here, as it does, and take the slow path every
 * time, which says why an event is not recorded. */
char *fdr__reserve_raw(struct fdr__site *s, size_t payload, int *why, char **tail)
{
    struct fdr__thread *t = &fdr__self;
    if (__atomic_load_n(&t->in_section, __ATOMIC_RELAXED))
        return reserve(s, (size_t)-1, why, tail); /* nested: counted, section kept */
    /* Observable: same protocol as fdr__reserve(); the acquire load of
     * `enabled` in reserve() pairs with the release in fdr__section_resume. */
    __atomic_store_n(&t->in_section, 1, __ATOMIC_RELAXED);
    fdr__barrier();
    return reserve(s, payload, why, tail);
}

/* Commits an event that fdr__commit() does not: printed ones (then `tail`
 * is NULL when the event is only printed, built in scratch), and those of
 * a site whose state was not simply "record" when the event began. */
void fdr__commit_multi(struct fdr__site *s, char *end, char *tail)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__writer *w = t->writer;
    /* The event starts at pos, not yet moved past it (fdr__commit does). */
    char *start = __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
    uint32_t all = w ? __atomic_load_n(&fdr__class_sel[s->id], __ATOMIC_RELAXED) : 0;
    if (all & (w ? w->lanes_on : 0))
        lanes_copy(w, all & w->lanes_on, start, end);
    if (w && w->want_counted)
        want_count(w, all);
    fdr__commit(end, tail);
}

void fdr__commit_slow(char *end, char *tail)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__writer *mw = t->writer;
    if (mw && mw->multi_sel) {
        /* One clock read, one encoding, a copy per other trace. */
        lanes_copy(mw, mw->multi_sel, mw->multi_start, end);
        mw->multi_sel = 0;
    }
    struct fdr__site *s = t->printing;
    if (s) {
        char *start = t->print_start;
        uint64_t ts;
        t->printing = NULL;
        memcpy(&ts, start + 2, 8);
        /* The writer caches the tid: no gettid system call per line. */
        const struct fdr__writer *w = t->writer;
        fdr__print_event(s, start + FDR__EVENT_HEADER_SIZE,
                         (size_t)(end - start) - FDR__EVENT_HEADER_SIZE, ts,
                         (uint32_t)(w ? w->tid : fdr__gettid()));
    }
    if (tail) {
        /* As in fdr__commit(). */
        __atomic_store_n((uint64_t *)(void *)tail + 1, (uint64_t)(uintptr_t)end,
                         __ATOMIC_RELEASE);
        __atomic_store_n(&t->pos, end, __ATOMIC_RELAXED);
    }
    leave_section(t);
}

/* At thread exit, the routes that came after its last event; then a slot
 * still waiting for its ring (a burst of new
 * threads outran the rings fdrd sends): up to ~50 ms for one, so that what
 * the thread recorded for the trace reaches it; then any ring of the
 * route, which counts what it cannot take. With none at all, its count
 * goes to the route (fdr__buf_route_lost). Writers lock held (no controller reads the
 * rings meanwhile). */
static void want_at_exit(struct fdr__writer *w)
{
    w->exiting = 1;
    /* Routes that came after its last event: its past is handed over now
     * (backfill), as its next event would have. */
    if (w->route_gen != __atomic_load_n(&fdr__route_gen, __ATOMIC_ACQUIRE) &&
        !__atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE))
        reroute(w, fdr__now());
    for (int i = 0; i < 50 && w->route_wanting; i++) {
        if (i) {
            pthread_mutex_unlock(&fdr__writers_lock);
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            pthread_mutex_lock(&fdr__writers_lock);
        }
        if (!__atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE))
            reroute(w, fdr__now());
    }
    /* No unused ring came: a used one takes the count of what it cannot
     * take in order (backfill), in this thread's stream still. */
    w->exiting = 0;
    if (w->route_wanting && !__atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE))
        reroute(w, fdr__now());
    if (w->route_wanting)
        fdr__writer_close_packet(w, fdr__now());
    for (uint32_t u = w->route_wanting; u; u &= u - 1) {
        unsigned i = (unsigned)__builtin_ctz(u);
        if (!(w->want_counted >> i & 1)) {
            /* Its events in the own ring since it waited. */
            const struct fdr__buf *b = w->local;
            uint64_t produced = __atomic_load_n(&b->hdr->produced, __ATOMIC_RELAXED);
            uint64_t first =
                produced > b->geom.n_packets ? produced - b->geom.n_packets : 0;
            for (uint64_t seq = first; seq < produced; seq++)
                want_gone(w, seq);
        }
        fdr__buf_route_lost(__atomic_load_n(&fdr__routes[i], __ATOMIC_ACQUIRE),
                            w->want_lost[i]);
    }
    w->route_wanting = w->want_counted = 0;
}

static void thread_exit(void)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__writer *w = t->writer;
    if (!w)
        return;
    pthread_mutex_lock(&fdr__writers_lock);
    want_at_exit(w);
    fdr__writer_close_packet(w, fdr__now());
    /* The next new thread takes this buffer. If the consumer has fallen
     * behind (a busy machine), the packets are written out now: short
     * threads following one another through one buffer would otherwise
     * fill it before the consumer runs, and lose events. The acquire pairs
     * with the release store of `consumed` in the consumer. */
    struct fdr__buf_hdr *h = w->buf->hdr;
    int own = !w->buf->route; /* a routed ring: fdrd writes it out */
    /* Someone writes this ring out: fdrd, or the consumer (an own ring in
     * discard mode without FDR_OUTPUT is one of the registration window's:
     * nobody does, waiting would only delay the thread's end). */
    int drained = !own || fdr__cfg.output[0];
    if (own && drained &&
        __atomic_load_n(&h->mode, __ATOMIC_RELAXED) == FDR__MODE_DISCARD &&
        (h->produced - __atomic_load_n(&h->consumed, __ATOMIC_ACQUIRE)) * 2 >=
            h->n_packets) {
        pthread_mutex_unlock(&fdr__writers_lock);
        fdr__writer_hooks.drain(0);
        pthread_mutex_lock(&fdr__writers_lock);
    }
    /* Report this thread's last discards. In discard mode the ring may be
     * full: give the consumer up to ~100 ms. Failing that, the count stays
     * in the buffer and its next packet (next thread, or exit) reports it. */
    for (int i = 0;
         i < 100 && fdr__writer_carry_discards(w, fdr__now()) == -ENOSPC && drained;
         i++) {
        pthread_mutex_unlock(&fdr__writers_lock);
        kick(w);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        pthread_mutex_lock(&fdr__writers_lock);
    }
    if (w->prev)
        w->prev->next = w->next;
    else
        fdr__writers = w->next;
    if (w->next)
        w->next->prev = w->prev;
    lanes_release(w, fdr__now());
    if (w->buf != w->local)
        fdr__buf_put_routed(w->buf);
    fdr__buf_put(w->local);
    t->writer = NULL;
    __atomic_store_n(&t->enabled, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&fdr__writers_lock);
    fdr__writer_hooks.kick();
    fdr__writer_hooks.thread_exit();
    free(w->scratch);
    free(w);
}
