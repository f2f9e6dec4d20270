/* The format must be a string literal (it names the fields at compile
 * time and is stored once per call site).
 * expect-gcc: expected ')' before 'fmt'
 * expect-clang: expected ')' */
#include <fdr/fdr.h>

void f(const char *fmt, int a)
{
    fdr_trace(cf, s, fmt, a);
}
