/* SPDX-License-Identifier: MIT */
/* buffer.c - per-thread buffers: a header page and a ring of CTF packets.
 *
 * Layout of one buffer (one memfd mapping, no pointers inside, so that a
 * daemon can allocate it and map it at another address):
 *
 *   offset 0      struct fdr__buf_hdr   geometry, then two cache lines:
 *                                       writer (produced, discarded, nested
 *                                       and paused discards, reported),
 *                                       reader (consumed)
 *   offset 4096   packet 0              FDR_PACKET_SIZE bytes each
 *                 packet 1
 *                 ...
 *                 packet n-1
 *
 * Packet sequence number s lives in slot s % n. The writer fills slot
 * `produced`; packets [consumed, produced) are complete and wait for the
 * consumer. In discard mode the writer never opens a slot that has not
 * been consumed; in overwrite mode it simply reuses the oldest.
 *
 * Buffers are never unmapped while the process lives: a thread that exits
 * returns its buffer to a free list and the next new thread takes it, so
 * the number of buffers is the largest number of threads recording at the
 * same time, and their stream files go on across threads (each packet
 * names its thread). The pool is protected by fdr__writers_lock.
 *
 * Memory follows activity, within FDR_MEMORY, in the flight recorder
 * (overwrite mode) and writing to disk (FDR_OUTPUT, discard mode): every
 * thread starts with the smallest ring (two 4 KiB packets, 12 KiB with its
 * header page), and one that outgrows it (writer.c, outgrown: it wraps it
 * in under 10 s) moves to a ring of FDR_BUFFER_SIZE, or the largest the
 * budget leaves room for (fdr__buf_grow). Its small ring is retired the
 * way an exited thread's is: to the free list, still written out by the
 * consumer and the drain helper, read by snapshots and the crash dump,
 * until a new thread takes it. A quiet thread costs the small ring, busy
 * ones get the budget. Other rings (discard mode in memory, overwrite
 * mode writing to disk) have FDR_BUFFER_SIZE while the budget has room
 * (common/ring.h, fdr__ring_budget), the smallest past it. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/cold.h"
#include "recorder/buffer.h"
#include "recorder/clock.h"
#include "recorder/config.h"

#define MAX_BUFFERS 65536

uint8_t fdr__trace_uuid[16];

static void no_buf_hook(const struct fdr__buf *b)
{
    (void)b;
}
void (*fdr__buf_added_hook)(const struct fdr__buf *b) = no_buf_hook;
static void no_hook(void) {}
void (*fdr__buf_early_hook)(void) = no_hook;

/* All buffers ever created, by index; slots are written once, before
 * `count` is published with a release store. */
static FDR__COLD struct fdr__buf *all[MAX_BUFFERS];
static uint32_t count;
static struct fdr__buf *free_list;
static uint64_t held; /* bytes of all own rings, against FDR_MEMORY */
uint32_t fdr__buf_window;
struct fdr__ledger *fdr__buf_ledger;
uint32_t fdr__route_hold;

void fdr__route_hold_wait(void)
{
    for (int i = 0; i < 1100 && __atomic_load_n(&fdr__route_hold, __ATOMIC_ACQUIRE);
         i++) {
        if (i < 100)
            sched_yield();
        else {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
}

/* The smallest ring, every thread's first: two packets of at most
 * FDR__RING_MIN_PACKET bytes (common/ring.h), or the whole configured ring
 * if that is no larger. */
static void small_geometry(uint32_t *packet, uint32_t *n)
{
    *packet = fdr__cfg.packet_size;
    *n = fdr__cfg.buffer_size / *packet;
    if (*n < 2)
        *n = 2;
    if ((uint64_t)*packet * *n > 2u * FDR__RING_MIN_PACKET) {
        if (*packet > FDR__RING_MIN_PACKET)
            *packet = FDR__RING_MIN_PACKET;
        *n = 2;
    }
}

static uint64_t ring_bytes(uint32_t packet, uint32_t n)
{
    return FDR__BUF_HEADER + (uint64_t)n * packet;
}

int fdr__buf_starts_small(void)
{
    return (fdr__cfg.mode == FDR__MODE_OVERWRITE) == !fdr__cfg.output[0];
}

/* A new ring's geometry: the smallest where rings grow (fdr__buf_grow);
 * else FDR_BUFFER_SIZE while the budget has room
 * (common/ring.h), the smallest past it. The rings of the registration
 * window are full-size too: in discard mode until fdrd answers, a small
 * one would discard a program's first events past 8 KiB. */
static int new_geometry(uint32_t *packet, uint32_t *n)
{
    int small =
        fdr__buf_starts_small() && !__atomic_load_n(&fdr__buf_window, __ATOMIC_SEQ_CST);
    if (small) {
        small_geometry(packet, n);
        return 1;
    }
    *packet = fdr__cfg.packet_size;
    *n = fdr__cfg.buffer_size / *packet;
    if (*n < 2)
        *n = 2;
    fdr__ring_budget(held, fdr__cfg.memory, packet, n);
    return 0;
}

static struct fdr__buf *buf_create(uint32_t packet, uint32_t n)
{
    if (count >= MAX_BUFFERS)
        return NULL;
    size_t size = FDR__BUF_HEADER + (size_t)n * packet;
    /* Sealed at its size: fdrd may map it (a ring of the registration
     * window, daemon.c), and a ring that shrank would make that fault. */
    int fd = memfd_create("fdr-buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return NULL;
    if (ftruncate(fd, (off_t)size) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
        close(fd);
        return NULL;
    }
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    struct fdr__buf *b = calloc(1, sizeof *b);
    if (!b) {
        munmap(base, size);
        close(fd);
        return NULL;
    }
    struct fdr__buf_hdr *h = base;
    h->magic = FDR__BUF_MAGIC;
    h->version = 1;
    h->packet_size = packet;
    h->n_packets = n;
    /* In the registration window a flight recorder keeps its first events
     * (discard mode, counting the rest) for the trace it may be routed to. */
    h->mode = __atomic_load_n(&fdr__buf_window, __ATOMIC_RELAXED)
                  ? FDR__MODE_DISCARD
                  : (uint32_t)fdr__cfg.mode;
    h->index = count;
    h->size = size;
    b->hdr = h;
    b->geom = (struct fdr__ring_geom){packet, n, count, size};
    b->fd = fd;
    fdr__fd_id(fd, &b->fd_id);
    b->index = count;
    b->out_fd = -1;
    held += size;
    b->early = __atomic_load_n(&fdr__buf_window, __ATOMIC_SEQ_CST);
    all[count] = b;
    __atomic_store_n(&count, count + 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&h->mode, __ATOMIC_RELAXED) != (uint32_t)fdr__cfg.mode &&
        !__atomic_load_n(&fdr__buf_window, __ATOMIC_SEQ_CST))
        __atomic_store_n(&h->mode, (uint32_t)fdr__cfg.mode, __ATOMIC_RELAXED);
    fdr__buf_added_hook(b); /* the consumer's drain helper maps it too */
    if (b->early)
        fdr__buf_early_hook(); /* fdrd gets it too (daemon.c) */
    return b;
}

/* A ring made as the window ends: either this loop sees it in `count` or
 * its maker sees the window closed (buf_create): both orders are seq_cst
 * (a store then a load each side), so one of them sets its mode. */
void fdr__buf_window_end(void)
{
    __atomic_store_n(&fdr__buf_window, 0, __ATOMIC_SEQ_CST);
    uint32_t n = __atomic_load_n(&count, __ATOMIC_SEQ_CST);
    for (uint32_t i = 0; i < n; i++)
        __atomic_store_n(&all[i]->hdr->mode, (uint32_t)fdr__cfg.mode, __ATOMIC_RELAXED);
}

/* The ring made ahead at start (fdr__buf_spare) until a thread takes it. */
static struct fdr__buf *spare;

void fdr__buf_spare(void)
{
    uint32_t packet, n;
    new_geometry(&packet, &n);
    struct fdr__buf *b = buf_create(packet, n);
    if (b) {
        b->next_free = free_list;
        free_list = spare = b;
    }
}

uint32_t fdr__buf_used(void)
{
    return __atomic_load_n(&count, __ATOMIC_ACQUIRE) -
           (__atomic_load_n(&spare, __ATOMIC_ACQUIRE) ? 1 : 0);
}

/* Takes *at out of the free list. */
static struct fdr__buf *unlink_free(struct fdr__buf **at)
{
    struct fdr__buf *b = *at;
    if (b == spare)
        __atomic_store_n(&spare, (struct fdr__buf *)NULL, __ATOMIC_RELEASE);
    *at = b->next_free;
    b->next_free = NULL;
    return b;
}

/* Writing to disk, a free ring the consumer has not written out yet, or
 * whose count no written packet reports yet (a full disk lost its
 * packets): both are its last thread's, so no thread takes it before
 * (fdr__buf_get, fdr__buf_grow). A thread that did reported the count in
 * its own name: 442 events of one thread on another's stream (disk-full,
 * 12 KiB left); a flush reports it in the ring's last thread's name
 * (writer.c, fdr__buf_carry_discards). */
static int unwritten(const struct fdr__buf *b)
{
    const struct fdr__buf_hdr *h = b->hdr;
    if (fdr__cfg.mode != FDR__MODE_DISCARD)
        return 0;
    uint64_t lost = __atomic_load_n(&h->out_lost, __ATOMIC_RELAXED);
    return __atomic_load_n(&h->consumed, __ATOMIC_ACQUIRE) !=
               __atomic_load_n(&h->produced, __ATOMIC_RELAXED) ||
           h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED) != h->reported ||
           (lost &&
            __atomic_load_n(&h->out_reported, __ATOMIC_RELAXED) < h->reported + lost);
}

struct fdr__buf *fdr__buf_get(void)
{
    struct fdr__buf *b = NULL, **at = &free_list;
    uint32_t packet, n;
    if (new_geometry(&packet, &n)) {
        /* Rings that grow: a small free ring, else a new small one
         * (past the budget too: every thread records in a ring of its
         * own); the larger free rings wait for the threads that outgrow
         * theirs (fdr__buf_grow). Writing to disk, only a ring the
         * consumer has written out: a retired ring still full would
         * discard the new thread's first events, and keep it from
         * growing (writer.c, outgrown: the packets are not its own). */
        while (*at && ((*at)->geom.size > ring_bytes(packet, n) || unwritten(*at)))
            at = &(*at)->next_free;
    }
    if (*at)
        b = unlink_free(at);
    else
        b = buf_create(packet, n);
    /* Seq_cst: pairs with the store in fdr__buf_window_end, as the mode
     * of a new ring does (buf_create). */
    if (b)
        __atomic_store_n(&b->held, __atomic_load_n(&fdr__buf_window, __ATOMIC_SEQ_CST),
                         __ATOMIC_RELEASE);
    return b;
}

struct fdr__buf *fdr__buf_grow(const struct fdr__buf *old)
{
    uint32_t packet = fdr__cfg.packet_size, n = fdr__cfg.buffer_size / packet;
    if (n < 2)
        n = 2;
    /* The largest ring the budget has room for, halving down to two
     * packets, against the largest free one. */
    while (n > 2 && held + ring_bytes(packet, n) > fdr__cfg.memory)
        n /= 2;
    uint64_t make =
        held + ring_bytes(packet, n) <= fdr__cfg.memory ? ring_bytes(packet, n) : 0;
    struct fdr__buf **best = NULL;
    for (struct fdr__buf **p = &free_list; *p; p = &(*p)->next_free)
        if ((*p)->geom.size > (best ? (*best)->geom.size : old->geom.size) &&
            !unwritten(*p))
            best = p;
    struct fdr__buf *b = NULL;
    if (best && (*best)->geom.size >= make)
        b = unlink_free(best);
    else if (make > old->geom.size)
        b = buf_create(packet, n);
    if (b)
        __atomic_store_n(&b->held, 0, __ATOMIC_RELEASE);
    return b;
}

void fdr__buf_unhold_all(void)
{
    uint32_t n = __atomic_load_n(&count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++)
        __atomic_store_n(&all[i]->held, 0, __ATOMIC_RELEASE);
}

void fdr__buf_put(struct fdr__buf *b)
{
    /* Its thread has ended: what it recorded goes where it can now. */
    __atomic_store_n(&b->held, 0, __ATOMIC_RELEASE);
    b->next_free = free_list;
    free_list = b;
}

struct fdr__buf *fdr__buf_at(uint32_t index)
{
    return index < __atomic_load_n(&count, __ATOMIC_ACQUIRE) ? all[index] : NULL;
}

uint32_t fdr__buf_count(void)
{
    return __atomic_load_n(&count, __ATOMIC_ACQUIRE);
}

char *fdr__buf_slot(const struct fdr__buf *b, uint64_t seq)
{
    return (char *)b->hdr + FDR__BUF_HEADER +
           (size_t)(seq % b->geom.n_packets) * b->geom.packet_size;
}

/* ---- rings from fdrd ----------------------------------------------------- */

uint32_t fdr__route_gen;
uint32_t fdr__routes[FDR__ROUTE_SLOTS];
uint32_t fdr__route_backfill[FDR__ROUTE_SLOTS];
uint32_t fdr__route_dead_max;
static uint32_t route_last;
/* Dead rings counted (fdr__writer_dead_lost), for daemon.c to tell the new
 * fdrd (DEAD_RING); under route_lock. */
static FDR__COLD struct fdr__dead_cut cuts[256];
static unsigned ncuts;
static void no_dead(void) {}
void (*fdr__buf_dead_hook)(void) = no_dead;
static uint64_t no_dead_lost(const struct fdr__buf *b)
{
    (void)b;
    return 0;
}
uint64_t (*fdr__buf_dead_lost_hook)(const struct fdr__buf *b) =
    no_dead_lost; /* the newest route announced */
static void no_carry(struct fdr__buf *b, uint32_t tid)
{
    (void)b;
    (void)tid;
}
void (*fdr__buf_carry_hook)(struct fdr__buf *b, uint32_t tid) = no_carry;
/* The routed rings' lock: a leaf, taken by writers inside their tracing
 * section (writer.c, reroute), so never held while waiting for anything;
 * after the writers lock when both are held. */
static pthread_mutex_t route_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fdr__buf *routed_free; /* rings of routes, free */
/* Every mapped ring of a route, free or in a thread's hands (linked by
 * route_next): a count lost to the route goes into one that fdrd will
 * write out (fdr__buf_route_lost). */
static struct fdr__buf *routed_all;
uint32_t fdr__buf_routed_gen;
static int doorbell = -1;

void fdr__buf_route_lock(void)
{
    pthread_mutex_lock(&route_lock);
}

void fdr__buf_route_unlock(void)
{
    pthread_mutex_unlock(&route_lock);
}

static void no_low(uint32_t route)
{
    (void)route;
}
void (*fdr__buf_low_hook)(uint32_t route) = no_low;

/* Route lock held: b leaves routed_all (it is about to be unmapped). */
static void unlist(struct fdr__buf *b)
{
    for (struct fdr__buf **p = &routed_all; *p; p = &(*p)->route_next)
        if (*p == b) {
            *p = b->route_next;
            break;
        }
    b->route_next = NULL;
}

static void unmap(struct fdr__buf *b)
{
    munmap(b->hdr, b->geom.size);
    fdr__fd_close(b->fd, &b->fd_id);
    free(b);
}

static void unmap_list(struct fdr__buf *b)
{
    while (b) {
        struct fdr__buf *next = b->next_free;
        unmap(b);
        b = next;
    }
}

void fdr__buf_unmap(struct fdr__buf *b)
{
    unmap(b);
}

/* Events lost to a route by threads that ended when the process held no
 * ring of it at all (writer.c, want_at_exit: a burst of threads outran
 * the rings fdrd sends), per slot, with the last such thread's tid: the
 * next ring of the route that comes reports them (carry_lost), or the
 * next one a thread takes, whichever is first (take_lost). An entry of a
 * route that ends first is dropped (fdr__buf_set_route): the trace has
 * ended, nothing can reach it any more. Under route_lock. */
static struct {
    uint32_t route;
    uint32_t tid;
    uint64_t n;
    /* Events of threads waiting for a ring of the route, recorded into
     * their own rings (fdrd does not hold them) to be handed over when one
     * comes: shown with n, so that a kill meanwhile counts them
     * (fdr__buf_route_pending). */
    uint64_t pending;
    uint64_t ts;                          /* of the last loss */
    struct fdr__route_lost *shown;        /* where fdrd sees it (lost_show), or NULL */
} route_lost[FDR__ROUTE_SLOTS] FDR__COLD; /* 1 KiB start-up never touches */
static int route_lost_used;               /* an entry was ever kept: else the exit and a
                                           * fork's child do not touch the array's page */

/* Route lock held: entry i of route_lost as fdrd sees it, in the first own
 * ring it holds (common/ring.h, route_lost; fdrd reads it however the
 * process ends), or nowhere when fdrd holds none of the process's own
 * rings (a process that registered again after fdrd died hands none
 * over): then the process sends it at its end (fdr__buf_lost_take,
 * daemon.c: LOST), and a kill takes it along. The count is stored last and
 * cleared first, so that fdrd never reads it with another entry's route. */
static void lost_show(unsigned i)
{
    struct fdr__ledger *l = __atomic_load_n(&fdr__buf_ledger, __ATOMIC_ACQUIRE);
    struct fdr__route_lost *to = NULL;
    if (l && fdr__cfg.test_no_rings != 2)
        to = &((struct fdr__buf_hdr *)(void *)((char *)l -
                                               offsetof(struct fdr__buf_hdr, ledger)))
                  ->route_lost[i];
    uint32_t dead = __atomic_load_n(&fdr__route_dead_max, __ATOMIC_RELAXED);
    if (route_lost[i].shown && route_lost[i].shown != to) {
        __atomic_store_n(&route_lost[i].shown->count, 0, __ATOMIC_RELEASE);
        route_lost[i].shown = NULL;
    }
    if (!to)
        return;
    uint64_t count = route_lost[i].n + route_lost[i].pending;
    if (!count || route_lost[i].route <= dead) {
        __atomic_store_n(&to->count, 0, __ATOMIC_RELEASE);
        route_lost[i].shown = NULL;
        return;
    }
    __atomic_store_n(&to->count, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&to->route, route_lost[i].route - dead, __ATOMIC_RELAXED);
    __atomic_store_n(&to->tid, route_lost[i].tid, __ATOMIC_RELAXED);
    __atomic_store_n(&to->ts, route_lost[i].ts, __ATOMIC_RELAXED);
    __atomic_store_n(&to->count, count, __ATOMIC_RELEASE);
    route_lost[i].shown = to;
}

/* Route lock held: entry i's kept count is done with (in a ring of the
 * route now); what waiting threads hold (pending) stays shown. */
static void lost_clear(unsigned i)
{
    route_lost[i].n = 0;
    if (!route_lost[i].pending)
        route_lost[i].route = 0;
    lost_show(i);
}

/* Route lock held: the entry of `route`, else the first free one, else
 * FDR__ROUTE_SLOTS. */
static unsigned lost_find(uint32_t route)
{
    unsigned free = FDR__ROUTE_SLOTS;
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++) {
        if (route_lost[i].route == route)
            return i;
        if (!route_lost[i].route && free == FDR__ROUTE_SLOTS)
            free = i;
    }
    return free;
}

/* Route lock held: entry i's route ended, nothing can reach its trace. */
static void lost_drop(unsigned i)
{
    route_lost[i].pending = 0;
    lost_clear(i);
}

/* Route lock held: the ring's route is a current one, or one announced
 * ahead of its ROUTE message (fdrd sends a route's rings first). */
static int route_live(uint32_t route)
{
    if (!route)
        return 0;
    if (route > route_last)
        return 1;
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
        if (fdr__routes[i] == route)
            return 1;
    return 0;
}

/* Route lock held: fresh ring b (free, unused: no thread writes it) takes
 * n events lost to its route, reported at once in a header-only packet
 * (after the empty packet 0 a stream starts with) in the name of tid, the
 * thread that lost them (writer.c, fdr__writer_carry_as): fdrd writes it
 * out, whether or not a thread ever takes the ring. */
static void carry_into(struct fdr__buf *b, uint64_t n, uint32_t tid)
{
    __atomic_fetch_add(&b->hdr->nested, n, __ATOMIC_RELAXED);
    fdr__buf_carry_hook(b, tid);
}

/* Route lock held: a ring of the route came (fdr__buf_adopt), and with it
 * a way for the count kept while the process held none to reach the
 * trace. Before, that count waited for a thread to take a ring of the
 * route: with none taking one again (quiet threads, or the process
 * exiting), it never reached the trace. */
static void carry_lost(struct fdr__buf *b)
{
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
        if (route_lost[i].route == b->route && route_lost[i].n) {
            carry_into(b, route_lost[i].n, route_lost[i].tid);
            lost_clear(i);
        }
}

int fdr__buf_adopt(int fd, uint64_t size, uint32_t route, int grow)
{
    /* fdrd runs as our user (checked at connect) and sealed the size; the
     * header it wrote must still describe a ring that fits. */
    struct stat st;
    if (size < FDR__BUF_HEADER || size > ((uint64_t)1 << 40) || fstat(fd, &st) < 0 ||
        (uint64_t)st.st_size < size) {
        close(fd);
        return -EINVAL;
    }
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        close(fd);
        return -EINVAL;
    }
    struct fdr__buf_hdr *h = base;
    struct fdr__ring_geom g = {h->packet_size, h->n_packets, h->index, h->size};
    struct fdr__buf *b = calloc(1, sizeof *b);
    if (!b || fdr__geom_check(&g, size) < 0 || fdr__ring_check(h, &g) < 0 ||
        (h->mode != FDR__MODE_DISCARD && h->mode != FDR__MODE_OVERWRITE)) {
        free(b);
        munmap(base, size);
        close(fd);
        return -EINVAL;
    }
    b->hdr = h;
    b->geom = g;
    b->fd = fd;
    fdr__fd_id(fd, &b->fd_id);
    b->index = g.index;
    b->out_fd = -1;
    b->route = route;
    b->grow = grow != 0;
    pthread_mutex_lock(&route_lock);
    int live = route_live(route);
    if (live) {
        if (!b->grow)
            carry_lost(b);
        b->next_free = routed_free;
        routed_free = b;
        b->route_next = routed_all;
        routed_all = b;
        __atomic_add_fetch(&fdr__buf_routed_gen, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&route_lock);
    if (!live)
        unmap(b); /* came after its route ended */
    return 0;
}

/* Route lock held: ring b (taken, or given back used) takes its route's
 * lost count, reported by its next packet or, when none comes, by fdrd
 * at the route's end (common/drain.h, a header-only packet). */
static void take_lost(struct fdr__buf *b, int taken)
{
    if (!b->route || (!taken && !__atomic_load_n(&b->hdr->produced, __ATOMIC_RELAXED)))
        return;
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
        if (route_lost[i].route == b->route) {
            __atomic_fetch_add(&b->hdr->nested, route_lost[i].n, __ATOMIC_RELAXED);
            lost_clear(i);
        }
}

void fdr__buf_route_lost(uint32_t route, uint64_t n, uint32_t tid)
{
    if (!route || !n)
        return;
    pthread_mutex_lock(&route_lock);
    unsigned i = lost_find(route);
    /* Into a ring of the route that fdrd will write out, whether or not a
     * thread ever takes one again: a free one that has published a packet
     * (its next packet reports the count, or fdrd when the route or the
     * process ends: common/drain.h, a header-only packet after the last
     * one written); else a fresh free one, in a packet of its own; else
     * one in a thread's hands that a packet was opened in (buffer.h,
     * opened: its thread's next packet reports it, or fdrd after the open
     * one). Before, the count waited here for a thread to take a ring of
     * the route: when the holders of every ring of it never gave one back
     * (the process exits with them: test-fdr-daemon-memory.py, "waiters
     * exit"), 400 of 800 events were neither recorded nor counted. */
    struct fdr__buf *used = NULL, *fresh = NULL;
    for (struct fdr__buf *q = routed_free; q && !used; q = q->next_free)
        if (q->route == route) {
            if (__atomic_load_n(&q->hdr->produced, __ATOMIC_RELAXED))
                used = q;
            else if (!q->grow && !fresh)
                fresh = q;
        }
    for (struct fdr__buf *q = routed_all; q && !used && !fresh; q = q->route_next)
        if (q->route == route && (__atomic_load_n(&q->opened, __ATOMIC_ACQUIRE) ||
                                  __atomic_load_n(&q->hdr->produced, __ATOMIC_ACQUIRE)))
            used = q;
    if (used)
        __atomic_fetch_add(&used->hdr->nested, n, __ATOMIC_RELAXED);
    else if (fresh) /* in a packet of its own, in tid's name */
        carry_into(fresh, n, tid);
    else if (i < FDR__ROUTE_SLOTS && route_live(route)) {
        /* No ring of the route can carry it (none came yet): kept until
         * one comes (fdr__buf_adopt), and more asked for. */
        route_lost[i].route = route;
        route_lost[i].tid = tid;
        route_lost[i].n += n;
        route_lost[i].ts = fdr__now();
        route_lost_used = 1;
        lost_show(i);
        fdr__buf_low_hook(route);
    }
    pthread_mutex_unlock(&route_lock);
}

void fdr__buf_route_pending(uint32_t route, int64_t delta, uint32_t tid)
{
    if (!route || !delta)
        return;
    pthread_mutex_lock(&route_lock);
    unsigned i = lost_find(route);
    if (i < FDR__ROUTE_SLOTS && route_lost[i].route == route) {
        uint64_t d = delta < 0 ? (uint64_t)-delta : 0;
        route_lost[i].pending =
            delta > 0 ? route_lost[i].pending + (uint64_t)delta
                      : (route_lost[i].pending > d ? route_lost[i].pending - d : 0);
    } else if (i < FDR__ROUTE_SLOTS && delta > 0 && route_live(route)) {
        route_lost[i].route = route;
        route_lost[i].pending = (uint64_t)delta;
        route_lost_used = 1;
    } else
        i = FDR__ROUTE_SLOTS; /* an ended route's: nothing to show */
    if (i < FDR__ROUTE_SLOTS) {
        if (delta > 0) {
            route_lost[i].tid = tid;
            route_lost[i].ts = fdr__now();
        }
        if (!route_lost[i].n && !route_lost[i].pending)
            route_lost[i].route = 0;
        lost_show(i);
    }
    pthread_mutex_unlock(&route_lock);
}

unsigned fdr__buf_lost_take(struct fdr__lost_count *out, unsigned max)
{
    unsigned k = 0;
    pthread_mutex_lock(&route_lock);
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS && k < max && route_lost_used; i++)
        if (route_lost[i].n && route_live(route_lost[i].route) && !route_lost[i].shown) {
            out[k++] = (struct fdr__lost_count){route_lost[i].route, route_lost[i].tid,
                                                route_lost[i].n, route_lost[i].ts};
            lost_clear(i);
        }
    pthread_mutex_unlock(&route_lock);
    return k;
}

struct fdr__buf *fdr__buf_get_routed(uint32_t route, int fresh)
{
    pthread_mutex_lock(&route_lock);
    struct fdr__buf *b = NULL, **at = NULL;
    /* Not the rings kept for the threads that fill theirs
     * (fdr__buf_grow_routed). */
    for (struct fdr__buf **p = &routed_free; *p; p = &(*p)->next_free)
        if ((*p)->route == route && !(*p)->grow) {
            int unused = !__atomic_load_n(&(*p)->hdr->produced, __ATOMIC_RELAXED);
            if (!at || unused == (fresh != 0))
                at = p;
            if (unused == (fresh != 0))
                break;
        }
    if (at && (fresh != 2 || !__atomic_load_n(&(*at)->hdr->produced, __ATOMIC_RELAXED))) {
        b = *at;
        *at = b->next_free;
        b->next_free = NULL;
    }
    if (b)
        take_lost(b, 1);
    unsigned left = 0;
    for (struct fdr__buf *q = routed_free; q && left < 2; q = q->next_free)
        left += q->route == route && !q->grow;
    if (left < 2)
        fdr__buf_low_hook(route);
    pthread_mutex_unlock(&route_lock);
    return b;
}

struct fdr__buf *fdr__buf_grow_routed(const struct fdr__buf *old)
{
    if (old->route <= __atomic_load_n(&fdr__route_dead_max, __ATOMIC_RELAXED))
        return NULL; /* nobody writes a dead fdrd's rings out */
    pthread_mutex_lock(&route_lock);
    struct fdr__buf **at = NULL;
    for (struct fdr__buf **p = &routed_free; *p; p = &(*p)->next_free)
        if ((*p)->route == old->route && (*p)->grow &&
            (*p)->geom.size > (at ? (*at)->geom.size : old->geom.size))
            at = p;
    struct fdr__buf *b = at ? *at : NULL;
    if (b) {
        *at = b->next_free;
        b->next_free = NULL;
        take_lost(b, 1);
    }
    pthread_mutex_unlock(&route_lock);
    return b;
}

void fdr__buf_put_routed(struct fdr__buf *b)
{
    pthread_mutex_lock(&route_lock);
    int keep = route_live(b->route) && b->route <= route_last;
    if (keep) {
        b->next_free = routed_free;
        routed_free = b;
        take_lost(b, 0);
        __atomic_add_fetch(&fdr__buf_routed_gen, 1, __ATOMIC_RELAXED);
    } else
        unlist(b);
    pthread_mutex_unlock(&route_lock);
    if (!keep)
        unmap(b);
}

void fdr__buf_set_route(unsigned slot, uint32_t route, int backfill)
{
    if (slot >= FDR__ROUTE_SLOTS)
        return;
    pthread_mutex_lock(&route_lock);
    uint32_t prev = fdr__routes[slot];
    __atomic_store_n(&fdr__route_backfill[slot], backfill ? route : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fdr__routes[slot], route, __ATOMIC_RELEASE);
    if (route > route_last)
        route_last = route;
    struct fdr__buf *old = NULL, **p = &routed_free;
    while (*p) {
        struct fdr__buf *b = *p;
        if (route_live(b->route))
            p = &b->next_free;
        else {
            *p = b->next_free;
            b->next_free = old;
            old = b;
            unlist(b);
        }
    }
    /* Counts kept for routes that ended (no ring of theirs came): their
     * traces have ended, and the entries would keep the slots; but one of
     * a dead fdrd's route in this slot goes to the route that takes it,
     * as its free rings' losses do (below). */
    uint32_t dead = __atomic_load_n(&fdr__route_dead_max, __ATOMIC_RELAXED);
    uint64_t carried = 0;
    uint32_t carried_tid = 0;
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
        if (route_lost[i].route && !route_live(route_lost[i].route)) {
            if (route_lost[i].route == prev && prev <= dead) {
                carried += route_lost[i].n;
                carried_tid = route_lost[i].tid;
            }
            lost_drop(i);
        }
    __atomic_store_n(&fdr__route_gen, fdr__route_gen + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&route_lock);
    /* Free rings of a dead fdrd's route (threads that ended gave them
     * back): what never reached its stream is lost to the route that
     * takes the slot (daemon.c, drop_connection; writer.c counts), in the
     * name of the ring's last thread: into a ring of the new route that
     * fdrd writes out (fdr__buf_route_lost), its rings being sent before
     * the route. */
    fdr__buf_route_lost(route, carried, carried_tid);
    for (struct fdr__buf *b = old; b; b = b->next_free)
        if (b->route <= dead) {
            uint64_t lost = fdr__buf_dead_lost_hook(b);
            uint64_t produced = __atomic_load_n(&b->hdr->produced, __ATOMIC_ACQUIRE);
            struct fdr__pkt last = {0};
            if (produced)
                memcpy(&last, fdr__buf_slot(b, produced - 1), sizeof last);
            fdr__buf_route_lost(route, lost, last.tid);
        }
    unmap_list(old);
}

void fdr__buf_dead_counted(uint32_t route, uint32_t index, uint64_t consumed)
{
    pthread_mutex_lock(&route_lock);
    if (ncuts < sizeof cuts / sizeof cuts[0])
        cuts[ncuts++] = (struct fdr__dead_cut){route, index, consumed};
    pthread_mutex_unlock(&route_lock);
    fdr__buf_dead_hook();
}

unsigned fdr__buf_dead_take(struct fdr__dead_cut *out, unsigned max)
{
    pthread_mutex_lock(&route_lock);
    unsigned n = ncuts < max ? ncuts : max;
    memcpy(out, cuts, n * sizeof *out);
    memmove(cuts, cuts + n, (ncuts - n) * sizeof *cuts);
    ncuts -= n;
    pthread_mutex_unlock(&route_lock);
    return n;
}

void fdr__buf_set_doorbell(int bell)
{
    /* A writer may be about to write to the old doorbell: its number is
     * never freed while the process lives, only pointed at the new one. */
    pthread_mutex_lock(&route_lock);
    int cur = __atomic_load_n(&doorbell, __ATOMIC_RELAXED);
    if (cur < 0)
        __atomic_store_n(&doorbell, bell, __ATOMIC_RELEASE);
    else {
        dup3(bell, cur, O_CLOEXEC);
        close(bell);
    }
    pthread_mutex_unlock(&route_lock);
}

void fdr__buf_ring_bell(void)
{
    int fd = __atomic_load_n(&doorbell, __ATOMIC_ACQUIRE);
    if (fd >= 0) {
        uint64_t one = 1;
        ssize_t k = write(fd, &one, sizeof one);
        (void)k;
    }
}

void fdr__buf_forget_all(void)
{
    /* The parent's route is the parent's: the child records alone. */
    pthread_mutex_init(&route_lock, NULL);
    unmap_list(routed_free);
    routed_free = NULL;
    routed_all = NULL; /* those in the parent's threads' hands: fdr__buf_unmap */
    if (doorbell >= 0)
        close(doorbell);
    doorbell = -1;
    memset(fdr__routes, 0, sizeof fdr__routes);
    memset(fdr__route_backfill, 0, sizeof fdr__route_backfill);
    route_last = 0;
    fdr__route_dead_max = 0;
    ncuts = 0;
    fdr__route_gen = 0;
    fdr__route_hold = 0; /* a hold of the parent's threads, none of them here */
    uint32_t n = count;
    for (uint32_t i = 0; i < n; i++) {
        munmap(all[i]->hdr, all[i]->geom.size);
        fdr__fd_close(all[i]->fd, &all[i]->fd_id);
        fdr__fd_close(all[i]->out_fd, &all[i]->out_id);
        free(all[i]);
        all[i] = NULL;
    }
    __atomic_store_n(&count, 0, __ATOMIC_RELEASE);
    free_list = spare = NULL;
    fdr__buf_ledger = NULL; /* the parent's, unmapped above */
    held = 0;
    if (route_lost_used)
        memset(route_lost, 0, sizeof route_lost);
    route_lost_used = 0;
}
