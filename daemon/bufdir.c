/* SPDX-License-Identifier: MIT */
/* bufdir.c - file-backed buffers: the rings of a trace kept in files, so
 * that what the programs committed survives fdrd's death (LTTng's
 * --shm-path idea; `fdr recover` reads what is left).
 *
 * By default fdrd's rings are memfds: when fdrd dies (SIGKILL) while the
 * programs die too, what its rings held and it had not written is gone.
 * A trace created with `fdr create --file-buffers[=DIR]` has its rings in
 * regular files instead, one directory per trace:
 *
 *     DIR/fdr-buffers                 the mark: trace name, mode, output
 *     DIR/<process>-<pid>/metadata    the process's metadata and class
 *                        /.fdr-classes  file, rewritten when classes come
 *                        /ring-<route>-<k>   one ring (common/ring.h)
 *
 * The programs map the same file (MAP_SHARED), so every byte they commit
 * is in the file's page cache at once, whoever dies. fdrd writes the rings
 * out as it does memfds; once a process's rings are written (its end, or
 * the trace's), its directory is removed, and the trace's at destroy.
 *
 * Safety. DIR is made here and must not exist (an existing one may hold
 * what an earlier fdrd left: `fdr recover` it first); it is opened with
 * O_NOFOLLOW and checked to be ours, mode 0700, so nobody else can put a
 * symlink or a directory of theirs in its place. Files are created
 * O_EXCL | O_NOFOLLOW, 0600. A regular file cannot be sealed (seals exist
 * only for memfds), so the program can shrink its ring files; fdrd's
 * reads of file-backed rings are guarded against the SIGBUS that would
 * follow (collect.c, ring_guard). */
#define _GNU_SOURCE
#include "bufdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/classes.h"
#include "common/pathwalk.h"
#include "common/tracedir.h"
#include "log.h"
#include "proto/proto.h"
#include "rundir.h"

/* Opens directory path (just made by us) and checks it is ours, 0700. */
static int open_own_dir(int at, const char *path)
{
    int fd = openat(at, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
        close(fd);
        return -EPERM;
    }
    if ((st.st_mode & 07777) != 0700)
        fchmod(fd, 0700);
    return fd;
}

static const char *mode_name(uint32_t mode)
{
    return mode == FDR__TRACE_DISCARD     ? "discard"
           : mode == FDR__TRACE_OVERWRITE ? "overwrite"
                                          : "snapshot";
}

int fdrd_bufdir_create(const char *rundir, char *path, size_t path_cap, const char *name,
                       uint32_t id, uint32_t mode, const char *outdir, char *msg,
                       size_t cap)
{
    if (!path[0]) {
        char parent[FDR_PROTO_PATH_CAP];
        snprintf(parent, sizeof parent, "%s/buffers", rundir);
        if (fdrd_rundir_check(parent, msg, cap) < 0)
            return -1;
        int n =
            snprintf(path, path_cap, "%s/%s-%ld.%u", parent, name, (long)getpid(), id);
        if (n < 0 || (size_t)n >= path_cap) {
            snprintf(msg, cap, "the run directory is too long for a buffer directory");
            return -1;
        }
    } else if (path[0] != '/') {
        snprintf(msg, cap, "buffer directory '%.200s' is not an absolute path", path);
        return -1;
    }
    /* its parents are walked (common/pathwalk.h): the last component is
     * made in a directory reached without following a planted symlink */
    char parent[FDR_PROTO_PATH_CAP], at[FDR_PROTO_PATH_CAP];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    const char *last = path + (slash - parent) + 1;
    if (slash == parent)
        slash[1] = 0; /* "/name" */
    else
        *slash = 0;
    int pfd = *last ? fdr__pathwalk(parent, 0, at, sizeof at) : -EINVAL;
    if (pfd < 0) {
        snprintf(msg, cap, "buffer directory %.150s: %.150s: %s", path, *last ? at : path,
                 fdr__pathwalk_strerror(-pfd));
        return -1;
    }
    if (mkdirat(pfd, last, 0700) < 0) {
        if (errno == EEXIST)
            snprintf(msg, cap,
                     "buffer directory %.180s exists (what an earlier fdrd left? "
                     "fdr recover it, then remove it)",
                     path);
        else
            snprintf(msg, cap, "cannot create buffer directory %.180s: %s", path,
                     strerror(errno));
        close(pfd);
        return -1;
    }
    int fd = open_own_dir(pfd, last);
    close(pfd);
    if (fd < 0) {
        snprintf(msg, cap, "buffer directory %.180s: %s", path, strerror(-fd));
        return -1;
    }
    int m = openat(fd, FDR__BUFDIR_MARK,
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (m >= 0) {
        dprintf(m, "%strace %s\nmode %s\noutput %s\n", FDR__BUFDIR_MAGIC, name,
                mode_name(mode), outdir);
        close(m);
    }
    if (m < 0) {
        snprintf(msg, cap, "buffer directory %.180s: %s", path, strerror(errno));
        close(fd);
        rmdir(path);
        return -1;
    }
    return fd;
}

void fdrd_bufdir_remove(int fd, const char *path)
{
    unlinkat(fd, FDR__BUFDIR_MARK, 0);
    close(fd);
    if (rmdir(path) < 0)
        fdrd_log("buffer directory %s kept: %s (fdr recover reads what is in it)", path,
                 strerror(errno));
}

int fdrd_bufdir_proc(int top, const char *pname, long pid, uint32_t route, char *name,
                     size_t cap)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (fdr__tracedir_name(name, cap, pname[0] ? pname : "process",
                               (unsigned long)pid) < 0)
            return -ENAMETOOLONG;
        if (attempt) {
            size_t len = strlen(name);
            snprintf(name + len, cap - len, ".%u", route);
        }
        if (mkdirat(top, name, 0700) == 0)
            return open_own_dir(top, name);
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

static void ring_name(char *name, size_t cap, uint32_t route, uint32_t k)
{
    snprintf(name, cap, "ring-%u-%u", route, k);
}

void fdrd_bufdir_ring_remove(int dir, uint32_t route, uint32_t k)
{
    char name[48];
    ring_name(name, sizeof name, route, k);
    unlinkat(dir, name, 0);
}

int fdrd_bufdir_ring(int dir, uint32_t route, uint32_t k, uint64_t size, int *named)
{
    char name[48];
    ring_name(name, sizeof name, route, k);
    *named = 0;
    int fd = openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR)
        return -errno;
    if (fd < 0) { /* no O_TMPFILE here: named now, its header comes later */
        fd = openat(dir, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            return -errno;
        *named = 1;
    }
    int e = 0;
    if (ftruncate(fd, (off_t)size) < 0)
        e = -errno;
    else {
        int rc = posix_fallocate(fd, 0, (off_t)size);
        if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL)
            e = -rc;
    }
    if (e) {
        close(fd);
        if (*named)
            unlinkat(dir, name, 0);
    }
    return e ? e : fd;
}

int fdrd_bufdir_ring_link(int dir, int fd, uint32_t route, uint32_t k)
{
    char name[48], self[64];
    ring_name(name, sizeof name, route, k);
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, self, dir, name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

void fdrd_bufdir_proc_remove(int top, int dir, const char *name)
{
    DIR *d = fdopendir(dir);
    if (!d) {
        close(dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "ring-", 5) == 0 || fdr__tracedir_is_ours(e->d_name))
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
    if (unlinkat(top, name, AT_REMOVEDIR) < 0)
        fdrd_log("buffer directory of %s kept: %s", name, strerror(errno));
}
