/* SPDX-License-Identifier: MIT */
/* check.h - the one check helper of the C tests (instead of a CHECK macro
 * written by hand in each). Included by test programs that link libfdr;
 * each is one process, so the failure count is a file-local static (counted
 * atomically: threads of a test may check too).
 *
 *   CHECK(cond)              on failure: "FAIL file:line: cond", go on
 *   CHECK_MSG(cond, fmt, ...) the same with a message of the test's own
 *   CHECK_ERR(expr, want)    expr must return want (0 or a negative errno);
 *                            prints both, with fdr_strerror's text
 *   REQUIRE(cond)            on failure: the FAIL line, then exit(1) now
 *                            (when what follows would make no sense)
 *   check_status()           0 if every check passed, else prints the
 *                            count and returns 1: `return check_status();`
 *   WAIT_UNTIL(cond, fmt, ...) polls cond every millisecond; after 60 s
 *                            "FAIL file:line: gave up after 60 s waiting
 *                            for: <message>", then exit(1): a wait that
 *                            never ends fails saying what it waited for,
 *                            never by the test's TIMEOUT (tests/README.md)
 *
 * Lines go to stdout, flushed: some tests capture their own stderr. */
#ifndef FDR_TESTS_CHECK_H
#define FDR_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <fdr/error.h>

static int check_failures __attribute__((unused)); /* WAIT_UNTIL alone uses none */

#define CHECK_MSG(cond, ...)                                                             \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                  \
            printf(__VA_ARGS__);                                                         \
            printf("\n");                                                                \
            fflush(stdout);                                                              \
            __atomic_fetch_add(&check_failures, 1, __ATOMIC_RELAXED);                    \
        }                                                                                \
    } while (0)

#define CHECK(cond) CHECK_MSG(cond, "%s", #cond)

#define CHECK_ERR(expr, want)                                                            \
    do {                                                                                 \
        int got_ = (expr);                                                               \
        CHECK_MSG(got_ == (want), "%s = %d (%s), want %s", #expr, got_,                  \
                  fdr_strerror(got_), #want);                                            \
    } while (0)

#define REQUIRE(cond)                                                                    \
    do {                                                                                 \
        CHECK(cond);                                                                     \
        if (__atomic_load_n(&check_failures, __ATOMIC_RELAXED))                          \
            exit(1);                                                                     \
    } while (0)

#define WAIT_UNTIL(cond, ...)                                                            \
    do {                                                                                 \
        struct timespec t0_, now_, ms_ = {0, 1000000};                                   \
        clock_gettime(CLOCK_MONOTONIC, &t0_);                                            \
        while (!(cond)) {                                                                \
            clock_gettime(CLOCK_MONOTONIC, &now_);                                       \
            if (now_.tv_sec - t0_.tv_sec > 60) {                                         \
                printf("FAIL %s:%d: gave up after 60 s waiting for: ", __FILE__,         \
                       __LINE__);                                                        \
                printf(__VA_ARGS__);                                                     \
                printf("\n");                                                            \
                fflush(stdout);                                                          \
                exit(1);                                                                 \
            }                                                                            \
            nanosleep(&ms_, NULL);                                                       \
        }                                                                                \
    } while (0)

static inline int check_status(void)
{
    if (!check_failures)
        return 0;
    printf("%d check(s) failed\n", check_failures);
    return 1;
}

#endif
