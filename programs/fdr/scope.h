/* SPDX-License-Identifier: MIT */
/* scope.h - what the files of `fdr scope` share (programs/fdr only).
 *
 * The idea: one reader (a thread that tails a live trace's stream files,
 * or a replay that reads a whole trace directory) puts what it decodes
 * into one store, the "db" (scope_series.c): per event class its counts,
 * per numeric field (and per thread) a bounded history of (t, v) points,
 * the newest events raw for the tail. Web clients (scope_http.c) only
 * read the store, each with cursors of its own, under one mutex held for
 * short copies; nothing a browser does can make the reader wait. Bounds:
 * SCOPE_SERIES_MAX series of SCOPE_POINTS points, SCOPE_TAIL raw events,
 * SCOPE_EVENTS_MAX classes, SCOPE_PROCS_MAX processes. */
#ifndef FDR_PROGRAMS_SCOPE_H
#define FDR_PROGRAMS_SCOPE_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "common/classes.h"
#include "common/tsdl.h"

#define SCOPE_SERIES_MAX 512    /* series of all kinds */
#define SCOPE_SERIES_MERGED 384 /* per-thread series only below this many */
#define SCOPE_POINTS 4096       /* points kept per series */
#define SCOPE_TAIL 1024         /* raw events kept for the tail */
#define SCOPE_TAIL_PAYLOAD 240  /* payload bytes kept per raw event */
#define SCOPE_EVENTS_MAX 4096   /* provider:event classes */
#define SCOPE_PROCS_MAX 64      /* processes of the trace */
#define SCOPE_THREADS_MAX 1024  /* threads listed */
#define SCOPE_TUNABLES_MAX 256  /* tunables listed */
#define SCOPE_STREAMS_MAX 16    /* SSE streams at once */
#define SCOPE_STREAM_FIELDS 32  /* fields per stream */

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
};

struct scope_event {
    char *provider, *event, *format;
    unsigned nfields;
    struct scope_field fields[FDR_MAX_FIELDS];
    uint64_t count, count_mark; /* count_mark: at the last rate tick */
    double rate;
    int recorded, printed; /* 1, 0, or -1 unknown */
};

struct scope_series {
    char key[200];
    struct scope_point *ring; /* SCOPE_POINTS */
    uint64_t head;            /* points ever stored; ring[(head-1) % N] newest */
    uint32_t n;               /* points held (<= SCOPE_POINTS) */
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
    int *ev; /* class id -> event index (-1 not resolved yet) */
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
    double window;   /* seconds of history a chart shows */
    double slice_dt; /* live: seconds per slice (0: every point as it is) */
    /* what /api/info says */
    const char *mode;
    char target[512];
    uint32_t pid;
    int running, control;
    /* the store */
    struct scope_event *events[SCOPE_EVENTS_MAX];
    unsigned nevents;
    struct scope_series *series[SCOPE_SERIES_MAX];
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
    } threads[SCOPE_THREADS_MAX];
    unsigned nthreads;
    struct scope_tail_ent *tail; /* SCOPE_TAIL */
    uint64_t tail_head;
    struct scope_tunable tunables[SCOPE_TUNABLES_MAX];
    unsigned ntunables;
    uint64_t discarded;
    uint64_t errors; /* packets or events refused */
};

/* scope_series.c: the store. Functions marked "locked" want db->mu held. */
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
/* A thread seen (locked): listed in /api/events. */
void scope_db_thread(struct scope_db *db, uint32_t pid, uint32_t tid);
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
/* An event by "prov:ev" (locked): index or -1. */
int scope_db_event_find(struct scope_db *db, const char *id);

/* scope_tail.c: the readers. */
struct scope_tail;
/* Tails the trace directory dir, once it exists (its <name>-<pid>/ subdirectories) in a
 * thread of its own; punch: free what was read (the scope's own trace). */
int scope_tail_start(struct scope_db *db, const char *dir, int punch,
                     struct scope_tail **out);
void scope_tail_stop(struct scope_tail *t);
/* Reads the trace directory dir whole into db (replay). 0, or an exit
 * status after one error line. */
int scope_replay(struct scope_db *db, const char *dir);
/* The clock of the trace dir/metadata into proc (locked). */
void scope_read_clock(struct scope_db *db, int proc, int dirfd);

/* scope_http.c: the web server. */
struct scope_http;
struct scope_ctl; /* scope.c: control of the program through fdrd */
/* Serves db on bind:port (port 0: any free). Prints nothing; 0 and *out
 * with the port in *port_out, or -1 with *why. */
int scope_http_start(struct scope_db *db, struct scope_ctl *ctl, const char *bind,
                     unsigned port, const char *token, struct scope_http **out,
                     unsigned *port_out, const char **why);
void scope_http_stop(struct scope_http *h);

/* scope.c: a control from the page. Returns an HTTP status (200, 400,
 * 409) and a one-line reason in why. */
int scope_ctl_apply(struct scope_ctl *ctl, struct scope_db *db, const char *what,
                    const char *event, const char *on, const char *name,
                    const char *value, char *why, size_t cap);

/* scope_embed.c (generated): the files of web/. */
struct scope_file {
    const char *name;
    const unsigned char *data;
    size_t size;
};
extern const struct scope_file scope_files[];

#endif
