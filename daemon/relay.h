/* SPDX-License-Identifier: MIT */
/* relay.h - a trace's directory streamed to lttng-relayd by a thread of
 * its own (relay.c). */
#ifndef FDRD_RELAY_H
#define FDRD_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

struct fdrd_relay;

struct fdrd_relay_opts {
    char host[FDR_PROTO_HOST_CAP];
    unsigned ctl_port, data_port; /* 0: relayd's defaults */
    uint32_t live_us;             /* 0: not live */
};

enum {
    FDRD_RELAY_NONE = 0,
    FDRD_RELAY_CONNECTED = 1,
    FDRD_RELAY_RETRYING = 2,
    FDRD_RELAY_STOPPED = 3,
};

struct fdrd_relay_stats {
    uint64_t bytes, packets, discarded;
    uint32_t state, sessions;
};

/* Connects to relayd and opens a relay session named `name` (bounded by a
 * few seconds), then starts the thread that sends what appears in `dir`.
 * 0 and *out, or a positive errno with a one-line message in msg. */
int fdrd_relay_start(struct fdrd_relay **out, const char *name, const char *dir,
                     const struct fdrd_relay_opts *o, char *msg, size_t cap);
/* Sends what remains in the directory (if relayd is there), closes the
 * relay streams, joins and frees the thread. NULL is a no-op. */
void fdrd_relay_stop(struct fdrd_relay *r);
/* The counters now (any thread). */
void fdrd_relay_stats(const struct fdrd_relay *r, struct fdrd_relay_stats *out);

#endif
