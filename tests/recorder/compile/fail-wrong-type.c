/* SPDX-License-Identifier: MIT */
/* A conversion that does not match its argument's type.
 * expect-gcc: format '%s' expects argument of type 'char *', but argument 2 has type 'int'
 * expect-clang: format specifies type 'char *' but the argument has type 'int' */
#include <fdr/fdr.h>

void f(int a)
{
    fdr_trace(cf, s, "name=%s", a);
}
