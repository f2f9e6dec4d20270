/* SPDX-License-Identifier: MIT */
/* stats.c - `fdr stats DIR [--json]`: events per class, per thread and
 * per process, rates over the trace's span, discarded counts and first and
 * last times of a trace on disk, read once, packet by packet
 * (common/reader.h); and per span name (fdr/span.h, paired by spans.c)
 * the count, total, min, p50, p90, p99, max and self time of its spans. Counting costs a
 * table slot per class and per thread: an array indexed by class id per process, a hash
 * table of threads. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/format.h"
#include "offline.h"
#include "progress.h"
#include "spans.h"

struct thr {
    uint32_t pid, tid;
    uint64_t events, first, last;
    char name[17];
    int used;
};

struct proc_st {
    uint64_t *per_class; /* indexed by class id */
    uint64_t events, discarded, lost, first, last;
};

struct cls {
    char *name;
    uint64_t events;
};

struct st {
    struct thr *thr;
    size_t cap, n;
    struct proc_st *procs;
    uint64_t events, discarded, lost, first, last;
};

static uint64_t hash(uint32_t pid, uint32_t tid)
{
    uint64_t h = ((uint64_t)pid << 32 | tid) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* The slot of thread (pid, tid); NULL when out of memory. */
static struct thr *thread_slot(struct st *s, uint32_t pid, uint32_t tid)
{
    if (2 * (s->n + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        struct thr *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->thr[i].used)
                continue;
            size_t j = hash(s->thr[i].pid, s->thr[i].tid) & (cap - 1);
            while (t[j].used)
                j = (j + 1) & (cap - 1);
            t[j] = s->thr[i];
        }
        free(s->thr);
        s->thr = t;
        s->cap = cap;
    }
    size_t j = hash(pid, tid) & (s->cap - 1);
    while (s->thr[j].used && (s->thr[j].pid != pid || s->thr[j].tid != tid))
        j = (j + 1) & (s->cap - 1);
    if (!s->thr[j].used) {
        s->thr[j].used = 1;
        s->thr[j].pid = pid;
        s->thr[j].tid = tid;
        s->n++;
    }
    return &s->thr[j];
}

static int thr_cmp(const void *a, const void *b)
{
    const struct thr *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cls_by_name(const void *a, const void *b)
{
    return strcmp(((const struct cls *)a)->name, ((const struct cls *)b)->name);
}

static int cls_by_count(const void *a, const void *b)
{
    const struct cls *x = a, *y = b;
    if (x->events != y->events)
        return x->events > y->events ? -1 : 1;
    return strcmp(x->name, y->name);
}

static double rate(uint64_t events, uint64_t span_ns)
{
    return span_ns ? (double)events * 1e9 / (double)span_ns : 0.0;
}

static const char *secs(char *b, uint64_t ns, int valid)
{
    if (!valid)
        return "-";
    b[fdr__fmt_seconds(b, ns)] = 0;
    return b;
}

/* A table printed with aligned columns: cells of at most 63 bytes. */
struct table {
    int ncol;
    const char *const *head;
    const char *left; /* 'l' or 'r' per column */
    char (*cell)[64];
    size_t rows, cap;
};

static char *cell(struct table *t, size_t row, int col)
{
    return t->cell[row * (size_t)t->ncol + (size_t)col];
}

static int table_row(struct table *t)
{
    if (t->rows == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        char(*c)[64] = realloc(t->cell, cap * (size_t)t->ncol * sizeof *c);
        if (!c)
            return -1;
        t->cell = c;
        t->cap = cap;
    }
    memset(t->cell[t->rows * (size_t)t->ncol], 0, (size_t)t->ncol * 64);
    return (int)t->rows++;
}

/* Printable: control bytes become '?'. */
static void printable(char *dst, const char *src, size_t n)
{
    size_t i = 0;
    for (; i < n && i < 63 && src[i]; i++)
        dst[i] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? '?' : src[i];
    dst[i] = 0;
    if (!i)
        strcpy(dst, "-");
}

static void table_print(struct table *t)
{
    int w[16] = {0};
    for (int c = 0; c < t->ncol; c++) {
        w[c] = (int)strlen(t->head[c]);
        for (size_t r = 0; r < t->rows; r++) {
            int l = (int)strlen(cell(t, r, c));
            if (l > w[c])
                w[c] = l;
        }
    }
    for (size_t r = 0; r <= t->rows; r++) {
        fputs("  ", stdout);
        for (int c = 0; c < t->ncol; c++) {
            const char *s = r == 0 ? t->head[c] : cell(t, r - 1, c);
            int last = c == t->ncol - 1;
            if (t->left[c] == 'l' && last)
                fputs(s, stdout);
            else if (t->left[c] == 'l')
                printf("%-*s  ", w[c], s);
            else
                printf(last ? "%*s" : "%*s  ", w[c], s);
        }
        fputc('\n', stdout);
    }
    free(t->cell);
    t->cell = NULL;
}

/* A duration for people: 850ns, 12.345us, 1.234ms, 2.500s. */
static const char *dur(char *b, uint64_t ns)
{
    if (ns < 1000)
        snprintf(b, 32, "%lluns", (unsigned long long)ns);
    else if (ns < 1000000)
        snprintf(b, 32, "%.3fus", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(b, 32, "%.3fms", (double)ns / 1e6);
    else
        snprintf(b, 32, "%.3fs", (double)ns / 1e9);
    return b;
}

/* The spans, as the "spans" member of the JSON object (durations in ns;
 * min and the quantiles null when none ended). */
static void spans_json(struct spans *spn)
{
    uint64_t um, ue, ru;
    spans_totals(spn, &um, &ue, &ru);
    printf(" \"span_unmatched\": %llu, \"span_unended\": %llu, \"span_reused\": %llu,\n"
           " \"spans\": [",
           (unsigned long long)um, (unsigned long long)ue, (unsigned long long)ru);
    for (size_t i = 0; i < spans_names(spn); i++) {
        struct span_name *n = spans_name(spn, i);
        printf("%s\n  {\"name\": ", i ? "," : "");
        off_json_str(stdout, n->name, strlen(n->name));
        printf(", \"count\": %llu, \"total_ns\": %llu, \"self_ns\": %llu, ",
               (unsigned long long)n->count, (unsigned long long)n->total,
               (unsigned long long)n->self);
        if (n->count)
            printf(
                "\"min_ns\": %llu, \"p50_ns\": %llu, \"p90_ns\": %llu, \"p99_ns\": %llu, "
                "\"max_ns\": %llu, ",
                (unsigned long long)n->min, (unsigned long long)spans_quantile(n, 0.5),
                (unsigned long long)spans_quantile(n, 0.9),
                (unsigned long long)spans_quantile(n, 0.99), (unsigned long long)n->max);
        else
            printf("\"min_ns\": null, \"p50_ns\": null, \"p90_ns\": null, \"p99_ns\": "
                   "null, \"max_ns\": null, ");
        printf("\"unended\": %llu, \"unmatched\": %llu, \"reused\": %llu}",
               (unsigned long long)n->unended, (unsigned long long)n->unmatched,
               (unsigned long long)n->reused);
    }
    printf("]");
}

/* The spans as a table, when there are any, and what did not pair. */
static void spans_table(struct spans *spn)
{
    if (!spans_names(spn))
        return;
    static const char *const h[] = {"SPAN", "COUNT",   "TOTAL",     "MIN",
                                    "P50",  "P90",     "P99",       "MAX",
                                    "SELF", "UNENDED", "UNMATCHED", "REUSED"};
    struct table t = {12, h, "lrrrrrrrrrrr", NULL, 0, 0};
    char b[32];
    for (size_t i = 0; i < spans_names(spn); i++) {
        struct span_name *n = spans_name(spn, i);
        int row = table_row(&t);
        if (row < 0)
            break;
        size_t r = (size_t)row;
        printable(cell(&t, r, 0), n->name, strlen(n->name));
        snprintf(cell(&t, r, 1), 64, "%llu", (unsigned long long)n->count);
        snprintf(cell(&t, r, 2), 64, "%s", dur(b, n->total));
        const double q[] = {-1, 0.5, 0.9, 0.99, -2};
        for (int k = 0; k < 5; k++) {
            uint64_t v = q[k] == -1   ? n->min
                         : q[k] == -2 ? n->max
                                      : spans_quantile(n, q[k]);
            snprintf(cell(&t, r, 3 + k), 64, "%s", n->count ? dur(b, v) : "-");
        }
        snprintf(cell(&t, r, 8), 64, "%s", dur(b, n->self));
        snprintf(cell(&t, r, 9), 64, "%llu", (unsigned long long)n->unended);
        snprintf(cell(&t, r, 10), 64, "%llu", (unsigned long long)n->unmatched);
        snprintf(cell(&t, r, 11), 64, "%llu", (unsigned long long)n->reused);
    }
    fputc('\n', stdout);
    table_print(&t);
    uint64_t um, ue, ru;
    spans_totals(spn, &um, &ue, &ru);
    if (um || ue || ru)
        printf(
            "spans: %llu end(s) without a begin, %llu begin(s) never ended, %llu async "
            "id(s) reused while open\n",
            (unsigned long long)um, (unsigned long long)ue, (unsigned long long)ru);
}

int cli_stats_run(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {0, 0, 0, 0}};
    int json = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else
            return cli_fail(2, "stats", "unknown option '%s' (fdr help stats)",
                            argv[optind - 1]);
    }
    if (optind + 1 != argc) {
        cli_usage(stderr, "stats");
        return 2;
    }
    const char *dir = argv[optind];
    struct off_diag d = {"stats", 0, 0};
    struct fdr__reader *r;
    int status = off_open(dir, &d, &r);
    if (status)
        return status;
    unsigned np = fdr__reader_procs(r);
    struct st s = {0};
    struct cls *cl = NULL;
    size_t ncl = 0;
    s.procs = calloc(np ? np : 1, sizeof *s.procs);
    int ok = s.procs != NULL;
    for (unsigned i = 0; ok && i < np; i++)
        ok = !!(s.procs[i].per_class =
                    calloc(fdr__reader_proc(r, i)->classes.n + 1u, sizeof(uint64_t)));
    struct spans *spn = spans_new();
    ok = ok && spn;
    struct fdr__rd_event ev;
    struct span_step step;
    struct progress bar;
    uint64_t seen = 0;
    progress_start(&bar, "stats");
    while (ok && fdr__reader_next(r, &ev) > 0) {
        if ((++seen & 0xfff) == 0) {
            uint64_t total, done = fdr__reader_stream_bytes_done(r, &total);
            progress_update(&bar, done, total);
        }
        if (spans_feed(spn, &ev, &step) < 0) {
            ok = 0;
            break;
        }
        struct proc_st *p = &s.procs[ev.proc->index];
        p->per_class[ev.c->id]++;
        if (!p->events++)
            p->first = ev.ns;
        p->last = ev.ns;
        if (!s.events++)
            s.first = ev.ns;
        if (ev.ns < s.first)
            s.first = ev.ns;
        if (ev.ns > s.last)
            s.last = ev.ns;
        struct thr *t = thread_slot(&s, ev.pid, ev.tid);
        if (!t) {
            ok = 0;
            break;
        }
        if (!t->events++)
            t->first = ev.ns;
        t->last = ev.ns;
        memcpy(t->name, ev.thread_name, 16);
    }
    progress_end(&bar);
    if (spn)
        spans_finish(spn);
    /* Discarded: each stream's last events_discarded, summed. */
    for (unsigned i = 0; ok && i < fdr__reader_streams(r); i++) {
        struct fdr__rd_stream_info si;
        fdr__reader_stream(r, i, &si);
        s.procs[si.proc->index].discarded += si.discarded;
        s.discarded += si.discarded;
        s.procs[si.proc->index].lost += si.lost_packets;
        s.lost += si.lost_packets;
    }
    /* Classes by name across processes. */
    size_t cap = 0;
    for (unsigned i = 0; ok && i < np; i++) {
        const struct fdr__rd_proc *p = fdr__reader_proc(r, i);
        for (uint32_t id = 1; ok && id <= p->classes.n; id++) {
            uint64_t k = s.procs[i].per_class[id];
            const struct fdr__class *k_c = fdr__classes_get(&p->classes, (uint16_t)id);
            if (!k || !k_c)
                continue;
            if (ncl == cap) {
                cap = cap ? 2 * cap : 64;
                struct cls *x = realloc(cl, cap * sizeof *x);
                if (!x) {
                    ok = 0;
                    break;
                }
                cl = x;
            }
            if (asprintf(&cl[ncl].name, "%s:%s",
                         fdr__classes_str(&p->classes, k_c->provider),
                         fdr__classes_str(&p->classes, k_c->event)) < 0) {
                ok = 0;
                break;
            }
            cl[ncl++].events = k;
        }
    }
    if (!ok) {
        status = cli_fail(1, "stats", "out of memory");
        goto done;
    }
    if (ncl) {
        qsort(cl, ncl, sizeof *cl, cls_by_name);
        size_t m = 0;
        for (size_t i = 1; i < ncl; i++) {
            if (strcmp(cl[i].name, cl[m].name) == 0) {
                cl[m].events += cl[i].events;
                free(cl[i].name);
            } else {
                cl[++m] = cl[i];
            }
        }
        ncl = m + 1;
        qsort(cl, ncl, sizeof *cl, cls_by_count);
    }
    /* Threads, sorted by pid and tid. */
    size_t nt = 0;
    for (size_t i = 0; i < s.cap; i++)
        if (s.thr[i].used)
            s.thr[nt++] = s.thr[i];
    if (nt)
        qsort(s.thr, nt, sizeof *s.thr, thr_cmp);
    uint64_t span = s.events ? s.last - s.first : 0;
    char b1[32], b2[32];

    if (json) {
        printf("{\"trace\": ");
        off_json_str(stdout, dir, strlen(dir));
        printf(",\n \"events\": %llu, \"discarded\": %llu, \"packets_lost\": %llu, "
               "\"errors\": %llu,\n",
               (unsigned long long)s.events, (unsigned long long)s.discarded,
               (unsigned long long)s.lost, (unsigned long long)d.count);
        if (s.events)
            printf(" \"first_ns\": %llu, \"last_ns\": %llu,", (unsigned long long)s.first,
                   (unsigned long long)s.last);
        else
            printf(" \"first_ns\": null, \"last_ns\": null,");
        printf(" \"span_ns\": %llu, \"rate\": %.3f,\n \"processes\": [",
               (unsigned long long)span, rate(s.events, span));
        for (unsigned i = 0; i < np; i++) {
            const struct fdr__rd_proc *p = fdr__reader_proc(r, i);
            const struct proc_st *q = &s.procs[i];
            printf("%s\n  {\"name\": ", i ? "," : "");
            off_json_str(stdout, p->name, strlen(p->name));
            printf(
                ", \"pid\": %u, \"streams\": %u, \"events\": %llu, \"discarded\": %llu, "
                "\"packets_lost\": %llu, \"rate\": %.3f, ",
                p->pid, p->n_streams, (unsigned long long)q->events,
                (unsigned long long)q->discarded, (unsigned long long)q->lost,
                rate(q->events, span));
            /* the open mark (common/tracedir.h): "cut" when its process
             * ended without finishing the trace */
            printf("\"trace\": \"%s\", ", p->unfinished >= 2   ? "cut"
                                          : p->unfinished == 1 ? "writing"
                                                               : "finished");
            if (q->events)
                printf("\"first_ns\": %llu, \"last_ns\": %llu}",
                       (unsigned long long)q->first, (unsigned long long)q->last);
            else
                printf("\"first_ns\": null, \"last_ns\": null}");
        }
        printf("],\n \"threads\": [");
        for (size_t i = 0; i < nt; i++) {
            const struct thr *t = &s.thr[i];
            printf("%s\n  {\"pid\": %u, \"tid\": %u, \"name\": ", i ? "," : "", t->pid,
                   t->tid);
            off_json_str(stdout, t->name, 16);
            printf(", \"events\": %llu, \"rate\": %.3f, \"first_ns\": %llu, \"last_ns\": "
                   "%llu}",
                   (unsigned long long)t->events, rate(t->events, span),
                   (unsigned long long)t->first, (unsigned long long)t->last);
        }
        printf("],\n \"classes\": [");
        for (size_t i = 0; i < ncl; i++) {
            printf("%s\n  {\"name\": ", i ? "," : "");
            off_json_str(stdout, cl[i].name, strlen(cl[i].name));
            printf(", \"events\": %llu, \"rate\": %.3f}",
                   (unsigned long long)cl[i].events, rate(cl[i].events, span));
        }
        printf("],\n");
        spans_json(spn);
        printf("}\n");
    } else {
        printf("trace %s: %llu events, %llu discarded, %u process(es), %zu thread(s)\n",
               dir, (unsigned long long)s.events, (unsigned long long)s.discarded, np,
               nt);
        printf("time %s to %s s: span %s s, %.1f events/s\n",
               secs(b1, s.first, s.events > 0), secs(b2, s.last, s.events > 0),
               secs((char[32]){0}, span, 1), rate(s.events, span));
        static const char *const ph[] = {"PROCESS",   "PID",      "STREAMS", "EVENTS",
                                         "DISCARDED", "EVENTS/S", "FIRST",   "LAST"};
        struct table t = {8, ph, "lrrrrrrr", NULL, 0, 0};
        for (unsigned i = 0; i < np; i++) {
            const struct fdr__rd_proc *p = fdr__reader_proc(r, i);
            const struct proc_st *q = &s.procs[i];
            int row = table_row(&t);
            if (row < 0)
                break;
            printable(cell(&t, (size_t)row, 0), p->name, strlen(p->name));
            snprintf(cell(&t, (size_t)row, 1), 64, "%u", p->pid);
            snprintf(cell(&t, (size_t)row, 2), 64, "%u", p->n_streams);
            snprintf(cell(&t, (size_t)row, 3), 64, "%llu", (unsigned long long)q->events);
            snprintf(cell(&t, (size_t)row, 4), 64, "%llu",
                     (unsigned long long)q->discarded);
            snprintf(cell(&t, (size_t)row, 5), 64, "%.1f", rate(q->events, span));
            snprintf(cell(&t, (size_t)row, 6), 64, "%s",
                     secs(b1, q->first, q->events > 0));
            snprintf(cell(&t, (size_t)row, 7), 64, "%s",
                     secs(b1, q->last, q->events > 0));
        }
        fputc('\n', stdout);
        table_print(&t);
        static const char *const th[] = {"PID",      "TID",   "THREAD", "EVENTS",
                                         "EVENTS/S", "FIRST", "LAST"};
        struct table u = {7, th, "rrlrrrr", NULL, 0, 0};
        for (size_t i = 0; i < nt; i++) {
            const struct thr *x = &s.thr[i];
            int row = table_row(&u);
            if (row < 0)
                break;
            snprintf(cell(&u, (size_t)row, 0), 64, "%u", x->pid);
            snprintf(cell(&u, (size_t)row, 1), 64, "%u", x->tid);
            printable(cell(&u, (size_t)row, 2), x->name, 16);
            snprintf(cell(&u, (size_t)row, 3), 64, "%llu", (unsigned long long)x->events);
            snprintf(cell(&u, (size_t)row, 4), 64, "%.1f", rate(x->events, span));
            snprintf(cell(&u, (size_t)row, 5), 64, "%s", secs(b1, x->first, 1));
            snprintf(cell(&u, (size_t)row, 6), 64, "%s", secs(b1, x->last, 1));
        }
        fputc('\n', stdout);
        table_print(&u);
        static const char *const ch[] = {"CLASS", "EVENTS", "EVENTS/S"};
        struct table v = {3, ch, "lrr", NULL, 0, 0};
        for (size_t i = 0; i < ncl; i++) {
            int row = table_row(&v);
            if (row < 0)
                break;
            printable(cell(&v, (size_t)row, 0), cl[i].name, strlen(cl[i].name));
            snprintf(cell(&v, (size_t)row, 1), 64, "%llu",
                     (unsigned long long)cl[i].events);
            snprintf(cell(&v, (size_t)row, 2), 64, "%.1f", rate(cl[i].events, span));
        }
        fputc('\n', stdout);
        table_print(&v);
        spans_table(spn);
    }
    if (fflush(stdout) != 0)
        status = cli_fail(1, "stats", "writing the output failed");
    else if (d.count)
        status = 1;
done:
    for (size_t i = 0; i < ncl; i++)
        free(cl[i].name);
    free(cl);
    for (unsigned i = 0; s.procs && i < np; i++)
        free(s.procs[i].per_class);
    free(s.procs);
    free(s.thr);
    spans_free(spn);
    fdr__reader_close(r);
    return status;
}
