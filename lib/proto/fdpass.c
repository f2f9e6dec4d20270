/* SPDX-License-Identifier: MIT */
/* fdpass.c - sending and receiving one message, with its fds, in one place.
 *
 * The socket is SOCK_SEQPACKET: one sendmsg() is one message, one recvmsg()
 * takes one whole message (MSG_TRUNC says when it was longer than the
 * buffer). Fds travel as SCM_RIGHTS control data, attached to the message
 * they belong to.
 *
 * DESIGN. Receiving is where a hostile peer can hurt: it can send fds we
 * did not ask for (each one a descriptor of ours until closed), other
 * control messages, or more fds than the buffer holds (the kernel then
 * truncates the control data, MSG_CTRUNC, and the fds that did not fit
 * are lost to us but the ones that fit are installed). So: fds arrive
 * close-on-exec (MSG_CMSG_CLOEXEC: no window where an exec'd child inherits
 * them), the control buffer holds exactly FDR_PROTO_FDS_MAX fds, and on
 * anything unexpected -- a non-SCM_RIGHTS message, truncation, more than
 * `maxfds` fds, a truncated payload -- every fd that did arrive is closed
 * before the error is returned. Whether the message's type wants fds is
 * fdr__proto_check()'s business (it gets the count).
 *
 * Sending uses MSG_NOSIGNAL: a peer that went away is -EPIPE, never a
 * SIGPIPE. Both retry on EINTR. */
#define _GNU_SOURCE
#include "proto/proto.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void fdr__proto_close_fds(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

int fdr__proto_send(int sock, const void *msg, size_t len, const int *fds, int nfds)
{
    return fdr__proto_send_flags(sock, msg, len, fds, nfds, 0);
}

int fdr__proto_send_flags(int sock, const void *msg, size_t len, const int *fds, int nfds,
                          int flags)
{
    if (nfds < 0 || nfds > FDR_PROTO_FDS_MAX || len > FDR_PROTO_MSG_MAX)
        return -EINVAL;
    union {
        char buf[CMSG_SPACE(sizeof(int) * FDR_PROTO_FDS_MAX)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {(void *)msg, len};
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (nfds > 0) {
        memset(&ctl, 0, sizeof ctl);
        mh.msg_control = ctl.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    for (;;) {
        ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
        if (n >= 0)
            return (size_t)n == len ? 0 : -EMSGSIZE;
        if (errno != EINTR)
            return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
}

long fdr__proto_recv(int sock, void *buf, size_t cap, int *fds, int *nfds, int maxfds)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * FDR_PROTO_FDS_MAX)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf, cap};
    struct msghdr mh = {0};
    ssize_t n;
    *nfds = 0;
    if (maxfds < 0 || maxfds > FDR_PROTO_FDS_MAX)
        return -EINVAL;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof ctl.buf;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;

    /* Collect every fd that arrived, whatever else is wrong. */
    int got[FDR_PROTO_FDS_MAX], ngot = 0, bad = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
            bad = 1;
            continue;
        }
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (ngot < FDR_PROTO_FDS_MAX)
                got[ngot++] = fd;
            else {
                close(fd); /* cannot happen: the buffer holds FDS_MAX */
                bad = 1;
            }
        }
    }
    if (mh.msg_flags & MSG_CTRUNC)
        bad = 1;
    if (ngot > maxfds)
        bad = 1;
    if (bad || (mh.msg_flags & MSG_TRUNC)) {
        fdr__proto_close_fds(got, ngot);
        return (mh.msg_flags & MSG_TRUNC) ? -EMSGSIZE : -EBADMSG;
    }
    memcpy(fds, got, sizeof(int) * (size_t)ngot);
    *nfds = ngot;
    return (long)n;
}
