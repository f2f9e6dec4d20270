/* SPDX-License-Identifier: MIT */
/* spans.h - pairing the begins and ends of spans (include/fdr/span.h) in a
 * trace read in time order, for `fdr stats`, `fdr export` and the scope.
 *
 * A span event is one whose first field is span_begin / span_end (u16, the
 * thread's nesting depth when it was recorded) or span_async_begin /
 * span_async_end (u64, the id): docs/trace-format.md, "Spans". Thread
 * spans pair on their thread by depth and name, async ones by (process,
 * name, id). What does not pair is counted, never guessed:
 *   - an end without its begin (its begin discarded or overwritten, or
 *     none was recorded): `unmatched`, and nothing closes;
 *   - a begin never ended (the thread or process ended, was killed, or the
 *     end was lost): `unended`; an outer span's end, or a new begin at its
 *     depth, closes such inner spans first (so that slices nest exactly),
 *     the rest stay open at the end of the trace;
 *   - an async begin whose (name, id) is already open: `reused`; the older
 *     one is closed there, as unended. */
#ifndef FDR_SPANS_H
#define FDR_SPANS_H

#include <stddef.h>
#include <stdint.h>

#include "common/reader.h"

enum span_kind { SPAN_NONE, SPAN_BEGIN, SPAN_END, SPAN_ABEGIN, SPAN_AEND };

/* The kind of class c (its first field's name and type). */
int span_kind_of(const struct fdr__classes *t, const struct fdr__class *c);

struct span_name {
    char *name; /* provider:event */
    uint64_t count, total, self, min, max;
    uint64_t *durs; /* the durations of the `count` ended spans */
    size_t cap;
    uint64_t unmatched, unended, reused;
};

/* A span that this event left without its end, closed at this time. */
struct span_closed {
    unsigned name;
    uint64_t begin_ns, id;
    int async;
    uint64_t track; /* async: the track it was on */
    uint64_t seq;   /* async: its number, one per span */
};

/* What one event did. */
struct span_step {
    int kind;           /* enum span_kind */
    unsigned name;      /* index of its name */
    int matched;        /* an end that closed its begin: dur and self valid */
    uint64_t dur, self; /* ns */
    uint64_t id;        /* async spans */
    /* Async spans: a track no other open span of the process and name is
     * on (reused once free: track_new when first used), and a number of
     * the span's own (seq). */
    uint64_t track, seq;
    int track_new;
    uint32_t begin_tid; /* async end: the thread of the begin */
    /* Spans closed by this event without their end, innermost first
     * (thread spans below an end or a begin, a reused async id). */
    const struct span_closed *closed;
    size_t n_closed;
};

struct spans;

struct spans *spans_new(void);
void spans_free(struct spans *s);
/* Pairs ev (out->kind is SPAN_NONE for any other event); -1 when out of
 * memory. out->closed stays valid until the next call. */
int spans_feed(struct spans *s, const struct fdr__rd_event *ev, struct span_step *out);
/* The same for a reader without a struct fdr__rd_proc (the scope): the
 * process's index and classes are given, ev->proc is not used. */
int spans_feed_raw(struct spans *s, unsigned proc, const struct fdr__classes *t,
                   const struct fdr__rd_event *ev, struct span_step *out);
/* At the end of the trace: every span still open becomes unended. */
void spans_finish(struct spans *s);
/* The names seen, in the order first seen. */
size_t spans_names(const struct spans *s);
struct span_name *spans_name(struct spans *s, size_t i);
/* Totals: ends without begins, begins never ended, async ids reused. */
void spans_totals(const struct spans *s, uint64_t *unmatched, uint64_t *unended,
                  uint64_t *reused);
/* The q-quantile (0..1) of the durations of name i, nearest rank: the
 * smallest value with at least q * count values at or below it. Sorts. */
uint64_t spans_quantile(struct span_name *n, double q);

#endif
