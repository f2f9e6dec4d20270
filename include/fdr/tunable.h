/* SPDX-License-Identifier: MIT */
/* fdr/tunable.h - tunables: named knobs a program reads cheaply and a user
 * sets from outside (FDR_TRACES="batch_size=64", fdr_tunable_set(), the
 * scope's sliders).
 *
 *     for (;;) {
 *         long batch = FDR_TUNABLE(batch_size, 32);         // int64_t
 *         double gain = FDR_TUNABLE_DOUBLE(gain, 0.5);       // double
 *         int lvl = FDR_TUNABLE_RANGE(level, 3, 0, 9);        // 0 <= level <= 9
 *         ...
 *     }
 *
 * FDR_TUNABLE(name, default)                       integer (int64_t)
 * FDR_TUNABLE_RANGE(name, default, min, max)       integer in [min, max]
 * FDR_TUNABLE_DOUBLE(name, default)                floating (double)
 * FDR_TUNABLE_DOUBLE_RANGE(name, default, min, max)
 *     An expression: the current value of the tunable `name` (a plain C
 *     identifier). Reading it is one relaxed load of a static variable, no
 *     call, no lock. Like call sites, each use is a static listed in a
 *     section ("fdr_tunables") and registered when its module is loaded, so
 *     every tunable is known at start (FDR_TRACES=help lists them). Uses
 *     with the same name share one value; the first one registered gives the
 *     default and range (a later use that disagrees gets a warning). default,
 *     min and max must be constant expressions.
 *
 * A value set from the environment, a pattern or the API takes effect at
 * once for every thread: later reads see it (no ordering with other memory
 * is implied; a tunable is a knob, not a synchronization variable).
 *
 * With -DFDR_DISABLE each macro is its default, as a constant expression:
 * no data, no code, no symbol. */
#ifndef FDR_TUNABLE_H
#define FDR_TUNABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fdr/internal/visibility.h"

#ifndef FDR_DISABLE
#include "fdr/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One per use of a FDR_TUNABLE* macro, a static variable. Process-local
 * (pointers to literals); the library keeps its own pointer-free table of
 * tunables by name and stores a new value into every use of that name. */
struct fdr__tunable {
    int64_t value;       /* integer tunable: relaxed loads and stores */
    double value_double; /* floating tunable: relaxed loads and stores */
    const char *name;
    const char *file;
    uint32_t line;
    uint8_t is_double;
    uint8_t has_range;
    uint16_t reserved;
    int64_t def, min, max;                     /* integer tunable */
    double def_double, min_double, max_double; /* floating tunable */
};

struct fdr__site;
/* Registers a module's tunables, then its call sites (the same as
 * fdr__register_sites, which ignores a range it already knows). */
FDR__EXTERN void fdr__register_tunables(struct fdr__tunable *const *begin,
                                        struct fdr__tunable *const *end,
                                        struct fdr__site *const *sites_begin,
                                        struct fdr__site *const *sites_end);
/* Forgets a module's tunables when it is unloaded (see trace.h). */
FDR__EXTERN void fdr__unregister_tunables(struct fdr__tunable *const *begin,
                                          struct fdr__tunable *const *end);

#define FDR__TUNABLE_DECL(nm, isd, hasr, i0, imin, imax, d0, dmin, dmax)                 \
    static struct fdr__tunable fdr__tunable_ = {                                         \
        (i0), (d0), #nm,    __FILE__, __LINE__, (isd),  (hasr),                          \
        0,    (i0), (imin), (imax),   (d0),     (dmin), (dmax)};                         \
    static struct fdr__tunable *const fdr__tunable_ptr_                                  \
        __attribute__((section("fdr_tunables"), used)) = &fdr__tunable_

#define FDR__TUNABLE_INT(nm, def, hasr, lo, hi)                                          \
    (__extension__({                                                                     \
        FDR__TUNABLE_DECL(nm, 0, hasr, (int64_t)(def), (int64_t)(lo), (int64_t)(hi),     \
                          0.0, 0.0, 0.0);                                                \
        __atomic_load_n(&fdr__tunable_.value, __ATOMIC_RELAXED);                         \
    }))

#define FDR__TUNABLE_DBL(nm, def, hasr, lo, hi)                                          \
    (__extension__({                                                                     \
        FDR__TUNABLE_DECL(nm, 1, hasr, 0, 0, 0, (double)(def), (double)(lo),             \
                          (double)(hi));                                                 \
        double fdr__v_;                                                                  \
        __atomic_load(&fdr__tunable_.value_double, &fdr__v_, __ATOMIC_RELAXED);          \
        fdr__v_;                                                                         \
    }))

#define FDR_TUNABLE(name, def) FDR__TUNABLE_INT(name, def, 0, 0, 0)
#define FDR_TUNABLE_RANGE(name, def, min, max) FDR__TUNABLE_INT(name, def, 1, min, max)
#define FDR_TUNABLE_DOUBLE(name, def) FDR__TUNABLE_DBL(name, def, 0, 0, 0)
#define FDR_TUNABLE_DOUBLE_RANGE(name, def, min, max)                                    \
    FDR__TUNABLE_DBL(name, def, 1, min, max)

/* Registers this module's tunables and call sites when it is loaded (see
 * trace.h). Priority 101 runs it before the module's other constructors, so
 * the module's tunables are known when its call sites are, and the work
 * that waits for "all names known" (FDR_TRACES=help, warnings about unknown
 * names, lib/control.c) sees both. */
extern struct fdr__tunable *const __start_fdr_tunables[]
    __attribute__((weak, visibility("hidden")));
extern struct fdr__tunable *const __stop_fdr_tunables[]
    __attribute__((weak, visibility("hidden")));
/* __start_fdr_sites and __stop_fdr_sites: declared once, in trace.h
 * (a second declaration trips -Wredundant-decls). */
__attribute__((constructor(101), used)) static void fdr__register_tunable_module(void)
{
    if (&__start_fdr_tunables[0] != &__stop_fdr_tunables[0] ||
        &__start_fdr_sites[0] != &__stop_fdr_sites[0])
        fdr__register_tunables(__start_fdr_tunables, __stop_fdr_tunables,
                               __start_fdr_sites, __stop_fdr_sites);
}
__attribute__((destructor(101), used)) static void fdr__unregister_tunable_module(void)
{
    if (&__start_fdr_tunables[0] != &__stop_fdr_tunables[0])
        fdr__unregister_tunables(__start_fdr_tunables, __stop_fdr_tunables);
}

/* One tunable, as given by fdr_tunable_get() and to an fdr_tunable_cb.
 * Both representations of every number are filled in; for an integer
 * tunable the *_int fields are exact, for a floating one the doubles. */
typedef struct fdr_tunable_info {
    size_t size; /* sizeof(fdr_tunable_info_t): fields may be added */
    const char *name;
    const char *file; /* of its first use */
    int line;
    bool is_double;
    bool has_range; /* min and max are meaningful */
    long long value_int, def_int, min_int, max_int;
    double value, def, min, max;
} fdr_tunable_info_t;

typedef void (*fdr_tunable_cb)(void *arg, const fdr_tunable_info_t *tunable);

/* Sets the tunable `name` for every thread. An integer value is accepted
 * by a floating tunable; fdr_tunable_set_double() on an integer tunable
 * needs a whole number. Returns 0, -EINVAL (NULL name, a fraction for an
 * integer tunable, NaN), -ERANGE (outside the tunable's range; the value is
 * unchanged) or -ENOENT (no such tunable is declared). No warning is
 * printed: the result says it all. */
FDR_EXTERN int fdr_tunable_set(const char *name, long long value);
FDR_EXTERN int fdr_tunable_set_double(const char *name, double value);

/* Fills *info (info->size is set by the call) for the tunable `name`.
 * Returns 0, -EINVAL or -ENOENT. */
FDR_EXTERN int fdr_tunable_get(const char *name, fdr_tunable_info_t *info);

/* Calls cb once per declared tunable, in registration order. cb must not
 * call back into fdr's control functions. */
FDR_EXTERN int fdr_tunable_list(fdr_tunable_cb cb, void *arg);

#ifdef __cplusplus
}
#endif

#else /* FDR_DISABLE */

#define FDR_TUNABLE(name, def) ((int64_t)(def))
#define FDR_TUNABLE_RANGE(name, def, min, max) ((int64_t)(def))
#define FDR_TUNABLE_DOUBLE(name, def) ((double)(def))
#define FDR_TUNABLE_DOUBLE_RANGE(name, def, min, max) ((double)(def))

#endif /* FDR_DISABLE */
#endif
