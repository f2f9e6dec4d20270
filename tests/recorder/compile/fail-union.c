/* SPDX-License-Identifier: MIT */
/* A union argument is refused like a struct.
 * expect-gcc: argument 0 (u) is a struct or union
 * expect-clang: argument 0 (u) is a struct or union */
#include <fdr/fdr.h>

union word {
    int i;
    float f;
};

void f(union word u)
{
    fdr_trace(cf, s, "u=%p", u);
}
