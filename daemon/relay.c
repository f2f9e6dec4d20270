/* SPDX-License-Identifier: MIT */
/* relay.c - a trace streamed to lttng-relayd: one sender thread per
 * streamed trace, which tails the trace's output directory.
 *
 * DESIGN. The collector (collect.c) writes each process's packets into
 * DIR/<proc>-<pid>/stream_<N> and its metadata, as for any trace; the
 * sender only reads those files, so a slow, dead or hostile relayd can
 * never slow the traced programs nor fdrd's poll loop: the rings keep
 * draining to disk whatever the network does. Every 100 ms (or sooner
 * when there is more to send) the thread:
 *   - finds new <proc>-<pid>/ directories and their stream_N files
 *     (openat, O_NOFOLLOW, names checked: no path leaves DIR);
 *   - per process, notes each stream file's length, then sends the part
 *     of `metadata` relayd does not have yet (the TSDL generator only
 *     appends event classes, so an older text is always a prefix of a
 *     newer one: common/tsdl.c), then each whole packet below the noted
 *     length as a data message (header copy + body by sendfile) followed
 *     by its index. A packet header is checked first (magic, sizes in
 *     bits, bounds, times); a bad one stops that stream with one log line.
 *   - live traces: a stream with nothing new for a live period gets a
 *     beacon (an empty index) at "a period before the collector last
 *     said the file held every committed event" (beacon_ts) in the
 *     process's clock, never before the last packet it sent: live
 *     timestamps never go back.
 * Each process is its own trace in the relay session (its own metadata
 * stream and data streams, relayd path HOSTNAME/NAME-DATE/<proc>-<pid>,
 * NAME-DATE-N for the Nth relay session of the trace, N > 1).
 *
 * The host's name in relayd's layout and in live URLs is FDR_HOSTNAME
 * (fdrd's environment), else the nodename: containers share nodenames.
 *
 * Faults: any send or reply error (timeouts bound each: relay_wire.c)
 * closes the connection; the thread connects again after 0.1 s, doubling
 * at every attempt to 5 s, whether the attempt failed or relayd took it
 * and dropped it soon after (its disk is full); only a connection that
 * lasted WORKED_NS starts the waits again at 0.1 s. Each connection
 * opens a NEW relay session (same name: relayd stores it under a new
 * date), except after a session in which no packet was sent: that one's
 * path is used again, so that a relayd that drops every connection gets
 * one directory for all the attempts, not one each. Streams it knew start at the current
 * end of their files; the events of every packet before that point are counted
 * (common/iter.h, with the process's class file) and added to the
 * events_discarded of every packet of that stream in the new session, so
 * that each relay session, read alone with babeltrace2, satisfies
 * received + discarded = emitted. The stats count as discarded only the
 * events of packets not known to have been sent (index not acknowledged).
 *
 * Memory: a fixed set of structs per process and stream, one packet
 * buffer (at most 16 MiB, for counting) and one 64 KiB metadata chunk:
 * bounded whatever relayd does. Counters are atomics (relaxed: they are
 * statistics) read by fdrd's loop for `fdr status`. */
#define _GNU_SOURCE
#include "relay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/classes.h"
#include "common/iter.h"
#include "common/ring.h"
#include "common/tracedir.h"
#include "common/tsdl.h"
#include "log.h"
#include "relay_wire.h"

#define TIMEOUT_MS 5000
#define STREAMS_MAX 256             /* stream files per process (rings) */
#define PROCS_MAX 4096              /* processes per trace */
#define PACKET_MAX (16u << 20)      /* the largest packet fdrd makes */
#define META_CHUNK (64u << 10)      /* metadata read and sent at once */
#define PACKETS_PER_TURN 64         /* per stream, then the others' turn */
#define BACKOFF_MIN_NS 100000000ull /* 0.1 s */
#define BACKOFF_MAX_NS 5000000000ull
/* A connection that lasted this long worked: the next wait starts again
 * at BACKOFF_MIN_NS. A relayd that accepts and then drops at once (its
 * disk is full, it restarts in a loop) sees the wait double to its cap. */
#define WORKED_NS 10000000000ull
/* Live beacons: see beacon_ts. */
#define STALE_PERIODS 4
#define STALE_MIN_NS 2000000000ull

struct rstream {
    int fd;
    unsigned index;       /* N of stream_N: the stream instance id */
    int added, dead;      /* added to the current relay session; stopped */
    uint64_t relay_id;    /* relayd's id in the current session */
    uint64_t seq;         /* next net_seq_num */
    uint64_t off;         /* next byte to send */
    uint64_t acked;       /* end of the last packet whose index relayd took */
    uint64_t carry;       /* added to events_discarded in this session */
    uint64_t counted_off; /* events of [0, counted_off) are counted_events */
    uint64_t counted_events;
    uint64_t last_ts;       /* ts_end of the last packet or beacon sent */
    uint64_t last_send_ns;  /* when something was last sent (live beacons) */
    struct fdr__pkt before; /* header of the packet before counted_off */
};

struct rproc {
    struct rproc *next;
    char name[256];
    int dir_fd;
    int meta_added, dead;
    uint64_t meta_id, meta_sent;
    char meta_tail[64]; /* the last bytes of metadata sent: the prefix check */
    unsigned meta_tail_len;
    uint64_t freq, offset;
    int64_t offset_s; /* the clock, from the metadata (beacons) */
    unsigned n;
    struct rstream *s[STREAMS_MAX];
};

struct fdrd_relay {
    pthread_t thread;
    char name[FDR_PROTO_NAME_CAP];
    char dir[FDR_PROTO_PATH_CAP];
    char hostname[65];
    char stamp[32]; /* of the current relay session */
    struct fdrd_relay_opts o;
    struct fdrd_relay_conn c;
    int connected;
    uint64_t up_ns;        /* when the current connection was made */
    uint64_t session_sent; /* packets sent in the current relay session */
    int stop;              /* atomic: fdrd_relay_stop */
    struct rproc *procs;
    unsigned nprocs;
    char *pkt; /* the packet buffer for counting */
    size_t pkt_cap;
    char meta[META_CHUNK];
    /* statistics: relaxed atomics */
    uint64_t bytes, packets, discarded;
    uint32_t state, sessions;
};

static uint64_t now_ns(int clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void add(uint64_t *v, uint64_t d)
{
    __atomic_fetch_add(v, d, __ATOMIC_RELAXED);
}

static void set_state(struct fdrd_relay *r, uint32_t st)
{
    __atomic_store_n(&r->state, st, __ATOMIC_RELAXED);
}

/* Sleeps ns, waking early when the trace is being stopped. */
static void nap(struct fdrd_relay *r, uint64_t ns)
{
    while (ns > 0 && !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        uint64_t step = ns < 20000000ull ? ns : 20000000ull;
        struct timespec ts = {0, (long)step};
        nanosleep(&ts, NULL);
        ns -= step;
    }
}

/* ---- the connection ----------------------------------------------------------- */

static void lost(struct fdrd_relay *r, const char *what, int err)
{
    if (!r->connected)
        return;
    fdrd_log("trace %s: relayd %s: %s: %s; connecting again", r->name, r->o.host, what,
             strerror(-err));
    fdrd_relay_disconnect(&r->c);
    r->connected = 0;
    set_state(r, FDRD_RELAY_RETRYING);
}

static int open_session(struct fdrd_relay *r, char *why, size_t cap)
{
    int rc = fdrd_relay_connect(&r->c, r->o.host, r->o.ctl_port, r->o.data_port,
                                TIMEOUT_MS, why, cap);
    if (rc < 0)
        return rc;
    rc = fdrd_relay_create_session(&r->c, r->name, r->hostname, r->o.live_us);
    if (rc < 0) {
        snprintf(why, cap, "relayd refused the session: %s", strerror(-rc));
        fdrd_relay_disconnect(&r->c);
        return rc;
    }
    /* A relay session in which no packet was sent (relayd dropped the
     * connection before: its disk is full) is taken up again under the
     * same path: relayd writes its files again from the start, and
     * reconnections do not leave a directory each, empty or holding only
     * a cut metadata file. */
    if (!r->sessions || r->session_sent) {
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        strftime(r->stamp, sizeof r->stamp, "%Y%m%d-%H%M%S", &tm);
        __atomic_fetch_add(&r->sessions, 1, __ATOMIC_RELAXED);
    }
    r->session_sent = 0;
    r->connected = 1;
    r->up_ns = now_ns(CLOCK_MONOTONIC);
    set_state(r, FDRD_RELAY_CONNECTED);
    return 0;
}

/* ---- packets ---------------------------------------------------------------- */

/* Reads and checks the packet header at s->off. 1: a whole packet is
 * there (*h); 0: not yet; -1: corrupt (the stream is stopped). */
static int packet_at(const struct rproc *p, struct rstream *s, uint64_t end,
                     struct fdr__pkt *h)
{
    if (end < s->off + sizeof *h)
        return 0;
    if (pread(s->fd, h, sizeof *h, (off_t)s->off) != (ssize_t)sizeof *h)
        return 0;
    uint64_t bytes = h->packet_size / 8;
    const char *bad = NULL;
    if (h->magic != FDR__CTF_MAGIC)
        bad = "bad magic";
    else if (h->packet_size % 8 || h->content_size % 8 ||
             h->content_size > h->packet_size || bytes < sizeof *h || bytes > PACKET_MAX)
        bad = "bad sizes";
    else if (h->ts_end < h->ts_begin)
        bad = "ends before it begins";
    else if (h->stream_instance_id != s->index)
        bad = "another stream's packet";
    if (bad) {
        fdrd_log("%s/stream_%u: packet at byte %llu: %s; this stream is no longer sent",
                 p->name, s->index, (unsigned long long)s->off, bad);
        s->dead = 1;
        return -1;
    }
    return end >= s->off + bytes;
}

/* Counts the events of the whole packets of s in [s->counted_off, end)
 * and moves counted_off to the last packet boundary below end. Sets
 * *events_at_acked to the count at s->acked when it is passed. */
static void count_until(struct fdrd_relay *r, const struct rproc *p, struct rstream *s,
                        uint64_t end, const struct fdr__classes *t,
                        uint64_t *events_at_acked)
{
    uint64_t keep = s->off;
    s->off = s->counted_off;
    for (;;) {
        if (s->off == s->acked)
            *events_at_acked = s->counted_events;
        struct fdr__pkt h;
        if (packet_at(p, s, end, &h) != 1)
            break;
        size_t bytes = (size_t)(h.content_size / 8);
        if (bytes > r->pkt_cap) {
            char *b = realloc(r->pkt, bytes);
            if (!b)
                break;
            r->pkt = b;
            r->pkt_cap = bytes;
        }
        if (pread(s->fd, r->pkt, bytes, (off_t)s->off) != (ssize_t)bytes)
            break;
        struct fdr__iter it;
        struct fdr__event ev;
        fdr__iter_init(&it, r->pkt, bytes, t);
        while (fdr__iter_next(&it, &ev) > 0)
            s->counted_events++;
        s->off += h.packet_size / 8;
        s->counted_off = s->off;
        s->before = h;
    }
    if (s->dead)
        s->off = keep;
}

/* The class file of p, loaded into *buf (caller frees) and viewed in *t. */
static int load_classes(const struct rproc *p, char **buf, struct fdr__classes *t)
{
    *buf = NULL;
    int fd = openat(p->dir_fd, FDR__CLASSES_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 30)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *buf = malloc((size_t)st.st_size + 1);
    ssize_t k = *buf ? pread(fd, *buf, (size_t)st.st_size, 0) : -1;
    close(fd);
    struct fdr__line_clock lk;
    const char *why;
    size_t at;
    if (k != st.st_size || fdr__classes_load(*buf, (size_t)k, t, &lk, &why, &at) < 0)
        return -1;
    return 0;
}

/* A new relay session: every stream known so far starts at the end of
 * its file; what lies before is counted as discarded (file comment). */
static void resume_at_end(struct fdrd_relay *r)
{
    for (struct rproc *p = r->procs; p; p = p->next) {
        p->meta_added = 0;
        p->meta_sent = 0;
        p->meta_tail_len = 0;
        if (p->dead || !p->n)
            continue;
        char *buf;
        struct fdr__classes t;
        int have = load_classes(p, &buf, &t) == 0;
        if (!have)
            memset(&t, 0, sizeof t);
        if (!have)
            fdrd_log("trace %s: %s: no class file: the events skipped at reconnection "
                     "are not counted",
                     r->name, p->name);
        for (unsigned i = 0; i < p->n; i++) {
            struct rstream *s = p->s[i];
            s->added = 0;
            s->seq = 0;
            if (s->dead)
                continue;
            struct stat st;
            if (fstat(s->fd, &st) < 0)
                continue;
            uint64_t at_acked = 0;
            /* Without classes the walk still finds the packet boundary;
             * no event parses, so none is counted. */
            count_until(r, p, s, (uint64_t)st.st_size, &t, &at_acked);
            if (s->acked < s->counted_off && have)
                add(&r->discarded, s->counted_events - at_acked);
            s->off = s->acked = s->counted_off;
            s->carry = s->counted_events;
        }
        free(buf);
    }
}

/* Sends header h, and body_len bytes of s's file after the header at
 * s->off, as one packet, then its index. */
static int send_one(struct fdrd_relay *r, struct rstream *s, const struct fdr__pkt *h,
                    uint64_t body_len)
{
    int rc = fdrd_relay_data(&r->c, s->relay_id, s->seq, h, sizeof *h, s->fd,
                             (off_t)(s->off + sizeof *h), body_len);
    if (rc < 0)
        return rc;
    struct fdrd_relay_index x = {
        .relay_stream_id = s->relay_id,
        .net_seq_num = s->seq,
        .packet_size = h->packet_size,
        .content_size = h->content_size,
        .ts_begin = h->ts_begin,
        .ts_end = h->ts_end,
        .discarded = h->discarded,
        .stream_id = 0,
        .stream_instance_id = h->stream_instance_id,
        .packet_seq_num = h->seq,
    };
    rc = fdrd_relay_index(&r->c, &x);
    if (rc == 0)
        s->seq++;
    return rc;
}

/* A stream resumed in a new session with events to report (carry): at
 * once, two header-only packets that stand for the last packet before the
 * resume point: the first says 0 discarded (a reader takes a stream's
 * first count as "some, unknown": babeltrace2), the second, numbered as
 * that packet, says its count plus the carry. Its next packet then
 * follows without a gap, and a stream that never gets another packet is
 * accounted for all the same. */
static int send_carry(struct fdrd_relay *r, struct rstream *s)
{
    if (!s->carry || s->seq)
        return 0;
    struct fdr__pkt h = s->before;
    h.content_size = h.packet_size = sizeof h * 8;
    h.ts_begin = h.ts_end;
    h.discarded = 0;
    h.seq--; /* from 0: all ones, and the next is 0 again, no gap */
    int rc = send_one(r, s, &h, 0);
    if (rc == 0) {
        h.discarded = s->before.discarded + s->carry;
        h.seq++;
        rc = send_one(r, s, &h, 0);
    }
    s->last_ts = h.ts_end;
    return rc;
}

/* Sends the packet at s->off (header h) and its index. */
static int send_packet(struct fdrd_relay *r, struct rstream *s, const struct fdr__pkt *h)
{
    struct fdr__pkt copy = *h;
    copy.discarded += s->carry;
    uint64_t bytes = h->packet_size / 8;
    int rc = send_one(r, s, &copy, bytes - sizeof copy);
    if (rc < 0)
        return rc;
    s->off += bytes;
    s->acked = s->off;
    s->last_ts = h->ts_end;
    s->last_send_ns = now_ns(CLOCK_MONOTONIC);
    add(&r->bytes, bytes);
    add(&r->packets, 1);
    r->session_sent++;
    return 0;
}

/* ---- discovery -------------------------------------------------------------- */

/* "<name>-<digits>", no '/', not "." or "..". */
static int proc_name_ok(const char *n)
{
    const char *dash = strrchr(n, '-');
    if (n[0] == '.' || !dash || dash == n || !dash[1] || strlen(n) >= 256)
        return 0;
    for (const char *q = dash + 1; *q; q++)
        if (*q < '0' || *q > '9')
            return 0;
    return 1;
}

static void find_procs(struct fdrd_relay *r)
{
    int top = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top < 0)
        return; /* nothing written yet */
    DIR *d = fdopendir(top);
    if (!d) {
        close(top);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL && r->nprocs < PROCS_MAX) {
        if (!proc_name_ok(e->d_name))
            continue;
        struct rproc *p = r->procs;
        while (p && strcmp(p->name, e->d_name))
            p = p->next;
        if (p)
            continue;
        int fd = openat(top, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        p = calloc(1, sizeof *p);
        if (!p) {
            close(fd);
            break;
        }
        snprintf(p->name, sizeof p->name, "%s", e->d_name);
        p->dir_fd = fd;
        p->next = r->procs;
        r->procs = p;
        r->nprocs++;
    }
    closedir(d);
}

static void find_streams(struct rproc *p)
{
    int fd = dup(p->dir_fd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    /* A dup shares the directory's read position, which the last turn
     * left at the end: without this, a stream file that appeared after
     * the first turn (a thread's first packet came later) was never seen,
     * and never sent. */
    rewinddir(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL && p->n < STREAMS_MAX) {
        char *end;
        if (strncmp(e->d_name, "stream_", 7) || e->d_name[7] < '0' || e->d_name[7] > '9')
            continue;
        unsigned long k = strtoul(e->d_name + 7, &end, 10);
        if (*end || k >= STREAMS_MAX)
            continue;
        unsigned i = 0;
        while (i < p->n && p->s[i]->index != k)
            i++;
        if (i < p->n)
            continue;
        int sfd = openat(p->dir_fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (sfd < 0 || fstat(sfd, &st) < 0 || !S_ISREG(st.st_mode)) {
            if (sfd >= 0)
                close(sfd);
            continue;
        }
        struct rstream *s = calloc(1, sizeof *s);
        if (!s) {
            close(sfd);
            break;
        }
        s->fd = sfd;
        s->index = (unsigned)k;
        p->s[p->n++] = s;
    }
    closedir(d);
}

/* ---- metadata ----------------------------------------------------------------- */

static void parse_clock(struct rproc *p, const char *text, size_t len)
{
    const char *c = memmem(text, len, "clock {", 7);
    if (!c)
        return;
    const char *f = strstr(c, "\tfreq = "), *os = strstr(c, "\toffset_s = "),
               *o = strstr(c, "\toffset = ");
    if (f && os && o) {
        p->freq = strtoull(f + 8, NULL, 10);
        p->offset_s = strtoll(os + 12, NULL, 10);
        p->offset = strtoull(o + 10, NULL, 10);
    }
}

/* The relayd path of process p's trace. */
static void relay_path(const struct fdrd_relay *r, const struct rproc *p, char *out,
                       size_t cap)
{
    unsigned n = __atomic_load_n(&r->sessions, __ATOMIC_RELAXED);
    if (n > 1) /* a later session may start within the same second */
        snprintf(out, cap, "%s/%s-%s-%u/%s", r->hostname, r->name, r->stamp, n, p->name);
    else
        snprintf(out, cap, "%s/%s-%s/%s", r->hostname, r->name, r->stamp, p->name);
}

/* Sends what relayd lacks of p's metadata. 1 when p is ready for data, 0
 * when not yet (no metadata), <0 on a connection error. */
static int send_metadata(struct fdrd_relay *r, struct rproc *p)
{
    int fd = openat(p->dir_fd, "metadata", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return p->meta_added;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        goto out;
    uint64_t size = (uint64_t)st.st_size;
    if (size < p->meta_sent) {
        fdrd_log("trace %s: %s: metadata shrank; this process is no longer sent", r->name,
                 p->name);
        p->dead = 1;
        goto out;
    }
    if (p->meta_tail_len) {
        char tail[sizeof p->meta_tail];
        if (pread(fd, tail, p->meta_tail_len, (off_t)(p->meta_sent - p->meta_tail_len)) !=
                (ssize_t)p->meta_tail_len ||
            memcmp(tail, p->meta_tail, p->meta_tail_len)) {
            fdrd_log("trace %s: %s: metadata rewritten, not appended; this process is "
                     "no longer sent",
                     r->name, p->name);
            p->dead = 1;
            goto out;
        }
    }
    if (!p->meta_added) {
        if (size == 0)
            goto out;
        char path[FDR_PROTO_PATH_CAP];
        relay_path(r, p, path, sizeof path);
        rc = fdrd_relay_add_stream(&r->c, "metadata", path, &p->meta_id);
        if (rc < 0)
            goto out;
        p->meta_added = 1;
    }
    while (p->meta_sent < size) {
        size_t n = size - p->meta_sent < META_CHUNK ? size - p->meta_sent : META_CHUNK;
        ssize_t k = pread(fd, r->meta, n, (off_t)p->meta_sent);
        if (k <= 0)
            break;
        if (p->meta_sent == 0)
            parse_clock(p, r->meta, (size_t)k);
        rc = fdrd_relay_metadata(&r->c, p->meta_id, r->meta, (size_t)k);
        if (rc < 0)
            goto out;
        p->meta_sent += (uint64_t)k;
        size_t t = (size_t)k < sizeof p->meta_tail ? (size_t)k : sizeof p->meta_tail;
        memcpy(p->meta_tail, r->meta + k - t,
               t); /* chunks are >= 64 bytes but the last */
        p->meta_tail_len = (unsigned)t;
        add(&r->bytes, (uint64_t)k);
    }
out:
    close(fd);
    return rc < 0 ? rc : p->meta_added;
}

/* ---- one turn ----------------------------------------------------------------- */

/* ns nanoseconds in cycles of a freq Hz clock, ns * freq / 1e9 without
 * a 128-bit product (32-bit targets have no __int128): exact as long as
 * the result fits. */
static uint64_t ns_to_cycles(uint64_t ns, uint64_t freq)
{
    uint64_t q = ns / 1000000000, r = ns % 1000000000;
    return q * freq + r * (freq / 1000000000) + r * (freq % 1000000000) / 1000000000;
}

/* What a beacon of stream s says: "nothing before this time", in the
 * process's clock. A period before the last time the stream file held
 * every event committed then (its mtime: collect.c, live_mark, which
 * sets it back after a write that left a part waiting): an event written
 * later was committed after that, or was being written at that moment
 * by a thread preempted for less than a period, so no event sent later
 * is older than the beacon (lttng-live stops at a stream whose time goes
 * back). Before, the mtime was the last write's, which could claim the
 * events still waiting for their half period: a slow fdrd at load 30
 * made lttng-live abort. Never before what was sent last. A file the
 * collector has not touched for STALE_PERIODS periods is a process's that
 * ended, unless fdrd's open mark is still in its directory (tracedir.h):
 * then the collector is only held up, and the beacon waits for it. */
static uint64_t beacon_ts(const struct fdrd_relay *r, const struct rproc *p,
                          const struct rstream *s)
{
    struct stat st;
    if (!p->freq || fstat(s->fd, &st) < 0)
        return s->last_ts;
    uint64_t ns =
        (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    if (ns < 2000000000ull)
        return s
            ->last_ts; /* the file never held every event yet (collect.c, live_mark) */
    uint64_t now = now_ns(CLOCK_REALTIME), period = (uint64_t)r->o.live_us * 1000;
    /* A file the collector has not touched for STALE_PERIODS periods (at
     * least STALE_MIN_NS) is a process's that ended (its last turn wrote
     * everything): its beacons follow the clock again, so that viewers
     * are not held at its end. */
    uint64_t stale =
        STALE_PERIODS * period > STALE_MIN_NS ? STALE_PERIODS * period : STALE_MIN_NS;
    /* Not while the collector still writes the process (its mark): one
     * held up past those periods at load 20 had beacons run 3.4 s ahead of
     * an event it wrote after, and lttng-live stopped (fdr-relay-live60,
     * CI beside another suite). */
    if (ns >= now || (now - ns > stale && faccessat(p->dir_fd, FDR__OPEN_FILE_FDRD, F_OK,
                                                    AT_SYMLINK_NOFOLLOW) != 0))
        ns = now;
    ns -= period;
    int64_t since = (int64_t)ns - p->offset_s * 1000000000;
    uint64_t v = since > 0 ? ns_to_cycles((uint64_t)since, p->freq) : 0;
    return v > p->offset && v - p->offset > s->last_ts ? v - p->offset : s->last_ts;
}

/* Sends what is new in process p. 1 when more is waiting, 0 when all is
 * sent, <0 on a connection error. */
static int proc_turn(struct fdrd_relay *r, struct rproc *p)
{
    if (p->dead)
        return 0;
    find_streams(p);
    uint64_t ends[STREAMS_MAX];
    for (unsigned i = 0; i < p->n; i++) {
        struct stat st;
        ends[i] = fstat(p->s[i]->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    }
    int rc = send_metadata(r, p); /* after noting the lengths: file comment */
    if (rc <= 0)
        return rc;
    int added = 0, more = 0;
    for (unsigned i = 0; i < p->n; i++) {
        struct rstream *s = p->s[i];
        if (s->added || s->dead)
            continue;
        char path[FDR_PROTO_PATH_CAP], chan[32];
        relay_path(r, p, path, sizeof path);
        snprintf(chan, sizeof chan, "stream_%u", s->index);
        rc = fdrd_relay_add_stream(&r->c, chan, path, &s->relay_id);
        if (rc < 0)
            return rc;
        s->added = added = 1;
        s->last_send_ns = now_ns(CLOCK_MONOTONIC);
        if ((rc = send_carry(r, s)) < 0)
            return rc;
    }
    if (added && (rc = fdrd_relay_streams_sent(&r->c)) < 0)
        return rc;
    uint64_t now = now_ns(CLOCK_MONOTONIC);
    for (unsigned i = 0; i < p->n; i++) {
        struct rstream *s = p->s[i];
        struct fdr__pkt h;
        int k = 0, sent = 0;
        while (!s->dead && sent < PACKETS_PER_TURN &&
               (k = packet_at(p, s, ends[i], &h)) == 1) {
            if ((rc = send_packet(r, s, &h)) < 0)
                return rc;
            sent++;
        }
        more |= sent == PACKETS_PER_TURN;
        if (r->o.live_us && !s->dead && !sent &&
            now - s->last_send_ns >= (uint64_t)r->o.live_us * 1000) {
            uint64_t ts = beacon_ts(r, p, s);
            struct fdrd_relay_index x = {.relay_stream_id = s->relay_id,
                                         .net_seq_num = FDRD_RELAY_NO_SEQ,
                                         .ts_begin = ts,
                                         .ts_end = ts,
                                         .stream_instance_id = s->index,
                                         .packet_seq_num = FDRD_RELAY_NO_SEQ};
            if ((rc = fdrd_relay_index(&r->c, &x)) < 0)
                return rc;
            s->last_ts = ts;
            s->last_send_ns = now;
        }
    }
    return more;
}

/* One pass over every process: 1 when more is waiting, <0 on error. */
static int turn(struct fdrd_relay *r)
{
    find_procs(r);
    int more = 0;
    for (struct rproc *p = r->procs; p; p = p->next) {
        int rc = proc_turn(r, p);
        if (rc < 0) {
            lost(r, "send", rc);
            return rc;
        }
        more |= rc;
    }
    return more;
}

static void close_streams(struct fdrd_relay *r)
{
    for (struct rproc *p = r->procs; p && r->connected; p = p->next) {
        for (unsigned i = 0; i < p->n && r->connected; i++)
            if (p->s[i]->added) {
                int rc = fdrd_relay_close_stream(&r->c, p->s[i]->relay_id,
                                                 p->s[i]->seq - 1); /* none: all ones */
                if (rc < 0)
                    lost(r, "close", rc);
            }
        if (p->meta_added && r->connected) {
            int rc = fdrd_relay_close_stream(&r->c, p->meta_id, FDRD_RELAY_NO_SEQ);
            if (rc < 0)
                lost(r, "close", rc);
        }
    }
}

static void *sender(void *arg)
{
    struct fdrd_relay *r = arg;
    uint64_t backoff = 0; /* the last wait; 0: none yet */
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        if (!r->connected) {
            /* Doubles from one attempt to the next, whether the attempt
             * failed or connected and was dropped soon after; only a
             * connection that worked for a while starts it again. */
            if (r->up_ns && now_ns(CLOCK_MONOTONIC) - r->up_ns >= WORKED_NS)
                backoff = 0;
            r->up_ns = 0;
            backoff = !backoff                       ? BACKOFF_MIN_NS
                      : backoff * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS
                                                     : backoff * 2;
            nap(r, backoff);
            if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
                break;
            char why[256];
            if (open_session(r, why, sizeof why) < 0)
                continue;
            fdrd_log("trace %s: relayd %s: connected again after waiting %.1f s, relay "
                     "session %u",
                     r->name, r->o.host, (double)backoff / 1e9,
                     __atomic_load_n(&r->sessions, __ATOMIC_RELAXED));
            resume_at_end(r);
        }
        if (turn(r) == 0)
            nap(r, 100000000ull);
    }
    /* Stopping: the collector has written everything out. */
    while (r->connected && turn(r) > 0)
        ;
    close_streams(r);
    if (r->connected)
        fdrd_relay_disconnect(&r->c);
    r->connected = 0;
    set_state(r, FDRD_RELAY_STOPPED);
    return NULL;
}

/* ---- the API ------------------------------------------------------------------ */

static void free_all(struct fdrd_relay *r)
{
    while (r->procs) {
        struct rproc *p = r->procs;
        r->procs = p->next;
        for (unsigned i = 0; i < p->n; i++) {
            close(p->s[i]->fd);
            free(p->s[i]);
        }
        close(p->dir_fd);
        free(p);
    }
    free(r->pkt);
    free(r);
}

int fdrd_relay_start(struct fdrd_relay **out, const char *name, const char *dir,
                     const struct fdrd_relay_opts *o, char *msg, size_t cap)
{
    struct fdrd_relay *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(msg, cap, "out of memory");
        return ENOMEM;
    }
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    r->o = *o;
    if (!r->o.ctl_port)
        r->o.ctl_port = FDRD_RELAY_CONTROL_PORT;
    if (!r->o.data_port)
        r->o.data_port = FDRD_RELAY_DATA_PORT;
    /* FDR_HOSTNAME (fdrd's environment) names the host in relayd's
     * layout: hosts in containers often share a nodename, and relayd
     * would store them as one. It becomes a directory name: checked. */
    const char *hn = getenv("FDR_HOSTNAME");
    struct utsname un;
    if (hn && !*hn)
        hn = NULL; /* empty is unset, as for every FDR_ variable */
    if (hn && (strlen(hn) > 63 || hn[0] == '.' ||
               hn[strspn(hn, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789._-")])) {
        snprintf(
            msg, cap,
            "bad FDR_HOSTNAME '%.64s' in fdrd's environment: 1 to 63 letters, digits, "
            "'.', '_' or '-', not starting with '.'",
            hn);
        free_all(r);
        return EINVAL;
    }
    snprintf(r->hostname, sizeof r->hostname, "%s",
             hn                                  ? hn
             : uname(&un) == 0 && un.nodename[0] ? un.nodename
                                                 : "unknown");
    r->c.ctl = r->c.data = -1;
    char why[256];
    /* Connected before the trace exists: an unreachable relayd is the
     * creator's error, said at once. */
    int rc = open_session(r, why, sizeof why);
    if (rc < 0) {
        snprintf(msg, cap, "relayd %s: %s", r->o.host, why);
        free_all(r);
        return -rc;
    }
    rc = pthread_create(&r->thread, NULL, sender, r);
    if (rc) {
        fdrd_relay_disconnect(&r->c);
        free_all(r);
        snprintf(msg, cap, "cannot start the relayd sender: %s", strerror(rc));
        return rc;
    }
    *out = r;
    return 0;
}

void fdrd_relay_stop(struct fdrd_relay *r)
{
    if (!r)
        return;
    __atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
    pthread_join(r->thread, NULL);
    free_all(r);
}

void fdrd_relay_stats(const struct fdrd_relay *r, struct fdrd_relay_stats *out)
{
    out->bytes = __atomic_load_n(&r->bytes, __ATOMIC_RELAXED);
    out->packets = __atomic_load_n(&r->packets, __ATOMIC_RELAXED);
    out->discarded = __atomic_load_n(&r->discarded, __ATOMIC_RELAXED);
    out->state = __atomic_load_n(&r->state, __ATOMIC_RELAXED);
    out->sessions = __atomic_load_n(&r->sessions, __ATOMIC_RELAXED);
}
