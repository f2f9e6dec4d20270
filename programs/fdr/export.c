/* SPDX-License-Identifier: MIT */
/* export.c - `fdr export`: a trace on disk for Perfetto UI and
 * chrome://tracing.
 *
 *     fdr export --format perfetto DIR -o OUT.pftrace [--filter PATTERN]
 *     fdr export --format chrome   DIR -o OUT.json    [--filter PATTERN]
 *
 * Both read the trace event by event, merged by time (common/reader.h),
 * and write as they go: nothing but small per-thread, per-class and
 * per-counter tables is kept, so a trace of any size streams through.
 *
 * What an event becomes (the same in both formats):
 *   - a process track per process (name, pid), a thread track per thread
 *     (name, tid) under it, announced before the thread's first event;
 *   - spans (fdr/span.h, paired by spans.c): a thread span is a slice on
 *     its thread, begin and end fields merged into its arguments; an async
 *     span is a slice on a track of its own under its process, with a flow
 *     to its end's thread when it ended on another thread; an end without
 *     a begin is an instant; spans left open by an end or a begin of an
 *     outer one are closed there, so that slices nest exactly;
 *   - an event whose name ends in _enter or _begin opens a slice on its
 *     thread, named without the suffix; one ending in _exit or _end closes
 *     the innermost open slice of the thread (an end without a begin is an
 *     instant); every other event is an instant on its thread;
 *   - every field is an argument of the event (debug annotations), with
 *     its type: integers, floats, pointers, strings, bytes as hex;
 *   - every numeric field (integers and floats, not pointers) is also a
 *     counter track "provider:event.field" of its process, one point per
 *     event; but fdr:tunable (a tunable a controller set) has a counter
 *     track per tunable, "fdr:tunable.NAME", its values over time (Chrome:
 *     a "C" event named so, series "value").
 *
 * Perfetto's protobuf (TracePacket stream) is written by the small
 * encoder below rather than by a protobuf library: the format is a flat
 * sequence of length-prefixed packets, each built in a scratch buffer and
 * written at once, and the handful of fields used is listed in
 * programs/fdr/perfetto.proto (our own subset, with Perfetto's documented
 * field numbers), which the tests decode it against with `protoc
 * --decode`. Nested lengths are written as 4-byte varints (padded with
 * continuation bits, which protobuf decoders accept) so that a message can
 * be written before its length is known. Event names are interned (one
 * sequence, incremental state cleared in the first packet). A clock
 * snapshot first maps the packets' times (line time) to REALTIME, so that
 * Perfetto knows the absolute time. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common/fields.h"
#include "common/pattern.h"
#include "common/tsdl.h"
#include "offline.h"
#include "progress.h"
#include "spans.h"

/* ---- protobuf encoding --------------------------------------------------- */

/* Perfetto field numbers (programs/fdr/perfetto.proto). */
enum {
    TRACE_PACKET = 1,
    TP_TIMESTAMP = 8,
    TP_SEQ_ID = 10,
    TP_TRACK_EVENT = 11,
    TP_INTERNED = 12,
    TP_SEQ_FLAGS = 13,
    TP_TRACK_DESC = 60,
    TP_CLOCK_SNAPSHOT = 6,
    CS_CLOCKS = 1,
    CK_ID = 1,
    CK_TIMESTAMP = 2,
    TE_ANNOTATION = 4,
    TE_TYPE = 9,
    TE_NAME_IID = 10,
    TE_TRACK_UUID = 11,
    TE_COUNTER_VALUE = 30,
    TE_DOUBLE_COUNTER_VALUE = 44,
    TE_FLOW_IDS = 47,
    TE_TERMINATING_FLOW_IDS = 48,
    DA_BOOL = 2,
    DA_UINT = 3,
    DA_INT = 4,
    DA_DOUBLE = 5,
    DA_STRING = 6,
    DA_POINTER = 7,
    DA_NAME = 10,
    TD_UUID = 1,
    TD_NAME = 2,
    TD_PROCESS = 3,
    TD_THREAD = 4,
    TD_PARENT = 5,
    TD_COUNTER = 8,
    CD_UNIT_NAME = 6,
    PD_PID = 1,
    PD_NAME = 6,
    THD_PID = 1,
    THD_TID = 2,
    THD_NAME = 5,
    ID_EVENT_NAMES = 2,
    EN_IID = 1,
    EN_NAME = 2,
};
enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3, COUNTER = 4 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };
enum { CLOCK_REALTIME_ID = 1, CLOCK_BOOTTIME_ID = 6 }; /* Perfetto's builtin clocks */
#define SEQ_ID 1

#define PB_CAP (64u << 10) /* one packet: an event is < 8 KiB of payload */
#define PB_DEPTH 4

struct pb {
    unsigned char buf[PB_CAP];
    size_t n;
    size_t open[PB_DEPTH]; /* where each open message's length goes */
    int depth;
    int overflow;
};

static void pb_byte(struct pb *p, unsigned char b)
{
    if (p->n < PB_CAP)
        p->buf[p->n++] = b;
    else
        p->overflow = 1;
}

static void pb_varint(struct pb *p, uint64_t v)
{
    while (v >= 0x80) {
        pb_byte(p, (unsigned char)(v | 0x80));
        v >>= 7;
    }
    pb_byte(p, (unsigned char)v);
}

static void pb_tag(struct pb *p, unsigned field, unsigned wire)
{
    pb_varint(p, (uint64_t)field << 3 | wire);
}

static void pb_uint(struct pb *p, unsigned field, uint64_t v)
{
    pb_tag(p, field, 0);
    pb_varint(p, v);
}

static void pb_fixed64(struct pb *p, unsigned field, uint64_t v);
static void pb_double(struct pb *p, unsigned field, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    pb_fixed64(p, field, v);
}

static void pb_fixed64(struct pb *p, unsigned field, uint64_t v)
{
    pb_tag(p, field, 1);
    for (int i = 0; i < 8; i++)
        pb_byte(p, (unsigned char)(v >> (8 * i)));
}

static void pb_bytes(struct pb *p, unsigned field, const void *s, size_t n)
{
    pb_tag(p, field, 2);
    pb_varint(p, n);
    if (n > PB_CAP - p->n) {
        p->overflow = 1;
        return;
    }
    memcpy(p->buf + p->n, s, n);
    p->n += n;
}

static void pb_str(struct pb *p, unsigned field, const char *s)
{
    pb_bytes(p, field, s, strlen(s));
}

/* Opens a nested message; its length is filled in by pb_end. */
static void pb_begin(struct pb *p, unsigned field)
{
    pb_tag(p, field, 2);
    if (p->depth == PB_DEPTH) {
        p->overflow = 1;
        return;
    }
    p->open[p->depth++] = p->n;
    for (int i = 0; i < 4; i++)
        pb_byte(p, 0);
}

static void pb_end(struct pb *p)
{
    if (p->depth == 0 || p->overflow)
        return;
    size_t at = p->open[--p->depth];
    size_t len = p->n - at - 4;
    for (int i = 0; i < 4; i++)
        p->buf[at + (size_t)i] =
            (unsigned char)((len >> (7 * i)) & 0x7f) | (i < 3 ? 0x80 : 0);
}

/* ---- what both formats keep ---------------------------------------------- */

struct thread {
    uint32_t pid, tid;
    uint32_t depth; /* open slices */
    int used;
};

struct proc_state {
    uint64_t *iid;      /* per class id: interned name id, 0 = not yet */
    uint64_t **counter; /* per class id: per field, counter track uuid */
    int announced;
};

#define TUNABLE_NAME_CAP 64 /* a tunable's name in a counter's (with its NUL) */

struct exporter {
    FILE *out;
    int perfetto;
    struct fdr__reader *r;
    struct fdr__rules *rules;
    uint8_t **sel; /* per process and class: 0 undecided, 1 kept, 2 not */
    struct proc_state *ps;
    struct thread *threads; /* open addressing on (pid, tid) */
    size_t nthreads, cap;
    uint64_t next_iid, next_counter;
    uint64_t events, first;
    struct spans *spans;
    int marker;    /* 1 when the event is a span's: its first field is no counter */
    int track_new; /* an async span's begin on a track not announced yet */
    uint64_t seq;  /* an async span's number (flows, Chrome ids) */
    int comma;
    struct pb pb;
    char name[512];
    /* fdr:tunable's counter tracks, one per process and tunable (pf_tunable) */
    struct {
        uint32_t pid;
        char name[TUNABLE_NAME_CAP];
        uint64_t uuid;
    } tun[64];
    unsigned ntun;
};

static uint64_t proc_uuid(uint32_t pid)
{
    return 1ull << 56 | pid;
}

static uint64_t thread_uuid(uint32_t pid, uint32_t tid)
{
    return 2ull << 56 | (uint64_t)(pid & 0xffffff) << 24 | (tid & 0xffffff);
}

/* The track of async span number n (spans.h), and its flow id. */
static uint64_t async_uuid(uint64_t n)
{
    return 4ull << 56 | n;
}

static uint64_t flow_id(uint64_t n)
{
    return 5ull << 56 | n;
}

/* What an event draws: an instant, or a step of a slice. */
enum { DRAW_INSTANT, DRAW_BEGIN, DRAW_END, DRAW_ABEGIN, DRAW_AEND };

/* The thread (pid, tid), added when new (*fresh then set). */
static struct thread *thread_get(struct exporter *x, uint32_t pid, uint32_t tid,
                                 int *fresh)
{
    *fresh = 0;
    if ((x->nthreads + 1) * 2 > x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 256;
        struct thread *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < x->cap; i++)
            if (x->threads[i].used) {
                size_t h =
                    (x->threads[i].pid * 2654435761u ^ x->threads[i].tid) & (cap - 1);
                while (t[h].used)
                    h = (h + 1) & (cap - 1);
                t[h] = x->threads[i];
            }
        free(x->threads);
        x->threads = t;
        x->cap = cap;
    }
    size_t h = (pid * 2654435761u ^ tid) & (x->cap - 1);
    while (x->threads[h].used && (x->threads[h].pid != pid || x->threads[h].tid != tid))
        h = (h + 1) & (x->cap - 1);
    if (!x->threads[h].used) {
        x->threads[h] = (struct thread){pid, tid, 0, 1};
        x->nthreads++;
        *fresh = 1;
    }
    return &x->threads[h];
}

/* 1 begin, 2 end, 0 neither; *base the length of the name without the
 * suffix. */
static int slice_kind(const char *ev, size_t *base)
{
    static const struct {
        const char *suffix;
        int kind;
    } s[] = {{"_enter", 1}, {"_begin", 1}, {"_exit", 2}, {"_end", 2}};
    size_t n = strlen(ev);
    for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
        size_t k = strlen(s[i].suffix);
        if (n > k && strcmp(ev + n - k, s[i].suffix) == 0) {
            *base = n - k;
            return s[i].kind;
        }
    }
    *base = n;
    return 0;
}

static void write_packet(struct exporter *x)
{
    struct pb *p = &x->pb;
    if (!p->overflow) {
        unsigned char hdr[12];
        size_t h = 0;
        uint64_t v = (uint64_t)TRACE_PACKET << 3 | 2, len = p->n;
        for (; v >= 0x80; v >>= 7)
            hdr[h++] = (unsigned char)(v | 0x80);
        hdr[h++] = (unsigned char)v;
        for (; len >= 0x80; len >>= 7)
            hdr[h++] = (unsigned char)(len | 0x80);
        hdr[h++] = (unsigned char)len;
        fwrite(hdr, 1, h, x->out);
        fwrite(p->buf, 1, p->n, x->out);
    }
    p->n = 0;
    p->depth = 0;
    p->overflow = 0;
}

/* ---- Chrome JSON ----------------------------------------------------------- */

static void json_sep(struct exporter *x)
{
    fputs(x->comma ? ",\n" : "\n", x->out);
    x->comma = 1;
}

static void json_ts(struct exporter *x, uint64_t ns)
{
    fprintf(x->out, "%llu.%03u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
}

static void json_double(FILE *f, double d)
{
    if (isfinite(d))
        fprintf(f, "%.17g", d);
    else
        fprintf(f, "\"%s\"", isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
}

static void json_hex(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", (unsigned char)s[i]);
    fputc('"', f);
}

static void json_args(struct exporter *x, const struct fdr__field *fl, int nf)
{
    fputs(",\"args\":{", x->out);
    for (int i = 0; i < nf; i++) {
        const struct fdr__field *f = &fl[i];
        if (i)
            fputc(',', x->out);
        off_json_str(x->out, f->name, strlen(f->name));
        fputc(':', x->out);
        switch (f->kind) {
        case FDR__FK_INT:
            fprintf(x->out, "%lld", (long long)f->v.i);
            break;
        case FDR__FK_UINT:
            fprintf(x->out, "%llu", (unsigned long long)f->v.u);
            break;
        case FDR__FK_FLOAT:
            json_double(x->out, f->v.d);
            break;
        case FDR__FK_PTR:
            fprintf(x->out, "\"0x%llx\"", (unsigned long long)f->v.u);
            break;
        case FDR__FK_STR:
            off_json_str(x->out, f->s, f->n);
            break;
        default:
            json_hex(x->out, f->s, f->n);
            break;
        }
    }
    fputc('}', x->out);
}

static void json_names(struct exporter *x, const struct fdr__rd_event *ev, int new_proc,
                       int new_thread)
{
    if (new_proc) {
        json_sep(x);
        fprintf(x->out,
                "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":",
                ev->pid);
        off_json_str(x->out, ev->proc->name, strlen(ev->proc->name));
        fputs("}}", x->out);
    }
    if (new_thread) {
        json_sep(x);
        fprintf(x->out,
                "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{"
                "\"name\":",
                ev->pid, ev->tid);
        off_json_str(x->out, ev->thread_name, strnlen(ev->thread_name, 16));
        fputs("}}", x->out);
    }
}

/* fdr:tunable's field value and its name: the fields of an fdr:tunable event
 * (recorder/self.h), 0 when it is not one of those (the generic counters). */
static int tunable_fields(const struct fdr__field *fl, int nf,
                          const struct fdr__field **nm, double *d)
{
    int val = 0;
    *nm = NULL;
    for (int i = 0; i < nf; i++) {
        if (strcmp(fl[i].name, "name") == 0 && fl[i].kind == FDR__FK_STR)
            *nm = &fl[i];
        if (strcmp(fl[i].name, "value") == 0 && fdr__field_number(&fl[i], d))
            val = 1;
    }
    return *nm && val && (*nm)->n && (*nm)->n < TUNABLE_NAME_CAP;
}

/* fdr:tunable in Chrome JSON: a counter of its own per tunable,
 * "fdr:tunable.NAME" (series "value"), as Perfetto's track (pf_tunable):
 * one counter "fdr:tunable" would mix every tunable's values in one series. */
static int json_tunable(struct exporter *x, const struct fdr__rd_event *ev,
                        const struct fdr__field *fl, int nf)
{
    const struct fdr__field *nm;
    double d;
    if (!tunable_fields(fl, nf, &nm, &d))
        return 0;
    json_sep(x);
    char track[128];
    snprintf(track, sizeof track, "fdr:tunable.%.*s", (int)nm->n, nm->s);
    fputs("{\"name\":", x->out);
    off_json_str(x->out, track, strlen(track));
    fputs(",\"ph\":\"C\",\"ts\":", x->out);
    json_ts(x, ev->ns);
    fprintf(x->out, ",\"pid\":%u,\"args\":{\"value\":", ev->pid);
    json_double(x->out, d);
    fputs("}}", x->out);
    return 1;
}

static void json_event(struct exporter *x, const struct fdr__rd_event *ev,
                       const char *name, int kind, uint64_t id,
                       const struct fdr__field *fl, int nf)
{
    static const char *const ph[] = {"i", "B", "E", "b", "e"};
    json_sep(x);
    fputs("{\"name\":", x->out);
    off_json_str(x->out, name, strlen(name));
    fprintf(x->out, ",\"ph\":\"%s\",\"ts\":", ph[kind]);
    json_ts(x, ev->ns);
    fprintf(x->out, ",\"pid\":%u,\"tid\":%u%s", ev->pid, ev->tid,
            kind ? "" : ",\"s\":\"t\"");
    if (kind == DRAW_ABEGIN || kind == DRAW_AEND)
        fprintf(x->out, ",\"cat\":\"span\",\"id\":\"0x%llx\"", (unsigned long long)id);
    json_args(x, fl, nf);
    fputc('}', x->out);
    if (strcmp(name, "fdr:tunable") == 0 && json_tunable(x, ev, fl, nf))
        return;
    /* Counters: one "C" event with every numeric field as a series. */
    int any = 0;
    for (int i = x->marker; i < nf; i++) {
        double d;
        if (!fdr__field_number(&fl[i], &d) || !isfinite(d))
            continue;
        if (!any) {
            json_sep(x);
            fputs("{\"name\":", x->out);
            off_json_str(x->out, x->name, strlen(x->name));
            fputs(",\"ph\":\"C\",\"ts\":", x->out);
            json_ts(x, ev->ns);
            fprintf(x->out, ",\"pid\":%u,\"args\":{", ev->pid);
            any = 1;
        } else
            fputc(',', x->out);
        off_json_str(x->out, fl[i].name, strlen(fl[i].name));
        fputc(':', x->out);
        json_double(x->out, d);
    }
    if (any)
        fputs("}}", x->out);
}

/* ---- Perfetto ---------------------------------------------------------------- */

static void pf_names(struct exporter *x, const struct fdr__rd_event *ev, int new_proc,
                     int new_thread)
{
    struct pb *p = &x->pb;
    if (new_proc) {
        pb_begin(p, TP_TRACK_DESC);
        pb_uint(p, TD_UUID, proc_uuid(ev->pid));
        pb_begin(p, TD_PROCESS);
        pb_uint(p, PD_PID, ev->pid);
        pb_str(p, PD_NAME, ev->proc->name);
        pb_end(p);
        pb_end(p);
        write_packet(x);
    }
    if (new_thread) {
        char tn[17] = {0};
        memcpy(tn, ev->thread_name, 16);
        pb_begin(p, TP_TRACK_DESC);
        pb_uint(p, TD_UUID, thread_uuid(ev->pid, ev->tid));
        pb_uint(p, TD_PARENT, proc_uuid(ev->pid));
        pb_begin(p, TD_THREAD);
        pb_uint(p, THD_PID, ev->pid);
        pb_uint(p, THD_TID, ev->tid);
        pb_str(p, THD_NAME, tn);
        pb_end(p);
        pb_end(p);
        write_packet(x);
    }
}

static void pf_annotations(struct pb *p, const struct fdr__field *fl, int nf)
{
    for (int i = 0; i < nf; i++) {
        const struct fdr__field *f = &fl[i];
        pb_begin(p, TE_ANNOTATION);
        pb_str(p, DA_NAME, f->name);
        switch (f->kind) {
        case FDR__FK_INT:
            if (f->type == FDR__T_BOOL)
                pb_uint(p, DA_BOOL, f->v.i != 0);
            else
                pb_uint(p, DA_INT, (uint64_t)f->v.i);
            break;
        case FDR__FK_UINT:
            pb_uint(p, DA_UINT, f->v.u);
            break;
        case FDR__FK_FLOAT:
            pb_double(p, DA_DOUBLE, f->v.d);
            break;
        case FDR__FK_PTR:
            pb_uint(p, DA_POINTER, f->v.u);
            break;
        case FDR__FK_STR:
            pb_bytes(p, DA_STRING, f->s, f->n);
            break;
        default: {
            static const char hex[] = "0123456789abcdef";
            char buf[2 * 4096];
            size_t n = f->n < sizeof buf / 2 ? f->n : sizeof buf / 2;
            for (size_t k = 0; k < n; k++) {
                buf[2 * k] = hex[(unsigned char)f->s[k] >> 4];
                buf[2 * k + 1] = hex[(unsigned char)f->s[k] & 15];
            }
            pb_bytes(p, DA_STRING, buf, 2 * n);
            break;
        }
        }
        pb_end(p);
    }
}

/* The counter track of field i of the event's class, announced when new. */
static uint64_t pf_counter(struct exporter *x, const struct fdr__rd_event *ev, int i,
                           const char *field)
{
    struct proc_state *ps = &x->ps[ev->proc->index];
    uint64_t **row = &ps->counter[ev->c->id];
    if (!*row && !(*row = calloc(FDR_MAX_FIELDS, sizeof **row)))
        return 0;
    if (!(*row)[i]) {
        (*row)[i] = 3ull << 56 | ++x->next_counter;
        struct pb *p = &x->pb;
        char name[600];
        snprintf(name, sizeof name, "%s.%s", x->name, field);
        pb_begin(p, TP_TRACK_DESC);
        pb_uint(p, TD_UUID, (*row)[i]);
        pb_uint(p, TD_PARENT, proc_uuid(ev->pid));
        pb_str(p, TD_NAME, name);
        pb_begin(p, TD_COUNTER);
        /* a field NAME__UNIT carries its unit (docs/api.md, Units) */
        const char *u = strstr(field, "__");
        while (u && strstr(u + 2, "__"))
            u = strstr(u + 2, "__");
        if (u && u[2] && u[2] != '_' && !strchr(u + 2, '.'))
            pb_str(p, CD_UNIT_NAME, u + 2);
        pb_end(p);
        pb_end(p);
        write_packet(x);
    }
    return (*row)[i];
}

/* An async span's track, under its process. */
static void pf_async_track(struct exporter *x, const struct fdr__rd_event *ev,
                           const char *name, uint64_t track)
{
    struct pb *p = &x->pb;
    pb_begin(p, TP_TRACK_DESC);
    pb_uint(p, TD_UUID, async_uuid(track));
    pb_uint(p, TD_PARENT, proc_uuid(ev->pid));
    pb_str(p, TD_NAME, name);
    pb_end(p);
    write_packet(x);
}

/* A slice end (or, with flow, an instant that ends flow `flow`) on track
 * uuid at time ns. */
static void pf_mark(struct exporter *x, uint64_t ns, uint64_t uuid, int type,
                    uint64_t iid, uint64_t flow)
{
    struct pb *p = &x->pb;
    pb_uint(p, TP_TIMESTAMP, ns);
    pb_uint(p, TP_SEQ_ID, SEQ_ID);
    pb_uint(p, TP_SEQ_FLAGS, SEQ_NEEDS_STATE);
    pb_begin(p, TP_TRACK_EVENT);
    pb_uint(p, TE_TYPE, (uint64_t)type);
    pb_uint(p, TE_TRACK_UUID, uuid);
    if (iid)
        pb_uint(p, TE_NAME_IID, iid);
    if (flow)
        pb_fixed64(p, TE_TERMINATING_FLOW_IDS, flow);
    pb_end(p);
    write_packet(x);
}

/* fdr:tunable (a controller set a tunable, recorder/self.h): its value on
 * a counter track of that tunable, "fdr:tunable.NAME", not on one track
 * "fdr:tunable.value" that would mix every tunable's. 0 when it is not
 * such an event (or 64 tunables have a track): the generic counters. */
static int pf_tunable(struct exporter *x, const struct fdr__rd_event *ev,
                      const struct fdr__field *fl, int nf)
{
    const struct fdr__field *nm;
    double d;
    if (!tunable_fields(fl, nf, &nm, &d))
        return 0;
    unsigned k = 0;
    while (k < x->ntun && !(x->tun[k].pid == ev->pid && strlen(x->tun[k].name) == nm->n &&
                            memcmp(x->tun[k].name, nm->s, nm->n) == 0))
        k++;
    struct pb *p = &x->pb;
    if (k == x->ntun) {
        if (k == sizeof x->tun / sizeof *x->tun)
            return 0;
        x->ntun++;
        x->tun[k].pid = ev->pid;
        memcpy(x->tun[k].name, nm->s, nm->n);
        x->tun[k].name[nm->n] = 0;
        x->tun[k].uuid = 3ull << 56 | ++x->next_counter;
        char track[128];
        snprintf(track, sizeof track, "fdr:tunable.%s", x->tun[k].name);
        pb_begin(p, TP_TRACK_DESC);
        pb_uint(p, TD_UUID, x->tun[k].uuid);
        pb_uint(p, TD_PARENT, proc_uuid(ev->pid));
        pb_str(p, TD_NAME, track);
        pb_begin(p, TD_COUNTER);
        pb_end(p);
        pb_end(p);
        write_packet(x);
    }
    pb_uint(p, TP_TIMESTAMP, ev->ns);
    pb_uint(p, TP_SEQ_ID, SEQ_ID);
    pb_uint(p, TP_SEQ_FLAGS, SEQ_NEEDS_STATE);
    pb_begin(p, TP_TRACK_EVENT);
    pb_uint(p, TE_TYPE, COUNTER);
    pb_uint(p, TE_TRACK_UUID, x->tun[k].uuid);
    pb_double(p, TE_DOUBLE_COUNTER_VALUE, d);
    pb_end(p);
    write_packet(x);
    return 1;
}

static void pf_event(struct exporter *x, const struct fdr__rd_event *ev, const char *name,
                     int kind, uint64_t track, const struct fdr__field *fl, int nf)
{
    struct pb *p = &x->pb;
    struct proc_state *ps = &x->ps[ev->proc->index];
    uint64_t *iid = &ps->iid[ev->c->id];
    if (kind == DRAW_ABEGIN && x->track_new)
        pf_async_track(x, ev, name, track);
    pb_uint(p, TP_TIMESTAMP, ev->ns);
    pb_uint(p, TP_SEQ_ID, SEQ_ID);
    pb_uint(p, TP_SEQ_FLAGS,
            x->events == 0 ? SEQ_CLEARED | SEQ_NEEDS_STATE : SEQ_NEEDS_STATE);
    if (!*iid) {
        *iid = ++x->next_iid;
        pb_begin(p, TP_INTERNED);
        pb_begin(p, ID_EVENT_NAMES);
        pb_uint(p, EN_IID, *iid);
        pb_str(p, EN_NAME, name);
        pb_end(p);
        pb_end(p);
    }
    static const int type[] = {INSTANT, SLICE_BEGIN, SLICE_END, SLICE_BEGIN, SLICE_END};
    pb_begin(p, TP_TRACK_EVENT);
    pb_uint(p, TE_TYPE, (uint64_t)type[kind]);
    pb_uint(p, TE_TRACK_UUID,
            kind >= DRAW_ABEGIN ? async_uuid(track) : thread_uuid(ev->pid, ev->tid));
    if (kind != DRAW_END && kind != DRAW_AEND)
        pb_uint(p, TE_NAME_IID, *iid);
    if (kind == DRAW_ABEGIN) /* to the end's thread, if another (export_all) */
        pb_fixed64(p, TE_FLOW_IDS, flow_id(x->seq));
    pf_annotations(p, fl, nf);
    pb_end(p);
    write_packet(x);
    if (strcmp(name, "fdr:tunable") == 0 && pf_tunable(x, ev, fl, nf))
        return;
    for (int i = x->marker; i < nf; i++) {
        double d;
        if (!fdr__field_number(&fl[i], &d))
            continue;
        uint64_t uuid = pf_counter(x, ev, i, fl[i].name);
        if (!uuid)
            continue;
        pb_uint(p, TP_TIMESTAMP, ev->ns);
        pb_uint(p, TP_SEQ_ID, SEQ_ID);
        pb_uint(p, TP_SEQ_FLAGS, SEQ_NEEDS_STATE);
        pb_begin(p, TP_TRACK_EVENT);
        pb_uint(p, TE_TYPE, COUNTER);
        pb_uint(p, TE_TRACK_UUID, uuid);
        if (fl[i].kind == FDR__FK_FLOAT ||
            (fl[i].kind == FDR__FK_UINT && fl[i].v.u > INT64_MAX))
            pb_double(p, TE_DOUBLE_COUNTER_VALUE, d);
        else
            pb_uint(p, TE_COUNTER_VALUE,
                    fl[i].kind == FDR__FK_INT ? (uint64_t)fl[i].v.i : fl[i].v.u);
        pb_end(p);
        write_packet(x);
    }
}

/* A clock snapshot before the first event: the packets' timestamps (the
 * trace's line time, taken as Perfetto's default clock, BOOTTIME) at the
 * first event, and the same moment as REALTIME (ns since the epoch, from
 * the trace's clock in its metadata), so that Perfetto shows absolute
 * times. Nothing when the metadata has no clock. */
static void pf_clock(struct exporter *x, const struct fdr__rd_event *ev)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/metadata", ev->proc->path);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    static char meta[1 << 20];
    size_t len = fread(meta, 1, sizeof meta - 1, f);
    fclose(f);
    meta[len] = 0;
    uint64_t freq, off;
    int64_t off_s;
    if (fdr__tsdl_clock(meta, len, &freq, &off_s, &off) < 0)
        return;
    uint64_t v = ev->ts + off;
    int64_t real = off_s * 1000000000 + (int64_t)(v / freq * 1000000000u) +
                   (int64_t)((double)(v % freq) * 1e9 / (double)freq);
    struct pb *p = &x->pb;
    pb_uint(p, TP_SEQ_ID, SEQ_ID);
    pb_begin(p, TP_CLOCK_SNAPSHOT);
    pb_begin(p, CS_CLOCKS);
    pb_uint(p, CK_ID, CLOCK_BOOTTIME_ID);
    pb_uint(p, CK_TIMESTAMP, ev->ns);
    pb_end(p);
    pb_begin(p, CS_CLOCKS);
    pb_uint(p, CK_ID, CLOCK_REALTIME_ID);
    pb_uint(p, CK_TIMESTAMP, (uint64_t)real);
    pb_end(p);
    pb_end(p);
    write_packet(x);
}

/* ---- the verb -------------------------------------------------------------- */

static int keep(struct exporter *x, const struct fdr__rd_event *ev)
{
    if (!x->rules)
        return 1;
    uint8_t *s = &x->sel[ev->proc->index][ev->c->id];
    if (!*s) {
        const struct fdr__classes *t = &ev->proc->classes;
        *s = off_pattern_match(x->rules, fdr__classes_str(t, ev->c->provider),
                               fdr__classes_str(t, ev->c->event))
                 ? 1
                 : 2;
    }
    return *s == 1;
}

/* A span that an event left without its end (spans.h): ended there. */
static void draw_closed(struct exporter *x, const struct fdr__rd_event *ev,
                        const struct span_closed *c)
{
    if (x->perfetto) {
        pf_mark(x, ev->ns,
                c->async ? async_uuid(c->track) : thread_uuid(ev->pid, ev->tid),
                SLICE_END, 0, 0);
        return;
    }
    const char *name = spans_name(x->spans, c->name)->name;
    json_sep(x);
    fputs("{\"name\":", x->out);
    off_json_str(x->out, name, strlen(name));
    fprintf(x->out, ",\"ph\":\"%s\",\"ts\":", c->async ? "e" : "E");
    json_ts(x, ev->ns);
    fprintf(x->out, ",\"pid\":%u,\"tid\":%u", ev->pid, ev->tid);
    if (c->async)
        fprintf(x->out, ",\"cat\":\"span\",\"id\":\"0x%llx\"",
                (unsigned long long)c->seq);
    fputs(",\"args\":{\"unended\":true}}", x->out);
}

static int export_all(struct exporter *x, struct off_diag *d)
{
    struct fdr__rd_event ev;
    struct fdr__field fl[FDR_MAX_FIELDS];
    struct progress bar;
    uint64_t seen = 0;
    progress_start(&bar, "export");
    if (!x->perfetto)
        fputs("{\"traceEvents\":[", x->out);
    while (fdr__reader_next(x->r, &ev) > 0) {
        if ((++seen & 0xfff) == 0) {
            uint64_t total, done = fdr__reader_stream_bytes_done(x->r, &total);
            progress_update(&bar, done, total);
        }
        if (!keep(x, &ev))
            continue;
        const struct fdr__classes *t = &ev.proc->classes;
        int nf = fdr__fields_decode(t, ev.c, ev.payload, ev.len, fl);
        if (nf < 0) {
            off_diag_fn(d, ev.proc->path, 0,
                        "an event's payload does not match its class");
            continue;
        }
        const char *evname = fdr__classes_str(t, ev.c->event);
        size_t base;
        int kind = slice_kind(evname, &base);
        int fresh;
        struct thread *th = thread_get(x, ev.pid, ev.tid, &fresh);
        struct span_step sp;
        if (!th || spans_feed(x->spans, &ev, &sp) < 0) {
            progress_end(&bar);
            return cli_fail(1, "export", "out of memory");
        }
        x->marker = sp.kind != SPAN_NONE;
        x->track_new = sp.track_new;
        x->seq = sp.seq;
        if (sp.kind) {
            static const int draw[] = {0, DRAW_BEGIN, DRAW_END, DRAW_ABEGIN, DRAW_AEND};
            kind = sp.kind == SPAN_BEGIN || sp.kind == SPAN_ABEGIN || sp.matched
                       ? draw[sp.kind]
                       : DRAW_INSTANT; /* an end without its begin */
            base = strlen(evname);
        } else {
            if (kind == 2 && th->depth == 0)
                kind = 0; /* an end without its begin: an instant */
            th->depth += kind == 1 ? 1u : kind == 2 ? (uint32_t)-1 : 0u;
        }
        struct proc_state *ps = &x->ps[ev.proc->index];
        int new_proc = !ps->announced;
        ps->announced = 1;
        snprintf(x->name, sizeof x->name, "%s:%.*s", fdr__classes_str(t, ev.c->provider),
                 (int)(kind ? base : strlen(evname)), evname);
        if (x->perfetto) {
            if (!x->events)
                pf_clock(x, &ev);
            pf_names(x, &ev, new_proc, fresh);
        } else
            json_names(x, &ev, new_proc, fresh);
        for (size_t i = 0; i < sp.n_closed; i++)
            draw_closed(x, &ev, &sp.closed[i]);
        if (x->perfetto) {
            pf_event(x, &ev, x->name, kind, sp.track, fl, nf);
            if (kind == DRAW_AEND && sp.begin_tid != ev.tid)
                pf_mark(x, ev.ns, thread_uuid(ev.pid, ev.tid), INSTANT,
                        x->ps[ev.proc->index].iid[ev.c->id], flow_id(sp.seq));
        } else {
            json_event(x, &ev, x->name, kind, sp.seq, fl, nf);
        }
        x->events++;
    }
    progress_end(&bar);
    if (!x->perfetto)
        fputs("\n],\"displayTimeUnit\":\"ns\"}\n", x->out);
    return 0;
}

static int export_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'F'},
        {"output", required_argument, NULL, 'o'},
        {"filter", required_argument, NULL, 'f'},
        {0, 0, 0, 0},
    };
    const char *format = NULL, *outpath = NULL, *filter = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
        switch (c) {
        case 'F':
            format = optarg;
            break;
        case 'o':
            outpath = optarg;
            break;
        case 'f':
            filter = optarg;
            break;
        case ':':
            return cli_fail(2, "export", "option '%s' needs a value (fdr help export)",
                            argv[optind - 1]);
        default:
            return cli_fail(2, "export", "unknown option '%s' (fdr help export)",
                            argv[optind - 1]);
        }
    }
    if (optind + 1 != argc) {
        cli_usage(stderr, "export");
        return 2;
    }
    if (!format)
        return cli_fail(2, "export", "--format perfetto or --format chrome is needed");
    struct exporter x;
    memset(&x, 0, sizeof x);
    if (strcmp(format, "perfetto") == 0)
        x.perfetto = 1;
    else if (strcmp(format, "chrome") != 0)
        return cli_fail(2, "export", "unknown format '%s' (perfetto or chrome)", format);
    if (!outpath)
        return cli_fail(2, "export", "-o OUT is needed (the file to write)");
    if (filter) {
        int st = off_pattern("export", "--filter", filter, 1, &x.rules);
        if (st)
            return st;
    }
    struct off_diag d = {"export", 0, 0};
    int st = off_open(argv[optind], &d, &x.r);
    if (st) {
        fdr__rules_free(x.rules);
        return st;
    }
    unsigned np = fdr__reader_procs(x.r);
    x.sel = calloc(np, sizeof *x.sel);
    x.ps = calloc(np, sizeof *x.ps);
    x.spans = spans_new();
    int ok = x.sel && x.ps && x.spans;
    for (unsigned i = 0; ok && i < np; i++) {
        unsigned n = fdr__reader_proc(x.r, i)->classes.n + 1u;
        ok = (x.sel[i] = calloc(n, 1)) &&
             (x.ps[i].iid = calloc(n, sizeof *x.ps[i].iid)) &&
             (x.ps[i].counter = calloc(n, sizeof *x.ps[i].counter));
    }
    if (!ok) {
        st = cli_fail(1, "export", "out of memory");
        goto done;
    }
    x.out = strcmp(outpath, "-") == 0 ? stdout : fopen(outpath, "w");
    if (!x.out) {
        st = cli_fail(1, "export", "cannot write '%s': %s", outpath, strerror(errno));
        goto done;
    }
    setvbuf(x.out, NULL, _IOFBF, 1 << 20);
    st = export_all(&x, &d);
    if ((ferror(x.out) | (x.out != stdout ? fclose(x.out) : fflush(x.out))) && !st)
        st = cli_fail(1, "export", "writing '%s': %s", outpath, strerror(errno));
    if (!st && d.count)
        st = 1;
done:
    for (unsigned i = 0; i < np; i++) {
        if (x.ps && x.ps[i].counter) {
            unsigned n = fdr__reader_proc(x.r, i)->classes.n + 1u;
            for (unsigned k = 0; k < n; k++)
                free(x.ps[i].counter[k]);
            free(x.ps[i].counter);
        }
        if (x.ps)
            free(x.ps[i].iid);
        if (x.sel)
            free(x.sel[i]);
    }
    free(x.ps);
    free(x.sel);
    free(x.threads);
    spans_free(x.spans);
    fdr__reader_close(x.r);
    fdr__rules_free(x.rules);
    return st;
}

const struct cli_verb cli_verbs_export[] = {
    {"export", export_run, "--format perfetto|chrome DIR -o OUT [--filter PATTERN]",
     "write a trace for Perfetto UI (protobuf) or chrome://tracing (JSON)",
     "Reads the trace in DIR (one process's <name>-<pid>/ or a directory of them)\n"
     "and writes it, streamed event by event, to OUT (- for standard output):\n"
     "  --format perfetto   Perfetto's native protobuf trace (open it in\n"
     "                      ui.perfetto.dev or trace_processor); for big traces\n"
     "  --format chrome     Chrome trace-event JSON (chrome://tracing, Perfetto)\n"
     "  --filter PATTERN    only the events the pattern selects (FDR_EVENTS syntax)\n"
     "Each process and thread is a track; spans (fdr/span.h) are slices, async\n"
     "ones on tracks of their own; events ending in _enter/_begin and\n"
     "_exit/_end are slices too, the others instants, with every field as an\n"
     "argument; each numeric field is also a counter track provider:event.field.\n"
     "Corrupt input is reported as one line per problem and skipped; the exit\n"
     "status is then 1.\n"},
    {0},
};
