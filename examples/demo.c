/* SPDX-License-Identifier: MIT */
/* demo.c - the first program to read: a few events from two threads.
 *
 *     FDR_OUTPUT=/tmp/demo-trace ./demo && babeltrace2 /tmp/demo-trace
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include <fdr/fdr.h>

static void *worker(void *arg)
{
    const char *name = arg;
    pthread_setname_np(pthread_self(), name); /* shown in each packet */
    for (int i = 0; i < 3; i++)
        fdr_trace(demo, work, "who=%s step=%d ratio=%.2f", name, i, i / 3.0);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    fdr_trace(demo, start, "threads=%d", 2);
    pthread_create(&a, NULL, worker, "alpha");
    pthread_create(&b, NULL, worker, "beta");
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    fdr_trace(demo, stop);
    printf("demo: recorded 8 events\n");
    return 0;
}
