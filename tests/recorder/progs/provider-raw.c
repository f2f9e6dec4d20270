/* SPDX-License-Identifier: MIT */
/* provider-raw.c - records raw events for tests/test-provider-raw.py.
 *
 * Provider "rawp" (4 events). Event 0 gets payloads of sizes 0, 1, 2, 255,
 * 4096 (when it fits), fdr_raw_event_max() - 1 and fdr_raw_event_max(); byte i of a payload
 * of size n is (i * 7 + n) & 0xff, which the checker recomputes. One more
 * byte than the maximum must give -E2BIG. Events 1 and 2 get "hello" and
 * 8 bytes of 0xff; event 3 is disabled by the test's FDR_EVENTS and must
 * give -ENODATA. Prints "max <n>" and exits 0 when every return code is
 * the expected one; otherwise one line naming the call and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fdr/fdr.h>

static int failed;

static void expect(int got, int want, const char *what, size_t size)
{
    if (got != want) {
        printf("FAIL: %s size %zu: got %d (%s), want %d (%s)\n", what, size, got,
               fdr_strerror(got), want, fdr_strerror(want));
        failed = 1;
    }
}

int main(void)
{
    fdr_provider_desc_t d = FDR_PROVIDER_DESC_INIT("rawp", 4, 0xC0FFEE);
    fdr_provider_t *p = NULL;
    int r = fdr_provider_register(&d, &p);
    if (r < 0) {
        printf("FAIL: fdr_provider_register: %s\n", fdr_strerror(r));
        return 1;
    }
    size_t max = fdr_raw_event_max();
    unsigned char *buf = malloc(max + 1);
    if (!buf)
        return 1;
    size_t sizes[] = {0, 1, 2, 255, 4096, max - 1, max};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        if (n > max) /* FDR_PACKET_SIZE=4096: 4096 does not fit */
            continue;
        for (size_t i = 0; i < n; i++)
            buf[i] = (unsigned char)((i * 7 + n) & 0xff);
        expect(fdr_raw_event(p, 0, n ? buf : NULL, n), 0, "event 0", n);
    }
    expect(fdr_raw_event(p, 0, buf, max + 1), -E2BIG, "event 0 over the limit", max + 1);
    expect(fdr_raw_event(p, 1, "hello", 5), 0, "event 1", 5);
    memset(buf, 0xff, 8);
    expect(fdr_raw_event(p, 2, buf, 8), 0, "event 2", 8);
    expect(fdr_raw_event(p, 3, buf, 8), -ENODATA, "event 3 (disabled)", 8);
    expect(fdr_raw_event(p, 4, buf, 8), -EINVAL, "event 4 (no such id)", 8);
    expect(fdr_raw_event(p, 1, NULL, 3), -EINVAL, "event 1 with NULL data", 3);
    free(buf);
    printf("max %zu\n", max);
    expect(fdr_provider_unregister(p), 0, "unregister", 0);
    return failed;
}
