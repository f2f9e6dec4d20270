/* SPDX-License-Identifier: MIT */
/* snapshot.c - the rings in memory as a CTF trace on disk, on request.
 *
 * fdr_snapshot(dir) writes the newest events of every thread: for each
 * buffer, the complete packets still in its ring, oldest first, then the
 * thread's partially filled current packet, as <dir>/stream_<index> next to
 * a fresh <dir>/metadata. It is not destructive: `consumed` is not moved
 * and nothing in the rings changes, so a second snapshot holds the same
 * events plus newer ones (until the ring wraps past them).
 *
 * DESIGN. The writers are stopped (section.c, fdr__section_quiesce) only
 * while the packets are copied into private memory, about 1 ms per 8 MiB;
 * the files are written afterwards with tracing running. An event that
 * arrives during the copy is counted as discarded (writer.c). Which slots
 * hold what, for a ring of n slots with P = produced:
 *
 *   thread has an open packet:  slots hold P-n+1 .. P-1 complete, P open
 *   no open packet:             slots hold P-n   .. P-1 complete
 *
 * Each packet is checked (magic, sequence number, buffer index, content
 * size) and skipped if wrong, as buffers are untrusted. The open packet is
 * written with content_size = the thread's write position, ts_end = the
 * snapshot time and the discarded count as of now.
 *
 * Gaps: when the oldest packet kept is not sequence 0, the packets before
 * it were overwritten. CTF readers only report a gap between two packets,
 * so the stream starts with an empty "anchor" packet of sequence 0 (same
 * thread, begin and end time the library's start, nothing discarded):
 * babeltrace2 then reports the overwritten packets as discarded, once per
 * stream, as what they are: "Tracer discarded N packets between [the
 * library's start] and [the oldest packet kept]" (two real, different
 * times: the flight recorder kept the newest packets and overwrote the
 * older ones), and the first real packet's cumulative discarded count as
 * discarded events.
 *
 * Both also write <dir>/.fdr-spans: the spans open at that moment
 * (fdr/span.h), one text line per thread inside any and one per async span
 * whose begin the rings hold and whose end they do not
 * (fdr__spans_open_text, also the crash dump's lines); babeltrace2 skips
 * files whose name starts with '.'.
 *
 * fdr__snapshot_write_live() is the same writing, straight from the rings,
 * for the crash handler: only open/write/close/mkdir, no malloc, no stdio,
 * no lock (its caller stopped the writers). The signal trigger
 * (fdr_snapshot_on_signal, FDR_SNAPSHOT_SIGNAL) only wakes a helper thread
 * through a futex; the helper takes the snapshot. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include "recorder/kernel.h" /* futex: musl has no linux/ headers */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdr/fdr.h"
#include "common/drain.h"
#include "common/format.h"
#include "common/iter.h"
#include "common/signal.h"
#include "common/validate.h"
#include "recorder/cold.h"
#include "recorder/buffer.h"
#include "recorder/clock.h"
#include "recorder/config.h"
#include "recorder/consumer.h"
#include "recorder/flight.h"
#include "recorder/init.h"
#include "recorder/metadata.h"
#include "recorder/registry.h"
#include "recorder/section.h"
#include "recorder/writer.h"
#include "common/pathwalk.h"
#include "common/tracedir.h"

/* What to write of one buffer. */
struct plan {
    struct fdr__buf *buf;
    uint64_t first, count; /* complete packets first .. first+count-1 */
    int partial;           /* the open packet follows them */
    struct fdr__pkt partial_hdr;
    uint32_t partial_bytes; /* content, header included */
    char *copy;             /* fdr_snapshot: count+partial packets; NULL: live */
    int bad_ring;           /* the ring header does not match the buffer */
    uint64_t skipped;       /* packets not written: their header is not valid */
};

/* ---- planning (writers stopped) ------------------------------------------- */

const char *fdr__open_end(const struct fdr__buf *b, const struct fdr__writer *w,
                          uint64_t produced)
{
    if (!w || w->buf != b || !w->pkt)
        return NULL;
    const char *p = (const char *)w->pkt;
    const char *pos = __atomic_load_n(&w->self->pos, __ATOMIC_RELAXED);
    if (p != fdr__ring_slot(b->hdr, &b->geom, produced) ||
        pos < p + sizeof(struct fdr__pkt) || pos > p + b->geom.packet_size)
        return NULL;
    return pos;
}

static void plan_buffer(struct plan *pl, struct fdr__buf *b, uint64_t now)
{
    struct fdr__buf_hdr *h = b->hdr;
    const struct fdr__ring_geom *g = &b->geom;
    memset(pl, 0, sizeof *pl);
    pl->buf = b;
    pl->bad_ring = fdr__ring_check(h, g) < 0;
    /* Acquire pairs with the release in fdr__writer_close_packet. */
    uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
    const struct fdr__writer *owner = NULL;
    for (const struct fdr__writer *w = fdr__writers; w; w = w->next)
        if (w->buf == b && w->pkt)
            owner = w;
    uint64_t keep = g->n_packets - (owner ? 1 : 0);
    pl->first = produced > keep ? produced - keep : 0;
    pl->count = produced - pl->first;
    const char *pos = fdr__open_end(b, owner, produced);
    if (!pos || pos == (const char *)(owner->pkt + 1))
        return; /* none, empty, or not what it should be */
    struct fdr__pkt open;
    memcpy(&open, owner->pkt, sizeof open);
    open.content_size = (uint64_t)(pos - (const char *)owner->pkt) * 8;
    open.ts_end = now > open.ts_begin ? now : open.ts_begin;
    open.discarded = h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED);
    if (fdr__pkt_check(&open, g, produced, &pl->partial_hdr) < 0) {
        pl->skipped++;
        return;
    }
    pl->partial = 1;
    pl->partial_bytes = (uint32_t)(open.content_size / 8);
}

static const char *plan_packet(const struct plan *pl, uint64_t k)
{
    const struct fdr__buf *b = pl->buf;
    if (pl->copy)
        return pl->copy + k * b->geom.packet_size;
    return fdr__ring_slot(b->hdr, &b->geom, pl->first + k);
}

/* ---- writing ----------------------------------------------------------------- */

/* Writes the stream file of one plan; counts what it skips in pl. */
static int write_stream(int dir_fd, struct plan *pl)
{
    const struct fdr__ring_geom *g = &pl->buf->geom;
    if (pl->count == 0 && !pl->partial)
        return 0;
    char name[32] = "stream_";
    name[7 + fdr__fmt_u64(name + 7, pl->buf->index, 10, 0)] = 0;
    int fd = fdr__tracedir_create(dir_fd, name);
    if (fd < 0)
        return fd;
    int r = 0;
    int anchored = 0;
    struct fdr__classes t;
    struct fdr__stream_state st = {0, 0, 0, fdr__now_bound()};
    fdr__registry_classes(&t);
    for (uint64_t k = 0; k <= pl->count && r == 0; k++) {
        struct fdr__pkt hdr;
        const char *pkt = plan_packet(pl, k);
        if (k < pl->count) {
            if (fdr__pkt_check(pkt, g, pl->first + k, &hdr) < 0) {
                pl->skipped++;
                continue;
            }
        } else if (pl->partial) {
            /* Open: closed here after its last good event. */
            uint64_t last;
            hdr = pl->partial_hdr;
            size_t good = fdr__packet_prefix(pkt, hdr.content_size / 8, &hdr, &t,
                                             hdr.ts_end, &last);
            hdr.content_size = (uint64_t)good * 8;
        } else
            break;
        /* Events, times and order too (validate.h): a packet a reader
         * would stop at is left out, the gap in sequence numbers says so. */
        if (fdr__packet_valid(pkt, &hdr, &t, &st) < 0) {
            pl->skipped++;
            continue;
        }
        if (!anchored && hdr.seq > 0) {
            /* See "Gaps" in the file comment. */
            struct fdr__pkt anchor = hdr;
            struct fdr__clock_params clk;
            fdr__clock_params(&clk);
            anchor.seq = 0;
            if (clk.start < hdr.ts_begin)
                anchor.ts_begin = clk.start;
            anchor.ts_end = anchor.ts_begin;
            anchor.discarded = 0;
            anchor.content_size = sizeof anchor * 8;
            r = fdr__packet_write(fd, &anchor, pkt + sizeof anchor);
        }
        anchored = 1;
        if (r == 0)
            r = fdr__packet_write(fd, &hdr, pkt + sizeof hdr);
    }
    if (close(fd) < 0 && r == 0)
        r = -errno;
    return r;
}

static void put(char *b, size_t cap, size_t *n, const char *s)
{
    size_t k = strlen(s);
    if (k > cap - *n)
        k = cap - *n;
    memcpy(b + *n, s, k);
    *n += k;
}

static void put_num(char *b, size_t cap, size_t *n, uint64_t v)
{
    char num[24];
    num[fdr__fmt_u64(num, v, 10, 0)] = 0;
    put(b, cap, n, num);
}

/* provider:event of class c, "?" when unknown. */
static void put_name(char *b, size_t cap, size_t *n, const struct fdr__classes *t,
                     const struct fdr__class *c)
{
    put(b, cap, n, c ? fdr__classes_str(t, c->provider) : "?");
    put(b, cap, n, c ? ":" : "");
    put(b, cap, n, c ? fdr__classes_str(t, c->event) : "");
}

/* Ends line[0..k) with a newline and appends it to buf (cap, *n used) if
 * it fits whole; 0 when it does not. */
static int put_line(char *buf, size_t cap, size_t *n, char *line, size_t k)
{
    line[k++] = '\n';
    if (k > cap - *n)
        return 0;
    memcpy(buf + *n, line, k);
    *n += k;
    return 1;
}

static size_t thread_spans_text(char *buf, size_t cap, const char *prefix,
                                const struct fdr__classes *t)
{
    size_t n = 0;
    for (const struct fdr__writer *w = fdr__writers; w; w = w->next) {
        const struct fdr__thread *th = w->self;
        uint32_t d = __atomic_load_n(&th->span_depth, __ATOMIC_RELAXED);
        if (!d)
            continue;
        char line[1024];
        size_t k = 0, lcap = sizeof line - 1;
        put(line, lcap, &k, prefix);
        put(line, lcap, &k, "spans open in thread ");
        put_num(line, lcap, &k, (uint64_t)w->tid);
        put(line, lcap, &k, ":");
        for (uint32_t i = 0; i < d && i < FDR__SPAN_KEEP; i++) {
            uint16_t id = __atomic_load_n(&th->span_ids[i], __ATOMIC_RELAXED);
            put(line, lcap, &k, i ? " > " : " ");
            put_name(line, lcap, &k, t, fdr__classes_get(t, id));
        }
        if (d > FDR__SPAN_KEEP) {
            put(line, lcap, &k, " > ... (");
            put_num(line, lcap, &k, d - FDR__SPAN_KEEP);
            put(line, lcap, &k, " deeper, not kept)");
        }
        if (!put_line(buf, cap, &n, line, k))
            break; /* whole lines only */
    }
    return n;
}

/* ---- async spans open: paired from the rings -------------------------------- */

/* Why from the rings: an async span may end on another thread, so a table
 * of the open ones would be shared by the threads and each begin and end
 * would write into it (an atomic read-modify-write, or a lock): the fast
 * path would cost more than two events. The rings already hold every begin
 * and end, with the thread and the time; the crash dump and the snapshot
 * (writers stopped) pair them here. What the rings no longer hold is not
 * known: a span whose begin was overwritten is not listed, and one whose
 * end may have been overwritten (a ring lost packets recorded after the
 * begin) is listed with that said. */

/* 1 for an async begin, 2 for an async end, 0 for any other class. */
static int async_kind(const struct fdr__classes *t, const struct fdr__class *c)
{
    if (!c || c->nfields < 1 || c->types[0] != FDR__T_U64)
        return 0;
    const char *f = fdr__classes_str(t, c->names[0]);
    return strcmp(f, "span_async_begin") == 0 ? 1
           : strcmp(f, "span_async_end") == 0 ? 2
                                              : 0;
}

struct async_walk {
    struct fdr__async_seen *work;
    size_t n;
    int full;          /* more than FDR__ASYNC_WORK */
    uint64_t lost_end; /* ring packets overwritten up to this time */
};

static void async_packet(struct async_walk *w, const struct fdr__classes *t,
                         const char *pkt, const struct fdr__pkt *hdr)
{
    struct fdr__iter it;
    struct fdr__event ev;
    fdr__iter_init(&it, pkt, hdr->content_size / 8, t);
    while (fdr__iter_next(&it, &ev) > 0) {
        int k = async_kind(t, ev.c);
        if (!k || ev.len < 8)
            continue;
        if (w->n == FDR__ASYNC_WORK) {
            w->full = 1;
            return;
        }
        struct fdr__async_seen *a = &w->work[w->n];
        memcpy(&a->id, ev.payload, 8);
        a->ts = ev.ts;
        a->tid = hdr->tid;
        a->order = (uint32_t)w->n++;
        a->cls = ev.id;
        a->end = k == 2;
    }
}

/* The async span events of buffer b, oldest first (writers quiesced). */
static void async_buffer(struct async_walk *w, const struct fdr__classes *t,
                         struct fdr__buf *b, uint64_t now)
{
    struct plan pl;
    plan_buffer(&pl, b, now);
    if (pl.bad_ring)
        return;
    struct fdr__pkt hdr;
    for (uint64_t k = 0; k < pl.count && !w->full; k++) {
        const char *pkt = plan_packet(&pl, k);
        if (fdr__pkt_check(pkt, &b->geom, pl.first + k, &hdr) < 0)
            continue;
        if (k == 0 && pl.first > 0 && hdr.ts_begin > w->lost_end)
            w->lost_end = hdr.ts_begin; /* packets before it were overwritten */
        async_packet(w, t, pkt, &hdr);
    }
    if (pl.partial && !w->full) {
        const char *pkt = plan_packet(&pl, pl.count);
        uint64_t last;
        hdr = pl.partial_hdr;
        hdr.content_size = (uint64_t)fdr__packet_prefix(pkt, hdr.content_size / 8, &hdr,
                                                        t, hdr.ts_end, &last) *
                           8;
        async_packet(w, t, pkt, &hdr);
    }
}

/* Whether classes a and b are the one name provider:event (a begin and
 * its end are sites, so classes, of their own). */
static int same_name(const struct fdr__classes *t, uint16_t a, uint16_t b)
{
    const struct fdr__class *ca = fdr__classes_get(t, a), *cb = fdr__classes_get(t, b);
    return a == b ||
           (ca && cb &&
            strcmp(fdr__classes_str(t, ca->provider),
                   fdr__classes_str(t, cb->provider)) == 0 &&
            strcmp(fdr__classes_str(t, ca->event), fdr__classes_str(t, cb->event)) == 0);
}

static int async_after(const struct fdr__async_seen *a, const struct fdr__async_seen *b)
{
    return a->ts != b->ts ? a->ts > b->ts : a->order > b->order;
}

static size_t async_spans_text(char *buf, size_t cap, const char *prefix,
                               const struct fdr__classes *t, struct fdr__async_seen *work)
{
    struct async_walk w = {work, 0, 0, 0};
    uint64_t now = fdr__now();
    uint32_t nb = fdr__buf_count();
    for (uint32_t i = 0; i < nb && !w.full; i++)
        if (fdr__buf_at(i))
            async_buffer(&w, t, fdr__buf_at(i), now);
    char line[1024];
    size_t k = 0, n = 0, lcap = sizeof line - 1;
    if (w.full) {
        put(line, lcap, &k, prefix);
        put(line, lcap, &k, "async spans open: not known (the rings hold more than ");
        put_num(line, lcap, &k, FDR__ASYNC_WORK);
        put(line, lcap, &k, " async span events)");
        put_line(buf, cap, &n, line, k);
        return n;
    }
    /* In time order (shell sort: in place, no recursion). */
    for (size_t gap = w.n / 2; gap > 0; gap /= 2)
        for (size_t i = gap; i < w.n; i++) {
            struct fdr__async_seen tmp = work[i];
            size_t j = i;
            for (; j >= gap && async_after(&work[j - gap], &tmp); j -= gap)
                work[j] = work[j - gap];
            work[j] = tmp;
        }
    /* Pair: work[0..open) are the begins not ended yet, in begin order. An
     * end without its begin closes nothing; a begin of an id already open
     * (reused) replaces it. */
    size_t open = 0;
    for (size_t i = 0; i < w.n; i++) {
        struct fdr__async_seen e = work[i];
        size_t j = 0;
        while (j < open && (work[j].id != e.id || !same_name(t, work[j].cls, e.cls)))
            j++;
        if (j < open) {
            memmove(&work[j], &work[j + 1], (open - j - 1) * sizeof *work);
            open--;
        }
        if (!e.end)
            work[open++] = e;
    }
    for (size_t i = 0; i < open; i++) {
        k = 0;
        put(line, lcap, &k, prefix);
        put(line, lcap, &k, "async span open: ");
        put_name(line, lcap, &k, t, fdr__classes_get(t, work[i].cls));
        put(line, lcap, &k, " id=");
        put_num(line, lcap, &k, work[i].id);
        put(line, lcap, &k, " (begun in thread ");
        put_num(line, lcap, &k, work[i].tid);
        put(line, lcap, &k,
            work[i].ts < w.lost_end ? "; its end may have been overwritten)" : ")");
        if (!put_line(buf, cap, &n, line, k))
            break; /* whole lines only */
    }
    return n;
}

size_t fdr__spans_open_text(char *buf, size_t cap, const char *prefix,
                            struct fdr__async_seen *work)
{
    struct fdr__classes t;
    fdr__registry_classes(&t);
    size_t n = thread_spans_text(buf, cap, prefix, &t);
    return n + async_spans_text(buf + n, cap - n, prefix, &t, work);
}

/* Writes the n bytes of text as <dir>/.fdr-spans (replaced). */
static int spans_file(int dir_fd, const char *text, size_t n)
{
    int fd = openat(dir_fd, ".fdr-spans",
                    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    int r = 0;
    for (size_t at = 0; at < n && r == 0;) {
        ssize_t k = write(fd, text + at, n - at);
        if (k < 0 && errno != EINTR)
            r = -errno;
        else if (k > 0)
            at += (size_t)k;
    }
    if (close(fd) < 0 && r == 0)
        r = -errno;
    return r;
}

int fdr__snapshot_write_live(int dir_fd, struct fdr__skips *sk, const char *spans,
                             size_t spans_n)
{
    int sr = spans_file(dir_fd, spans, spans_n);
    static FDR__COLD char meta_buf[8192]; /* one crash at a time (crash.c) */
    static struct plan pl;
    int r = fdr__metadata_write(dir_fd, meta_buf, sizeof meta_buf);
    if (r < 0)
        return r;
    uint64_t now = fdr__now();
    uint32_t n = fdr__buf_count();
    for (uint32_t i = 0; i < n; i++) {
        struct fdr__buf *b = fdr__buf_at(i);
        if (!b)
            continue;
        plan_buffer(&pl, b, now);
        int s = write_stream(dir_fd, &pl);
        if (s < 0 && r == 0)
            r = s;
        sk->rings += (uint64_t)pl.bad_ring;
        sk->packets += pl.skipped;
    }
    return r ? r : sr;
}

/* ---- fdr_snapshot ------------------------------------------------------------ */

static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER; /* one at a time */

/* fdr_snapshot into the directory dir_fd (not closed), named dir in
 * messages. */
static int snapshot_at(int dir_fd, const char *dir)
{
    int r;
    pthread_mutex_lock(&snap_lock);
    pthread_mutex_lock(&fdr__writers_lock);
    /* Buffers are created under the writers lock: n stays valid. */
    uint32_t n = fdr__buf_count();
    struct plan *plans = calloc(n ? n : 1, sizeof *plans);
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct fdr__ring_geom *g = &fdr__buf_at(i)->geom;
        total += (size_t)g->n_packets * g->packet_size;
    }
    char *copy = total ? malloc(total) : NULL;
    struct fdr__async_seen *work = malloc(FDR__ASYNC_WORK * sizeof *work);
    if (!plans || (total && !copy) || !work) {
        pthread_mutex_unlock(&fdr__writers_lock);
        pthread_mutex_unlock(&snap_lock);
        free(plans);
        free(copy);
        free(work);
        return -ENOMEM;
    }
    char spans_buf[16384];
    size_t spans_n = 0;
    r = fdr__section_quiesce();
    if (r == 0) {
        uint64_t now = fdr__now();
        char *at = copy;
        spans_n = fdr__spans_open_text(spans_buf, sizeof spans_buf, "", work);
        for (uint32_t i = 0; i < n; i++) {
            struct plan *pl = &plans[i];
            struct fdr__buf *b = fdr__buf_at(i);
            plan_buffer(pl, b, now);
            size_t ps = b->geom.packet_size;
            pl->copy = at;
            for (uint64_t k = 0; k <= pl->count; k++)
                if (k < pl->count || pl->partial)
                    memcpy(at + k * ps, fdr__ring_slot(b->hdr, &b->geom, pl->first + k),
                           k < pl->count ? ps : pl->partial_bytes);
            at += (size_t)b->geom.n_packets * ps;
        }
        fdr__section_resume();
    }
    pthread_mutex_unlock(&fdr__writers_lock);
    if (r == 0) {
        char meta_buf[8192];
        r = fdr__metadata_write(dir_fd, meta_buf, sizeof meta_buf);
        int sr = spans_file(dir_fd, spans_buf, spans_n);
        if (r == 0)
            r = sr;
        struct fdr__skips sk = {0, 0};
        for (uint32_t i = 0; i < n; i++) {
            int s = write_stream(dir_fd, &plans[i]);
            if (s < 0 && r == 0)
                r = s;
            sk.rings += (uint64_t)plans[i].bad_ring;
            sk.packets += plans[i].skipped;
        }
        if (sk.rings || sk.packets)
            fdr__warn("snapshot %s: %llu corrupt packets skipped, %llu corrupt ring "
                      "headers",
                      dir, (unsigned long long)sk.packets, (unsigned long long)sk.rings);
    }
    pthread_mutex_unlock(&snap_lock);
    free(copy);
    free(plans);
    free(work);
    return r;
}

int fdr__snapshot(const char *dir)
{
    if (!dir || !*dir)
        return -EINVAL;
    if (strlen(dir) > PATH_MAX - 32)
        return -EINVAL;
    /* The directory the caller named: followed if a symlink, made if
     * missing; its files are never opened through a symlink. */
    int fd = fdr__tracedir_open_top(dir);
    if (fd < 0)
        return fd;
    int r = snapshot_at(fd, dir);
    close(fd);
    return r;
}

/* ---- the signal trigger --------------------------------------------------- */

static pthread_mutex_t trig_lock = PTHREAD_MUTEX_INITIALIZER;
static int trig_sig;              /* current signal, 0 when none */
static struct sigaction trig_old; /* what it replaced */
static char *trig_dir;            /* under trig_lock */
static uint32_t trig_requests;    /* futex word: bumped by the handler */
static int helper_started;

static void trigger_handler(int sig)
{
    (void)sig;
    int e = errno;
    /* Release pairs with the acquire load in helper_main. */
    __atomic_fetch_add(&trig_requests, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &trig_requests, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = e;
}

static void *helper_main(void *arg)
{
    (void)arg;
    uint32_t done = 0;
    long count = 0;
    for (;;) {
        uint32_t req = __atomic_load_n(&trig_requests, __ATOMIC_ACQUIRE);
        if (req == done) {
            syscall(SYS_futex, &trig_requests, FUTEX_WAIT_PRIVATE, req, NULL, NULL, 0);
            continue;
        }
        done = req; /* requests that came together make one snapshot */
        pthread_mutex_lock(&trig_lock);
        char base[PATH_MAX], name[64] = "snapshot-";
        int ok = trig_dir && strlen(trig_dir) < sizeof base;
        if (ok)
            strcpy(base, trig_dir);
        pthread_mutex_unlock(&trig_lock);
        if (!ok)
            continue;
        size_t k = strlen(name);
        k += fdr__fmt_u64(name + k, (uint64_t)fdr__pid, 10, 0);
        name[k] = 0;
        fdr__tracedir_name(name, sizeof name, name, (unsigned long)++count);
        /* base is the user's (FDR_SNAPSHOT_DIR); name is fdr's own, so
         * an existing one must be a directory of ours. */
        int top = fdr__tracedir_open_top(base), r = top;
        if (top >= 0) {
            int d = r = fdr__tracedir_make(top, name);
            close(top);
            if (d >= 0) {
                r = snapshot_at(d, base);
                close(d);
            }
        }
        if (r < 0)
            fdr__warn("snapshot on signal into %s/%s failed: %s", base, name,
                      r == -EPERM ? "it belongs to another user"
                                  : fdr__pathwalk_strerror(-r));
        else
            fdr__warn("snapshot written to %s/%s", base, name);
    }
    return NULL;
}

/* A fault signal comes back as long as the faulting instruction does:
 * taking snapshots from it would loop forever (-EINVAL). A signal of the
 * crash handler is its (-EBUSY). */
/* Starts the helper thread, with every signal blocked from its first
 * instruction on; trig_lock held. 0 or -EAGAIN. */
static int start_helper(void)
{
    if (helper_started)
        return 0;
    pthread_t th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int e = pthread_create(&th, &a, helper_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (e != 0)
        return -EAGAIN;
    pthread_setname_np(th, "fdr-snapshot");
    helper_started = 1;
    return 0;
}

/* Around fork() (init.c). The child has no helper thread: it gets one of
 * its own when the trigger is on. snap_lock may be held by a thread that
 * writes a snapshot's files (it is not taken before fork, which would wait
 * for the files): the child has no such thread, and makes the lock anew. */
void fdr__snapshot_fork(enum fdr__fork_phase ph)
{
    if (ph == FDR__FORK_PREPARE) {
        pthread_mutex_lock(&trig_lock);
        return;
    }
    if (ph == FDR__FORK_CHILD) {
        pthread_mutex_init(&snap_lock, NULL);
        helper_started = 0;
        trig_requests = 0;
        if (trig_sig && start_helper() < 0)
            fdr__warn("no snapshot on signal in child %d: no helper thread",
                      (int)getpid());
    }
    pthread_mutex_unlock(&trig_lock);
}

static int no_owner(int sig)
{
    (void)sig;
    return 0;
}
int (*fdr__snapshot_signal_owned)(int sig) = no_owner;

int fdr__signal_is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
           sig == SIGTRAP || sig == SIGSYS;
}

int fdr__snapshot_on_signal(int sig, const char *dir)
{
    if (sig < 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP ||
        fdr__signal_is_fault(sig) || (sig && (!dir || !*dir)))
        return -EINVAL;
    if (fdr__snapshot_signal_owned(sig))
        return -EBUSY;
    int r = 0;
    pthread_mutex_lock(&trig_lock);
    if (trig_sig) {
        sigaction(trig_sig, &trig_old, NULL);
        trig_sig = 0;
    }
    if (sig) {
        char *d = strdup(dir);
        if (!d) {
            r = -ENOMEM;
            goto out;
        }
        free(trig_dir);
        trig_dir = d;
        if ((r = start_helper()) < 0)
            goto out;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = trigger_handler;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sig, &sa, &trig_old) < 0) {
            r = -EINVAL;
            goto out;
        }
        trig_sig = sig;
    }
out:
    pthread_mutex_unlock(&trig_lock);
    return r;
}

/* ---- from the environment (config.c) ------------------------------------- */

void fdr__flight_init(void)
{
    if (!fdr__cfg.snapshot_signal)
        return;
    int sig = fdr__cfg.snapshot_signal;
    int r = fdr__snapshot_on_signal(sig, fdr__cfg.snapshot_dir); /* at start */
    const char *s = fdr__cfg.snapshot_signal_text;
    if (r == -EINVAL && fdr__signal_is_fault(sig))
        fdr__warn("FDR_SNAPSHOT_SIGNAL=\"%s\" is a fault signal, which cannot take "
                  "snapshots; no snapshot on signal",
                  s);
    else if (r == -EBUSY)
        fdr__warn("FDR_SNAPSHOT_SIGNAL=\"%s\" is a crash signal (FDR_CRASH_SIGNALS); "
                  "no snapshot on signal",
                  s);
    else if (r < 0)
        fdr__warn("FDR_SNAPSHOT_SIGNAL=\"%s\": %s", s, strerror(-r));
}
