/* SPDX-License-Identifier: MIT */
/* main.c - fdrd: options, start-up, daemonizing, shutdown.
 *
 *     fdrd -f      in the foreground, logging to stderr
 *     fdrd -d      in the background, logging to DIR/fdrd.log (0600);
 *                  returns once the socket listens, so the next `fdr`
 *                  verb can connect at once
 *
 * The run directory DIR is FDR_RUNDIR, else $XDG_RUNTIME_DIR/fdr, else
 * /tmp/fdr-$UID, or $HOME/.fdr/run when another user made that (rundir.c). Exit status: 0
 * after a clean stop (SIGTERM or SIGINT: the socket and the pid file are removed), 1 when
 * it cannot start (one line "fdrd: ..."; "fdrd: already running (pid N) in DIR" when
 * another fdrd holds the directory), 2 for a usage error.
 *
 * DESIGN. Everything that can fail is done before daemonizing and in the
 * process that will serve: check the directory, lock the pid file, listen.
 * With -d the parent then forks; the child calls setsid() and forks again
 * (the server can never reacquire a terminal), and the grandchild writes
 * its pid into the pid file, points fd 2 at the log, and only then sends
 * one byte on a pipe to the waiting parent, which exits 0. If the
 * grandchild dies first the parent reads end-of-file and exits 1. The lock
 * and the listening socket are inherited through both forks (a flock
 * belongs to the open file, which the grandchild keeps open).
 * SIGTERM/SIGINT are blocked and read from a signalfd in the event loop;
 * SIGPIPE is ignored (and every send uses MSG_NOSIGNAL). The only getenv
 * calls of fdrd are here.
 *
 * Socket activation: when a service manager passes the listening socket
 * (LISTEN_PID is our pid, LISTEN_FDS=1: the socket is fd 3, the sd_listen_fds
 * protocol, read here without libsystemd), fdrd serves on it instead of
 * binding its own, once rundir.c has checked that it is the socket of the
 * run directory (dist/systemd/fdrd.socket). The variables are removed so
 * that nothing fdrd starts inherits them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/io.h"
#include "counter.h"
#include "log.h"
#include "persist.h"
#include "rundir.h"
#include "server.h"

static const char usage[] =
    "usage: fdrd -f | -d\n"
    "  -f  run in the foreground, log to stderr\n"
    "  -d  run in the background, log to DIR/fdrd.log\n"
    "DIR: $FDR_RUNDIR, else $XDG_RUNTIME_DIR/fdr, else /tmp/fdr-$UID\n"
    "     ($HOME/.fdr/run when /tmp/fdr-$UID is not a directory of yours)\n"
    "A socket passed by systemd (LISTEN_FDS=1, fdrd.socket) must be DIR/fdrd.sock.\n";

/* The socket a service manager passed: 3 (SD_LISTEN_FDS_START), -1 when
 * none was passed to this process, -2 (with msg) when the variables are
 * not one socket for us. */
static int passed_socket(char *msg, size_t cap)
{
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    int rc = -1;
    if (pid && fds) {
        char *end;
        errno = 0;
        long p = strtol(pid, &end, 10);
        if (!errno && *pid && !*end && p == (long)getpid()) {
            if (strcmp(fds, "1") == 0)
                rc = 3;
            else {
                snprintf(msg, cap, "LISTEN_FDS=%.20s: fdrd takes exactly one socket",
                         fds);
                rc = -2;
            }
        }
    }
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    return rc;
}

/* Room for FDRD_CLIENTS_MAX connections plus our own descriptors, and
 * FDRD_OUTQ_FDS_ALL fds queued for clients (server.c), as far as the hard
 * limit allows. Returns how many clients fit; *fds how many fds may be
 * queued (what the clients leave, 64 at least: a limit too low for both
 * serves the clients first, as before the queues held fds). */
static unsigned raise_nofile(unsigned *fds)
{
    unsigned long want = FDRD_CLIENTS_MAX + 64,
                  cur = fdr__nofile_raise(want + FDRD_OUTQ_FDS_ALL);
    if (cur >= want) {
        *fds = cur - want >= FDRD_OUTQ_FDS_ALL ? FDRD_OUTQ_FDS_ALL
               : cur - want > 64               ? (unsigned)(cur - want)
                                               : 64;
        return FDRD_CLIENTS_MAX;
    }
    *fds = 64;
    return cur > 96 ? (unsigned)(cur - 64) : 32;
}

/* -d: returns 0 in the grandchild (the server), with *ready the pipe to
 * write one byte to once serving; the parent never returns. */
static int daemonize(const char *dir, int *ready)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        fprintf(stderr, "fdrd: pipe: %s\n", strerror(errno));
        exit(1);
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "fdrd: fork: %s\n", strerror(errno));
        exit(1);
    }
    if (pid > 0) {
        close(p[1]);
        int st;
        waitpid(pid, &st, 0); /* the middle child exits at once */
        char b;
        ssize_t n;
        do
            n = read(p[0], &b, 1);
        while (n < 0 && errno == EINTR);
        if (n == 1)
            exit(0);
        fprintf(stderr, "fdrd: the daemon did not start (see %s/fdrd.log)\n", dir);
        exit(1);
    }
    close(p[0]);
    setsid();
    pid = fork();
    if (pid < 0)
        _exit(1);
    if (pid > 0)
        _exit(0);
    *ready = p[1];
    return 0;
}

int main(int argc, char **argv)
{
    int foreground = 0, background = 0, c;
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "fdh", opts, NULL)) != -1) {
        if (c == 'f')
            foreground = 1;
        else if (c == 'd')
            background = 1;
        else if (c == 'h') {
            fputs(usage, stdout);
            return 0;
        } else {
            fputs(usage, stderr);
            return 2;
        }
    }
    if (optind != argc || foreground + background != 1) {
        fputs(usage, stderr);
        return 2;
    }

    signal(SIGPIPE, SIG_IGN);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigprocmask(SIG_BLOCK, &stop, NULL);

    char dir[4096], msg[4400], note[512];
    if (fdr__proto_rundir(dir, sizeof dir, getenv("FDR_RUNDIR"),
                          getenv("XDG_RUNTIME_DIR"), getenv("HOME"),
                          (unsigned long)geteuid(), note, sizeof note) < 0) {
        fprintf(stderr, "fdrd: the run directory's path is too long for a socket\n");
        return 1;
    }
    if (dir[0] != '/') { /* a relative FDR_RUNDIR: -d runs in "/" */
        char cwd[4096] = "";
        size_t nc = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0, nd = strlen(dir);
        if (nc == 1)
            nc = 0; /* "/" */
        if (!cwd[0] || nc + 1 + nd + 10 >= 108) {
            fprintf(stderr, "fdrd: the run directory's path is too long for a socket\n");
            return 1;
        }
        memmove(dir + nc + 1, dir, nd + 1);
        memcpy(dir, cwd, nc);
        dir[nc] = '/';
    }
    if (note[0]) { /* $HOME/.fdr/run: its parent may be new */
        char parent[4096];
        snprintf(parent, sizeof parent, "%s", dir);
        *strrchr(parent, '/') = 0;
        mkdir(parent, 0700);
    }
    static struct fdrd_rundir rd = {.lock_fd = -1, .listen_fd = -1};
    int passed = passed_socket(msg, sizeof msg);
    int rc = passed == -2 ? -1 : fdrd_rundir_open(&rd, dir, msg, sizeof msg);
    if (rc == 0)
        rc = passed >= 0 ? fdrd_rundir_adopt(&rd, passed, msg, sizeof msg)
                         : fdrd_rundir_listen(&rd, msg, sizeof msg);
    if (rc != 0) {
        fprintf(stderr, "fdrd: %s\n", msg);
        if (rd.lock_fd >= 0)
            close(rd.lock_fd); /* nothing of ours to remove yet */
        return 1;
    }
    /* Before fdrd says it is ready: a program started after that finds it
     * (one that connects in these 5 ms measures its counter itself). */
    fdrd_counter_start(dir);

    int ready = -1;
    if (background) {
        char logpath[4200];
        snprintf(logpath, sizeof logpath, "%s/fdrd.log", dir);
        int logfd =
            open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        struct stat st;
        if (logfd < 0 || fstat(logfd, &st) < 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid()) {
            fprintf(stderr, "fdrd: %s: cannot open as a log file of yours\n", logpath);
            fdrd_rundir_close(&rd);
            return 1;
        }
        daemonize(dir, &ready);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        dup2(null, 0);
        dup2(null, 1);
        dup2(logfd, 2);
        close(null);
        close(logfd);
        if (chdir("/") < 0)
            _exit(1);
    }

    if (note[0])
        fdrd_log("%s", note);
    static struct fdrd_server s;
    s.listen_fd = rd.listen_fd;
    s.rundir = dir;
    s.started = time(NULL);
    s.max_clients = raise_nofile(&s.max_out_fds);
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(geteuid());
        home = pw ? pw->pw_dir : "/tmp";
    }
    s.traces.home = home;
    s.traces.rundir = dir;
    s.signal_fd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
    if (s.signal_fd < 0 || fdrd_rundir_write_pid(&rd, getpid()) < 0) {
        fprintf(stderr, "fdrd: cannot start: %s\n", strerror(errno));
        fdrd_rundir_close(&rd);
        return 1;
    }
    fdrd_log("listening on %s (pid %ld, at most %u clients%s)", rd.sock, (long)getpid(),
             s.max_clients, rd.adopted ? ", socket passed by the service manager" : "");
    /* The traces an earlier fdrd held (killed, or stopped): before anyone
     * is served, so a program that reconnects finds them started. */
    fdrd_persist_load(&s.traces);
    if (ready >= 0) {
        char b = 'R';
        if (write(ready, &b, 1) != 1) {
            /* the parent is gone: serve anyway */
        }
        close(ready);
    }
    rc = fdrd_server_run(&s);
    /* A clean stop ends the traces, as lttng-sessiond's does: only a
     * killed fdrd's are made again by the next one. */
    for (unsigned i = 0; i < s.traces.n; i++)
        fdrd_persist_forget(&s.traces, s.traces.t[i]->name);
    fdrd_traces_free(&s.traces);
    fdrd_providers_free(&s.providers);
    fdrd_counter_stop();
    fdrd_rundir_close(&rd);
    fdrd_log("stopped");
    return rc;
}
