/* SPDX-License-Identifier: MIT */
/* io.c - EINTR-safe whole writes (common/io.h). A write that makes no
 * progress (returns 0) is an error (-EIO), so no caller can spin. And the
 * identity of the descriptors fdr owns. */
#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"

int fdr__writev_full(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (w == 0)
            return -EIO;
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

int fdr__write_full(int fd, const void *buf, size_t n)
{
    struct iovec iov = {(void *)buf, n};
    return fdr__writev_full(fd, &iov, 1);
}

void fdr__fd_id(int fd, struct fdr__fd_id *id)
{
    struct stat st;
    *id = (struct fdr__fd_id){0, 0};
    if (fd >= 0 && fstat(fd, &st) == 0)
        *id = (struct fdr__fd_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
}

int fdr__fd_is(int fd, const struct fdr__fd_id *id)
{
    struct fdr__fd_id now;
    fdr__fd_id(fd, &now);
    return fd >= 0 && (now.dev | now.ino) != 0 && now.dev == id->dev &&
           now.ino == id->ino;
}

void fdr__fd_close(int fd, const struct fdr__fd_id *id)
{
    if (fdr__fd_is(fd, id))
        close(fd);
}

unsigned long fdr__nofile_raise(unsigned long want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 0;
    if (rl.rlim_cur < want) {
        rl.rlim_cur =
            rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    return rl.rlim_cur == RLIM_INFINITY ? want : (unsigned long)rl.rlim_cur;
}
