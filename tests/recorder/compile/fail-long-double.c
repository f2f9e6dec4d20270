/* SPDX-License-Identifier: MIT */
/* long double has no portable CTF representation here.
 * expect-gcc: argument 0 (x) is a long double, not supported
 * expect-clang: argument 0 (x) is a long double, not supported */
#include <fdr/fdr.h>

void f(long double x)
{
    fdr_trace(cf, s, "x=%Lf", x);
}
