/* SPDX-License-Identifier: MIT */
/* collect.c - fdrd's data plane: rings for processes, packets to disk.
 *
 * A process that registered and sent its class table (CLASSES) is routed
 * into a started trace: fdrd sends it a ROUTE (a number, and the trace's
 * event selection), the trace's doorbell (an eventfd), and rings (BUFFER),
 * more when it asks (NEED_BUFFERS), up to FDRD_ROUTE_RINGS_MAX. Each ring
 * is a memfd that fdrd creates, sizes, seals (no shrink, no grow: the
 * process cannot make fdrd's mapping fault) and keeps mapped; its header
 * (common/ring.h) is written here, so the geometry fdrd reads by is its
 * own, never the process's. Each thread of the process takes one ring
 * (writer.c) and writes packets into it exactly as into its own.
 *
 * fdrd writes them out like libfdr's consumer (common/drain.h, the same
 * code): packets [consumed, produced) to
 *     <trace outdir>/<process name>-<pid>/stream_<ring>
 * after making sure the metadata there (written from the process's class
 * table, common/tsdl.h) knows every class; then `consumed` is stored for
 * the writer. Discard-mode traces are written as they fill (the doorbell,
 * and every 100 ms); flight-recorder and snapshot traces keep their rings
 * and are written at their end. The end of a route: its trace destroyed,
 * or the process gone however it ended (SIGKILL too: the socket hangs up).
 * Then the open packet of every ring is written too, up to its last
 * committed event (common/committed.h): nothing committed is lost.
 *
 * Untrusted: the process may scribble on its rings. Every packet is
 * checked (common/validate.h) and a bad one skipped; positions are read
 * once and bounded; the stream file's length and lost count are fdrd's own
 * (struct fdrd_ring), copied into the shared header only for the call that
 * uses them.
 *
 * A process records into every started trace at once (up to 32): each
 * route has a slot, the trace's bit in the process's selections (libfdr's
 * registry.c), and each thread has a ring per trace (writer.c: the first
 * is its fast path's, the others get a copy of what they select).
 *
 * File-backed buffers (bufdir.c): a trace created with them has its rings
 * in regular files instead of memfds, and each process's metadata and
 * class file beside them, rewritten when its class table grows, so that
 * `fdr recover` can rebuild the trace after fdrd died. A file cannot be
 * sealed: a program could shrink its ring file and make fdrd's next read
 * of the mapping fault (SIGBUS). So every access fdrd makes to a
 * file-backed ring runs under ring_guard: a SIGBUS there jumps back, the
 * ring is dropped (logged, counted nowhere else: the process broke its
 * own trace), and fdrd goes on. fdrd is one thread, so one jump buffer. */
#define _GNU_SOURCE
#include "collect.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bufdir.h"
#include "common/classes.h"
#include "common/committed.h"
#include "common/drain.h"
#include "common/iter.h"
#include "common/pattern.h"
#include "common/pathwalk.h"
#include "common/tracedir.h"
#include "common/tsdl.h"
#include "fdr/internal/fastpath.h" /* fdr__now */
#include "fdr/version.h"
#include "log.h"
#include "server.h"

struct fdrd_ring {
    struct fdr__buf_hdr *h; /* fdrd's mapping */
    struct fdr__ring_geom g;
    int out_fd;
    uint64_t out_bytes, out_lost;
    struct fdr__stream_state st; /* what the next packet must follow (validate.h) */
    /* live traces (live_out): packets are numbered by fdrd; the open
     * packet `part_seq` is in the file up to byte part_bytes of its slot */
    uint64_t out_seq, part_seq, part_bytes, part_ts, part_discarded;
    uint64_t pending_ns;  /* since when its committed part waits, 0: none */
    uint64_t touched_ns;  /* live: when its file's mtime was last set (live_mark) */
    uint64_t complete_rt; /* live: CLOCK_REALTIME ns when the file last held every
                           * committed event (live_mark), 0: not yet */
    int file;             /* a file-backed ring: read under ring_guard */
    int dead;             /* it faulted (its file shrunk): never read again */
};

struct fdrd_route {
    struct fdrd_route *next;
    uint32_t id, trace_id, mode, slot;
    uint32_t backfill; /* the trace was started before the process came */
    uint64_t live_ns;  /* a live trace's period: open packets flushed */
    char outdir[FDR_PROTO_PATH_CAP];
    int dir_fd;      /* <outdir>/<name>-<pid>, -1 until the first write */
    uint32_t meta_n; /* classes the metadata on disk knows */
    int failed;      /* a write error was logged */
    int bad_logged;  /* a packet fdrd could not trust was logged */
    unsigned nrings, cap;
    uint32_t index0; /* stream number of ring 0 (resume_dir) */
    uint32_t nlost;  /* LOST streams written (fdrd_collect_lost) */
    int lost_read;   /* its counts in the own rings taken at its end (route_lost_read) */
    char resume[FDR_PROTO_NAME_CAP + 32]; /* the directory it goes on in, or "" */
    uint64_t held;  /* bytes of its rings, against the trace's budget */
    unsigned spare; /* the larger ring given last (route_spare), from 1; 0: none */
    struct fdrd_ring *rings;
    int buf_top;         /* file-backed: the trace's buffer directory, or -1 */
    int buf_fd;          /* this process's directory in it, or -1 */
    uint32_t buf_meta_n; /* classes the metadata there knows */
    char buf_name[FDR_PROTO_NAME_CAP + 32]; /* its name */
};

static uint32_t last_route;

static struct fdrd_trace *trace_by_id(struct fdrd_server *s, uint32_t id)
{
    for (unsigned i = 0; i < s->traces.n; i++)
        if (s->traces.t[i]->id == id)
            return s->traces.t[i];
    return NULL;
}

/* ---- rings ----------------------------------------------------------------- */

/* Makes ring k of route r, of `bytes` of packets (within the budget); its
 * memfd in *fd. 0 or -1. */
static int ring_make(struct fdrd_route *r, const struct fdrd_trace *t, uint64_t bytes,
                     int *fd)
{
    if (r->nrings == r->cap) {
        unsigned cap = r->cap ? 2 * r->cap : 8;
        struct fdrd_ring *more = realloc(r->rings, cap * sizeof *more);
        if (!more)
            return -1;
        r->rings = more;
        r->cap = cap;
    }
    struct fdrd_ring *ring = &r->rings[r->nrings];
    memset(ring, 0, sizeof *ring); /* realloc'ed: out_bytes, out_lost from 0 */
    uint32_t packet = (uint32_t)t->packet_size;
    uint32_t n = (uint32_t)(bytes / t->packet_size);
    fdr__ring_budget(r->held, t->memory, &packet, &n);
    uint64_t size = FDR__BUF_HEADER + (uint64_t)n * packet;
    int m, named = 1;
    if (r->buf_fd >= 0) {
        m = fdrd_bufdir_ring(r->buf_fd, r->id, r->nrings, size, &named);
        if (m < 0) {
            errno = -m;
            return -1;
        }
    } else {
        m = memfd_create("fdrd-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (m < 0)
            return -1;
        if (ftruncate(m, (off_t)size) < 0 ||
            fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
            close(m);
            return -1;
        }
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
    if (p == MAP_FAILED) {
        close(m);
        return -1;
    }
    struct fdr__buf_hdr *h = p;
    h->magic = FDR__BUF_MAGIC;
    h->version = 1;
    h->packet_size = packet;
    h->n_packets = n;
    h->mode = t->mode == FDR__TRACE_DISCARD ? 0 : 1; /* FDR__MODE_* of libfdr */
    h->index = r->index0 + r->nrings;
    h->size = size;
    int e = named ? 0 : fdrd_bufdir_ring_link(r->buf_fd, m, r->id, r->nrings);
    if (e < 0) {
        munmap(p, size);
        close(m);
        errno = -e;
        return -1;
    }
    ring->h = h;
    ring->g = (struct fdr__ring_geom){packet, n, r->index0 + r->nrings, size};
    ring->out_fd = -1;
    ring->out_bytes = ring->out_lost = 0; /* realloc'ed: not zeroed */
    ring->file = r->buf_fd >= 0;
    ring->dead = 0;
    r->nrings++;
    r->held += size;
    *fd = m;
    return 0;
}

/* Sends up to `count` new rings of route r to c, of `bytes` each, as
 * `kind` (FDR__BUFFER_RING, or GROW: route_spare). */
static void give_rings(struct fdrd_server *s, struct fdrd_client *c, struct fdrd_route *r,
                       const struct fdrd_trace *t, unsigned count, uint64_t bytes,
                       uint32_t kind)
{
    for (unsigned i = 0; i < count && r->nrings < FDRD_ROUTE_RINGS_MAX; i++) {
        int fd;
        if (ring_make(r, t, bytes, &fd) < 0) {
            fdrd_log("client %lu (pid %ld): no ring for trace %s: %s", c->id,
                     (long)c->pid, t->name, strerror(errno));
            return;
        }
        struct fdr__msg_buffer b;
        memset(&b, 0, sizeof b);
        b.trace = t->id;
        b.kind = kind;
        b.size = r->rings[r->nrings - 1].g.size;
        b.route = r->id;
        fdr__proto_init(&b, sizeof b, FDR__MSG_BUFFER, 0);
        /* Sent or queued behind what the socket did not take yet (in
         * order); fails only when the process is dropped. */
        if (fdrd_server_send_fds(s, c, &b, sizeof b, &fd, 1, 0) < 0) {
            struct fdrd_ring *ring = &r->rings[--r->nrings];
            r->held -= ring->g.size;
            munmap(ring->h, ring->g.size);
            if (ring->file) /* its name is the next ring's */
                fdrd_bufdir_ring_remove(r->buf_fd, r->id, r->nrings);
            return;
        }
    }
}

/* Rings that follow activity (a discard trace with grow_size): every
 * thread starts with the trace's ring, and the process holds one larger
 * ring that nobody used yet, while the trace's budget has room for it; a
 * thread that finds its ring full moves to it (libfdr's writer.c,
 * make_room), and this gives the next. Its pages cost nothing until
 * written: RSS follows the threads that fill their rings, not the count
 * of threads. The old ring is written out like any other. */
static void route_spare(struct fdrd_server *s, struct fdrd_client *c,
                        struct fdrd_route *r, const struct fdrd_trace *t)
{
    if (!t || !t->grow_size || !t->active || r->mode != FDR__TRACE_DISCARD || c->dead)
        return;
    uint64_t size = FDR__BUF_HEADER + t->grow_size;
    if (r->spare && r->spare <= r->nrings) {
        const struct fdrd_ring *ring = &r->rings[r->spare - 1];
        if (!__atomic_load_n(&ring->h->produced, __ATOMIC_RELAXED))
            return; /* not taken yet */
    }
    if (r->held + size > t->memory || r->nrings >= FDRD_ROUTE_RINGS_MAX)
        return;
    give_rings(s, c, r, t, 1, t->grow_size, FDR__BUFFER_GROW);
    if (r->nrings && r->rings[r->nrings - 1].g.size == size)
        r->spare = r->nrings;
}

/* ---- writing out ---------------------------------------------------------- */

struct meta_ctx {
    const struct fdrd_client *c;
    struct fdr__classes classes;
    char buf[8192];
};

static int emit_metadata(int fd, void *arg)
{
    struct meta_ctx *x = arg;
    const struct fdr__msg_classes *m = &x->c->col->params;
    struct utsname un;
    if (uname(&un) < 0)
        snprintf(un.nodename, sizeof un.nodename, "unknown");
    struct fdr__tsdl_params p = {
        .clock_freq = m->clock_freq,
        .clock_offset_s = m->clock_offset_s,
        .clock_offset = m->clock_offset,
        .clock_desc = "the process's clock (libfdr), as it described it to fdrd",
        .pid = (long)x->c->pid,
        .procname = x->c->info.name,
        .hostname = un.nodename,
        .version = {FDR_VERSION_MAJOR, FDR_VERSION_MINOR, FDR_VERSION_PATCH},
        .version_string = FDR_VERSION_STRING,
        .classes = &x->classes,
    };
    memcpy(p.uuid, m->uuid, sizeof p.uuid);
    return fdr__tsdl_emit(fd, x->buf, sizeof x->buf, &p);
}

static int emit_classes(int fd, void *arg)
{
    struct meta_ctx *x = arg;
    struct fdr__line_clock k = {x->c->col->params.line_start,
                                x->c->col->params.line_freq};
    return fdr__classes_emit(fd, x->buf, sizeof x->buf, &x->classes, &k);
}

static void route_error(const struct fdrd_client *c, struct fdrd_route *r,
                        const char *what, int err)
{
    if (!r->failed)
        fdrd_log("trace output %s, process %ld: %s: %s", r->outdir, (long)c->pid, what,
                 fdr__pathwalk_strerror(err));
    r->failed = 1;
}

/* The directory of route r exists and its metadata knows every class the
 * table has now (read before any packet: a class is in the table before
 * any event of it is in a ring). 0 or -1. */
/* Makes <outdir>/<process name>-<pid> (and outdir's missing parents, by
 * common/pathwalk.h's rule: never through a symlink or into a directory
 * another user planted): its fd, or -errno with what failed in *what (the
 * refused component of outdir). A directory of that name made
 * before (the same pid registered again: a program that called exec, or an
 * earlier trace with the same output directory) is never written over:
 * the new one is <process name>-<pid>-2, -3, ... */
static int proc_dir(const struct fdrd_client *c, const char *outdir, const char *resume,
                    const char **what)
{
    static char at[FDR_PROTO_PATH_CAP];
    if (resume && resume[0]) { /* resume_dir */
        int top = fdr__pathwalk(outdir, 0755 | FDR__WALK_PARENTS, at, sizeof at);
        int fd = top < 0 ? top : fdr__tracedir_make(top, resume);
        if (top >= 0)
            close(top);
        *what = top < 0 ? at : resume;
        return fd;
    }
    int top = fdr__pathwalk(outdir, 0755 | FDR__WALK_PARENTS, at, sizeof at);
    if (top < 0) {
        *what = at;
        return top;
    }
    static char base[FDR_PROTO_NAME_CAP + 32], name[FDR_PROTO_NAME_CAP + 48];
    fdr__tracedir_name(base, sizeof base, c->info.name[0] ? c->info.name : "process",
                       (unsigned long)c->pid);
    snprintf(name, sizeof name, "%s", base);
    for (unsigned k = 2; mkdirat(top, name, 0700) < 0 && errno == EEXIST && k < 1000; k++)
        snprintf(name, sizeof name, "%s-%u", base, k);
    int fd = fdr__tracedir_make(top, name);
    close(top);
    *what = name;
    return fd;
}

/* The metadata in dir_fd knows every class of c's table, which had *meta_n
 * when it was last written. 0 or -errno. */
static int write_meta(const struct fdrd_client *c, int dir_fd, uint32_t *meta_n)
{
    static struct meta_ctx x; /* one thread: 8 KiB not on the stack */
    x.c = c;
    if (fdr__classes_from_table(c->col->classes, c->col->classes_size, &x.classes) < 0)
        return -EINVAL;
    if (x.classes.n == *meta_n && *meta_n)
        return 0;
    /* The class file first: a reader that finds a class in the metadata
     * finds it there too. */
    int e = fdr__tracedir_replace(dir_fd, FDR__CLASSES_FILE, emit_classes, &x);
    if (e == 0)
        e = fdr__tracedir_replace(dir_fd, "metadata", emit_metadata, &x);
    if (e == 0)
        *meta_n = x.classes.n;
    return e;
}

static int ensure_dir(const struct fdrd_client *c, struct fdrd_route *r)
{
    if (r->dir_fd < 0) {
        const char *what;
        r->dir_fd = proc_dir(c, r->outdir, r->resume, &what);
        if (r->dir_fd < 0) {
            route_error(c, r, what, -r->dir_fd);
            r->dir_fd = -1;
            return -1;
        }
        /* Open until route_end has written it all: should fdrd die first
         * and no fdrd take the process on, the mark says so to readers
         * (common/tracedir.h). A mark that cannot be made costs no event. */
        fdr__tracedir_mark_open(r->dir_fd, 1);
    }
    int e = write_meta(c, r->dir_fd, &r->meta_n);
    if (e < 0) {
        route_error(c, r, "metadata", -e);
        return -1;
    }
    return 0;
}

/* Ring's stream file is open (made, with the metadata, on first use) and
 * *t views the process's classes. 0 or -1 (logged once). */
static int open_stream(const struct fdrd_client *c, struct fdrd_route *r,
                       struct fdrd_ring *ring, struct fdr__classes *t)
{
    if (ensure_dir(c, r) < 0)
        return -1;
    if (ring->out_fd < 0) {
        char name[32];
        snprintf(name, sizeof name, "stream_%u", ring->g.index);
        ring->out_fd = fdr__tracedir_create(r->dir_fd, name);
        if (ring->out_fd < 0) {
            route_error(c, r, name, -ring->out_fd);
            return -1;
        }
    }
    fdr__classes_from_table(c->col->classes, c->col->classes_size, t);
    return 0;
}

/* Packets copied and written per batch (common/drain.h), no more than the
 * copy buffer holds. */
static unsigned batch_size(const struct fdr__ring_geom *g, uint64_t waiting)
{
    unsigned n = fdr__drain_batch(g->n_packets, waiting);
    if (n > FDRD_PACKET_MAX / g->packet_size)
        n = FDRD_PACKET_MAX / g->packet_size;
    return n;
}

/* Writes the closed packets of ring k; with `last`, the open one too and,
 * in flight-recorder mode, only the newest that the ring still holds. */
static void ring_out(const struct fdrd_client *c, struct fdrd_route *r, unsigned k,
                     int last)
{
    struct fdrd_ring *ring = &r->rings[k];
    struct fdr__buf_hdr *h = ring->h;
    const struct fdr__ring_geom *g = &ring->g;
    /* Pairs with the writer's release store of `produced` (writer.c). */
    uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
    uint64_t consumed = __atomic_load_n(&h->consumed, __ATOMIC_RELAXED);
    if (produced == consumed && !last)
        return;
    struct fdr__open_packet op;
    if (produced == 0 && ring->out_fd < 0 &&
        (!last || fdr__committed(h, g->size, &op) != 1 ||
         op.bytes <= sizeof(struct fdr__pkt)))
        return; /* never used: no stream file */
    if (consumed > produced || produced - consumed > g->n_packets)
        consumed = produced > g->n_packets ? produced - g->n_packets : 0;
    struct fdr__classes t;
    if (open_stream(c, r, ring, &t) < 0)
        return;
    /* The stream file's state is fdrd's: put in the shared header for the
     * calls that read it, taken back right after. */
    h->out_bytes = ring->out_bytes;
    h->out_lost = ring->out_lost;
    while (consumed < produced) {
        /* Private copies, checked, are what is written: the process may
         * write over its ring meanwhile. A batch of them in one writev
         * (common/drain.h). */
        static char copy[FDRD_PACKET_MAX];
        const char *slot[FDR__DRAIN_BATCH];
        uint64_t grown[FDR__DRAIN_BATCH];
        unsigned n = batch_size(g, produced - consumed);
        for (unsigned i = 0; i < n; i++) {
            slot[i] = copy + (size_t)i * g->packet_size;
            fdr__packet_copy((char *)slot[i], fdr__ring_slot(h, g, consumed + i),
                             g->packet_size);
        }
        int rc = fdr__drain_packets(ring->out_fd, h, g, consumed, n, slot, &t, &ring->st,
                                    grown);
        if (rc > 0 && !r->bad_logged) {
            r->bad_logged = 1;
            fdrd_log("client %lu (pid %ld): ring %u: %d of packets %llu.. corrupt (bad "
                     "header, event or time), skipped; their events are lost (logged "
                     "once)",
                     c->id, (long)c->pid, g->index, rc, (unsigned long long)consumed);
        }
        for (unsigned i = 0; i < n; i++, consumed++) {
            if (rc < 0) {
                /* The batch could not be written: one by one, each
                 * packet's events counted when it cannot be either. */
                int one = fdr__drain_slot(ring->out_fd, h, g, consumed, slot[i], &t,
                                          &ring->st, &grown[i]);
                if (one < 0)
                    route_error(c, r, "stream", -one);
            }
            ring->out_lost = h->out_lost;
            ring->out_bytes += grown[i];
            h->out_bytes = ring->out_bytes;
            /* The slot is free again; pairs with the writer's acquire load
             * of `consumed` (writer.c, open_packet). */
            __atomic_store_n(&h->consumed, consumed + 1, __ATOMIC_RELEASE);
        }
    }
    /* The open packet, if it follows what was written (drain.h). */
    if (last) {
        h->out_lost = ring->out_lost;
        fdr__drain_open_packet(ring->out_fd, h, g, produced, &t, &ring->st);
        ring->out_bytes = h->out_bytes;
    }
}

/* ---- live traces ------------------------------------------------------------ */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Writes bytes [from, to) of the packet at slot (header hdr, checked) as
 * one packet numbered by fdrd, beginning at ts_begin; on a write error
 * its events are counted in out_lost. 0 or -errno. */
static int live_write(struct fdrd_ring *ring, const char *slot, struct fdr__pkt hdr,
                      uint64_t from, uint64_t to, uint64_t ts_begin,
                      const struct fdr__classes *t)
{
    uint64_t body = to - from;
    hdr.seq = ring->out_seq;
    hdr.ts_begin = ts_begin;
    hdr.discarded += ring->out_lost;
    hdr.content_size = (sizeof hdr + body) * 8;
    ring->h->out_bytes = ring->out_bytes;
    int rc = fdr__packet_write(ring->out_fd, &hdr, slot + from);
    if (rc < 0) {
        fdr__drain_cut(ring->out_fd, ring->h);
        struct fdr__iter it;
        struct fdr__event ev;
        fdr__iter_init(&it, slot, to, t);
        while (fdr__iter_next(&it, &ev) > 0)
            ring->out_lost += (uint64_t)(ev.payload - slot) > from;
        return rc;
    }
    ring->out_seq++;
    ring->out_bytes += sizeof hdr + body;
    ring->part_discarded = hdr.discarded;
    return 0;
}

/* The end of the last event of packet slot (header hdr) below `bytes`
 * that the validator takes (validate.h: whole, forward in time), if it is
 * past `from`, and the time of that event in *last (unchanged when none). */
static uint64_t last_event(const char *slot, const struct fdr__pkt *hdr, uint64_t from,
                           uint64_t bytes, const struct fdr__classes *t, uint64_t *last)
{
    uint64_t ts;
    uint64_t good = fdr__packet_prefix(slot, bytes, hdr, t, FDR__TS_LIMIT - 1, &ts);
    if (good <= from)
        return from;
    *last = ts;
    return good;
}

static uint64_t real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A live ring's stream file's mtime is the last time the file held every
 * event committed then (relay.c's live beacons claim nothing later than a
 * period before it, so that no event sent later is older than a beacon
 * sent before it: babeltrace2's lttng-live stops at a stream whose time
 * goes back). check_rt was read before the turn loaded the ring's
 * positions; `left`: a committed part is still unwritten (waiting its half
 * period), so the time stays the last one with none, or 1 s after the
 * epoch while there was none (relay.c: then no beacon past what was
 * sent). A write set the mtime to now, which claimed the events still
 * waiting were in the file (a slow fdrd at load 30 made lttng-live
 * abort): it is set back at once; otherwise at most every quarter period.
 * Before, the mtime was simply the last write's or touch's. */
static void live_mark(struct fdrd_ring *ring, const struct fdrd_route *r,
                      uint64_t check_rt, int left, int wrote)
{
    if (ring->out_fd < 0)
        return;
    if (!left)
        ring->complete_rt = check_rt;
    uint64_t now = mono_ns();
    if (!wrote && (left || now - ring->touched_ns < r->live_ns / 4))
        return;
    uint64_t t = ring->complete_rt ? ring->complete_rt : 1000000000ull;
    struct timespec ts[2] = {
        {.tv_nsec = UTIME_OMIT},
        {.tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u)}};
    futimens(ring->out_fd, ts);
    ring->touched_ns = now;
}

/* A live trace's ring (streamed to relayd, or tailed by the scope, with a period):
 * closed packets as ring_out writes them, but what an earlier turn wrote
 * of a packet while it was open is left out; then the committed part of
 * the open packet, once it has waited half a period (`force`: at once),
 * goes out as a packet of its own. Packets are numbered by fdrd, so a
 * packet written in parts is still a gapless sequence for readers. */
static void live_out(const struct fdrd_client *c, struct fdrd_route *r, unsigned k,
                     int force)
{
    struct fdrd_ring *ring = &r->rings[k];
    struct fdr__buf_hdr *h = ring->h;
    const struct fdr__ring_geom *g = &ring->g;
    uint64_t check_rt = real_ns(); /* before the loads: live_mark */
    uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
    uint64_t consumed = __atomic_load_n(&h->consumed, __ATOMIC_RELAXED);
    struct fdr__open_packet op;
    int open = fdr__committed(h, g->size, &op);
    if (open == 1 && (op.seq != produced || op.bytes <= sizeof(struct fdr__pkt)))
        open = 0;
    if ((produced == consumed && !open && !force) ||
        (produced == 0 && ring->out_fd < 0 && !open)) {
        live_mark(ring, r, check_rt, 0, 0);
        return; /* nothing new; or never used: no stream file */
    }
    uint64_t bytes0 = ring->out_bytes, lost0 = ring->out_lost;
    int left = open == 1; /* until the open packet's committed part is written */
    if (consumed > produced || produced - consumed > g->n_packets)
        consumed = produced > g->n_packets ? produced - g->n_packets : 0;
    struct fdr__classes t;
    if (open_stream(c, r, ring, &t) < 0)
        return;
    for (; consumed < produced; consumed++) {
        const char *slot = fdr__ring_slot(h, g, consumed);
        struct fdr__pkt hdr;
        /* The one check of every reader (validate.h); a part written
         * while it was open was checked as far as it went. */
        if (fdr__pkt_check(slot, g, consumed, &hdr) == 0 &&
            fdr__packet_valid(slot, &hdr, &t, &ring->st) == 0) {
            int part = ring->part_bytes && ring->part_seq == consumed;
            uint64_t from = part ? ring->part_bytes : sizeof hdr;
            uint64_t to = hdr.content_size / 8;
            if (from <= to) {
                int rc = live_write(ring, slot, hdr, from, to,
                                    part ? ring->part_ts : hdr.ts_begin, &t);
                if (rc < 0)
                    route_error(c, r, "stream", -rc);
            }
        }
        ring->part_bytes = 0;
        ring->pending_ns = 0;
        /* The slot is free again; pairs with the writer's acquire load
         * of `consumed` (writer.c, open_packet). */
        __atomic_store_n(&h->consumed, consumed + 1, __ATOMIC_RELEASE);
    }
    if (open == 1 &&
        op.offset == (size_t)(fdr__ring_slot(h, g, op.seq) - (const char *)h)) {
        const char *slot = (const char *)h + op.offset;
        struct fdr__pkt hdr;
        int part = ring->part_bytes && ring->part_seq == op.seq;
        uint64_t from = part ? ring->part_bytes : sizeof hdr, last = 0;
        if (fdr__pkt_check(slot, g, op.seq, &hdr) == 0 &&
            hdr.ts_begin >= ring->st.last_ts && hdr.seq >= ring->st.next_seq) {
            uint64_t to = last_event(slot, &hdr, from, op.bytes, &t, &last);
            uint64_t now = mono_ns();
            left = to > from;
            if (to > from && !ring->pending_ns)
                ring->pending_ns = now;
            if (to > from && (force || now - ring->pending_ns >= r->live_ns / 2)) {
                hdr.ts_end = last;
                if (live_write(ring, slot, hdr, from, to,
                               part ? ring->part_ts : hdr.ts_begin, &t) == 0) {
                    ring->part_seq = op.seq;
                    ring->part_bytes = to;
                    ring->part_ts = last;
                }
                ring->pending_ns = 0;
                left = 0;
            }
        }
    }
    if (force) {
        /* Events discarded that no packet reports yet: a header-only
         * packet after the last one says them (never the first). */
        uint64_t total =
            h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED) + ring->out_lost;
        if (ring->out_seq > 0 && total > ring->part_discarded) {
            struct fdr__pkt hdr;
            const char *slot = fdr__ring_slot(h, g, produced ? produced - 1 : 0);
            if (fdr__pkt_check(slot, g, produced ? produced - 1 : 0, &hdr) == 0) {
                hdr.discarded = total - ring->out_lost; /* live_write adds it */
                hdr.ts_begin = hdr.ts_end;
                live_write(ring, slot, hdr, sizeof hdr, sizeof hdr, hdr.ts_end, &t);
            }
        }
    }
    live_mark(ring, r, check_rt, left,
              ring->out_bytes != bytes0 || ring->out_lost != lost0);
}

/* ---- the SIGBUS guard of file-backed rings -------------------------------- */

static sigjmp_buf guard_jmp;
static volatile sig_atomic_t guard_on;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    if (guard_on) {
        guard_on = 0;
        siglongjmp(guard_jmp, 1);
    }
    signal(sig, SIG_DFL); /* not a ring's: fdrd dies of it, as without us */
}

static void guard_install(void)
{
    static int done;
    if (done)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
    done = 1;
}

static void ring_faulted(const struct fdrd_client *c, const struct fdrd_route *r,
                         struct fdrd_ring *ring)
{
    ring->dead = 1;
    fdrd_log("client %lu (pid %ld): ring %u of route %u faulted (its file was shrunk): "
             "dropped",
             c->id, (long)c->pid, ring->g.index, r->id);
}

/* ring_out, under the guard when the ring is a file. */
static void ring_out_guarded(const struct fdrd_client *c, struct fdrd_route *r,
                             unsigned k, int last)
{
    struct fdrd_ring *ring = &r->rings[k];
    if (ring->dead)
        return;
    if (!ring->file) {
        ring_out(c, r, k, last);
        return;
    }
    guard_install();
    if (sigsetjmp(guard_jmp, 1)) {
        ring_faulted(c, r, ring);
        return;
    }
    guard_on = 1;
    ring_out(c, r, k, last);
    guard_on = 0;
}

/* The metadata in the buffer directory knows every class (a no-op when
 * the class table did not grow). */
static void buf_meta(const struct fdrd_client *c, struct fdrd_route *r)
{
    if (r->buf_fd < 0)
        return;
    int e = write_meta(c, r->buf_fd, &r->buf_meta_n);
    if (e < 0)
        route_error(c, r, "metadata in the buffer directory", -e);
}

static void route_pass(const struct fdrd_client *c, struct fdrd_route *r)
{
    buf_meta(c, r);
    if (r->mode != FDR__TRACE_DISCARD)
        return; /* a flight recorder is written at its end */
    for (unsigned k = 0; k < r->nrings; k++)
        if (r->live_ns)
            live_out(c, r, k, 0);
        else
            ring_out_guarded(c, r, k, 0);
}

static void route_end(const struct fdrd_client *c, struct fdrd_route *r)
{
    for (unsigned k = 0; k < r->nrings; k++) {
        if (r->live_ns)
            live_out(c, r, k, 1);
        else
            ring_out_guarded(c, r, k, 1);
        struct fdrd_ring *ring = &r->rings[k];
        if (ring->out_fd >= 0)
            close(ring->out_fd);
        munmap(ring->h, ring->g.size);
    }
    if (r->buf_fd >= 0) {
        /* Written out: the files are needed no more, unless a write failed
         * (then fdr recover can still read them). */
        if (!r->failed)
            fdrd_bufdir_proc_remove(r->buf_top, r->buf_fd, r->buf_name);
        else {
            close(r->buf_fd);
            fdrd_log("buffer directory of %s kept: a write failed", r->buf_name);
        }
    }
    if (r->buf_top >= 0)
        close(r->buf_top);
    if (r->dir_fd >= 0) {
        fdr__tracedir_mark_done(r->dir_fd); /* every event written or counted */
        close(r->dir_fd);
    }
    free(r->rings);
    free(r);
}

/* ---- routes --------------------------------------------------------------- */

static void send_route(struct fdrd_client *c, struct fdrd_route *r,
                       const struct fdrd_trace *t, int active)
{
    uint64_t buf[(sizeof(struct fdr__msg_route) + FDR_PROTO_ITEMS_CAP) / 8 + 1];
    struct fdr__msg_route *m = (void *)buf;
    size_t len = sizeof *m + (active ? t->len : 0);
    memset(m, 0, sizeof *m);
    m->trace = t->id;
    m->active = (uint32_t)active;
    m->route = r->id;
    m->mode = t->mode;
    m->slot = r->slot;
    m->mask = t->mask;
    m->flags = r->backfill ? FDR__ROUTE_BACKFILL : 0;
    if (active) {
        m->nitems = t->nitems;
        m->len = t->len;
        memcpy(m->items, t->items, t->len);
    }
    fdr__proto_init(m, len, FDR__MSG_ROUTE, 0);
    /* Queued when the socket is full (never lost: fails only when the
     * process is dropped, logged there). A selection still queued is
     * replaced by the newer one (key: the route); an end never replaces
     * the beginning the process has not read yet. */
    fdrd_server_send_fds(NULL, c, m, len, NULL, 0, active ? r->id : 0);
}

/* The route of client c into trace t now, or NULL. */
static struct fdrd_route *route_of(const struct fdrd_client *c,
                                   const struct fdrd_trace *t)
{
    if (!c->col)
        return NULL;
    for (unsigned i = 0; i < FDR_PROTO_TRACES_MAX; i++)
        if (c->col->slot[i] && c->col->slot[i]->trace_id == t->id)
            return c->col->slot[i];
    return NULL;
}

/* <outdir>/<name>-<pid> of a process that registers again after fdrd was
 * killed: the same process when its uuid is the one in the metadata
 * there (a new image after exec has another). Its fd (name in base), or
 * -1. */
static int same_process_dir(const struct fdrd_client *c, const char *outdir, char *base,
                            size_t cap)
{
    fdr__tracedir_name(base, cap, c->info.name[0] ? c->info.name : "process",
                       (unsigned long)c->pid);
    int top = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int dir =
        top < 0 ? -1 : openat(top, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (top >= 0)
        close(top);
    if (dir < 0)
        return -1;
    char text[4096], uuid[48];
    const uint8_t *u = c->col->params.uuid;
    snprintf(
        uuid, sizeof uuid,
        "uuid = \"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"",
        u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
        u[13], u[14], u[15]);
    int m = openat(dir, "metadata", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    ssize_t n = m < 0 ? -1 : read(m, text, sizeof text - 1);
    if (m >= 0)
        close(m);
    text[n > 0 ? n : 0] = 0;
    if (n <= 0 || !strstr(text, uuid)) {
        close(dir);
        return -1;
    }
    return dir;
}

/* A process that registers again after fdrd was killed goes on in the
 * directory it had (same_process_dir): the trace stays one trace for
 * readers (babeltrace2 merges directories of one uuid, and a stream
 * number used twice would mix two streams). Its new rings are numbered
 * after the streams there. Sets r->resume and r->index0. */
static void resume_dir(const struct fdrd_client *c, struct fdrd_route *r)
{
    char base[sizeof r->resume];
    int dir = same_process_dir(c, r->outdir, base, sizeof base);
    DIR *d = dir < 0 ? NULL : fdopendir(dir);
    if (!d) {
        if (dir >= 0)
            close(dir);
        return;
    }
    uint32_t next = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        unsigned long k;
        if (strncmp(e->d_name, "stream_", 7) == 0 &&
            (k = strtoul(e->d_name + 7, &end, 10)) < (1ul << 30) && !*end && k >= next)
            next = (uint32_t)k + 1;
    }
    closedir(d);
    memcpy(r->resume, base, sizeof r->resume);
    r->index0 = next;
    fdrd_log("client %lu (pid %ld): registered again: goes on in %s/%s, streams from %u",
             c->id, (long)c->pid, r->outdir, base, next);
}

void fdrd_collect_dead_ring(struct fdrd_server *s, struct fdrd_client *c,
                            const struct fdr__msg_dead_ring *m)
{
    struct fdrd_trace *t = trace_by_id(s, m->trace);
    const struct fdrd_route *r = t ? route_of(c, t) : NULL;
    char base[FDR_PROTO_NAME_CAP + 32], name[32];
    /* Only a stream that was there when the process came back (a later
     * one is the new fdrd's); not a live trace's, whose packets fdrd
     * numbers itself (live_out). */
    int dir = !r || !r->resume[0] || m->index >= r->index0 || t->relay_opts.live_us
                  ? -1
                  : same_process_dir(c, t->outdir, base, sizeof base);
    if (dir < 0)
        return;
    snprintf(name, sizeof name, "stream_%u", m->index);
    int fd = openat(dir, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    close(dir);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        return;
    }
    uint64_t at = 0, size = (uint64_t)st.st_size;
    struct fdr__pkt p;
    while (size - at >= sizeof p && pread(fd, &p, sizeof p, (off_t)at) == sizeof p &&
           p.magic == FDR__CTF_MAGIC && p.seq < m->consumed && p.packet_size % 8 == 0 &&
           p.packet_size / 8 >= sizeof p && p.packet_size / 8 <= size - at)
        at += p.packet_size / 8;
    if (at < size && ftruncate(fd, (off_t)at) == 0)
        fdrd_log(
            "%s/%s/%s: cut from %llu to %llu bytes (packets the killed fdrd wrote but "
            "had not marked written: the process counts them as discarded)",
            t->outdir, base, name, (unsigned long long)size, (unsigned long long)at);
    close(fd);
}

/* Routes client c into trace t, in its lowest free slot; `backfill` when
 * the trace was started before c registered. */
static void route_begin(struct fdrd_server *s, struct fdrd_client *c,
                        struct fdrd_trace *t, int backfill)
{
    unsigned slot = 0;
    while (slot < FDR_PROTO_TRACES_MAX && c->col->slot[slot])
        slot++;
    if (slot == FDR_PROTO_TRACES_MAX || route_of(c, t) ||
        (t->pid && t->pid != (uint32_t)c->pid))
        return; /* no slot left, routed already, or a trace of another process */
    struct fdrd_route *r = calloc(1, sizeof *r);
    if (!r) {
        fdrd_log("client %lu (pid %ld): out of memory for trace %s", c->id, (long)c->pid,
                 t->name);
        return;
    }
    r->id = ++last_route;
    r->trace_id = t->id;
    r->mode = t->mode;
    r->slot = slot;
    r->backfill = (uint32_t)backfill;
    r->live_ns = (uint64_t)t->relay_opts.live_us * 1000;
    r->dir_fd = -1;
    r->buf_top = r->buf_fd = -1;
    memcpy(r->outdir, t->outdir, sizeof r->outdir);
    resume_dir(c, r);
    if (t->buf_fd >= 0) {
        /* File-backed: this process's directory, with its metadata first. */
        r->buf_top = fcntl(t->buf_fd, F_DUPFD_CLOEXEC, 0);
        int fd = r->buf_top < 0
                     ? -errno
                     : fdrd_bufdir_proc(r->buf_top, c->info.name, (long)c->pid, r->id,
                                        r->buf_name, sizeof r->buf_name);
        if (fd < 0) {
            fdrd_log("client %lu (pid %ld): no buffer directory for trace %s: %s; "
                     "its rings are memfds",
                     c->id, (long)c->pid, t->name, strerror(-fd));
        } else {
            r->buf_fd = fd;
            buf_meta(c, r);
        }
    }
    r->next = c->col->routes;
    c->col->routes = r;
    c->col->slot[slot] = r;
    /* The doorbell and the first rings before the route: the process's
     * threads find them when they move. */
    int bell = c->dead ? -1 : fcntl(s->bell, F_DUPFD_CLOEXEC, 0);
    if (bell >= 0) {
        struct fdr__msg_buffer b;
        memset(&b, 0, sizeof b);
        b.trace = t->id;
        b.kind = FDR__BUFFER_DOORBELL;
        b.route = r->id;
        fdr__proto_init(&b, sizeof b, FDR__MSG_BUFFER, 0);
        fdrd_server_send_fds(s, c, &b, sizeof b, &bell, 1, 0);
    }
    if (c->dead)
        return; /* gone already (its messages read at its end): only the copy */
    give_rings(s, c, r, t, 4, t->buffer_size, FDR__BUFFER_RING);
    route_spare(s, c, r, t);
    send_route(c, r, t, 1);
}

int fdrd_collect_classes(struct fdrd_server *s, struct fdrd_client *c,
                         const struct fdr__msg_classes *m, int fd)
{
    int seals = fcntl(fd, F_GET_SEALS);
    if (c->col || !c->registered || m->size < sizeof(struct fdr__class_table) ||
        seals < 0 || !(seals & F_SEAL_SHRINK)) {
        close(fd);
        fdrd_log("client %lu (pid %ld): a class table fdrd cannot use "
                 "(sent twice, before registering, too small or not sealed); dropped",
                 c->id, (long)c->pid);
        return -1;
    }
    void *p = mmap(NULL, m->size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    c->col = calloc(1, sizeof *c->col);
    if (!c->col) {
        munmap(p, m->size);
        return -1;
    }
    c->col->classes = p;
    c->col->classes_size = m->size;
    c->col->params = *m;
    for (unsigned i = 0; i < s->traces.n; i++)
        if (s->traces.t[i]->active)
            route_begin(s, c, s->traces.t[i], 1);
    return 0;
}

void fdrd_collect_need(struct fdrd_server *s, struct fdrd_client *c,
                       const struct fdr__msg_need_buffers *m)
{
    if (!c->col)
        return;
    for (unsigned i = 0; i < FDR_PROTO_TRACES_MAX; i++) {
        struct fdrd_route *r = c->col->slot[i];
        if (!r || r->id != m->route)
            continue; /* a route that ended meanwhile is not found */
        struct fdrd_trace *t = trace_by_id(s, r->trace_id);
        if (t)
            give_rings(s, c, r, t, m->count < 64 ? m->count : 64, t->buffer_size,
                       FDR__BUFFER_RING);
    }
}

void fdrd_collect_started(struct fdrd_server *s, struct fdrd_trace *t)
{
    for (unsigned i = 0; i < s->nclients; i++) {
        struct fdrd_client *c = s->clients[i];
        if (c->col && !c->dead)
            route_begin(s, c, t, 0);
    }
}

void fdrd_collect_changed(struct fdrd_server *s, struct fdrd_trace *t)
{
    for (unsigned i = 0; i < s->nclients; i++) {
        struct fdrd_route *r = route_of(s->clients[i], t);
        if (r && !s->clients[i]->dead)
            send_route(s->clients[i], r, t, 1);
    }
}

static void route_lost_read(struct fdrd_client *c, struct fdrd_route *r);

void fdrd_collect_stopped(struct fdrd_server *s, struct fdrd_trace *t)
{
    for (unsigned i = 0; i < s->nclients; i++) {
        struct fdrd_client *c = s->clients[i];
        struct fdrd_route *r = route_of(c, t);
        if (!r)
            continue;
        c->col->slot[r->slot] = NULL;
        if (!c->dead) {
            route_lost_read(c, r); /* before the process hears of it */
            send_route(c, r, t, 0);
        }
    }
}

void fdrd_collect_destroyed(struct fdrd_server *s, struct fdrd_trace *t)
{
    if (t->active) {
        t->active = 0;
        fdrd_collect_stopped(s, t);
    }
    for (unsigned i = 0; i < s->nclients; i++) {
        struct fdrd_client *c = s->clients[i];
        if (!c->col)
            continue;
        for (struct fdrd_route **rp = &c->col->routes; *rp;) {
            struct fdrd_route *r = *rp;
            if (r->trace_id != t->id) {
                rp = &r->next;
                continue;
            }
            if (!c->dead)
                route_lost_read(c, r);
            *rp = r->next;
            /* The process may still be writing its last packets into
             * these rings: their committed part is what it recorded while
             * the trace was there. */
            route_end(c, r);
        }
    }
}

/* ---- a process's own rings: its events before the route ---------------------
 *
 * libfdr hands fdrd the rings it makes in its registration window
 * (OWN_RING): a thread records there until it moves to its routes, and
 * then hands over what it recorded to each trace that wants its past
 * (BACKFILL), marking it handed in the ring (common/ring.h, handed_tid,
 * handed_below). A process killed, or ending by _exit or exec, before
 * that leaves it in its own rings, which fdrd copies here when the
 * process is gone: every packet of a thread that did not hand over, the
 * events the trace takes (its selection and mask, as libfdr decides),
 * into a stream of their own, stream_<FDRD_OWN_STREAM + ring>, with the
 * events the ring lost meanwhile (full) counted as discarded there.
 * Untrusted like every ring: each packet is copied, checked and
 * written by the one validator (common/drain.h); one it refuses is
 * skipped and left as a gap babeltrace2 reports. */

void fdrd_collect_own_ring(struct fdrd_client *c, const struct fdr__msg_own_ring *m,
                           int fd)
{
    struct fdr__ring_geom g = {m->packet_size, m->n_packets, m->index, m->size};
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    void *p = MAP_FAILED;
    if (c->col && c->col->nown < FDRD_OWN_MAX && seals >= 0 && (seals & F_SEAL_SHRINK) &&
        fstat(fd, &st) == 0 && fdr__geom_check(&g, (uint64_t)st.st_size) == 0 &&
        m->index < FDRD_OWN_STREAM && g.size <= FDRD_OWN_SIZE_MAX)
        p = mmap(NULL, g.size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        fdrd_log("client %lu (pid %ld): an own ring fdrd cannot use (before its class "
                 "table, too many, not sealed, over 2 GiB or not the size it says); "
                 "ignored",
                 c->id, (long)c->pid);
        return;
    }
    c->col->own[c->col->nown].h = p;
    c->col->own[c->col->nown].g = g;
    c->col->nown++;
}

/* 1 when trace t takes events of class k (as libfdr's registry.c decides
 * for a route: the last matching item of the selection, none: not; and
 * the category's bit of the mask). */
static int takes(const struct fdr__rules *rules, uint32_t mask,
                 const struct fdr__classes *t, const struct fdr__class *k)
{
    return k && (mask >> (k->category & 31) & 1) &&
           fdr__rules_match(rules, fdr__classes_str(t, k->provider),
                            fdr__classes_str(t, k->event)) == 1;
}

/* The copy of one own ring's early events into route r's directory. */
struct early {
    const struct fdrd_client *c;
    struct fdrd_route *r;
    struct fdr__ring_geom g; /* of the copy's stream */
    struct fdr__buf_hdr oh;  /* the stream file's state (out_bytes, out_lost) */
    struct fdr__stream_state st;
    int fd;
    uint64_t seq, reported; /* the copy's next packet number, its discarded count */
    int gap;                /* the last packet was skipped: one more must follow */
};

/* Writes packet p (a private copy, header filled but seq, discarded and
 * stream) into the copy's stream. */
static void early_put(struct early *e, char *p, uint64_t discarded)
{
    struct fdr__pkt hdr;
    memcpy(&hdr, p, sizeof hdr);
    if (e->fd < 0) {
        if (ensure_dir(e->c, e->r) < 0)
            return;
        char name[32];
        snprintf(name, sizeof name, "stream_%u", e->g.index);
        e->fd = fdr__tracedir_create(e->r->dir_fd, name);
        if (e->fd < 0) {
            route_error(e->c, e->r, name, -e->fd);
            return;
        }
    }
    if (e->seq == 0 && discarded) {
        /* A stream's first packet says 0 (babeltrace2 would read an
         * unknown loss): an empty one first. */
        struct fdr__pkt z = hdr;
        z.content_size = sizeof z * 8;
        z.ts_end = z.ts_begin;
        early_put(e, (char *)&z, 0);
    }
    hdr.stream_instance_id = e->g.index;
    hdr.seq = e->seq;
    hdr.discarded = discarded;
    hdr.packet_size = (uint64_t)e->g.packet_size * 8;
    memcpy(p, &hdr, sizeof hdr);
    struct fdr__classes t;
    fdr__classes_from_table(e->c->col->classes, e->c->col->classes_size, &t);
    uint64_t grown = 0;
    int rc = fdr__drain_slot(e->fd, &e->oh, &e->g, e->seq, p, &t, &e->st, &grown);
    if (rc < 0)
        route_error(e->c, e->r, "stream", -rc);
    e->oh.out_bytes += grown;
    e->seq++;
    e->reported = discarded;
    e->gap = 0;
}

/* An empty packet of process c's thread tid at time ts (its header). */
static void empty_packet(const struct fdrd_client *c, uint32_t tid, uint64_t ts,
                         struct fdr__pkt *z)
{
    memset(z, 0, sizeof *z);
    z->magic = FDR__CTF_MAGIC;
    memcpy(z->uuid, c->col->params.uuid, sizeof z->uuid);
    z->content_size = sizeof *z * 8;
    z->pid = (uint32_t)c->pid;
    z->tid = tid;
    z->ts_begin = z->ts_end = ts;
}

/* A packet the copy cannot take: its number skipped, after an empty first
 * packet if there is none yet (a gap is seen between two packets). */
static void early_gap(struct early *e)
{
    if (e->seq == 0) {
        struct fdr__pkt z;
        empty_packet(e->c, 0, 0, &z);
        early_put(e, (char *)&z, e->reported);
    }
    e->seq++;
    e->gap = 1;
}

/* The counter processes stamp their events with, now: fdr__now, or where
 * that is libfdr's CLOCK_MONOTONIC fallback (not linked into fdrd), the
 * same clock read here. */
static uint64_t counter_now(void)
{
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) ||                  \
    (defined(__riscv) && __riscv_xlen == 64)
    return fdr__now();
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#endif
}

/* Counts `count` events of thread tid lost to route `route` (fdrd's number)
 * at time ts as discarded, in a stream of their own: 0, or -1 (said, not
 * written) for what no process sends: a route not its own (another
 * connection's, or gone with its trace), a count beyond any trace's, more
 * than one per route slot and own ring. `how` says where it came from. */
static int count_lost(struct fdrd_client *c, uint32_t route, uint32_t tid, uint64_t count,
                      uint64_t ts, const char *how)
{
    struct fdrd_route *r = NULL;
    for (struct fdrd_route *q = c->col ? c->col->routes : NULL; q && !r; q = q->next)
        if (q->id == route)
            r = q;
    if (!count)
        return 0;
    if (r && r->lost_read) {
        fdrd_log("client %lu (pid %ld): %llu events of thread %lu lost to route %u, %s: "
                 "after the trace's end, whose count was taken then",
                 c->id, (long)c->pid, (unsigned long long)count, (unsigned long)tid,
                 route, how);
        return 0;
    }
    if (!r || count >= FDR__TS_LIMIT || r->nlost >= FDRD_LOST_MAX) {
        fdrd_log("client %lu (pid %ld): %llu events of thread %lu lost to route %u, "
                 "%s (%s): not counted in any trace",
                 c->id, (long)c->pid, (unsigned long long)count, (unsigned long)tid,
                 route,
                 !r                       ? "which it does not have"
                 : count >= FDR__TS_LIMIT ? "a count beyond any trace's"
                                          : "once too often",
                 how);
        return -1;
    }
    /* One packet of the trace's size (its stream carries the same stream
     * class); two written: the empty one a stream starts with, then the
     * count (early_put). */
    const struct fdrd_ring *r0 = r->nrings ? &r->rings[0] : NULL;
    uint32_t packet = r0 ? r0->g.packet_size : 4096;
    struct fdr__ring_geom g = {packet, 2, FDRD_LOST_STREAM + r->nlost++,
                               FDR__BUF_HEADER + 2 * (uint64_t)packet};
    struct early e = {c, r, g, {0}, {0}, -1, 0, 0, 0};
    static char dst[FDRD_PACKET_MAX];
    struct fdr__pkt z;
    uint64_t now = counter_now();
    empty_packet(c, tid, ts < now ? ts : now, &z); /* not past the clock: readable */
    memcpy(dst, &z, sizeof z);
    early_put(&e, dst, count);
    if (e.fd >= 0)
        close(e.fd);
    fdrd_log("client %lu (pid %ld): %llu events of thread %lu lost to trace %u before "
             "any ring of it reached the process (%s): counted as discarded (stream_%u)",
             c->id, (long)c->pid, (unsigned long long)count, (unsigned long)tid,
             r->trace_id, how, g.index);
    return 0;
}

int fdrd_collect_lost(struct fdrd_client *c, const struct fdr__msg_lost *m)
{
    /* Not the process's to send: the client is dropped (dispatch.c). */
    return count_lost(c, m->route, m->tid, m->count, m->ts, "sent at its end");
}

/* The counts a process that has gone left in its own rings (ring.h,
 * route_lost: libfdr shows them in the first one fdrd holds), however it
 * ended. Untrusted, read once each: a route not its own, or a count no
 * process can have, is said and skipped. */
static void lost_all(struct fdrd_client *c)
{
    for (unsigned i = 0; i < c->col->nown; i++)
        for (unsigned k = 0; k < 32; k++) {
            const struct fdr__route_lost *l = &c->col->own[i].h->route_lost[k];
            uint64_t n = __atomic_load_n(&l->count, __ATOMIC_ACQUIRE);
            if (n)
                count_lost(c, __atomic_load_n(&l->route, __ATOMIC_RELAXED),
                           __atomic_load_n(&l->tid, __ATOMIC_RELAXED), n,
                           __atomic_load_n(&l->ts, __ATOMIC_RELAXED),
                           "left in its own ring");
        }
}

/* Route r of a live process ends (its trace stopped or destroyed): the
 * count the process shows for it in its own rings (ring.h, route_lost)
 * is taken now, as lost_all takes it at the process's end. libfdr drops
 * the count of a route that ended (buffer.c, lost_drop) once it hears of
 * it: before, a process whose trace's rings never came (the trace's
 * memory budget spent) lost from it everything it recorded, uncounted,
 * when the trace was stopped while it ran. Read until a stable value
 * (the process may be updating it: count cleared first, stored last). */
static void route_lost_read(struct fdrd_client *c, struct fdrd_route *r)
{
    if (r->lost_read || !c->col)
        return;
    for (unsigned i = 0; i < c->col->nown; i++)
        for (unsigned k = 0; k < 32; k++) {
            const struct fdr__route_lost *l = &c->col->own[i].h->route_lost[k];
            uint64_t n = 0;
            uint32_t tid = 0;
            uint64_t ts = 0;
            for (int tries = 0; tries < 1000 && !n; tries++) {
                uint64_t n1 = __atomic_load_n(&l->count, __ATOMIC_ACQUIRE);
                if (!n1 && __atomic_load_n(&l->route, __ATOMIC_RELAXED) != r->id)
                    break;
                uint32_t route = __atomic_load_n(&l->route, __ATOMIC_RELAXED);
                tid = __atomic_load_n(&l->tid, __ATOMIC_RELAXED);
                ts = __atomic_load_n(&l->ts, __ATOMIC_RELAXED);
                uint64_t n2 = __atomic_load_n(&l->count, __ATOMIC_ACQUIRE);
                if (route != r->id)
                    break;
                if (n1 && n2)
                    n = n2;
            }
            if (n)
                count_lost(c, r->id, tid, n, ts, "at the trace's end");
        }
    r->lost_read = 1;
}

/* A thread's copy of its past into ring `index` of route r was under way
 * when the process ended (ring.h, handing_tid): what of it reached the
 * ring cannot be told whole, so it goes, stream file and all (the ring
 * was fresh for the copy: its stream holds nothing else), and early_out
 * copies that past from the own ring instead. */
static void early_cut(const struct fdrd_client *c, struct fdrd_route *r, uint32_t index)
{
    for (unsigned k = 0; k < r->nrings; k++) {
        struct fdrd_ring *ring = &r->rings[k];
        if (ring->g.index != index || ring->dead)
            continue;
        ring->dead = 1; /* route_end writes nothing more of it */
        if (ring->out_fd >= 0) {
            char name[32];
            snprintf(name, sizeof name, "stream_%u", index);
            close(ring->out_fd);
            ring->out_fd = -1;
            unlinkat(r->dir_fd, name, 0);
        }
        fdrd_log("client %lu (pid %ld): ended while a thread copied its past into ring "
                 "%u: that ring dropped, the past copied from its own ring",
                 c->id, (long)c->pid, index);
    }
}

static void early_out(const struct fdrd_client *c, struct fdrd_route *r,
                      const struct fdr__rules *rules, uint32_t mask,
                      const struct fdrd_own *o)
{
    static char src[FDRD_PACKET_MAX], dst[FDRD_PACKET_MAX];
    const struct fdr__buf_hdr *h = o->h;
    const struct fdr__ring_geom *g = &o->g;
    struct fdr__classes t;
    fdr__classes_from_table(c->col->classes, c->col->classes_size, &t);
    struct early e = {c, r, *g, {0}, {0}, -1, 0, 0, 0};
    e.g.index = FDRD_OWN_STREAM + g->index;
    /* Read once each: the process wrote them, and is gone. */
    uint32_t htid = __atomic_load_n(&h->handed_tid[r->slot % 32], __ATOMIC_ACQUIRE);
    uint64_t below = __atomic_load_n(&h->handed_below[r->slot % 32], __ATOMIC_ACQUIRE);
    uint32_t ing = __atomic_load_n(&h->handing_tid[r->slot % 32], __ATOMIC_ACQUIRE);
    if (ing && ing != htid && !r->live_ns &&
        __atomic_load_n(&h->handing_route[r->slot % 32], __ATOMIC_RELAXED) == r->id)
        early_cut(c, r,
                  __atomic_load_n(&h->handing_ring[r->slot % 32], __ATOMIC_RELAXED));
    uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
    uint64_t first = produced > g->n_packets ? produced - g->n_packets : 0;
    struct fdr__open_packet op;
    int open = fdr__committed(h, g->size, &op) == 1 && op.seq == produced;
    /* Discards are cumulative in the ring; the copy counts those that came
     * before a packet it takes (the thread that opened it lost them). */
    uint64_t prev = 0, lost = 0, total = 0;
    uint32_t last_tid = 0;
    int last_taken = 0;
    for (uint64_t seq = first; seq < produced + (uint64_t)open; seq++) {
        struct fdr__pkt hdr;
        const char *slot = fdr__ring_slot(h, g, seq);
        fdr__packet_copy(src, slot, g->packet_size);
        if (fdr__pkt_check(src, g, seq, &hdr) < 0) {
            /* Scribbled: whose, and how many events, is unknown. Unless
             * it was handed over, a gap in the copy's packet numbers,
             * which babeltrace2 reports as discarded packets. */
            last_taken = 0;
            if (seq >= below)
                early_gap(&e);
            continue;
        }
        uint64_t bytes = hdr.content_size / 8;
        if (seq == produced) {
            /* The open packet: up to its last committed event. */
            bytes = op.bytes < g->packet_size - FDR__PKT_TAIL
                        ? op.bytes
                        : g->packet_size - FDR__PKT_TAIL;
            memcpy(src, slot, (size_t)bytes);
            memcpy(&hdr.ts_end, &hdr.ts_begin, sizeof hdr.ts_end);
        }
        uint64_t delta = hdr.discarded > prev ? hdr.discarded - prev : 0;
        prev = hdr.discarded > prev ? hdr.discarded : prev;
        last_tid = hdr.tid;
        last_taken = !(seq < below || hdr.tid == htid);
        if (!last_taken)
            continue;
        lost += delta;
        uint64_t lastts = hdr.ts_begin;
        size_t good =
            fdr__packet_prefix(src, bytes, &hdr, &t,
                               seq == produced ? FDR__TS_LIMIT - 1 : hdr.ts_end, &lastts);
        if (good != bytes && seq != produced) {
            early_gap(&e); /* events that do not parse: the packet is lost */
            continue;
        }
        /* The events the trace takes, in order, into dst. */
        struct fdr__pkt out = hdr;
        size_t at = sizeof out;
        struct fdr__iter it;
        struct fdr__event ev;
        fdr__iter_init(&it, src, good, &t);
        while (fdr__iter_next(&it, &ev) > 0) {
            const char *start = ev.payload - FDR__EVENT_HEADER_SIZE;
            size_t len = ev.len + FDR__EVENT_HEADER_SIZE;
            if (!takes(rules, mask, &t, fdr__classes_get(&t, ev.id)))
                continue;
            memcpy(dst + at, start, len);
            at += len;
            total++;
        }
        if (at == sizeof out && lost == e.reported)
            continue; /* nothing of it for this trace */
        out.content_size = (uint64_t)at * 8;
        if (seq == produced)
            out.ts_end = lastts;
        memcpy(dst, &out, sizeof out);
        early_put(&e, dst, lost);
    }
    /* Lost after its last packet (a full ring), by a thread that did not
     * hand over: counted in one more packet, empty, of that thread. Also
     * with no packet at all, unless a thread handed over: a signal
     * handler's event inside its thread's first, which went to the routes,
     * is counted in the own ring alone (libfdr's writer.c, reserve); the
     * route still waiting for its ring took it from nowhere else
     * (fdr-daemon-early "wanting", 1 run in ~60: one event short). */
    uint64_t all = h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED);
    int none = first == produced + (uint64_t)open;
    if ((last_taken || (none && !htid)) && all > prev && all - prev < FDR__TS_LIMIT) {
        struct fdr__pkt z;
        if (none)
            empty_packet(c, 0, e.st.last_ts, &z);
        else
            memcpy(&z, src, sizeof z);
        z.tid = last_tid;
        z.ts_begin = z.ts_end = e.st.last_ts > z.ts_end ? e.st.last_ts : z.ts_end;
        z.content_size = sizeof z * 8;
        memcpy(dst, &z, sizeof z);
        lost += all - prev;
        early_put(&e, dst, lost);
    }
    /* The ledger (ring.h): events of threads whose own ring never reached
     * fdrd, each counted as discarded in an empty packet of that thread
     * (tid 0: of any thread), whether this ring's own thread handed over
     * or not, unless the thread counted them in this route itself (its
     * `handed` bit). Untrusted: a count near all ones is the process's
     * scribble, not events. */
    for (unsigned k = 0; k < FDR__LEDGER; k++) {
        uint32_t tid = __atomic_load_n(&h->ledger[k].tid, __ATOMIC_RELAXED);
        uint64_t n = __atomic_load_n(&h->ledger[k].count, __ATOMIC_RELAXED);
        uint32_t handed = __atomic_load_n(&h->ledger[k].handed, __ATOMIC_ACQUIRE);
        if (!n || n >= FDR__TS_LIMIT - lost || (k && (handed >> (r->slot % 32) & 1)))
            continue;
        struct fdr__pkt z;
        empty_packet(c, tid, e.st.last_ts, &z);
        memcpy(dst, &z, sizeof z);
        lost += n;
        early_put(&e, dst, lost);
    }
    if (e.gap) {
        /* A skipped packet last: an empty one after it shows the gap. */
        struct fdr__pkt z;
        empty_packet(c, 0, e.st.last_ts, &z);
        early_put(&e, (char *)&z, e.reported);
    }
    if (e.fd >= 0) {
        fdrd_log("client %lu (pid %ld): ended before handing over what it recorded "
                 "before its route: %llu events copied from its own ring %u, %llu "
                 "counted as discarded",
                 c->id, (long)c->pid, (unsigned long long)total, g->index,
                 (unsigned long long)lost);
        close(e.fd);
    }
}

/* Every own ring of c, into each route that wanted the process's past. */
static void early_all(struct fdrd_server *s, struct fdrd_client *c)
{
    for (struct fdrd_route *r = c->col->routes; r && c->col->nown; r = r->next) {
        const struct fdrd_trace *t = trace_by_id(s, r->trace_id);
        if (!r->backfill || !t)
            continue;
        char spec[FDR_PROTO_ITEMS_CAP + FDR_PROTO_ITEMS_MAX];
        size_t k = 0;
        for (const char *it = t->items; it < t->items + t->len; it += strlen(it) + 1) {
            if (k)
                spec[k++] = ',';
            memcpy(spec + k, it, strlen(it));
            k += strlen(it);
        }
        spec[k] = 0;
        struct fdr__rules *rules = NULL;
        if (fdr__rules_parse_flags(spec, "fdrd", FDR__RULES_NO_FILES, NULL, NULL,
                                   &rules) < 0)
            continue;
        for (unsigned i = 0; i < c->col->nown; i++)
            early_out(c, r, rules, t->mask, &c->col->own[i]);
        fdr__rules_free(rules);
    }
}

void fdrd_collect_release(struct fdrd_server *s, struct fdrd_client *c)
{
    if (!c->col)
        return;
    early_all(s, c);
    lost_all(c);
    for (unsigned i = 0; i < c->col->nown; i++)
        munmap((void *)c->col->own[i].h, c->col->own[i].g.size);
    while (c->col->routes) {
        struct fdrd_route *r = c->col->routes;
        c->col->routes = r->next;
        route_end(c, r);
    }
    if (c->col->classes)
        munmap(c->col->classes, c->col->classes_size);
    free(c->col);
    c->col = NULL;
}

void fdrd_collect_pass(struct fdrd_server *s)
{
    for (unsigned i = 0; i < s->nclients; i++) {
        struct fdrd_client *c = s->clients[i];
        for (struct fdrd_route *r = c->col ? c->col->routes : NULL; r; r = r->next) {
            route_pass(c, r);
            route_spare(s, c, r, trace_by_id(s, r->trace_id));
        }
    }
}

int fdrd_collect_busy(const struct fdrd_server *s)
{
    for (unsigned i = 0; i < s->nclients; i++)
        if (s->clients[i]->col && s->clients[i]->col->routes)
            return 1;
    return 0;
}

/* ---- snapshots ------------------------------------------------------------ */

/* Writes packet seq of ring, copied to buf first, if the copy is whole. A
 * closed packet stays in its slot until the writer opens packet seq + n
 * (ring.h: slot seq % n), after it has stored `produced` = seq + n; so a
 * copy is the packet as it was closed if `produced` read after it is
 * below that. The acquire fence pairs with the release fence the writer
 * makes before it writes a reopened slot's header (writer.c, open_packet
 * and lane_room): a copy that saw any byte of the new use sees the new
 * `produced` too. `bytes` is the length to copy (a slot, or the committed
 * part of the open packet). 1 when written, 0 when not (reused or
 * corrupt), -errno when the write failed. */
static int snap_packet(int fd, const struct fdrd_ring *ring, uint64_t seq, size_t bytes,
                       int open, const struct fdr__classes *t,
                       struct fdr__stream_state *st, char *buf)
{
    const struct fdr__ring_geom *g = &ring->g;
    memcpy(buf, fdr__ring_slot(ring->h, g, seq), bytes);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&ring->h->produced, __ATOMIC_RELAXED) >= seq + g->n_packets)
        return 0;
    struct fdr__pkt hdr;
    if (fdr__pkt_check(buf, g, seq, &hdr) < 0)
        return 0;
    if (open) { /* closed here at its last whole event */
        uint64_t last;
        size_t good = fdr__packet_prefix(buf, bytes, &hdr, t, UINT64_MAX, &last);
        if (good <= sizeof hdr)
            return 0;
        hdr.ts_end = last;
        hdr.content_size = (uint64_t)good * 8;
    }
    /* The one check of every reader (validate.h): a corrupt packet is
     * left out, the gap in sequence numbers says a packet was lost. */
    if (fdr__packet_valid(buf, &hdr, t, st) < 0)
        return 0;
    int e = fdr__packet_write(fd, &hdr, buf + sizeof hdr);
    return e < 0 ? e : 1;
}

/* The stream file snap_ring is writing, for snap_ring_guarded to close
 * when a fault cut it short. */
static int snap_fd = -1;

/* What ring holds now: its closed packets that the writer cannot have
 * reused, then its open packet up to the last committed event. 0 or -errno. */
static int snap_ring(int dir_fd, const struct fdrd_ring *ring,
                     const struct fdr__classes *t, char *buf)
{
    const struct fdr__ring_geom *g = &ring->g;
    /* Pairs with the writer's release store of `produced` (writer.c). */
    uint64_t produced = __atomic_load_n(&ring->h->produced, __ATOMIC_ACQUIRE);
    uint64_t first = produced >= g->n_packets ? produced - g->n_packets + 1 : 0;
    struct fdr__open_packet op;
    int open = fdr__committed(ring->h, g->size, &op) == 1 && op.seq >= produced &&
               op.seq < produced + g->n_packets &&
               op.offset ==
                   (size_t)(fdr__ring_slot(ring->h, g, op.seq) - (const char *)ring->h) &&
               op.bytes <= g->packet_size;
    if (first == produced && !open)
        return 0; /* never used */
    char name[32];
    snprintf(name, sizeof name, "stream_%u", g->index);
    int fd = fdr__tracedir_create(dir_fd, name);
    if (fd < 0)
        return fd;
    snap_fd = fd;
    int e = 0;
    struct fdr__stream_state st = {0, 0, 0, 0};
    for (uint64_t seq = first; seq < produced && e >= 0; seq++)
        e = snap_packet(fd, ring, seq, g->packet_size, 0, t, &st, buf);
    if (e >= 0 && open)
        e = snap_packet(fd, ring, op.seq, op.bytes, 1, t, &st, buf);
    snap_fd = -1;
    close(fd);
    return e < 0 ? e : 0;
}

/* snap_ring, under the guard when the ring is a file. */
static int snap_ring_guarded(const struct fdrd_client *c, const struct fdrd_route *r,
                             int dir_fd, struct fdrd_ring *ring,
                             const struct fdr__classes *t, char *buf)
{
    if (ring->dead)
        return 0;
    if (!ring->file)
        return snap_ring(dir_fd, ring, t, buf);
    guard_install();
    if (sigsetjmp(guard_jmp, 1)) {
        if (snap_fd >= 0)
            close(snap_fd);
        snap_fd = -1;
        ring_faulted(c, r, ring);
        return 0;
    }
    guard_on = 1;
    int e = snap_ring(dir_fd, ring, t, buf);
    guard_on = 0;
    return e;
}

/* Every ring of route r into <dir>/<process name>-<pid>. 0 or -errno. */
static int snap_route(const struct fdrd_client *c, struct fdrd_route *r, const char *dir,
                      char *buf)
{
    const char *what;
    int dir_fd = proc_dir(c, dir, NULL, &what);
    if (dir_fd < 0)
        return dir_fd;
    uint32_t meta_n = 0;
    int e = write_meta(c, dir_fd, &meta_n);
    struct fdr__classes t;
    fdr__classes_from_table(c->col->classes, c->col->classes_size, &t);
    for (unsigned k = 0; k < r->nrings && e >= 0; k++)
        e = snap_ring_guarded(c, r, dir_fd, &r->rings[k], &t, buf);
    close(dir_fd);
    return e;
}

int fdrd_collect_snapshot(struct fdrd_server *s, struct fdrd_trace *t, const char *outdir,
                          char *msg, size_t cap)
{
    char dir[FDR_PROTO_PATH_CAP];
    if (outdir[0] && outdir[0] != '/') {
        snprintf(msg, cap, "output directory '%.200s' is not an absolute path", outdir);
        return EINVAL;
    }
    if (outdir[0])
        snprintf(dir, sizeof dir, "%s", outdir);
    else {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        int n = snprintf(dir, sizeof dir, "%s/snapshot-%u-%s", t->outdir,
                         t->snapshots + 1, stamp);
        if (n < 0 || (size_t)n >= sizeof dir) {
            snprintf(msg, cap, "the trace's output directory is too long for a snapshot");
            return ENAMETOOLONG;
        }
    }
    char at[FDR_PROTO_PATH_CAP];
    int w = fdr__pathwalk_check(dir, at, sizeof at);
    if (w < 0) {
        snprintf(msg, cap, "snapshot directory %.150s: %.150s: %s", dir, at,
                 fdr__pathwalk_strerror(-w));
        return -w;
    }
    char *buf = malloc(FDRD_PACKET_MAX);
    if (!buf) {
        snprintf(msg, cap, "out of memory");
        return ENOMEM;
    }
    unsigned routes = 0;
    int e = 0;
    for (unsigned i = 0; i < s->nclients && e >= 0; i++) {
        const struct fdrd_client *c = s->clients[i];
        for (struct fdrd_route *r = c->col ? c->col->routes : NULL; r && e >= 0;
             r = r->next)
            if (r->trace_id == t->id && r->nrings) {
                e = snap_route(c, r, dir, buf);
                routes++;
            }
    }
    free(buf);
    if (e < 0) {
        snprintf(msg, cap, "cannot write the snapshot in '%.180s': %s", dir,
                 fdr__pathwalk_strerror(-e));
        return (int)-e;
    }
    if (!routes) {
        snprintf(msg, cap, "trace %s holds no events (no process records into it)",
                 t->name);
        return ENODATA;
    }
    t->snapshots++;
    snprintf(msg, cap, "%s", dir);
    if (strlen(dir) >= cap)
        snprintf(msg, cap, "%.*s...", (int)cap - 4, dir);
    return 0;
}
