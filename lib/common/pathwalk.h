/* SPDX-License-Identifier: MIT */
/* common/pathwalk.h - the one way fdr (libfdr and fdrd) reaches a directory
 * it was given by path: output, snapshot and crash directories, file
 * buffers. The path is walked one component at a time, each opened with
 * openat(O_NOFOLLOW | O_DIRECTORY) relative to the one before, so that
 * another local user who can write somewhere on the path (/tmp) cannot
 * point it elsewhere with a symlink, nor hand us a directory of theirs.
 *
 * The rule is the one ssh applies to ~/.ssh. A directory is "closed" when
 * it is owned by the effective user or by root and neither group nor
 * others may write it: only we (or root) can have put a name there. In a
 * closed directory, a symlink is followed (its target walked by the same
 * rule): the user put it there on purpose. In an open directory (/tmp, a
 * shared 0777 directory, one of another user's), a symlink is refused
 * (-ELOOP) unless the directory is sticky and the link is ours (nobody
 * else can replace it), and an existing directory is used only when it is
 * ours or root's (-EPERM otherwise). Root walks by the same rule: a link
 * another user planted in /tmp is refused for root too.
 *
 * System calls on descriptors only (no malloc, no stdio, no globals):
 * usable from the crash handler. */
#ifndef FDR_COMMON_PATHWALK_H
#define FDR_COMMON_PATHWALK_H

#include <stddef.h>

/* With the permission bits of fdr__pathwalk's mode: every missing
 * component is made (mkdir -p), not only the last one. */
#define FDR__WALK_PARENTS 0100000u

/* Opens the directory `path` (absolute, or relative to the working
 * directory) by the rule above, creating it when it is missing with the
 * permission bits of `mode` (07777; none when they are 0: a missing one is
 * -ENOENT), and its missing parents too with FDR__WALK_PARENTS. Returns an
 * O_RDONLY | O_DIRECTORY | O_CLOEXEC descriptor, or -errno: -ELOOP for a
 * refused symlink, -EPERM for a refused directory of another user, or
 * what openat/mkdirat said. On error, when at is not NULL, at[0..cap)
 * receives the path up to the component at fault (NUL-terminated,
 * truncated to fit), to name it in the one line the caller prints. */
int fdr__pathwalk(const char *path, unsigned mode, char *at, size_t cap);

/* Walks the components of `path` that exist, by the same rule, creating
 * nothing: -ELOOP or -EPERM (and at[]) when one is refused, else 0 (a
 * missing component ends the walk: we will make it; any other error is
 * left for the write to meet and report). For checking a path
 * when it is given (fdr create -o), before anything is written there. */
int fdr__pathwalk_check(const char *path, char *at, size_t cap);

/* What an error of fdr__pathwalk means, for that one line: the refusals
 * explained ("a symlink in a directory others can write: not followed"),
 * strerror() for the rest. Not async-signal-safe (strerror). */
const char *fdr__pathwalk_strerror(int err);

#endif
