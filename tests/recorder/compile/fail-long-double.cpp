/* SPDX-License-Identifier: MIT */
// long double is refused in C++ too.
// expect-gcc: fdr_trace: long double arguments are not supported
// expect-clang: fdr_trace: long double arguments are not supported
#include <fdr/fdr.h>

void f(long double x)
{
    fdr_trace(cf, s, "x=%Lf", x);
}
