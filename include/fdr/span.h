/* SPDX-License-Identifier: MIT */
/* fdr/span.h - spans: how long something took, as two events.
 *
 *     #include <fdr/fdr.h>
 *
 *     void handle(struct req *r)
 *     {
 *         fdr_span(net, handle, "len=%u", r->len); // ends with the scope
 *         ...
 *     }
 *
 *     fdr_span_begin(db, commit, "rows=%d", n);   // crosses functions
 *     ...
 *     fdr_span_end(db, commit, "rc=%d", rc);      // the end has fields too
 *
 *     fdr_span_async_begin(rpc, call, req_id, "op=%s", op);  // thread A
 *     fdr_span_async_end(rpc, call, req_id, "status=%d", st); // thread B
 *
 * fdr_span(provider, name, format, args...)
 *     A declaration: records the begin of `provider:name` now, with the
 *     fields of format/args exactly as fdr_trace, and its end when the
 *     enclosing scope ends (the cleanup attribute of GCC and Clang in C, a
 *     destructor in C++), also on return, break or goto out of it.
 * fdr_span_begin(provider, name, format, args...)
 * fdr_span_end(provider, name, format, args...)
 *     A span on this thread that begins and ends where the program says;
 *     the end closes the innermost span open on the thread and may carry
 *     fields of its own (format and arguments may be left out).
 * fdr_span_async_begin(provider, name, id, format, args...)
 * fdr_span_async_end(provider, name, id, format, args...)
 *     A span named by a 64-bit id (a request number, a pointer) rather than
 *     by the thread: it may end on another thread, and several may be open
 *     at once. The pair is (provider:name, id).
 *
 * In the trace (docs/trace-format.md, "Spans") a begin and an end are
 * events of the class `provider:name` whose first field says which one it
 * is and pairs it: `span_begin` / `span_end` (the thread's nesting depth,
 * 1 for an outermost span) or `span_async_begin` / `span_async_end` (the
 * id); the other fields follow. babeltrace2 prints them as they are:
 *     net:handle: { span_begin = 1, len = 60 }
 *     net:handle: { span_end = 1 }
 * `fdr stats` gives durations per span name, `fdr export` draws slices.
 *
 * Cost: a begin or an end is one event (one more u16 or u64 field), plus
 * for thread spans a few stores into the thread's own span stack (the
 * depth, and the class id of the 16 outermost spans, which the crash dump
 * prints: the spans each thread was inside when the program died). An
 * off span costs what an off event costs (one load, one branch), its end
 * a test of a local. -DFDR_DISABLE removes them as it removes fdr_trace.
 *
 * Begin and end are recorded and printed as the one name provider:name
 * (FDR_EVENTS=net:handle), so they are on or off together; a rule change
 * between a begin and its end leaves a span without its end (counted as
 * unended by the readers) or an end without its begin (counted too). */
#ifndef FDR_SPAN_H
#define FDR_SPAN_H

#include "fdr/trace.h"

#ifndef FDR_DISABLE

/* A thread span begins: its class goes on this thread's stack. Evaluated
 * as the first field of the begin, i.e. only when the event is on. */
static inline uint32_t fdr__span_push(const struct fdr__site *s)
{
    struct fdr__thread *t = &fdr__self;
    uint32_t d = t->span_depth;
    /* Relaxed atomic stores (plain movs): the crash handler of another
     * thread reads them (crash.c). */
    if (d < FDR__SPAN_KEEP)
        __atomic_store_n(&t->span_ids[d], s->id, __ATOMIC_RELAXED);
    /* Observable: a crash handler on this thread sees the id before the
     * depth that covers it (other threads are stopped before it reads). */
    __atomic_signal_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&t->span_depth, d + 1, __ATOMIC_RELAXED);
    return d + 1;
}

/* The depth recorded in a begin or an end: saturated, never wraps. */
static inline unsigned short fdr__span_depth16(uint32_t d)
{
    return (unsigned short)(d < 65535u ? d : 65535u);
}

/* fdr_span_end: the innermost span ends; its depth, 0 when none is open
 * (an end without its begin, which readers count). */
static inline unsigned short fdr__span_pop(void)
{
    struct fdr__thread *t = &fdr__self;
    uint32_t d = t->span_depth;
    __atomic_store_n(&t->span_depth, d ? d - 1 : 0, __ATOMIC_RELAXED);
    return fdr__span_depth16(d);
}

/* The end of a scoped span (fdr_span) whose begin was recorded at depth d:
 * spans begun inside it and left open end with it on the stack. */
static inline void fdr__span_close_on(struct fdr__site *end, uint32_t d)
{
    uint8_t fdr__st = fdr__site_state(end);
    unsigned short fdr__d16 = fdr__span_depth16(d);
    __atomic_store_n(&fdr__self.span_depth, d - 1, __ATOMIC_RELAXED);
    FDR__RECORD(end, fdr__st, fdr__d16)
}

/* Inlined whatever the compiler thinks: an off span's end is then one
 * test of a local, not a call. */
FDR__INLINE void fdr__span_close(struct fdr__site *end, uint32_t d)
{
    if (d) /* else its begin was off: nothing to end */
        fdr__span_close_on(end, d);
}

#ifdef __cplusplus
struct fdr__span_scope {
    struct fdr__site *end;
    uint32_t depth;
    ~fdr__span_scope()
    {
        fdr__span_close(end, depth);
    }
};
#define FDR__SPAN_VAR(v) fdr__span_scope v
#else
struct fdr__span_scope {
    struct fdr__site *end;
    uint32_t depth;
};
FDR__INLINE void fdr__span_scope_end(struct fdr__span_scope *sc)
{
    fdr__span_close(sc->end, sc->depth);
}
#define FDR__SPAN_VAR(v)                                                                 \
    struct fdr__span_scope v __attribute__((cleanup(fdr__span_scope_end), unused))
#endif

/* One event of a span: `head` names its first field (the span marker),
 * of the type of `ty0`, and `val` is its value, evaluated only when the
 * event is on (it may refer to the site, fdr__site_); fmt and the rest are
 * the caller's. */
#define FDR__SPAN_EV(prov, ev, head, ty0, val, fmt, ...)                                 \
    do {                                                                                 \
        FDR__SITE_DECL(prov, ev, NULL, 0, head fmt, ty0 __VA_OPT__(, ) __VA_ARGS__)      \
        uint8_t fdr__st = fdr__site_state(&fdr__site_);                                  \
        FDR__FORMAT_CHECK(head fmt, ty0 __VA_OPT__(, ) __VA_ARGS__)                      \
        FDR__RECORD(&fdr__site_, fdr__st, val __VA_OPT__(, ) __VA_ARGS__)                \
    } while (0)
#define FDR__SPAN_DEPTH0 ((unsigned short)0)
#define FDR__SPAN_ID0 ((unsigned long long)0)

/* The end of a scoped span is a site of its own (format "span_end=%hu"),
 * listed like every other; the begin's first field pushes the span and
 * keeps its depth for the end. */
#define FDR__SPAN_SCOPE(v, prov, ev, fmt, ...)                                           \
    static struct fdr__site FDR__CAT(v, _end) = {                                        \
        FDR__S_NEW, FDR__SITE_TRACE, 1,    0,        0,           0, __LINE__, prov,     \
        ev,         "span_end=%hu",  NULL, __FILE__, {FDR__T_U16}};                      \
    static struct fdr__site *const FDR__CAT(v, _list)                                    \
        __attribute__((section("fdr_sites"), used)) = &FDR__CAT(v, _end);                \
    FDR__SPAN_VAR(v) = {                                                                 \
        &FDR__CAT(v, _end), __extension__({                                              \
            uint32_t fdr__sd = 0;                                                        \
            FDR__SPAN_EV(prov, ev, "span_begin=%hu ", FDR__SPAN_DEPTH0,                  \
                         fdr__span_depth16(fdr__sd = fdr__span_push(&fdr__site_)),       \
                         fmt __VA_OPT__(, ) __VA_ARGS__);                                \
            fdr__sd;                                                                     \
        })}

#define fdr_span(provider, event, ...)                                                   \
    FDR__SPAN_SCOPE(FDR__CAT(fdr__span_, __COUNTER__), #provider, #event, "" __VA_ARGS__)
#define fdr_span_begin(provider, event, ...)                                             \
    FDR__SPAN_EV(#provider, #event, "span_begin=%hu ", FDR__SPAN_DEPTH0,                 \
                 fdr__span_depth16(fdr__span_push(&fdr__site_)), "" __VA_ARGS__)
#define fdr_span_end(provider, event, ...)                                               \
    FDR__SPAN_EV(#provider, #event, "span_end=%hu ", FDR__SPAN_DEPTH0, fdr__span_pop(),  \
                 "" __VA_ARGS__)
#define fdr_span_async_begin(provider, event, id, ...)                                   \
    FDR__SPAN_EV(#provider, #event, "span_async_begin=%llu ", FDR__SPAN_ID0,             \
                 (unsigned long long)(id), "" __VA_ARGS__)
#define fdr_span_async_end(provider, event, id, ...)                                     \
    FDR__SPAN_EV(#provider, #event, "span_async_end=%llu ", FDR__SPAN_ID0,               \
                 (unsigned long long)(id), "" __VA_ARGS__)

#else /* FDR_DISABLE */

/* Statements that do nothing, arguments type-checked (trace.h). */
#define fdr_span(provider, event, ...)                                                   \
    do {                                                                                 \
        FDR__DISABLED_CHECK(__VA_ARGS__)                                                 \
    } while (0)
#define fdr_span_begin(provider, event, ...) fdr_span(provider, event, __VA_ARGS__)
#define fdr_span_end(provider, event, ...) fdr_span(provider, event, __VA_ARGS__)
#define fdr_span_async_begin(provider, event, id, ...)                                   \
    do {                                                                                 \
        if (0)                                                                           \
            (void)(id);                                                                  \
        FDR__DISABLED_CHECK(__VA_ARGS__)                                                 \
    } while (0)
#define fdr_span_async_end(provider, event, id, ...)                                     \
    fdr_span_async_begin(provider, event, id, __VA_ARGS__)

#endif /* FDR_DISABLE */
#endif
