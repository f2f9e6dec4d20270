/* SPDX-License-Identifier: MIT */
/* consumer.c - a program built against an installed fdr (check-install.sh):
 * one call-site event and one raw event, written to FDR_OUTPUT at exit and
 * checked by check-trace.py. Prints the version it was compiled with. */
#include <stdio.h>

#include <fdr/fdr.h>

int main(void)
{
    fdr_trace(inst, hello, "n=%d s=%s", 42, "installed");
    fdr_provider_desc_t d = FDR_PROVIDER_DESC_INIT("instraw", 2, 5);
    fdr_provider_t *p = NULL;
    int r = fdr_provider_register(&d, &p);
    if (r == 0)
        r = fdr_raw_event(p, 1, "\x01\x02\x03", 3);
    if (r == 0)
        r = fdr_provider_unregister(p);
    if (r != 0) {
        printf("consumer: %s\n", fdr_strerror(r));
        return 1;
    }
    printf("fdr %s\n", FDR_VERSION_STRING);
    return 0;
}
