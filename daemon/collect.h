/* SPDX-License-Identifier: MIT */
/* collect.h - fdrd's data plane: the rings it gives processes, and their
 * packets written out (collect.c). */
#ifndef FDRD_COLLECT_H
#define FDRD_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "common/validate.h"
#include "proto/proto.h"

struct fdrd_server;
struct fdrd_client;
struct fdrd_trace;
struct fdrd_route;

/* Rings one process gets for one trace: one per thread; their memory is
 * bounded by the trace's budget (fdr__ring_budget), their number by this. */
#define FDRD_ROUTE_RINGS_MAX 4096

/* A process's own ring (OWN_RING), mapped read-only: what its threads
 * recorded before their route, copied by fdrd if the process ends before
 * handing it over (collect.c, early_out). */
struct fdrd_own {
    const struct fdr__buf_hdr *h;
    struct fdr__ring_geom g; /* as the message said, checked against the memfd */
};
#define FDRD_OWN_MAX FDR_PROTO_OWN_MAX /* own rings kept per process */
/* The largest (FDR_BUFFER_SIZE's bound, 2 GiB, and the header page): what
 * fdrd reads of a process that ended stays bounded. */
#define FDRD_OWN_SIZE_MAX ((1ull << 31) + 4096)
/* Stream numbers of the copies: above any ring fdrd gives (FDRD_ROUTE_RINGS_MAX). */
#define FDRD_OWN_STREAM (1u << 24)
/* Stream numbers of the counts a process sent (LOST): above the copies';
 * at most FDRD_LOST_MAX per route (a process sends one at its end). */
#define FDRD_LOST_STREAM (1u << 25)
#define FDRD_LOST_MAX 64

/* What a client that sent CLASSES holds for collection. */
struct fdrd_collect {
    struct fdrd_own own[FDRD_OWN_MAX];
    unsigned nown;
    void *classes; /* its class table, mapped read-only */
    uint64_t classes_size;
    struct fdr__msg_classes params;                /* clock, uuid */
    struct fdrd_route *routes;                     /* one per trace it recorded into */
    struct fdrd_route *slot[FDR_PROTO_TRACES_MAX]; /* those it records into now */
};

/* CLASSES from a client (fd taken): maps the table; then routes the client
 * into an active trace, if there is one. 0, or -1 to drop the client. */
int fdrd_collect_classes(struct fdrd_server *s, struct fdrd_client *c,
                         const struct fdr__msg_classes *m, int fd);
/* NEED_BUFFERS from a client. */
void fdrd_collect_need(struct fdrd_server *s, struct fdrd_client *c,
                       const struct fdr__msg_need_buffers *m);
/* A trace was started: every client records into it (too). */
void fdrd_collect_started(struct fdrd_server *s, struct fdrd_trace *t);
/* A started trace's selection or filter mask changed: its clients are told. */
void fdrd_collect_changed(struct fdrd_server *s, struct fdrd_trace *t);
/* A trace was stopped: its clients stop recording into it; what they
 * recorded is still written out. */
void fdrd_collect_stopped(struct fdrd_server *s, struct fdrd_trace *t);
/* A trace is about to be destroyed: everything of it is written out, the
 * open packets too, and its rings unmapped. */
void fdrd_collect_destroyed(struct fdrd_server *s, struct fdrd_trace *t);
/* `fdr snapshot`: a copy of what every ring of trace t holds now, its
 * writers running on, in outdir ("": <trace outdir>/snapshot-N-DATE-TIME,
 * made). 0 with the directory in msg, or a positive errno and a message. */
int fdrd_collect_snapshot(struct fdrd_server *s, struct fdrd_trace *t, const char *outdir,
                          char *msg, size_t cap);
/* OWN_RING from a client (fd taken): kept mapped while it lives. */
void fdrd_collect_own_ring(struct fdrd_client *c, const struct fdr__msg_own_ring *m,
                           int fd);
/* The client is gone (however it ended): everything it committed is
 * written out, its open packets up to their last committed event; and
 * what its threads recorded before a route that wanted it (BACKFILL)
 * and did not hand over, from its own rings. */
void fdrd_collect_release(struct fdrd_server *s, struct fdrd_client *c);
/* Writes out the closed packets of every ring of every client (discard
 * mode traces; flight-recorder traces are written at their end). */
void fdrd_collect_pass(struct fdrd_server *s);
/* DEAD_RING: a process that registered again after fdrd was killed
 * counted a dead ring's packets from m->consumed on as discarded: they
 * are cut from that ring's stream file, where a write cut short may have
 * left some (docs/daemon.md, "When fdrd dies"). */
void fdrd_collect_dead_ring(struct fdrd_server *s, struct fdrd_client *c,
                            const struct fdr__msg_dead_ring *m);
/* LOST: events a process lost to one of its routes with no ring of it to
 * count them in (it held none when it ended: libfdr's buffer.c,
 * route_lost), written at once as discarded in an empty packet of their
 * thread, in a stream of their own (stream_<FDRD_LOST_STREAM + k>). -1
 * for a message no process sends (not its route, an impossible count, too
 * many): the client is dropped. */
int fdrd_collect_lost(struct fdrd_client *c, const struct fdr__msg_lost *m);
/* 1 when some ring may need writing out (the loop then wakes up often). */
int fdrd_collect_busy(const struct fdrd_server *s);

#endif
