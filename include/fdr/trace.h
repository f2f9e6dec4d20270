/* SPDX-License-Identifier: MIT */
/* fdr/trace.h - call-site events.
 *
 *     #include <fdr/fdr.h>
 *
 *     fdr_trace(net, rx, "len=%u proto=%d dev=%s", len, proto, dev);
 *
 *     if (fdr_enabled(net, dump))
 *         fdr_trace(net, dump, "crc=%x", expensive_crc(pkt));
 *
 * fdr_trace(provider, event, format, args...)
 *     Records the event `provider:event` (both plain C identifiers). The
 *     format is a printf-style string literal; it names the fields ("len=%u"
 *     gives the field `len`; a conversion without a `name=` before it gives
 *     `arg0`, `arg1`, ...) and is used when the event is printed as text.
 *     Field types come from the arguments, not the format: signed and
 *     unsigned integers of 8 to 64 bits, bool, char, float, double, pointers
 *     and strings (`char *` / `const char *`, copied into the event, at most
 *     FDR_STRING_MAX bytes, a longer one cut and ending with "…"). At most 12
 *     arguments. The arguments are evaluated once, and only when the event
 *     is enabled. A struct argument, a format with a different number of
 *     conversions than arguments, or a format that is not a string literal
 *     does not compile.
 *
 *     The first time a call site runs (or when the program starts, for call
 *     sites in the executable and in shared libraries), its event class is
 *     registered: provider, event, field names and types, format, file and
 *     line. A disabled event then costs one load and one predictable branch.
 *
 * fdr_trace_fields(provider, event, "name1,name2", format, args...)
 *     The same, with the field names given explicitly (used by fdr-gen).
 *
 * fdr_enabled(provider, event)
 *     True when `provider:event` is recorded or printed. Use it to guard the
 *     computation of expensive arguments.
 *
 * Building with -DFDR_DISABLE turns all three into nothing: no code, no data,
 * no symbol; the arguments are still type-checked but never evaluated. */
#ifndef FDR_TRACE_H
#define FDR_TRACE_H

#include "fdr/internal/visibility.h"

#ifndef FDR_DISABLE
#include "fdr/internal/args.h"

#ifdef __cplusplus
#define FDR__STATIC_ASSERT static_assert
#else
#define FDR__STATIC_ASSERT _Static_assert
#endif

static inline __attribute__((format(printf, 1, 2))) void fdr__format_check(const char *f,
                                                                           ...)
{
    (void)f;
}

/* Type-checks the format against the arguments as an error whatever the
 * includer's warning flags; compiles to nothing. */
#define FDR__FORMAT_CHECK(fmt, ...)                                                      \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic error \"-Wformat\"")          \
        _Pragma("GCC diagnostic error \"-Wformat-extra-args\"")                          \
            _Pragma("GCC diagnostic ignored \"-Wformat-zero-length\"") if (0)            \
                fdr__format_check("" fmt __VA_OPT__(, ) __VA_ARGS__);                    \
    _Pragma("GCC diagnostic pop")

/* Every site is listed, through a pointer, in the section "fdr_sites" of
 * its executable or library, so that all events are known at start (for
 * FDR_TRACES=help and the like) before any has run. */
#define FDR__SITE_LIST(site)                                                             \
    static struct fdr__site *const fdr__site_ptr_                                        \
        __attribute__((section("fdr_sites"), used)) = &(site)

/* Records the event of `site` (a struct fdr__site *), whose state `st` the
 * caller just loaded, with the fields __VA_ARGS__: evaluated, sized and
 * stored only when st != 0. Shared by fdr_trace and fdr/span.h. */
#define FDR__RECORD(site, st, ...)                                                       \
    if (__builtin_expect((st) != 0, 0)) {                                                \
        char *fdr__p, *fdr__tl, *fdr__tl_slow;                                           \
        int fdr__go;                                                                     \
        FDR__EACH(FDR__BIND_ITEM, __VA_ARGS__)                                           \
        fdr__go = fdr__reserve((site), 0 FDR__EACH(FDR__SIZE_ITEM, __VA_ARGS__),         \
                               &fdr__p, &fdr__tl);                                       \
        if (__builtin_expect(fdr__go > 0, 1)) {                                          \
            FDR__EACH(FDR__PUT_ITEM, __VA_ARGS__)                                        \
            if (__builtin_expect(fdr__go & (int)FDR__S_MULTI, 0))                        \
                fdr__commit_multi((site), fdr__p, fdr__tl);                              \
            else                                                                         \
                fdr__commit(fdr__p, fdr__tl);                                            \
        } else if ((fdr__p = fdr__reserve_slow(                                          \
                        (site),                                                          \
                        fdr__go ? (size_t)-1 : 0 FDR__EACH(FDR__SIZE_ITEM, __VA_ARGS__), \
                        &fdr__tl_slow)) != NULL) {                                       \
            FDR__EACH(FDR__PUT_ITEM, __VA_ARGS__)                                        \
            fdr__commit_slow(fdr__p, fdr__tl_slow);                                      \
        }                                                                                \
    }

#define FDR__TRACE(prov, ev, fnames, fmt, ...)                                           \
    FDR__TRACE_CAT(prov, ev, fnames, 0, fmt, __VA_ARGS__)
/* The declarations of a call site: checks of the format and the
 * arguments (never evaluated here), the static struct fdr__site fdr__site_
 * and its entry in the fdr_sites section. */
#define FDR__SITE_DECL(prov, ev, fnames, cat, fmt, ...)                                  \
    /* First, so that a variable format reads this and not only the                      \
     * syntax error of "" fmt below; "- 0" copes with an empty fmt. */                   \
    FDR__STATIC_ASSERT(__builtin_constant_p((fmt - 0)),                                  \
                       "fdr_trace: the format must be a string literal");                \
    FDR__STATIC_ASSERT(FDR__NARG(__VA_ARGS__) <= FDR_MAX_FIELDS,                         \
                       "fdr_trace: at most 12 fields");                                  \
    FDR__STATIC_ASSERT((cat) >= 0 && (cat) < 32,                                         \
                       "fdr_trace_category: a category is 0 to 31");                     \
    FDR__EACH(FDR__CHECK_ITEM, __VA_ARGS__)                                              \
    static struct fdr__site fdr__site_ = {FDR__S_NEW,                                    \
                                          FDR__SITE_TRACE,                               \
                                          FDR__NARG(__VA_ARGS__),                        \
                                          (cat),                                         \
                                          0,                                             \
                                          0,                                             \
                                          __LINE__,                                      \
                                          prov,                                          \
                                          ev,                                            \
                                          "" fmt,                                        \
                                          fnames,                                        \
                                          __FILE__,                                      \
                                          FDR__TYPES(__VA_ARGS__)};                      \
    FDR__SITE_LIST(fdr__site_);

#define FDR__TRACE_CAT(prov, ev, fnames, cat, fmt, ...)                                  \
    do {                                                                                 \
        FDR__SITE_DECL(prov, ev, fnames, cat, fmt, __VA_ARGS__)                          \
        uint8_t fdr__st = fdr__site_state(&fdr__site_);                                  \
        /* after the declarations: -Wdeclaration-after-statement */                      \
        FDR__FORMAT_CHECK(fmt, __VA_ARGS__)                                              \
        FDR__RECORD(&fdr__site_, fdr__st, __VA_ARGS__)                                   \
    } while (0)

/* provider and event are stringified here, before any macro expansion:
 * an event called `unix` stays "unix" even where unix is a macro. */
#define fdr_trace(provider, event, ...) FDR__TRACE(#provider, #event, NULL, __VA_ARGS__)
#define fdr_trace_fields(provider, event, names, ...)                                    \
    FDR__TRACE(#provider, #event, "" names, __VA_ARGS__)
/* An event in category `category` (a constant from 0 to 31): a trace of
 * fdrd records it only if bit `category` of its filter mask is set (`fdr
 * filter NAME MASK`). fdr_trace's events are in category 0. */
#define fdr_trace_category(category, provider, event, ...)                               \
    FDR__TRACE_CAT(#provider, #event, NULL, category, __VA_ARGS__)

#define fdr_enabled(prov, ev)                                                            \
    (__extension__({                                                                     \
        static struct fdr__site fdr__site_ = {                                           \
            FDR__S_NEW, FDR__SITE_GUARD, 0,  0, 0, 0, __LINE__, #prov, #ev, NULL,        \
            NULL,       __FILE__,        {0}};                                           \
        FDR__SITE_LIST(fdr__site_);                                                      \
        fdr__site_state(&fdr__site_) != 0 && fdr__guard_check(&fdr__site_);              \
    }))

/* Registers this module's sites when it is loaded. Each translation unit
 * carries a copy; the library ignores a range it already knows. C linkage
 * in C++ too: tunable.h uses the same two symbols. */
#ifdef __cplusplus
extern "C" {
#endif
extern struct fdr__site *const __start_fdr_sites[]
    __attribute__((weak, visibility("hidden")));
extern struct fdr__site *const __stop_fdr_sites[]
    __attribute__((weak, visibility("hidden")));
#ifdef __cplusplus
}
#endif
__attribute__((constructor, used)) static void fdr__register_module(void)
{
    if (&__start_fdr_sites[0] != &__stop_fdr_sites[0])
        fdr__register_sites(__start_fdr_sites, __stop_fdr_sites);
}
/* ... and forgets them when it is unloaded (dlclose, or the end of the
 * process), so that fdr never touches a site that is gone. */
__attribute__((destructor, used)) static void fdr__unregister_module(void)
{
    if (&__start_fdr_sites[0] != &__stop_fdr_sites[0])
        fdr__unregister_sites(__start_fdr_sites, __stop_fdr_sites);
}

#else /* FDR_DISABLE */

/* Compiled out: each macro is a statement that does nothing. The arguments
 * (and the format against them) are still checked, under an `if (0)` that
 * gcc and clang drop even at -O0: no code, no string and no symbol is left
 * in the object file (tests/disable/ checks it with nm and strings). Not
 * sizeof: clang would then warn that a static function used only in
 * arguments "will not be emitted". */
static inline __attribute__((format(printf, 1, 2))) void fdr__format_check(const char *f,
                                                                           ...)
{
    (void)f;
}
#define FDR__DISABLED_CHECK(...)                                                         \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic error \"-Wformat\"")          \
        _Pragma("GCC diagnostic error \"-Wformat-extra-args\"")                          \
            _Pragma("GCC diagnostic ignored \"-Wformat-zero-length\"") if (0)            \
                fdr__format_check("" __VA_ARGS__);                                       \
    _Pragma("GCC diagnostic pop")
#define fdr_trace(provider, event, ...)                                                  \
    do {                                                                                 \
        FDR__DISABLED_CHECK(__VA_ARGS__)                                                 \
    } while (0)
#define fdr_trace_fields(provider, event, names, ...)                                    \
    do {                                                                                 \
        (void)sizeof("" names);                                                          \
        FDR__DISABLED_CHECK(__VA_ARGS__)                                                 \
    } while (0)
#define fdr_trace_category(category, provider, event, ...)                               \
    do {                                                                                 \
        (void)sizeof(char[(category) >= 0 && (category) < 32 ? 1 : -1]);                 \
        FDR__DISABLED_CHECK(__VA_ARGS__)                                                 \
    } while (0)
#define fdr_enabled(provider, event) 0

#endif /* FDR_DISABLE */
#endif
