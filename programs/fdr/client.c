/* SPDX-License-Identifier: MIT */
/* client.c - how the fdr command talks to fdrd.
 *
 * The socket is DIR/fdrd.sock, DIR being FDR_RUNDIR, else
 * $XDG_RUNTIME_DIR/fdr, else /tmp/fdr-$UID, or $HOME/.fdr/run when another
 * user made that first (fdr__proto_rundir: the same rule as fdrd; said in
 * one line when this verb starts fdrd). Before connecting, the socket must belong to us:
 * a socket another user made is not our daemon, and we would hand it our requests.
 *
 * Starting fdrd (as `lttng create` starts lttng-sessiond): when nobody
 * listens (no socket, or a stale one: ECONNREFUSED), verbs that change
 * something run `fdrd -d`, which returns once its socket listens, and
 * connect again. fdrd is, in order: $FDR_FDRD; next to this binary
 * (installed side by side); ../daemon/fdrd and ../../daemon/fdrd from it
 * (the build tree); `fdrd` in PATH. If two fdr commands start one at the
 * same moment, one fdrd wins the lock and the other says "already
 * running"; its fdr then waits, while the winner holds the lock, until the
 * winner listens, and both connect to it. The verbs that only look (list,
 * status) start fdrd too when DIR/traces holds trace definitions: an fdrd
 * was killed while it held traces, and the next one makes them again
 * (daemon/persist.c), so that any verb brings them back.
 *
 * DESIGN. Blocking I/O with a 60 s receive timeout (a daemon that accepts
 * but never answers gives an error line, never a hang). Every message
 * received goes through fdr__proto_check (fdrd is trusted no more than a
 * client is), must carry our seq, and may carry no fds. */
#define _GNU_SOURCE
#include "client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static int try_connect(struct client *c)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, c->sock, strlen(c->sock) + 1);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    struct timeval tv = {60, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    c->fd = fd;
    return 0;
}

static int executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The fdrd to run into out; 0, or 1 when only PATH is left ("fdrd"). */
static int find_fdrd(char *out, size_t cap)
{
    const char *env = getenv("FDR_FDRD");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return 0;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = 0;
            static const char *const rel[] = {"fdrd", "../daemon/fdrd",
                                              "../../daemon/fdrd"};
            for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
                if (snprintf(out, cap, "%s/%s", self, rel[i]) < (int)cap &&
                    executable(out))
                    return 0;
            }
        }
    }
    snprintf(out, cap, "fdrd");
    return 1;
}

/* Another fdr started fdrd at the same moment, and ours lost the lock:
 * the winner may not listen yet. Retries the connection while some fdrd
 * holds the pid file's lock (it is starting, or serving), for at most
 * 60 s. Returns 0 once connected, else the last -errno. */
static int wait_other(struct client *c)
{
    char pidfile[sizeof c->rundir + 16];
    snprintf(pidfile, sizeof pidfile, "%s/fdrd.pid", c->rundir);
    int rc = -ECONNREFUSED;
    for (int i = 0; i < 6000; i++) {
        int fd = open(pidfile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return rc;
        int held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
        close(fd);
        if (!held)
            return rc; /* no fdrd holds it: the winner died */
        rc = try_connect(c);
        if (rc == 0)
            return 0;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return rc;
}

/* Runs `fdrd -d` and waits for it (it returns once it listens). Its
 * stderr is read through a pipe so that its complaint ("fdrd: ...")
 * becomes our one error line. */
static int start_fdrd(struct client *c)
{
    char path[PATH_MAX + 32];
    int use_path = find_fdrd(path, sizeof path);
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return cli_fail(1, c->verb, "cannot start fdrd: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return cli_fail(1, c->verb, "cannot start fdrd: fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(p[1], 2);
        char *argv[] = {path, "-d", NULL};
        if (use_path)
            execvp(path, argv);
        else
            execv(path, argv);
        dprintf(2, "%s: %s\n", path, strerror(errno));
        _exit(127);
    }
    close(p[1]);
    char err[1024];
    size_t n = 0;
    for (;;) {
        ssize_t k = read(p[0], err + n, sizeof err - 1 - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
        if (n == sizeof err - 1)
            break;
    }
    close(p[0]);
    err[n] = 0;
    char *nl = strchr(err, '\n');
    if (nl)
        *nl = 0;
    const char *what = strncmp(err, "fdrd: ", 6) == 0 ? err + 6 : err;
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    int rc = try_connect(c);
    if (rc == 0)
        return 0;
    if (strncmp(what, "already running", 15) == 0 && (rc = wait_other(c)) == 0)
        return 0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (*what)
            return cli_fail(1, c->verb, "cannot start fdrd: %s", what);
        return cli_fail(1, c->verb, "cannot start fdrd (%s -d failed)", path);
    }
    return cli_fail(1, c->verb, "cannot reach fdrd at %s: %s", c->sock, strerror(-rc));
}

/* 1 when DIR/traces holds a trace definition (daemon/persist.c): an fdrd
 * was killed while holding traces, and the next one makes them again. */
static int traces_kept(const char *rundir)
{
    char path[sizeof((struct client *)0)->rundir + 16];
    snprintf(path, sizeof path, "%s/traces", rundir);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    int any = 0;
    while (!any && (e = readdir(d)) != NULL)
        any = e->d_name[0] != '.';
    closedir(d);
    return any;
}

int client_open(struct client *c, const char *verb, int autostart)
{
    c->fd = -1;
    c->seq = 0;
    c->verb = verb;
    char note[512];
    int len = fdr__proto_rundir(c->rundir, sizeof c->rundir, getenv("FDR_RUNDIR"),
                                getenv("XDG_RUNTIME_DIR"), getenv("HOME"),
                                (unsigned long)geteuid(), note, sizeof note);
    if (len < 0)
        return cli_fail(1, verb, "the run directory's path is too long for a socket");
    memcpy(c->sock, c->rundir, (size_t)len); /* fits: fdr__proto_rundir checked */
    memcpy(c->sock + len, "/fdrd.sock", sizeof "/fdrd.sock");
    struct stat st;
    if (lstat(c->sock, &st) == 0 && st.st_uid != geteuid())
        return cli_fail(1, verb, "%s belongs to uid %lu, not to you (uid %lu): refused",
                        c->sock, (unsigned long)st.st_uid, (unsigned long)geteuid());
    int rc = try_connect(c);
    if (rc == 0)
        return 0;
    if (rc != -ENOENT && rc != -ECONNREFUSED)
        return cli_fail(1, verb, "cannot reach fdrd at %s: %s", c->sock, strerror(-rc));
    if (!autostart && !traces_kept(c->rundir))
        return -1;
    if (note[0])
        fprintf(stderr, "fdr %s: %s\n", verb, note);
    return start_fdrd(c);
}

void client_close(struct client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

int client_send(struct client *c, void *msg, size_t len, unsigned type)
{
    fdr__proto_init(msg, len, type, ++c->seq);
    int rc = fdr__proto_send(c->fd, msg, len, NULL, 0);
    if (rc < 0)
        return cli_fail(1, c->verb, "cannot send to fdrd: %s", strerror(-rc));
    return 0;
}

int client_next(struct client *c)
{
    int fds[FDR_PROTO_FDS_MAX], nfds;
    long n = fdr__proto_recv(c->fd, c->buf, sizeof c->buf, fds, &nfds, FDR_PROTO_FDS_MAX);
    if (n == 0 || n == -ECONNRESET) {
        cli_fail(1, c->verb, "fdrd closed the connection");
        return -1;
    }
    if (n == -EAGAIN) {
        cli_fail(1, c->verb, "fdrd did not answer in 60 s");
        return -1;
    }
    if (n < 0) {
        cli_fail(1, c->verb, "cannot read from fdrd: %s", strerror((int)-n));
        return -1;
    }
    char why[200];
    if (fdr__proto_check(c->buf, (size_t)n, nfds, why, sizeof why) < 0) {
        fdr__proto_close_fds(fds, nfds);
        cli_fail(1, c->verb, "bad answer from fdrd: %s", why);
        return -1;
    }
    const void *b = c->buf;
    const struct fdr__msg_hdr *h = b;
    if (h->seq != c->seq) {
        cli_fail(1, c->verb, "bad answer from fdrd: seq %u, expected %u", h->seq, c->seq);
        return -1;
    }
    if (h->type == FDR__MSG_REPLY && h->status != 0) {
        const struct fdr__msg_reply *r = b;
        cli_fail(1, c->verb, "%s", r->text[0] ? r->text : strerror((int)h->status));
        return -1;
    }
    return h->type == FDR__MSG_END ? 0 : h->type;
}

int client_call(struct client *c, void *msg, size_t len, unsigned type, uint32_t *value)
{
    if (client_send(c, msg, len, type))
        return 1;
    int t = client_next(c);
    if (t < 0)
        return 1;
    if (t != FDR__MSG_REPLY)
        return cli_fail(1, c->verb, "bad answer from fdrd: a %s message",
                        fdr__proto_type_name((unsigned)t));
    const void *b = c->buf;
    const struct fdr__msg_reply *r = b;
    if (value)
        *value = r->value;
    return 0;
}

/* Sends msg and reads one answer into c->buf, printing nothing: its type,
 * or -errno (connection lost, bad answer). */
static int quiet_call(struct client *c, void *msg, size_t len, unsigned type)
{
    fdr__proto_init(msg, len, type, ++c->seq);
    int rc = fdr__proto_send(c->fd, msg, len, NULL, 0);
    if (rc < 0)
        return rc;
    int fds[FDR_PROTO_FDS_MAX], nfds;
    long n = fdr__proto_recv(c->fd, c->buf, sizeof c->buf, fds, &nfds, FDR_PROTO_FDS_MAX);
    if (n == 0)
        return -ECONNRESET;
    if (n < 0)
        return (int)n;
    if (fdr__proto_check(c->buf, (size_t)n, nfds, NULL, 0) < 0) {
        fdr__proto_close_fds(fds, nfds);
        return -EBADMSG;
    }
    const struct fdr__msg_hdr *h = (const void *)c->buf;
    return h->seq == c->seq ? h->type : -EBADMSG;
}

/* The REPLY in c->buf: its status, with a text when fdrd gave none. */
static int reply_status(struct client *c)
{
    struct fdr__msg_reply *r = (void *)c->buf;
    if (r->h.status && !r->text[0])
        snprintf(r->text, sizeof r->text, "%s", strerror((int)r->h.status));
    return (int)r->h.status;
}

/* A quiet failure with its reason in c->buf as a REPLY would hold it. */
static int quiet_fail(struct client *c, int err, const char *why)
{
    struct fdr__msg_reply *r = (void *)c->buf;
    memset(r, 0, sizeof *r);
    r->h.type = FDR__MSG_REPLY;
    r->h.status = (uint32_t)err;
    snprintf(r->text, sizeof r->text, "%s", why ? why : strerror(err));
    return err;
}

int client_control(struct client *c, uint32_t pid, unsigned what, const char *spec,
                   uint32_t *ticket)
{
    uint64_t buf[(sizeof(struct fdr__msg_control) + FDR_PROTO_ITEMS_CAP) / 8 + 1];
    struct fdr__msg_control *m = (void *)buf;
    memset(m, 0, sizeof *m);
    m->pid = pid;
    m->what = what;
    for (const char *p = spec ? spec : ""; *p;) {
        size_t n = strcspn(p, ",");
        if (n > FDR_PROTO_ITEM_MAX || m->len + n + 1 > FDR_PROTO_ITEMS_CAP ||
            m->nitems == FDR_PROTO_ITEMS_MAX)
            return quiet_fail(c, E2BIG, "the spec is too long for one message");
        if (n) {
            memcpy(m->items + m->len, p, n);
            m->items[m->len + n] = 0;
            m->len += (uint32_t)n + 1;
            m->nitems++;
        }
        p += n + (p[n] == ',');
    }
    int t = quiet_call(c, m, sizeof *m + m->len, FDR__MSG_CONTROL);
    if (t < 0)
        return quiet_fail(c, -t, "lost the connection to fdrd");
    if (t != FDR__MSG_REPLY)
        return quiet_fail(c, EBADMSG, "bad answer from fdrd");
    const struct fdr__msg_reply *r = (const void *)c->buf;
    if (ticket)
        *ticket = r->value;
    return reply_status(c);
}

int client_state(struct client *c, uint32_t pid, char *out, size_t cap, uint32_t *answers)
{
    struct fdr__msg_control m;
    memset(&m, 0, sizeof m);
    m.pid = pid;
    m.what = FDR__CONTROL_STATE;
    int t = quiet_call(c, &m, sizeof m, FDR__MSG_CONTROL);
    if (t < 0)
        return quiet_fail(c, -t, "lost the connection to fdrd");
    if (t == FDR__MSG_REPLY)
        return reply_status(c) ? reply_status(c) : quiet_fail(c, EBADMSG, NULL);
    if (t != FDR__MSG_STATE_INFO || cap == 0)
        return quiet_fail(c, EBADMSG, "bad answer from fdrd");
    const struct fdr__msg_state *st = (const void *)c->buf;
    if (answers)
        *answers = st->answers;
    size_t k = 0;
    for (const char *it = st->items; it < st->items + st->len; it += strlen(it) + 1) {
        size_t n = strlen(it);
        if (k + n + 2 > cap)
            break;
        memcpy(out + k, it, n);
        out[k + n] = '\n';
        k += n + 1;
    }
    out[k] = 0;
    return 0;
}

/* Length of a valid UTF-8 sequence at s (1..4), or 0. */
static int utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (n == 0 || (s[0] >= 0xf8))
        return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
        return 0; /* overlong, surrogate */
    if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
        return 0;
    return n;
}

void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char ch = *p;
        if (ch == '"' || ch == '\\') {
            fputc('\\', f);
            fputc(ch, f);
            p++;
        } else if (ch == '\n') {
            fputs("\\n", f);
            p++;
        } else if (ch == '\t') {
            fputs("\\t", f);
            p++;
        } else if (ch < 0x20 || ch == 0x7f) {
            fprintf(f, "\\u%04x", ch);
            p++;
        } else {
            int n = utf8_len(p);
            if (n == 0) {
                fputs("\\ufffd", f);
                p++;
            } else {
                fwrite(p, 1, (size_t)n, f);
                p += n;
            }
        }
    }
    fputc('"', f);
}
