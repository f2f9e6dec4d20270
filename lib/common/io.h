/* SPDX-License-Identifier: MIT */
/* common/io.h - writing whole buffers to a file descriptor, retried on
 * EINTR and short writes. Async-signal-safe (write/writev only). */
#ifndef FDR_COMMON_IO_H
#define FDR_COMMON_IO_H

#include <stddef.h>
#include <sys/uio.h>

/* Writes all n bytes; 0 or -errno. */
int fdr__write_full(int fd, const void *buf, size_t n);
/* Writes all of iov[0..n) (the array is changed); 0 or -errno. */
int fdr__writev_full(int fd, struct iovec *iov, int n);

#endif
