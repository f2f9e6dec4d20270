/* SPDX-License-Identifier: MIT */
/* The format must be a string literal (it names the fields at compile
 * time and is stored once per call site).
 * expect-gcc: fdr_trace: the format must be a string literal
 * expect-clang: fdr_trace: the format must be a string literal */
#include <fdr/fdr.h>

void f(const char *fmt, int a)
{
    fdr_trace(cf, s, fmt, a);
}
