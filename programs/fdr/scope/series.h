/* SPDX-License-Identifier: MIT */
/* series.h - the store of `fdr scope` (series.c), the one thing its
 * reader (tail.c) and its web server (http.c) share: data flows one way,
 * tail -> series -> http, and scope.c (the verb) wires them.
 *
 * The idea: one reader (a thread that tails a live trace's stream files,
 * or a replay that reads a whole trace directory) puts what it decodes
 * into one store, the "db" (series.c): per event class its counts,
 * per numeric field (and per thread) a bounded history of (t, v) points,
 * the newest events raw for the tail. Web clients (http.c) only
 * read the store, each with cursors of its own, under one mutex held for
 * short copies; nothing a browser does can make the reader wait. Bounds:
 * SCOPE_SERIES_MAX series of SCOPE_POINTS points, SCOPE_TAIL raw events,
 * SCOPE_EVENTS_MAX classes, SCOPE_PROCS_MAX processes. */
#ifndef FDR_PROGRAMS_SCOPE_SERIES_H
#define FDR_PROGRAMS_SCOPE_SERIES_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "common/classes.h"
#include "common/tsdl.h"

#define SCOPE_SERIES_MAX 512            /* series of all kinds */
#define SCOPE_SERIES_MERGED 384         /* per-thread series only below this many */
#define SCOPE_POINTS 4096               /* points kept per series (live) */
#define SCOPE_REPLAY_POINTS (32u << 20) /* replay: points of all series */
#define SCOPE_BLOCK 256                 /* replay: points per block of extremes */
#define SCOPE_TAIL 1024                 /* raw events kept for the tail */
#define SCOPE_TAIL_PERIOD 512           /* live: at most this many per tail period */
#define SCOPE_TAIL_NS 100000000         /* live: a tail period, 100 ms */
#define SCOPE_TAIL_PAYLOAD 240          /* payload bytes kept per raw event */
#define SCOPE_EVENTS_MAX 4096           /* provider:event classes */
#define SCOPE_PROCS_MAX 64              /* processes of the trace */
#define SCOPE_THREADS_MAX 1024          /* threads listed */
#define SCOPE_TUNABLES_MAX 256          /* tunables listed */
#define SCOPE_STREAMS_MAX 16            /* SSE streams at once */
#define SCOPE_STREAM_FIELDS 32          /* fields per stream */
#define SCOPE_EVENT_FIELDS (FDR_MAX_FIELDS + 32) /* fdr:tunable: one per tunable */
#define SCOPE_HIST 496 /* a span's histogram: buckets (scope_hist_bucket) */

/* A growable text buffer (JSON replies, SSE messages). */
struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
};
void sb_printf(struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sb_add(struct sbuf *b, const char *s, size_t n);
/* s (at most n bytes, up to a NUL) as a JSON string. */
void sb_json(struct sbuf *b, const char *s, size_t n);
/* A double as JSON (null when not finite). */
void sb_num(struct sbuf *b, double v);
void sb_free(struct sbuf *b);

struct scope_point {
    double t, v;
};

struct scope_field {
    char name[64];
    const char *type; /* "int", "uint", "float", "string", "other" */
    int numeric;
    int series; /* merged series index, -1 none yet, -2 refused (cap) */
    /* Replay: the one thread whose events it had so far (one = 1), or
     * several (one = 2): while one thread, its per-thread series is the
     * merged one (not stored twice: a big trace's points fill memory). */
    int one;
    uint32_t tid1;
};

struct scope_event {
    char *provider, *event, *format;
    unsigned nfields;
    struct scope_field fields[SCOPE_EVENT_FIELDS];
    uint64_t count, count_mark; /* count_mark: at the last rate tick */
    double rate;
    int recorded, printed; /* 1, 0, or -1 unknown */
    unsigned span_field;   /* a span's (fdr/span.h): its field "span_ns" + 1 */
    /* fdr:tunable (a controller set a tunable: recorder/self.h): its fields
     * name and value (+ 1) are not plotted; each tunable is a field of its
     * own instead, `fdr:tunable.NAME`, its values over time. */
    unsigned tn_name, tn_value;
    /* A span's durations, every one since the reader began (not thinned
     * as a series is): counts per scope_hist_bucket; NULL before the
     * first. */
    uint64_t *hist;
    uint64_t hist_n;
};

struct scope_series {
    char key[200];
    /* Live: a ring of SCOPE_POINTS. Replay: every point in time order
     * (head == n), grown while the replay's budget allows, then thinned. */
    struct scope_point *ring;
    uint64_t head; /* points ever stored; ring[(head-1) % cap] newest */
    uint32_t n;    /* points held (<= cap) */
    uint32_t cap;  /* points allocated */
    int thinned;   /* replay: the budget was reached, points were merged */
    int alias;     /* replay: 1 + the series whose points these are, 0 none */
    /* Replay, once read: per block of SCOPE_BLOCK points, the index of its
     * first minimum and of its first maximum (blk[2i], blk[2i + 1]), so
     * that a range's M4 costs its columns, not its points (NULL: none). */
    uint32_t *blk;
    int mapped; /* replay: ring is a mapping of its own (series.c, grow) */
    /* The time slice being filled: up to two points as they are, or (when
     * more came) the min and the max of the slice. */
    int64_t slice;
    unsigned acc; /* events in the slice so far (0: none) */
    struct scope_point a, b;
};

struct scope_proc {
    uint32_t pid;
    char *cbuf; /* the class file's bytes, viewed by classes */
    struct fdr__classes classes;
    struct fdr__line_clock line;
    uint64_t freq, clk_off; /* the trace clock (metadata) */
    int64_t clk_off_s;
    int have_clock;
    uint64_t sec_q, sec_base; /* series.c, seconds(): the last whole second */
    int *ev;                  /* class id -> event index (-1 not resolved yet) */
    uint32_t nev;
};

struct scope_tail_ent {
    uint16_t proc, cls;
    uint16_t len; /* payload bytes kept */
    uint32_t tid;
    uint64_t ns;
    char tname[16];
    char payload[SCOPE_TAIL_PAYLOAD];
};

struct scope_tunable {
    char name[64];
    int is_double, has_range;
    double value, min, max, def;
    long long ivalue, imin, imax, idef;
};

struct scope_db {
    pthread_mutex_t mu;
    pthread_cond_t cond; /* broadcast at every tick */
    uint64_t ticks;
    int replay, done, stopping;
    double window;         /* seconds of history a chart shows */
    double slice_dt;       /* live: seconds per slice (0: every point as it is) */
    uint64_t points_alloc; /* replay: points allocated (SCOPE_REPLAY_POINTS) */
    /* what /api/info says */
    const char *mode;
    char target[512];
    uint32_t pid;
    int running, control;
    /* the store */
    struct scope_event *events[SCOPE_EVENTS_MAX];
    unsigned nevents;
    struct scope_series *series[SCOPE_SERIES_MAX];
    struct spans *spans; /* pairs span begins and ends (spans.h) */
    unsigned nseries;
    uint64_t series_refused;
    struct scope_proc *procs[SCOPE_PROCS_MAX];
    unsigned nprocs;
    struct {
        uint32_t key; /* (event index << 8 | field) + 1, 0 empty */
        uint32_t tid;
        int series;
    } tmap[4 * SCOPE_SERIES_MAX];
    struct {
        uint32_t pid, tid;
        char name[16]; /* the thread's name (not NUL-terminated when 16) */
    } threads[SCOPE_THREADS_MAX];
    unsigned nthreads;
    /* The tail: live, the events of each period of SCOPE_TAIL_NS are an
     * even sample (a reservoir of SCOPE_TAIL_PERIOD) of all of them,
     * sorted by time when the period closes; streams read only closed
     * periods, [0, tail_pub). A replay keeps the newest SCOPE_TAIL. */
    struct scope_tail_ent *tail; /* SCOPE_TAIL */
    uint64_t tail_head, tail_open, tail_pub;
    uint64_t tail_seen;    /* events offered to the open period */
    uint64_t tail_offered; /* events offered to the tail, closed periods */
    uint64_t tail_kept;    /* of them, kept in the ring */
    uint64_t tail_open_ns; /* CLOCK_MONOTONIC when the open period began */
    uint64_t rand;         /* xorshift state of the reservoir */
    struct scope_tunable tunables[SCOPE_TUNABLES_MAX];
    unsigned ntunables;
    uint64_t discarded;
    uint64_t errors; /* packets or events refused */
};

/* The store. Functions marked "locked" want db->mu held. */
int scope_db_init(struct scope_db *db, int replay, double window);
void scope_db_free(struct scope_db *db);
/* A process (locked): its index, created when new (-1 when full). */
int scope_db_proc(struct scope_db *db, uint32_t pid);
/* Replaces a process's class file (locked). buf (malloc'd) is owned from
 * now on; 0, or -1 (buf freed) when it is not a class file. */
int scope_db_classes(struct scope_db *db, int proc, char *buf, size_t len);
/* The clock of a process from its metadata text (locked). */
void scope_db_clock(struct scope_db *db, int proc, const char *meta, size_t len);
/* One event (locked). ns: line time (for the tail). */
void scope_db_event(struct scope_db *db, int proc, const struct fdr__class *c,
                    uint32_t pid, uint32_t tid, const char *tname, uint64_t ts,
                    uint64_t ns, const char *payload, size_t len);
/* A thread seen, with its name (16 bytes, NUL-padded; NULL: unknown)
 * (locked): listed in /api/events. */
void scope_db_thread(struct scope_db *db, uint32_t pid, uint32_t tid, const char *name);
/* The end of a replay (locked): the per-thread series of fields that had
 * one thread are made, as aliases of their merged series. */
void scope_db_replay_end(struct scope_db *db);
/* End of a batch (locked): slices flushed, streams woken. */
void scope_db_tick(struct scope_db *db);
/* Once a second (locked): rates. */
void scope_db_second(struct scope_db *db, double seconds);
/* The program's state lines (client_state's text) into events/tunables
 * (locked). */
void scope_db_state(struct scope_db *db, const char *text);
/* /api/events JSON (locked). */
void scope_db_events_json(struct scope_db *db, struct sbuf *b);
/* A series by key (locked): its index or -1. */
int scope_db_find(struct scope_db *db, const char *key);
/* Copies the points of series s from *next on into out (at most cap, the
 * newest when more; older than the ring are skipped); advances *next.
 * Returns the number copied (locked). */
size_t scope_db_points(struct scope_db *db, int s, uint64_t *next,
                       struct scope_point *out, size_t cap);
/* M4: the time-sorted points p[0..n) cut into `width` columns of
 * [t0, t1] (points outside go to the first or last column), each reduced
 * to its first, minimum, maximum and last point, in time order, so that
 * no extreme and no edge is lost at any zoom. out (room for 4 * width;
 * it may be p itself) gets them; returns how many. */
size_t scope_m4(const struct scope_point *p, size_t n, double t0, double t1,
                unsigned width, struct scope_point *out);
/* Replay (locked): the points of series si over [t0, t1] with the one
 * before and the one after (lines enter the view), as they are when
 * there are at most 4 * width, else reduced by scope_m4. out has room for
 * 4 * width + 2. *raw says which, *thinned whether the series was
 * thinned for the memory budget. */
size_t scope_db_range(struct scope_db *db, int si, double t0, double t1, unsigned width,
                      struct scope_point *out, int *raw, int *thinned);
/* The histogram buckets of span durations: log-spaced, 8 per power of
 * two (a bucket is at most 1/8 of its lower bound wide): ns 0..7 one
 * each, then for v >= 8 with e = floor(log2 v), bucket 8 + 8 (e - 3) +
 * the 3 bits of v below its top bit. Integers only, so a test computes
 * the same buckets from a trace's durations. */
unsigned scope_hist_bucket(uint64_t ns);
/* Bucket i holds [*lo, *hi) ns. */
void scope_hist_bounds(unsigned i, uint64_t *lo, uint64_t *hi);
/* /api/hist JSON of the span event ei (locked): its count and its
 * buckets that are not empty, as [lo, hi, count]. */
void scope_db_hist_json(struct scope_db *db, int ei, struct sbuf *b);
/* An event by "prov:ev" (locked): index or -1. */
int scope_db_event_find(struct scope_db *db, const char *id);

#endif
