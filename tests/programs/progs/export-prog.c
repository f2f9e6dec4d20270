/* SPDX-License-Identifier: MIT */
/* export-prog.c THREADS ROUNDS - writes the trace of the `fdr export` test
 * (tests/programs/test-fdr-export.py): each of THREADS threads (named
 * "ex-<t>") does ROUNDS rounds of
 *
 *     ex:work_enter  (t, i)            opens a slice
 *     ex:step        (t, i, level, ratio, big, what)  numbers and a string
 *     ex:inner_begin (t)               a nested slice
 *     ex:inner_end   (t)
 *     ex:work_exit   (t, i)            closes the slice
 *
 * and, once, ex:stray_exit (t) with no begin before it (an instant). The
 * values are functions of (t, i) that the test recomputes. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <fdr/fdr.h>

static int rounds;

static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "ex-%d", t);
    pthread_setname_np(pthread_self(), name);
    fdr_trace(ex, stray_exit, "t=%d", t);
    for (int i = 0; i < rounds; i++) {
        fdr_trace(ex, work_enter, "t=%d i=%d", t, i);
        int level = (i * 7 + t) % 100 - 50;
        double ratio = i / 4.0 + t;
        uint64_t big = (uint64_t)i * 1000000007u + (uint64_t)t;
        const char *what = i % 2 ? "odd \"quoted\"" : "even\\slash";
        fdr_trace(ex, step, "t=%d i=%d level=%d ratio=%g big=%llu what=%s", t, i, level,
                  ratio, (unsigned long long)big, what);
        fdr_trace(ex, inner_begin, "t=%d", t);
        fdr_trace(ex, inner_end, "t=%d", t);
        fdr_trace(ex, work_exit, "t=%d i=%d took__us=%d", t, i, 3 * i + 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 3;
    rounds = argc > 2 ? atoi(argv[2]) : 100;
    pthread_t th[16];
    if (threads < 1 || threads > 16)
        return 2;
    for (int t = 0; t < threads; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    return 0;
}
