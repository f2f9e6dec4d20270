/* SPDX-License-Identifier: MIT */
/* stack.h - backtrace() and backtrace_symbols_fd() for the tests' hang
 * reports (a hung child prints its stack: test-safety-fork.c,
 * session-prog.c): glibc's execinfo.h; musl has none, so there they print
 * no frame and a hang counts as fdr's. */
#ifndef FDR_TESTS_STACK_H
#define FDR_TESTS_STACK_H

#include <stddef.h>

#if defined(__GLIBC__)
#include <execinfo.h>
#else
static inline int backtrace(void **frames, int n)
{
    (void)frames;
    (void)n;
    return 0;
}
static inline void backtrace_symbols_fd(void *const *frames, int n, int fd)
{
    (void)frames;
    (void)n;
    (void)fd;
}
#endif

#endif
