/* SPDX-License-Identifier: MIT */
/* server.h - fdrd's event loop, its clients, and what dispatch.c needs of
 * them. */
#ifndef FDRD_SERVER_H
#define FDRD_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "collect.h"
#include "proto/proto.h"
#include "providers.h"
#include "traces.h"

#define FDRD_CLIENTS_MAX 4096    /* connections at once; more are refused */
#define FDRD_OUTQ_MAX (4u << 20) /* bytes queued for one client (server.c) */
#define FDRD_OUTQ_FDS 256u       /* fds queued for one client (rings, doorbells) */
#define FDRD_OUTQ_FDS_ALL 1024u  /* fds queued for all clients, at most */
#define FDRD_CLIENT_PROVIDERS FDR_PROVIDER_MAX

struct fdrd_outmsg;

struct fdrd_client {
    int fd;
    unsigned long id; /* 1, 2, ...: names the client in log lines */
    pid_t pid;        /* SO_PEERCRED at connect: what the kernel says */
    uid_t uid;
    int registered;                        /* sent REGISTER_PROCESS: a process, listed */
    struct fdr__msg_register_process info; /* what it said of itself */
    uint32_t handles[FDRD_CLIENT_PROVIDERS]; /* providers it holds a reference to */
    unsigned nhandles;
    struct fdrd_outmsg *out_head, *out_tail; /* what the socket did not take yet */
    size_t out_bytes;
    unsigned out_fds;
    int dead;                     /* drop at the end of this loop turn */
    int bad;                      /* it broke the protocol: read nothing more */
    struct fdrd_collect *col;     /* its class table and routes (collect.c); NULL
                                     until it sends CLASSES: idle clients stay small */
    struct fdr__msg_state *state; /* the last STATE it sent (malloc'd), or NULL */
    uint32_t controls;            /* CONTROLs passed to it (their numbers) */
};

struct fdrd_server {
    int listen_fd, signal_fd;
    int bell; /* eventfd: a process's ring is half full (collect.c) */
    const char *rundir;
    struct fdrd_client **clients;
    unsigned nclients, max_clients;
    unsigned out_fds,
        max_out_fds; /* fds queued for all clients, their bound (main.c:
                      * what the fd limit leaves, FDRD_OUTQ_FDS_ALL at most) */
    unsigned long next_id;
    struct fdrd_traces traces;
    struct fdrd_providers providers;
    time_t started;
    uint64_t rx[FDR_PROTO_MSG_MAX / 8]; /* the one receive buffer (aligned) */
    uint64_t tx[FDR_PROTO_MSG_MAX / 8]; /* replies are built here */
};

/* Runs until SIGTERM or SIGINT arrives on signal_fd. Returns 0. */
int fdrd_server_run(struct fdrd_server *s);

/* Sends one message to c with nfds fds (owned by the call: closed once
 * sent, or when c is dropped), or queues it behind what c's socket did
 * not take yet: messages reach c in the order of these calls. A nonzero
 * key replaces a queued message of the same key (in its place). 0, or -1
 * when c is gone or its queue passed FDRD_OUTQ_MAX bytes or FDRD_OUTQ_FDS
 * fds, or all queues s->max_out_fds fds (c is then marked dead, with a
 * log line). s may be NULL when nfds is 0. */
int fdrd_server_send_fds(struct fdrd_server *s, struct fdrd_client *c, const void *msg,
                         size_t len, int *fds, int nfds, uint32_t key);

/* fdrd_server_send_fds without fds or key: a reply. */
void fdrd_server_send(struct fdrd_server *s, struct fdrd_client *c, const void *msg,
                      size_t len);

/* dispatch.c: handles one checked message from c. Returns 0, or -1 when
 * the client broke the protocol (c is then dropped). */
int fdrd_dispatch(struct fdrd_server *s, struct fdrd_client *c, const void *msg,
                  size_t len);

/* dispatch.c: drops every provider reference c holds, its state, and
 * the ephemeral traces it created. */
void fdrd_client_release(struct fdrd_server *s, struct fdrd_client *c);

#endif
