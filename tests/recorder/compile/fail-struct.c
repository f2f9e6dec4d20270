/* SPDX-License-Identifier: MIT */
/* A struct argument is refused with a message naming the argument.
 * expect-gcc: argument 1 (pt) is a struct or union
 * expect-clang: argument 1 (pt) is a struct or union */
#include <fdr/fdr.h>

struct point {
    int x, y;
};

void f(struct point pt)
{
    fdr_trace(cf, s, "n=%d pt=%p", 1, pt);
}
