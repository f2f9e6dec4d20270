/* SPDX-License-Identifier: MIT */
/* More arguments than conversions in the format.
 * expect-gcc: too many arguments for format
 * expect-clang: data argument not used by format string */
#include <fdr/fdr.h>

void f(int a, int b)
{
    fdr_trace(cf, s, "a=%d", a, b);
}
