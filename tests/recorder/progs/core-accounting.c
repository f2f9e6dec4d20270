/* SPDX-License-Identifier: MIT */
/* core-accounting.c [THREADS [EVENTS [_exit]]] - every thread records EVENTS
 * events "acct:ev" carrying (thread index, sequence number), as fast as it
 * can, so that with a small buffer (FDR_BUFFER_SIZE, FDR_PACKET_SIZE) the
 * consumer falls behind and events are discarded.
 * tests/recorder/test-core-accounting.py checks that read + discarded ==
 * THREADS * EVENTS exactly.
 *
 * With "_exit", once the threads have exited the program prints "joined",
 * waits for EOF on stdin (the driver waits meanwhile for the consumer to
 * write every packet out) and ends with _exit(0): no exit handler runs, so
 * the last discards of each thread reach the trace only if its exit
 * reported them. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>

#include <fdr/fdr.h>

static uint32_t events = 1000000;
static pthread_barrier_t start, done;

static void *worker(void *arg)
{
    uint32_t idx = (uint32_t)(uintptr_t)arg;
    pthread_barrier_wait(&start);
    for (uint32_t i = 0; i < events; i++)
        fdr_trace(acct, ev, "thread=%u seq=%u", idx, i);
    /* No thread exits before all have recorded: each has a buffer (and a
     * stream) of its own, none is handed on (test-core-rerun.py). */
    pthread_barrier_wait(&done);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
    if (argc > 2)
        events = (uint32_t)strtoul(argv[2], NULL, 10);
    pthread_t t[64];
    if (threads == 0 || threads > 64)
        return 2;
    pthread_barrier_init(&start, NULL, threads);
    pthread_barrier_init(&done, NULL, threads);
    for (unsigned i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) != 0)
            return 3;
    for (unsigned i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("emitted=%llu\n", (unsigned long long)threads * events);
    if (argc > 3 && strcmp(argv[3], "_exit") == 0) {
        printf("joined\n");
        fflush(stdout);
        while (getchar() != EOF)
            ;
        _exit(0);
    }
    return 0;
}
