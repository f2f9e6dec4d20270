/* SPDX-License-Identifier: MIT */
/* common/io.h - file descriptors: writing whole buffers to one, retried
 * on EINTR and short writes; knowing a descriptor fdr owns by what it
 * names (async-signal-safe: write/writev/fstat/close only); and room for
 * many of them (servers holding a connection each). */
#ifndef FDR_COMMON_IO_H
#define FDR_COMMON_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Writes all n bytes; 0 or -errno. */
int fdr__write_full(int fd, const void *buf, size_t n);
/* Writes all of iov[0..n) (the array is changed); 0 or -errno. */
int fdr__writev_full(int fd, struct iovec *iov, int n);
/* Raises the soft RLIMIT_NOFILE to `want`, or to the hard limit when that
 * is lower; returns the soft limit then in force (0 if unknown). */
unsigned long fdr__nofile_raise(unsigned long want);

/* What a descriptor fdr opened names (device and inode, as fstat says). A
 * program may close fdr's descriptors (closefrom(3), a daemon closing
 * everything) and its next open then gets the same number for a file of
 * its own: fdr checks the identity before each use instead of trusting the
 * number (LTTng-UST wraps close() with LD_PRELOAD for the same reason). */
struct fdr__fd_id {
    uint64_t dev, ino;
};
/* Records what fd names ({0, 0} when fd is not open). */
void fdr__fd_id(int fd, struct fdr__fd_id *id);
/* 1 when fd is open and still names the file of *id, else 0. */
int fdr__fd_is(int fd, const struct fdr__fd_id *id);
/* Closes fd if it still names the file of *id; never someone else's. */
void fdr__fd_close(int fd, const struct fdr__fd_id *id);

#endif
