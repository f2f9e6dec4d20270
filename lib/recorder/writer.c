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
 * A thread that records nothing more is moved by fdr's own thread
 * (fdr__writers_move, with every writer held and stopped), as flush
 * closes the packets of others.
 *
 * At thread exit (a pthread key destructor) the open packet is closed and
 * the buffer goes back to the pool: ten thousand short threads reuse a
 * handful of buffers. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr.h"
#include "common/iter.h"
#include "recorder/buffer.h"
#include "recorder/clock.h"
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
void (*fdr__writer_settle_hook)(void) = no_hook;

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
static void want_gone(struct fdr__writer *w, uint64_t seq, uint32_t copied);
static void early_gone(const struct fdr__buf *b, uint64_t seq, int copied);
static uint32_t copied_slots(const struct fdr__writer *w);

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

/* The scratch area is mapped, not taken from the heap: malloc would write
 * the heap's top chunk header past its 48 KiB, a page fault (~40 us on a
 * virtualised guest) at each thread's first event, for an area that is
 * touched only when an event is printed or finds no room. */
void fdr__writer_free(struct fdr__writer *w)
{
    if (w->scratch)
        munmap(w->scratch, SCRATCH_SIZE);
    free(w);
}

/* The library has started (its entry points saw to it, api.c). */
static struct fdr__writer *writer_create(struct fdr__thread *t)
{
    pthread_once(&key_once, make_key);
    struct fdr__writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    void *scratch = mmap(NULL, SCRATCH_SIZE, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (scratch == MAP_FAILED) {
        free(w);
        return NULL;
    }
    w->scratch = scratch;
    w->self = t;
    w->tid = fdr__gettid();
    w->user_enabled = 1;
    w->took_at = fdr__now();
    pthread_mutex_lock(&fdr__writers_lock);
    w->buf = w->local = fdr__buf_get();
    w->route_gen = 0; /* != fdr__route_gen once a route was set: moves at once */
    if (!w->buf) {
        pthread_mutex_unlock(&fdr__writers_lock);
        fdr__writer_free(w);
        return NULL;
    }
    w->next = fdr__writers;
    if (fdr__writers)
        fdr__writers->prev = w;
    fdr__writers = w;
    t->writer = w;
    /* Events of signal handlers nested in this thread's first event,
     * before it had a buffer: counted now, in the first packet. */
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
    p->magic = FDR__CTF_MAGIC;
    memcpy(p->uuid, fdr__trace_uuid, 16);
    p->stream_instance_id = b->geom.index;
    p->ts_begin = now;
    p->ts_end = now;
    p->content_size = sizeof *p * 8;
    p->packet_size = (uint64_t)b->geom.packet_size * 8;
    p->seq = seq;
    p->discarded = discarded;
    p->pid = (uint32_t)fdr__pid;
    p->tid = (uint32_t)w->tid;
    char name[17] = {0};
    prctl(PR_GET_NAME, name);
    memcpy(p->thread_name, name, 16);
}

/* Every size and count the writer uses is the buffer's geometry as it was
 * made (b->geom), never the header page's copy: a program that writes over
 * its ring must not make the writer write outside it (issue 25). The
 * header's counters (produced, consumed) only ever pick a slot modulo
 * n_packets. */
static int ring_full(const struct fdr__buf *b)
{
    const struct fdr__buf_hdr *h = b->hdr;
    /* The mode of an own ring changes once, at the end of the
     * registration window (buffer.c, fdr__buf_window_end). */
    return __atomic_load_n(&h->mode, __ATOMIC_RELAXED) == FDR__MODE_DISCARD &&
           h->produced - __atomic_load_n(&h->consumed, __ATOMIC_ACQUIRE) >=
               b->geom.n_packets;
}

static char *tail_of(const struct fdr__writer *w)
{
    return (char *)w->pkt + w->buf->geom.packet_size - FDR__PKT_TAIL;
}

/* Lets the fast path write below `tail` again. A controller may pause this
 * thread meanwhile (enabled, fence, end = NULL; section.c): the fence
 * here and the one there make sure that either its NULL comes after this
 * store, or this thread sees the pause below and pulls `end` down itself. */
static void set_end(struct fdr__thread *t, char *tail)
{
    /* The packet's time limit first: `end` lets the fast path in. */
    const struct fdr__writer *w = t->writer;
    if (w && w->pkt)
        __atomic_store_n(&t->limit, w->pkt->ts_begin + FDR__TS_SPAN - 1,
                         __ATOMIC_RELAXED);
    __atomic_store_n(&t->end, tail, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    /* The same for a change of route (fdr__writers_reroute stores the
     * generation, then a fence, then pulls `end` down). */
    if (__atomic_load_n(&t->enabled, __ATOMIC_RELAXED) != 1 ||
        __atomic_load_n(&fdr__route_hold, __ATOMIC_RELAXED) ||
        (w && (w->route_gen != __atomic_load_n(&fdr__route_gen, __ATOMIC_RELAXED) ||
               __atomic_load_n(&w->nested_lanes, __ATOMIC_RELAXED) ||
               __atomic_load_n(&w->nested_all, __ATOMIC_RELAXED))))
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
    /* A count: fdrd's thread and an exiting one (fdr__writers_move) may
     * hold at the same time, and one must not let go of the other's. */
    if (on)
        __atomic_add_fetch(&fdr__route_hold, 1, __ATOMIC_RELAXED);
    else
        __atomic_sub_fetch(&fdr__route_hold, 1, __ATOMIC_RELAXED);
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

/* A packet is open in routed ring b: fdrd will write a count put in it
 * out (buffer.h, opened). Slow path: once per packet. */
static void mark_opened(struct fdr__buf *b)
{
    if (b->route && !__atomic_load_n(&b->opened, __ATOMIC_RELAXED))
        __atomic_store_n(&b->opened, 1, __ATOMIC_RELEASE);
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
    if (ring_full(w->buf)) {
        kick(w);
        return -ENOSPC;
    }
    uint64_t discarded = discarded_total(h);
    if (h->produced == 0 && discarded != 0) {
        struct fdr__pkt *p0 = (struct fdr__pkt *)fdr__buf_slot(w->buf, 0);
        fill_header(w, w->buf, p0, 0, now, 0);
        publish(h, p0);
        if (ring_full(w->buf))
            return -ENOSPC;
    }
    uint64_t seq = h->produced;
    /* Not over this thread's own past while it has not moved to the
     * routes that changed: one that wants the past (a trace started before
     * the process) copies it from this ring when the thread moves, at its
     * next event. The registration window's end turns the ring to
     * overwrite right after the routes change (daemon.c, window_end): a
     * thread between its look at the routes (reserve) and here wrote over
     * the ring's oldest packet, which the hand-over then missed, uncounted
     * (4,672 events, one thread's first packet, in 1 run of 2 of fdr-bench's
     * 8 programs through fdrd). This event is counted as discarded; the
     * next one moves the thread. */
    if (w->buf == w->local && seq >= w->buf->geom.n_packets &&
        w->route_gen != __atomic_load_n(&fdr__route_gen, __ATOMIC_ACQUIRE))
        return -ENOSPC;
    uint32_t copied = w->buf == w->local && w->route_wanting ? copied_slots(w) : 0;
    if (w->route_wanting && seq >= w->buf->geom.n_packets)
        want_gone(w, seq - w->buf->geom.n_packets, copied);
    if (w->buf->early && seq >= w->buf->geom.n_packets)
        early_gone(w->buf, seq - w->buf->geom.n_packets, copied != 0);
    struct fdr__pkt *p = (struct fdr__pkt *)fdr__buf_slot(w->buf, seq);
    w->pkt = p;
    /* The tail first: a reader that sees the new header (seq) also sees
     * that nothing of it is committed yet, not the slot's last use. */
    struct fdr__pkt_tail *tl = (struct fdr__pkt_tail *)(void *)tail_of(w);
    tl->base = (uint64_t)(uintptr_t)p;
    __atomic_store_n(&tl->committed, (uint64_t)(uintptr_t)(p + 1), __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    fill_header(w, w->buf, p, seq, now, discarded);
    mark_opened(w->buf);
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
            w->buf->geom.n_packets)
        kick(w);
}

void fdr__writer_close_packet(struct fdr__writer *w, uint64_t now)
{
    close_packet(w, now, 0);
}

/* Events the consumer could not write (a full disk: common/drain.h,
 * out_lost) that no packet of the stream file reports yet: the next packet
 * written reports them, but a stream may get none (a small ring retired
 * on a full disk that no thread takes again: buffer.c). Read while the
 * consumer may be writing: at worst one empty packet too many. */
static int lost_unreported(const struct fdr__buf_hdr *h)
{
    uint64_t lost = __atomic_load_n(&h->out_lost, __ATOMIC_RELAXED);
    return lost &&
           __atomic_load_n(&h->out_reported, __ATOMIC_RELAXED) < h->reported + lost;
}

int fdr__writer_carry_discards(struct fdr__writer *w, uint64_t now)
{
    struct fdr__buf_hdr *h = w->buf->hdr;
    if (w->pkt || (discarded_total(h) == h->reported && !lost_unreported(h)))
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
    /* The packet names the thread that wrote the ring last: whose events
     * it reports lost (a small ring retired, writing to disk). */
    struct fdr__pkt last = {0};
    uint64_t produced = b->hdr->produced;
    if (produced)
        memcpy(&last, fdr__buf_slot(b, produced - 1), sizeof last);
    struct fdr__writer w = {.self = &idle, .buf = b, .tid = (pid_t)last.tid};
    return fdr__writer_carry_discards(&w, now);
}

void fdr__writer_carry_as(struct fdr__buf *b, uint32_t tid)
{
    /* Nobody writes the ring (free, under the route lock): a writer of
     * its own, as fdr__buf_carry_discards. open_packet publishes the
     * empty packet 0 first, the stream's first packet saying 0. */
    struct fdr__thread idle = {0};
    struct fdr__writer w = {.self = &idle, .buf = b, .tid = (pid_t)tid};
    fdr__writer_carry_discards(&w, fdr__now());
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
    if (l->pos == (char *)(p + 1) && p->discarded == l->buf->hdr->reported)
        return; /* empty, no count to report: the slot is reused */
    if (now < p->ts_begin)
        now = p->ts_begin;
    p->ts_end = now;
    p->content_size = (uint64_t)(l->pos - (char *)p) * 8;
    struct fdr__buf_hdr *h = l->buf->hdr;
    publish(h, p);
    if (h->mode == FDR__MODE_DISCARD &&
        (h->produced - __atomic_load_n(&h->consumed, __ATOMIC_RELAXED)) * 2 >=
            l->buf->geom.n_packets)
        fdr__buf_ring_bell();
}

static char *lane_room(const struct fdr__writer *w, struct fdr__lane *l, size_t total,
                       uint64_t now);

/* Whether lane l's open packet has room for `total` more bytes and holds
 * the time `now` (fastpath.h, FDR__TS_SPAN): what an event copied into
 * another trace costs when it does, inlined in lanes_copy (4 traces:
 * every event three times). */
static inline int lane_fits(const struct fdr__lane *l, size_t total, uint64_t now)
{
    return (size_t)(l->tail - l->pos) >= total &&
           (now < l->floor ? l->floor : now) < l->limit;
}

/* Closes lane l's packet, then reports in a packet of this thread the
 * discards counted since it was opened: the next packet of the ring may
 * be another thread's (the ring passes on at this thread's end), and a
 * reader gives a count to the packet that reports it. A hand-over counted
 * into the ring (backfill) was reported in whichever thread's packet came
 * next: 16 threads' 2,000 events each on one thread (FDR_OUTPUT, 100
 * threads under fdrd). */
static void lane_report(const struct fdr__writer *w, struct fdr__lane *l, uint64_t now)
{
    lane_close(w, l, now);
    if (discarded_total(l->buf->hdr) != l->buf->hdr->reported && lane_room(w, l, 0, now))
        lane_close(w, l, now);
}

/* Room for `total` bytes in lane l, in a packet that holds the time `now`
 * (fastpath.h, FDR__TS_SPAN), as make_room does for the primary. */
static char *lane_room(const struct fdr__writer *w, struct fdr__lane *l, size_t total,
                       uint64_t now)
{
    struct fdr__buf_hdr *h = l->buf->hdr;
    if (total > FDR__PKT_ROOM(l->buf->geom.packet_size))
        return NULL;
    if (l->pkt) {
        if (lane_fits(l, total, now))
            return l->pos;
        lane_close(w, l, now);
    }
    if (ring_full(l->buf)) {
        fdr__buf_ring_bell();
        return NULL;
    }
    uint64_t discarded = discarded_total(h);
    if (h->produced == 0 && discarded != 0) {
        struct fdr__pkt *p0 = (struct fdr__pkt *)fdr__buf_slot(l->buf, 0);
        fill_header(w, l->buf, p0, 0, now, 0);
        publish(h, p0);
        if (ring_full(l->buf))
            return NULL;
    }
    /* As make_room: not before the ring's last packet (another thread's);
     * lanes_copy gives its events that time too. */
    l->floor = 0;
    if (h->produced)
        l->floor = ((const struct fdr__pkt *)(const void *)fdr__buf_slot(l->buf,
                                                                         h->produced - 1))
                       ->ts_end;
    if (now < l->floor)
        now = l->floor;
    struct fdr__pkt *p = (struct fdr__pkt *)fdr__buf_slot(l->buf, h->produced);
    l->pkt = p;
    l->tail = (char *)p + l->buf->geom.packet_size - FDR__PKT_TAIL;
    struct fdr__pkt_tail *tl = (struct fdr__pkt_tail *)(void *)lane_tail(l);
    tl->base = (uint64_t)(uintptr_t)p;
    __atomic_store_n(&tl->committed, (uint64_t)(uintptr_t)(p + 1), __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    fill_header(w, l->buf, p, h->produced, now, discarded);
    mark_opened(l->buf);
    l->pos = (char *)(p + 1);
    l->limit = now + FDR__TS_SPAN; /* fill_header's ts_begin: not reread from the ring */
    return l->pos;
}

/* The first and the last `width` bytes of [s, s + len) to d, len >= width:
 * with `width` a constant, plain moves and no call (d and s are in
 * different rings: they never overlap). */
static inline __attribute__((always_inline)) void move_ends(char *d, const char *s,
                                                            size_t len, size_t width)
{
    memcpy(d, s, width);
    memcpy(d + len - width, s + len - width, width);
}

/* memcpy for an event of `len` >= FDR__EVENT_HEADER_SIZE bytes, with no
 * call for the small ones (two ints: 14 bytes, int + double + 16-byte
 * string: 35), which the copies into other traces are. */
static inline void copy_event(char *d, const char *s, size_t len)
{
    if (len < 8)
        move_ends(d, s, len, 4);
    else if (len <= 16)
        move_ends(d, s, len, 8);
    else if (len <= 32)
        move_ends(d, s, len, 16);
    else if (len <= 64)
        move_ends(d, s, len, 32);
    else
        memcpy(d, s, len);
}

/* Copies the event [start, end) of time `now` into the lanes of `sel`. */
static void lanes_copy(struct fdr__writer *w, uint32_t sel, const char *start,
                       const char *end, uint64_t now)
{
    size_t len = (size_t)(end - start);
    for (; sel; sel &= sel - 1) {
        struct fdr__lane *l = &w->lane[__builtin_ctz(sel)];
        char *p = l->pkt && lane_fits(l, len, now) ? l->pos : lane_room(w, l, len, now);
        if (!p) {
            l->buf->hdr->discarded++;
            continue;
        }
        copy_event(p, start, len);
        if (now < l->floor) {
            uint32_t low = (uint32_t)l->floor;
            memcpy(p + 2, &low, 4);
        }
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
/* The slots whose ring no thread used yet: the past is copied into
 * those. A ring another thread used already holds later events: its
 * stream's time would run backwards. Into such a ring the past is counted
 * as discarded instead (the ring came back from a thread that ended). */
static uint32_t fresh_slots(const struct fdr__writer *w, uint32_t slots)
{
    uint32_t fresh = 0;
    for (uint32_t s = slots; s; s &= s - 1) {
        const struct fdr__buf_hdr *lh = w->lane[__builtin_ctz(s)].buf->hdr;
        if (__atomic_load_n(&lh->produced, __ATOMIC_ACQUIRE) == 0 &&
            !w->lane[__builtin_ctz(s)].pkt)
            fresh |= s & -s;
    }
    return fresh;
}

/* FDR_TEST_KILL_HANDING (tests only): SIGKILL once the past's copy made
 * that many events, or before its mark (reroute). */
static void handing_kill(uint64_t copied)
{
    if (fdr__cfg.test_kill_handing && copied >= fdr__cfg.test_kill_handing)
        raise(SIGKILL);
}

static void backfill(struct fdr__writer *w, uint32_t slots, uint64_t since,
                     uint64_t lost0, uint64_t extra)
{
    uint32_t fresh = fresh_slots(w, slots);
    uint64_t copied = 0;
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
            if (sel & fresh) {
                lanes_copy(w, sel & fresh, ev.payload - FDR__EVENT_HEADER_SIZE,
                           ev.payload + ev.len, ev.ts);
                handing_kill(++copied);
            }
            for (uint32_t u = sel & ~fresh; u; u &= u - 1)
                w->lane[__builtin_ctz(u)].buf->hdr->discarded++;
        }
    }
    /* What it lost meanwhile (a full ring, a snapshot, the change of
     * route itself) is counted in each: of every class, so perhaps more
     * than the trace would have taken, never less. */
    uint64_t lost = discarded_total(h) - lost0 + extra;
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

uint64_t fdr__writer_dead_lost(const struct fdr__buf *b)
{
    const struct fdr__buf_hdr *h = b->hdr;
    uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
    uint64_t consumed = __atomic_load_n(&h->consumed, __ATOMIC_ACQUIRE);
    uint64_t n = b->geom.n_packets;
    if (consumed > produced || produced - consumed > n)
        consumed = produced > n ? produced - n : 0; /* overwrite mode */
    /* Discards: cumulative in each packet; the stream file holds the
     * count of its last packet, what fdrd stored with `consumed`. */
    uint64_t lost = discarded_total(h) - (consumed ? h->out_reported : 0);
    if (discarded_total(h) < (consumed ? h->out_reported : 0))
        lost = 0;
    if (produced) /* a ring never used has no stream file */
        fdr__buf_dead_counted(b->route, b->geom.index, consumed);
    struct fdr__classes t;
    fdr__registry_classes(&t);
    for (uint64_t seq = consumed; seq < produced; seq++) {
        struct fdr__pkt hdr;
        const char *slot = fdr__ring_slot(h, &b->geom, seq);
        if (fdr__pkt_check(slot, &b->geom, seq, &hdr) < 0)
            continue;
        struct fdr__iter it;
        struct fdr__event ev;
        fdr__iter_init(&it, slot, hdr.content_size / 8, &t);
        while (fdr__iter_next(&it, &ev) > 0)
            lost++;
    }
    return lost;
}

/* Events of this thread's own ring, in packet seq (about to be reused),
 * that the slots waiting for their ring would have taken: counted as lost
 * to them (backfill finds only what the ring still holds). */
static void want_gone_in(struct fdr__writer *w, uint64_t seq, uint32_t slots)
{
    if (!slots)
        return;
    const struct fdr__buf *b = w->local;
    struct fdr__pkt hdr;
    const char *slot = fdr__ring_slot(b->hdr, &b->geom, seq);
    if (fdr__pkt_check(slot, &b->geom, seq, &hdr) < 0 || hdr.tid != (uint32_t)w->tid)
        return;
    struct fdr__classes t;
    fdr__registry_classes(&t);
    struct fdr__iter it;
    struct fdr__event ev;
    fdr__iter_init(&it, slot, hdr.content_size / 8, &t);
    while (fdr__iter_next(&it, &ev) > 0) {
        uint32_t sel = __atomic_load_n(&fdr__class_sel[ev.id], __ATOMIC_RELAXED);
        for (uint32_t u = sel & slots; u; u &= u - 1)
            if (ev.ts >= w->want_since[__builtin_ctz(u)])
                w->want_lost[__builtin_ctz(u)]++;
    }
}

/* Packet seq of the ring w writes is about to be reused. Not for the
 * slots in `copied` (copied_slots): early_gone counts it for them. */
static void want_gone(struct fdr__writer *w, uint64_t seq, uint32_t copied)
{
    if (w->buf == w->local)
        want_gone_in(w, seq, w->route_wanting & ~copied);
}

/* Counts an event that slots waiting for their ring would have taken and
 * that is not written into the thread's own ring (in_own 0): one there is
 * handed over from it when the ring comes (backfill), or counted when its
 * packet is reused (want_gone); counted here as well, it was counted
 * twice (FDR_OUTPUT, whose every route waits as a lane: 100 threads gave
 * 227k to 313k recorded + discarded for 200k emitted). */
static void want_count(struct fdr__writer *w, uint32_t sel, int in_own, uint64_t n)
{
    if (in_own)
        return;
    for (uint32_t u = sel & w->route_wanting; u; u &= u - 1)
        w->want_lost[__builtin_ctz(u)] += n;
}

static int fdrd_copies(const struct fdr__writer *w, unsigned i);

/* The slots waiting for their ring whose past fdrd copies from w's own
 * ring (fdrd_copies): what that ring loses to reuse is counted where
 * fdrd reads it (early_gone), not in want_lost, which lives and dies
 * with the process. Before, a program with FDR_OUTPUT whose trace's ring
 * never came (fdrd out of rings, FDR_TEST_NO_RINGS) lost from fdrd's
 * trace, uncounted, the packet its exit's discards took (221 events of
 * 20,000, each of 4 programs, every run): its main thread ends by exit(),
 * without want_at_exit to report want_lost. */
static uint32_t copied_slots(const struct fdr__writer *w)
{
    uint32_t m = 0;
    for (uint32_t u = w->route_wanting; u; u &= u - 1)
        if (fdrd_copies(w, (unsigned)__builtin_ctz(u)))
            m |= u & -u;
    return m;
}

/* Slot i's pending events handed over or counted (or its route gone):
 * no longer shown. After the hand-over: a kill in between counts them
 * twice, never not at all. */
static void pending_settle_slot(struct fdr__writer *w, unsigned i)
{
    fdr__buf_route_pending(w->pending_route[i], -(int64_t)w->pending[i],
                           (uint32_t)w->tid);
    w->pending[i] = 0;
}

/* An event for the slots of `sel` that wait for a ring, recorded into the
 * own ring (in_own) or counted in want_lost: both in memory fdrd does not
 * read, so a kill before the ring comes lost it uncounted (a program
 * SIGKILLed while 4 of its 8 threads waited: 400 of 800 events neither
 * recorded nor counted). Shown to fdrd beside the route's kept count
 * (buffer.c, fdr__buf_route_pending) until handed over. Not for a slot
 * whose past fdrd copies from the own ring it holds (fdrd_copies). */
static void pending_add(struct fdr__writer *w, uint32_t sel, int in_own, uint64_t n)
{
    for (uint32_t u = sel & w->route_wanting; u; u &= u - 1) {
        unsigned i = (unsigned)__builtin_ctz(u);
        if (in_own && fdrd_copies(w, i))
            continue;
        uint32_t route = __atomic_load_n(&fdr__routes[i], __ATOMIC_ACQUIRE);
        if (w->pending[i] && w->pending_route[i] != route)
            pending_settle_slot(w, i);
        fdr__buf_route_pending(route, (int64_t)n, (uint32_t)w->tid);
        w->pending_route[i] = route;
        w->pending[i] += n;
    }
}

/* The slots not in `waiting` (their ring came and took what they held,
 * or their route ended or changed) settle their pending events. */
static void pending_settle(struct fdr__writer *w, uint32_t waiting)
{
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
        if (w->pending[i] &&
            !((waiting >> i & 1) &&
              w->pending_route[i] == __atomic_load_n(&fdr__routes[i], __ATOMIC_ACQUIRE)))
            pending_settle_slot(w, i);
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
static void reroute_now(struct fdr__writer *w, uint64_t now)
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
    __atomic_store_n(&w->route_wanting, 0,
                     __ATOMIC_RELAXED); /* fdr__writers_move reads */
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++) {
        struct fdr__lane *l = &w->lane[i];
        uint32_t route = __atomic_load_n(&fdr__routes[i], __ATOMIC_ACQUIRE);
        if (l->buf) {
            lane_close(w, l, now);
            if (!(on >> i & 1) || l->buf->route != route) {
                if (l->buf->route <=
                    __atomic_load_n(&fdr__route_dead_max, __ATOMIC_RELAXED))
                    w->carry[i] += fdr__writer_dead_lost(l->buf);
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
                __atomic_store_n(&w->route_wanting, w->route_wanting | 1u << i,
                                 __ATOMIC_RELAXED);
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
    /* Rings that came late: what was counted for them meanwhile
     * (want_count, want_gone), reported in this thread's name by the
     * hand-over's packets (lane_report). */
    for (uint32_t u = late; u; u &= u - 1)
        w->lane[__builtin_ctz(u)].buf->hdr->discarded += w->want_lost[__builtin_ctz(u)];
    if (past) {
        /* The copy under way, marked before it (ring.h, handing_tid): a
         * kill before the mark below leaves fdrd to drop what reached the
         * route's ring and copy the past from the own ring, so that it is
         * neither twice in the trace nor lost. Only a fresh ring can be
         * dropped whole; into the others the past is counted, not copied. */
        struct fdr__buf_hdr *oh = w->local->hdr;
        for (uint32_t u = fresh_slots(w, past); u; u &= u - 1) {
            unsigned i = (unsigned)__builtin_ctz(u);
            __atomic_store_n(&oh->handing_route[i], w->lane[i].buf->route,
                             __ATOMIC_RELAXED);
            __atomic_store_n(&oh->handing_ring[i], w->lane[i].buf->geom.index,
                             __ATOMIC_RELAXED);
            __atomic_store_n(&oh->handing_tid[i], (uint32_t)w->tid, __ATOMIC_RELAXED);
        }
        /* The marks before any event of the copy. */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        /* With what it counted in the ledger while fdrd lacked its ring. */
        struct fdr__ledger *le = w->ledger ? w->ledger_in : NULL;
        backfill(w, past, 0, w->local_lost0,
                 le ? __atomic_load_n(&le->count, __ATOMIC_RELAXED) : 0);
        handing_kill(UINT64_MAX);
        /* The primary's ring is written through w->pkt from now on. */
        for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
            if (past >> i & 1) {
                lane_report(w, &w->lane[i], now);
                /* Handed over: fdrd, which holds the own ring too, must
                 * not copy these events again if the process is killed
                 * now (ring.h, handed_tid). After the copies, so that a
                 * kill in between leaves fdrd to copy, not to lose. */
                __atomic_store_n(&w->local->hdr->handed_tid[i], (uint32_t)w->tid,
                                 __ATOMIC_RELEASE);
                if (le) /* after it: a kill in between counts twice, not none */
                    __atomic_fetch_or(&le->handed, 1u << i, __ATOMIC_RELEASE);
            }
    }
    /* The others that came late: what the thread wrote into its own ring
     * since the slot waited is handed over from there. */
    for (uint32_t u = late & ~past; u; u &= u - 1) {
        unsigned i = (unsigned)__builtin_ctz(u);
        backfill(w, 1u << i, w->want_since[i], w->want_d0[i], 0);
        lane_report(w, &w->lane[i], now);
    }
    pending_settle(w, w->route_wanting); /* after the hand-overs above */
    unsigned ps = on ? (unsigned)__builtin_ctz(on) : 0;
    /* FDR_OUTPUT (registry.c, compute_state): the own ring stays primary. */
    if (on && w->lane[ps].buf && !fdr__cfg.output[0]) {
        w->buf = w->lane[ps].buf;
        w->pslot = ps + 1;
        w->lanes_on &= ~(1u << ps);
    } else
        w->buf = w->local;
    /* What the dead fdrd's ring of a slot did not write out: counted in
     * the slot's new ring (the primary's next packet reports it; a lane
     * opens one). A slot no route takes any more has no trace to count
     * it in (its trace did not come back). */
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++) {
        if (!w->carry[i])
            continue;
        struct fdr__lane *l = &w->lane[i];
        if (!(on >> i & 1))
            w->carry[i] = 0;
        else if (l->buf) {
            l->buf->hdr->discarded += w->carry[i];
            w->carry[i] = 0;
            if (w->pslot != i + 1 && !l->pkt)
                lane_room(w, l, 0, now);
        }
    }
    __atomic_store_n(&w->route_gen, gen, __ATOMIC_RELAXED);
    /* Its past is handed to every route that wants it (or counted, for a
     * slot still waiting for its ring: want_gone). Once the registration
     * window has ended, no other route will want it: the consumer may
     * write its own ring out (buffer.h, held). Seq_cst, both: either this
     * sees the window closed or fdr__writers_unhold sees past_gen. */
    __atomic_store_n(&w->past_gen, gen, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&fdr__buf_window, __ATOMIC_SEQ_CST))
        __atomic_store_n(&w->local->held, 0, __ATOMIC_RELEASE);
}

/* Whether w's lanes are being changed, for a signal handler of its
 * thread (nested_lanes): the fence orders the store with the handler. */
static void lanes_busy(struct fdr__writer *w, uint32_t on)
{
    __atomic_store_n(&w->lanes_busy, on, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void nested_lanes_settle(struct fdr__writer *w);

/* Moves w to the current routes. A handler's event meanwhile counts
 * nothing (nested_keep): the primary ring too may change under it (a
 * count in the own ring after the hand-over had read it was in no trace,
 * fdr-daemon-early "wanting", TSan: 1 event of 2,208 short). */
static void reroute(struct fdr__writer *w, uint64_t now)
{
    lanes_busy(w, 1);
    reroute_now(w, now);
    lanes_busy(w, 0);
    nested_lanes_settle(w);
}

void fdr__writers_unhold(int all)
{
    pthread_mutex_lock(&fdr__writers_lock);
    uint32_t gen = __atomic_load_n(&fdr__route_gen, __ATOMIC_ACQUIRE);
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        if (all || __atomic_load_n(&w->past_gen, __ATOMIC_SEQ_CST) == gen)
            __atomic_store_n(&w->local->held, 0, __ATOMIC_RELEASE);
    if (all)
        fdr__buf_unhold_all();
    pthread_mutex_unlock(&fdr__writers_lock);
    fdr__writer_hooks.kick();
}

/* The time of the last event in the packet [p, pos), or `floor`. */
static uint64_t last_in(const struct fdr__pkt *p, const char *pos, uint64_t floor)
{
    if (!p || !pos || pos <= (const char *)(p + 1))
        return floor;
    struct fdr__classes t;
    struct fdr__iter it;
    struct fdr__event ev;
    fdr__registry_classes(&t);
    fdr__iter_init(&it, p, (size_t)(pos - (const char *)p), &t);
    while (fdr__iter_next(&it, &ev) > 0)
        floor = ev.ts > floor ? ev.ts : floor;
    return floor;
}

/* `now` read by another thread, or the time of w's last event if that is
 * later: its thread read its clock on another CPU (the TSC of one may
 * run a little ahead of another's), and a packet must not end before its
 * last event. */
static uint64_t not_before_last(const struct fdr__writer *w, uint64_t now)
{
    now = last_in(w->pkt, __atomic_load_n(&w->self->pos, __ATOMIC_RELAXED), now);
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
        if (w->lane[i].buf && w->pslot != i + 1)
            now = last_in(w->lane[i].pkt, w->lane[i].pos, now);
    return now;
}

/* Moves every thread that has not moved to the current routes yet, on its
 * behalf (daemon.c, a moment after a change of routes; init.c, at exit):
 * a thread that records nothing more (idle, blocked, about
 * to be killed, or the main thread of a process that is exiting) would
 * otherwise keep in its own ring what it recorded before the route came,
 * and that would reach no trace. Every writer is stopped meanwhile
 * (section.c: flush does the same), so each reroute runs as if in its own
 * thread's slow path. Not in a tracing section; writers lock not held.
 * Returns the number of threads moved. */
void fdr__writers_note(void)
{
    pthread_mutex_lock(&fdr__writers_lock);
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        w->idle_pos = __atomic_load_n(&w->self->pos, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&fdr__writers_lock);
}

int fdr__writers_behind(void)
{
    int n = 0;
    pthread_mutex_lock(&fdr__writers_lock);
    uint32_t gen = __atomic_load_n(&fdr__route_gen, __ATOMIC_ACQUIRE);
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        n += fdr__writer_behind(w, gen, 0);
    pthread_mutex_unlock(&fdr__writers_lock);
    return n;
}

/* w is on an old route or waits for a ring (and, with idle_only, has
 * recorded nothing since fdr__writers_note: a thread that records moves
 * itself at its next event, at no one else's cost). Writers lock held. */
int fdr__writer_behind(const struct fdr__writer *w, uint32_t gen, int idle_only)
{
    /* Read while its thread may write them: the answer is only a hint
     * until every writer is stopped (then it is read again). */
    return (__atomic_load_n(&w->route_gen, __ATOMIC_RELAXED) != gen ||
            __atomic_load_n(&w->route_wanting, __ATOMIC_RELAXED)) &&
           (!idle_only ||
            __atomic_load_n(&w->self->pos, __ATOMIC_RELAXED) == w->idle_pos);
}

void fdr__writer_move_now(struct fdr__writer *w, uint64_t now)
{
    reroute(w, not_before_last(w, now));
}

/* At thread exit: its lanes' packets closed, and the discards counted in
 * them reported in packets of its own (lane_report); the number of lanes
 * whose ring was too full for that. */
static int lanes_report(struct fdr__writer *w, uint64_t now)
{
    int full = 0;
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++) {
        struct fdr__lane *l = &w->lane[i];
        if (!l->buf || w->pslot == i + 1)
            continue;
        lane_report(w, l, now);
        if (l->buf->route <= __atomic_load_n(&fdr__route_dead_max, __ATOMIC_RELAXED))
            continue; /* nobody writes a dead fdrd's ring out */
        full += discarded_total(l->buf->hdr) != l->buf->hdr->reported;
    }
    return full;
}

/* At thread exit: every lane closed and its ring given back. */
static void lanes_release(struct fdr__writer *w, uint64_t now)
{
    nested_lanes_settle(w);
    lanes_busy(w, 2); /* and no lane after it (the primary counts alone) */
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++) {
        struct fdr__lane *l = &w->lane[i];
        if (!l->buf)
            continue;
        if (w->pslot != i + 1) {
            lane_report(w, l, now);
            fdr__buf_put_routed(l->buf);
        }
        l->buf = NULL;
    }
    w->lanes_on = 0;
}

/* ---- growing: memory that follows activity -------------------------------- */

/* w's own ring, the one it writes, is smaller than FDR_BUFFER_SIZE and may
 * be swapped for a larger one now: where rings grow (buffer.c,
 * fdr__buf_starts_small), not while it also records into fdrd's traces
 * (lanes: with FDR_OUTPUT, a thread that grew there gave fdrd's trace
 * its events twice, fdr-daemon-traces), not while fdrd may still want what the
 * thread recorded in it (the registration window, a held ring, a slot
 * waiting for its ring: their past is read from w->local, writer.c
 * backfill), nor again soon after the budget had no room. */
static int may_grow(const struct fdr__writer *w, uint64_t now)
{
    const struct fdr__buf *b = w->buf;
    uint32_t n = fdr__cfg.buffer_size / fdr__cfg.packet_size;
    return fdr__buf_starts_small() && b == w->local && !b->route && !w->lanes_on &&
           (b->geom.packet_size < fdr__cfg.packet_size || b->geom.n_packets < n) &&
           now >= w->grow_after && !w->route_wanting &&
           !__atomic_load_n(&b->held, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&fdr__buf_window, __ATOMIC_ACQUIRE);
}

static uint64_t ticks_per_s(void)
{
    return fdr__clock_rough_freq();
}

/* The thread outgrew its ring (no packet open): the next packet would
 * overwrite one of its own begun less than FDR__GROW_S seconds ago and
 * more than half full (the ring holds less than that of its events; a
 * quiet thread's packets are closed by their time limit, fastpath.h
 * FDR__TS_SPAN, about 1.5 s, nearly empty). Writing to disk, the same
 * test before the ring is full (the packet read is one the consumer may
 * have written out, never changed by it), and a full ring, which would
 * discard (large events fill a packet each). A quiet thread (a two-int
 * event a second fills two 4 KiB packets in about 7 minutes) keeps its
 * small ring. */
#define FDR__GROW_S 10
static int outgrown(const struct fdr__writer *w, uint64_t now)
{
    if (!may_grow(w, now))
        return 0;
    const struct fdr__buf *b = w->buf;
    const struct fdr__buf_hdr *h = b->hdr;
    if (__atomic_load_n(&h->mode, __ATOMIC_RELAXED) != (uint32_t)fdr__cfg.mode)
        return 0; /* a flight recorder's ring of the registration window */
    if (ring_full(b))
        return 1; /* writing to disk, faster than the consumer: it would discard */
    if (h->produced < b->geom.n_packets)
        return 0;
    const struct fdr__pkt *old = (const void *)fdr__buf_slot(b, h->produced);
    return old->ts_begin >= w->took_at &&
           old->content_size / 8 * 2 > b->geom.packet_size &&
           now < old->ts_begin + FDR__GROW_S * ticks_per_s();
}

/* Its own ring back to the pool (thread exit, or a larger one taken),
 * unless kept for fdrd's copy (buffer.h, kept): what this thread handed over
 * stays handed once the next one takes it (ring.h, handed_below). Writers
 * lock held. */
static void put_local(struct fdr__writer *w)
{
    struct fdr__buf_hdr *lh = w->local->hdr;
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
        if (lh->handed_tid[i] == (uint32_t)w->tid)
            __atomic_store_n(&lh->handed_below[i], lh->produced, __ATOMIC_RELEASE);
    if (w->local->kept) /* its events wait there for fdrd (want_at_exit) */
        __atomic_store_n(&w->local->held, 0, __ATOMIC_RELEASE);
    else
        fdr__buf_put(w->local);
}

/* Overwrite mode, into a ring no thread used yet: the thread's newest
 * packets in its small ring go with it, as the first packets of the new
 * one, and are left empty in the small ring. Its stream
 * has no gap, and no event of it is twice in a snapshot or a crash dump.
 * Writers lock held, no packet open. */
static void move_packets(struct fdr__writer *w, struct fdr__buf *b)
{
    struct fdr__buf *old = w->local;
    struct fdr__buf_hdr *oh = old->hdr, *nh = b->hdr;
    if (__atomic_load_n(&oh->mode, __ATOMIC_RELAXED) != FDR__MODE_OVERWRITE ||
        nh->produced || discarded_total(nh))
        return;
    uint64_t produced = oh->produced, from = produced;
    uint64_t first = produced > old->geom.n_packets ? produced - old->geom.n_packets : 0;
    struct fdr__pkt hdr;
    while (from > first &&
           fdr__pkt_check(fdr__buf_slot(old, from - 1), &old->geom, from - 1, &hdr) ==
               0 &&
           hdr.tid == (uint32_t)w->tid &&
           hdr.content_size / 8 <= FDR__PKT_ROOM(b->geom.packet_size) + sizeof hdr)
        from--;
    for (uint64_t seq = from; seq < produced; seq++) {
        /* Sizes from the checked copy: the ring is the program's memory. */
        const char *src = fdr__buf_slot(old, seq);
        if (fdr__pkt_check(src, &old->geom, seq, &hdr) < 0 ||
            hdr.content_size / 8 > FDR__PKT_ROOM(b->geom.packet_size) + sizeof hdr) {
            produced = seq;
            break;
        }
        struct fdr__pkt *p = (struct fdr__pkt *)fdr__buf_slot(b, nh->produced);
        size_t len = (size_t)(hdr.content_size / 8);
        memcpy(p, src, len);
        hdr.stream_instance_id = b->geom.index;
        hdr.packet_size = (uint64_t)b->geom.packet_size * 8;
        hdr.seq = nh->produced;
        hdr.discarded = 0;
        memcpy(p, &hdr, sizeof hdr);
        struct fdr__pkt_tail *tl =
            (struct fdr__pkt_tail *)(void *)((char *)p + b->geom.packet_size -
                                             FDR__PKT_TAIL);
        tl->base = (uint64_t)(uintptr_t)p;
        tl->committed = (uint64_t)(uintptr_t)((char *)p + len);
        publish(nh, p);
    }
    /* Emptied in place (same sequence numbers, so no gap in the small
     * ring's stream): no reader is in it, the writers lock is held and
     * this thread is in its tracing section. */
    for (uint64_t seq = from; seq < produced; seq++) {
        struct fdr__pkt *p = (struct fdr__pkt *)fdr__buf_slot(old, seq);
        p->content_size = sizeof *p * 8;
        struct fdr__pkt_tail *tl =
            (struct fdr__pkt_tail *)(void *)((char *)p + old->geom.packet_size -
                                             FDR__PKT_TAIL);
        tl->committed = (uint64_t)(uintptr_t)(p + 1);
    }
}

/* Takes the writers lock to grow w's ring, or says to try again at the
 * next packet. Inside the tracing section, so the lock is only tried: a
 * controller may hold it waiting for this thread (it stops the thread
 * first: enabled != 1, section.c), and then this gives up at once. Else
 * only a full ring waits, writing to disk, as it would otherwise discard
 * this thread's events while another thread holds the lock: making its
 * own larger ring takes a few system calls (4 threads that filled theirs
 * at once discarded ~1,400 events of 88,000), many more under qemu-user,
 * where 1,000 yields were not enough (riscv64 and aarch64 in CI: one event
 * of 1,000 discarded). The wait ends when the consumer makes room, and is
 * bounded in time (FDR__GROW_WAIT_NS), not in tries, so that a slow or
 * busy machine waits as long as a fast one. */
#define FDR__GROW_WAIT_NS 100000000ull
static int lock_to_grow(const struct fdr__writer *w)
{
    uint64_t since = 0;
    for (unsigned tries = 0; pthread_mutex_trylock(&fdr__writers_lock) != 0; tries++) {
        if (!ring_full(w->buf) ||
            __atomic_load_n(&w->self->enabled, __ATOMIC_ACQUIRE) != 1)
            return 0;
        uint64_t t = fdr__clock_mono_ns();
        if (!since)
            since = t;
        else if (t - since > FDR__GROW_WAIT_NS)
            return 0;
        if (tries < 100) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    return 1;
}

/* Moves w (no packet open) to a larger own ring (buffer.c, fdr__buf_grow).
 * The small one is retired as an exited thread's ring is: what is left of
 * its packets stays for snapshots and the crash dump (and for the
 * consumer and the drain helper to write out, writing to disk), its
 * discards are reported by an empty packet now (or, when it is full, by
 * the next thread that takes it, or at exit: init.c), and the thread's
 * stream goes on in the new ring. Without the writers lock
 * (lock_to_grow), the next packet tries again. */
static void grow(struct fdr__writer *w, uint64_t now)
{
    if (!lock_to_grow(w))
        return;
    struct fdr__buf *b = fdr__buf_grow(w->local);
    if (b) {
        fdr__writer_carry_discards(w, now);
        move_packets(w, b);
        /* What the thread lost since it took its first ring (backfill),
         * read once the new ring is the one a signal handler's event of
         * this thread counts in (count_nested): one counted in the old
         * ring after the read was in neither (put_local takes a lock, where
         * a handler ran: fdr-daemon-early "nested", TSan, 1 run in 10). */
        struct fdr__buf *old = w->local;
        uint64_t b0 = discarded_total(b->hdr);
        w->buf = w->local = b;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        uint64_t lost = discarded_total(old->hdr) - w->local_lost0;
        w->local_lost0 = b0 - lost;
        w->local = old;
        put_local(w);
        w->local = b;
        w->took_at = now;
    } else {
        w->grow_after = now + ticks_per_s() / 4; /* the budget is full */
    }
    pthread_mutex_unlock(&fdr__writers_lock);
}

/* w's ring of an fdrd trace (the primary, no packet open) is full: a
 * thread that fills it faster than fdrd writes it out moves to a larger
 * free ring of its route, which fdrd keeps ready for a discard trace
 * whose rings grow (daemon/collect.c, route_spare). The full ring goes
 * back to the route's free rings: fdrd writes it out like an ended
 * thread's, and the discards it counted that no packet reported yet are
 * reported by its next packet (whoever takes it) or by fdrd at the
 * route's end (common/drain.h). No event is copied or dropped. */
static void grow_routed(struct fdr__writer *w)
{
    uint32_t gen = __atomic_load_n(&fdr__buf_routed_gen, __ATOMIC_RELAXED);
    if (gen == w->grow_gen)
        return; /* no ring became free since none was larger */
    struct fdr__buf *b = fdr__buf_grow_routed(w->buf);
    if (!b) {
        w->grow_gen = gen;
        return;
    }
    fdr__buf_put_routed(w->buf);
    w->buf = w->lane[w->pslot - 1].buf = b;
}

/* FDR_TEST_REUSE_WAIT (tests only): a thread whose own ring is full
 * waits here, past its look at the routes, until the registration window
 * ends (or 60 s), and says so on stderr, once per thread. */
static void reuse_wait(void)
{
    static __thread int said;
    if (!__atomic_load_n(&fdr__buf_window, __ATOMIC_ACQUIRE))
        return;
    if (!said) {
        said = 1;
        static const char msg[] = "fdr: FDR_TEST_REUSE_WAIT: waiting\n";
        ssize_t r = write(2, msg, sizeof msg - 1);
        (void)r;
    }
    for (int i = 0; i < 60000 && __atomic_load_n(&fdr__buf_window, __ATOMIC_ACQUIRE);
         i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
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
    struct fdr__buf_hdr *h;
    /* Larger than a packet of the ring: a larger ring, if it may grow. */
    int big = total > FDR__PKT_ROOM(w->buf->geom.packet_size);
    if (big && !may_grow(w, now))
        return NULL; /* can never fit */
    if (w->pkt) {
        char *pos = __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
        /* Room, and a time the packet's event headers can hold. */
        if (!big && (size_t)(tail_of(w) - pos) >= total &&
            now < w->pkt->ts_begin + FDR__TS_SPAN) {
            set_end(t, tail_of(w));
            *tail = tail_of(w);
            return pos;
        }
        fdr__writer_close_packet(w, now);
    }
    if (w->route_wanting)
        reroute(w, now);
    if (big ? may_grow(w, now) : outgrown(w, now))
        grow(w, now);
    else if (w->pslot && ring_full(w->buf))
        grow_routed(w);
    if (total > FDR__PKT_ROOM(w->buf->geom.packet_size))
        return NULL;
    /* A ring another thread used (fdrd's rings pass from a thread that
     * ended to the next) may end later than this event's time, read
     * before the ring was taken: the event takes the ring's last time, so
     * that the stream's time never runs backwards. */
    h = w->buf->hdr;
    if (h->produced) {
        const struct fdr__pkt *last =
            (const void *)fdr__buf_slot(w->buf, h->produced - 1);
        if (now < last->ts_end)
            *nowp = now = last->ts_end;
    }
    if (fdr__cfg.test_reuse_wait && w->buf == w->local && ring_full(w->buf))
        reuse_wait();
    if (open_packet(w, now) < 0)
        return NULL;
    *tail = tail_of(w);
    return __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
}

/* The ledger to count this thread's events in, not its own ring: NULL
 * unless that ring, made in the registration window, has not reached
 * fdrd (daemon.c: its socket's queue full, or past the rings fdrd keeps)
 * and the window lasts. A process killed then would leave the events
 * where fdrd never looks, uncounted; the ledger is in a ring fdrd holds
 * (common/ring.h). Only before the thread moved to any route (then what
 * it counted is handed over, reroute). Slow path only: such a thread
 * opens no packet, so each of its events comes here until the ring is
 * sent. */
static struct fdr__ledger *unheld(const struct fdr__writer *w)
{
    const struct fdr__buf *b = w->buf;
    if (b != w->local || w->lanes_on || !b->early ||
        __atomic_load_n(&b->sent, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(&fdr__buf_window, __ATOMIC_ACQUIRE))
        return NULL;
    return __atomic_load_n(&fdr__buf_ledger, __ATOMIC_ACQUIRE);
}

/* Thread tid's entry in ledger l, from 1, for events already counted in
 * the route slots of `handed` (0 for a live thread's own entry): its
 * tid's with those slots (a live thread's is no longer its own once an
 * ended thread of that tid handed it over), else a free one. A free entry
 * is claimed first and named last, so that no search for the same tid
 * with other slots takes it in between. NULL when all are taken. */
static struct fdr__ledger *ledger_take(struct fdr__ledger *l, uint32_t tid,
                                       uint32_t handed)
{
    for (uint32_t k = 1; k < FDR__LEDGER; k++) {
        uint32_t none = 0;
        if (__atomic_load_n(&l[k].tid, __ATOMIC_ACQUIRE) == tid &&
            __atomic_load_n(&l[k].handed, __ATOMIC_RELAXED) == handed)
            return &l[k];
        if (!handed && __atomic_compare_exchange_n(&l[k].tid, &none, tid, 0,
                                                   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return &l[k];
        if (handed && __atomic_compare_exchange_n(&l[k].tid, &none, FDR__LEDGER_CLAIM, 0,
                                                  __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            __atomic_store_n(&l[k].handed, handed, __ATOMIC_RELAXED);
            __atomic_store_n(&l[k].tid, tid, __ATOMIC_RELEASE); /* after handed */
            return &l[k];
        }
    }
    return NULL;
}

/* Thread tid's entry (ledger_take) in ledger l, or in that of another own
 * ring fdrd holds. */
static struct fdr__ledger *ledger_find(struct fdr__ledger *l, uint32_t tid,
                                       uint32_t handed)
{
    struct fdr__ledger *e = ledger_take(l, tid, handed);
    for (uint32_t i = 0, n = fdr__buf_count(); !e && i < n; i++) {
        struct fdr__buf *b = fdr__buf_at(i);
        if (b && b->early && b->hdr->ledger != l &&
            __atomic_load_n(&b->sent, __ATOMIC_ACQUIRE))
            e = ledger_take(b->hdr->ledger, tid, handed);
    }
    return e;
}

/* One event of w's thread lost where fdrd can count it: the entry of its
 * tid (taken at its first) in the ledger l, or once its entries are all
 * taken in the ledger of another own ring fdrd holds (fdrd reads every
 * own ring's: FDR__LEDGER - 1 threads each, so that the events of a burst
 * of threads are counted per thread), else entry 0 of l (any thread's).
 * `nested` (signal handlers') events, when not 0, take no entry: they may
 * have interrupted this very search. */
static void count_unheld(struct fdr__writer *w, struct fdr__ledger *l, uint64_t nested)
{
    if (w->ledger != l && !nested) {
        w->ledger_in = ledger_find(l, (uint32_t)w->tid, 0);
        w->ledger = l;
    }
    struct fdr__ledger *e = w->ledger == l && w->ledger_in ? w->ledger_in : &l[0];
    __atomic_fetch_add(&e->count, nested ? nested : 1, __ATOMIC_RELAXED);
}

/* The route slots whose route wants the process's past (backfill): fdrd
 * copies what the own rings hold for them when the process ends. */
static uint32_t wants_past(void)
{
    uint32_t m = 0;
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++) {
        uint32_t route = __atomic_load_n(&fdr__routes[i], __ATOMIC_ACQUIRE);
        if (route && __atomic_load_n(&fdr__route_backfill[i], __ATOMIC_RELAXED) == route)
            m |= 1u << i;
    }
    return m;
}

/* Packet seq of an own ring made in the registration window, about to be
 * reused while fdrd would still copy it, should the process end before
 * its threads hand their past over (daemon/collect.c, early_out): while
 * the window lasts, in a ring left to fdrd by a thread that ended
 * (buffer.h, kept), or in the ring of a thread that still waits for a
 * ring of such a route (`copied`, copied_slots). The slot was freed by the consumer
 * (FDR_OUTPUT) after the ring stopped being held: its thread ended, or a flush went on
 * without fdrd's answer (init.c, release_held). Its events are counted in
 * the ledger, for the thread that recorded them, instead of vanishing
 * from fdrd's copy uncounted: the exit's packet carrying the ring's
 * discards took the slot of its first packet (a program whose exit found
 * fdrd too busy to answer in 3 s; 5 of 8 threads with no ring of their
 * trace, FDR_TEST_NO_RINGS, each 221 of 2,000 events). A packet handed
 * over to a route is not counted for it (fdrd skips the packet there, and
 * would count it twice): when every route that wants the past has it,
 * not at all; else in an entry marked with the routes that have it, which
 * fdrd counts in the others alone (two such traces, only the first's
 * rings come: the second lost those 221 events, uncounted, on 5 threads
 * of 8, every run; fdr-daemon-early "kept2"). Every event of the packet
 * is counted, selected or not (no route is known yet): an over-count,
 * never a loss. */
static void early_gone(const struct fdr__buf *b, uint64_t seq, int copied)
{
    if (!__atomic_load_n(&b->sent, __ATOMIC_ACQUIRE) ||
        (!__atomic_load_n(&fdr__buf_window, __ATOMIC_ACQUIRE) && !b->kept && !copied))
        return;
    struct fdr__ledger *l = __atomic_load_n(&fdr__buf_ledger, __ATOMIC_ACQUIRE);
    const struct fdr__buf_hdr *h = b->hdr;
    struct fdr__pkt hdr;
    const char *slot = fdr__ring_slot(h, &b->geom, seq);
    if (!l || fdr__pkt_check(slot, &b->geom, seq, &hdr) < 0)
        return;
    uint32_t handed = 0; /* the route slots it was handed over to */
    for (unsigned i = 0; i < 32; i++) {
        uint32_t htid = __atomic_load_n(&h->handed_tid[i], __ATOMIC_RELAXED);
        if ((htid && htid == hdr.tid) ||
            seq < __atomic_load_n(&h->handed_below[i], __ATOMIC_RELAXED))
            handed |= 1u << i;
    }
    if (handed && !(wants_past() & ~handed))
        return;
    struct fdr__classes t;
    fdr__registry_classes(&t);
    struct fdr__iter it;
    struct fdr__event ev;
    uint64_t n = 0;
    fdr__iter_init(&it, slot, hdr.content_size / 8, &t);
    while (fdr__iter_next(&it, &ev) > 0)
        n++;
    if (!n)
        return;
    struct fdr__ledger *e = ledger_find(l, hdr.tid, handed);
    __atomic_fetch_add(&(e ? e : &l[0])->count, n, __ATOMIC_RELAXED);
}

/* An event counted as discarded while nested or paused: in the ring's
 * atomic count, or the ledger's. */
static void count_nested_n(struct fdr__writer *w, uint64_t n)
{
    struct fdr__ledger *l = unheld(w);
    if (l)
        count_unheld(w, l, n);
    else
        __atomic_fetch_add(&w->buf->hdr->nested, n, __ATOMIC_RELAXED);
}

static void count_nested(struct fdr__writer *w)
{
    count_nested_n(w, 1);
}

/* Whether w's rings are being changed (reroute, or a move holding the
 * writers): a handler's event of its thread then counts nothing yet. Not
 * once its thread is ending (lanes_release): nothing would count it
 * after, and the primary, the one ring left, changes no more. */
static int rings_changing(const struct fdr__writer *w)
{
    uint32_t busy = __atomic_load_n(&w->lanes_busy, __ATOMIC_RELAXED);
    return busy == 1 ||
           (busy != 2 && __atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE));
}

/* A nested event (or one lost to a pause) kept for nested_lanes_settle,
 * with `primary` when the primary ring has not counted it either. The
 * thread's next event takes the slow path, which settles: set_end keeps
 * `end` down while a count is kept. Async-signal-safe. */
static void nested_keep(struct fdr__writer *w, int primary)
{
    if (__atomic_load_n(&w->lanes_busy, __ATOMIC_RELAXED) == 2) {
        if (primary) /* its thread is ending: no lane, and none settles */
            count_nested(w);
        return;
    }
    __atomic_fetch_add(primary ? &w->nested_all : &w->nested_lanes, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&w->self->end, (char *)NULL, __ATOMIC_RELAXED);
}

/* The events kept by nested_keep, counted now: in the primary ring those
 * it had not counted, and all of them in every lane and for every slot
 * still waiting for its ring, as an event not recorded there is
 * (want_count, pending_add): of every class, so perhaps more than a trace
 * would have taken, never less (as backfill). Its thread, or fdr's while
 * it moves the thread; the handler may add more meanwhile (atomic). */
static void nested_lanes_settle(struct fdr__writer *w)
{
    if (!__atomic_load_n(&w->nested_lanes, __ATOMIC_RELAXED) &&
        !__atomic_load_n(&w->nested_all, __ATOMIC_RELAXED))
        return;
    uint64_t p = __atomic_exchange_n(&w->nested_all, 0, __ATOMIC_RELAXED);
    uint64_t n = __atomic_exchange_n(&w->nested_lanes, 0, __ATOMIC_RELAXED) + p;
    if (p)
        count_nested_n(w, p);
    for (uint32_t u = w->lanes_on; u; u &= u - 1)
        __atomic_fetch_add(&w->lane[__builtin_ctz(u)].buf->hdr->nested, n,
                           __ATOMIC_RELAXED);
    if (w->route_wanting) {
        /* Counted in the primary ring (count_nested): when that is the
         * own ring, a slot's ring that comes takes the count from it
         * (backfill, want_d0). */
        want_count(w, UINT32_MAX, w->buf == w->local, n);
        pending_add(w, UINT32_MAX, w->buf == w->local, n);
    }
}

/* A nested event of site s (a signal handler's, inside an event of this
 * thread), counted in the primary already (count_nested): counted in the
 * lanes of the other traces that take it too. Before, only the primary
 * did: with FDR_OUTPUT, fdrd's traces lost it uncounted. Async-signal-
 * safe: atomic counters, no lock. Kept (nested_keep) while the rings
 * change, and when a trace that takes it waits for its ring: that count
 * (want_count) is the thread's own, which the interrupted event may be
 * writing, and fdr__buf_route_pending locks. Before, such a trace lost
 * the event uncounted (fdr-daemon-early "wanting"). None after the lanes
 * are gone (lanes_release). */
static void nested_lanes(struct fdr__writer *w, const struct fdr__site *s)
{
    if (!s->id || __atomic_load_n(&w->lanes_busy, __ATOMIC_RELAXED) == 2)
        return;
    uint32_t all = __atomic_load_n(&fdr__class_sel[s->id], __ATOMIC_RELAXED);
    /* A slot waiting for its ring, the primary's too (an event that is
     * not copied elsewhere, FDR__S_MULTI unset): counted by the thread
     * (nested_keep), as reserve counts a recorded event there. */
    if (rings_changing(w) ||
        (all & __atomic_load_n(&w->route_wanting, __ATOMIC_RELAXED))) {
        nested_keep(w, 0);
        return;
    }
    if (!(fdr__site_state(s) & FDR__S_MULTI))
        return;
    for (uint32_t u = all & w->lanes_on; u; u &= u - 1)
        __atomic_fetch_add(&w->lane[__builtin_ctz(u)].buf->hdr->nested, 1,
                           __ATOMIC_RELAXED);
}

/* An event of site s (state st) lost to a pause (flush, snapshot):
 * counted in the primary ring and, with `lanes`, in every other trace
 * that takes it (its lane, or the count of a slot waiting for its ring),
 * as a recorded one is copied (reserve, commit_multi_rest). Before, only
 * the primary counted it: with FDR_OUTPUT, fdrd's traces lost it
 * uncounted. Not `lanes` while a move holds the writers: it changes
 * them, and the primary may change (then kept for the rings the move
 * leaves: nested_keep). */
static void count_paused(struct fdr__writer *w, const struct fdr__site *s, uint8_t st,
                         int lanes)
{
    if (!lanes) { /* kept until the move is over */
        if (st & (FDR__S_RECORD | FDR__S_MULTI))
            nested_keep(w, (st & FDR__S_RECORD) != 0);
        return;
    }
    if (st & FDR__S_RECORD)
        count_nested(w);
    uint32_t all = __atomic_load_n(&fdr__class_sel[s->id], __ATOMIC_RELAXED);
    if (st & FDR__S_MULTI)
        for (uint32_t u = all & w->lanes_on; u; u &= u - 1)
            __atomic_fetch_add(&w->lane[__builtin_ctz(u)].buf->hdr->nested, 1,
                               __ATOMIC_RELAXED);
    /* The slots waiting for their ring, as reserve counts a recorded
     * event: the primary's among them when its ring has not come (the
     * own ring then counts in its stead, which fdrd may not hold). Before,
     * only an event copied to other traces was: a crash dump's pause of a
     * program whose trace's ring never came lost its events from that
     * trace, uncounted (up to 399 of ~108,000, 4 runs of 6). */
    if (w->route_wanting) {
        int in_own = w->buf == w->local && (st & FDR__S_RECORD);
        want_count(w, (st & FDR__S_MULTI) ? all : 0, in_own, 1);
        pending_add(w, all, in_own, 1);
    }
}

/* The work of fdr__reserve_slow(); *why tells why the event is not recorded
 * (0 when it is): -EBUSY nested or paused, -ENODATA disabled, -ENOMEM no
 * writer, -ENOSPC no room (counted), -E2BIG too large to print. A result
 * with *why == -ENOSPC is an event that is only printed. */
static char *reserve(struct fdr__site *s, size_t payload, int *why, char **tail)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__writer *w = t->writer;
    int held_once = 0;
    *why = 0;
    *tail = NULL;
    if (payload == (size_t)-1) {
        /* Nested in another event of this thread (signal handler). The
         * section still belongs to the interrupted event: do not leave it. */
        if (w && w->buf) {
            if (rings_changing(w))
                nested_keep(w, 1);
            else {
                count_nested(w);
                nested_lanes(w, s);
            }
        } else /* the interrupted event is this thread's first: no buffer yet */
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
hold_wait:
    if (__atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE)) {
        /* Routes are changing (fdr__writers_hold: a few microseconds in
         * fdr's own thread). Wait for the change, out of the tracing
         * section and yielding, so that the event goes where the new
         * routes say: a program that records a burst and exits at once
         * would otherwise lose it to its trace. That thread holds no lock
         * a writer may hold and waits for nothing: on a busy machine it
         * may only wait for a CPU, and for a thread its stop of the
         * writers waits for (section.c gives up on one after 1 s). Past
         * ~3 s it is counted below, not written (in this thread's own
         * ring only: the rings of the routes are being changed). */
        for (int i = 0; i < 30100 && __atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE);
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
        if (__atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE))
            held_once = 1; /* waited out: counted below, not waited for again */
    }
    st = fdr__site_state(s); /* a change of routes may select it, or not */
    if (!(st & (FDR__S_RECORD | FDR__S_PRINT | FDR__S_MULTI))) {
        *why = -ENODATA;
        goto out;
    }
    uint32_t on = __atomic_load_n(&t->enabled, __ATOMIC_ACQUIRE);
    if (on == FDR__PAUSED && !held_once &&
        (__atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE) ||
         __atomic_load_n(&t->enabled, __ATOMIC_ACQUIRE) != FDR__PAUSED)) {
        /* Paused by a move of the threads to new routes (fdr__writers_move
         * holds, then stops the writers; this thread looked at the hold
         * just before): wait for it as above, the event is not lost, and
         * w->buf, which the move changes, is not read meanwhile. Or the
         * pause is over already: a move resumes the writers and only then
         * lets go of its hold, so a thread preempted between its load of
         * `enabled` and that of the hold saw neither, and counted its
         * event in its primary ring only. It was lost to the other traces
         * uncounted (fdr-daemon-early "lanes", TSan, CI: 1 event of
         * 200,000 missing from fdrd's trace, counted in the program's). */
        held_once = 1;
        goto hold_wait;
    }
    if (on != 1) {
        /* Paused by fdr itself (flush, snapshot): the event is lost and
         * must be counted, in every trace that takes it. The controller
         * may be reading the rings, so only their atomic counters are
         * touched. Off by the user's choice (fdr_set_tracing_enabled):
         * not recorded, not counted. */
        if (on == FDR__PAUSED) /* no hold seen in the section: no move under way */
            count_paused(w, s, st, !__atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE));
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
        /* Routes are changing (fdr__writers_hold) since this thread
         * looked: waited for as above; counted, not written, once this
         * thread waited its ~3 s: kept until the move is over, then
         * counted in the rings it leaves, the primary and the others
         * (nested_keep: the move may be changing them). Before, the
         * primary alone counted it: with FDR_OUTPUT, fdrd's traces lost
         * it uncounted. */
        if (!held_once) {
            held_once = 1;
            goto hold_wait;
        }
        if (st & (FDR__S_RECORD | FDR__S_MULTI))
            nested_keep(w, 1);
        *why = -EBUSY;
        goto out;
    }
    nested_lanes_settle(w); /* no move under way: this thread's lanes */
    size_t total = payload + FDR__EVENT_HEADER_SIZE;
    uint64_t now = fdr__now();
    char *p;
    if (w->route_gen != __atomic_load_n(&fdr__route_gen, __ATOMIC_ACQUIRE)) {
        reroute(w, now);
        /* A change of routes holds the writers, sets the rings, then the
         * states (daemon.c, routes_apply). One that began after this
         * thread looked at the hold may have given the ring and not yet
         * the state: the event, read without the new trace, was neither
         * copied there nor counted (fdr-daemon-early "nested", TSan: 1
         * main:ev at the route's arrival). Waited for, then read. */
        if (__atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE) && !held_once) {
            held_once = 1;
            goto hold_wait;
        }
        /* The routes changed since st was read (the whole change can
         * come in between: this thread was not held yet): what the new
         * ones take. A trace started before the process lost its first
         * event when st said nothing of it (fdr-daemon-early "output",
         * under TSan). */
        st = fdr__site_state(s);
        if (!(st & (FDR__S_RECORD | FDR__S_PRINT | FDR__S_MULTI))) {
            *why = -ENODATA;
            goto out;
        }
    }
    /* The other traces that take this event. */
    uint32_t all = (st & FDR__S_MULTI)
                       ? __atomic_load_n(&fdr__class_sel[s->id], __ATOMIC_RELAXED)
                       : 0;
    struct fdr__ledger *l = (st & FDR__S_RECORD) ? unheld(w) : NULL;
    if (l) {
        count_unheld(w, l, 0); /* no lane yet (unheld), in its own past */
        *why = -ENOSPC;
        if (!(st & FDR__S_PRINT))
            goto out;
        p = w->scratch; /* still printed */
    } else if (st & FDR__S_RECORD) {
        p = make_room(w, total, &now, tail);
        /* Those with a lane here, and the count of those waiting for
         * one, once make_room has moved the thread (a ring that came is
         * handed what the own ring holds, not this event yet). */
        if (w->route_wanting) {
            want_count(w, all, w->buf == w->local, 1);
            pending_add(w, __atomic_load_n(&fdr__class_sel[s->id], __ATOMIC_RELAXED),
                        w->buf == w->local, 1);
            /* Each event comes here while a slot waits with the own ring
             * primary: the fast path would record it unshown. */
            if (w->buf == w->local)
                __atomic_store_n(&t->end, (char *)NULL, __ATOMIC_RELAXED);
        }
        if (!p) {
            count_discarded(w);
            *why = -ENOSPC;
            if (!(st & FDR__S_PRINT) && !(all & w->lanes_on))
                goto out;
            p = w->scratch; /* still printed or copied */
        }
    } else {
        if (w->route_wanting) {
            want_count(w, all, 0, 1);
            pending_add(w, all, 0, 1);
        }
        if (total > SCRATCH_SIZE) {
            *why = -E2BIG;
            goto out;
        }
        p = w->scratch;
    }
    uint16_t id = s->id;
    uint32_t low = (uint32_t)now;
    memcpy(p, &id, 2);
    memcpy(p + 2, &low, 4);
    w->slow_ts = now;
    if (st & FDR__S_PRINT) {
        t->printing = s;
        t->print_start = p;
    }
    w->multi_sel = all & w->lanes_on;
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

/* fdr__commit_multi past its common case: the lanes of `sel` from the
 * first whose open packet cannot take the event as it is (lanes_copy
 * makes room, or counts it), the routes still waiting for a ring, then
 * the commit. Out of line, reached by a tail call: the common case calls
 * nothing, and saves 4 registers where lanes_copy's call saved 12. */
static __attribute__((noinline)) void
commit_multi_rest(uint32_t all, uint32_t sel, char *end, char *tail, uint64_t now)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__writer *w = t->writer;
    if (sel)
        lanes_copy(w, sel, __atomic_load_n(&t->pos, __ATOMIC_RELAXED), end, now);
    if (w->route_wanting) {
        want_count(w, all, w->buf == w->local, 1);
        pending_add(w, all, w->buf == w->local, 1);
    }
    fdr__commit(end, tail);
}

/* Commits an event that fdr__commit() does not: printed ones (then `tail`
 * is NULL when the event is only printed, built in scratch), and those of
 * a site whose state was not simply "record" when the event began. The
 * common case, an event copied into the open packets of other traces, is
 * lanes_copy's loop inlined with no call (docs/performance.md, section
 * 17: 2 traces 18.66 -> 17.83 ns, 4 traces 23.70 -> 21.66 on the Intel
 * Xeon guest). */
void fdr__commit_multi(struct fdr__site *s, char *end, char *tail)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__writer *w = t->writer;
    /* The event starts at pos, not yet moved past it (fdr__commit does). */
    char *start = __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
    if (!w) {
        fdr__commit(end, tail);
        return;
    }
    uint32_t all = __atomic_load_n(&fdr__class_sel[s->id], __ATOMIC_RELAXED);
    uint32_t sel = all & w->lanes_on;
    uint64_t now = 0;
    if (sel) {
        uint32_t low;
        memcpy(&low, start + 2, 4);
        now = fdr__ts_full(w->pkt->ts_begin, low);
        size_t len = (size_t)(end - start);
        /* (past 64 bytes, copy_event calls memcpy: no call here) */
        for (; sel && len <= 64; sel &= sel - 1) {
            struct fdr__lane *l = &w->lane[__builtin_ctz(sel)];
            char *p = l->pos;
            /* lane_fits, with a time at or past the ring's floor (the
             * rest, lanes_copy rewrites) */
            if (!l->pkt || (size_t)(l->tail - p) < len || now < l->floor ||
                now >= l->limit)
                break;
            copy_event(p, start, len);
            l->pos = p + len;
            /* As fdr__commit: the committed position, after the event. */
            __atomic_store_n((uint64_t *)(void *)lane_tail(l) + 1,
                             (uint64_t)(uintptr_t)l->pos, __ATOMIC_RELEASE);
        }
    }
    if (sel || w->route_wanting) {
        commit_multi_rest(all, sel, end, tail, now);
        return;
    }
    fdr__commit(end, tail);
}

void fdr__commit_slow(char *end, char *tail)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__writer *mw = t->writer;
    if (mw && mw->multi_sel) {
        /* One clock read, one encoding, a copy per other trace. */
        lanes_copy(mw, mw->multi_sel, mw->multi_start, end, mw->slow_ts);
        mw->multi_sel = 0;
    }
    struct fdr__site *s = t->printing;
    if (s) {
        char *start = t->print_start;
        t->printing = NULL;
        /* The writer caches the tid: no gettid system call per line. */
        const struct fdr__writer *w = t->writer;
        fdr__print_event(s, start + FDR__EVENT_HEADER_SIZE,
                         (size_t)(end - start) - FDR__EVENT_HEADER_SIZE,
                         w ? w->slow_ts : fdr__now(),
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

/* Whether fdrd copies what w's thread recorded in its own ring for slot
 * i, should the process end with it there (collect.c, early_out): the
 * slot's route wants the thread's whole past (backfill), not handed over
 * yet, and fdrd holds the ring (handed at registration, OWN_RING). */
static int fdrd_copies(const struct fdr__writer *w, unsigned i)
{
    uint32_t route = __atomic_load_n(&fdr__routes[i], __ATOMIC_ACQUIRE);
    return route && w->want_since[i] == 0 && w->backfilled[i] != route &&
           __atomic_load_n(&fdr__route_backfill[i], __ATOMIC_RELAXED) == route &&
           w->local->early && __atomic_load_n(&w->local->sent, __ATOMIC_ACQUIRE);
}

/* At thread exit, whether no hold of the writers (fdr__writers_hold) is
 * on, waiting for it up to ~3 s (as an event does, reserve) out of the
 * writers lock. A move of the idle threads holds them first and then
 * takes that lock, which this thread holds: an exiting thread that saw
 * the hold and went on without moving left its past in its own ring,
 * where the next packets took it, neither in the trace nor counted (one
 * thread's first packet, 221 events, in fdr-daemon-early "lanes" on a
 * loaded machine, 1 run in ~15). Waiting lets the move take this thread
 * too, or the change of routes end. Writers lock held. */
static int hold_gone(void)
{
    for (int i = 0; i < 3000 && __atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE);
         i++) {
        pthread_mutex_unlock(&fdr__writers_lock);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        pthread_mutex_lock(&fdr__writers_lock);
    }
    return !__atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE);
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
    if (w->route_gen != __atomic_load_n(&fdr__route_gen, __ATOMIC_ACQUIRE)) {
        if (hold_gone())
            reroute(w, fdr__now());
        else if (w->local->early && __atomic_load_n(&w->local->sent, __ATOMIC_ACQUIRE))
            w->local->kept = 1; /* not moved: fdrd copies its past at the end */
    }
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
    if (w->route_wanting && hold_gone())
        reroute(w, fdr__now());
    if (w->route_wanting)
        fdr__writer_close_packet(w, fdr__now());
    nested_lanes_settle(w); /* into want_lost, before it is handed on */
    uint32_t rest = 0;      /* slots whose events in the own ring are counted here */
    for (uint32_t u = w->route_wanting; u; u &= u - 1) {
        unsigned i = (unsigned)__builtin_ctz(u);
        if (fdrd_copies(w, i)) {
            /* Left in the own ring, which fdrd copies per thread when the
             * process ends: counted here as well, they were counted twice
             * (the over-count of "resume", test-fdr-daemon-ended.py). The
             * ring is kept from the next thread, whose packets would
             * overwrite them and whose hand-over would mark them handed
             * (put_local). What reused packets took is in the
             * ledger (early_gone). */
            w->local->kept = 1;
        } else {
            /* With what the own ring lost since the slot waited. */
            rest |= 1u << i;
            w->want_lost[i] += discarded_total(w->local->hdr) - w->want_d0[i];
        }
    }
    /* Its events in the own ring since they waited. */
    const struct fdr__buf *b = w->local;
    uint64_t produced = __atomic_load_n(&b->hdr->produced, __ATOMIC_RELAXED);
    for (uint64_t seq = produced > b->geom.n_packets ? produced - b->geom.n_packets : 0;
         seq < produced; seq++)
        want_gone_in(w, seq, rest);
    for (uint32_t u = w->route_wanting; u; u &= u - 1)
        fdr__buf_route_lost(
            __atomic_load_n(&fdr__routes[__builtin_ctz(u)], __ATOMIC_ACQUIRE),
            w->want_lost[__builtin_ctz(u)], (uint32_t)w->tid);
    __atomic_store_n(&w->route_wanting, 0, __ATOMIC_RELAXED);
    pending_settle(w, 0); /* counted above, or left for fdrd to copy */
}

static void thread_exit(void)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__writer *w = t->writer;
    if (!w)
        return;
    /* A registration with fdrd under way: its routes first (bounded), so
     * that what this thread recorded reaches the traces started already. */
    fdr__writer_settle_hook();
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
     * nobody does, waiting would only delay the thread's end; nor while
     * the ring is held, until fdrd answers: buffer.h). */
    int drained =
        !own || (fdr__cfg.output[0] && !__atomic_load_n(&w->buf->held, __ATOMIC_ACQUIRE));
    if (own && drained &&
        __atomic_load_n(&h->mode, __ATOMIC_RELAXED) == FDR__MODE_DISCARD &&
        (h->produced - __atomic_load_n(&h->consumed, __ATOMIC_ACQUIRE)) * 2 >=
            w->buf->geom.n_packets) {
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
    /* The same in its lanes, which fdrd writes out: a count left in a
     * full one is reported by the next thread that takes the ring, as if
     * that thread had lost the events (100 threads whose past was counted
     * into used rings at their end: up to 70,000 events on one thread). */
    for (int i = 0; i < 100 && lanes_report(w, fdr__now()); i++) {
        pthread_mutex_unlock(&fdr__writers_lock);
        fdr__buf_ring_bell();
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
    put_local(w);
    t->writer = NULL;
    __atomic_store_n(&t->enabled, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&fdr__writers_lock);
    fdr__writer_hooks.kick();
    fdr__writer_hooks.thread_exit();
    fdr__writer_free(w);
}
