/* SPDX-License-Identifier: MIT */
/* rundir.c - the run directory: where fdr finds fdrd, and why nobody else
 * can pretend to be it or talk to it.
 *
 * The directory is FDR_RUNDIR, else $XDG_RUNTIME_DIR/fdr, else
 * /tmp/fdr-$UID, or $HOME/.fdr/run when another user made that first
 * (proto.h, fdr__proto_rundir, shared with the fdr command and libfdr).
 * It is created 0700; an existing one is used only if lstat() shows a real
 * directory (not a symlink to one) owned by the effective uid with mode
 * 0700 exactly: in /tmp another user could have made it first, and a
 * socket in a directory someone else controls can be replaced. Anything
 * else is refused with one line.
 *
 * DESIGN. One fdrd per directory: fdrd.pid (0600, O_NOFOLLOW) is locked
 * with flock(LOCK_EX | LOCK_NB) and the lock is held until exit (a lock
 * belongs to the open file, so it survives the forks of -d and dies with
 * the last holder, even on SIGKILL: no stale lock). A second fdrd fails to
 * lock and says "already running (pid N) in DIR" with the pid the file
 * holds. After locking, the file's inode is compared with the path's: if
 * an exiting fdrd unlinked it in between, we hold the lock of a dead file
 * and start over. Only the holder of the lock removes a stale fdrd.sock,
 * binds a new one (umask 0177 around bind: the socket is 0600 from its
 * first instant), and at exit unlinks the socket and then the pid file,
 * still locked.
 *
 * Socket activation (docs/daemon.md, dist/systemd/): systemd binds
 * fdrd.sock itself and passes it; fdrd_rundir_adopt checks that it is the
 * socket this directory's rule names, with the same 0600 mode, before
 * serving on it, and never unlinks it (systemd keeps listening on it and
 * starts the next fdrd at the next connection). The directory rule and the
 * pid-file lock apply unchanged, and every peer is still checked with
 * SO_PEERCRED (server.c). */
#define _GNU_SOURCE
#include "rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int fdrd_rundir_check(const char *path, char *msg, size_t cap)
{
    struct stat st;
    if (lstat(path, &st) < 0) {
        if (errno != ENOENT) {
            snprintf(msg, cap, "%s: %s", path, strerror(errno));
            return -1;
        }
        if (mkdir(path, 0700) < 0 && errno != EEXIST) {
            snprintf(msg, cap, "cannot create %s: %s", path, strerror(errno));
            return -1;
        }
        if (lstat(path, &st) < 0) {
            snprintf(msg, cap, "%s: %s", path, strerror(errno));
            return -1;
        }
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(msg, cap, "%s is not a directory (a symlink or a file): refused", path);
        return -1;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 07777) != 0700) {
        snprintf(msg, cap,
                 "%s has owner uid %lu and mode %04o; it must be yours (uid %lu) "
                 "with mode 0700: refused",
                 path, (unsigned long)st.st_uid, (unsigned)(st.st_mode & 07777),
                 (unsigned long)geteuid());
        return -1;
    }
    return 0;
}

static long read_pid(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *end;
    long pid = strtol(buf, &end, 10);
    return end == buf ? -1 : pid;
}

int fdrd_rundir_open(struct fdrd_rundir *r, const char *path, char *msg, size_t cap)
{
    r->lock_fd = r->listen_fd = -1;
    r->adopted = 0;
    if (snprintf(r->path, sizeof r->path, "%s", path) >= (int)sizeof r->path ||
        snprintf(r->sock, sizeof r->sock, "%s/fdrd.sock", path) >= (int)sizeof r->sock) {
        snprintf(msg, cap, "run directory path too long for a socket: %.200s", path);
        return -1;
    }
    snprintf(r->pidfile, sizeof r->pidfile, "%s/fdrd.pid", path);
    if (fdrd_rundir_check(path, msg, cap) < 0)
        return -1;
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(r->pidfile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            snprintf(msg, cap, "%s: %s", r->pidfile, strerror(errno));
            return -1;
        }
        struct stat st, st2;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            snprintf(msg, cap, "%s is not a regular file of yours: refused", r->pidfile);
            close(fd);
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
            int e = errno;
            long pid = read_pid(fd);
            close(fd);
            if (e == EWOULDBLOCK) {
                if (pid > 0)
                    snprintf(msg, cap, "already running (pid %ld) in %s", pid, path);
                else
                    snprintf(msg, cap, "already running in %s", path);
                return 1;
            }
            snprintf(msg, cap, "cannot lock %s: %s", r->pidfile, strerror(e));
            return -1;
        }
        if (stat(r->pidfile, &st2) == 0 && st2.st_ino == st.st_ino &&
            st2.st_dev == st.st_dev) {
            fchmod(fd, 0600);
            r->lock_fd = fd;
            return 0;
        }
        close(fd); /* an exiting fdrd removed it after we opened it: again */
    }
    snprintf(msg, cap, "cannot lock %s: it keeps being replaced", r->pidfile);
    return -1;
}

int fdrd_rundir_listen(struct fdrd_rundir *r, char *msg, size_t cap)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, r->sock, strlen(r->sock) + 1);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(msg, cap, "socket: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(r->sock, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            snprintf(msg, cap, "%s exists and is not a socket: refused", r->sock);
            close(fd);
            return -1;
        }
        unlink(r->sock); /* stale: the lock is ours, so no fdrd owns it */
    }
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    int e = errno;
    umask(old);
    /* A long queue (the kernel caps it at somaxconn): a program connects
     * at start and its exit waits at most 3 s for fdrd's answer, so 200
     * children forked at once must not wait, blocked in connect, for a
     * busy fdrd to accept (they then ended unregistered, their events
     * neither in the trace nor counted: fdr-daemon-early's fork storm
     * under ASan). Queued, what they send waits for fdrd. */
    if (rc < 0 || listen(fd, 4096) < 0) {
        snprintf(msg, cap, "cannot listen on %s: %s", r->sock,
                 strerror(rc < 0 ? e : errno));
        close(fd);
        return -1;
    }
    chmod(r->sock, 0600);
    r->listen_fd = fd;
    return 0;
}

int fdrd_rundir_adopt(struct fdrd_rundir *r, int fd, char *msg, size_t cap)
{
    struct sockaddr_un a;
    socklen_t len = sizeof a;
    int type = 0, listening = 0;
    socklen_t tl = sizeof type, ll = sizeof listening;
    memset(&a, 0, sizeof a);
    if (getsockname(fd, (struct sockaddr *)&a, &len) < 0 || a.sun_family != AF_UNIX ||
        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ll) < 0 || !listening) {
        snprintf(msg, cap,
                 "the passed descriptor %d is not a listening AF_UNIX SOCK_SEQPACKET "
                 "socket: refused",
                 fd);
        return -1;
    }
    size_t n = len > offsetof(struct sockaddr_un, sun_path)
                   ? len - offsetof(struct sockaddr_un, sun_path)
                   : 0;
    if (n >= sizeof a.sun_path)
        n = sizeof a.sun_path - 1;
    a.sun_path[n] = 0;
    if (strcmp(a.sun_path, r->sock) != 0) {
        snprintf(msg, cap, "the passed socket is bound to '%s', not %s: refused",
                 a.sun_path, r->sock);
        return -1;
    }
    struct stat st;
    if (lstat(r->sock, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 0177) != 0) {
        snprintf(msg, cap,
                 "the passed socket %s is not a socket of yours with mode 0600 "
                 "(SocketMode=0600): refused",
                 r->sock);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        snprintf(msg, cap, "the passed socket: fcntl: %s", strerror(errno));
        return -1;
    }
    r->listen_fd = fd;
    r->adopted = 1;
    return 0;
}

int fdrd_rundir_write_pid(struct fdrd_rundir *r, pid_t pid)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%ld\n", (long)pid);
    if (ftruncate(r->lock_fd, 0) < 0 || pwrite(r->lock_fd, buf, (size_t)n, 0) != n)
        return -errno;
    return 0;
}

void fdrd_rundir_close(struct fdrd_rundir *r)
{
    if (r->listen_fd >= 0) {
        if (!r->adopted)
            unlink(r->sock);
        close(r->listen_fd);
        r->listen_fd = -1;
    }
    if (r->lock_fd >= 0) {
        unlink(r->pidfile);
        close(r->lock_fd);
        r->lock_fd = -1;
    }
}
