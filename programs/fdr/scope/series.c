/* SPDX-License-Identifier: MIT */
/* series.c - the scope's store: what the reader decoded, kept small
 * enough for any event rate (series.h says the bounds).
 *
 * The idea: per numeric field of each event class, one series of (t, v)
 * points; with split per thread, one more per thread. Live, a series is
 * a ring of SCOPE_POINTS and time is cut in slices of window /
 * (SCOPE_POINTS / 2) seconds: a slice that got one or two events keeps
 * them exactly, one that got more keeps its min and its max, so a ring
 * spans at least the window whatever the rate and a spike is never
 * thinned away. A replay keeps every point (the arrays grow) while all
 * series together hold less than SCOPE_REPLAY_POINTS; a series that
 * cannot grow then merges each four adjacent points into their min and
 * max, and says so (thinned). What a chart of a replay shows is reduced
 * when asked, for its span and width (scope_db_range, M4: per pixel
 * column the first, min, max and last point), so that every extreme and
 * every edge is there at any zoom and zooming in shows the real points.
 * Series beyond
 * SCOPE_SERIES_MAX are not made (counted in series_refused); per-thread
 * series stop at SCOPE_SERIES_MERGED so that merged ones keep room.
 * Streams read with cursors (a point's sequence number in its series):
 * whoever falls more than a ring behind skips what was overwritten.
 * A span (fdr/span.h) has one more numeric field, span_ns: its duration,
 * a point at each end that pairs with its begin (spans.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/fields.h"
#include "series.h"
#include "spans.h"

/* ---- text buffer ------------------------------------------------------------ */

static int sb_room(struct sbuf *b, size_t more)
{
    if (b->oom)
        return -1;
    if (b->n + more + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->n + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void sb_add(struct sbuf *b, const char *s, size_t n)
{
    if (sb_room(b, n) < 0)
        return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    if ((size_t)k < sizeof tmp) {
        sb_add(b, tmp, (size_t)k);
        return;
    }
    if (sb_room(b, (size_t)k) < 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

/* Bytes of the valid UTF-8 sequence at s (at most n), 0 when not one. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (!k || k > n)
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((k == 3 && s[0] == 0xe0 && s[1] < 0xa0) ||
        (k == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
        (k == 4 && s[0] == 0xf0 && s[1] < 0x90) ||
        (k == 4 && s[0] == 0xf4 && s[1] >= 0x90))
        return 0; /* overlong, surrogate, beyond U+10FFFF */
    return k;
}

void sb_json(struct sbuf *b, const char *s, size_t n)
{
    sb_add(b, "\"", 1);
    for (size_t i = 0; i < n && s[i];) {
        const unsigned char *u = (const unsigned char *)s + i;
        size_t left = strnlen(s + i, n - i), k;
        if (*u == '"' || *u == '\\') {
            char e[2] = {'\\', (char)*u};
            sb_add(b, e, 2);
            i++;
        } else if (*u < 0x20 || *u == 0x7f) {
            sb_printf(b, "\\u%04x", *u);
            i++;
        } else if (*u < 0x80) {
            sb_add(b, (const char *)u, 1);
            i++;
        } else if ((k = utf8_seq(u, left)) != 0) {
            sb_add(b, (const char *)u, k);
            i += k;
        } else { /* not UTF-8: U+FFFD */
            sb_add(b, "\\ufffd", 6);
            i++;
        }
    }
    sb_add(b, "\"", 1);
}

void sb_num(struct sbuf *b, double v)
{
    if (isfinite(v))
        sb_printf(b, "%.17g", v);
    else
        sb_add(b, "null", 4);
}

void sb_free(struct sbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- the store ---------------------------------------------------------------- */

int scope_db_init(struct scope_db *db, int replay, double window)
{
    memset(db, 0, sizeof *db);
    pthread_mutex_init(&db->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&db->cond, &ca);
    pthread_condattr_destroy(&ca);
    db->replay = replay;
    db->window = window;
    db->slice_dt = replay ? 0 : window / (SCOPE_POINTS / 2);
    db->tail = calloc(SCOPE_TAIL, sizeof *db->tail);
    db->rand = 0x9e3779b97f4a7c15ull;
    return db->tail ? 0 : -ENOMEM;
}

/* Frees s's points (mapped: grown past MAP_FROM bytes, see grow). */
static void ring_free(struct scope_series *s)
{
    if (s->mapped)
        munmap(s->ring, (size_t)s->cap * sizeof *s->ring);
    else
        free(s->ring);
    s->ring = NULL;
}

void scope_db_free(struct scope_db *db)
{
    for (unsigned i = 0; i < db->nevents; i++) {
        free(db->events[i]->provider);
        free(db->events[i]->event);
        free(db->events[i]->format);
        free(db->events[i]->hist);
        free(db->events[i]);
    }
    for (unsigned i = 0; i < db->nseries; i++) {
        ring_free(db->series[i]);
        free(db->series[i]->blk);
        free(db->series[i]);
    }
    for (unsigned i = 0; i < db->nprocs; i++) {
        free(db->procs[i]->cbuf);
        free(db->procs[i]->ev);
        free(db->procs[i]);
    }
    free(db->tail);
    spans_free(db->spans);
    pthread_cond_destroy(&db->cond);
    pthread_mutex_destroy(&db->mu);
}

int scope_db_proc(struct scope_db *db, uint32_t pid)
{
    if (db->nprocs >= SCOPE_PROCS_MAX)
        return -1;
    struct scope_proc *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->pid = pid;
    db->procs[db->nprocs] = p;
    return (int)db->nprocs++;
}

static const char *type_name(uint8_t t)
{
    switch (t) {
    case FDR__T_BOOL:
    case FDR__T_CHAR:
    case FDR__T_I8:
    case FDR__T_I16:
    case FDR__T_I32:
    case FDR__T_I64:
        return "int";
    case FDR__T_U8:
    case FDR__T_U16:
    case FDR__T_U32:
    case FDR__T_U64:
        return "uint";
    case FDR__T_F32:
    case FDR__T_F64:
        return "float";
    case FDR__T_STR:
        return "string";
    default:
        return "other";
    }
}

int scope_db_event_find(struct scope_db *db, const char *id)
{
    const char *colon = strchr(id, ':');
    if (!colon)
        return -1;
    size_t pn = (size_t)(colon - id);
    for (unsigned i = 0; i < db->nevents; i++) {
        const struct scope_event *e = db->events[i];
        if (strlen(e->provider) == pn && memcmp(e->provider, id, pn) == 0 &&
            strcmp(e->event, colon + 1) == 0)
            return (int)i;
    }
    return -1;
}

/* The event provider:event, made when new (-1 when full or out of memory). */
static int event_get(struct scope_db *db, const char *prov, const char *name)
{
    for (unsigned i = 0; i < db->nevents; i++)
        if (strcmp(db->events[i]->provider, prov) == 0 &&
            strcmp(db->events[i]->event, name) == 0)
            return (int)i;
    if (db->nevents >= SCOPE_EVENTS_MAX)
        return -1;
    struct scope_event *e = calloc(1, sizeof *e);
    if (!e)
        return -1;
    e->provider = strdup(prov);
    e->event = strdup(name);
    e->format = strdup("");
    e->recorded = e->printed = -1;
    if (!e->provider || !e->event || !e->format) {
        free(e->provider);
        free(e->event);
        free(e->format);
        free(e);
        return -1;
    }
    db->events[db->nevents] = e;
    return (int)db->nevents++;
}

/* Gives event e the fields of class c (when it has none yet). */
static void event_fields(struct scope_event *e, const struct fdr__classes *t,
                         const struct fdr__class *c)
{
    if (e->nfields || !c->nfields)
        return;
    char *f = strdup(fdr__classes_str(t, c->format));
    if (f) {
        free(e->format);
        e->format = f;
    }
    for (unsigned i = 0; i < c->nfields && i < FDR_MAX_FIELDS; i++) {
        struct scope_field *sf = &e->fields[i];
        snprintf(sf->name, sizeof sf->name, "%s", fdr__classes_str(t, c->names[i]));
        if (!sf->name[0])
            snprintf(sf->name, sizeof sf->name, "f%u", i);
        sf->type = type_name(c->types[i]);
        sf->numeric = strcmp(sf->type, "string") && strcmp(sf->type, "other");
        sf->series = -1;
    }
    e->nfields = c->nfields;
    if (strcmp(e->provider, "fdr") == 0 && strcmp(e->event, "tunable") == 0)
        for (unsigned i = 0; i < e->nfields; i++) {
            struct scope_field *sf = &e->fields[i];
            if (strcmp(sf->name, "name") == 0 && strcmp(sf->type, "string") == 0)
                e->tn_name = i + 1;
            if (strcmp(sf->name, "value") == 0 && sf->numeric)
                e->tn_value = i + 1;
            sf->numeric = 0;
        }
    if (span_kind_of(t, c) && e->nfields < FDR_MAX_FIELDS) {
        struct scope_field *sf = &e->fields[e->nfields];
        snprintf(sf->name, sizeof sf->name, "span_ns");
        sf->type = "uint";
        sf->numeric = 1;
        sf->series = -1;
        e->span_field = ++e->nfields;
    }
}

int scope_db_classes(struct scope_db *db, int proc, char *buf, size_t len)
{
    struct scope_proc *p = db->procs[proc];
    struct fdr__classes t;
    struct fdr__line_clock k;
    const char *why;
    size_t at;
    if (fdr__classes_load(buf, len, &t, &k, &why, &at) < 0) {
        free(buf);
        return -1;
    }
    int *ev = calloc((size_t)t.n + 1, sizeof *ev);
    if (!ev) {
        free(buf);
        return -1;
    }
    for (uint32_t id = 1; id <= t.n; id++) {
        const struct fdr__class *c = fdr__classes_get(&t, (uint16_t)id);
        ev[id] = -1;
        if (!c)
            continue;
        ev[id] = event_get(db, fdr__classes_str(&t, c->provider),
                           fdr__classes_str(&t, c->event));
        if (ev[id] >= 0)
            event_fields(db->events[ev[id]], &t, c);
    }
    ev[0] = -1;
    free(p->cbuf);
    free(p->ev);
    p->cbuf = buf;
    p->classes = t;
    p->line = k;
    p->ev = ev;
    p->nev = t.n + 1;
    return 0;
}

void scope_db_clock(struct scope_db *db, int proc, const char *meta, size_t len)
{
    struct scope_proc *p = db->procs[proc];
    if (fdr__tsdl_clock(meta, len, &p->freq, &p->clk_off_s, &p->clk_off) == 0)
        p->have_clock = 1;
    p->sec_q = p->sec_base = 0; /* seconds(): of the clock as it was */
}

/* Seconds since the epoch of clock value ts of process p. The whole
 * seconds of the last call are kept: the events come in time order, so
 * most calls skip the 64-bit division (a fifth of the reading of a big
 * trace); the result is the same. */
static double seconds(struct scope_proc *p, uint64_t ts)
{
    if (!p->have_clock)
        return (double)ts / 1e9;
    uint64_t v = ts + p->clk_off;
    if (v < p->sec_base || v - p->sec_base >= p->freq) {
        p->sec_q = v / p->freq;
        p->sec_base = p->sec_q * p->freq;
    }
    return (double)p->clk_off_s + (double)p->sec_q + (double)(v - p->sec_base) / p->freq;
}

static int series_new(struct scope_db *db, const char *key)
{
    if (db->nseries >= SCOPE_SERIES_MAX) {
        db->series_refused++;
        return -2;
    }
    struct scope_series *s = calloc(1, sizeof *s);
    if (s)
        s->ring = malloc(SCOPE_POINTS * sizeof *s->ring);
    if (s && s->ring) {
        s->cap = SCOPE_POINTS;
        db->points_alloc += SCOPE_POINTS;
    }
    if (!s || !s->ring) {
        if (s)
            free(s->ring);
        free(s);
        return -2;
    }
    snprintf(s->key, sizeof s->key, "%s", key);
    db->series[db->nseries] = s;
    return (int)db->nseries++;
}

#define MAP_FROM (4u << 20)

/* Replay: doubles s's array, within the budget. 0, or -1 when it cannot.
 * A big array is a mapping of its own, grown by mremap: its pages move,
 * no point is copied (realloc copied a 10 M point series half a dozen
 * times), and it asks for huge pages, so that its first touch (most of
 * the reading of a big trace) faults once per 2 MiB, not per 4 KiB. */
static int grow(struct scope_db *db, struct scope_series *s)
{
    if (db->points_alloc + s->cap > SCOPE_REPLAY_POINTS)
        return -1;
    size_t old = (size_t)s->cap * sizeof *s->ring, bytes = 2 * old;
    void *r;
    if (s->mapped) {
        r = mremap(s->ring, old, bytes, MREMAP_MAYMOVE);
    } else if (bytes >= MAP_FROM) {
        r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (r != MAP_FAILED) {
            memcpy(r, s->ring, old);
            free(s->ring);
            s->mapped = 1;
        }
    } else {
        r = realloc(s->ring, bytes);
        if (!r)
            return -1;
    }
    if (r == MAP_FAILED)
        return -1;
    if (s->mapped)
        madvise(r, bytes, MADV_HUGEPAGE);
    s->ring = r;
    db->points_alloc += s->cap;
    s->cap *= 2;
    return 0;
}

static void store(struct scope_db *db, struct scope_series *s, struct scope_point p)
{
    if (db->replay && s->n == s->cap && grow(db, s) < 0) {
        /* merge each 4 adjacent points into their min and max */
        uint32_t k = 0;
        for (uint32_t i = 0; i < s->n; i += 4) {
            uint32_t lo = i, hi = i;
            for (uint32_t j = i + 1; j < i + 4 && j < s->n; j++) {
                if (s->ring[j].v < s->ring[lo].v)
                    lo = j;
                if (s->ring[j].v > s->ring[hi].v)
                    hi = j;
            }
            struct scope_point a = s->ring[lo < hi ? lo : hi],
                               b = s->ring[lo < hi ? hi : lo];
            s->ring[k++] = a;
            if (lo != hi)
                s->ring[k++] = b;
        }
        s->n = k;
        s->head = k;
        s->thinned = 1;
    }
    s->ring[s->head & (s->cap - 1)] = p; /* cap: a power of two */
    s->head++;
    if (s->n < s->cap)
        s->n++;
}

static void flush(struct scope_db *db, struct scope_series *s)
{
    if (!s->acc)
        return;
    int ordered = s->acc <= 2 || s->a.t <= s->b.t;
    store(db, s, ordered ? s->a : s->b);
    if (s->acc >= 2)
        store(db, s, ordered ? s->b : s->a);
    s->acc = 0;
}

static void add(struct scope_db *db, struct scope_series *s, double t, double v)
{
    struct scope_point p = {t, v};
    if (db->slice_dt <= 0) {
        store(db, s, p);
        return;
    }
    int64_t sl = (int64_t)floor(t / db->slice_dt);
    if (s->acc && sl != s->slice)
        flush(db, s);
    s->slice = sl;
    if (s->acc == 0)
        s->a = p;
    else if (s->acc == 1)
        s->b = p;
    else {
        if (s->acc == 2) { /* from two exact points to min (a) and max (b) */
            if (s->b.v < s->a.v) {
                struct scope_point x = s->a;
                s->a = s->b;
                s->b = x;
            }
        }
        if (v < s->a.v)
            s->a = p;
        if (v > s->b.v)
            s->b = p;
    }
    s->acc++;
}

/* The per-thread series of field f of event e for tid (-2: none). */
static int thread_series(struct scope_db *db, int e, unsigned f, uint32_t tid)
{
    uint32_t key = ((uint32_t)e << 8 | f) + 1;
    size_t cap = sizeof db->tmap / sizeof *db->tmap;
    size_t i = (key * 2654435761u ^ tid * 40503u) % cap;
    for (size_t n = 0; n < cap; n++, i = (i + 1) % cap) {
        if (db->tmap[i].key == key && db->tmap[i].tid == tid)
            return db->tmap[i].series;
        if (db->tmap[i].key == 0) {
            int s = -2;
            if (db->nseries < SCOPE_SERIES_MERGED) {
                const struct scope_event *ev = db->events[e];
                char k[200];
                snprintf(k, sizeof k, "%s:%s.%s@%u", ev->provider, ev->event,
                         ev->fields[f].name, tid);
                s = series_new(db, k);
            } else {
                db->series_refused++;
            }
            db->tmap[i].key = key;
            db->tmap[i].tid = tid;
            db->tmap[i].series = s;
            return s;
        }
    }
    return -2;
}

/* Puts one raw event at tail position q (a new one at tail_head, or one of
 * the open period's being replaced). */
static void tail_put(struct scope_db *db, uint64_t q, int proc, uint16_t cls,
                     uint32_t tid, uint64_t ns, const char *tname, const char *payload,
                     size_t len)
{
    struct scope_tail_ent *te = &db->tail[q % SCOPE_TAIL];
    te->proc = (uint16_t)proc;
    te->cls = cls;
    te->tid = tid;
    te->ns = ns;
    memcpy(te->tname, tname ? tname : "", tname ? 16 : 1);
    te->len = (uint16_t)(len < SCOPE_TAIL_PAYLOAD ? len : SCOPE_TAIL_PAYLOAD);
    memcpy(te->payload, payload, te->len);
    if (q == db->tail_head)
        db->tail_head++;
}

static int by_ns(const void *a, const void *b)
{
    uint64_t x = ((const struct scope_tail_ent *)a)->ns,
             y = ((const struct scope_tail_ent *)b)->ns;
    return (x > y) - (x < y);
}

/* Closes the tail's open period (live: its events sorted by time) and
 * publishes it to the streams. */
static void tail_close(struct scope_db *db, uint64_t now)
{
    uint64_t n = db->tail_head - db->tail_open;
    if (!db->replay && n > 1) {
        /* the period is contiguous in the ring, maybe across its end */
        struct scope_tail_ent *tmp = malloc(n * sizeof *tmp);
        if (tmp) {
            for (uint64_t i = 0; i < n; i++)
                tmp[i] = db->tail[(db->tail_open + i) % SCOPE_TAIL];
            qsort(tmp, n, sizeof *tmp, by_ns);
            for (uint64_t i = 0; i < n; i++)
                db->tail[(db->tail_open + i) % SCOPE_TAIL] = tmp[i];
            free(tmp);
        }
    }
    db->tail_offered += db->tail_seen;
    db->tail_kept += n;
    db->tail_seen = 0;
    db->tail_open = db->tail_pub = db->tail_head;
    db->tail_open_ns = now;
}

/* A point of field f of event ei, in its series and in tid's. */
static void point(struct scope_db *db, int ei, unsigned f, uint32_t tid, double t,
                  double v)
{
    struct scope_event *e = db->events[ei];
    if (e->fields[f].series == -1) {
        char k[200];
        snprintf(k, sizeof k, "%s:%s.%s", e->provider, e->event, e->fields[f].name);
        e->fields[f].series = series_new(db, k);
    }
    int ms = e->fields[f].series;
    if (ms >= 0)
        add(db, db->series[ms], t, v);
    if (db->replay && e->fields[f].one < 2) {
        struct scope_field *fd = &e->fields[f];
        if (!fd->one || fd->tid1 == tid) {
            fd->one = 1;
            fd->tid1 = tid;
            return; /* the merged series is this thread's */
        }
        /* a second thread: the first one's series from what it had */
        fd->one = 2;
        int s1 = thread_series(db, ei, f, fd->tid1);
        if (s1 >= 0 && ms >= 0) {
            const struct scope_series *m = db->series[ms];
            for (uint32_t i = 0; i + 1 < m->n; i++) /* but this point */
                store(db, db->series[s1], m->ring[i]);
        }
    }
    int ts_ = thread_series(db, ei, f, tid);
    if (ts_ >= 0)
        add(db, db->series[ts_], t, v);
}

/* A point of the series of the tunable an fdr:tunable event names (its
 * field `fdr:tunable.NAME`, made at the first of its events). */
static void tunable_point(struct scope_db *db, int ei, const struct fdr__field *fl, int n,
                          uint32_t tid, double t)
{
    struct scope_event *e = db->events[ei];
    double v;
    if (!e->tn_name || !e->tn_value || (int)e->tn_name > n || (int)e->tn_value > n ||
        !fdr__field_number(&fl[e->tn_value - 1], &v))
        return;
    const struct fdr__field *nf = &fl[e->tn_name - 1];
    char name[64];
    size_t len = nf->n < sizeof name - 1 ? nf->n : sizeof name - 1;
    memcpy(name, nf->s, len);
    name[len] = 0;
    if (!name[0] || strlen(name) != len || strpbrk(name, ".@,"))
        return; /* not a name a key can hold */
    unsigned f = 0;
    while (f < e->nfields && strcmp(e->fields[f].name, name) != 0)
        f++;
    if (f == e->nfields) {
        if (e->nfields >= SCOPE_EVENT_FIELDS) {
            db->series_refused++;
            return;
        }
        struct scope_field *sf = &e->fields[e->nfields++];
        memcpy(sf->name, name, len + 1);
        sf->series = -1;
    }
    /* a tunable called "name" or "value" takes that field's place */
    e->fields[f].type = "float";
    e->fields[f].numeric = 1;
    point(db, ei, f, tid, t, v);
    if (!db->replay)
        return; /* live, the program's state lists its tunables */
    /* A replay lists each tunable set in the trace, with its last value
     * (read only; its first one as the default). */
    unsigned i = 0;
    while (i < db->ntunables && strcmp(db->tunables[i].name, name) != 0)
        i++;
    if (i == db->ntunables) {
        if (i >= SCOPE_TUNABLES_MAX)
            return;
        db->ntunables++;
        memset(&db->tunables[i], 0, sizeof db->tunables[i]);
        memcpy(db->tunables[i].name, name, len + 1);
        db->tunables[i].is_double = 1;
        db->tunables[i].def = v;
    }
    db->tunables[i].value = v;
}

void scope_db_event(struct scope_db *db, int proc, const struct fdr__class *c,
                    uint32_t pid, uint32_t tid, const char *tname, uint64_t ts,
                    uint64_t ns, const char *payload, size_t len)
{
    struct scope_proc *p = db->procs[proc];
    if (!p->ev || c->id >= p->nev || p->ev[c->id] < 0)
        return;
    int ei = p->ev[c->id];
    struct scope_event *e = db->events[ei];
    e->count++;
    /* the raw event, for the tail: live, a reservoir per period (each
     * event of the period has the same chance to be kept, whatever the
     * rate or the thread) */
    uint64_t slot = db->tail_head;
    db->tail_seen++;
    if (!db->replay && db->tail_head - db->tail_open >= SCOPE_TAIL_PERIOD) {
        db->rand ^= db->rand << 13;
        db->rand ^= db->rand >> 7;
        db->rand ^= db->rand << 17;
        uint64_t j = db->rand % db->tail_seen;
        if (j >= SCOPE_TAIL_PERIOD)
            slot = UINT64_MAX; /* not kept */
        else
            slot = db->tail_open + j;
    }
    if (slot != UINT64_MAX)
        tail_put(db, slot, proc, c->id, tid, ns, tname, payload, len);
    /* the series */
    int any = e->tn_name != 0;
    for (unsigned f = 0; f < e->nfields; f++)
        any |= e->fields[f].numeric;
    if (!any)
        return;
    struct fdr__field fl[FDR_MAX_FIELDS];
    int n = fdr__fields_decode(&p->classes, c, payload, len, fl);
    if (n < 0) {
        db->errors++;
        return;
    }
    double t = seconds(p, ts);
    if (e->tn_name) {
        tunable_point(db, ei, fl, n, tid, t);
        return;
    }
    for (unsigned f = 0; f < (unsigned)n && f < e->nfields; f++) {
        double v;
        if (!e->fields[f].numeric || f + 1 == e->span_field ||
            !fdr__field_number(&fl[f], &v))
            continue;
        point(db, ei, f, tid, t, v);
    }
    struct span_step sp;
    struct fdr__rd_event rd = {
        .c = c, .pid = pid, .tid = tid, .ns = ns, .payload = payload, .len = len};
    if (e->span_field && (db->spans || (db->spans = spans_new())) &&
        spans_feed_raw(db->spans, (unsigned)proc, &p->classes, &rd, &sp) == 0 &&
        sp.matched) {
        point(db, ei, e->span_field - 1, tid, t, (double)sp.dur);
        if (e->hist || (e->hist = calloc(SCOPE_HIST, sizeof *e->hist))) {
            e->hist[scope_hist_bucket(sp.dur)]++;
            e->hist_n++;
        }
    }
}

unsigned scope_hist_bucket(uint64_t ns)
{
    if (ns < 8)
        return (unsigned)ns;
    unsigned e = 63 - (unsigned)__builtin_clzll(ns);
    return 8 + 8 * (e - 3) + (unsigned)((ns >> (e - 3)) & 7);
}

void scope_hist_bounds(unsigned i, uint64_t *lo, uint64_t *hi)
{
    if (i < 8) {
        *lo = i;
        *hi = i + 1;
        return;
    }
    unsigned e = (i - 8) / 8 + 3, sub = (i - 8) % 8;
    *lo = (uint64_t)(8 + sub) << (e - 3);
    *hi = i + 1 < SCOPE_HIST ? (uint64_t)(9 + sub) << (e - 3) : UINT64_MAX;
}

void scope_db_hist_json(struct scope_db *db, int ei, struct sbuf *b)
{
    const struct scope_event *e = db->events[ei];
    sb_printf(b, "{\"event\": ");
    char id[512];
    snprintf(id, sizeof id, "%s:%s", e->provider, e->event);
    sb_json(b, id, SIZE_MAX);
    sb_printf(b, ", \"count\": %llu, \"buckets\": [", (unsigned long long)e->hist_n);
    for (unsigned i = 0, k = 0; e->hist && i < SCOPE_HIST; i++) {
        uint64_t lo, hi;
        if (!e->hist[i])
            continue;
        scope_hist_bounds(i, &lo, &hi);
        sb_printf(b, "%s[%llu, %llu, %llu]", k++ ? ", " : "", (unsigned long long)lo,
                  (unsigned long long)hi, (unsigned long long)e->hist[i]);
    }
    sb_printf(b, "]}");
}

void scope_db_thread(struct scope_db *db, uint32_t pid, uint32_t tid, const char *name)
{
    unsigned i = db->nthreads;
    while (i-- > 0)
        if (db->threads[i].tid == tid && db->threads[i].pid == pid)
            break;
    if (i == (unsigned)-1) {
        if (db->nthreads >= SCOPE_THREADS_MAX)
            return;
        i = db->nthreads++;
        db->threads[i].pid = pid;
        db->threads[i].tid = tid;
        memset(db->threads[i].name, 0, sizeof db->threads[i].name);
    }
    if (name) /* a thread may rename itself */
        memcpy(db->threads[i].name, name, sizeof db->threads[i].name);
}

void scope_db_replay_end(struct scope_db *db)
{
    for (unsigned ei = 0; ei < db->nevents; ei++)
        for (unsigned f = 0; f < db->events[ei]->nfields; f++) {
            const struct scope_field *fd = &db->events[ei]->fields[f];
            if (fd->one != 1 || fd->series < 0)
                continue;
            int s = thread_series(db, (int)ei, f, fd->tid1);
            if (s < 0)
                continue;
            struct scope_series *x = db->series[s];
            ring_free(x);
            db->points_alloc -= x->cap;
            x->cap = 0;
            x->alias = fd->series + 1;
        }
    for (unsigned i = 0; i < db->nseries; i++) {
        struct scope_series *x = db->series[i];
        uint32_t nb = (x->n + SCOPE_BLOCK - 1) / SCOPE_BLOCK;
        if (x->alias || x->n <= 4 * SCOPE_BLOCK ||
            !(x->blk = malloc(nb * 2 * sizeof *x->blk)))
            continue; /* without: scope_db_range reads every point */
        for (uint32_t b = 0; b < nb; b++) {
            uint32_t lo = b * SCOPE_BLOCK, hi = lo, end = lo + SCOPE_BLOCK;
            for (uint32_t j = lo + 1; j < end && j < x->n; j++) {
                if (x->ring[j].v < x->ring[lo].v)
                    lo = j;
                if (x->ring[j].v > x->ring[hi].v)
                    hi = j;
            }
            x->blk[2 * b] = lo;
            x->blk[2 * b + 1] = hi;
        }
    }
}

void scope_db_tick(struct scope_db *db)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (db->replay || now - db->tail_open_ns >= SCOPE_TAIL_NS)
        tail_close(db, now);
    for (unsigned i = 0; i < db->nseries; i++)
        flush(db, db->series[i]);
    db->ticks++;
    pthread_cond_broadcast(&db->cond);
}

void scope_db_second(struct scope_db *db, double secs)
{
    for (unsigned i = 0; i < db->nevents; i++) {
        struct scope_event *e = db->events[i];
        e->rate = secs > 0 ? (double)(e->count - e->count_mark) / secs : 0;
        e->count_mark = e->count;
    }
}

int scope_db_find(struct scope_db *db, const char *key)
{
    for (unsigned i = 0; i < db->nseries; i++)
        if (strcmp(db->series[i]->key, key) == 0)
            return (int)i;
    return -1;
}

/* The series whose points series si shows (itself, or its alias's). */
static const struct scope_series *data_of(const struct scope_db *db, int si)
{
    const struct scope_series *s = db->series[si];
    return s->alias ? db->series[s->alias - 1] : s;
}

size_t scope_db_points(struct scope_db *db, int si, uint64_t *next,
                       struct scope_point *out, size_t cap)
{
    const struct scope_series *s = data_of(db, si);
    uint64_t from = *next, oldest = s->head - s->n;
    if (from < oldest)
        from = oldest;
    if (from > s->head) /* a replay compaction renumbered: start over */
        from = oldest;
    if (s->head - from > cap)
        from = s->head - cap;
    size_t k = 0;
    for (uint64_t q = from; q < s->head; q++)
        out[k++] = s->ring[q & (s->cap - 1)];
    *next = s->head;
    return k;
}

/* The pixel column of time t in [t0, t0 + span) cut in width columns
 * (scope_m4's, so that both cut alike). */
static long column(double t, double t0, double span, unsigned width)
{
    double x = (t - t0) / span * width;
    return x < 0 ? 0 : x >= width ? (long)width - 1 : (long)x;
}

size_t scope_m4(const struct scope_point *p, size_t n, double t0, double t1,
                unsigned width, struct scope_point *out)
{
    double span = t1 > t0 ? t1 - t0 : 1;
    size_t k = 0, first = 0, lo = 0, hi = 0;
    long col = -1;
    for (size_t i = 0; i <= n; i++) {
        long c = -1;
        if (i < n)
            c = column(p[i].t, t0, span, width);
        if (i < n && c == col) {
            /* the first of equal extremes: an edge keeps its first point */
            if (p[i].v < p[lo].v)
                lo = i;
            if (p[i].v > p[hi].v)
                hi = i;
            continue;
        }
        if (col >= 0) { /* the column [first, i) ends */
            size_t idx[4] = {first, lo < hi ? lo : hi, lo < hi ? hi : lo, i - 1};
            struct scope_point keep[4];
            unsigned m = 0;
            for (unsigned j = 0; j < 4; j++)
                if (!m || idx[j] != idx[j - 1])
                    keep[m++] = p[idx[j]];
            for (unsigned j = 0; j < m; j++)
                out[k++] = keep[j];
        }
        col = c;
        first = lo = hi = i;
    }
    return k;
}

/* The first index of the replay series s whose time is >= t. */
static size_t lower(const struct scope_series *s, double t)
{
    size_t a = 0, b = s->n;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (s->ring[m].t < t)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* The first of the minima and of the maxima of s->ring[i, end), the
 * blocks' extremes standing for the whole blocks inside. */
static void extremes(const struct scope_series *s, size_t i, size_t end, size_t *lo,
                     size_t *hi)
{
    const struct scope_point *p = s->ring;
    *lo = *hi = i;
    while (i < end) {
        size_t lo1 = i, hi1 = i, next = i + 1;
        if (i % SCOPE_BLOCK == 0 && i + SCOPE_BLOCK <= end) {
            lo1 = s->blk[2 * (i / SCOPE_BLOCK)];
            hi1 = s->blk[2 * (i / SCOPE_BLOCK) + 1];
            next = i + SCOPE_BLOCK;
        }
        if (p[lo1].v < p[*lo].v)
            *lo = lo1;
        if (p[hi1].v > p[*hi].v)
            *hi = hi1;
        i = next;
    }
}

/* scope_m4 of s->ring[a, b) over [t0, t1], point for point the same, from
 * the block index: each column's end found by bisection, its extremes
 * from the blocks it covers. */
static size_t m4_blocks(const struct scope_series *s, size_t a, size_t b, double t0,
                        double t1, unsigned width, struct scope_point *out)
{
    const struct scope_point *p = s->ring;
    double span = t1 > t0 ? t1 - t0 : 1;
    size_t k = 0;
    for (size_t i = a; i < b;) {
        long c = column(p[i].t, t0, span, width);
        size_t x = i + 1, y = b; /* the first point of a later column */
        while (x < y) {
            size_t m = x + (y - x) / 2;
            if (column(p[m].t, t0, span, width) <= c)
                x = m + 1;
            else
                y = m;
        }
        size_t lo, hi;
        extremes(s, i, x, &lo, &hi);
        size_t idx[4] = {i, lo < hi ? lo : hi, lo < hi ? hi : lo, x - 1};
        for (unsigned j = 0; j < 4; j++)
            if (!j || idx[j] != idx[j - 1])
                out[k++] = p[idx[j]];
        i = x;
    }
    return k;
}

size_t scope_db_range(struct scope_db *db, int si, double t0, double t1, unsigned width,
                      struct scope_point *out, int *raw, int *thinned)
{
    const struct scope_series *s = data_of(db, si);
    *thinned = s->thinned;
    size_t a = lower(s, t0), b = lower(s, nextafter(t1, INFINITY));
    if (a > 0) /* the one before and the one after */
        a--;
    if (b < s->n)
        b++;
    *raw = b - a <= (size_t)width * 4;
    if (*raw) {
        memcpy(out, s->ring + a, (b - a) * sizeof *out);
        return b - a;
    }
    /* the columns cut what there is of [t0, t1] */
    if (t0 < s->ring[0].t)
        t0 = s->ring[0].t;
    if (t1 > s->ring[s->n - 1].t)
        t1 = s->ring[s->n - 1].t;
    size_t k = 0;
    if (s->ring[a].t < t0) /* outside: as they are */
        out[k++] = s->ring[a++];
    int after = s->ring[b - 1].t > t1;
    size_t end = b - (size_t)after;
    k += s->blk ? m4_blocks(s, a, end, t0, t1, width, out + k)
                : scope_m4(s->ring + a, end - a, t0, t1, width, out + k);
    if (after)
        out[k++] = s->ring[b - 1];
    return k;
}

/* ---- the program's state ---------------------------------------------------------- */

void scope_db_state(struct scope_db *db, const char *text)
{
    for (unsigned i = 0; i < db->nevents; i++)
        db->events[i]->recorded = db->events[i]->printed = -1;
    db->ntunables = 0;
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char l[512];
        if (n < sizeof l) {
            memcpy(l, line, n);
            l[n] = 0;
            int r, pr;
            char prov[128], ev[128], name[128], kind;
            int hr;
            char val[64], mn[64], mx[64], def[64];
            if (sscanf(l, "E %d %d %127s %127s", &r, &pr, prov, ev) == 4) {
                int i = event_get(db, prov, ev);
                if (i >= 0) {
                    db->events[i]->recorded = r != 0;
                    db->events[i]->printed = pr != 0;
                }
            } else if (sscanf(l, "T %127s %c %d %63s %63s %63s %63s", name, &kind, &hr,
                              val, mn, mx, def) == 7 &&
                       (kind == 'i' || kind == 'd') &&
                       db->ntunables < SCOPE_TUNABLES_MAX) {
                struct scope_tunable *t = &db->tunables[db->ntunables++];
                snprintf(t->name, sizeof t->name, "%.63s", name);
                t->is_double = kind == 'd';
                t->has_range = hr != 0;
                t->value = strtod(val, NULL);
                t->min = strtod(mn, NULL);
                t->max = strtod(mx, NULL);
                t->def = strtod(def, NULL);
                t->ivalue = strtoll(val, NULL, 10);
                t->imin = strtoll(mn, NULL, 10);
                t->imax = strtoll(mx, NULL, 10);
                t->idef = strtoll(def, NULL, 10);
            }
        }
        line += n;
        if (*line == '\n')
            line++;
    }
}

static void tri(struct sbuf *b, int v)
{
    sb_printf(b, "%s", v < 0 ? "null" : v ? "true" : "false");
}

void scope_db_events_json(struct scope_db *db, struct sbuf *b)
{
    sb_printf(b, "{\"events\": [");
    for (unsigned i = 0; i < db->nevents; i++) {
        const struct scope_event *e = db->events[i];
        char id[300];
        snprintf(id, sizeof id, "%s:%s", e->provider, e->event);
        sb_printf(b, "%s{\"id\": ", i ? ", " : "");
        sb_json(b, id, sizeof id);
        sb_printf(b, ", \"provider\": ");
        sb_json(b, e->provider, SIZE_MAX);
        sb_printf(b, ", \"event\": ");
        sb_json(b, e->event, SIZE_MAX);
        sb_printf(b, ", \"format\": ");
        sb_json(b, e->format, SIZE_MAX);
        sb_printf(b, ", \"count\": %llu, \"rate\": ", (unsigned long long)e->count);
        sb_num(b, e->rate);
        sb_printf(b, ", \"recorded\": ");
        tri(b, e->recorded);
        sb_printf(b, ", \"printed\": ");
        tri(b, e->printed);
        sb_printf(b, ", \"fields\": [");
        for (unsigned f = 0; f < e->nfields; f++) {
            sb_printf(b, "%s{\"name\": ", f ? ", " : "");
            sb_json(b, e->fields[f].name, sizeof e->fields[f].name);
            sb_printf(b, ", \"type\": \"%s\", \"numeric\": %s}", e->fields[f].type,
                      e->fields[f].numeric ? "true" : "false");
        }
        sb_printf(b, "]}");
    }
    sb_printf(b, "], \"tunables\": [");
    for (unsigned i = 0; i < db->ntunables; i++) {
        const struct scope_tunable *t = &db->tunables[i];
        sb_printf(b, "%s{\"name\": ", i ? ", " : "");
        sb_json(b, t->name, sizeof t->name);
        sb_printf(b, ", \"double\": %s, \"range\": %s, \"min\": ",
                  t->is_double ? "true" : "false", t->has_range ? "true" : "false");
        if (t->is_double) {
            sb_num(b, t->min);
            sb_printf(b, ", \"max\": ");
            sb_num(b, t->max);
            sb_printf(b, ", \"value\": ");
            sb_num(b, t->value);
            sb_printf(b, ", \"default\": ");
            sb_num(b, t->def);
        } else {
            sb_printf(b, "%lld, \"max\": %lld, \"value\": %lld, \"default\": %lld",
                      t->imin, t->imax, t->ivalue, t->idef);
        }
        sb_printf(b, "}");
    }
    sb_printf(b, "], \"threads\": [");
    for (unsigned i = 0; i < db->nthreads; i++) {
        sb_printf(b, "%s{\"pid\": %u, \"tid\": %u, \"name\": ", i ? ", " : "",
                  db->threads[i].pid, db->threads[i].tid);
        sb_json(b, db->threads[i].name, sizeof db->threads[i].name);
        sb_printf(b, "}");
    }
    sb_printf(b, "], \"discarded\": %llu, \"series\": %u, \"series_refused\": %llu}",
              (unsigned long long)db->discarded, db->nseries,
              (unsigned long long)db->series_refused);
}
