/* SPDX-License-Identifier: MIT */
/* More conversions in the format than arguments.
 * expect-gcc: format '%d' expects a matching 'int' argument
 * expect-clang: more '%' conversions than data arguments */
#include <fdr/fdr.h>

void f(int a)
{
    fdr_trace(cf, s, "a=%d b=%d", a);
}
