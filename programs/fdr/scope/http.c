/* SPDX-License-Identifier: MIT */
/* http.c - the scope's web server (docs/scope-api.md is its
 * contract), on libmicrohttpd: no HTTP parsing of our own.
 *
 * The idea: one thread per connection (libmicrohttpd's), so that a
 * Server-Sent Events stream can simply wait for the reader's next tick on
 * a condition variable, then copy what is new from the store (series.h)
 * under its mutex and write it outside of it. Each stream has its own
 * cursors; a browser that reads slowly or not at all only delays its own
 * thread, and what it missed is skipped (the rings move on). Before
 * anything else a request must carry the token (compared in constant
 * time); then limits: 8 KiB of URL and headers, 4 KiB of body (POST only
 * on /api/control), 16 streams, 64 connections, a memory cap per
 * connection (libmicrohttpd's pool) and an idle timeout. The server never
 * sees a connection before it sent the token: the listening socket is the
 * gate's (gate.c), which holds connections without a slot for about
 * a second and hands over only those that show the token, so that other
 * local users' half-open connections cannot keep the page out. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/format.h"
#include "common/pattern.h"
#include "offline.h"
#include "gate.h"
#include "http.h"

#define HEADERS_MAX 8192
#define BODY_MAX 4096
#define CONNECTIONS_MAX 64
#define WIDTH_DEFAULT 1000
#define WIDTH_MAX 4000
#define PTS_CAP (4 * WIDTH_MAX + 2 > SCOPE_POINTS ? 4 * WIDTH_MAX + 2 : SCOPE_POINTS)
#define TAIL_LINES 100
#define ROUND_NS 100000000ull
#define STATE_NS 1000000000ull

struct scope_http {
    struct MHD_Daemon *d;
    struct scope_gate *gate;
    int lfd; /* the listening socket, the gate's */
    struct scope_db *db;
    scope_control_fn ctl;
    void *ctl_arg;
    char token[65];
    char *index; /* index.html with the token */
    size_t index_len;
    int streams; /* atomic */
};

/* A request's state between the calls of the access handler. */
struct req {
    int post;
    int too_big;
    struct MHD_PostProcessor *pp;
    char what[32], event[256], on[8], name[128], value[64];
};

struct stream {
    struct scope_http *h;
    int fd; /* the connection's socket: a client gone is noticed at once */
    char fields[SCOPE_STREAM_FIELDS][200];
    unsigned nfields;
    int split;
    unsigned width;
    struct fdr__rules *tail;
    char tail_error[256];
    uint64_t tail_next, tail_offered;
    unsigned scanned; /* series of the db looked at so far */
    unsigned n;       /* series followed */
    int idx[SCOPE_SERIES_MAX];
    uint64_t next[SCOPE_SERIES_MAX];
    unsigned cursor; /* the next of them to look at in this round */
    int hello, done;
    uint64_t round_ns, state_ns;
    struct sbuf out;
    size_t sent;
    struct scope_point *pts;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
                             const void *body, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
    return reply(c, status, "text/plain; charset=utf-8", msg, strlen(msg));
}

static enum MHD_Result json_error(struct MHD_Connection *c, unsigned status,
                                  const char *why)
{
    struct sbuf b = {0};
    sb_printf(&b, "{\"error\": ");
    sb_json(&b, why, strlen(why));
    sb_printf(&b, "}");
    enum MHD_Result rc = b.oom ? MHD_NO : reply(c, status, "application/json", b.p, b.n);
    sb_free(&b);
    return rc;
}

/* 1 when s is the token; the time taken does not depend on where they
 * differ. */
static int token_ok(const struct scope_http *h, const char *s)
{
    if (!s)
        return 0;
    size_t n = strlen(s), k = strlen(h->token);
    unsigned char diff = n != k;
    for (size_t i = 0; i < k; i++)
        diff |= (unsigned char)(h->token[i] ^ (i < n ? s[i] : 0));
    return diff == 0;
}

static enum MHD_Result count_bytes(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    size_t *n = cls;
    *n += strlen(key) + (value ? strlen(value) : 0) + 4;
    return MHD_YES;
}

/* ---- static files ------------------------------------------------------------- */

static const char *content_type(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (dot && strcmp(dot, ".js") == 0)
        return "text/javascript; charset=utf-8";
    if (dot && strcmp(dot, ".css") == 0)
        return "text/css; charset=utf-8";
    if (dot && strcmp(dot, ".html") == 0)
        return "text/html; charset=utf-8";
    return "application/octet-stream";
}

static const struct scope_file *file_named(const char *name)
{
    for (const struct scope_file *f = scope_files; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

/* ---- JSON of the store ---------------------------------------------------------- */

static enum MHD_Result info(struct scope_http *h, struct MHD_Connection *c)
{
    struct sbuf b = {0};
    struct scope_db *db = h->db;
    pthread_mutex_lock(&db->mu);
    sb_printf(&b, "{\"mode\": \"%s\", \"target\": ", db->replay ? "replay" : "live");
    sb_json(&b, db->target, sizeof db->target);
    sb_printf(&b, ", \"pid\": %u, \"running\": %s, \"control\": %s}", db->pid,
              db->running ? "true" : "false", db->control ? "true" : "false");
    pthread_mutex_unlock(&db->mu);
    enum MHD_Result rc = b.oom ? MHD_NO : reply(c, 200, "application/json", b.p, b.n);
    sb_free(&b);
    return rc;
}

static enum MHD_Result events(struct scope_http *h, struct MHD_Connection *c)
{
    struct sbuf b = {0};
    pthread_mutex_lock(&h->db->mu);
    scope_db_events_json(h->db, &b);
    pthread_mutex_unlock(&h->db->mu);
    enum MHD_Result rc = b.oom ? MHD_NO : reply(c, 200, "application/json", b.p, b.n);
    sb_free(&b);
    return rc;
}

/* GET /api/range?key=K&from=T0&to=T1&width=W (replay): the points of one
 * series over a span, reduced per pixel column (scope_db_range). */
static enum MHD_Result range(struct scope_http *h, struct MHD_Connection *c)
{
    const char *key = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "key");
    const char *f = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "from");
    const char *t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "to");
    const char *w = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "width");
    char *e1 = NULL, *e2 = NULL;
    double t0 = f ? strtod(f, &e1) : NAN, t1 = t ? strtod(t, &e2) : NAN;
    uint32_t width = WIDTH_DEFAULT;
    if (!key || !f || !t || *e1 || *e2 || !(t0 <= t1) ||
        (w && (off_u32(w, &width) != 0 || width < 1)))
        return json_error(c, 400, "range needs key, from <= to (seconds) and width >= 1");
    if (width > WIDTH_MAX)
        width = WIDTH_MAX;
    struct scope_point *p = malloc(PTS_CAP * sizeof *p);
    if (!p)
        return json_error(c, 503, "out of memory");
    struct sbuf b = {0};
    unsigned status = 200;
    pthread_mutex_lock(&h->db->mu);
    int si = h->db->replay ? scope_db_find(h->db, key) : -1;
    if (!h->db->replay) {
        status = 409;
        sb_printf(&b, "{\"error\": \"live: the stream sends every point\"}");
    } else if (si < 0) {
        status = 404;
        sb_printf(&b, "{\"error\": \"no such series\"}");
    } else {
        int raw, thinned;
        size_t n = scope_db_range(h->db, si, t0, t1, width, p, &raw, &thinned);
        sb_printf(&b, "{\"key\": ");
        sb_json(&b, key, SIZE_MAX);
        sb_printf(&b, ", \"raw\": %s, \"thinned\": %s, \"t\": [", raw ? "true" : "false",
                  thinned ? "true" : "false");
        for (size_t i = 0; i < n; i++) {
            if (i)
                sb_add(&b, ",", 1);
            sb_num(&b, p[i].t);
        }
        sb_printf(&b, "], \"v\": [");
        for (size_t i = 0; i < n; i++) {
            if (i)
                sb_add(&b, ",", 1);
            sb_num(&b, p[i].v);
        }
        sb_printf(&b, "]}");
    }
    pthread_mutex_unlock(&h->db->mu);
    free(p);
    enum MHD_Result rc = b.oom ? MHD_NO : reply(c, status, "application/json", b.p, b.n);
    sb_free(&b);
    return rc;
}

/* GET /api/hist?event=prov:ev: the histogram of a span's durations
 * (scope_db_hist_json), live and in a replay. */
static enum MHD_Result hist(struct scope_http *h, struct MHD_Connection *c)
{
    const char *ev = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "event");
    if (!ev)
        return json_error(c, 400, "hist needs event=provider:event");
    struct sbuf b = {0};
    unsigned status = 200;
    pthread_mutex_lock(&h->db->mu);
    int ei = scope_db_event_find(h->db, ev);
    if (ei < 0 || !h->db->events[ei]->span_field) {
        status = 404;
        sb_printf(&b, "{\"error\": \"no such span\"}");
    } else
        scope_db_hist_json(h->db, ei, &b);
    pthread_mutex_unlock(&h->db->mu);
    enum MHD_Result rc = b.oom ? MHD_NO : reply(c, status, "application/json", b.p, b.n);
    sb_free(&b);
    return rc;
}

/* ---- the event stream ---------------------------------------------------------- */

static void msg_begin(struct sbuf *b, const char *event)
{
    sb_printf(b, "event: %s\ndata: ", event);
}

static void msg_end(struct sbuf *b)
{
    sb_add(b, "\n\n", 2);
}

static int by_time(const void *a, const void *b)
{
    double x = ((const struct scope_point *)a)->t, y = ((const struct scope_point *)b)->t;
    return (x > y) - (x < y);
}

/* Appends the points p[0..n) as one series of a `points` message,
 * reduced to the first, min, max and last of each of `width` columns
 * (scope_m4) when more than 4 * width. */
static void points_json(struct sbuf *b, const char *key, struct scope_point *p, size_t n,
                        unsigned width)
{
    qsort(p, n, sizeof *p, by_time);
    if (n > (size_t)width * 4)
        n = scope_m4(p, n, p[0].t, p[n - 1].t, width, p);
    sb_printf(b, "{\"series\": [{\"key\": ");
    sb_json(b, key, SIZE_MAX);
    sb_printf(b, ", \"t\": [");
    for (size_t i = 0; i < n; i++) {
        if (i)
            sb_add(b, ",", 1);
        sb_num(b, p[i].t);
    }
    sb_printf(b, "], \"v\": [");
    for (size_t i = 0; i < n; i++) {
        if (i)
            sb_add(b, ",", 1);
        sb_num(b, p[i].v);
    }
    sb_printf(b, "]}]}");
}

/* Follows the series of the db made since the last look (locked). */
static void follow_new(struct stream *s, struct scope_db *db)
{
    for (; s->scanned < db->nseries; s->scanned++) {
        const char *key = db->series[s->scanned]->key;
        for (unsigned f = 0; f < s->nfields; f++) {
            size_t n = strlen(s->fields[f]);
            if (strncmp(key, s->fields[f], n) == 0 &&
                (key[n] == 0 || (s->split && key[n] == '@'))) {
                if (s->n < SCOPE_SERIES_MAX) {
                    s->idx[s->n] = (int)s->scanned;
                    s->next[s->n++] = 0;
                }
                break;
            }
        }
    }
}

/* One `points` message for the next followed series with new points
 * (locked; the points are copied into s->pts). 1 when made. */
static int next_points(struct stream *s, struct scope_db *db, int *more, size_t *k,
                       char *key, size_t keycap)
{
    while (s->cursor < s->n) {
        unsigned i = s->cursor++;
        if (db->replay) {
            /* the whole trace, read before serving: its M4 at the width */
            int raw, thinned;
            *k = s->next[i] ? 0
                            : scope_db_range(db, s->idx[i], -INFINITY, INFINITY, s->width,
                                             s->pts, &raw, &thinned);
            s->next[i] = 1;
        } else {
            *k = scope_db_points(db, s->idx[i], &s->next[i], s->pts, SCOPE_POINTS);
        }
        if (*k) {
            snprintf(key, keycap, "%s", db->series[s->idx[i]]->key);
            *more = 1;
            return 1;
        }
    }
    return 0;
}

/* A `tail` message with the events that match among those published
 * since the last one (locked): in time order, and at most TAIL_LINES
 * picked evenly among them; it says when it shows a sample, and how many
 * events matched (estimated when the reader kept a sample only). */
static void tail_msg(struct stream *s, struct scope_db *db)
{
    uint64_t from = s->tail_next, head = db->tail_pub;
    if (db->tail_head - from > SCOPE_TAIL) /* overwritten since */
        from = db->tail_head - SCOPE_TAIL;
    if (from > head)
        from = head;
    uint64_t offered = db->tail_offered - s->tail_offered;
    s->tail_offered = db->tail_offered;
    s->tail_next = head;
    uint64_t match[SCOPE_TAIL];
    unsigned m = 0;
    for (uint64_t q = from; q < head; q++) {
        const struct scope_tail_ent *e = &db->tail[q % SCOPE_TAIL];
        const struct scope_proc *p = db->procs[e->proc];
        const struct fdr__class *c = fdr__classes_get(&p->classes, e->cls);
        if (c && off_pattern_match(s->tail, fdr__classes_str(&p->classes, c->provider),
                                   fdr__classes_str(&p->classes, c->event)))
            match[m++] = q;
    }
    if (!m)
        return;
    uint64_t read = head - from;
    unsigned n = m < TAIL_LINES ? m : TAIL_LINES;
    int sampled = n < m || read < offered;
    double events =
        read && offered > read ? (double)m * (double)offered / (double)read : m;
    msg_begin(&s->out, "tail");
    sb_printf(&s->out, "{\"sampled\": %s, \"events\": %.0f, \"lines\": [",
              sampled ? "true" : "false", events);
    char line[2048];
    for (unsigned i = 0; i < n; i++) {
        /* evenly among the matches (in time order within each period) */
        /* live evenly among the matches; a replay's tail is its end */
        uint64_t k = db->replay ? m - n + i : (uint64_t)i * m / n;
        const struct scope_tail_ent *e = &db->tail[match[k] % SCOPE_TAIL];
        const struct scope_proc *p = db->procs[e->proc];
        const struct fdr__class *c = fdr__classes_get(&p->classes, e->cls);
        struct fdr__line_info li = {e->ns, e->tid, e->tname};
        size_t len =
            fdr__format_line(line, sizeof line, &p->classes, c, &li, e->payload, e->len);
        while (len && line[len - 1] == '\n')
            len--;
        if (i)
            sb_add(&s->out, ", ", 2);
        sb_json(&s->out, line, len);
    }
    sb_printf(&s->out, "]}");
    msg_end(&s->out);
}

/* Fills s->out with the next messages; waits for news when there are
 * none. 0, or -1 when the server stops. */
static int produce(struct stream *s)
{
    struct scope_db *db = s->h->db;
    if (!s->hello) {
        s->hello = 1;
        msg_begin(&s->out, "hello");
        sb_printf(&s->out,
                  "{\"mode\": \"%s\", \"window\": ", db->replay ? "replay" : "live");
        sb_num(&s->out, db->window);
        sb_printf(&s->out, "}");
        msg_end(&s->out);
        if (s->tail_error[0]) {
            msg_begin(&s->out, "error");
            sb_printf(&s->out, "{\"error\": ");
            sb_json(&s->out, s->tail_error, sizeof s->tail_error);
            sb_printf(&s->out, "}");
            msg_end(&s->out);
        }
        return 0;
    }
    for (;;) {
        uint64_t now = now_ns();
        pthread_mutex_lock(&db->mu);
        if (db->stopping) {
            pthread_mutex_unlock(&db->mu);
            return -1;
        }
        if (s->cursor >= s->n && now >= s->round_ns + ROUND_NS) {
            /* a new round: the series made since, then each in turn */
            follow_new(s, db);
            s->cursor = 0;
            s->round_ns = now;
            if (s->tail)
                tail_msg(s, db);
        }
        int more = 0;
        size_t k;
        char key[200];
        if (next_points(s, db, &more, &k, key, sizeof key)) {
            pthread_mutex_unlock(&db->mu);
            msg_begin(&s->out, "points");
            points_json(&s->out, key, s->pts, k, s->width);
            msg_end(&s->out);
            return 0;
        }
        if (now >= s->state_ns + STATE_NS) {
            s->state_ns = now;
            msg_begin(&s->out, "state");
            scope_db_events_json(db, &s->out);
            msg_end(&s->out);
        }
        if (db->replay && db->done && !s->done) {
            s->done = 1;
            msg_begin(&s->out, "done");
            sb_printf(&s->out, "{}");
            msg_end(&s->out);
        }
        if (s->out.n) {
            pthread_mutex_unlock(&db->mu);
            return 0;
        }
        /* nothing new: wait for the reader's next tick, or the round */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += (long)ROUND_NS;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&db->cond, &db->mu, &ts);
        pthread_mutex_unlock(&db->mu);
        struct pollfd pf = {s->fd, POLLRDHUP, 0};
        if (s->fd >= 0 && poll(&pf, 1, 0) == 1 &&
            (pf.revents & (POLLRDHUP | POLLHUP | POLLERR)))
            return -1; /* the client closed: its slot is free again */
    }
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct stream *s = cls;
    while (s->sent >= s->out.n) {
        s->out.n = 0;
        s->sent = 0;
        if (s->out.oom || produce(s) < 0)
            return MHD_CONTENT_READER_END_OF_STREAM;
    }
    size_t n = s->out.n - s->sent < max ? s->out.n - s->sent : max;
    memcpy(buf, s->out.p + s->sent, n);
    s->sent += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    struct stream *s = cls;
    __atomic_fetch_sub(&s->h->streams, 1, __ATOMIC_ACQ_REL);
    fdr__rules_free(s->tail);
    sb_free(&s->out);
    free(s->pts);
    free(s);
}

static void tail_warn(void *ctx, const char *message)
{
    char *e = ctx;
    if (!e[0])
        snprintf(e, 256, "%s", message);
}

static enum MHD_Result stream(struct scope_http *h, struct MHD_Connection *c)
{
    if (__atomic_add_fetch(&h->streams, 1, __ATOMIC_ACQ_REL) > SCOPE_STREAMS_MAX) {
        __atomic_fetch_sub(&h->streams, 1, __ATOMIC_ACQ_REL);
        return json_error(c, 503, "too many streams (16)");
    }
    struct stream *s = calloc(1, sizeof *s);
    if (s)
        s->pts = malloc(PTS_CAP * sizeof *s->pts);
    if (!s || !s->pts) {
        if (s)
            free(s->pts);
        free(s);
        __atomic_fetch_sub(&h->streams, 1, __ATOMIC_ACQ_REL);
        return json_error(c, 503, "out of memory");
    }
    s->h = h;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    s->fd = ci ? ci->connect_fd : -1;
    s->width = WIDTH_DEFAULT;
    const char *w = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "width");
    uint32_t wv;
    if (w && off_u32(w, &wv) == 0 && wv >= 1)
        s->width = wv > WIDTH_MAX ? WIDTH_MAX : wv;
    const char *sp = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "split");
    s->split = sp && strcmp(sp, "1") == 0;
    const char *fl = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fields");
    while (fl && *fl && s->nfields < SCOPE_STREAM_FIELDS) {
        size_t n = strcspn(fl, ",");
        if (n && n < sizeof s->fields[0] && !memchr(fl, '@', n)) {
            memcpy(s->fields[s->nfields], fl, n);
            s->fields[s->nfields++][n] = 0;
        }
        fl += n + (fl[n] == ',');
    }
    const char *tl = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "tail");
    if (tl && *tl) {
        if (fdr__rules_parse_flags(tl, "tail", FDR__RULES_NO_FILES, tail_warn,
                                   s->tail_error, &s->tail) < 0)
            s->tail = NULL;
        if (s->tail &&
            (fdr__rules_wants_help(s->tail) || fdr__rules_tunable_count(s->tail)))
            snprintf(s->tail_error, sizeof s->tail_error,
                     "tail: events only (no help, list or NAME=VALUE)");
    }
    pthread_mutex_lock(&h->db->mu);
    s->tail_next = h->db->tail_head > SCOPE_TAIL ? h->db->tail_head - SCOPE_TAIL : 0;
    s->tail_offered = h->db->tail_offered;
    pthread_mutex_unlock(&h->db->mu);
    struct MHD_Response *r = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, 16384, stream_read, s, stream_free);
    if (!r) {
        stream_free(s);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    enum MHD_Result rc = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return rc;
}

/* ---- control --------------------------------------------------------------------- */

static enum MHD_Result post_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *filename, const char *content_type,
                                  const char *transfer_encoding, const char *data,
                                  uint64_t off, size_t size)
{
    (void)kind, (void)filename, (void)content_type, (void)transfer_encoding;
    struct req *q = cls;
    char *dst = NULL;
    size_t cap = 0;
#define FIELD(n)                                                                         \
    if (strcmp(key, #n) == 0)                                                            \
        dst = q->n, cap = sizeof q->n;
    FIELD(what)
    FIELD(event)
    FIELD(on)
    FIELD(name)
    FIELD(value)
#undef FIELD
    if (!dst)
        return MHD_YES;
    if (off + size >= cap) {
        q->too_big = 1;
        return MHD_YES;
    }
    memcpy(dst + off, data, size);
    dst[off + size] = 0;
    return MHD_YES;
}

static enum MHD_Result control(struct scope_http *h, struct MHD_Connection *c,
                               struct req *q)
{
    if (q->too_big)
        return json_error(c, 400, "a field is too long");
    if (!q->what[0])
        return json_error(c, 400, "missing what=record|print|tunable");
    char why[256] = "";
    int st =
        h->ctl(h->ctl_arg, q->what, q->event, q->on, q->name, q->value, why, sizeof why);
    if (st == 200)
        return reply(c, 200, "application/json", "{\"ok\": true}", 12);
    return json_error(c, (unsigned)st, why);
}

/* ---- dispatch -------------------------------------------------------------------- */

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version,
                              const char *upload_data, size_t *upload_data_size,
                              void **con_cls)
{
    (void)version;
    struct scope_http *h = cls;
    struct req *q = *con_cls;
    if (!q) {
        /* the first call: headers only. The token before anything. */
        const char *tok = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
        if (!tok)
            tok = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Fdr-Token");
        if (!token_ok(h, tok))
            return text(c, 403, "forbidden: a valid token is needed\n");
        size_t hb = strlen(url);
        MHD_get_connection_values(c, MHD_HEADER_KIND, count_bytes, &hb);
        MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, count_bytes, &hb);
        if (hb > HEADERS_MAX)
            return text(c, 431, "request headers too large\n");
        int is_post = strcmp(method, "POST") == 0;
        int is_get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
        int is_ctl = strcmp(url, "/api/control") == 0;
        int known = is_ctl || strcmp(url, "/") == 0 || strcmp(url, "/api/info") == 0 ||
                    strcmp(url, "/api/events") == 0 || strcmp(url, "/api/stream") == 0 ||
                    strcmp(url, "/api/range") == 0 || strcmp(url, "/api/hist") == 0 ||
                    (strncmp(url, "/static/", 8) == 0 && file_named(url + 8));
        if (!known)
            return text(c, 404, "not found\n");
        if (is_ctl ? !is_post : !is_get)
            return text(c, 405, "method not allowed\n");
        if (is_post) {
            const char *cl =
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
            uint32_t n;
            if (cl && (off_u32(cl, &n) != 0 || n > BODY_MAX))
                return json_error(c, 413, "body too large (4 KiB at most)");
        }
        q = calloc(1, sizeof *q);
        if (!q)
            return MHD_NO;
        q->post = is_post;
        *con_cls = q;
        if (is_post) {
            q->pp = MHD_create_post_processor(c, 1024, post_field, q);
            if (!q->pp)
                return json_error(c, 400,
                                  "a form body is needed "
                                  "(application/x-www-form-urlencoded)");
        }
        if (is_post)
            return MHD_YES; /* the body comes in the next calls */
    }
    if (q->post) {
        if (*upload_data_size) {
            size_t n = *upload_data_size;
            *upload_data_size = 0;
            if (q->too_big)
                return MHD_YES;
            static const size_t max = BODY_MAX;
            q->too_big = n > max;
            if (!q->too_big && MHD_post_process(q->pp, upload_data, n) != MHD_YES)
                q->too_big = 1;
            return MHD_YES;
        }
        return control(h, c, q);
    }
    if (strcmp(url, "/") == 0)
        return reply(c, 200, "text/html; charset=utf-8", h->index, h->index_len);
    if (strcmp(url, "/api/info") == 0)
        return info(h, c);
    if (strcmp(url, "/api/events") == 0)
        return events(h, c);
    if (strcmp(url, "/api/stream") == 0)
        return stream(h, c);
    if (strcmp(url, "/api/range") == 0)
        return range(h, c);
    if (strcmp(url, "/api/hist") == 0)
        return hist(h, c);
    const struct scope_file *f = file_named(url + 8);
    return reply(c, 200, content_type(f->name), f->data, f->size);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    struct req *q = *con_cls;
    if (q) {
        if (q->pp)
            MHD_destroy_post_processor(q->pp);
        free(q);
        *con_cls = NULL;
    }
}

/* The gate's hand-over: a connection that showed the token. On failure
 * (the server's 64 slots are full) libmicrohttpd closes it. */
static void pass(void *arg, int fd, const struct sockaddr *addr, socklen_t alen)
{
    struct scope_http *h = arg;
    MHD_add_connection(h->d, fd, addr, alen);
}

/* index.html with every @TOKEN@ replaced. */
static int make_index(struct scope_http *h)
{
    const struct scope_file *f = file_named("index.html");
    struct sbuf b = {0};
    if (!f)
        sb_printf(&b, "index.html was not built in\n");
    const char *p = f ? (const char *)f->data : "", *end = p + (f ? f->size : 0);
    while (p < end) {
        const char *at = memmem(p, (size_t)(end - p), "@TOKEN@", 7);
        if (!at) {
            sb_add(&b, p, (size_t)(end - p));
            break;
        }
        sb_add(&b, p, (size_t)(at - p));
        sb_add(&b, h->token, strlen(h->token));
        p = at + 7;
    }
    if (b.oom)
        return -1;
    h->index = b.p;
    h->index_len = b.n;
    return 0;
}

int scope_http_start(struct scope_db *db, scope_control_fn ctl, void *ctl_arg,
                     const char *host, unsigned port, const char *token,
                     struct scope_http **out, unsigned *port_out, const char **why)
{
    struct scope_http *h = calloc(1, sizeof *h);
    if (!h || (snprintf(h->token, sizeof h->token, "%s", token), make_index(h) < 0)) {
        free(h);
        *why = "out of memory";
        return -1;
    }
    h->db = db;
    h->ctl = ctl;
    h->ctl_arg = ctl_arg;
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    char ps[16];
    snprintf(ps, sizeof ps, "%u", port);
    h->lfd = -1;
    if (getaddrinfo(host, ps, &hints, &ai) != 0 || !ai) {
        *why = "the bind address is not a numeric IPv4 or IPv6 address";
        goto fail;
    }
    h->lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (h->lfd < 0 ||
        setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(h->lfd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(h->lfd, 4096) < 0) {
        *why = "cannot listen there (address in use, or not one of this host's)";
        freeaddrinfo(ai);
        goto fail;
    }
    freeaddrinfo(ai);
    h->d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
            MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC,
        0, NULL, NULL, handle, h, MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTIONS_MAX,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_THREAD_STACK_SIZE,
        (size_t)(512 * 1024), MHD_OPTION_NOTIFY_COMPLETED, completed, h, MHD_OPTION_END);
    if (!h->d) {
        *why = "cannot start the web server";
        goto fail;
    }
    if (scope_gate_start(h->lfd, h->token, pass, h, &h->gate) < 0) {
        *why = "cannot start the web server's gate";
        MHD_stop_daemon(h->d);
        goto fail;
    }
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    *port_out = port;
    if (getsockname(h->lfd, (struct sockaddr *)&sa, &sl) == 0)
        *port_out =
            ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                           : ((struct sockaddr_in *)&sa)->sin_port);
    *out = h;
    return 0;
fail:
    if (h->lfd >= 0)
        close(h->lfd);
    free(h->index);
    free(h);
    return -1;
}

void scope_http_stop(struct scope_http *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->db->mu);
    h->db->stopping = 1;
    pthread_cond_broadcast(&h->db->cond);
    pthread_mutex_unlock(&h->db->mu);
    scope_gate_stop(h->gate); /* nothing new reaches the server */
    MHD_stop_daemon(h->d);
    close(h->lfd);
    free(h->index);
    free(h);
}
