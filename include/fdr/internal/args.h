/* SPDX-License-Identifier: MIT */
/* fdr/internal/args.h - preprocessor and type machinery behind fdr_trace().
 *
 * Not a public API. For each argument of an event this file gives, at
 * compile time, its field type (FDR__TYPE), its size (FDR__SZ) and how to
 * store it (FDR__PUT). C uses _Generic; C++ uses overloads and templates. */
#ifndef FDR_INTERNAL_ARGS_H
#define FDR_INTERNAL_ARGS_H

#include "fdr/internal/fastpath.h"

/* Argument count, 0 to 20 (more than FDR_MAX_FIELDS is refused later with a
 * readable message rather than here with an unreadable one). */
#define FDR__NARG(...)                                                                   \
    FDR__NARG_(0 __VA_OPT__(, ) __VA_ARGS__, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, \
               9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define FDR__NARG_(z, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15,  \
                   a16, a17, a18, a19, a20, n, ...)                                      \
    n

#define FDR__CAT(a, b) FDR__CAT_(a, b)
#define FDR__CAT_(a, b) a##b

/* FDR__EACH(M, sep, args...) expands M(index, arg) for each argument. */
#define FDR__EACH(M, ...) FDR__CAT(FDR__EACH_, FDR__NARG(__VA_ARGS__))(M, __VA_ARGS__)
#define FDR__EACH_0(M, ...)
#define FDR__EACH_1(M, a) M(0, a)
#define FDR__EACH_2(M, a, b) M(0, a) M(1, b)
#define FDR__EACH_3(M, a, b, c) FDR__EACH_2(M, a, b) M(2, c)
#define FDR__EACH_4(M, a, b, c, d) FDR__EACH_3(M, a, b, c) M(3, d)
#define FDR__EACH_5(M, a, b, c, d, e) FDR__EACH_4(M, a, b, c, d) M(4, e)
#define FDR__EACH_6(M, a, b, c, d, e, f) FDR__EACH_5(M, a, b, c, d, e) M(5, f)
#define FDR__EACH_7(M, a, b, c, d, e, f, g) FDR__EACH_6(M, a, b, c, d, e, f) M(6, g)
#define FDR__EACH_8(M, a, b, c, d, e, f, g, h) FDR__EACH_7(M, a, b, c, d, e, f, g) M(7, h)
#define FDR__EACH_9(M, a, b, c, d, e, f, g, h, i)                                        \
    FDR__EACH_8(M, a, b, c, d, e, f, g, h) M(8, i)
#define FDR__EACH_10(M, a, b, c, d, e, f, g, h, i, j)                                    \
    FDR__EACH_9(M, a, b, c, d, e, f, g, h, i) M(9, j)
#define FDR__EACH_11(M, a, b, c, d, e, f, g, h, i, j, k)                                 \
    FDR__EACH_10(M, a, b, c, d, e, f, g, h, i, j) M(10, k)
#define FDR__EACH_12(M, a, b, c, d, e, f, g, h, i, j, k, l)                              \
    FDR__EACH_11(M, a, b, c, d, e, f, g, h, i, j, k) M(11, l)
#define FDR__EACH_13(M, ...)
#define FDR__EACH_14(M, ...)
#define FDR__EACH_15(M, ...)
#define FDR__EACH_16(M, ...)
#define FDR__EACH_17(M, ...)
#define FDR__EACH_18(M, ...)
#define FDR__EACH_19(M, ...)
#define FDR__EACH_20(M, ...)

#ifndef __cplusplus

/* 1 when x is a struct, union or array of such: refused with a message. */
#define FDR__IS_AGGREGATE(x)                                                             \
    (__builtin_classify_type(x) == 12 || __builtin_classify_type(x) == 13)

#define FDR__TYPE(x)                                                                     \
    _Generic((x),                                                                        \
        _Bool: FDR__T_BOOL,                                                              \
        char: FDR__T_CHAR,                                                               \
        signed char: FDR__T_I8,                                                          \
        unsigned char: FDR__T_U8,                                                        \
        short: FDR__T_I16,                                                               \
        unsigned short: FDR__T_U16,                                                      \
        int: FDR__T_I32,                                                                 \
        unsigned int: FDR__T_U32,                                                        \
        long: (sizeof(long) == 8 ? FDR__T_I64 : FDR__T_I32),                             \
        unsigned long: (sizeof(long) == 8 ? FDR__T_U64 : FDR__T_U32),                    \
        long long: FDR__T_I64,                                                           \
        unsigned long long: FDR__T_U64,                                                  \
        float: FDR__T_F32,                                                               \
        double: FDR__T_F64,                                                              \
        char *: FDR__T_STR,                                                              \
        const char *: FDR__T_STR,                                                        \
        default: FDR__T_PTR)

#define FDR__SZ(x)                                                                       \
    _Generic((x), char *: fdr__strsz, const char *: fdr__strsz, default: fdr__fixsz)(    \
        &(x), sizeof(x))

#define FDR__PUT(p, x, n)                                                                \
    _Generic((x), char *: fdr__put_str, const char *: fdr__put_str, default: fdr__put_fix)( \
        p, &(x), n)

/* Per-argument pieces of the expansion of fdr_trace(). */
#define FDR__TYPE_ITEM(i, a) FDR__TYPE(a),
#define FDR__CHECK_ITEM(i, a)                                                            \
    _Static_assert(!FDR__IS_AGGREGATE(a), "fdr_trace: argument " #i " (" #a ") is a "    \
                                          "struct or union; pass scalars, pointers or "  \
                                          "strings");                                    \
    _Static_assert(_Generic((a), long double : 0, default : 1),                          \
                   "fdr_trace: argument " #i " (" #a                                     \
                   ") is a long double, not supported");
#define FDR__BIND_ITEM(i, a)                                                             \
    __extension__ __auto_type fdr__a##i = (a);                                           \
    size_t fdr__n##i = FDR__SZ(fdr__a##i);
#define FDR__SIZE_ITEM(i, a) +fdr__n##i
#define FDR__PUT_ITEM(i, a) fdr__p = FDR__PUT(fdr__p, fdr__a##i, fdr__n##i);

#define FDR__TYPES(...)                                                                  \
    {                                                                                    \
        FDR__EACH(FDR__TYPE_ITEM, __VA_ARGS__) 0                                         \
    }

#else /* __cplusplus */
#include <type_traits>

/* An enumeration is recorded as its underlying type: std::is_signed is
 * false for every enum type itself, which would store -3 as 4294967293. */
template <typename T, bool = std::is_enum<T>::value> struct fdr__int_of {
    using type = T;
};
template <typename T> struct fdr__int_of<T, true> {
    using type = typename std::underlying_type<T>::type;
};

template <typename T> constexpr uint8_t fdr__type_of()
{
    using U = typename std::decay<T>::type;
    using I = typename fdr__int_of<U>::type;
    static_assert(!std::is_class<U>::value && !std::is_union<U>::value,
                  "fdr_trace: an argument is a class, struct or union; pass scalars, "
                  "pointers or strings");
    static_assert(!std::is_same<U, long double>::value,
                  "fdr_trace: long double arguments are not supported");
    return std::is_same<U, bool>::value             ? FDR__T_BOOL
           : std::is_same<U, char>::value           ? FDR__T_CHAR
           : std::is_same<U, char *>::value         ? FDR__T_STR
           : std::is_same<U, const char *>::value   ? FDR__T_STR
           : std::is_same<U, float>::value          ? FDR__T_F32
           : std::is_same<U, double>::value         ? FDR__T_F64
           : std::is_pointer<U>::value              ? FDR__T_PTR
           : std::is_same<U, std::nullptr_t>::value ? FDR__T_PTR
           : (std::is_integral<U>::value || std::is_enum<U>::value)
               ? (sizeof(U) == 1   ? (std::is_signed<I>::value ? FDR__T_I8 : FDR__T_U8)
                  : sizeof(U) == 2 ? (std::is_signed<I>::value ? FDR__T_I16 : FDR__T_U16)
                  : sizeof(U) == 4 ? (std::is_signed<I>::value ? FDR__T_I32 : FDR__T_U32)
                                   : (std::is_signed<I>::value ? FDR__T_I64 : FDR__T_U64))
               : FDR__T_PTR;
}

template <typename T> static inline size_t fdr__size_of(const T &x)
{
    return fdr__fixsz(&x, sizeof(T));
}
static inline size_t fdr__size_of(char *const &x)
{
    return fdr__strsz(&x, sizeof x);
}
static inline size_t fdr__size_of(const char *const &x)
{
    return fdr__strsz(&x, sizeof x);
}
template <typename T> static inline char *fdr__put(char *p, const T &x, size_t n)
{
    return fdr__put_fix(p, &x, n);
}
static inline char *fdr__put(char *p, char *const &x, size_t n)
{
    return fdr__put_str(p, &x, n);
}
static inline char *fdr__put(char *p, const char *const &x, size_t n)
{
    return fdr__put_str(p, &x, n);
}

#define FDR__TYPE_ITEM(i, a) fdr__type_of<decltype(a)>(),
#define FDR__CHECK_ITEM(i, a)
#define FDR__BIND_ITEM(i, a)                                                             \
    auto fdr__a##i = (a);                                                                \
    size_t fdr__n##i = fdr__size_of(fdr__a##i);
#define FDR__SIZE_ITEM(i, a) +fdr__n##i
#define FDR__PUT_ITEM(i, a) fdr__p = fdr__put(fdr__p, fdr__a##i, fdr__n##i);
#define FDR__TYPES(...)                                                                  \
    {                                                                                    \
        FDR__EACH(FDR__TYPE_ITEM, __VA_ARGS__) 0                                         \
    }
#endif /* __cplusplus */

#endif
