/* SPDX-License-Identifier: MIT */
/* core-config.c - records 10 events from main and 10 from a thread, then
 * says "continued"; tests/test-core-config.py runs it with bad values of
 * the FDR_* variables: each must give one warning line, not a stop. */
#include <pthread.h>
#include <stdio.h>

#include <fdr/fdr.h>

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++)
        fdr_trace(cfg, thread, "i=%d", i);
    return NULL;
}

int main(void)
{
    pthread_t t;
    for (int i = 0; i < 10; i++)
        fdr_trace(cfg, main, "i=%d", i);
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    printf("continued\n");
    return 0;
}
