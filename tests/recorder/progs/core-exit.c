/* SPDX-License-Identifier: MIT */
/* core-exit.c MODE - leaves the process while recording threads are still
 * alive, with partially filled packets open, for tests/test-core-exit.py:
 *
 *   exit     main calls exit(0)
 *   return   main returns 0
 *   _exit    main calls fdr_flush(), then _exit(0)
 *   thread   a recording thread calls exit(0) while main waits in join
 *
 * Two workers record ex:work (thread, seq) 1,000 and 20,000 times (the
 * second spans several packets), then block. An atexit handler,
 * registered after the first event, records ex:atexit 100 times. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fdr/fdr.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready;
static const char *mode;

static void in_atexit(void)
{
    for (uint32_t i = 0; i < 100; i++)
        fdr_trace(ex, atexit, "seq=%u", i);
}

static void *worker(void *arg)
{
    uint32_t idx = (uint32_t)(uintptr_t)arg;
    uint32_t n = idx == 0 ? 1000 : 20000;
    for (uint32_t i = 0; i < n; i++)
        fdr_trace(ex, work, "thread=%u seq=%u", idx, i);
    pthread_mutex_lock(&lock);
    ready++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (strcmp(mode, "thread") == 0 && idx == 1) {
        pthread_mutex_lock(&lock);
        while (ready < 2)
            pthread_cond_wait(&cond, &lock);
        pthread_mutex_unlock(&lock);
        fdr_trace(ex, last, "from=%s", "thread");
        exit(0);
    }
    for (;;)
        pause(); /* still alive, packet still open, when the process ends */
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    mode = argv[1];
    fdr_trace(ex, first, "mode=%s", mode);
    atexit(in_atexit);
    pthread_t t[2];
    for (uintptr_t i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    if (strcmp(mode, "thread") == 0) {
        pthread_join(t[1], NULL); /* never returns: the thread calls exit */
        return 3;
    }
    pthread_mutex_lock(&lock);
    while (ready < 2)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    fdr_trace(ex, last, "from=%s", "main");
    if (strcmp(mode, "exit") == 0)
        exit(0);
    if (strcmp(mode, "_exit") == 0) {
        int r = fdr_flush();
        if (r != 0) {
            fprintf(stderr, "fdr_flush: %d\n", r);
            _exit(4);
        }
        _exit(0);
    }
    return 0;
}
