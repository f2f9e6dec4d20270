/* SPDX-License-Identifier: MIT */
// core-cxx.cpp - fdr from C++17: the overload/template path of
// include/fdr/internal/args.h, for tests/test-core-cxx.py. Built with
// -std=c++17 -Wall -Wextra -Werror.
#include <cfloat>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>

#include <fdr/fdr.h>

enum plain { PLAIN_A = 3 };                     // unsigned int in gcc
enum negative { NEG_A = -3, NEG_B = 2 };        // int
enum class scoped : int8_t { lo = -100, hi = 100 };
enum class wide : uint64_t { big = UINT64_MAX };

static int calls;
static int expensive()
{
    return ++calls;
}

int main()
{
    bool b = true;
    char c = 'Z';
    signed char sc = -128;
    unsigned char uc = 255;
    short s = SHRT_MIN;
    unsigned short us = USHRT_MAX;
    int i = INT_MIN;
    unsigned u = UINT_MAX;
    long l = LONG_MIN;
    unsigned long ul = ULONG_MAX;
    long long ll = LLONG_MIN;
    unsigned long long ull = ULLONG_MAX;
    fdr_trace(cxx, ints, "b=%d c=%c sc=%hhd uc=%hhu s=%hd us=%hu i=%d u=%u l=%ld ul=%lu ll=%lld ull=%llu",
              b, c, sc, uc, s, us, i, u, l, ul, ll, ull);
    fdr_trace(cxx, fixed, "i8=%" PRId8 " u16=%" PRIu16 " i32=%" PRId32 " u64=%" PRIu64,
              (int8_t)-1, (uint16_t)2, (int32_t)-3, (uint64_t)4);

    float f = -0.0f;
    double d = std::numeric_limits<double>::quiet_NaN();
    double inf = -HUGE_VAL;
    fdr_trace(cxx, reals, "f=%f d=%f inf=%f max=%g", f, d, inf, DBL_MAX);

    std::string str = "std::string \xe2\x9c\x93";
    const char *null = nullptr;
    char arr[8] = "arr";
    fdr_trace(cxx, strings, "str=%s lit=%s null=%s arr=%s empty=%s", str.c_str(), "literal",
              null, arr, "");

    int obj = 0;
    int *pi = &obj;
    const void *pv = nullptr;
    fdr_trace(cxx, ptrs, "pi=%p pv=%p", (void *)pi, pv);
    std::printf("pi=%" PRIuPTR "\n", (uintptr_t)pi);

    fdr_trace(cxx, enums, "plain=%u neg=%d lo=%d hi=%d big=%" PRIu64, PLAIN_A, NEG_A,
              (int)scoped::lo, (int)scoped::hi, (uint64_t)wide::big);
    // Enumerations passed as they are (no cast): their underlying type.
    negative en = NEG_A;
    fdr_trace(cxx, enums_raw, "neg=%d plain=%u", en, PLAIN_A);

    fdr_trace(cxx, none);
    fdr_trace_fields(cxx, named, "x,y", "%d %d", 1, 2);

    // The guard: arguments evaluated only when enabled.
    if (fdr_enabled(cxx, guarded))
        fdr_trace(cxx, guarded, "v=%d", expensive());
    if (fdr_enabled(cxx, off))
        fdr_trace(cxx, off, "v=%d", expensive());

    std::thread t([] { fdr_trace(cxx, thread, "from=%s", "std::thread"); });
    t.join();
    std::printf("calls=%d\n", calls);
    return 0;
}
