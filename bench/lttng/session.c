/* SPDX-License-Identifier: MIT */
/*
 * LTTng session management for the benchmark driver (see session.h).
 *
 * Order of operations, and why:
 *   1. `lttng list` fails ("No session daemon is available")
 *        -> `lttng-sessiond --no-kernel --daemonize`, which returns only
 *           when the daemon accepts commands; its pid is read from the
 *           daemon's pid file (root: /var/run/lttng, else ~/.lttng).
 *   2. create <name> --output=<dir>; enable-channel --userspace
 *      --buffers-uid (per-UID buffers, shared by all our worker processes,
 *      so each worker does not allocate its own); enable-event for the two
 *      measured events only (bench_lttng:disabled stays disabled); start.
 *   3. The driver then starts the measurement processes. liblttng-ust
 *      registers an application when it is loaded, so they must start after
 *      step 1; starting them after step 2 as well means the enablers arrive
 *      during registration (see lttng_adapter.c, which still polls).
 *   4. stop (flushes), read the channel statistics (discarded events),
 *      destroy, and SIGTERM the session daemon if we started it.
 */
#define _DEFAULT_SOURCE /* wait4 */
#define _POSIX_C_SOURCE 200809L
#include "lttng/session.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct rusage bench_last_rusage;

int bench_run_cmd(const char *const argv[], char *out, size_t outsz)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return -e;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], (char *const *)argv);
        dprintf(1, "cannot run %s: %s\n", argv[0], strerror(errno)); /* the why */
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0;
    char sink[4096];
    for (;;) {
        char *dst = sink;
        size_t room = sizeof sink;
        if (out != NULL && outsz > 1 && len < outsz - 1) {
            dst = out + len;
            room = outsz - 1 - len;
        }
        ssize_t n = read(fds[0], dst, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (dst != sink)
            len += (size_t)n;
    }
    close(fds[0]);
    if (out != NULL && outsz > 0)
        out[len] = '\0';
    int status;
    while (wait4(pid, &status, 0, &bench_last_rusage) < 0)
        if (errno != EINTR)
            return -errno;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return -EINTR;
}

static int sessiond_answers(void)
{
    const char *argv[] = {"lttng", "list", NULL};
    char out[4096];
    return bench_run_cmd(argv, out, sizeof out) == 0;
}

static pid_t sessiond_pid_from_file(void)
{
    char path[512];
    const char *home = getenv("LTTNG_HOME");
    if (geteuid() == 0)
        snprintf(path, sizeof path, "/var/run/lttng/lttng-sessiond.pid");
    else
        snprintf(path, sizeof path, "%s/.lttng/lttng-sessiond.pid",
                 home != NULL     ? home
                 : getenv("HOME") ? getenv("HOME")
                                  : "");
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    long pid = -1;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = -1;
    fclose(f);
    return (pid_t)pid;
}

/* True while pid exists and is not a zombie. */
static int process_alive(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp != NULL && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Runs an lttng command; on failure fills why with its output. */
static int lttng_cmd(const char *const argv[], char *why, size_t whysz)
{
    char out[4096];
    int rc = bench_run_cmd(argv, out, sizeof out);
    if (rc != 0) {
        char *nl;
        while ((nl = strchr(out, '\n')) != NULL)
            *nl = ' ';
        snprintf(why, whysz, "`lttng %s` failed (%d): %.300s", argv[1], rc, out);
        return rc < 0 ? rc : -EIO;
    }
    return 0;
}

int bench_lttng_begin(bench_lttng_session *s, char *why, size_t whysz)
{
    s->our_sessiond = 0;
    s->created = s->started = 0;

    if (!sessiond_answers()) {
        const char *argv[] = {"lttng-sessiond", "--no-kernel", "--daemonize", NULL};
        char out[4096];
        int rc = bench_run_cmd(argv, out, sizeof out);
        if (rc != 0) {
            snprintf(why, whysz, "lttng-sessiond failed to start (%d): %.300s", rc, out);
            return rc < 0 ? rc : -EIO;
        }
        s->our_sessiond = sessiond_pid_from_file();
        if (s->our_sessiond <= 0) {
            snprintf(why, whysz, "lttng-sessiond started but no pid file");
            s->our_sessiond = 0; /* cannot stop it; say so at the end */
        }
        for (int i = 0; i < 100 && !sessiond_answers(); i++)
            sleep_ms(50);
    }

    char out_opt[600];
    if (s->url)
        snprintf(out_opt, sizeof out_opt, "--set-url=%s", s->url);
    else
        snprintf(out_opt, sizeof out_opt, "--output=%s", s->outdir);
    const char *create[] = {"lttng", "create", s->name, out_opt, NULL};
    int rc = lttng_cmd(create, why, whysz);
    if (rc != 0)
        return rc;
    s->created = 1;

    char sess_opt[100], sb_opt[40], nsb_opt[40];
    snprintf(sess_opt, sizeof sess_opt, "--session=%s", s->name);
    snprintf(sb_opt, sizeof sb_opt, "--subbuf-size=%s", s->subbuf);
    snprintf(nsb_opt, sizeof nsb_opt, "--num-subbuf=%s", s->nsubbuf);
    const char *chan[] = {"lttng",         "enable-channel",
                          "--userspace",   sess_opt,
                          "--buffers-uid", sb_opt,
                          nsb_opt,         s->overwrite ? "--overwrite" : "--discard",
                          "bench",         NULL};
    if (!s->defaults && (rc = lttng_cmd(chan, why, whysz)) != 0)
        return rc;
    const char *evlist = s->events != NULL
                             ? s->events
                             : "bench_lttng:two_ints,bench_lttng:int_double_string";
    const char *ev[] = {"lttng",
                        "enable-event",
                        "--userspace",
                        sess_opt,
                        s->defaults ? evlist : "--channel=bench",
                        s->defaults ? NULL : evlist,
                        NULL};
    if ((rc = lttng_cmd(ev, why, whysz)) != 0)
        return rc;
    const char *start[] = {"lttng", "start", s->name, NULL};
    if ((rc = lttng_cmd(start, why, whysz)) != 0)
        return rc;
    s->started = 1;
    return 0;
}

/* Sums the numbers after "Discarded events:" in `lttng list <session>`. */
static long long parse_discarded(const char *text)
{
    long long total = -1;
    const char *key = "Discarded events:";
    for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
        long long v = strtoll(p + strlen(key), NULL, 10);
        total = (total < 0 ? 0 : total) + v;
    }
    return total;
}

int bench_lttng_end(bench_lttng_session *s, long long *discarded, char *why, size_t whysz)
{
    int ret = 0;
    char buf[512];
    *discarded = -1;
    why[0] = '\0';
    if (s->started) {
        const char *stop[] = {"lttng", "stop", s->name, NULL};
        if (lttng_cmd(stop, buf, sizeof buf) != 0 && ret == 0) {
            snprintf(why, whysz, "%s", buf);
            ret = -EIO;
        }
        s->started = 0;
    }
    if (s->created) {
        char out[16384];
        const char *list[] = {"lttng", "list", s->name, NULL};
        if (bench_run_cmd(list, out, sizeof out) == 0)
            *discarded = parse_discarded(out);
        const char *destroy[] = {"lttng", "destroy", s->name, NULL};
        if (lttng_cmd(destroy, buf, sizeof buf) != 0 && ret == 0) {
            snprintf(why, whysz, "%s", buf);
            ret = -EIO;
        }
        s->created = 0;
    }
    if (s->our_sessiond > 0) {
        kill(s->our_sessiond, SIGTERM);
        for (int i = 0; i < 200 && process_alive(s->our_sessiond); i++)
            sleep_ms(50);
        if (process_alive(s->our_sessiond) && ret == 0) {
            snprintf(why, whysz, "lttng-sessiond %ld still alive after 10 s",
                     (long)s->our_sessiond);
            ret = -ETIMEDOUT;
        }
        s->our_sessiond = 0;
    }
    return ret;
}
