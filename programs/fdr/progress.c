/* SPDX-License-Identifier: MIT */
/* progress.c - "fdr VERB: 12.3 MB of 45.6 MB (27%), 80.1 MB/s, 1 s left",
 * redrawn in place on stderr when it is a terminal (progress.h). */
#define _GNU_SOURCE
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void progress_start(struct progress *p, const char *verb)
{
    const char *d = getenv("FDR_PROGRESS_DELAY_MS");
    char *end;
    unsigned long ms = d ? strtoul(d, &end, 10) : 1000;
    if (!d || *d < '0' || *d > '9' || *end)
        ms = 1000;
    p->verb = verb;
    p->on = isatty(2);
    p->shown = 0;
    p->t0 = p->last = now_ns();
    p->delay = (uint64_t)ms * 1000000u;
}

void progress_update(struct progress *p, uint64_t done, uint64_t total)
{
    if (!p->on)
        return;
    uint64_t t = now_ns();
    if (t - p->t0 < p->delay || (p->shown && t - p->last < 200000000u))
        return;
    p->last = t;
    p->shown = 1;
    double s = (double)(t - p->t0) / 1e9, rate = s > 0 ? (double)done / s : 0;
    double left = rate > 0 && total > done ? (double)(total - done) / rate : 0;
    fprintf(stderr, "\r\033[Kfdr %s: %.1f MB of %.1f MB (%.0f%%), %.1f MB/s, %.0f s left",
            p->verb, (double)done / 1e6, (double)total / 1e6,
            total ? 100.0 * (double)done / (double)total : 100.0, rate / 1e6, left);
    fflush(stderr);
}

void progress_end(struct progress *p)
{
    if (p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->shown = 0;
}
