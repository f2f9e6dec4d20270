/* SPDX-License-Identifier: MIT */
/* At most 12 fields.
 * expect-gcc: fdr_trace: at most 12 fields
 * expect-clang: fdr_trace: at most 12 fields */
#include <fdr/fdr.h>

void f(int a)
{
    fdr_trace(cf, s, "%d %d %d %d %d %d %d %d %d %d %d %d %d", a, a, a, a, a, a, a, a, a, a, a,
              a, a);
}
