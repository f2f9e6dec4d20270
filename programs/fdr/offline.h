/* SPDX-License-Identifier: MIT */
/* offline.h - what the verbs that read a trace on disk share (offline.c):
 * opening a trace with its diagnostics printed, the pattern check, time
 * arguments, JSON strings. */
#ifndef FDR_PROGRAMS_OFFLINE_H
#define FDR_PROGRAMS_OFFLINE_H

#include <stdint.h>
#include <stdio.h>

#include "common/reader.h"

struct fdr__rules;

/* Diagnostics of one verb's reader: each is one line on stderr,
 * "fdr VERB: FILE: offset N: what". */
struct off_diag {
    const char *verb;
    int quiet; /* count, print nothing */
    uint64_t count;
};
void off_diag_fn(void *ctx, const char *file, uint64_t offset, const char *what);

/* Opens the trace at dir for `verb`. Returns 0 and *r, or an exit status
 * (1) after one line on stderr (unless d->quiet): no such directory, no
 * trace in it, out of memory. */
int off_open(const char *dir, struct off_diag *d, struct fdr__reader **r);

/* One warning line on stderr for each process whose trace was not finished
 * (its open mark: common/tracedir.h): what it had not written is lost,
 * uncounted. Returns how many. off_open says them, unless quiet. */
unsigned off_unfinished(struct fdr__reader *r, const char *verb);

/* Parses a pattern list (docs/environment.md) for `verb`; a bad item is
 * ONE line "fdr VERB: bad pattern 'SPEC' (WHAT): why", status 2 and *out
 * NULL. Unless `events_only` is 0, tunables (NAME=VALUE) and help/list are
 * refused too. Returns 0 (and *out) or 2. */
int off_pattern(const char *verb, const char *what, const char *spec, int events_only,
                struct fdr__rules **out);
/* 1 when a rule set (non-NULL) selects provider:event, with FDR_EVENTS's
 * default: a list that starts with a '-' item keeps what it does not name. */
int off_pattern_match(const struct fdr__rules *r, const char *provider,
                      const char *event);

/* Seconds with up to 9 decimals ("1.5", "12", ".25") to nanoseconds;
 * 0 or -1 when it is not such a number. */
int off_seconds(const char *s, uint64_t *ns);
/* A non-negative decimal integer that fits in 32 bits; 0 or -1. */
int off_u32(const char *s, uint32_t *v);

/* Writes s (at most n bytes, stopping at a NUL) as a JSON string, quoted,
 * escaped, invalid UTF-8 bytes as U+FFFD. */
void off_json_str(FILE *f, const char *s, size_t n);

#endif
