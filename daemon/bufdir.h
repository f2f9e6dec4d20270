/* SPDX-License-Identifier: MIT */
/* bufdir.h - file-backed buffers: a trace whose rings are files in a
 * directory, so that what the programs committed outlives fdrd
 * (`fdr create --file-buffers`, `fdr recover`; bufdir.c says how). */
#ifndef FDRD_BUFDIR_H
#define FDRD_BUFDIR_H

#include <stddef.h>
#include <stdint.h>

/* Makes the buffer directory of a new trace: `path` (absolute), or, when
 * it is "", <rundir>/buffers/<name>-<pid>.<id> (written into path). The
 * directory must not exist: fdrd makes it, 0700, and writes its mark
 * (name, mode, output directory). Returns its descriptor, or -1 with a
 * one-line message in msg. */
int fdrd_bufdir_create(const char *rundir, char *path, size_t path_cap, const char *name,
                       uint32_t id, uint32_t mode, const char *outdir, char *msg,
                       size_t cap);

/* Removes what fdrd_bufdir_create made, once everything is written out:
 * the mark, then the directory (kept, with a log line, when something is
 * left in it: the rings of a process fdrd could not write out). Closes fd. */
void fdrd_bufdir_remove(int fd, const char *path);

/* Makes the directory of one process's rings in buffer directory top:
 * "<process name>-<pid>" (0700; "...-<pid>.<route>" when that exists),
 * its name in name[cap]. Returns its descriptor or -errno. */
int fdrd_bufdir_proc(int top, const char *pname, long pid, uint32_t route, char *name,
                     size_t cap);

/* Creates ring file "ring-<route>-<k>" (0600) of `size` bytes in process
 * directory dir, its blocks reserved (a write into a file hole on a full
 * disk would kill the program with SIGBUS). The file has no name yet
 * (O_TMPFILE): fdrd_bufdir_ring_link names it once its header is written,
 * so that a ring file in the directory is always a whole ring, even when
 * fdrd is killed meanwhile; where O_TMPFILE is missing it is named at
 * once (*named = 1). Returns an O_RDWR descriptor or -errno. */
int fdrd_bufdir_ring(int dir, uint32_t route, uint32_t k, uint64_t size, int *named);
/* Gives the unnamed ring file fd its name. 0 or -errno. */
int fdrd_bufdir_ring_link(int dir, int fd, uint32_t route, uint32_t k);

/* Removes ring file k of route (one fdrd made and could not give). */
void fdrd_bufdir_ring_remove(int dir, uint32_t route, uint32_t k);

/* Removes process directory `name` of top (dir: its descriptor, closed):
 * its ring files, metadata and class file. */
void fdrd_bufdir_proc_remove(int top, int dir, const char *name);

#endif
