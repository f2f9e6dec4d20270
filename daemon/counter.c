/* SPDX-License-Identifier: MIT */
/* counter.c - fdrd measures the counter programs time their events with,
 * over its whole life, and keeps the measure in <rundir>/counter, which
 * programs read at start instead of measuring it themselves
 * (common/counter.h). The error of a measure is the jitter of its two
 * (counter, monotonic) pairs over its length: ~2e-5 at 5 ms, ~1e-7 at 1 s
 * and better after; the file is rewritten as the measure lengthens, by
 * rename, so that a reader sees one whole line. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/counter.h"
#include "counter.h"
#include "log.h"

#if FDR__COUNTER_MEASURED
static char path[4200], tmp[4200];
static struct fdr__counter_ref ref; /* c0, m0: fdrd's first pair */
static uint64_t next_ms;            /* of fdrd's life: the next rewrite */
static int said;                    /* a failed write was logged */

static void write_file(void)
{
    uint64_t c, m;
    fdr__counter_pair(&c, &m);
    ref.freq = fdr__counter_freq(ref.c0, ref.m0, c, m);
    char line[FDR__COUNTER_MAX];
    int n = fdr__counter_format(line, &ref);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    int ok = fd >= 0 && n > 0 && write(fd, line, (size_t)n) == n;
    if (fd >= 0 && close(fd) < 0)
        ok = 0;
    if (ok && rename(tmp, path) < 0)
        ok = 0;
    if (!ok) {
        int e = errno;
        unlink(tmp);
        if (!said)
            fdrd_log("%s: %s (programs measure their counter themselves)", path,
                     strerror(e));
        said = 1;
    }
}

static uint64_t life_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return (now - ref.m0) / 1000000u;
}

void fdrd_counter_start(const char *rundir)
{
    if ((size_t)snprintf(path, sizeof path, "%s/%s", rundir, FDR__COUNTER_FILE) >=
            sizeof path ||
        (size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return;
    fdr__counter_pair(&ref.c0, &ref.m0);
    struct timespec d = {0, 5000000};
    while (nanosleep(&d, &d) < 0 && errno == EINTR)
        ;
    write_file();
    next_ms = 100;
}

void fdrd_counter_stop(void)
{
    if (next_ms)
        unlink(path);
    next_ms = 0;
}

int fdrd_counter_tick(void)
{
    if (!next_ms)
        return -1;
    uint64_t now = life_ms();
    if (now >= next_ms) {
        write_file();
        while (next_ms <= now) /* a late turn skips what it missed */
            next_ms = next_ms < 1000000 ? next_ms * 10 : next_ms + 1000000;
    }
    uint64_t left = next_ms - now;
    return left > 1000000 ? 1000000 : (int)left;
}
#else
void fdrd_counter_start(const char *rundir)
{
    (void)rundir;
}

void fdrd_counter_stop(void) {}

int fdrd_counter_tick(void)
{
    return -1;
}
#endif
