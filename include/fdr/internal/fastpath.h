/* SPDX-License-Identifier: MIT */
/* fdr/internal/fastpath.h - the inline recording fast path.
 *
 * Not a public API: the names here (fdr__*) may change in any release.
 * Instrumented code reaches them only through the macros of <fdr/trace.h>.
 *
 * An event goes through three steps, all inlined at the call site:
 *
 *   1. site state    one relaxed load of the call site's state byte and one
 *                    branch. 0 means "off": nothing else runs, arguments are
 *                    not evaluated.
 *   2. fdr__reserve  enter the tracing section, then ONE test: the site is
 *                    only recorded (state == FDR__S_RECORD), this thread is
 *                    not already inside an event, and the event fits below
 *                    `end`. Read the clock, store the event header.
 *   3. fdr__commit   store the committed position in the packet's tail (for
 *                    a reader that has only the buffer), publish the new
 *                    write position, leave the section.
 *
 * When the one test fails, the call site takes its other copy of the
 * payload stores, between fdr__reserve_slow() and fdr__commit_slow().
 *
 * `end` carries every other slow case: it is NULL (so nothing fits) for a
 * thread that has no packet yet (new thread, full packet that was closed)
 * and whenever tracing is paused or disabled for the thread (a controller
 * pulls it down, lib/recorder/section.c; the slow path puts it back). So
 * the fast path never loads `enabled`, and printing is decided from the
 * state byte already in a register, not from a word of the thread.
 *
 * Cost of an enabled two-int event: the clock read (rdtsc, not serializing,
 * so it overlaps with the rest), 5 loads (state, in_section, end, pos,
 * limit, plus the class id), 7 stores (in_section, header, two fields, tail, pos,
 * in_section), one branch. No atomic read-modify-write, no fence, no call.
 * docs/hotpath.md shows the generated code (scripts/disasm-hotpath.sh). */
#ifndef FDR_INTERNAL_FASTPATH_H
#define FDR_INTERNAL_FASTPATH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fdr/internal/visibility.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Field types, as stored in a site and in the registry. Stable values: they
 * end up in shared memory and in the daemon protocol. */
enum fdr__type {
    FDR__T_NONE = 0,
    FDR__T_BOOL = 1,
    FDR__T_CHAR = 2,
    FDR__T_I8 = 3,
    FDR__T_U8 = 4,
    FDR__T_I16 = 5,
    FDR__T_U16 = 6,
    FDR__T_I32 = 7,
    FDR__T_U32 = 8,
    FDR__T_I64 = 9,
    FDR__T_U64 = 10,
    FDR__T_F32 = 11,
    FDR__T_F64 = 12,
    FDR__T_PTR = 13,
    FDR__T_STR = 14,
    FDR__T_BYTES = 15, /* u32 length + bytes, for raw events */
    /* What the registry stores, so that a reader on another machine knows
     * the sizes and signedness the program had (docs/portability.md):
     * plain char where it is unsigned (arm, s390x, riscv64), and a
     * pointer of a 32-bit target. FDR__T_PTR is an 8-byte pointer. */
    FDR__T_UCHAR = 16,
    FDR__T_PTR32 = 17,
};

/* Site state bits. FDR__S_NEW is set in every static initializer so that
 * the first use of a site takes the slow path, which registers it. */
#define FDR__S_RECORD 0x01u
#define FDR__S_PRINT 0x02u
#define FDR__S_MULTI 0x04u /* also copied into other fdrd traces (slow path) */
#define FDR__S_NEW 0x80u

#define FDR__SITE_TRACE 0
#define FDR__SITE_GUARD 1

#define FDR_MAX_FIELDS 12
/* Open spans of a thread the crash dump can name (deeper ones are counted). */
#define FDR__SPAN_KEEP 16

/* One per call site (fdr_trace) or guard (fdr_enabled), a static variable.
 * Process-local: it holds pointers to the site's literals. The registry
 * copies what it needs into its own pointer-free records. */
struct fdr__site {
    uint8_t state;    /* FDR__S_* bits; relaxed loads and stores */
    uint8_t kind;     /* FDR__SITE_TRACE or FDR__SITE_GUARD */
    uint8_t nargs;    /* number of fields */
    uint8_t category; /* 0..31, the filter-mask bit of fdrd's traces */
    uint16_t id;      /* event class id, valid once registered */
    uint16_t reserved2;
    uint32_t line;
    const char *provider;
    const char *event;
    const char *format; /* printf-style, may be NULL for guards */
    const char *names;  /* "a,b,c" field names, or NULL: taken from format */
    const char *file;
    uint8_t types[FDR_MAX_FIELDS + 4]; /* zero after the last field */
};

/* Per-thread writer state, in initial-exec TLS: reached with one
 * %fs-relative address, no call. The controller side (snapshot, flush)
 * reads and writes `enabled`, pulls `end` down to NULL and reads
 * `in_section` of other threads. */
struct fdr__thread {
    char *pos; /* next free byte in the current packet */
    char *end; /* the current packet's tail, or NULL */
    /* The last clock value the current packet can hold: its
     * timestamp_begin + 2^32 - 1 (the event header keeps the clock's low 32
     * bits, see FDR__EVENT_HEADER_SIZE). Set with `end` by the slow path. */
    uint64_t limit;
    uint32_t in_section;        /* 1 while this thread writes an event */
    uint32_t enabled;           /* tracing activity of this thread */
    struct fdr__site *printing; /* site whose event is printed at commit */
    char *print_start;          /* where that event's payload starts */
    void *writer;               /* cold: lib-private state of this thread */
    /* Spans open on this thread (fdr/span.h): their number, and the class
     * ids of the outermost FDR__SPAN_KEEP of them, for the crash dump
     * (crash.c), which reads them from a signal handler: an id is stored
     * before the depth that covers it (signal fence). Class ids, not site
     * pointers: a class outlives the module (dlclose) of its site. */
    uint32_t span_depth;
    uint16_t span_ids[FDR__SPAN_KEEP];
};

FDR__EXTERN __thread struct fdr__thread fdr__self
    __attribute__((tls_model("initial-exec")));

/* Out of line. */
FDR__EXTERN char *fdr__reserve_slow(struct fdr__site *site, size_t payload, char **tail);
FDR__EXTERN void fdr__commit_slow(char *end, char *tail);
/* Commits an event recorded on the fast path that other fdrd traces take
 * too (FDR__S_MULTI): copies it into this thread's rings of them first. */
FDR__EXTERN void fdr__commit_multi(struct fdr__site *site, char *end, char *tail);
FDR__EXTERN int fdr__guard_check(struct fdr__site *site);
FDR__EXTERN void fdr__register_sites(struct fdr__site *const *begin,
                                     struct fdr__site *const *end);
/* Forgets the sites of a module that is unloaded (dlclose); their classes
 * stay. Called by a destructor in each module (trace.h). */
FDR__EXTERN void fdr__unregister_sites(struct fdr__site *const *begin,
                                       struct fdr__site *const *end);
FDR__EXTERN uint32_t fdr__string_max; /* longest string stored, in bytes */

/* Event header: event class id (u16) + the low 32 bits of the clock (u32),
 * byte-aligned. A reader rebuilds the full value as CTF 1.8 says
 * (babeltrace2 does): from the packet's timestamp_begin, the low bits
 * replaced, plus one wrap when they are below the previous event's. So
 * every event of a packet has timestamp_begin <= ts < timestamp_begin +
 * 2^32 (fdr__thread.limit): a thread idle for longer (about a second)
 * starts a new packet. */
#define FDR__EVENT_HEADER_SIZE 6
#define FDR__TS_SPAN ((uint64_t)1 << 32)

/* The full clock value of an event whose header holds `low`, in a packet
 * that began at `base` (base <= value < base + 2^32). */
static inline uint64_t fdr__ts_full(uint64_t base, uint32_t low)
{
    return base + (uint32_t)(low - (uint32_t)base);
}

#define fdr__barrier() __asm__ __volatile__("" ::: "memory")

/* The call site has two copies of the payload stores (fast and slow path):
 * inlined whatever the compiler would decide for a function used twice. */
#define FDR__INLINE static inline __attribute__((always_inline))

static inline uint8_t fdr__site_state(const struct fdr__site *s)
{
    return __atomic_load_n(&s->state, __ATOMIC_RELAXED);
}

static inline uint64_t fdr__now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#elif defined(__riscv) && __riscv_xlen == 64
    uint64_t v; /* the time CSR, which Linux lets user space read */
    __asm__ __volatile__("rdtime %0" : "=r"(v));
    return v;
#else
    FDR__EXTERN uint64_t fdr__now_fallback(void);
    return fdr__now_fallback();
#endif
}

/* Enters the tracing section and reserves room for an event of `payload`
 * bytes. Returns 1 when the event is reserved on the fast path: the
 * payload goes to *p, and fdr__commit(end, *tail) finishes it; with
 * FDR__S_MULTI also set (5), fdr__commit_multi(s, end, *tail) does (the
 * event is copied into other fdrd traces too). Otherwise the caller goes to the
 * slow path: fdr__reserve_slow(s, payload, ...) when this returns 0,
 * fdr__reserve_slow(s, (size_t)-1, ...) when it returns -1 (nested: the
 * interrupted event still owns the section), and finishes a non-NULL
 * result with fdr__commit_slow(). Two separate paths at the call site, so
 * that the fast one is straight code that tests nothing again. */
FDR__INLINE int fdr__reserve(struct fdr__site *s, size_t payload, char **p, char **tail)
{
    struct fdr__thread *t = &fdr__self;
    uint32_t nested = t->in_section;
    char *q, *e;
    uint64_t ts, room, late;
    uint32_t low;
    uint16_t id;
    uint8_t state;
    /* Observable: a controller that paused tracing (enabled, then `end`
     * pulled down) and ran a membarrier sees this store, or this thread
     * sees `end == NULL` below. Only a compiler barrier here; the
     * controller pays for the fence (lib/recorder/section.c). */
    __atomic_store_n(&t->in_section, 1, __ATOMIC_RELAXED);
    fdr__barrier();
    /* The site's state again, inside the section. The caller's, read
     * before it to skip the fields of an event that is off, may be older
     * than this thread's rings: a signal handler's event in between may
     * have moved the thread to the routes of a trace that takes this
     * event too, and raised `end` again. With that state the event went
     * uncopied and uncounted into the new trace (fdr-daemon-early
     * "nested", ASan at load: 1 main:ev in ~20 runs). One load from the
     * line the caller read, beside the clock's. */
    state = __atomic_load_n(&s->state, __ATOMIC_RELAXED);
    e = __atomic_load_n(&t->end, __ATOMIC_RELAXED);
    /* Relaxed atomic, not plain: a controller closes a quiesced thread's
     * packet (flush) and stores pos; the value is used only with room
     * below `end`, which that controller pulled down. Same instruction. */
    q = __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
    /* Read before the test, which needs it; the slow path reads its own. */
    ts = fdr__now();
    /* One test: nested, not only recorded (new, printed), no room, or a
     * time the packet cannot hold (idle for 2^32 ticks). Recorded and
     * copied to other fdrd traces (FDR__S_MULTI) passes: the call site
     * then commits with fdr__commit_multi. The last two as the sign of a
     * difference, one shift for both: addresses and clock values are far
     * below 2^63 (and e NULL, q NULL or not, is "no room"). */
    room = (uint64_t)(uintptr_t)e -
           ((uint64_t)(uintptr_t)q + payload + FDR__EVENT_HEADER_SIZE);
    late = __atomic_load_n(&t->limit, __ATOMIC_RELAXED) - ts;
    if (__builtin_expect(nested | (uint32_t)((state & ~FDR__S_MULTI) ^ FDR__S_RECORD) |
                             (uint32_t)((room | late) >> 63),
                         0))
        return nested ? -1 : 0;
    id = s->id;
    low = (uint32_t)ts;
    memcpy(q, &id, 2);
    memcpy(q + 2, &low, 4);
    *p = q + FDR__EVENT_HEADER_SIZE;
    *tail = e;
    /* Known > 0 to the compiler: the caller tests FDR__S_MULTI only. */
    return (int)(state & FDR__S_MULTI) | 1;
}

/* Publishes the event that ends at `end` and leaves the tracing section. */
FDR__INLINE void fdr__commit(char *end, char *tail)
{
    struct fdr__thread *t = &fdr__self;
    /* Observable: the committed position, for a reader of the mapping
     * (common/committed.h); release: every byte of the event is before. */
    __atomic_store_n((uint64_t *)(void *)tail + 1, (uint64_t)(uintptr_t)end,
                     __ATOMIC_RELEASE);
    __atomic_store_n(&t->pos, end, __ATOMIC_RELAXED);
    /* Observable: pairs with the acquire load of in_section in
     * fdr__section_quiesce; every store of the event happens before. */
    __atomic_store_n(&t->in_section, 0, __ATOMIC_RELEASE);
}

/* Payload encoders. Strings are stored NUL-terminated, at most
 * fdr__string_max bytes; a longer one is cut on a UTF-8 boundary and ends
 * with U+2026 (the ellipsis) to mark the truncation. */
static inline size_t fdr__strsz(const void *pa, size_t n)
{
    const char *s = *(const char *const *)pa;
    const char *z;
    size_t len;
    (void)n;
    if (!s)
        return 7; /* "(null)" */
    /* memchr, not strnlen: strnlen is POSIX, undeclared under -std=c11
     * (C11 memchr stops at the first match, so it reads no further) */
    z = (const char *)memchr(s, 0, (size_t)fdr__string_max + 1);
    len = z ? (size_t)(z - s) : (size_t)fdr__string_max + 1;
    if (len <= fdr__string_max)
        return len + 1;
    len = fdr__string_max - 3;
    while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
        len--;
    return len + 3 + 1;
}

FDR__INLINE size_t fdr__fixsz(const void *pa, size_t n)
{
    (void)pa;
    return n;
}

FDR__INLINE char *fdr__put_str(char *p, const void *pa, size_t n)
{
    const char *s = *(const char *const *)pa;
    if (!s)
        s = "(null)";
    memcpy(p, s, n - 1);
    p[n - 1] = 0;
    if (s[n - 1] != 0) /* truncated, see fdr__strsz */
        memcpy(p + n - 4, "\xe2\x80\xa6", 3);
    return p + n;
}

FDR__INLINE char *fdr__put_fix(char *p, const void *pa, size_t n)
{
    memcpy(p, pa, n);
    return p + n;
}

#ifdef __cplusplus
}
#endif
#endif
