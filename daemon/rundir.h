/* SPDX-License-Identifier: MIT */
/* rundir.h - fdrd's per-user run directory: the directory, the pid file
 * (and its lock: one fdrd per run directory) and the listening socket. */
#ifndef FDRD_RUNDIR_H
#define FDRD_RUNDIR_H

#include <stddef.h>
#include <sys/types.h>

struct fdrd_rundir {
    char path[4096];    /* the directory */
    char sock[108];     /* path/fdrd.sock */
    char pidfile[4200]; /* path/fdrd.pid */
    int lock_fd;        /* fdrd.pid, flock()ed: held for the daemon's life */
    int listen_fd;
    int adopted; /* listen_fd was passed in (socket activation): not ours to unlink */
};

/* Creates (0700) or checks the directory `path` (a real directory, not a
 * symlink, owned by the effective user, mode 0700) and takes the lock of
 * its pid file. Returns 0; 1 when another fdrd holds the lock (msg says
 * "already running (pid N) in DIR"); -1 on any other error (msg says
 * why). msg is one line without the "fdrd: " prefix. */
int fdrd_rundir_open(struct fdrd_rundir *r, const char *path, char *msg, size_t cap);

/* Makes directory `path` (0700) when it is missing and checks it: a real
 * directory (lstat: not a symlink), owned by the effective user, mode 0700.
 * 0, or -1 with one line in msg. The run directory's rule, also used for
 * the directories of file-backed buffers (bufdir.c). */
int fdrd_rundir_check(const char *path, char *msg, size_t cap);

/* Removes a stale socket (the lock is ours) and listens on a new one, mode
 * 0600, non-blocking. Returns 0 or -1 with msg. */
int fdrd_rundir_listen(struct fdrd_rundir *r, char *msg, size_t cap);

/* Takes fd, passed by a service manager (LISTEN_FDS, socket activation), as
 * the listening socket instead of making one: it must be a listening
 * AF_UNIX SOCK_SEQPACKET socket bound to r->sock, a socket file of the
 * effective user that nobody else may open (mode 0600 or narrower). Sets
 * it non-blocking and close-on-exec. 0, or -1 with one line in msg. */
int fdrd_rundir_adopt(struct fdrd_rundir *r, int fd, char *msg, size_t cap);

/* Writes pid into the pid file. Returns 0 or -errno. */
int fdrd_rundir_write_pid(struct fdrd_rundir *r, pid_t pid);

/* Removes the socket (unless adopted: the service manager owns it and
 * starts the next fdrd on it) and the pid file (while the lock is still held), then
 * closes both descriptors. */
void fdrd_rundir_close(struct fdrd_rundir *r);

#endif
