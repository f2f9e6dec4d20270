/* SPDX-License-Identifier: MIT */
// span-cxx.cc - fdr_span from C++17 (a destructor ends it), for
// tests/programs/test-fdr-spans.py: 10 rounds of cx:outer holding cx:inner,
// left by a return in the middle of the inner scope half of the time.
#include <fdr/fdr.h>

static int inner(int i)
{
    fdr_span(cx, inner, "i=%d", i);
    if (i % 2)
        return i; // the destructor ends cx:inner here
    fdr_trace(cx, even, "i=%d", i);
    return 0;
}

int main()
{
    int s = 0;
    for (int i = 0; i < 10; i++) {
        fdr_span(cx, outer);
        s += inner(i);
    }
    return s == 25 ? 0 : 1;
}
