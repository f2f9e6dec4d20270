/* SPDX-License-Identifier: MIT */
/* test-live-concurrent.c - fdr_trace_set / fdr_record_set from 4 threads
 * while 4 others record and print (issue #5).
 *
 * Run with FDR_TRACE_FILE and FDR_OUTPUT set, in overwrite mode with small
 * rings so that the trace read back holds only the newest few thousand
 * events (tests/live.cmake). Checks:
 *   1. no crash, and (in the TSan build) no data race;
 *   2. no torn state: after the storm, the printed and recorded states of
 *      the conc:* events are exactly those of one of the specs (not a mix);
 *   3. the last call wins: a final round of calls, one thread after the
 *      other in a known order, leaves the state of the last call, seen in
 *      fdr_event_list, in the lines printed by events emitted after the
 *      joins, and in the trace on disk (read with bt2 through tracecheck.py).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fdr/fdr.h>

#include "check.h"

#define NEV 5 /* conc:e0 .. e3, conc:mark */
static const char *names[NEV] = {"e0", "e1", "e2", "e3", "mark"};

/* Specs and, per event, whether each turns it on (printing or recording). */
static const char *tspec[4] = {"conc:e0", "conc:e1,conc:mark", "conc:*:-conc:e2",
                               "-conc:*"};
static const int ton[4][NEV] = {
    {1, 0, 0, 0, 0}, {0, 1, 0, 0, 1}, {1, 1, 0, 1, 1}, {0, 0, 0, 0, 0}};
static const char *rspec[4] = {"conc:e0,conc:mark", "-conc:e1", "none", "all"};
static const int ron[4][NEV] = {
    {1, 0, 0, 0, 1}, {1, 0, 1, 1, 1}, {0, 0, 0, 0, 0}, {1, 1, 1, 1, 1}};

static int stop, turn;

static void emit(int phase, int i)
{
    fdr_trace(conc, e0, "phase=%d i=%d", phase, i);
    fdr_trace(conc, e1, "phase=%d i=%d", phase, i);
    fdr_trace(conc, e2, "phase=%d i=%d", phase, i);
    fdr_trace(conc, e3, "phase=%d i=%d", phase, i);
    fdr_trace(conc, mark, "phase=%d i=%d", phase, i);
}

static long recorded_rounds;

/* Records until the setters are done; yields now and then so that the
 * setters get the CPU (2 cores for 9 threads) and the storm stays short. */
static void *recorder(void *arg)
{
    (void)arg;
    long i = 0;
    for (; !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++) {
        emit(0, (int)i);
        if (i % 16 == 15)
            sched_yield();
    }
    __atomic_fetch_add(&recorded_rounds, i, __ATOMIC_RELAXED);
    return NULL;
}

static void *setter(void *arg)
{
    int k = (int)(long)arg;
    for (int i = 0; i < 2000; i++) {
        CHECK_MSG(fdr_trace_set(tspec[(k + i) % 4]) == 0, "fdr_trace_set");
        CHECK_MSG(fdr_record_set(rspec[(k + 3 * i) % 4]) == 0, "fdr_record_set");
    }
    /* Final round, in the order k = 0, 1, 2, 3: thread k sets spec k. */
    WAIT_UNTIL(__atomic_load_n(&turn, __ATOMIC_ACQUIRE) == k,
               "setter %d's turn (setter %d has not set its spec)", k,
               __atomic_load_n(&turn, __ATOMIC_ACQUIRE));
    fdr_trace_set(tspec[k]);
    fdr_record_set(rspec[(k + 1) % 4]);
    __atomic_store_n(&turn, k + 1, __ATOMIC_RELEASE);
    return NULL;
}

struct state {
    int printed[NEV], recorded[NEV], seen[NEV];
};

static void list_cb(void *arg, const fdr_event_info_t *e)
{
    struct state *s = arg;
    if (strcmp(e->provider, "conc") != 0)
        return;
    for (int i = 0; i < NEV; i++) {
        if (strcmp(e->event, names[i]) == 0) {
            s->printed[i] = e->printed;
            s->recorded[i] = e->recorded;
            s->seen[i]++;
        }
    }
}

/* Index of the spec whose on/off table is st, or -1 (torn). */
static int which(const int table[4][NEV], const int *st)
{
    for (int k = 0; k < 4; k++)
        if (memcmp(table[k], st, sizeof table[k]) == 0)
            return k;
    return -1;
}

int main(void)
{
    const char *file = getenv("FDR_TRACE_FILE");
    const char *out = getenv("FDR_OUTPUT");
    if (!file || !out) {
        fprintf(stderr, "set FDR_TRACE_FILE and FDR_OUTPUT\n");
        return 2;
    }
    pthread_t rec[4], set[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&rec[i], NULL, recorder, NULL);
    /* Setters start the final round themselves; hold it until all ran. */
    __atomic_store_n(&turn, -1, __ATOMIC_RELAXED);
    for (long i = 0; i < 4; i++)
        pthread_create(&set[i], NULL, setter, (void *)i);

    /* 2. untorn while recorders still run: poll a few times. */
    for (int n = 0; n < 20; n++) {
        struct state s = {0};
        fdr_event_list(list_cb, &s);
        CHECK_MSG(which(ton, s.printed) >= 0, "torn printing state");
        CHECK_MSG(which(ron, s.recorded) >= 0, "torn recording state");
    }
    __atomic_store_n(&turn, 0, __ATOMIC_RELEASE);
    for (int i = 0; i < 4; i++)
        pthread_join(set[i], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 4; i++)
        pthread_join(rec[i], NULL);

    /* 3. the last call (thread 3) wins. */
    struct state s = {0};
    fdr_event_list(list_cb, &s);
    for (int i = 0; i < NEV; i++)
        CHECK_MSG(s.seen[i] == 1, "conc:%s listed %d times", names[i], s.seen[i]);
    CHECK_MSG(which(ton, s.printed) == 3, "printing state is spec %d, not 3",
              which(ton, s.printed));
    CHECK_MSG(which(ron, s.recorded) == 0, "recording state is spec %d, not 0",
              which(ron, s.recorded));

    /* Set a known state, then record once per event after the joins. */
    CHECK_MSG(fdr_trace_set("conc:e1,conc:e3") == 0, "set");
    CHECK_MSG(fdr_record_set("conc:e2,conc:mark") == 0, "set");
    struct stat st;
    CHECK_MSG(stat(file, &st) == 0, "stat %s", file);
    emit(1, 0);
    FILE *f = fopen(file, "r");
    CHECK_MSG(f != NULL, "open %s", file);
    int got[NEV] = {0}, lines = 0;
    if (f) {
        fseek(f, st.st_size, SEEK_SET);
        char line[512];
        while (fgets(line, sizeof line, f)) {
            lines++;
            for (int i = 0; i < NEV; i++) {
                char want[64];
                snprintf(want, sizeof want, "] conc:%s phase=1 i=0\n", names[i]);
                const char *p = strstr(line, want);
                if (p && strlen(p) == strlen(want))
                    got[i]++;
            }
        }
        fclose(f);
    }
    CHECK_MSG(lines == 2 && got[1] == 1 && got[3] == 1, "printed after joins: %d lines",
              lines);

    /* What reached the disk after the joins: conc:e2 and conc:mark only. */
    CHECK_MSG(fdr_flush() == 0, "fdr_flush");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s dump %s", PYTHON, TRACECHECK, out);
    FILE *p = popen(cmd, "r");
    CHECK_MSG(p != NULL, "popen");
    int rgot[NEV] = {0}, phase1 = 0;
    if (p) {
        static char line[1 << 16];
        while (fgets(line, sizeof line, p)) {
            if (!strstr(line, "\"phase\": 1,"))
                continue;
            phase1++;
            for (int i = 0; i < NEV; i++) {
                char want[64];
                snprintf(want, sizeof want, "\"name\": \"conc:%s\"", names[i]);
                if (strstr(line, want))
                    rgot[i]++;
            }
        }
        CHECK_MSG(pclose(p) == 0, "tracecheck dump failed");
    }
    CHECK_MSG(phase1 == 2 && rgot[2] == 1 && rgot[4] == 1, "recorded after joins: %d",
              phase1);

    if (check_status())
        return 1;
    printf("ok: %ld rounds of 5 events recorded during the storm\n", recorded_rounds);
    return 0;
}
