/* SPDX-License-Identifier: MIT */
/* flight.c - the flight recorder: always on, in memory, dumped on a crash.
 *
 *     ./flight                  records, takes a snapshot, exits
 *     babeltrace2 flight-snapshot
 *     ./flight crash            the same, then dereferences NULL: fdr prints
 *                               the last events of every thread on stderr,
 *                               and the process dies of SIGSEGV as usual
 *     FDR_TRACES=batch=4 ./flight   a tunable, set from the environment
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <fdr/fdr.h>

static void *sensor(void *arg)
{
    const char *name = arg;
    pthread_setname_np(pthread_self(), name);
    for (int i = 0; i < 1000; i++)
        fdr_trace(plant, reading, "sensor=%s value=%.1f", name, 20.0 + i % 7);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t a, b;
    pthread_create(&a, NULL, sensor, "inlet");
    pthread_create(&b, NULL, sensor, "outlet");
    pthread_join(a, NULL);
    pthread_join(b, NULL);

    /* A knob: one relaxed load to read, set by FDR_TRACES=batch=N or
     * fdr_tunable_set("batch", N). */
    long long batch = FDR_TUNABLE_RANGE(batch, 16, 1, 1024);
    fdr_trace(plant, batch, "size=%lld", batch);

    /* The newest events of every thread, as a CTF trace, at any moment. */
    int r = fdr_snapshot("flight-snapshot");
    printf("flight: snapshot %s\n", r == 0 ? "written to flight-snapshot" : fdr_strerror(r));

    if (argc > 1 && strcmp(argv[1], "crash") == 0) {
        fdr_trace(plant, fault, "about to dereference %p", (void *)0);
        volatile int *p = NULL;
        return *p;
    }
    return 0;
}
