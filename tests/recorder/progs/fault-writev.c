/* SPDX-License-Identifier: MIT */
/* fault-writev.c - an LD_PRELOAD library that makes one write to a stream
 * file fail part-way, for tests/recorder/test-disk-fault.py.
 *
 * FAULT_WRITEV_AT=N: the Nth writev() of two or more buffers to a file
 * named stream_* writes only half of its bytes (a short write) and the
 * writev() that continues it fails with EIO: a disk that fails in the
 * middle of a batch of packets. FAULT_WRITEV_FAILS=K (default 1): the K
 * writev() calls to that file from then on fail, the continuation
 * included; with 2, the consumer's retry of the batch's first packet on
 * its own fails too. Every other call goes to the C library's writev(),
 * so the write after those (the consumer's header-only packet that
 * carries the count of what was lost) succeeds. FAULT_WRITEV_MARK=FILE:
 * FILE is created at the torn write (disk-prog fill waits for it). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static ssize_t (*real_writev)(int, const struct iovec *, int);
static int calls, fail_next; /* fail_next: fd + 1 of the torn write */
static int fails_left;       /* calls to fail_next's file still to fail */

static int is_stream(int fd)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = 0;
    const char *base = strrchr(path, '/');
    return base && strncmp(base + 1, "stream_", 7) == 0;
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
    if (!real_writev)
        real_writev =
            (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    const char *at = getenv("FAULT_WRITEV_AT");
    if (fail_next == fd + 1) { /* the continuation, and the retries */
        if (--fails_left <= 0)
            fail_next = 0;
        errno = EIO;
        return -1;
    }
    if (!at || n < 2 || !is_stream(fd))
        return real_writev(fd, iov, n);
    if (++calls != atoi(at))
        return real_writev(fd, iov, n);
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    /* Half of the bytes: the first buffers whole, then part of one. */
    struct iovec part[16];
    size_t want = total / 2, got = 0;
    int k = 0;
    for (; k < n && k < 16 && got < want; k++) {
        part[k] = iov[k];
        if (got + part[k].iov_len > want)
            part[k].iov_len = want - got;
        got += part[k].iov_len;
    }
    fail_next = fd + 1;
    const char *mark = getenv("FAULT_WRITEV_MARK"); /* says the fault happened */
    int m = mark ? open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (m >= 0)
        close(m);
    const char *fails = getenv("FAULT_WRITEV_FAILS");
    fails_left = fails ? atoi(fails) : 1;
    return real_writev(fd, part, k);
}
