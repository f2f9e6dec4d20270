/* SPDX-License-Identifier: MIT */
/* live-disabled.c - with -DFDR_DISABLE the tunable macros are their
 * defaults as constant expressions (usable in a static array size and a
 * static assertion), and the program needs no libfdr (it is not linked). */
#include <stdio.h>

#include <fdr/fdr.h>

char live_buf[FDR_TUNABLE_RANGE(bufsize, 16, 1, 64)];
_Static_assert(FDR_TUNABLE(batch_size, 32) == 32, "a constant");

int main(void)
{
    fdr_trace(live, never, "x=%d", 1);
    printf("batch_size=%lld gain=%g buf=%zu\n", (long long)FDR_TUNABLE(batch_size, 32),
           FDR_TUNABLE_DOUBLE(gain, 0.5), sizeof live_buf);
    return 0;
}
