/* SPDX-License-Identifier: MIT */
/* core-threads.c [THREADS [BATCH]] - creates and joins THREADS short-lived
 * threads (10,000), BATCH (8) at a time; each records three events. Prints
 * the memory high-water mark, after the first batches and at the end, from
 * /proc/self/status, for tests/test-core-threads.py. Buffers of exited
 * threads must be reused: without that, memory grows with every thread. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fdr/fdr.h>

static void *worker(void *arg)
{
    uint32_t n = (uint32_t)(uintptr_t)arg;
    fdr_trace(thr, begin, "n=%u", n);
    fdr_trace(thr, middle, "n=%u name=%s", n, "worker");
    fdr_trace(thr, end, "n=%u", n);
    return NULL;
}

static void print_status(const char *when)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0 || strncmp(line, "VmRSS:", 6) == 0 ||
            strncmp(line, "Threads:", 8) == 0)
            printf("%s.%.*s=%ld\n", when, (int)strcspn(line, ":"), line,
                   strtol(line + strcspn(line, "0123456789"), NULL, 10));
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    uint32_t threads = argc > 1 ? (uint32_t)atoi(argv[1]) : 10000;
    uint32_t batch = argc > 2 ? (uint32_t)atoi(argv[2]) : 8;
    pthread_t t[64];
    if (batch == 0 || batch > 64)
        return 2;
    fdr_trace(thr, main, "threads=%u", threads);
    for (uint32_t done = 0; done < threads;) {
        uint32_t n = threads - done < batch ? threads - done : batch;
        for (uint32_t i = 0; i < n; i++)
            if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(done + i)) != 0) {
                perror("pthread_create");
                return 3;
            }
        for (uint32_t i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        done += n;
        if (done == 200 || (threads < 200 && done == threads))
            print_status("early");
    }
    print_status("end");
    return 0;
}
