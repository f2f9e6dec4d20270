/* SPDX-License-Identifier: MIT */
/* server.c - fdrd's event loop: one thread, poll(), non-blocking sockets.
 *
 * Everything fdrd does happens here, in turn: a signal (SIGTERM, SIGINT
 * through a signalfd: a clean stop), a new connection, a message from a
 * client, room to send queued replies. No client can stall the others:
 * every socket is non-blocking, and no call waits for a client.
 *
 * DESIGN.
 *   - Accept: the peer's credentials come from the kernel (SO_PEERCRED);
 *     a peer of another uid is refused and closed with the log line
 *     "refused connection from uid U pid P" before it is read. Beyond
 *     FDRD_CLIENTS_MAX connections a new one is refused the same way
 *     ("too many clients"); idle connections are allowed until then.
 *   - Input: the socket is SOCK_SEQPACKET, so a message arrives whole or
 *     not at all: one shared receive buffer serves every client, and a
 *     client costs no input memory however it sends (the kernel bounds
 *     what it may queue). One message per client per turn, so a chatty
 *     client cannot starve the rest. Each message goes through
 *     fdr__proto_recv (fds: at most FDR_PROTO_FDS_MAX, closed on any
 *     anomaly) and fdr__proto_check; a client that sends anything invalid
 *     is logged with the reason and dropped.
 *   - Output: every message to a client (replies, and collect.c's rings,
 *     doorbells and routes, with their fds) goes through one queue per
 *     client (fdrd_server_send_fds): sent at once while the queue is
 *     empty; what a full socket does not take (EAGAIN: a process that is
 *     busy, descheduled or stopped reads later) waits, in order, and is
 *     sent when poll() says the socket is writable. Never dropped for a
 *     full socket: a process must not miss a route or a ring. Bounded:
 *     FDRD_OUTQ_MAX bytes and FDRD_OUTQ_FDS fds per client, and
 *     FDRD_OUTQ_FDS_ALL fds for all (a queued fd is fdrd's until sent;
 *     main.c raises the fd limit for them), past which the client is
 *     dropped with a log line ("reads nothing fdrd sends"). A route's selection still
 * queued is replaced by a newer one (its key), so that a trace changed again and again
 * costs a stopped process one message per route, not one per change. No time bound: a
 * process stopped in a debugger for an hour keeps its trace. The client is not read until
 * its queue is empty: what it asks cannot pile up replies (libfdr reads while it waits to
 * send, so both sides never wait on each other).
 *   - A connection is a process: when it ends, however (exit, SIGKILL:
 *     the kernel hangs it up), its provider references are dropped.
 * Memory is bounded: clients x (struct fdrd_client + its queue). */
#define _GNU_SOURCE
#include "server.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "counter.h"
#include "log.h"

struct fdrd_outmsg {
    struct fdrd_outmsg *next;
    size_t len;
    uint32_t key; /* a newer message of the same key replaces it; 0: none */
    int nfds;
    int fds[FDR_PROTO_FDS_MAX]; /* owned by the queue until sent */
    unsigned char data[];
};

/* Accepts one connection, or refuses it with a log line. Returns 1 when
 * there may be more to accept, 0 when there is none (or accept failed). */
static int accept_one(struct fdrd_server *s)
{
    int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE)
            fdrd_log("accept: %s", strerror(errno));
        return errno == EINTR || errno == ECONNABORTED;
    }
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
        fdrd_log("refused connection: no peer credentials (%s)", strerror(errno));
        close(fd);
        return 1;
    }
    if (cr.uid != geteuid()) {
        fdrd_log("refused connection from uid %lu pid %ld", (unsigned long)cr.uid,
                 (long)cr.pid);
        close(fd);
        return 1;
    }
    if (s->nclients >= s->max_clients) {
        fdrd_log("refused connection from pid %ld: too many clients (%u)", (long)cr.pid,
                 s->max_clients);
        close(fd);
        return 1;
    }
    struct fdrd_client *c = calloc(1, sizeof *c);
    if (!c) {
        fdrd_log("refused connection from pid %ld: out of memory", (long)cr.pid);
        close(fd);
        return 1;
    }
    c->fd = fd;
    c->id = ++s->next_id;
    c->pid = cr.pid;
    c->uid = cr.uid;
    s->clients[s->nclients++] = c;
    return 1;
}

static void drop_queue(struct fdrd_server *s, struct fdrd_client *c)
{
    s->out_fds -= c->out_fds;
    while (c->out_head) {
        struct fdrd_outmsg *m = c->out_head;
        c->out_head = m->next;
        fdr__proto_close_fds(m->fds, m->nfds);
        free(m);
    }
    c->out_tail = NULL;
    c->out_bytes = 0;
    c->out_fds = 0;
}

static int read_one(struct fdrd_server *s, struct fdrd_client *c);

static void close_client(struct fdrd_server *s, unsigned i)
{
    struct fdrd_client *c = s->clients[i];
    /* A process that went away may have sent more than was read (its
     * class table, its own rings): read to the end unless it broke the
     * protocol, so that what it recorded before a route is not lost. */
    for (int k = 0; k < 1024 && c->dead && !c->bad && read_one(s, c) > 0; k++)
        ;
    fdrd_collect_release(s, c); /* everything it committed, to disk */
    fdrd_client_release(s, c);
    drop_queue(s, c);
    close(c->fd);
    free(c);
    s->clients[i] = s->clients[--s->nclients];
}

/* Drops c for a queue past its bounds, saying so. */
static int queue_full(const struct fdrd_server *s, struct fdrd_client *c, size_t len,
                      int nfds)
{
    fdrd_log("client %lu (pid %ld): reads nothing fdrd sends (%zu bytes and %u fds "
             "queued, %zu and %d more; %u fds queued for all clients); dropped",
             c->id, (long)c->pid, c->out_bytes, c->out_fds, len, nfds,
             s ? s->out_fds : 0);
    c->dead = 1;
    return -1;
}

int fdrd_server_send_fds(struct fdrd_server *s, struct fdrd_client *c, const void *msg,
                         size_t len, int *fds, int nfds, uint32_t key)
{
    if (c->dead || nfds < 0 || nfds > FDR_PROTO_FDS_MAX) {
        fdr__proto_close_fds(fds, nfds);
        return -1;
    }
    if (!c->out_head) {
        int rc = fdr__proto_send(c->fd, msg, len, fds, nfds);
        if (rc == 0) {
            fdr__proto_close_fds(fds, nfds); /* the process has its copies */
            return 0;
        }
        if (rc != -EAGAIN) {
            fdr__proto_close_fds(fds, nfds);
            c->dead = 1; /* the peer went away: not worth a line */
            return -1;
        }
    }
    /* A queued message of the same key (a route's selection) is
     * superseded: the process needs only the newest, so a process that
     * reads nothing for a while costs one message per route, however
     * often the trace changes meanwhile. It takes the old one's place. */
    struct fdrd_outmsg **at = &c->out_head, *old = NULL;
    if (key)
        for (; *at; at = &(*at)->next)
            if ((*at)->key == key) {
                old = *at;
                break;
            }
    size_t bytes = c->out_bytes - (old ? old->len : 0);
    unsigned nf = c->out_fds - (old ? (unsigned)old->nfds : 0);
    /* Queued fds are fdrd's own descriptors until sent: bounded per
     * client and in all, within the fd limit main.c leaves for them. */
    if (bytes + len > FDRD_OUTQ_MAX || nf + (unsigned)nfds > FDRD_OUTQ_FDS ||
        (nfds && s->out_fds + (unsigned)nfds > s->max_out_fds)) {
        fdr__proto_close_fds(fds, nfds);
        return queue_full(s, c, len, nfds);
    }
    struct fdrd_outmsg *m = malloc(sizeof *m + len);
    if (!m) {
        fdr__proto_close_fds(fds, nfds);
        fdrd_log("client %lu (pid %ld): out of memory for a message; dropped", c->id,
                 (long)c->pid);
        c->dead = 1;
        return -1;
    }
    m->len = len;
    m->key = key;
    m->nfds = nfds;
    for (int k = 0; k < nfds; k++)
        m->fds[k] = fds[k];
    memcpy(m->data, msg, len);
    if (old) {
        m->next = old->next;
        *at = m;
        if (c->out_tail == old)
            c->out_tail = m;
        fdr__proto_close_fds(old->fds, old->nfds);
        free(old);
    } else {
        m->next = NULL;
        if (c->out_tail)
            c->out_tail->next = m;
        else
            c->out_head = m;
        c->out_tail = m;
    }
    c->out_bytes = bytes + len;
    if (s)
        s->out_fds += nf + (unsigned)nfds - c->out_fds;
    c->out_fds = nf + (unsigned)nfds;
    return 0;
}

void fdrd_server_send(struct fdrd_server *s, struct fdrd_client *c, const void *msg,
                      size_t len)
{
    fdrd_server_send_fds(s, c, msg, len, NULL, 0, 0);
}

/* Sends what c's queue holds, in order, while its socket takes it. */
static void flush_out(struct fdrd_server *s, struct fdrd_client *c)
{
    while (c->out_head) {
        struct fdrd_outmsg *m = c->out_head;
        int rc = fdr__proto_send(c->fd, m->data, m->len, m->fds, m->nfds);
        if (rc == -EAGAIN)
            return;
        if (rc < 0) {
            c->dead = 1;
            return;
        }
        c->out_head = m->next;
        if (!c->out_head)
            c->out_tail = NULL;
        c->out_bytes -= m->len;
        c->out_fds -= (unsigned)m->nfds;
        s->out_fds -= (unsigned)m->nfds;
        fdr__proto_close_fds(m->fds, m->nfds);
        free(m);
    }
}

/* Reads and handles one message: 1, or 0 when there was none (or the
 * connection ended). */
static int read_one(struct fdrd_server *s, struct fdrd_client *c)
{
    int fds[FDR_PROTO_FDS_MAX], nfds = 0;
    long n = fdr__proto_recv(c->fd, s->rx, sizeof s->rx, fds, &nfds, FDR_PROTO_FDS_MAX);
    if (n == -EAGAIN)
        return 0;
    if (n == 0) {
        c->dead = 1; /* hung up, everything read: an ordinary end */
        return 0;
    }
    if (n == -ECONNRESET) {
        /* Hung up with some of fdrd's messages unread (the rings it sent
         * last): the socket says so once, ahead of what the process sent
         * before it went, still queued and read next (close_client). Taken
         * for the end when poll said hang-up without "writable" (fdrd's
         * queued messages not yet freed), those were dropped: the LOST a
         * process sends at exit, 1 run in 4 (fdr-daemon-lost, ASan). */
        c->dead = 1;
        return 1;
    }
    c->bad = 1; /* until the message passes */
    if (n < 0) {
        fdrd_log("client %lu (pid %ld): bad message (%s); dropped", c->id, (long)c->pid,
                 n == -EMSGSIZE  ? "longer than 64 KiB"
                 : n == -EBADMSG ? "unexpected control data or fds"
                                 : strerror((int)-n));
        c->dead = 1;
        return 0;
    }
    char why[200];
    if (fdr__proto_check(s->rx, (size_t)n, nfds, why, sizeof why) < 0) {
        fdr__proto_close_fds(fds, nfds);
        fdrd_log("client %lu (pid %ld): bad message (%s); dropped", c->id, (long)c->pid,
                 why);
        c->dead = 1;
        return 0;
    }
    c->bad = 0;
    /* Only CLASSES and OWN_RING carry an fd (fdr__proto_check let through
     * only types whose count matched): any other is closed all the same. */
    const struct fdr__msg_hdr *h = (const void *)s->rx;
    if (h->type == FDR__MSG_OWN_RING && nfds == 1) {
        fdrd_collect_own_ring(c, (const void *)s->rx, fds[0]);
        return 1;
    }
    if (h->type == FDR__MSG_CLASSES && nfds == 1) {
        if (fdrd_collect_classes(s, c, (const void *)s->rx, fds[0]) < 0) {
            c->bad = c->dead = 1;
            return 0;
        }
        /* After the routes of the started traces: the process then knows
         * it has them all (libfdr's registration window, buffer.h). */
        struct fdr__msg_reply r;
        memset(&r, 0, sizeof r);
        fdr__proto_init(&r, sizeof r, FDR__MSG_REPLY, h->seq);
        fdrd_server_send(s, c, &r, sizeof r);
        return 1;
    }
    fdr__proto_close_fds(fds, nfds);
    if (fdrd_dispatch(s, c, s->rx, (size_t)n) < 0)
        c->bad = c->dead = 1;
    return 1;
}

int fdrd_server_run(struct fdrd_server *s)
{
    struct pollfd *pfd = calloc(s->max_clients + 3, sizeof *pfd);
    s->bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    s->clients = calloc(s->max_clients, sizeof *s->clients);
    if (!pfd || !s->clients || s->bell < 0) {
        fdrd_log("out of memory");
        free(pfd);
        return 1;
    }
    for (;;) {
        pfd[0] = (struct pollfd){s->signal_fd, POLLIN, 0};
        pfd[1] = (struct pollfd){s->listen_fd, POLLIN, 0};
        unsigned n = s->nclients;
        for (unsigned i = 0; i < n; i++)
            pfd[i + 2] = (struct pollfd){s->clients[i]->fd,
                                         s->clients[i]->out_head ? POLLOUT : POLLIN, 0};
        /* The doorbell: a process's ring is half full. */
        pfd[n + 2] = (struct pollfd){s->bell, POLLIN, 0};
        int busy = fdrd_collect_busy(s), due = fdrd_counter_tick();
        int wait = busy ? 100 : -1;
        if (due >= 0 && (wait < 0 || due < wait))
            wait = due; /* the counter's measure, rewritten (counter.c) */
        if (poll(pfd, n + 3, wait) < 0) {
            if (errno == EINTR)
                continue;
            fdrd_log("poll: %s", strerror(errno));
            break;
        }
        if (pfd[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(s->signal_fd, &si, sizeof si) == (ssize_t)sizeof si) {
                fdrd_log("signal %u: stopping", si.ssi_signo);
                break;
            }
        }
        /* Clients first (the array is only appended to by accept below). */
        for (unsigned i = 0; i < n; i++) {
            struct fdrd_client *c = s->clients[i];
            short ev = pfd[i + 2].revents;
            if (ev & POLLOUT)
                flush_out(s, c);
            else if (ev & POLLIN)
                read_one(s, c);
            else if (ev & (POLLHUP | POLLERR | POLLNVAL))
                c->dead = 1;
        }
        if (pfd[n + 2].revents & POLLIN) {
            uint64_t v;
            ssize_t k = read(s->bell, &v, sizeof v);
            (void)k;
        }
        if (busy)
            fdrd_collect_pass(s);
        for (unsigned i = s->nclients; i-- > 0;)
            if (s->clients[i]->dead)
                close_client(s, i);
        if (pfd[1].revents & POLLIN)
            for (int k = 0; k < 64 && accept_one(s); k++)
                ;
    }
    while (s->nclients)
        close_client(s, s->nclients - 1); /* everything written out */
    close(s->bell);
    free(s->clients);
    s->clients = NULL;
    free(pfd);
    return 0;
}
