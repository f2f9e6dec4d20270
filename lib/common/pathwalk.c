/* SPDX-License-Identifier: MIT */
/* pathwalk.c - reaching a directory by path without trusting the path
 * (pathwalk.h has the rule).
 *
 * Why walk instead of open(path): the kernel resolves every symlink on a
 * path, including one another user planted in /tmp a moment before, and
 * mkdir -p happily makes our directories inside theirs. Here each
 * component is opened relative to the descriptor of the one before it
 * with O_NOFOLLOW, so what we checked is what we use (no name is resolved
 * twice), and a symlink is followed only after we decided to: its target
 * is read (readlinkat) and put in front of what is left of the path, then
 * walked by the same rule, component by component.
 *
 * The buffers are on the stack (8 KiB): the crash handler runs on a 128 KiB
 * alternate stack. */
#define _GNU_SOURCE
#include "common/pathwalk.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)
#define WALK_MAX 4096 /* a path, and a link's target */
#define LINKS_MAX 16  /* symlinks followed in one walk, as loops end */

/* at[0..cap) += s, truncated; *len is the length it would have. */
static void at_add(char *at, size_t cap, size_t *len, const char *s)
{
    for (; *s; s++, (*len)++)
        if (at && *len + 1 < cap) {
            at[*len] = *s;
            at[*len + 1] = 0;
        }
}

static void at_cut(char *at, size_t cap, size_t *len, size_t to)
{
    *len = to;
    if (at && to < cap)
        at[to] = 0;
}

/* Only we or root can have made a name in a directory like st. */
static int closed(const struct stat *st, uid_t me)
{
    return (st->st_uid == me || st->st_uid == 0) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static int walk(const char *path, unsigned mode, int check, char *at, size_t cap)
{
    char buf[WALK_MAX], link[WALK_MAX];
    size_t alen = 0, n = path ? strlen(path) : 0;
    at_cut(at, cap, &alen, 0);
    if (!n)
        return -EINVAL;
    if (n >= sizeof buf)
        return -ENAMETOOLONG;
    memcpy(buf, path, n + 1);
    uid_t me = geteuid();
    int dfd = open(buf[0] == '/' ? "/" : ".", DIR_FLAGS), links = 0, err = 0;
    if (dfd < 0) {
        at_add(at, cap, &alen, buf[0] == '/' ? "/" : ".");
        return -errno;
    }
    for (char *p = buf;;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char *e = p;
        while (*e && *e != '/')
            e++;
        int more = *e != 0;
        *e = 0;
        size_t dir_len = alen;
        if (alen || buf[0] == '/')
            at_add(at, cap, &alen, "/");
        at_add(at, cap, &alen, p);
        struct stat dst, st;
        if (fstat(dfd, &dst) < 0) {
            err = -errno;
            break;
        }
        int fd = openat(dfd, p, DIR_FLAGS | O_NOFOLLOW);
        if (fd < 0 && errno == ENOENT && (mode & 07777) && !check &&
            (!more || (mode & FDR__WALK_PARENTS) || !e[1 + strspn(e + 1, "/")])) {
            if (mkdirat(dfd, p, mode & 07777) < 0 && errno != EEXIST) {
                err = -errno;
                break;
            }
            fd = openat(dfd, p, DIR_FLAGS | O_NOFOLLOW);
        }
        if (fd < 0 && errno == ENOENT && check)
            break; /* the rest will be made by us, in our own directory */
        if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
            fstatat(dfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
            /* followed only when nobody else could have put it there */
            if (!closed(&dst, me) && !((dst.st_mode & S_ISVTX) && st.st_uid == me)) {
                err = -ELOOP;
                break;
            }
            ssize_t k = readlinkat(dfd, p, link, sizeof link);
            size_t rest = more ? strlen(e + 1) : 0;
            if (k <= 0 || ++links > LINKS_MAX) {
                err = k < 0 ? -errno : -ELOOP;
                break;
            }
            if ((size_t)k + 1 + rest + 1 > sizeof buf) {
                err = -ENAMETOOLONG;
                break;
            }
            /* buf = target "/" rest: the link's target is walked next */
            memmove(buf + k + 1, more ? e + 1 : "", rest + 1);
            memcpy(buf, link, (size_t)k);
            buf[k] = '/';
            p = buf;
            at_cut(at, cap, &alen, dir_len);
            if (link[0] == '/') {
                close(dfd);
                at_cut(at, cap, &alen, 0);
                if ((dfd = open("/", DIR_FLAGS)) < 0)
                    return -errno;
            }
            continue;
        }
        if (fd < 0) {
            err = -errno;
            break;
        }
        /* in an open directory, a directory of someone else's is theirs
         * to change under us (and to read what we write there) */
        if (!closed(&dst, me) &&
            (fstat(fd, &st) < 0 || (st.st_uid != me && st.st_uid != 0))) {
            close(fd);
            err = -EPERM;
            break;
        }
        close(dfd);
        dfd = fd;
        if (!more)
            break;
        p = e + 1;
    }
    if (err < 0 || check) {
        close(dfd);
        return err;
    }
    at_cut(at, cap, &alen, 0);
    return dfd;
}

int fdr__pathwalk(const char *path, unsigned mode, char *at, size_t cap)
{
    return walk(path, mode, 0, at, cap);
}

int fdr__pathwalk_check(const char *path, char *at, size_t cap)
{
    int r = walk(path, 0, 1, at, cap);
    return r == -ELOOP || r == -EPERM ? r : 0; /* other errors: at the write */
}

const char *fdr__pathwalk_strerror(int err)
{
    if (err == ELOOP)
        return "a symlink in a directory others can write, not made by you: not "
               "followed";
    if (err == EPERM)
        return "another user's directory, in a directory others can write: not used";
    return strerror(err);
}
