/* SPDX-License-Identifier: MIT */
/* common/tracedir.h - the one place that creates trace directories and the
 * files in them (FDR_OUTPUT, snapshots, crash dumps; later fdrd), so that a
 * path another user prepared is never written through.
 *
 * Rules (see tracedir.c for the why):
 *   - the top directory is the one the user named (FDR_OUTPUT, FDR_CRASH_DIR,
 *     FDR_SNAPSHOT_DIR, fdr_snapshot's argument): it is created if missing,
 *     and walked by common/pathwalk.h's rule: a symlink on its path is
 *     followed only where nobody but the user (or root) could have put it;
 *   - every directory below it is made by fdr (mkdirat) or, if it already
 *     exists, used only when it is a real directory owned by the effective
 *     user and writable by nobody else;
 *   - files are created with openat + O_CREAT | O_EXCL | O_NOFOLLOW; an
 *     existing name is replaced only when it is a regular file of ours;
 *   - metadata is replaced atomically: a temporary, then renameat.
 *
 * Every function is async-signal-safe (system calls only, no malloc, no
 * stdio, no globals), for the crash handler. Errors are negative errno
 * values: -EPERM for a directory owned by another user or writable by
 * others, -EEXIST for a name that is a symlink or someone else's file. */
#ifndef FDR_COMMON_TRACEDIR_H
#define FDR_COMMON_TRACEDIR_H

#include <stddef.h>

/* Opens the directory the user named at `path` (relative to the working
 * directory), creating what is missing of it (0755): fdr__pathwalk.
 * Returns an O_DIRECTORY | O_CLOEXEC descriptor, or -errno (-ENOTDIR;
 * -ELOOP, -EPERM for a path another user could have prepared). */
int fdr__tracedir_open_top(const char *path);

/* Creates directory `name` in dir_fd (0755) or opens the existing one if it
 * is a real directory (not a symlink) owned by the effective user and not
 * writable by group or others. Returns its descriptor, or -errno (-EPERM). */
int fdr__tracedir_make(int dir_fd, const char *name);

/* Creates file `name` in dir_fd for writing (0644), never through a symlink.
 * An existing regular file of ours is removed first (an earlier trace);
 * any other existing name gives -EEXIST. Returns the descriptor or -errno. */
int fdr__tracedir_create(int dir_fd, const char *name);

/* Replaces file `name` in dir_fd atomically: emit(fd, arg) writes a
 * temporary ".<name>.tmp" (made as fdr__tracedir_create makes files),
 * which is then renamed over `name`; `name` itself must be absent or a
 * regular file of ours. Returns 0, emit's negative result, or -errno; on
 * error `name` is unchanged and the temporary removed. */
int fdr__tracedir_replace(int dir_fd, const char *name, int (*emit)(int fd, void *arg),
                          void *arg);

/* Removes from dir_fd the files fdr writes ("metadata", FDR__CLASSES_FILE,
 * their temporaries ".<name>.tmp", the open marks,
 * "stream_<n>") that are regular files of ours: what an earlier trace in
 * the same directory left. Other names are never touched. Returns 0 or
 * -errno. */
int fdr__tracedir_clear(int dir_fd);

/* 1 when `name` is one of the file names fdr writes in a trace directory. */
int fdr__tracedir_is_ours(const char *name);

/* The mark of a trace directory being written: made when its writer (the
 * process itself with FDR_OUTPUT, or fdrd for the process's part of one of
 * its traces) opens the directory, removed once every event of it is in
 * the stream files or counted there (the process's exit, or its drain
 * helper's end after a kill; fdrd's end of the route). A mark that
 * outlives its writers says that they were killed first: a process with
 * its drain helper (a cgroup's kill: `systemctl kill -s KILL`, a container
 * stopped by force) or without one, or fdrd, not restarted while the
 * process lived. The events not yet written then are lost, and nothing in
 * the trace counts them; readers say so (fdr__tracedir_unfinished). An
 * empty file, named for its writer; whether its writers live is said by
 * an flock on the directory (tracedir.c). */
#define FDR__OPEN_FILE ".fdr-open"
#define FDR__OPEN_FILE_FDRD ".fdr-open-fdrd"
/* Takes the directory's lock through dir_fd (fdr__tracedir_mark_hold),
 * then makes the mark in it, of the process (fdrd 0) or of fdrd (1).
 * 0 or -errno. */
int fdr__tracedir_mark_open(int dir_fd, int fdrd);
/* Takes the lock, or again through a new descriptor of the directory (the
 * program closed the one that held it). Never waits (a few tries). */
void fdr__tracedir_mark_hold(int dir_fd);
/* Removes the mark (nothing when there is none). */
void fdr__tracedir_mark_done(int dir_fd);
/* What the mark in dir_fd says: 0 none (finished, or written before
 * marks), 1 its writers still hold it, 2 the process and its helper ended
 * without finishing the trace, 3 fdrd did; -EINVAL for a mark that is not
 * an empty regular file. `pid`, the trace's process (0: unknown), is used
 * only where the file system has no locks. */
int fdr__tracedir_unfinished(int dir_fd, unsigned long pid);

/* Traces on disk are evidence (a crashed service's last run): fdr removes
 * one only within a budget the user set (FDR_OUTPUT_KEEP). Removes from
 * top_fd the oldest (by modification time) per-process traces of ended
 * processes ("<name>-<pid>" and "<name>-<pid>.<k>" directories of ours
 * holding metadata and only fdr's files; never pid `self`'s own, one
 * whose open mark is held, nor crash-* and snapshot* directories) until
 * `keep` are left, calling
 * removed(name, arg) for each. Returns how many went, or -errno. */
int fdr__tracedir_budget(int top_fd, unsigned long self, unsigned keep,
                         void (*removed)(const char *name, void *arg), void *arg);

/* A trace directory `name` of top_fd left by an earlier process with the
 * same pid (or by this process before an exec) is kept: renamed to
 * "<name>.<k>" (the first free k from 1), its new name in aside. Returns 1
 * when it was renamed, 0 when there was nothing to keep (absent, or
 * without a trace), -errno otherwise. */
int fdr__tracedir_set_aside(int top_fd, const char *name, char *aside, size_t cap);

/* Builds "<name>-<number>" into out, NUL-terminated (characters of name
 * other than [A-Za-z0-9._+] become '_', a leading '.' too): the name of a
 * per-process directory, e.g. "myprog-1234" or "crash-1234". Returns the
 * length, or -ENAMETOOLONG. */
int fdr__tracedir_name(char *out, size_t cap, const char *name, unsigned long number);

#endif
