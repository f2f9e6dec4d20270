/* SPDX-License-Identifier: MIT */
// A class argument is refused in C++ too.
// expect-gcc: fdr_trace: an argument is a class, struct or union
// expect-clang: fdr_trace: an argument is a class, struct or union
#include <fdr/fdr.h>

struct point {
    int x, y;
};

void f(point pt)
{
    fdr_trace(cf, s, "pt=%d", pt);
}
