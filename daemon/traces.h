/* SPDX-License-Identifier: MIT */
/* traces.h - fdrd's traces (sessions): at most 32, each with its settings. */
#ifndef FDRD_TRACES_H
#define FDRD_TRACES_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"
#include "relay.h"

#define FDRD_BUFFER_DEFAULT (1u << 20)
/* A discard trace's rings with the default size grow to this for the
 * threads that fill them (collect.c, route_spare). */
#define FDRD_GROW_DEFAULT (8u << 20)
#define FDRD_PACKET_DEFAULT (64u << 10)
#define FDRD_PACKET_MIN (4u << 10)
#define FDRD_PACKET_MAX (16u << 20)
#define FDRD_BUFFER_MAX (1ull << 30)
/* The rings of one process in one trace (common/ring.h, fdr__ring_budget). */
#define FDRD_MEMORY_DEFAULT (256ull << 20)
#define FDRD_MEMORY_MAX (1ull << 40)

struct fdrd_trace {
    uint32_t id; /* unique for fdrd's life: routes name it (collect.c) */
    char name[FDR_PROTO_NAME_CAP];
    char outdir[FDR_PROTO_PATH_CAP];
    uint32_t mode, mask, active;
    uint64_t buffer_size, packet_size;
    /* Discard traces with the default ring: what a thread that fills its
     * ring moves to (collect.c, route_spare), else 0 (no growth). */
    uint64_t grow_size;
    uint64_t memory;                 /* ring budget of one process */
    uint32_t snapshots;              /* taken so far, to name the next */
    uint32_t nitems, len;            /* the event selection: */
    char items[FDR_PROTO_ITEMS_CAP]; /* nitems NUL-terminated items */
    struct fdrd_relay_opts relay_opts;
    struct fdrd_relay *relay; /* its sender thread (relay.c), NULL if not streamed */
    int spool;                /* outdir is fdrd's spool for relayd: removed at destroy */
    uint32_t pid;             /* only this process is routed into it; 0: every one */
    unsigned long owner;      /* an ephemeral trace: its creator's client id, else 0 */
    int buf_fd;               /* file-backed buffers (bufdir.c), or -1 */
    char buffers[FDR_PROTO_PATH_CAP]; /* their directory, or "" */
};

struct fdrd_traces {
    struct fdrd_trace *t[FDR_PROTO_TRACES_MAX]; /* in creation order */
    unsigned n;
    const char *home;   /* for default output directories */
    const char *rundir; /* for spool directories of streamed traces (RUNDIR/spool)
                           and default buffer directories (bufdir.c) */
};

/* Each operation returns 0, or a positive errno value with a one-line
 * message (what follows "fdr VERB: ") in msg[0..cap). create says in msg
 * where the buffer directory is when the trace has one. */
int fdrd_traces_create(struct fdrd_traces *ts, const struct fdr__msg_create *m, char *msg,
                       size_t cap);
/* Appends items (enable) or their negations (disable: every rule off). */
int fdrd_traces_items(struct fdrd_traces *ts, const struct fdr__msg_items *m, int disable,
                      char *msg, size_t cap);
int fdrd_traces_filter(struct fdrd_traces *ts, const char *name, uint32_t mask, char *msg,
                       size_t cap);
int fdrd_traces_activate(struct fdrd_traces *ts, const char *name, int active, char *msg,
                         size_t cap);
int fdrd_traces_destroy(struct fdrd_traces *ts, const char *name, char *msg, size_t cap);
unsigned fdrd_traces_active(const struct fdrd_traces *ts);
/* Gives t the id it had under an fdrd that was killed (persist.c), so that
 * the programs that held routes into it find it again; not when another
 * trace has that id. */
void fdrd_traces_keep_id(struct fdrd_traces *ts, struct fdrd_trace *t, uint32_t id);
/* The trace named `name`, or NULL. */
struct fdrd_trace *fdrd_traces_find(struct fdrd_traces *ts, const char *name);
void fdrd_traces_free(struct fdrd_traces *ts);

#endif
