/* SPDX-License-Identifier: MIT */
/* common/tsdl.h - what a trace directory says about its events, written
 * from explicit parameters (no process globals), async-signal-safe: the
 * CTF 1.8 metadata (TSDL) and the class file ".fdr-classes", which keeps
 * each class's format string and source location for tools that print a
 * trace later as live tracing did (docs/trace-format.md). Both write
 * through a caller's buffer to a file descriptor: no malloc, no stdio. */
#ifndef FDR_COMMON_TSDL_H
#define FDR_COMMON_TSDL_H

#include <stddef.h>
#include <stdint.h>

#include "common/classes.h"

/* The name of the class file in a trace directory: '.'-prefixed, so that
 * babeltrace2's ctf.fs source does not take it for a stream file. */
#define FDR__CLASSES_FILE ".fdr-classes"

struct fdr__tsdl_params {
    uint8_t uuid[16];
    uint64_t clock_freq;        /* Hz */
    int64_t clock_offset_s;     /* seconds from the epoch at clock value 0 */
    uint64_t clock_offset;      /* plus this many cycles */
    const char *clock_desc;     /* the clock's description */
    long pid;                   /* env.vpid */
    const char *procname;       /* env.procname */
    const char *hostname;       /* env.hostname */
    unsigned version[3];        /* env.tracer_major, _minor, _patch */
    const char *version_string; /* env.tracer_version */
    const struct fdr__classes *classes;
};

/* Writes the TSDL metadata of p to fd through buf. Returns 0 or -errno. */
int fdr__tsdl_emit(int fd, char *buf, size_t cap, const struct fdr__tsdl_params *p);

/* The clock of TSDL metadata text (len bytes, NUL-terminated) as
 * fdr__tsdl_emit writes it: a clock value v is at offset_s + (v + offset) /
 * freq seconds since the epoch. 0, or -1 when the text has no such clock
 * (untrusted text: only read). */
int fdr__tsdl_clock(const char *meta, size_t len, uint64_t *freq, int64_t *offset_s,
                    uint64_t *offset);

/* The clock of text lines: an event's time on a line is the time since
 * `start` (a clock value) at `freq` Hz (fdr__line_clock_ns). */
struct fdr__line_clock {
    uint64_t start, freq;
};
/* Nanoseconds from k->start to clock value v (0 before start). */
uint64_t fdr__line_clock_ns(const struct fdr__line_clock *k, uint64_t v);

/* Writes the class file of table t, with line clock k, to fd through buf.
 * Returns 0 or -errno. */
int fdr__classes_emit(int fd, char *buf, size_t cap, const struct fdr__classes *t,
                      const struct fdr__line_clock *k);
/* A class file written on a machine of the other byte order (its magic
 * reversed) turned into this machine's, in place: 1 when it was, then the
 * program's packets are in the other order too (common/swap.h); 0 when
 * the file is in this machine's order or is not a class file. */
int fdr__classes_swap(void *file, size_t len);
/* Reads a class file's bytes (untrusted) into a view that points into
 * them, and its line clock into k. Returns 0, or -1 with *why naming what is wrong and
 * *at its byte offset. */
int fdr__classes_load(const void *file, size_t len, struct fdr__classes *out,
                      struct fdr__line_clock *k, const char **why, size_t *at);

#endif
