/* SPDX-License-Identifier: MIT */
/* scope.c - `fdr scope`: a live web page of a program's numeric event
 * fields, and switches to steer it (docs/scope.md, docs/scope-api.md).
 *
 *     fdr scope [OPTIONS] -- CMD [ARGS...]   run CMD under the scope
 *     fdr scope [OPTIONS] PID                a program registered with fdrd
 *     fdr scope [OPTIONS] TRACE              a daemon trace (read only)
 *     fdr scope [OPTIONS] DIR                replay a trace directory
 *
 * The idea: the scope is a client of fdrd like the other verbs. For a
 * program it makes a trace of its own (scope-<pid>, discard mode, every
 * event and category, only that process routed into it, ephemeral: fdrd
 * destroys it when this connection closes, so a killed scope leaves
 * nothing behind) whose files go to a fresh private directory, and tails
 * them (tail.c) into the store (series.c) that the web server (http.c)
 * shows: the data flows one way, tail -> series -> http, and this file
 * wires them (the server hands the page's controls to ctl_apply). With -- CMD the child
 * is held on a pipe until the trace exists, so its first events are in it. Switches and
 * tunables go to the program through fdrd (client_control), built from the state it
 * reports (client_state, polled every second). This file holds the verb,
 * the modes, the control, and the main loop (signals, rates, the state). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "common/pattern.h"
#include "offline.h"
#include "http.h"
#include "series.h"
#include "tail.h"

#define LIVE_US 100000
#define SPEC_MAX 4000

struct scope_ctl {
    pthread_mutex_t mu; /* one request at a time on the connection */
    struct client *c;
    uint32_t pid;
    char trace[64]; /* the scope's own trace ("" when none) */
    struct scope_db *db;
};

/* SIGINT or SIGTERM ended the scope: its command ends too. A signal sent
 * by a process (kill: si_code <= 0) is passed on; one from the terminal
 * (^C) reached the command's process group already. Waits up to 5 s for
 * it: 0 when it ended, -1 when it is left running (it was told so). */
static int end_child(pid_t child, const char *what, int sig, const siginfo_t *si)
{
    if (si->si_code <= 0)
        kill(child, sig);
    int status;
    for (int i = 0; i < 100; i++) {
        if (waitpid(child, &status, WNOHANG) == child)
            return 0;
        struct timespec t = {0, 50000000};
        nanosleep(&t, NULL);
    }
    fprintf(stderr,
            "fdr scope: %s (pid %d) still runs 5 s after signal %d; left running\n", what,
            (int)child, sig);
    return -1;
}

/* ENABLE or DISABLE (type) of one item in trace `name`. 0 or 1. */
static int trace_items(struct client *c, const char *name, unsigned type,
                       const char *item)
{
    static uint64_t buf[1024];
    struct fdr__msg_items *it = (struct fdr__msg_items *)buf;
    size_t n = strlen(item) + 1;
    if (n > FDR_PROTO_ITEM_MAX + 1)
        return 1;
    memset(it, 0, sizeof *it);
    fdr__proto_set_str(it->name, sizeof it->name, name);
    memcpy(it->items, item, n);
    it->nitems = 1;
    it->len = (uint32_t)n;
    return client_call(c, it, sizeof *it + n, type, NULL);
}

static const char *verb = "scope";

/* ---- control ------------------------------------------------------------------- */

#ifdef FDR_SCOPE_CONTROL
/* The spec that switches event ei to `on` and keeps the others as the
 * state says (locked). 0, or -1 when too long. */
static int build_spec(struct scope_db *db, int record, int ei, int on, char *spec,
                      size_t cap)
{
    size_t n = 0;
    spec[0] = 0;
    for (unsigned i = 0; i < db->nevents; i++) {
        const struct scope_event *e = db->events[i];
        int st = (int)i == ei ? on : record ? e->recorded : e->printed;
        if (record ? st != 0 : st != 1)
            continue; /* recorded: list those off; printed: those on */
        int k = snprintf(spec + n, cap - n, "%s%s%s:%s", n ? "," : "", record ? "-" : "",
                         e->provider, e->event);
        if (k < 0 || (size_t)k >= cap - n)
            return -1;
        n += (size_t)k;
    }
    if (!n)
        snprintf(spec, cap, "%s", record ? "all" : "none");
    return 0;
}
#endif

/* A control from the page (http.h's scope_control_fn; arg: the
 * scope_ctl). */
static int ctl_apply(void *arg, const char *what, const char *event, const char *on,
                     const char *name, const char *value, char *why, size_t cap)
{
    struct scope_ctl *ctl = arg;
    struct scope_db *db = ctl->db;
#ifndef FDR_SCOPE_CONTROL
    (void)db, (void)what, (void)event, (void)on, (void)name, (void)value;
    /* (the lead's fdrd control not merged yet: every control is refused) */
    snprintf(why, cap, "this fdr was built without fdrd's live control");
    return 409;
#else
    int record = strcmp(what, "record") == 0, print = strcmp(what, "print") == 0;
    int tunable = strcmp(what, "tunable") == 0;
    char spec[SPEC_MAX + 1];
    unsigned kind = FDR__CONTROL_PRINT;
    pthread_mutex_lock(&db->mu);
    int ok = ctl && db->control && db->running, ei = -1, onv = 0;
    if (!ok) {
        pthread_mutex_unlock(&db->mu);
        snprintf(why, cap, "no control here (a replay, a trace, or the program is gone)");
        return 409;
    }
    if (!record && !print && !tunable) {
        pthread_mutex_unlock(&db->mu);
        snprintf(why, cap, "what must be record, print or tunable");
        return 400;
    }
    if (record || print) {
        ei = scope_db_event_find(db, event);
        if (ei < 0 || (strcmp(on, "0") && strcmp(on, "1"))) {
            pthread_mutex_unlock(&db->mu);
            snprintf(why, cap, ei < 0 ? "unknown event '%.100s'" : "on must be 0 or 1",
                     event);
            return 400;
        }
        onv = on[0] == '1';
        if (build_spec(db, record, ei, onv, spec, sizeof spec) < 0) {
            pthread_mutex_unlock(&db->mu);
            snprintf(why, cap, "too many events to name in one spec");
            return 400;
        }
        kind = record ? FDR__CONTROL_RECORD : FDR__CONTROL_PRINT;
    } else {
        const struct scope_tunable *t = NULL;
        for (unsigned i = 0; i < db->ntunables; i++)
            if (strcmp(db->tunables[i].name, name) == 0)
                t = &db->tunables[i];
        double d;
        long long ll;
        int is_int;
        const char *bad = NULL;
        if (!t)
            bad = "unknown tunable";
        else if (fdr__parse_number(value, &d, &ll, &is_int) < 0)
            bad = "value is not a number";
        else if (!t->is_double && !is_int)
            bad = "this tunable takes an integer";
        else if (t->has_range &&
                 (t->is_double ? d < t->min || d > t->max : ll < t->imin || ll > t->imax))
            bad = "value out of the tunable's range";
        if (bad) {
            pthread_mutex_unlock(&db->mu);
            snprintf(why, cap, "%s", bad);
            return 400;
        }
        snprintf(spec, sizeof spec, "%s=%s", t->name, value);
    }
    pthread_mutex_unlock(&db->mu);
    pthread_mutex_lock(&ctl->mu);
    int e = client_control(ctl->c, ctl->pid, kind, spec, NULL);
    if (e) {
        const struct fdr__msg_reply *r = (const void *)ctl->c->buf;
        snprintf(why, cap, "%s", r->text[0] ? r->text : strerror(e));
    } else if (record && ctl->trace[0]) {
        /* The scope's own trace is a route of the program's, and a route's
         * selection decides what goes into it, whatever the program's
         * choice: the same switch there, so that the chart shows it. */
        trace_items(ctl->c, ctl->trace, onv ? FDR__MSG_ENABLE : FDR__MSG_DISABLE, event);
    }
    pthread_mutex_unlock(&ctl->mu);
    if (e)
        return e == ESRCH ? 409 : 400;
    /* The flags change in the db when the program reports its new state
     * (it does after each control; poll_state fetches it): what the page
     * shows is what the program does. */
    return 200;
#endif
}

/* Asks fdrd for the program's state and puts it in the db. */
static void poll_state(struct scope_ctl *ctl, struct scope_db *db)
{
#ifdef FDR_SCOPE_CONTROL
    static char buf[256 * 1024];
    pthread_mutex_lock(&ctl->mu);
    int e = client_state(ctl->c, ctl->pid, buf, sizeof buf, NULL);
    pthread_mutex_unlock(&ctl->mu);
    if (e == 0) {
        pthread_mutex_lock(&db->mu);
        scope_db_state(db, buf);
        pthread_mutex_unlock(&db->mu);
    }
#else
    (void)ctl, (void)db;
#endif
}

/* ---- fdrd ----------------------------------------------------------------------- */

/* 1 when pid is a process registered with fdrd, 0 not, -1 error. */
static int registered(struct client *c, uint32_t pid)
{
    struct fdr__msg_list m;
    memset(&m, 0, sizeof m);
    m.what = FDR__LIST_PROCESSES;
    if (client_send(c, &m, sizeof m, FDR__MSG_LIST))
        return -1;
    int t, found = 0;
    while ((t = client_next(c)) == FDR__MSG_PROCESS_INFO) {
        struct fdr__msg_process_info pi;
        memcpy(&pi, c->buf, sizeof pi);
        found |= pi.pid == pid;
    }
    return t < 0 ? -1 : found;
}

/* The outdir of trace `name` into out. 0, 1 after an error line. */
static int trace_outdir(struct client *c, const char *name, char *out, size_t cap)
{
    struct fdr__msg_list m;
    memset(&m, 0, sizeof m);
    m.what = FDR__LIST_TRACES;
    if (client_send(c, &m, sizeof m, FDR__MSG_LIST))
        return 1;
    int t, found = 0;
    while ((t = client_next(c)) == FDR__MSG_TRACE_INFO) {
        const struct fdr__msg_trace_info *ti = (const void *)c->buf;
        if (strncmp(ti->name, name, sizeof ti->name) == 0) {
            snprintf(out, cap, "%.*s", (int)sizeof ti->outdir, ti->outdir);
            found = 1;
        }
    }
    if (t < 0)
        return 1;
    if (!found)
        return cli_fail(1, verb, "no trace named '%s' (fdr list traces)", name);
    return 0;
}

/* CREATE, ENABLE *, START of the scope's own trace. 0, or 1 after an
 * error line. */
static int make_trace(struct client *c, const char *name, const char *outdir,
                      uint32_t pid)
{
    static struct fdr__msg_create m;
    memset(&m, 0, sizeof m);
    m.mode = FDR__TRACE_DISCARD;
    m.mask = 0xffffffffu;
    fdr__proto_set_str(m.name, sizeof m.name, name);
    fdr__proto_set_str(m.outdir, sizeof m.outdir, outdir);
#ifdef FDR__CREATE_EPHEMERAL
    m.flags |= FDR__CREATE_EPHEMERAL;
    m.pid = pid;
    m.live_us = LIVE_US;
#else
    (void)pid;
#endif
    if (client_call(c, &m, sizeof m, FDR__MSG_CREATE, NULL))
        return 1;
    if (trace_items(c, name, FDR__MSG_ENABLE, "*"))
        return 1;
    struct fdr__msg_trace t;
    memset(&t, 0, sizeof t);
    fdr__proto_set_str(t.name, sizeof t.name, name);
    return client_call(c, &t, sizeof t, FDR__MSG_START, NULL);
}

static void destroy_trace(struct client *c, const char *name)
{
    struct fdr__msg_trace t;
    memset(&t, 0, sizeof t);
    fdr__proto_set_str(t.name, sizeof t.name, name);
    int keep = dup(2), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) /* a trace already gone is fine: no line about it */
        dup2(null, 2);
    client_call(c, &t, sizeof t, FDR__MSG_DESTROY, NULL);
    if (keep >= 0) {
        dup2(keep, 2);
        close(keep);
    }
    if (null >= 0)
        close(null);
}

/* Removes what is under dirfd/name (a few levels of our own files). */
static void remove_tree(int dirfd, const char *name, int depth)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                if (unlinkat(fd, e->d_name, 0) < 0 && depth < 4)
                    remove_tree(fd, e->d_name, depth + 1);
            }
        closedir(d);
    } else if (fd >= 0) {
        close(fd);
    }
    unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* Removes the directories base/fdr-scope-PID-XXXXXX of this user whose
 * scope PID is gone (killed: it could not remove its own). */
static void sweep(const char *base)
{
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, "fdr-scope-", 10) != 0)
            continue;
        long pid = strtol(e->d_name + 10, &end, 10);
        struct stat st;
        if (pid <= 0 || *end != '-' || strlen(end) != 7 ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
            !(kill((pid_t)pid, 0) < 0 && errno == ESRCH))
            continue;
        remove_tree(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/* ---- the verb ------------------------------------------------------------------- */

static int make_token(char out[33])
{
    unsigned char r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return -1;
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    return 0;
}

static int loopback(const char *a)
{
    return strncmp(a, "127.", 4) == 0 || strcmp(a, "::1") == 0 ||
           strcmp(a, "localhost") == 0;
}

static int cmd_scope(int argc, char **argv)
{
    static const struct option opts[] = {{"port", required_argument, 0, 'p'},
                                         {"bind", required_argument, 0, 'b'},
                                         {"window", required_argument, 0, 'w'},
                                         {0, 0, 0, 0}};
    const char *bind = "127.0.0.1";
    uint32_t port = 0;
    double window = 60;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (off_u32(optarg, &port) != 0 || port > 65535)
                return cli_fail(2, verb, "bad --port '%s': 0 to 65535", optarg);
            break;
        case 'b':
            bind = optarg;
            break;
        case 'w': {
            char *end;
            window = strtod(optarg, &end);
            if (end == optarg || *end || !(window >= 1 && window <= 86400))
                return cli_fail(2, verb, "bad --window '%s': seconds, 1 to 86400",
                                optarg);
            break;
        }
        case ':':
            return cli_fail(2, verb, "%s needs a value", argv[optind - 1]);
        default:
            return cli_fail(2, verb, "unknown option '%s' (fdr help scope)",
                            argv[optind - 1]);
        }
    }
    char **cmd = NULL;
    const char *arg = NULL;
    if (optind < argc && strcmp(argv[optind - 1], "--") == 0) {
        cmd = argv + optind;
    } else if (optind + 1 == argc) {
        arg = argv[optind];
    } else if (optind >= argc) {
        return cli_fail(2, verb, "missing -- CMD, PID, TRACE or DIR (fdr help scope)");
    } else {
        return cli_fail(2, verb, "unexpected argument '%s' (fdr help scope)",
                        argv[optind + 1]);
    }
    if (!loopback(bind))
        fprintf(stderr,
                "fdr scope: warning: listening on %s: whoever reaches it with the token "
                "can steer the program\n",
                bind);
    struct stat st;
    uint32_t pid = 0;
    int is_dir = arg && stat(arg, &st) == 0 && S_ISDIR(st.st_mode);
    int is_pid = arg && !is_dir && off_u32(arg, &pid) == 0;
    if (is_pid && pid == 0)
        return cli_fail(2, verb, "bad PID '%s'", arg);
    char token[33];
    if (make_token(token) < 0)
        return cli_fail(1, verb, "getrandom: %s", strerror(errno));

    /* signals are taken by this thread only (sigtimedwait below) */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, &old);

    static struct scope_db db;
    if (scope_db_init(&db, is_dir, window) < 0)
        return cli_fail(1, verb, "out of memory");
    struct scope_ctl ctl = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, "", &db};
    struct scope_tail *tail = NULL;
    struct scope_replay *replay = NULL;
    struct scope_http *http = NULL;
    char tmp[4096] = "", outdir[4200] = "", name[64] = "";
    pid_t child = -1;
    int status = 0, rc = 0, go[2] = {-1, -1};

    if (is_dir) {
        db.mode = "replay";
        if (!realpath(arg, db.target))
            snprintf(db.target, sizeof db.target, "%s", arg);
        rc = scope_replay_start(&db, arg, &replay);
        if (rc)
            goto out;
    } else {
        db.mode = "live";
        ctl.c = malloc(sizeof *ctl.c);
        if (!ctl.c) {
            rc = cli_fail(1, verb, "out of memory");
            goto out;
        }
        /* Only a command of our own can start with fdrd started now: a
         * running program or a trace needs the fdrd it already knows. */
        if ((rc = client_open(ctl.c, verb, !arg)) != 0) {
            if (rc < 0)
                cli_fail(1, verb,
                         "fdrd is not running (attaching to %s needs the fdrd it was "
                         "started with)",
                         is_pid ? "a program" : "a trace");
            free(ctl.c);
            ctl.c = NULL;
            rc = 1;
            goto out;
        }
        if (arg && !is_pid) {
            snprintf(db.target, sizeof db.target, "trace %s", arg);
            if ((rc = trace_outdir(ctl.c, arg, outdir, sizeof outdir)) != 0)
                goto out;
        } else {
            if (is_pid) {
                int r = registered(ctl.c, pid);
                if (r < 0) {
                    rc = 1;
                    goto out;
                }
                if (!r) {
                    rc = cli_fail(
                        1, verb,
                        "process %u is not registered with fdrd (attaching needs "
                        "fdrd running when the program started)",
                        pid);
                    goto out;
                }
                snprintf(db.target, sizeof db.target, "pid %u", pid);
            } else {
                size_t n = 0;
                for (char **a = cmd; *a && n + 1 < sizeof db.target; a++)
                    n += (size_t)snprintf(db.target + n, sizeof db.target - n, "%s%s",
                                          a == cmd ? "" : " ", *a);
                if (pipe2(go, O_CLOEXEC) < 0) {
                    rc = cli_fail(1, verb, "pipe: %s", strerror(errno));
                    goto out;
                }
                child = fork();
                if (child < 0) {
                    rc = cli_fail(1, verb, "fork: %s", strerror(errno));
                    goto out;
                }
                if (child == 0) {
                    pthread_sigmask(SIG_SETMASK, &old, NULL);
                    close(go[1]);
                    char b;
                    if (read(go[0], &b, 1) != 1)
                        _exit(127); /* the scope gave up */
                    close(go[0]);
                    execvp(cmd[0], cmd);
                    fprintf(stderr, "fdr scope: cannot run '%s': %s\n", cmd[0],
                            strerror(errno));
                    _exit(127);
                }
                close(go[0]);
                go[0] = -1;
                pid = (uint32_t)child;
            }
            const char *base = getenv("XDG_RUNTIME_DIR");
            if (!base || base[0] != '/')
                base = "/tmp";
            sweep(base);
            snprintf(tmp, sizeof tmp, "%s/fdr-scope-%ld-XXXXXX", base, (long)getpid());
            if (!mkdtemp(tmp)) {
                rc = cli_fail(1, verb, "mkdtemp %s: %s", tmp, strerror(errno));
                tmp[0] = 0;
                goto out;
            }
            snprintf(outdir, sizeof outdir, "%s/trace", tmp);
            snprintf(name, sizeof name, "scope-%ld", (long)getpid());
            if ((rc = make_trace(ctl.c, name, outdir, pid)) != 0)
                goto out;
            ctl.pid = pid;
            snprintf(ctl.trace, sizeof ctl.trace, "%s", name);
            db.pid = pid;
            db.running = 1;
#ifdef FDR_SCOPE_CONTROL
            db.control = 1;
#endif
        }
        int e = scope_tail_start(&db, outdir, tmp[0] != 0, &tail);
        if (e < 0) {
            rc = cli_fail(1, verb, "cannot read %s: %s", outdir, strerror(-e));
            goto out;
        }
    }
    const char *why;
    unsigned bound;
    if (scope_http_start(&db, ctl_apply, &ctl, bind, port, token, &http, &bound, &why) <
        0) {
        rc = cli_fail(1, verb, "%s:%u: %s", bind, port, why);
        goto out;
    }
    if (strchr(bind, ':'))
        printf("http://[%s]:%u/?token=%s\n", bind, bound, token);
    else
        printf("http://%s:%u/?token=%s\n", bind, bound, token);
    fflush(stdout);
    if (go[1] >= 0) { /* the trace exists: let the program run */
        if (write(go[1], "g", 1) != 1)
            fprintf(stderr, "fdr scope: cannot start the program\n");
        close(go[1]);
        go[1] = -1;
    }
    if (ctl.pid)
        poll_state(&ctl, &db);

    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    for (;;) {
        struct timespec to = {0, 250000000};
        siginfo_t si;
        int sig = sigtimedwait(&set, &si, &to);
        if (sig == SIGINT || sig == SIGTERM) {
            if (child > 0 && end_child(child, cmd[0], sig, &si) == 0)
                child = -1;
            break;
        }
        if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
            child = -1;
            /* Said before /api/info says it: whoever saw "not running"
             * finds the line already written. */
            if (WIFEXITED(status))
                fprintf(stderr, "fdr scope: %s exited with status %d; still serving\n",
                        cmd[0], WEXITSTATUS(status));
            else
                fprintf(stderr, "fdr scope: %s died of signal %d; still serving\n",
                        cmd[0], WIFSIGNALED(status) ? WTERMSIG(status) : 0);
            pthread_mutex_lock(&db.mu);
            db.running = 0;
            pthread_mutex_unlock(&db.mu);
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double dt =
            (double)(now.tv_sec - last.tv_sec) + (now.tv_nsec - last.tv_nsec) / 1e9;
        if (dt >= 1) {
            last = now;
            if (!db.replay) {
                pthread_mutex_lock(&db.mu);
                scope_db_second(&db, dt);
                int poll = db.running && db.control;
                pthread_mutex_unlock(&db.mu);
                if (poll)
                    poll_state(&ctl, &db);
            }
        }
    }
out:
    scope_replay_stop(replay); /* first: the server's requests may wait for it */
    scope_http_stop(http);
    scope_tail_stop(tail);
    if (go[1] >= 0)
        close(go[1]); /* the child sees EOF and leaves */
    if (child > 0 && rc)
        waitpid(child, &status, 0);
    if (ctl.c) {
        if (name[0])
            destroy_trace(ctl.c, name);
        client_close(ctl.c);
        free(ctl.c);
    }
    /* fdrd may still be writing the last packets of the destroyed trace */
    for (int i = 0; tmp[0] && i < 40; i++) {
        remove_tree(AT_FDCWD, tmp, 0);
        if (stat(tmp, &st) < 0)
            break;
        usleep(50000);
    }
    scope_db_free(&db);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

const struct cli_verb cli_verbs_scope[] = {
    {"scope", cmd_scope,
     "[--port N] [--bind ADDR] [--window SECONDS] (-- CMD [ARGS...] | PID | TRACE | DIR)",
     "a live web page of a program's numeric event fields, with switches",
     "Prints one line, the page's URL with its token, and serves until\n"
     "SIGINT or SIGTERM:\n"
     "  -- CMD ARGS  runs CMD in a trace of the scope's own (fdrd is started\n"
     "               when none runs); the page switches its events and\n"
     "               tunables; SIGINT or SIGTERM ends CMD too\n"
     "  PID          the same for a running program registered with fdrd\n"
     "  TRACE        a daemon trace, by name (read only)\n"
     "  DIR          replays a trace directory\n"
     "Options:\n"
     "  --port N          listen on port N (default: any free port)\n"
     "  --bind ADDR       listen on ADDR (default 127.0.0.1; others warned about)\n"
     "  --window SECONDS  the history a chart shows (default 60)\n"
     "The page and its HTTP interface: docs/scope.md.\n"},
    {0, 0, 0, 0, 0},
};
