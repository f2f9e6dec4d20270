/* SPDX-License-Identifier: MIT */
/* strict.c - a translation unit that uses every public header the way a
 * project with many warnings does (QEMU's and Lua's flags, -Werror):
 * check-headers.sh compiles it as C (gnu11, c99) and as C++ (C++17), with
 * gcc, clang, g++ and clang++, and with -DFDR_DISABLE. Only compiled,
 * never run: what the headers make the includer's compiler say is the
 * test. */
#include <fdr/fdr.h>

#ifndef FDR_DISABLE
int strict_provider(const void *data, size_t size);
int strict_provider(const void *data, size_t size)
{
    static const fdr_provider_desc_t desc = FDR_PROVIDER_DESC_INIT("strict", 2, 7);
    fdr_provider_t *p = NULL;
    int rc = fdr_provider_register(&desc, &p);
    if (rc == 0)
        rc = fdr_raw_event(p, 1, data, size);
    if (rc != 0 && fdr_strerror(rc) == NULL)
        rc = fdr_snapshot("/nonexistent");
    return rc;
}
#endif

/* The fast path: the two-int call whose code check-headers.sh compares. */
int strict_two(int a, int b);
int strict_two(int a, int b)
{
    fdr_trace(strict, two, "a=%d b=%d", a, b);
    return a + b;
}

int strict_all(unsigned char c, unsigned long long u, const char *s, const void *ptr,
               double d);
int strict_all(unsigned char c, unsigned long long u, const char *s, const void *ptr,
               double d)
{
    long batch = (long)FDR_TUNABLE(strict_batch, 32);
    double gain = FDR_TUNABLE_DOUBLE(strict_gain, 0.5);
    fdr_trace(strict, none, "nothing");
    fdr_trace(strict, mixed, "c=%u u=%llu s=%s p=%p d=%g", c, u, s, ptr, d);
    if (fdr_enabled(strict, guarded))
        fdr_trace_fields(strict, guarded, "batch,gain", "%ld %f", batch, gain);
    return (int)batch;
}
