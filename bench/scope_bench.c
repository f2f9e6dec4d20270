/* SPDX-License-Identifier: MIT */
/*
 * The scope section of fdr-bench (`fdr-bench --section scope`): what
 * watching a program with `fdr scope` costs. A program records two_ints
 * at 1,000,000 events/s (fdr-bench-load-fdr emit, paced) under
 * `fdr scope -- ...` (through an fdrd of its own run directory), while one
 * Server-Sent Events reader follows the event's two fields (a child that
 * reads the stream and throws it away). Over a measured span, the CPU
 * time (utime + stime, /proc/PID/stat) of `fdr scope` and of fdrd per
 * second, per 1,000,000 events/s: rows "scope" / "fdr-scope" and
 * "fdrd" / "cpu_per_1M_events_per_s" (seconds of CPU per second). Not in
 * the quick run: it takes about 10 seconds.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "sections.h"

#define RATE 1000000.0
#define WARM_S 2
#define SPAN_S 5

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A child that reads the stream at port with token until it ends. */
static pid_t reader(unsigned port, const char *token)
{
    pid_t p = fork();
    if (p != 0)
        return p;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
        _exit(1);
    char req[256];
    int n = snprintf(req, sizeof req,
                     "GET /api/stream?token=%s&fields=bench:two_ints.a,bench:two_ints.b "
                     "HTTP/1.1\r\nHost: x\r\n\r\n",
                     token);
    if (write(fd, req, (size_t)n) != n)
        _exit(1);
    char buf[65536];
    while (read(fd, buf, sizeof buf) > 0)
        ;
    _exit(0);
}

int bench_scope(const bench_sections_ctx *c)
{
    char fdr[PATH_MAX], fdrd[PATH_MAX], load[PATH_MAX], rundir[PATH_MAX], nn[32],
        rate[32];
    snprintf(fdr, sizeof fdr, "%s/../programs/fdr/fdr", c->bindir);
    snprintf(fdrd, sizeof fdrd, "%s/../daemon/fdrd", c->bindir);
    snprintf(load, sizeof load, "%s/fdr-bench-load-fdr", c->bindir);
    if (access(fdrd, X_OK) != 0 || access(fdr, X_OK) != 0) {
        bench_note(c->r, "scope: no fdr or fdrd next to fdr-bench: not measured");
        return 0;
    }
    snprintf(rundir, sizeof rundir, "%s/scope-run", c->tmpdir);
    mkdir(rundir, 0700);
    snprintf(nn, sizeof nn, "%.0f", RATE * (WARM_S + SPAN_S + 30));
    snprintf(rate, sizeof rate, "%.0f", RATE);
    int out[2];
    if (pipe(out) < 0)
        return 1;
    pid_t scope = fork();
    if (scope == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        setenv("FDR_RUNDIR", rundir, 1);
        setenv("FDR_FDRD", fdrd, 1);
        setenv("XDG_RUNTIME_DIR", c->tmpdir, 1);
        execl(fdr, fdr, "scope", "--", load, "emit", "two_ints", "1", nn, rate,
              (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char line[256] = "";
    FILE *f = fdopen(out[0], "r");
    unsigned port = 0;
    char token[64] = "";
    if (!f || !fgets(line, sizeof line, f) ||
        sscanf(line, "http://127.0.0.1:%u/?token=%63s", &port, token) != 2) {
        fprintf(stderr, "fdr-bench: scope: no URL line from fdr scope: %s\n", line);
        kill(scope, SIGTERM);
        waitpid(scope, NULL, 0);
        if (f)
            fclose(f);
        return 1;
    }
    pid_t rd = reader(port, token);
    struct timespec w = {WARM_S, 0};
    nanosleep(&w, NULL);
    long dpid = bench_pid_file(rundir);
    double t0 = now_s(), s0 = bench_cpu_s(scope), d0 = bench_cpu_s(dpid);
    struct timespec m = {SPAN_S, 0};
    nanosleep(&m, NULL);
    double t1 = now_s(), s1 = bench_cpu_s(scope), d1 = bench_cpu_s(dpid);
    kill(scope, SIGTERM);
    waitpid(scope, NULL, 0);
    kill(rd, SIGTERM);
    waitpid(rd, NULL, 0);
    fclose(f);
    bench_fdrd_stop(rundir);
    if (s0 < 0 || s1 < 0 || d0 < 0 || d1 < 0) {
        fprintf(stderr, "fdr-bench: scope: a process ended before the measure\n");
        return 1;
    }
    double per = RATE / 1e6, sc = (s1 - s0) / (t1 - t0) / per,
           dd = (d1 - d0) / (t1 - t0) / per;
    bench_extra_add(c->r, "scope", "fdr-scope", "1M_events_per_s_1_reader",
                    "cpu_s_per_s_per_1M_events_per_s", sc);
    bench_extra_add(c->r, "scope", "fdrd", "1M_events_per_s_1_reader",
                    "cpu_s_per_s_per_1M_events_per_s", dd);
    fprintf(stderr, "  scope: fdr scope %.3f, fdrd %.3f CPU s per s per 1M events/s\n",
            sc, dd);
    bench_note(c->r,
               "scope: a program at %.0f events/s (two_ints, 1 thread) under fdr scope "
               "with one stream reader, %d s measured: fdr scope %.3f and fdrd %.3f "
               "seconds of CPU per second, per 1,000,000 events/s",
               RATE, SPAN_S, sc, dd);
    return 0;
}
