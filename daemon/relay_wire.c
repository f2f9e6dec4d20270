/* SPDX-License-Identifier: MIT */
/* relay_wire.c - the only file that knows lttng-relayd's wire protocol.
 *
 * fdrd is a producer for an unmodified lttng-relayd (lttng-tools 2.10 or
 * later), the role LTTng's consumer daemon plays. Two TCP connections:
 * control (default port 5342: commands, each answered by a fixed reply)
 * and data (5343: packets, no reply). We announce protocol 2.10 and use
 * the lower of that and relayd's minor, so relayd reads the layouts
 * below (its 2.4 session, 2.2 stream and 2.8 index layouts). The layouts
 * were learnt from lttng-tools' sources (src/common/sessiond-comm/
 * relayd.hpp, src/bin/lttng-relayd/main.cpp); this is our own code.
 * EVERY integer is big-endian; structs are packed (no padding anywhere).
 *
 * Control message = header + payload:
 *   0 circuit_id u64 (0) | 8 data_size u64 (payload bytes) |
 *   16 cmd u32 | 20 cmd_version u32 (0) | 24 payload
 * Data message (data socket) = header + data_size bytes + padding zeros:
 *   0 circuit_id u64 | 8 stream_id u64 | 16 net_seq_num u64 |
 *   24 data_size u32 | 28 padding_size u32 | 32 packet bytes
 *
 *   cmd                 payload                              reply
 *   5  VERSION          0 major u32 | 4 minor u32 | 8         major u32, minor u32
 *   2  CREATE_SESSION   0 name[255] | 255 hostname[64] |      session_id u64,
 *      (2.4)            319 live_timer u32 (µs, 0: not live)| ret_code u32
 *                       323 snapshot u32 | 327
 *   1  ADD_STREAM       0 channel[264] | 264 path[4096] |     handle u64 (stream
 *      (2.2)            4360 tracefile_size u64 (0) |         id), ret_code u32
 *                       4368 tracefile_count u64 (0) | 4376
 *   16 STREAMS_SENT     (none): publishes the streams added   ret_code u32
 *                       so far to live viewers
 *   6  SEND_METADATA    0 stream_id u64 | 8 padding u32 |     (none)
 *                       12 text (appended to the stream) | padding zeros
 *   13 SEND_INDEX       ten u64: relay stream id, net_seq_num, ret_code u32
 *      (2.8)            packet_size, content_size (bits),
 *                       timestamp_begin, timestamp_end, events_discarded,
 *                       stream_id, stream_instance_id, packet_seq_num | 80
 *   7  CLOSE_STREAM     0 stream_id u64 | 8 last_net_seq_num u64 | 16 ret_code u32
 *
 * ret_code 10 is LTTNG_OK; anything else is a refusal. An index is paired
 * with the data message of the same stream and net_seq_num (0, 1, ... per
 * stream). An index with packet_size 0 is a live beacon: "nothing up to
 * timestamp_end". A relay session lives as long as its control connection.
 *
 * Bounds: every socket has SO_SNDTIMEO and SO_RCVTIMEO (the connection's
 * timeout), so a relayd that stops reading or answering costs at most
 * that per call, never a hang; a short, closed or malformed reply is an
 * error (-EPROTO, -ETIMEDOUT, -ECONNRESET), never a crash. */
#define _GNU_SOURCE
#include "relay_wire.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    CMD_ADD_STREAM = 1,
    CMD_CREATE_SESSION = 2,
    CMD_VERSION = 5,
    CMD_SEND_METADATA = 6,
    CMD_CLOSE_STREAM = 7,
    CMD_SEND_INDEX = 13,
    CMD_STREAMS_SENT = 16,
};
#define RELAY_OK 10
#define OUR_MAJOR 2
#define OUR_MINOR 10
#define MIN_MINOR 8 /* the index with stream_instance_id and packet_seq_num */

#define SESSION_NAME_LEN 255
#define HOSTNAME_LEN 64
#define CHANNEL_LEN 264
#define PATH_LEN 4096

/* ---- bytes ------------------------------------------------------------------ */

static char *put32(char *p, uint32_t v)
{
    v = htobe32(v);
    memcpy(p, &v, 4);
    return p + 4;
}

static char *put64(char *p, uint64_t v)
{
    v = htobe64(v);
    memcpy(p, &v, 8);
    return p + 8;
}

static uint32_t get32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return be32toh(v);
}

static uint64_t get64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return be64toh(v);
}

/* Copies s into a NUL-padded field of cap bytes; -ENAMETOOLONG if it does
 * not fit with its NUL. */
static int put_str(char *p, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n >= cap)
        return -ENAMETOOLONG;
    memset(p, 0, cap);
    memcpy(p, s, n);
    return 0;
}

/* ---- sockets ---------------------------------------------------------------- */

static int sock_error(int e)
{
    return e == EAGAIN || e == EWOULDBLOCK ? -ETIMEDOUT : -e;
}

/* Sends all of iov (changed). */
static int send_all(int fd, struct iovec *iov, int n, int more)
{
    while (n > 0) {
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t k = sendmsg(fd, &mh, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return sock_error(errno);
        }
        while (n > 0 && (size_t)k >= iov->iov_len) {
            k -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
    return 0;
}

/* Reads exactly n bytes of a reply. */
static int recv_all(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = recv(fd, (char *)buf + got, n - got, 0);
        if (k == 0)
            return -ECONNRESET;
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return sock_error(errno);
        }
        got += (size_t)k;
    }
    return 0;
}

static int set_timeouts(int fd, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
        return -errno;
    return 0;
}

/* A connected TCP socket to host:port within ms, or -errno. */
static int dial(const char *host, unsigned port, int ms, char *why, size_t cap)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res;
    char serv[16];
    snprintf(serv, sizeof serv, "%u", port);
    int g = getaddrinfo(host, serv, &hints, &res);
    if (g != 0) {
        snprintf(why, cap, "cannot resolve '%s': %s", host, gai_strerror(g));
        return -EHOSTUNREACH;
    }
    int err = -ECONNREFUSED;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            err = -errno;
            continue;
        }
        int rc = connect(fd, a->ai_addr, a->ai_addrlen);
        if (rc < 0 && errno == EINPROGRESS) {
            struct pollfd p = {fd, POLLOUT, 0};
            int soerr = 0;
            socklen_t len = sizeof soerr;
            rc = poll(&p, 1, ms);
            if (rc == 0)
                errno = ETIMEDOUT, rc = -1;
            else if (rc > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 &&
                     soerr)
                errno = soerr, rc = -1;
            else if (rc > 0)
                rc = 0;
        }
        if (rc == 0) {
            int one = 1;
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            if (set_timeouts(fd, ms) == 0) {
                freeaddrinfo(res);
                return fd;
            }
        }
        err = -errno;
        close(fd);
    }
    freeaddrinfo(res);
    snprintf(why, cap, "cannot connect to %s port %u: %s", host, port, strerror(-err));
    return err;
}

/* ---- control commands --------------------------------------------------------- */

/* Sends command `cmd` with payload[0..len) and, when reply_len, reads the
 * reply into reply[0..reply_len). */
static int command(struct fdrd_relay_conn *c, uint32_t cmd, const void *payload,
                   size_t len, void *reply, size_t reply_len)
{
    char hdr[24];
    char *p = put64(hdr, 0);
    p = put64(p, len);
    p = put32(p, cmd);
    put32(p, 0);
    struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)payload, len}};
    int rc = send_all(c->ctl, iov, len ? 2 : 1, 0);
    if (rc == 0 && reply_len)
        rc = recv_all(c->ctl, reply, reply_len);
    return rc;
}

/* A command whose reply is a ret_code alone. */
static int command_ok(struct fdrd_relay_conn *c, uint32_t cmd, const void *payload,
                      size_t len)
{
    char r[4];
    int rc = command(c, cmd, payload, len, r, sizeof r);
    if (rc == 0 && get32(r) != RELAY_OK)
        rc = -EPROTO;
    return rc;
}

int fdrd_relay_connect(struct fdrd_relay_conn *c, const char *host, unsigned ctl_port,
                       unsigned data_port, int timeout_ms, char *why, size_t cap)
{
    c->ctl = c->data = -1;
    c->timeout_ms = timeout_ms;
    c->session = 0;
    snprintf(why, cap, "?");
    int fd = dial(host, ctl_port, timeout_ms, why, cap);
    if (fd < 0)
        return fd;
    c->ctl = fd;
    fd = dial(host, data_port, timeout_ms, why, cap);
    if (fd < 0) {
        fdrd_relay_disconnect(c);
        return fd;
    }
    c->data = fd;
    char v[8], r[8];
    put32(put32(v, OUR_MAJOR), OUR_MINOR);
    int rc = command(c, CMD_VERSION, v, sizeof v, r, sizeof r);
    if (rc < 0) {
        snprintf(why, cap, "%s:%u does not answer as lttng-relayd (%s)", host, ctl_port,
                 strerror(-rc));
        fdrd_relay_disconnect(c);
        return rc;
    }
    uint32_t major = get32(r), minor = get32(r + 4);
    c->minor = minor < OUR_MINOR ? minor : OUR_MINOR;
    if (major != OUR_MAJOR || c->minor < MIN_MINOR) {
        snprintf(why, cap, "%s:%u speaks relayd protocol %u.%u; fdrd needs 2.%u or later",
                 host, ctl_port, major, minor, MIN_MINOR);
        fdrd_relay_disconnect(c);
        return -EPROTO;
    }
    return 0;
}

int fdrd_relay_create_session(struct fdrd_relay_conn *c, const char *name,
                              const char *hostname, uint32_t live_us)
{
    char m[SESSION_NAME_LEN + HOSTNAME_LEN + 8], r[12];
    if (put_str(m, SESSION_NAME_LEN, name) < 0)
        return -ENAMETOOLONG;
    /* A longer host name is cut: relayd only names a directory with it. */
    memset(m + SESSION_NAME_LEN, 0, HOSTNAME_LEN);
    memcpy(m + SESSION_NAME_LEN, hostname, strnlen(hostname, HOSTNAME_LEN - 1));
    put32(put32(m + SESSION_NAME_LEN + HOSTNAME_LEN, live_us), 0);
    int rc = command(c, CMD_CREATE_SESSION, m, sizeof m, r, sizeof r);
    if (rc == 0 && get32(r + 8) != RELAY_OK)
        rc = -EPROTO;
    if (rc == 0)
        c->session = get64(r);
    return rc;
}

int fdrd_relay_add_stream(struct fdrd_relay_conn *c, const char *channel,
                          const char *path, uint64_t *id)
{
    static __thread char m[CHANNEL_LEN + PATH_LEN + 16]; /* 4 KiB: not on the stack */
    char r[12];
    if (put_str(m, CHANNEL_LEN, channel) < 0 ||
        put_str(m + CHANNEL_LEN, PATH_LEN, path) < 0)
        return -ENAMETOOLONG;
    put64(put64(m + CHANNEL_LEN + PATH_LEN, 0), 0);
    int rc = command(c, CMD_ADD_STREAM, m, sizeof m, r, sizeof r);
    if (rc == 0 && get32(r + 8) != RELAY_OK)
        rc = -EPROTO;
    if (rc == 0)
        *id = get64(r);
    return rc;
}

int fdrd_relay_streams_sent(struct fdrd_relay_conn *c)
{
    return command_ok(c, CMD_STREAMS_SENT, NULL, 0);
}

int fdrd_relay_metadata(struct fdrd_relay_conn *c, uint64_t id, const void *text,
                        size_t len)
{
    char hdr[24 + 12];
    char *p = put64(hdr, 0);
    p = put64(p, 12 + len);
    p = put32(p, CMD_SEND_METADATA);
    p = put32(p, 0);
    p = put64(p, id);
    put32(p, 0);
    struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)text, len}};
    return send_all(c->ctl, iov, 2, 0);
}

int fdrd_relay_data(struct fdrd_relay_conn *c, uint64_t id, uint64_t seq, const void *hdr,
                    size_t hdr_len, int fd, off_t at, size_t body_len)
{
    if (hdr_len + body_len > UINT32_MAX)
        return -EMSGSIZE;
    char h[32];
    char *p = put64(h, 0);
    p = put64(p, id);
    p = put64(p, seq);
    p = put32(p, (uint32_t)(hdr_len + body_len));
    put32(p, 0);
    struct iovec iov[2] = {{h, sizeof h}, {(void *)hdr, hdr_len}};
    int rc = send_all(c->data, iov, 2, body_len > 0);
    while (rc == 0 && body_len > 0) {
        ssize_t k = sendfile(c->data, fd, &at, body_len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            rc = sock_error(errno);
        else if (k == 0)
            rc = -EIO; /* the file is shorter than it was */
        else
            body_len -= (size_t)k;
    }
    return rc;
}

int fdrd_relay_index(struct fdrd_relay_conn *c, const struct fdrd_relay_index *x)
{
    char m[80];
    const uint64_t v[10] = {x->relay_stream_id, x->net_seq_num, x->packet_size,
                            x->content_size,    x->ts_begin,    x->ts_end,
                            x->discarded,       x->stream_id,   x->stream_instance_id,
                            x->packet_seq_num};
    char *p = m;
    for (int i = 0; i < 10; i++)
        p = put64(p, v[i]);
    return command_ok(c, CMD_SEND_INDEX, m, sizeof m);
}

int fdrd_relay_close_stream(struct fdrd_relay_conn *c, uint64_t id, uint64_t last)
{
    char m[16];
    put64(put64(m, id), last);
    return command_ok(c, CMD_CLOSE_STREAM, m, sizeof m);
}

void fdrd_relay_disconnect(struct fdrd_relay_conn *c)
{
    if (c->ctl >= 0)
        close(c->ctl);
    if (c->data >= 0)
        close(c->data);
    c->ctl = c->data = -1;
}
