/* SPDX-License-Identifier: MIT */
/* fdr/error.h - error codes.
 *
 * Every fdr function that can fail returns an int: 0 on success or a
 * negative errno value from the list below. fdr_strerror() names it. */
#ifndef FDR_ERROR_H
#define FDR_ERROR_H

#include <errno.h>

#include "fdr/internal/visibility.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(code, message) for every code fdr returns. */
#define FDR_ERRNO_MAP(X)                                                                 \
    X(EINVAL, "invalid argument")                                                        \
    X(ENOMEM, "out of memory")                                                           \
    X(ENOENT, "no such file, directory or name")                                         \
    X(EEXIST, "already exists with different properties")                                \
    X(EBUSY, "busy: still in use")                                                       \
    X(ENOSPC, "no space left: a table or buffer is full")                                \
    X(E2BIG, "too large")                                                                \
    X(ENOTSUP, "not supported here")                                                     \
    X(EIO, "input/output error")                                                         \
    X(EAGAIN, "try again")                                                               \
    X(ETIMEDOUT, "timed out")                                                            \
    X(ERANGE, "value out of range")                                                      \
    X(ENODATA, "not recorded: the event or tracing is disabled")

/* Returns a static string for an fdr error code (negative) or an errno
 * value (positive); never NULL. Functions that touch files may also return
 * other errno values (-EACCES, -ENOTDIR, ...); they are named too. */
FDR_EXTERN const char *fdr_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif
