/* SPDX-License-Identifier: MIT */
/* gate.c - the scope's door: a connection reaches the web server
 * (http.c, libmicrohttpd) only once it has sent the token.
 *
 * Why: the scope listens on a TCP port any local user can reach, and the
 * server has a few dozen connection slots, each a thread. Connections
 * that open and never finish their request would take every slot and
 * keep the page's own requests out (70 of them did, for the 30 s of the
 * server's timeout). So the gate, one thread, accepts every connection
 * itself and holds it, without a thread, until its first bytes (peeked,
 * MSG_PEEK: left for the server to read) contain the token; then hands it
 * to the server (MHD_add_connection), which checks the request properly
 * (the token in constant time, where it is, and everything else). The
 * server's slots are therefore only ever taken by clients that know the
 * token: the user's page.
 *
 * What the gate holds instead is cheap (a descriptor and 40 bytes) and
 * bounded: a connection without the token after GATE_NS (15 s) is
 * closed. Not sooner: a browser opens connections ahead of its requests
 * and keeps an unused one up to 10 s (Chromium); one the gate had closed
 * after a second failed the page's next request
 * (net::ERR_SOCKET_NOT_CONNECTED, scope-hist at load 15: a browser slow to
 * use what it opened). One whose request ended (a blank line) without it is
 * answered 403, one that reached 8 KiB without it 431, as the server would
 * (then closed when the client is done sending or its time is up); when
 * no descriptor or slot is left, the oldest held connection is closed to make room for
 * the new one (a page's request arrives within milliseconds of its connect, so it is
 * never the oldest). This is not HTTP parsing: the gate only looks for
 * the token's bytes and the end of the headers.
 *
 * Edge-triggered epoll: a connection is looked at again only when more of
 * it arrived, never in a loop over bytes already seen. */
#define _GNU_SOURCE
#include "gate.h"
#include "common/io.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define GATE_NS 15000000000ull /* the time a connection has to show the token */
#define PEEK_MAX 8192         /* the server's limit on headers, too */
#define HELD_MAX 16384

struct held {
    int fd;      /* -1: free */
    int refused; /* answered: what it still sends is read and dropped */
    uint64_t since;
    struct sockaddr_storage addr;
    socklen_t alen;
};

struct scope_gate {
    int lfd, ep, stop;
    char token[80];
    size_t token_len;
    scope_gate_pass pass;
    void *arg;
    pthread_t th;
    struct held *held;
    unsigned cap, n;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void drop(struct scope_gate *g, unsigned i)
{
    close(g->held[i].fd); /* also leaves the epoll set */
    g->held[i].fd = -1;
    g->n--;
}

/* Answers `no` (a whole HTTP response) and keeps the connection only to
 * read what the client still sends. */
static void refuse(struct scope_gate *g, unsigned i, const char *no, size_t len)
{
    ssize_t w = send(g->held[i].fd, no, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)w; /* a client that cannot take 150 bytes gets nothing */
    shutdown(g->held[i].fd, SHUT_WR);
    /* kept until the client closes (or its time is up), its body read:
     * closing with unread bytes would reset the connection, and the
     * client could lose the answer */
    g->held[i].refused = 1;
}

/* What connection i sent so far decides: to the server, 403, or wait. */
static void look(struct scope_gate *g, unsigned i)
{
    static char buf[PEEK_MAX]; /* the gate's thread only */
    if (g->held[i].refused) {
        ssize_t n;
        while ((n = recv(g->held[i].fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
            ;
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            drop(g, i);
        return;
    }
    ssize_t n = recv(g->held[i].fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        drop(g, i); /* closed before its request, or failed */
        return;
    }
    if (memmem(buf, (size_t)n, g->token, g->token_len)) {
        struct held h = g->held[i];
        epoll_ctl(g->ep, EPOLL_CTL_DEL, h.fd, NULL);
        g->held[i].fd = -1;
        g->n--;
        g->pass(g->arg, h.fd, (const struct sockaddr *)&h.addr, h.alen);
        return;
    }
    /* the server's answers to the same requests: its limit on headers
     * (8 KiB), then the token */
    static const char big[] = "HTTP/1.1 431 Request Header Fields Too Large\r\n"
                              "Content-Type: text/plain\r\n"
                              "Content-Length: 26\r\n"
                              "Connection: close\r\n\r\n"
                              "request headers too large\n";
    static const char no[] = "HTTP/1.1 403 Forbidden\r\n"
                             "Content-Type: text/plain\r\n"
                             "Content-Length: 35\r\n"
                             "Connection: close\r\n\r\n"
                             "forbidden: a valid token is needed\n";
    if (n == (ssize_t)sizeof buf)
        refuse(g, i, big, sizeof big - 1);
    else if (memmem(buf, (size_t)n, "\r\n\r\n", 4) || memmem(buf, (size_t)n, "\n\n", 2))
        refuse(g, i, no, sizeof no - 1);
    else
        return;
    look(g, i); /* reads what was only peeked */
}

static unsigned oldest(const struct scope_gate *g)
{
    unsigned best = 0;
    uint64_t t = UINT64_MAX;
    for (unsigned i = 0; i < g->cap; i++)
        if (g->held[i].fd >= 0 && g->held[i].since < t)
            t = g->held[i].since, best = i;
    return best;
}

static void take(struct scope_gate *g)
{
    for (int k = 0; k < 1024; k++) {
        if (g->n == g->cap)
            drop(g, oldest(g));
        struct held h = {.alen = sizeof h.addr};
        h.fd = accept4(g->lfd, (struct sockaddr *)&h.addr, &h.alen,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (h.fd < 0) {
            if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                 errno == ENOMEM) &&
                g->n) {
                drop(g, oldest(g)); /* room for the newest */
                continue;
            }
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return; /* EAGAIN: all taken; anything else: next time */
        }
        h.since = now_ns();
        unsigned i = 0;
        while (g->held[i].fd >= 0)
            i++;
        g->held[i] = h;
        g->n++;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET,
                                 .data.u32 = i + 2};
        if (epoll_ctl(g->ep, EPOLL_CTL_ADD, h.fd, &ev) < 0)
            drop(g, i);
        else
            look(g, i); /* the request may be there already */
    }
}

static void *run(void *arg)
{
    struct scope_gate *g = arg;
    struct epoll_event ev[256];
    uint64_t swept = now_ns();
    for (;;) {
        int n = epoll_wait(g->ep, ev, 256, 100);
        for (int k = 0; k < n; k++) {
            uint32_t id = ev[k].data.u32;
            if (id == 0)
                take(g);
            else if (id == 1)
                goto out;
            else if (g->held[id - 2].fd >= 0)
                look(g, id - 2);
        }
        uint64_t now = now_ns();
        if (now - swept >= GATE_NS / 10) {
            swept = now;
            for (unsigned i = 0; i < g->cap; i++)
                if (g->held[i].fd >= 0 && now - g->held[i].since >= GATE_NS)
                    drop(g, i);
        }
    }
out:
    for (unsigned i = 0; i < g->cap; i++)
        if (g->held[i].fd >= 0)
            drop(g, i);
    return NULL;
}

/* As many held connections as descriptors allow: the soft limit is raised
 * to the hard one (up to what we hold at most, and some for the server). */
static unsigned capacity(void)
{
    unsigned long want = HELD_MAX + 256, cur = fdr__nofile_raise(want);
    if (cur >= want)
        return HELD_MAX;
    return cur > 512 ? (unsigned)(cur - 256) : 256;
}

int scope_gate_start(int lfd, const char *token, scope_gate_pass pass, void *arg,
                     struct scope_gate **out)
{
    struct scope_gate *g = calloc(1, sizeof *g);
    if (!g)
        return -ENOMEM;
    g->lfd = lfd;
    g->pass = pass;
    g->arg = arg;
    g->token_len = strlen(token);
    if (!g->token_len || g->token_len >= sizeof g->token) {
        free(g);
        return -EINVAL;
    }
    memcpy(g->token, token, g->token_len);
    g->cap = capacity();
    g->held = malloc(g->cap * sizeof *g->held);
    g->ep = epoll_create1(EPOLL_CLOEXEC);
    g->stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event el = {.events = EPOLLIN, .data.u32 = 0},
                       es = {.events = EPOLLIN, .data.u32 = 1};
    int e = 0;
    if (!g->held || g->ep < 0 || g->stop < 0 ||
        epoll_ctl(g->ep, EPOLL_CTL_ADD, lfd, &el) < 0 ||
        epoll_ctl(g->ep, EPOLL_CTL_ADD, g->stop, &es) < 0)
        e = errno ? -errno : -ENOMEM;
    else {
        for (unsigned i = 0; i < g->cap; i++)
            g->held[i].fd = -1;
        e = -pthread_create(&g->th, NULL, run, g);
    }
    if (e) {
        if (g->ep >= 0)
            close(g->ep);
        if (g->stop >= 0)
            close(g->stop);
        free(g->held);
        free(g);
        return e;
    }
    *out = g;
    return 0;
}

void scope_gate_stop(struct scope_gate *g)
{
    if (!g)
        return;
    uint64_t one = 1;
    ssize_t w = write(g->stop, &one, sizeof one);
    (void)w;
    pthread_join(g->th, NULL);
    close(g->ep);
    close(g->stop);
    free(g->held);
    free(g);
}
