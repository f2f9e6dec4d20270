/* SPDX-License-Identifier: MIT */
/* tracedir.c - safe creation of trace directories and of the files in them.
 *
 * A trace is often written into a shared place (/tmp, a crash directory
 * several users share), by a program that may run as root. Anyone who can
 * write there can prepare names in advance: a symlink "crash-<pid>" to a
 * directory of theirs, or "metadata" as a symlink to /etc/shadow. So:
 *
 *   - the top directory is the user's choice, reached by common/pathwalk.c:
 *     a symlink on its path is followed only where no one else could have
 *     put it;
 *   - every directory below it is fdr's own: made with mkdirat, and an
 *     existing one is opened with O_NOFOLLOW and used only when fstat says
 *     it is a directory of the effective user that no one else may write;
 *   - every file is opened relative to its directory's descriptor (no path
 *     is resolved twice), with O_CREAT | O_EXCL | O_NOFOLLOW: a name that
 *     exists is never opened. A regular file of ours (an earlier trace) is
 *     removed and created again; anything else is refused;
 *   - metadata is written to a temporary and renamed over the old one, so
 *     that a reader never sees half a metadata file.
 *
 * All of it is system calls on descriptors: async-signal-safe, usable from
 * the crash handler, and free of globals (lib/common rules). */
#define _GNU_SOURCE
#include "common/tracedir.h"
#include "common/pathwalk.h"
#include "common/tsdl.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h> /* renameat only */
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE /* musl's headers: the kernel's value */
#define RENAME_NOREPLACE 1
#endif

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)

int fdr__tracedir_open_top(const char *path)
{
    return fdr__pathwalk(path, 0755, NULL, 0);
}

/* Opens directory `name` of dir_fd if it is ours (see fdr__tracedir_make). */
static int open_ours(int dir_fd, const char *name)
{
    int fd = openat(dir_fd, name, DIR_FLAGS | O_NOFOLLOW);
    if (fd < 0)
        return errno == ELOOP ? -EEXIST : -errno;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        close(fd);
        return -EPERM;
    }
    return fd;
}

int fdr__tracedir_make(int dir_fd, const char *name)
{
    if (mkdirat(dir_fd, name, 0755) < 0 && errno != EEXIST)
        return -errno;
    return open_ours(dir_fd, name);
}

/* 0 when `name` is absent from dir_fd or a regular file of ours (then it is
 * removed if `remove`), -EEXIST for anything else. */
static int claim(int dir_fd, const char *name, int remove)
{
    struct stat st;
    if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
        return -EEXIST;
    if (remove && unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT)
        return -errno;
    return 0;
}

int fdr__tracedir_create(int dir_fd, const char *name)
{
    for (int tries = 0; tries < 2; tries++) {
        int fd = openat(dir_fd, name,
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            return -errno;
        int r = claim(dir_fd, name, 1);
        if (r < 0)
            return r;
    }
    return -EEXIST; /* recreated between our calls: someone is racing us */
}

int fdr__tracedir_replace(int dir_fd, const char *name, int (*emit)(int fd, void *arg),
                          void *arg)
{
    char tmp[256];
    size_t n = strlen(name);
    if (n + 6 > sizeof tmp)
        return -ENAMETOOLONG;
    tmp[0] = '.';
    memcpy(tmp + 1, name, n);
    memcpy(tmp + 1 + n, ".tmp", 5);
    int r = claim(dir_fd, name, 0);
    if (r < 0)
        return r;
    int fd = fdr__tracedir_create(dir_fd, tmp);
    if (fd < 0)
        return fd;
    r = emit(fd, arg);
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
        r = -errno;
    if (r < 0)
        unlinkat(dir_fd, tmp, 0);
    return r;
}

int fdr__tracedir_is_ours(const char *name)
{
    if (strcmp(name, "metadata") == 0 || strcmp(name, ".metadata.tmp") == 0 ||
        strcmp(name, FDR__CLASSES_FILE) == 0 ||
        strcmp(name, "." FDR__CLASSES_FILE ".tmp") == 0 ||
        strcmp(name, FDR__OPEN_FILE) == 0 || strcmp(name, FDR__OPEN_FILE_FDRD) == 0)
        return 1;
    if (strncmp(name, "stream_", 7) != 0 || !name[7])
        return 0;
    for (const char *c = name + 7; *c; c++)
        if (*c < '0' || *c > '9')
            return 0;
    return 1;
}

/* The mark says whether its trace is still being written by a lock, not
 * by a pid: the process holds an exclusive flock on its directory's
 * descriptor, which its drain helper shares (the same open file
 * description, inherited), so the lock lasts until the last of the two has
 * ended, zombies included (their files are closed), and a process that
 * took the pid since changes nothing. Reader and writer never wait: a
 * lock that is not free is an answer. The mark is an empty file: it takes
 * no block of a disk that is nearly full, which the trace needs more. */
int fdr__tracedir_mark_open(int dir_fd, int fdrd)
{
    /* The lock first: a reader that sees the mark sees it held. */
    fdr__tracedir_mark_hold(dir_fd);
    int fd = fdr__tracedir_create(dir_fd, fdrd ? FDR__OPEN_FILE_FDRD : FDR__OPEN_FILE);
    if (fd < 0)
        return fd;
    close(fd);
    return 0;
}

void fdr__tracedir_mark_hold(int dir_fd)
{
    /* A reader holds its shared lock for a moment only (an earlier mark
     * in the directory, fdr__tracedir_unfinished): tried again a little,
     * never waited for. */
    for (int i = 0;
         i < 64 && flock(dir_fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK; i++)
        sched_yield();
}

void fdr__tracedir_mark_done(int dir_fd)
{
    static const char *const names[] = {FDR__OPEN_FILE, FDR__OPEN_FILE_FDRD};
    for (int i = 0; i < 2; i++)
        if (claim(dir_fd, names[i], 0) == 0)
            unlinkat(dir_fd, names[i], 0);
}

int fdr__tracedir_unfinished(int dir_fd, unsigned long pid)
{
    /* Untrusted like the rest of the trace: an empty regular file. */
    struct stat st;
    int ended = 2;
    if (fstatat(dir_fd, FDR__OPEN_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (fstatat(dir_fd, FDR__OPEN_FILE_FDRD, &st, AT_SYMLINK_NOFOLLOW) < 0)
            return 0;
        ended = 3;
    }
    if (!S_ISREG(st.st_mode) || st.st_size != 0)
        return -EINVAL;
    /* Our own descriptor of the directory: its lock conflicts with the
     * writer's. */
    int d = openat(dir_fd, ".", DIR_FLAGS);
    if (d < 0)
        return 1;
    int r = flock(d, LOCK_SH | LOCK_NB);
    int e = errno;
    close(d); /* and our lock with it */
    if (r == 0)
        return ended;
    if (e == EWOULDBLOCK)
        return 1;
    /* No locks here (a file system without them): the pid, as a guess. */
    return ended == 2 && pid && kill((pid_t)pid, 0) < 0 && errno == ESRCH ? 2 : 1;
}

/* The kernel's directory entry (getdents64): readdir without malloc. */
struct dirent64_raw {
    unsigned long long ino;
    long long off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

int fdr__tracedir_clear(int dir_fd)
{
    int fd = openat(dir_fd, ".", DIR_FLAGS); /* own offset: dir_fd untouched */
    if (fd < 0)
        return -errno;
    char buf[4096] __attribute__((aligned(8)));
    int r = 0;
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0) {
            r = n < 0 ? -errno : 0;
            break;
        }
        for (long at = 0; at < n;) {
            struct dirent64_raw *e = (struct dirent64_raw *)(buf + at);
            at += e->reclen;
            if (fdr__tracedir_is_ours(e->name) && claim(dir_fd, e->name, 1) < 0)
                r = -EEXIST;
        }
    }
    close(fd);
    return r;
}

/* The pid of a per-process trace directory name "<name>-<pid>", or of one
 * set aside by fdr__tracedir_set_aside ("<name>-<pid>.<k>"), or 0. */
static unsigned long pid_of(const char *name)
{
    const char *dash = strrchr(name, '-');
    if (!dash || dash == name || !dash[1])
        return 0;
    unsigned long pid = 0;
    const char *p = dash + 1;
    for (; *p && *p != '.'; p++) {
        if (*p < '0' || *p > '9' || pid > 1u << 22)
            return 0;
        pid = pid * 10 + (unsigned long)(*p - '0');
    }
    if (*p == '.' && !p[1])
        return 0;
    for (p += *p == '.'; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return pid;
}

/* 1 when dir_fd holds nothing but fdr's files, and at least metadata. */
static int only_ours(int dir_fd)
{
    int fd = openat(dir_fd, ".", DIR_FLAGS);
    if (fd < 0)
        return 0;
    char buf[4096] __attribute__((aligned(8)));
    int ours = 1, meta = 0;
    long n;
    while (ours && (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long at = 0; at < n;) {
            struct dirent64_raw *e = (struct dirent64_raw *)(buf + at);
            at += e->reclen;
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            meta |= strcmp(e->name, "metadata") == 0;
            ours &= fdr__tracedir_is_ours(e->name);
        }
    close(fd);
    return ours && meta;
}

/* The oldest (by modification time, then name) trace of an ended process
 * in top_fd: its name into out, how many there are as the result. */
static int oldest_ended(int top_fd, unsigned long self, char out[256])
{
    int fd = openat(top_fd, ".", DIR_FLAGS);
    if (fd < 0)
        return -errno;
    char buf[4096] __attribute__((aligned(8)));
    struct timespec best = {0, 0};
    int count = 0;
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long at = 0; at < n;) {
            struct dirent64_raw *e = (struct dirent64_raw *)(buf + at);
            at += e->reclen;
            unsigned long pid = pid_of(e->name);
            /* crash and snapshot directories are kept whatever the budget */
            if (!pid || strlen(e->name) >= 256 || strncmp(e->name, "crash-", 6) == 0 ||
                strncmp(e->name, "snapshot", 8) == 0)
                continue;
            int aside = strchr(strrchr(e->name, '-'), '.') != NULL;
            if (!aside && pid == self)
                continue; /* this process's own */
            if (!aside && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
                continue; /* its process still runs */
            int d = open_ours(top_fd, e->name);
            if (d < 0)
                continue;
            struct stat st;
            int ok = only_ours(d) && fstat(d, &st) == 0;
            /* Still being written, whatever the pid says: the drain helper
             * of a process that ended, or a process in another PID
             * namespace (its pid is none of ours). */
            ok = ok && fdr__tracedir_unfinished(d, pid) != 1;
            close(d);
            if (!ok)
                continue; /* not a trace, the user's files are in it, or written */
            if (count++ == 0 || st.st_mtim.tv_sec < best.tv_sec ||
                (st.st_mtim.tv_sec == best.tv_sec &&
                 (st.st_mtim.tv_nsec < best.tv_nsec ||
                  (st.st_mtim.tv_nsec == best.tv_nsec && strcmp(e->name, out) < 0)))) {
                best = st.st_mtim;
                strcpy(out, e->name);
            }
        }
    close(fd);
    return count;
}

int fdr__tracedir_budget(int top_fd, unsigned long self, unsigned keep,
                         void (*removed)(const char *name, void *arg), void *arg)
{
    char name[256];
    int r, gone = 0;
    while ((r = oldest_ended(top_fd, self, name)) > (int)keep) {
        int d = open_ours(top_fd, name);
        if (d < 0)
            return d;
        r = fdr__tracedir_clear(d);
        close(d);
        if (r == 0 && unlinkat(top_fd, name, AT_REMOVEDIR) < 0)
            r = -errno;
        if (r < 0)
            return r;
        removed(name, arg);
        gone++;
    }
    return r < 0 ? r : gone;
}

int fdr__tracedir_set_aside(int top_fd, const char *name, char *aside, size_t cap)
{
    int d = open_ours(top_fd, name);
    if (d < 0)
        return d == -ENOENT ? 0 : d;
    int keep = only_ours(d);
    close(d);
    if (!keep)
        return 0; /* nothing of a trace in it: used as it is */
    size_t n = strlen(name);
    for (unsigned k = 1; k < 1000; k++) {
        char num[8];
        size_t l = 0;
        for (unsigned v = k; v; v /= 10)
            l++;
        for (unsigned v = k, i = l; v; v /= 10)
            num[--i] = (char)('0' + v % 10);
        if (n + 1 + l + 1 > cap)
            return -ENAMETOOLONG;
        memcpy(aside, name, n);
        aside[n] = '.';
        memcpy(aside + n + 1, num, l);
        aside[n + 1 + l] = 0;
        if (syscall(SYS_renameat2, top_fd, name, top_fd, aside, RENAME_NOREPLACE) == 0)
            return 1;
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

int fdr__tracedir_name(char *out, size_t cap, const char *name, unsigned long number)
{
    char num[24];
    size_t k = sizeof num;
    do
        num[--k] = (char)('0' + number % 10);
    while ((number /= 10) && k > 0);
    size_t nl = strlen(name), dl = sizeof num - k;
    if (nl + 1 + dl + 1 > cap)
        return -ENAMETOOLONG;
    for (size_t i = 0; i < nl; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-' ||
                 (c == '.' && i > 0);
        out[i] = ok ? c : '_';
    }
    out[nl] = '-';
    memcpy(out + nl + 1, num + k, dl);
    out[nl + 1 + dl] = 0;
    return (int)(nl + 1 + dl);
}
