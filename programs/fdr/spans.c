/* SPDX-License-Identifier: MIT */
/* spans.c - pairing span begins and ends (spans.h).
 *
 * Per thread, a stack of the open spans with the depth each begin
 * recorded; per process, a hash of the open async spans by (name, id).
 * An end pairs with the innermost open span of its depth and name: the
 * depth the writer recorded, not the reader's stack size, so that a begin
 * lost before (an overwritten packet) does not shift every pair after it.
 * Durations are kept per name (8 bytes a span) for exact quantiles. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spans.h"

struct frame {
    unsigned name;
    uint32_t depth;
    uint64_t begin_ns, child_ns;
};

struct thr {
    uint32_t pid, tid;
    int used;
    struct frame *st;
    size_t n, cap;
};

struct async {
    uint32_t pid, tid;
    unsigned name;
    uint64_t id, begin_ns, track, seq;
    int used;
};

/* An async track no open span is on: the next begin of its name reuses it. */
struct free_track {
    uint32_t pid;
    unsigned name;
    uint64_t track;
};

struct spans {
    /* per process index: per class id, 0 unknown, else kind << 24 | name + 1 */
    uint32_t **cls;
    size_t *ncls, nprocs;
    struct span_name *names;
    size_t nnames, capnames;
    struct thr *thr;
    size_t nthr, capthr;
    struct async *as; /* open addressing; deleted slots are re-hashed out */
    size_t nas, capas;
    uint64_t next_track, next_seq;
    struct free_track *free;
    size_t nfree, capfree;
    struct span_closed *closed;
    size_t capclosed;
    uint64_t unmatched, unended, reused;
};

int span_kind_of(const struct fdr__classes *t, const struct fdr__class *c)
{
    static const struct {
        const char *name;
        uint8_t type;
        int kind;
    } k[] = {{"span_begin", FDR__T_U16, SPAN_BEGIN},
             {"span_end", FDR__T_U16, SPAN_END},
             {"span_async_begin", FDR__T_U64, SPAN_ABEGIN},
             {"span_async_end", FDR__T_U64, SPAN_AEND}};
    if (!c || c->nfields < 1)
        return SPAN_NONE;
    const char *f = fdr__classes_str(t, c->names[0]);
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
        if (c->types[0] == k[i].type && strcmp(f, k[i].name) == 0)
            return k[i].kind;
    return SPAN_NONE;
}

struct spans *spans_new(void)
{
    return calloc(1, sizeof(struct spans));
}

void spans_free(struct spans *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nprocs; i++)
        free(s->cls[i]);
    free(s->cls);
    free(s->ncls);
    for (size_t i = 0; i < s->nnames; i++) {
        free(s->names[i].name);
        free(s->names[i].durs);
    }
    free(s->names);
    for (size_t i = 0; i < s->capthr; i++)
        free(s->thr[i].st);
    free(s->thr);
    free(s->as);
    free(s->free);
    free(s->closed);
    free(s);
}

/* Room for one more of the n items of `size` bytes at *p (capacity *cap,
 * doubled from `first`): 0, or -1 when out of memory. */
static int room(void *p, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : first;
    void *q = realloc(*(void **)p, c * size);
    if (!q)
        return -1;
    *(void **)p = q;
    *cap = c;
    return 0;
}

/* The index of name, added when new; -1 when out of memory. */
static long name_index(struct spans *s, const char *prov, const char *ev)
{
    size_t lp = strlen(prov);
    for (size_t i = 0; i < s->nnames; i++) {
        const char *n = s->names[i].name;
        if (strncmp(n, prov, lp) == 0 && n[lp] == ':' && strcmp(n + lp + 1, ev) == 0)
            return (long)i;
    }
    if (room(&s->names, &s->capnames, s->nnames, sizeof *s->names, 16) < 0)
        return -1;
    struct span_name *n = &s->names[s->nnames];
    memset(n, 0, sizeof *n);
    if (asprintf(&n->name, "%s:%s", prov, ev) < 0)
        return -1;
    n->min = UINT64_MAX;
    return (long)s->nnames++;
}

/* Kind and name index of class c of process p (cached per process; the
 * scope's classes grow while it runs). */
static int classify(struct spans *s, size_t p, const struct fdr__classes *t,
                    const struct fdr__class *c, unsigned *name)
{
    if (p >= s->nprocs) {
        size_t n = p + 1;
        uint32_t **cl = realloc(s->cls, n * sizeof *cl);
        if (!cl)
            return -1;
        s->cls = cl;
        size_t *k = realloc(s->ncls, n * sizeof *k);
        if (!k)
            return -1;
        s->ncls = k;
        for (size_t i = s->nprocs; i < n; i++) {
            s->cls[i] = NULL;
            s->ncls[i] = 0;
        }
        s->nprocs = n;
    }
    if (c->id >= s->ncls[p]) {
        size_t n = (size_t)t->n + 1u > (size_t)c->id + 1u ? (size_t)t->n + 1u
                                                          : (size_t)c->id + 1u;
        uint32_t *v = realloc(s->cls[p], n * sizeof *v);
        if (!v)
            return -1;
        memset(v + s->ncls[p], 0, (n - s->ncls[p]) * sizeof *v);
        s->cls[p] = v;
        s->ncls[p] = n;
    }
    uint32_t *v = &s->cls[p][c->id];
    if (!*v) {
        int k = span_kind_of(t, c);
        long i = k ? name_index(s, fdr__classes_str(t, c->provider),
                                fdr__classes_str(t, c->event))
                   : 0;
        if (i < 0)
            return -1;
        *v = (uint32_t)k << 24 | (uint32_t)(i + 1);
    }
    *name = (*v & 0xffffff) - 1;
    return (int)(*v >> 24);
}

static struct thr *thread_get(struct spans *s, uint32_t pid, uint32_t tid)
{
    if ((s->nthr + 1) * 2 > s->capthr) {
        size_t cap = s->capthr ? 2 * s->capthr : 64;
        struct thr *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < s->capthr; i++)
            if (s->thr[i].used) {
                size_t h = (s->thr[i].pid * 2654435761u ^ s->thr[i].tid) & (cap - 1);
                while (t[h].used)
                    h = (h + 1) & (cap - 1);
                t[h] = s->thr[i];
            }
        free(s->thr);
        s->thr = t;
        s->capthr = cap;
    }
    size_t h = (pid * 2654435761u ^ tid) & (s->capthr - 1);
    while (s->thr[h].used && (s->thr[h].pid != pid || s->thr[h].tid != tid))
        h = (h + 1) & (s->capthr - 1);
    if (!s->thr[h].used) {
        s->thr[h] = (struct thr){pid, tid, 1, NULL, 0, 0};
        s->nthr++;
    }
    return &s->thr[h];
}

static size_t async_hash(uint32_t pid, unsigned name, uint64_t id, size_t cap)
{
    uint64_t h = (id ^ ((uint64_t)pid << 32 | name)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* The slot of (pid, name, id): open, or the free one where it would go. */
static struct async *async_slot(struct spans *s, uint32_t pid, unsigned name, uint64_t id)
{
    size_t h = async_hash(pid, name, id, s->capas);
    while (s->as[h].used &&
           (s->as[h].pid != pid || s->as[h].name != name || s->as[h].id != id))
        h = (h + 1) & (s->capas - 1);
    return &s->as[h];
}

static int async_grow(struct spans *s)
{
    if ((s->nas + 1) * 2 <= s->capas)
        return 0;
    size_t oldcap = s->capas;
    struct async *old = s->as;
    s->capas = oldcap ? 2 * oldcap : 64;
    if (!(s->as = calloc(s->capas, sizeof *s->as))) {
        s->as = old;
        s->capas = oldcap;
        return -1;
    }
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].used)
            *async_slot(s, old[i].pid, old[i].name, old[i].id) = old[i];
    free(old);
    return 0;
}

/* Removes a (linear probing: the rest of its cluster is put back). */
static void async_remove(struct spans *s, struct async *a)
{
    size_t i = (size_t)(a - s->as);
    s->as[i].used = 0;
    s->nas--;
    for (size_t j = (i + 1) & (s->capas - 1); s->as[j].used;
         j = (j + 1) & (s->capas - 1)) {
        struct async e = s->as[j];
        s->as[j].used = 0;
        *async_slot(s, e.pid, e.name, e.id) = e;
    }
}

static int closed_add(struct spans *s, size_t *n, struct span_closed c)
{
    if (room(&s->closed, &s->capclosed, *n, sizeof *s->closed, 16) < 0)
        return -1;
    s->closed[(*n)++] = c;
    return 0;
}

static int record(struct span_name *n, uint64_t dur, uint64_t self)
{
    if (room(&n->durs, &n->cap, n->count, sizeof *n->durs, 64) < 0)
        return -1;
    n->durs[n->count++] = dur;
    n->total += dur;
    n->self += self;
    if (dur < n->min)
        n->min = dur;
    if (dur > n->max)
        n->max = dur;
    return 0;
}

/* Pops the frames of t above index keep as unended, innermost first. */
static int unwind(struct spans *s, struct thr *t, size_t keep, size_t *nc)
{
    while (t->n > keep) {
        struct frame *f = &t->st[--t->n];
        s->names[f->name].unended++;
        s->unended++;
        if (closed_add(s, nc, (struct span_closed){f->name, f->begin_ns, 0, 0, 0, 0}) < 0)
            return -1;
    }
    return 0;
}

static int thread_event(struct spans *s, const struct fdr__rd_event *ev, int kind,
                        unsigned name, uint32_t depth, struct span_step *out, size_t *nc)
{
    struct thr *t = thread_get(s, ev->pid, ev->tid);
    if (!t)
        return -1;
    if (kind == SPAN_BEGIN) {
        /* Open spans at this depth or deeper lost their end. */
        size_t keep = t->n;
        while (keep > 0 && t->st[keep - 1].depth >= depth)
            keep--;
        if (unwind(s, t, keep, nc) < 0)
            return -1;
        if (room(&t->st, &t->cap, t->n, sizeof *t->st, 8) < 0)
            return -1;
        t->st[t->n++] = (struct frame){name, depth, ev->ns, 0};
        return 0;
    }
    /* An end: the innermost open span of its depth and name. */
    size_t j = t->n;
    while (j > 0 && !(t->st[j - 1].depth == depth && t->st[j - 1].name == name))
        j--;
    if (depth == 0 || j == 0) {
        s->names[name].unmatched++;
        s->unmatched++;
        return 0;
    }
    if (unwind(s, t, j, nc) < 0)
        return -1;
    struct frame f = t->st[--t->n];
    out->matched = 1;
    out->dur = ev->ns >= f.begin_ns ? ev->ns - f.begin_ns : 0;
    out->self = out->dur >= f.child_ns ? out->dur - f.child_ns : 0;
    if (t->n)
        t->st[t->n - 1].child_ns += out->dur;
    return record(&s->names[name], out->dur, out->self);
}

/* A track for a new async span of (pid, name): a free one of them, or a
 * new number (*fresh set). 0 when out of memory. */
static uint64_t track_take(struct spans *s, uint32_t pid, unsigned name, int *fresh)
{
    *fresh = 0;
    for (size_t i = s->nfree; i-- > 0;)
        if (s->free[i].pid == pid && s->free[i].name == name) {
            uint64_t t = s->free[i].track;
            s->free[i] = s->free[--s->nfree];
            return t;
        }
    *fresh = 1;
    return ++s->next_track;
}

static int track_give(struct spans *s, const struct async *a)
{
    if (room(&s->free, &s->capfree, s->nfree, sizeof *s->free, 16) < 0)
        return -1;
    s->free[s->nfree++] = (struct free_track){a->pid, a->name, a->track};
    return 0;
}

static int async_event(struct spans *s, const struct fdr__rd_event *ev, int kind,
                       unsigned name, uint64_t id, struct span_step *out, size_t *nc)
{
    if (async_grow(s) < 0)
        return -1;
    struct async *a = async_slot(s, ev->pid, name, id);
    if (kind == SPAN_ABEGIN) {
        if (a->used) {
            s->names[name].reused++;
            s->reused++;
            s->names[name].unended++;
            s->unended++;
            if (closed_add(s, nc,
                           (struct span_closed){name, a->begin_ns, id, 1, a->track,
                                                a->seq}) < 0 ||
                track_give(s, a) < 0)
                return -1;
        } else
            s->nas++;
        int fresh;
        uint64_t track = track_take(s, ev->pid, name, &fresh);
        *a = (struct async){ev->pid, ev->tid, name, id, ev->ns, track, ++s->next_seq, 1};
        out->track = a->track;
        out->track_new = fresh;
        out->seq = a->seq;
        return 0;
    }
    if (!a->used) {
        s->names[name].unmatched++;
        s->unmatched++;
        return 0;
    }
    out->matched = 1;
    out->track = a->track;
    out->seq = a->seq;
    out->begin_tid = a->tid;
    out->dur = ev->ns >= a->begin_ns ? ev->ns - a->begin_ns : 0;
    out->self = out->dur;
    if (track_give(s, a) < 0)
        return -1;
    async_remove(s, a);
    return record(&s->names[name], out->dur, out->self);
}

int spans_feed(struct spans *s, const struct fdr__rd_event *ev, struct span_step *out)
{
    return spans_feed_raw(s, ev->proc->index, &ev->proc->classes, ev, out);
}

int spans_feed_raw(struct spans *s, unsigned proc, const struct fdr__classes *t,
                   const struct fdr__rd_event *ev, struct span_step *out)
{
    memset(out, 0, sizeof *out);
    unsigned name = 0;
    int kind = classify(s, proc, t, ev->c, &name);
    if (kind < 0)
        return -1;
    /* The marker is the first field: u16 or u64 at the payload's start. */
    size_t sz = kind == SPAN_BEGIN || kind == SPAN_END ? 2 : 8;
    if (kind == SPAN_NONE || ev->len < sz)
        return 0;
    uint64_t v = 0;
    if (sz == 2) {
        uint16_t d;
        memcpy(&d, ev->payload, 2);
        v = d;
    } else
        memcpy(&v, ev->payload, 8);
    out->kind = kind;
    out->name = name;
    size_t nc = 0;
    int r;
    if (sz == 2)
        r = thread_event(s, ev, kind, name, (uint32_t)v, out, &nc);
    else {
        out->id = v;
        r = async_event(s, ev, kind, name, v, out, &nc);
    }
    out->closed = s->closed;
    out->n_closed = nc;
    return r;
}

void spans_finish(struct spans *s)
{
    for (size_t i = 0; i < s->capthr; i++)
        for (size_t k = 0; s->thr[i].used && k < s->thr[i].n; k++) {
            s->names[s->thr[i].st[k].name].unended++;
            s->unended++;
        }
    for (size_t i = 0; i < s->capthr; i++)
        s->thr[i].n = 0;
    for (size_t i = 0; i < s->capas; i++)
        if (s->as[i].used) {
            s->names[s->as[i].name].unended++;
            s->unended++;
            s->as[i].used = 0;
        }
    s->nas = 0;
}

size_t spans_names(const struct spans *s)
{
    return s->nnames;
}

struct span_name *spans_name(struct spans *s, size_t i)
{
    return &s->names[i];
}

void spans_totals(const struct spans *s, uint64_t *unmatched, uint64_t *unended,
                  uint64_t *reused)
{
    *unmatched = s->unmatched;
    *unended = s->unended;
    *reused = s->reused;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t spans_quantile(struct span_name *n, double q)
{
    if (!n->count)
        return 0;
    qsort(n->durs, n->count, sizeof *n->durs, u64_cmp);
    double r = q * (double)n->count;
    size_t k = (size_t)r;
    if ((double)k < r)
        k++; /* ceil */
    return n->durs[k ? k - 1 : 0];
}
