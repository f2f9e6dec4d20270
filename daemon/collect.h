/* SPDX-License-Identifier: MIT */
/* collect.h - fdrd's data plane: the rings it gives processes, and their
 * packets written out (collect.c). */
#ifndef FDRD_COLLECT_H
#define FDRD_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

struct fdrd_server;
struct fdrd_client;
struct fdrd_trace;
struct fdrd_route;

/* Rings one process gets for one trace: one per thread; their memory is
 * bounded by the trace's budget (fdr__ring_budget), their number by this. */
#define FDRD_ROUTE_RINGS_MAX 4096

/* What a client that sent CLASSES holds for collection. */
struct fdrd_collect {
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
/* The client is gone (however it ended): everything it committed is
 * written out, its open packets up to their last committed event. */
void fdrd_collect_release(struct fdrd_client *c);
/* Writes out the closed packets of every ring of every client (discard
 * mode traces; flight-recorder traces are written at their end). */
void fdrd_collect_pass(struct fdrd_server *s);
/* 1 when some ring may need writing out (the loop then wakes up often). */
int fdrd_collect_busy(const struct fdrd_server *s);

#endif
