/* SPDX-License-Identifier: MIT */
/* io.c - EINTR-safe whole writes (common/io.h). A write that makes no
 * progress (returns 0) is an error (-EIO), so no caller can spin. */
#include <errno.h>
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
