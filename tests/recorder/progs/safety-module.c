/* SPDX-License-Identifier: MIT */
/* safety-module.c - a library with call sites and a tunable, dlopen()ed
 * and dlclose()d by tests/recorder/test-safety-dlclose.c. */
#include <fdr/fdr.h>

int safety_module_work(int n)
{
    long knob = (long)FDR_TUNABLE(module_knob, 7);
    for (int i = 0; i < n; i++)
        fdr_trace(module, work, "i=%d knob=%ld", i, knob);
    if (fdr_enabled(module, guard))
        fdr_trace(module, guarded, "n=%d", n);
    return (int)knob;
}
