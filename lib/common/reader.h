/* SPDX-License-Identifier: MIT */
/* common/reader.h - reads trace directories written by fdr: the events of
 * every stream of every process, merged by time, streamed packet by
 * packet (the reader of `fdr print`, `fdr stats`, `fdr record`).
 *
 * A path is either one process's trace (<name>-<pid>/ holding metadata,
 * .fdr-classes and stream_N) or a directory holding several of them (the
 * output layout, DIR/<name>-<pid>/; one level down only).
 *
 * Every file is untrusted input: each packet is checked (common/validate.h)
 * and its events walked (common/iter.h). Anything wrong is reported once
 * through the caller's diagnostic callback as (file, byte offset, what) and
 * skipped: a bad event skips the rest of its packet, a bad packet header
 * makes the reader look for the next packet header of the same stream
 * (resynchronisation on the CTF magic), a bad class file skips that
 * process. Memory: one packet buffer per stream (at most the packet size
 * the header claims, itself at most FDR__PACKET_MAX), a class file per
 * process; the trace is never loaded whole.
 *
 * Events of one process are merged by clock value (all streams of a
 * process share one clock); processes are merged the same way, since the
 * processes of one host share the clock (TSC, CNTVCT or CLOCK_MONOTONIC).
 * Ties go to the process found first, then the lower stream index.
 *
 * No threads, no globals, no getenv: a reader is one object owned by its
 * caller. */
#ifndef FDR_COMMON_READER_H
#define FDR_COMMON_READER_H

#include <stddef.h>
#include <stdint.h>

#include "common/classes.h"
#include "common/tsdl.h"

/* One diagnostic: the file (path as opened), the byte offset in it and
 * what is wrong. Strings are only valid during the call. */
typedef void (*fdr__reader_diag_fn)(void *ctx, const char *file, uint64_t offset,
                                    const char *what);

struct fdr__reader;

/* One per-process trace of the reader. */
struct fdr__rd_proc {
    char *path;   /* the directory */
    char *name;   /* process name: the directory name without -<pid> */
    uint32_t pid; /* from its first packet, else from the directory
                     name (0 when neither says) */
    int pid_from_packets;
    unsigned index;     /* 0, 1, ... in the reader */
    unsigned n_streams; /* stream files */
    struct fdr__classes classes;
    struct fdr__line_clock clock; /* as in the class file */
    struct fdr__line_clock line;  /* line time: from the first process's start */
    int swapped; /* written on a machine of the other byte order (common/swap.h) */
    /* Its open mark (common/tracedir.h): 0 finished (or no mark), 1 still
     * being written, 2 its process (with its drain helper) or 3 fdrd ended
     * without finishing it: the events not yet written are lost, and
     * nothing counts them. */
    int unfinished;
};

/* One event. Pointers are valid until the next fdr__reader_next call. */
struct fdr__rd_event {
    const struct fdr__rd_proc *proc;
    const struct fdr__class *c;
    uint32_t pid, tid;       /* from the packet header */
    const char *thread_name; /* 16 bytes, NUL-padded, maybe not terminated */
    unsigned stream;         /* N of stream_N */
    uint64_t ts;             /* clock value */
    uint64_t ns;             /* line time: ns since the start of the trace */
    const char *payload;
    size_t len;
    uint64_t pkt_discarded; /* events_discarded of its packet (cumulative) */
};

/* Totals of one stream file, final once fdr__reader_next returned 0. */
struct fdr__rd_stream_info {
    const struct fdr__rd_proc *proc;
    unsigned stream;       /* N of stream_N */
    uint64_t bytes;        /* file size */
    uint64_t packets;      /* valid packets read */
    uint64_t events;       /* events read */
    uint64_t discarded;    /* events_discarded of its last valid packet */
    uint64_t lost_packets; /* gaps in packet_seq_num (overwritten packets) */
};

/* Opens path. Returns 0 and *out, or a negative errno: -ENOENT (or what
 * open says) when path cannot be opened, -ENODATA when it holds no trace
 * (no readable process with a class file and stream files; each process
 * skipped for a reason has been reported through diag), -ENOMEM. diag may
 * be NULL. */
int fdr__reader_open(const char *path, fdr__reader_diag_fn diag, void *ctx,
                     struct fdr__reader **out);
/* The next event in time order: 1 and *ev, or 0 at the end. */
int fdr__reader_next(struct fdr__reader *r, struct fdr__rd_event *ev);
/* Frees everything; NULL is a no-op. */
void fdr__reader_close(struct fdr__reader *r);

/* The processes (in the order found: sorted by directory name). */
unsigned fdr__reader_procs(const struct fdr__reader *r);
const struct fdr__rd_proc *fdr__reader_proc(const struct fdr__reader *r, unsigned i);
/* The streams of all processes. */
unsigned fdr__reader_streams(const struct fdr__reader *r);
void fdr__reader_stream(const struct fdr__reader *r, unsigned i,
                        struct fdr__rd_stream_info *out);
/* Number of diagnostics reported so far. */
uint64_t fdr__reader_errors(const struct fdr__reader *r);
/* Bytes of all the files of the trace (stream files, metadata, class files). */
uint64_t fdr__reader_bytes(const struct fdr__reader *r);
/* Bytes of the stream files read so far, and in *total (if not NULL) their
 * size: what a progress bar shows. O(streams): call it now and then. */
uint64_t fdr__reader_stream_bytes_done(const struct fdr__reader *r, uint64_t *total);

#endif
