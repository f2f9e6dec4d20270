/* SPDX-License-Identifier: MIT */
/* Every form of the API, in strict ISO C mode: must compile without a
 * warning (-std=c11 -Wall -Wextra -Werror), with gcc and with clang. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fdr/fdr.h>

enum color { RED, GREEN };

static int expensive(void)
{
    return 42;
}

int f(const char *name, char *buf, size_t n, double ratio, void *p)
{
    bool ok = true;
    enum color c = GREEN;
    char arr[8] = "arr";
    fdr_trace(ok, none);
    fdr_trace(ok, text, "just text");
    fdr_trace(ok, one, "n=%zu", n);
    fdr_trace(ok, many, "name=%s buf=%s ratio=%f p=%p ok=%d c=%d arr=%s lit=%s", name, buf,
              ratio, p, ok, c, arr, "lit");
    fdr_trace(ok, ints, "%d %u %ld %lu %lld %llu %hd %hu %hhd %hhu %c %f", -1, 1u, -2L, 2UL,
              -3LL, 3ULL, (short)-4, (unsigned short)4, (signed char)-5, (unsigned char)5,
              'x', 1.5f);
    fdr_trace(ok, fixed, "%d %u", (int32_t)-1, (uint32_t)1);
    fdr_trace_fields(ok, named, "a,b", "%d %d", 1, 2);
    if (fdr_enabled(ok, guarded))
        fdr_trace(ok, guarded, "v=%d", expensive());
    return fdr_flush();
}
