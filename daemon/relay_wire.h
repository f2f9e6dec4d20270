/* SPDX-License-Identifier: MIT */
/* relay_wire.h - lttng-relayd's network protocol, the producer's side
 * (relay_wire.c draws every byte). One connection = one relayd session.
 * Every call returns 0 or a negative errno; after an error the connection
 * is unusable (close it and make a new one). No call blocks longer than
 * the connection's timeout per send or reply. */
#ifndef FDRD_RELAY_WIRE_H
#define FDRD_RELAY_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FDRD_RELAY_CONTROL_PORT 5342
#define FDRD_RELAY_DATA_PORT 5343
#define FDRD_RELAY_NO_SEQ UINT64_MAX

struct fdrd_relay_conn {
    int ctl, data;    /* control and data sockets, -1 when closed */
    int timeout_ms;   /* per send, per reply */
    uint32_t minor;   /* protocol minor version both use */
    uint64_t session; /* relayd's session id */
};

/* The index relayd keeps per packet (host values; sent big-endian). */
struct fdrd_relay_index {
    uint64_t relay_stream_id, net_seq_num;
    uint64_t packet_size, content_size; /* bits */
    uint64_t ts_begin, ts_end, discarded;
    uint64_t stream_id, stream_instance_id, packet_seq_num;
};

/* Connects both sockets to host (name or address) within timeout_ms each
 * and exchanges versions. On error, a one-line reason in why[0..cap). */
int fdrd_relay_connect(struct fdrd_relay_conn *c, const char *host, unsigned ctl_port,
                       unsigned data_port, int timeout_ms, char *why, size_t cap);
/* CREATE_SESSION: name, hostname, live timer in µs (0: not live). */
int fdrd_relay_create_session(struct fdrd_relay_conn *c, const char *name,
                              const char *hostname, uint32_t live_us);
/* ADD_STREAM: relayd's id of the new stream in *id. */
int fdrd_relay_add_stream(struct fdrd_relay_conn *c, const char *channel,
                          const char *path, uint64_t *id);
int fdrd_relay_streams_sent(struct fdrd_relay_conn *c);
/* SEND_METADATA: appends text[0..len) to metadata stream `id`. */
int fdrd_relay_metadata(struct fdrd_relay_conn *c, uint64_t id, const void *text,
                        size_t len);
/* One data packet on the data socket: hdr[0..hdr_len) from memory, then
 * body_len bytes of file fd from offset `at` (sendfile, no copy). */
int fdrd_relay_data(struct fdrd_relay_conn *c, uint64_t id, uint64_t seq, const void *hdr,
                    size_t hdr_len, int fd, off_t at, size_t body_len);
/* SEND_INDEX (a beacon when packet_size is 0). */
int fdrd_relay_index(struct fdrd_relay_conn *c, const struct fdrd_relay_index *x);
/* CLOSE_STREAM: last is the last net_seq_num sent (FDRD_RELAY_NO_SEQ for
 * none, and for a metadata stream). */
int fdrd_relay_close_stream(struct fdrd_relay_conn *c, uint64_t id, uint64_t last);
/* Closes both sockets (no message). */
void fdrd_relay_disconnect(struct fdrd_relay_conn *c);

#endif
