/* SPDX-License-Identifier: MIT */
/* scope_series.c - the scope's store: what the reader decoded, kept small
 * enough for any event rate (scope.h says the bounds).
 *
 * The idea: per numeric field of each event class, one series of (t, v)
 * points in a ring of SCOPE_POINTS; with split per thread, one more per
 * thread. Live, time is cut in slices of window / (SCOPE_POINTS / 2)
 * seconds: a slice that got one or two events keeps them exactly, one
 * that got more keeps its min and its max, so a ring spans at least the
 * window whatever the rate and a spike is never thinned away. A replay
 * keeps every point until a ring is full, then merges each four adjacent
 * points into their min and max, so the whole trace fits. Series beyond
 * SCOPE_SERIES_MAX are not made (counted in series_refused); per-thread
 * series stop at SCOPE_SERIES_MERGED so that merged ones keep room.
 * Streams read with cursors (a point's sequence number in its series):
 * whoever falls more than a ring behind skips what was overwritten. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fields.h"
#include "scope.h"

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
    return db->tail ? 0 : -ENOMEM;
}

void scope_db_free(struct scope_db *db)
{
    for (unsigned i = 0; i < db->nevents; i++) {
        free(db->events[i]->provider);
        free(db->events[i]->event);
        free(db->events[i]->format);
        free(db->events[i]);
    }
    for (unsigned i = 0; i < db->nseries; i++) {
        free(db->series[i]->ring);
        free(db->series[i]);
    }
    for (unsigned i = 0; i < db->nprocs; i++) {
        free(db->procs[i]->cbuf);
        free(db->procs[i]->ev);
        free(db->procs[i]);
    }
    free(db->tail);
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
    const char *c = memmem(meta, len, "clock {", 7);
    if (!c)
        return;
    /* the metadata is NUL-terminated by the caller */
    const char *f = strstr(c, "\tfreq = "), *os = strstr(c, "\toffset_s = "),
               *o = strstr(c, "\toffset = ");
    if (!f || !os || !o)
        return;
    uint64_t freq = strtoull(f + 8, NULL, 10);
    if (!freq)
        return;
    p->freq = freq;
    p->clk_off_s = strtoll(os + 12, NULL, 10);
    p->clk_off = strtoull(o + 10, NULL, 10);
    p->have_clock = 1;
}

/* Seconds since the epoch of clock value ts of process p. */
static double seconds(const struct scope_proc *p, uint64_t ts)
{
    if (!p->have_clock)
        return (double)ts / 1e9;
    uint64_t v = ts + p->clk_off;
    return (double)p->clk_off_s + (double)(v / p->freq) + (double)(v % p->freq) / p->freq;
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

static void store(struct scope_db *db, struct scope_series *s, struct scope_point p)
{
    if (db->replay && s->n == SCOPE_POINTS) {
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
    }
    s->ring[s->head % SCOPE_POINTS] = p;
    s->head++;
    if (s->n < SCOPE_POINTS)
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
    /* the raw event, for the tail */
    struct scope_tail_ent *te = &db->tail[db->tail_head % SCOPE_TAIL];
    te->proc = (uint16_t)proc;
    te->cls = c->id;
    te->tid = tid;
    te->ns = ns;
    memcpy(te->tname, tname ? tname : "", tname ? 16 : 1);
    te->len = (uint16_t)(len < SCOPE_TAIL_PAYLOAD ? len : SCOPE_TAIL_PAYLOAD);
    memcpy(te->payload, payload, te->len);
    db->tail_head++;
    (void)pid;
    /* the series */
    int any = 0;
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
    for (unsigned f = 0; f < (unsigned)n && f < e->nfields; f++) {
        double v;
        if (!e->fields[f].numeric || !fdr__field_number(&fl[f], &v))
            continue;
        if (e->fields[f].series == -1) {
            char k[200];
            snprintf(k, sizeof k, "%s:%s.%s", e->provider, e->event, e->fields[f].name);
            e->fields[f].series = series_new(db, k);
        }
        if (e->fields[f].series >= 0)
            add(db, db->series[e->fields[f].series], t, v);
        int ts_ = thread_series(db, ei, f, tid);
        if (ts_ >= 0)
            add(db, db->series[ts_], t, v);
    }
}

void scope_db_thread(struct scope_db *db, uint32_t pid, uint32_t tid)
{
    for (unsigned i = db->nthreads; i-- > 0;)
        if (db->threads[i].tid == tid && db->threads[i].pid == pid)
            return;
    if (db->nthreads < SCOPE_THREADS_MAX) {
        db->threads[db->nthreads].pid = pid;
        db->threads[db->nthreads].tid = tid;
        db->nthreads++;
    }
}

void scope_db_tick(struct scope_db *db)
{
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

size_t scope_db_points(struct scope_db *db, int si, uint64_t *next,
                       struct scope_point *out, size_t cap)
{
    const struct scope_series *s = db->series[si];
    uint64_t from = *next, oldest = s->head - s->n;
    if (from < oldest)
        from = oldest;
    if (from > s->head) /* a replay compaction renumbered: start over */
        from = oldest;
    if (s->head - from > cap)
        from = s->head - cap;
    size_t k = 0;
    for (uint64_t q = from; q < s->head; q++)
        out[k++] = s->ring[q % SCOPE_POINTS];
    *next = s->head;
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
    for (unsigned i = 0; i < db->nthreads; i++)
        sb_printf(b, "%s{\"pid\": %u, \"tid\": %u}", i ? ", " : "", db->threads[i].pid,
                  db->threads[i].tid);
    sb_printf(b, "], \"discarded\": %llu, \"series\": %u, \"series_refused\": %llu}",
              (unsigned long long)db->discarded, db->nseries,
              (unsigned long long)db->series_refused);
}
