/* SPDX-License-Identifier: MIT */
/* record.c - `fdr record [-e PATTERN]... [-o DIR] [--overwrite] [--quiet]
 * -- cmd args...`: runs one command with recording on and leaves a trace
 * directory, as `perf record` does.
 *
 * Embedded mode (no daemon): the command runs with FDR_OUTPUT=DIR (every
 * instrumented process it starts writes DIR/<name>-<pid>/), FDR_EVENTS
 * from the -e patterns joined by ',', FDR_MODE (discard, or overwrite
 * with --overwrite) and FDR_OUTPUT_RUN set, so that the processes of the
 * run keep each other's traces. Then one summary line on stderr, counted
 * by reading the trace back (common/reader.h):
 *     fdr record: N events recorded, M discarded, X MB, P process(es), in DIR
 * and the command's status passed through: its exit code, or its signal
 * raised again on fdr itself.
 *
 * Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to fdr by a process
 * (kill) are forwarded to the command; the same signals typed on a
 * terminal (^C, ^\) already reach the command, which is in the same
 * foreground process group, so they are not sent a second time
 * (si_code tells the two apart). Until the command ends they are blocked
 * in fdr and read from a signalfd, so no handler runs; then they are
 * unblocked (a ^C during the summary stops fdr).
 *
 * The trace of a process that dies without its exit handler (a signal,
 * _exit) is completed by its drain helper ("fdr-drain", a clone of the
 * process that no wait() of its parent reports; docs/environment.md,
 * FDR_OUTPUT). fdr record is a child subreaper, so the helpers of the
 * processes of the run become its children when their program ends; it
 * waits for those before counting the trace. Other orphans (daemons the
 * command left running) are not waited for. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "cli.h"
#include "common/pattern.h"
#include "offline.h"

static int cli_record_run(int argc, char **argv);

const struct cli_verb cli_verbs_record[] = {
    {"record", cli_record_run,
     "[-e PATTERN]... [-o DIR] [--overwrite] [--quiet] -- CMD [ARGS...]",
     "run a command with recording on and keep its trace",
     "Runs CMD with FDR_OUTPUT=DIR: each instrumented process it starts writes\n"
     "DIR/<name>-<pid>/ (read with fdr print, fdr stats or babeltrace2 DIR).\n"
     "  -e, --events PATTERN  record only what the patterns select (FDR_EVENTS\n"
     "                    syntax; several -e are joined with ','); default: all\n"
     "  -o, --output DIR  where the trace goes; it must not exist or be empty.\n"
     "                    Default: a new fdr-record-YYYYmmdd-HHMMSS here\n"
     "  --overwrite       flight recorder: keep the newest events of each ring\n"
     "                    (FDR_MODE=overwrite), written when each process ends\n"
     "  -q, --quiet       no summary line\n"
     "Ends with one line on stderr: events recorded, discarded, size, processes,\n"
     "directory. The exit status is the command's (a command killed by a signal\n"
     "kills fdr with the same signal); 127 when CMD is not found, 126 when it\n"
     "cannot be run, 2 for a usage error or a bad pattern, 1 for an output\n"
     "directory that cannot be used.\n"},
    {0},
};

static const int fwd_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* Forwards what signalfd sfd has pending to the command: the signals sent
 * by a process (kill). Those from the kernel (si_code > 0: a terminal's
 * ^C, ^\, a hang-up) reached the command's process group already. */
static void forward_pending(int sfd, pid_t pid)
{
    struct signalfd_siginfo si;
    while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
        if (si.ssi_code <= 0 && (pid_t)si.ssi_pid != pid)
            kill(pid, (int)si.ssi_signo);
}

/* Waits for the command to end while forwarding the signals of
 * fwd_signals, which the caller keeps blocked: they are read from a
 * signalfd, so that no handler runs at an arbitrary moment (sanitizer
 * runtimes defer handlers while a thread sits in waitpid) and none is lost
 * between the check and the wait. */
static int wait_forwarding(pid_t pid, const sigset_t *fwd)
{
    int status = 0;
    int sfd = signalfd(-1, fwd, SFD_NONBLOCK | SFD_CLOEXEC);
    int cfd = (int)syscall(SYS_pidfd_open, pid, 0);
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        struct pollfd p[2] = {{sfd, POLLIN, 0}, {cfd, POLLIN, 0}};
        /* Without a pidfd (Linux < 5.3), look again every 50 ms. */
        poll(p, 2, cfd >= 0 ? -1 : 50);
        if (sfd >= 0)
            forward_pending(sfd, pid);
    }
    if (sfd >= 0) {
        forward_pending(sfd, pid); /* nothing left pending to kill fdr itself */
        close(sfd);
    }
    if (cfd >= 0)
        close(cfd);
    return status;
}

/* The directory the trace goes to: made now (an error is one line). A
 * named one may exist if it is an empty directory. */
static int make_output(const char *opt, char *dir, size_t cap, int *made)
{
    *made = 0;
    if (opt) {
        if (strlen(opt) >= cap)
            return cli_fail(1, "record", "-o: path too long");
        strcpy(dir, opt);
        if (mkdir(dir, 0755) == 0) {
            *made = 1;
            return 0;
        }
        if (errno != EEXIST)
            return cli_fail(1, "record", "cannot create '%s': %s", dir, strerror(errno));
        DIR *d = opendir(dir);
        if (!d)
            return cli_fail(1, "record", "cannot use '%s': %s", dir, strerror(errno));
        struct dirent *e;
        int empty = 1;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                empty = 0;
        closedir(d);
        if (!empty)
            return cli_fail(1, "record",
                            "'%s' is not empty: choose another -o DIR, or remove it",
                            dir);
        if (access(dir, W_OK) != 0)
            return cli_fail(1, "record", "cannot write in '%s': %s", dir,
                            strerror(errno));
        return 0;
    }
    time_t now = time(NULL);
    struct tm tm;
    char base[64];
    localtime_r(&now, &tm);
    strftime(base, sizeof base, "fdr-record-%Y%m%d-%H%M%S", &tm);
    for (int i = 1; i < 1000; i++) {
        if (i == 1)
            snprintf(dir, cap, "%s", base);
        else
            snprintf(dir, cap, "%s-%d", base, i);
        if (mkdir(dir, 0755) == 0) {
            *made = 1;
            return 0;
        }
        if (errno != EEXIST)
            return cli_fail(1, "record", "cannot create '%s': %s", dir, strerror(errno));
    }
    return cli_fail(1, "record", "cannot find a free name for '%s'", base);
}

/* Waits for the drain helpers ("fdr-drain") among our children: they
 * finish the trace of a process that ended without its exit handler. */
static void wait_drains(void)
{
    for (int round = 0; round < 1000; round++) {
        char path[64], list[4096];
        snprintf(path, sizeof path, "/proc/self/task/%ld/children", (long)getpid());
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return;
        ssize_t n = read(fd, list, sizeof list - 1);
        close(fd);
        if (n <= 0)
            return;
        list[n] = 0;
        int waited = 0;
        for (char *p = list, *end; *p; p = end) {
            long pid = strtol(p, &end, 10);
            if (end == p)
                break;
            char comm[32] = "";
            snprintf(path, sizeof path, "/proc/%ld/comm", pid);
            fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                ssize_t k = read(fd, comm, sizeof comm - 1);
                comm[k > 0 ? k : 0] = 0;
                close(fd);
            }
            if (strcmp(comm, "fdr-drain\n") != 0)
                continue;
            while (waitpid((pid_t)pid, NULL, __WALL) < 0 && errno == EINTR)
                ;
            waited = 1;
        }
        if (!waited)
            return;
    }
}

/* The summary line, counted by reading the trace back. */
static void summary(const char *dir)
{
    struct off_diag d = {"record", 1, 0};
    struct fdr__reader *r;
    uint64_t events = 0, discarded = 0, bytes = 0;
    unsigned procs = 0;
    int err = fdr__reader_open(dir, off_diag_fn, &d, &r);
    if (err == 0) {
        struct fdr__rd_event ev;
        while (fdr__reader_next(r, &ev) > 0)
            events++;
        for (unsigned i = 0; i < fdr__reader_streams(r); i++) {
            struct fdr__rd_stream_info si;
            fdr__reader_stream(r, i, &si);
            discarded += si.discarded;
        }
        procs = fdr__reader_procs(r);
        bytes = fdr__reader_bytes(r);
        /* A process killed with its drain helper (or without one) left
         * its trace open: the summary's counts are not all it recorded. */
        off_unfinished(r, "record");
        fdr__reader_close(r);
    }
    char note[128] = "";
    if (err == -ENODATA && !d.count)
        snprintf(note, sizeof note, " (no trace: does the command use libfdr?)");
    else if (d.count)
        snprintf(note, sizeof note, " (%llu problem(s) reading it: fdr print shows them)",
                 (unsigned long long)d.count);
    fprintf(
        stderr,
        "fdr record: %llu events recorded, %llu discarded, %.3f MB, %u process(es), in "
        "%s%s\n",
        (unsigned long long)events, (unsigned long long)discarded,
        (double)bytes / (1024.0 * 1024.0), procs, dir, note);
}

static int cli_record_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"events", required_argument, NULL, 'e'},
        {"output", required_argument, NULL, 'o'},
        {"overwrite", no_argument, NULL, 'w'},
        {"quiet", no_argument, NULL, 'q'},
        {0, 0, 0, 0},
    };
    char *events = NULL;
    size_t elen = 0;
    const char *out = NULL;
    int overwrite = 0, quiet = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:e:o:q", opts, NULL)) != -1) {
        switch (c) {
        case 'e': {
            struct fdr__rules *rules;
            int st = off_pattern("record", "-e", optarg, 0, &rules);
            if (st) {
                free(events);
                return st;
            }
            fdr__rules_free(rules);
            size_t l = strlen(optarg);
            char *x = realloc(events, elen + l + 2);
            if (!x) {
                free(events);
                return cli_fail(1, "record", "out of memory");
            }
            events = x;
            if (elen)
                events[elen++] = ',';
            memcpy(events + elen, optarg, l + 1);
            elen += l;
            break;
        }
        case 'o':
            out = optarg;
            break;
        case 'w':
            overwrite = 1;
            break;
        case 'q':
            quiet = 1;
            break;
        case ':':
            free(events);
            return cli_fail(2, "record", "option '%s' needs a value (fdr help record)",
                            argv[optind - 1]);
        default:
            free(events);
            return cli_fail(2, "record", "unknown option '%s' (fdr help record)",
                            argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        free(events);
        cli_usage(stderr, "record");
        return 2;
    }
    char **cmd = argv + optind;
    char dir[PATH_MAX];
    int made;
    int st = make_output(out, dir, sizeof dir, &made);
    if (st) {
        free(events);
        return st;
    }
    char abs[PATH_MAX];
    if (!realpath(dir, abs)) {
        free(events);
        return cli_fail(1, "record", "cannot use '%s': %s", dir, strerror(errno));
    }

    /* The drain helpers of the run's processes come back to us (wait_drains). */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    /* The forwarded signals stay blocked until the command has ended: they
     * are read from a signalfd meanwhile (wait_forwarding); the command
     * gets the caller's mask back before exec. */
    sigset_t fwd, old;
    sigemptyset(&fwd);
    for (size_t i = 0; i < sizeof fwd_signals / sizeof *fwd_signals; i++)
        sigaddset(&fwd, fwd_signals[i]);
    sigprocmask(SIG_BLOCK, &fwd, &old);
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        free(events);
        return cli_fail(1, "record", "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        free(events);
        return cli_fail(1, "record", "fork: %s", strerror(e));
    }
    if (pid == 0) {
        close(pfd[0]);
        char run[24];
        snprintf(run, sizeof run, "%ld", (long)getppid());
        int e = 0;
        if (setenv("FDR_OUTPUT", abs, 1) || setenv("FDR_OUTPUT_RUN", run, 1) ||
            setenv("FDR_MODE", overwrite ? "overwrite" : "discard", 1) ||
            (events && setenv("FDR_EVENTS", events, 1)))
            e = errno;
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (!e) {
            execvp(cmd[0], cmd);
            e = errno;
        }
        ssize_t w = write(pfd[1], &e, sizeof e);
        (void)w;
        _exit(e == ENOENT || e == ENOTDIR || e == ENAMETOOLONG ? 127 : 126);
    }
    free(events);
    close(pfd[1]);

    int exec_err = 0;
    ssize_t n;
    while ((n = read(pfd[0], &exec_err, sizeof exec_err)) < 0 && errno == EINTR)
        ;
    close(pfd[0]);
    int status = wait_forwarding(pid, &fwd);
    /* Reading the trace back may take a while: ^C now stops fdr itself. */
    sigprocmask(SIG_SETMASK, &old, NULL);
    wait_drains();
    if (n == (ssize_t)sizeof exec_err && exec_err) {
        if (made)
            rmdir(dir);
        fprintf(stderr, "fdr record: cannot run '%s': %s\n", cmd[0], strerror(exec_err));
        return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
    }
    if (!quiet)
        summary(dir);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        /* Die of the same signal, without a core file of our own. */
        struct rlimit rl = {0, 0};
        setrlimit(RLIMIT_CORE, &rl);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
        return 128 + sig;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
