/* SPDX-License-Identifier: MIT */
/* core-types.c - records every supported field type with edge values, for
 * tests/recorder/test-core-types.py, which reads the trace back with bt2 and checks
 * each field's name, field class and value.
 *
 * Values the checker cannot know in advance (addresses) are printed on
 * stdout as "name=value" lines. With "abort" the program ends with
 * abort(): the crash dump then prints every event (scripts/cross.sh
 * compares it, and the events printed live, across machines). */
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fdr/fdr.h>

enum small { SMALL_A = 1, SMALL_B = 7 }; /* unsigned int with gcc */
enum negative { NEG_A = -3, NEG_B = 2 }; /* int */

static void repeat(char *out, const char *unit, size_t n)
{
    out[0] = 0;
    for (size_t i = 0; i < n; i++)
        strcat(out, unit);
}

int main(int argc, char **argv)
{
    /* Integers: minimum, then maximum, of each width. */
    bool bf = false, bt = true;
    char c = 'A', cneg = (char)-1;
    int8_t i8n = INT8_MIN, i8x = INT8_MAX;
    int16_t i16n = INT16_MIN, i16x = INT16_MAX;
    int32_t i32n = INT32_MIN, i32x = INT32_MAX;
    int64_t i64n = INT64_MIN, i64x = INT64_MAX;
    uint8_t u8x = UINT8_MAX;
    uint16_t u16x = UINT16_MAX;
    uint32_t u32x = UINT32_MAX;
    uint64_t u64x = UINT64_MAX;
    fdr_trace(types, ints_min,
              "b=%d c=%c i8=%d i16=%d i32=%" PRId32 " i64=%" PRId64
              " u8=%u u16=%u u32=%" PRIu32 " u64=%" PRIu64,
              bf, cneg, i8n, i16n, i32n, i64n, (uint8_t)0, (uint16_t)0, (uint32_t)0,
              (uint64_t)0);
    fdr_trace(types, ints_max,
              "b=%d c=%c i8=%d i16=%d i32=%" PRId32 " i64=%" PRId64
              " u8=%u u16=%u u32=%" PRIu32 " u64=%" PRIu64,
              bt, c, i8x, i16x, i32x, i64x, u8x, u16x, u32x, u64x);
    /* long, long long, size_t, plain int/short/signed char spellings. */
    long l = LONG_MIN;
    unsigned long long ull = ULLONG_MAX;
    size_t sz = 12345;
    short sh = -2;
    signed char sc = -128;
    fdr_trace(types, spellings, "l=%ld ull=%llu sz=%zu sh=%hd sc=%hhd", l, ull, sz, sh,
              sc);

    /* Reals. */
    float fnan = NAN, finf = INFINITY, fmin = FLT_MIN, fmax = FLT_MAX, fneg0 = -0.0f;
    double dnan = NAN, dpinf = INFINITY, dninf = -INFINITY, dneg0 = -0.0, dmax = DBL_MAX,
           dmin = DBL_MIN, dtrue = DBL_TRUE_MIN, third = 1.0 / 3.0;
    fdr_trace(types, floats, "nan=%f inf=%f min=%g max=%g neg0=%f", fnan, finf, fmin,
              fmax, fneg0);
    fdr_trace(types, doubles,
              "nan=%f pinf=%f ninf=%f neg0=%f max=%g min=%g tmin=%g third=%.17g", dnan,
              dpinf, dninf, dneg0, dmax, dmin, dtrue, third);

    /* Pointers: recorded as addresses (hex integers), never dereferenced;
     * an unsigned char * is a pointer, not a string. */
    int obj = 5;
    int *pi = &obj;
    void *pnull = NULL;
    const volatile double *pcv = &third;
    unsigned char *puc = (unsigned char *)"not a string";
    void *pmax = (void *)UINTPTR_MAX;
    fdr_trace(types, ptrs, "pi=%p pnull=%p pcv=%p puc=%p pmax=%p", (void *)pi, pnull,
              (const volatile void *)pcv, (void *)puc, pmax);
    fdr_trace(types, ptrs_raw, "pi=%p pcv=%p puc=%p", pi, pcv, puc);
    printf("pi=%" PRIuPTR "\npcv=%" PRIuPTR "\npuc=%" PRIuPTR "\n", (uintptr_t)pi,
           (uintptr_t)pcv, (uintptr_t)puc);
    /* What this target's types are (a cross build runs it under qemu-user):
     * the driver expects each value at the program's own width. */
    printf("char_signed=%d\nptr_bits=%zu\nlong_bits=%zu\nsize_bits=%zu\n", (char)-1 < 0,
           sizeof(void *) * 8, sizeof(long) * 8, sizeof(size_t) * 8);

    /* Strings. */
    static char ascii300[301], utf2[401], utf3[301], utf4[321], s256[257], s257[258],
        e128[257];
    repeat(ascii300, "a", 300);
    repeat(utf2, "\xc3\xa9", 200);        /* é: 2 bytes */
    repeat(utf3, "\xe6\x97\xa5", 100);    /* 日: 3 bytes */
    repeat(utf4, "\xf0\x9f\x99\x82", 80); /* 🙂: 4 bytes */
    repeat(s256, "b", 256);
    repeat(s257, "c", 257);
    repeat(e128, "\xc3\xa9", 128); /* exactly 256 bytes of 2-byte characters */
    const char *empty = "";
    const char *utf8 = "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac "
                       "\xf0\x9f\x99\x82";
    const char *cnull = NULL;
    char *mnull = NULL;
    char arr[16] = "array";
    const char carr[] = "const array";
    fdr_trace(types, strings, "empty=%s utf8=%s lit=%s arr=%s carr=%s", empty, utf8,
              "literal", arr, carr);
    fdr_trace(types, nulls, "cnull=%s mnull=%s", cnull, mnull);
    fdr_trace(types, long_strings, "a300=%s u2=%s u3=%s u4=%s s256=%s s257=%s e128=%s",
              ascii300, utf2, utf3, utf4, s256, s257, e128);

    /* Enumerations take their compatible integer type. */
    enum small es = SMALL_B;
    enum negative en = NEG_A;
    fdr_trace(types, enums, "es=%u en=%d", es, en);

    /* One provider:event from two sites, same format, other argument types:
     * each site needs a class of its own. */
    short two_short = -2;
    int two_int = 100000;
    fdr_trace(types, two_sites, "v=%d", two_short);
    fdr_trace(types, two_sites, "v=%d", two_int);

    /* 0 to 12 arguments, unnamed: arg0, arg1, ... */
    fdr_trace(nargs, n0, "no fields");
    fdr_trace(nargs, n0b);
    fdr_trace(nargs, n1, "%d", 1);
    fdr_trace(nargs, n2, "%d %d", 1, 2);
    fdr_trace(nargs, n3, "%d %d %d", 1, 2, 3);
    fdr_trace(nargs, n4, "%d %d %d %d", 1, 2, 3, 4);
    fdr_trace(nargs, n5, "%d %d %d %d %d", 1, 2, 3, 4, 5);
    fdr_trace(nargs, n6, "%d %d %d %d %d %d", 1, 2, 3, 4, 5, 6);
    fdr_trace(nargs, n7, "%d %d %d %d %d %d %d", 1, 2, 3, 4, 5, 6, 7);
    fdr_trace(nargs, n8, "%d %d %d %d %d %d %d %d", 1, 2, 3, 4, 5, 6, 7, 8);
    fdr_trace(nargs, n9, "%d %d %d %d %d %d %d %d %d", 1, 2, 3, 4, 5, 6, 7, 8, 9);
    fdr_trace(nargs, n10, "%d %d %d %d %d %d %d %d %d %d", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    fdr_trace(nargs, n11, "%d %d %d %d %d %d %d %d %d %d %d", 1, 2, 3, 4, 5, 6, 7, 8, 9,
              10, 11);
    fdr_trace(nargs, n12, "%d %d %d %d %d %d %d %d %d %d %d %s", 1, 2, 3, 4, 5, 6, 7, 8,
              9, 10, 11, "twelve");

    /* Field names. */
    fdr_trace(names, mixed, "a=%d %d b:%d 100%% c=%d", 1, 2, 3, 4);
    fdr_trace(names, dup, "a=%d a=%d", 1, 2);
    fdr_trace(names, keywords, "string=%s align=%d integer=%d event=%d", "s", 1, 2, 3);
    fdr_trace_fields(names, explicit, "alpha,beta , gamma", "%d x=%d y=%d", 1, 2, 3);
    fdr_trace_fields(names, partial, "one", "%d %d", 1, 2);

    /* One site run many times: one class, many events. */
    for (int i = 0; i < 3; i++)
        fdr_trace(names, loop, "i=%d", i);
    if (argc > 1 && strcmp(argv[1], "abort") == 0)
        abort();
    return 0;
}
