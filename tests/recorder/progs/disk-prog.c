/* SPDX-License-Identifier: MIT */
/* disk-prog.c MODE ... - the trace on disk under hostile endings, for
 * tests/recorder/test-disk-*.py:
 *
 *   spawn KIND N     records disk:parent N times, runs "disk-prog child N"
 *                    by KIND (system, fork, vfork: +exec), waits for it,
 *                    records N more; the child records disk:child N times
 *   run COUNTS T     T threads record disk:ev (thread, n) without end; each
 *                    stores how many fdr_trace calls returned in the
 *                    uint64_t array mapped from file COUNTS; killed by the test
 *   _exit COUNTS T   the same, and main calls _exit(0) once every thread
 *                    recorded 2,000 events
 *   fill N1 N2       records disk:fill (phase 1) N1 times, fdr_flush()
 *                    (prints "flush1=<r>"), waits for a line on stdin,
 *                    records N2 more (phase 2), prints "flush2=<r>"
 *   pause            prints its pid, waits for a line on stdin, then execs
 *                    itself as "victim" with FDR_OUTPUT, FDR_CRASH_DIR set
 *                    from DISK_OUTPUT, DISK_CRASH_DIR (same pid: a path
 *                    prepared for it by another user is waiting)
 *   victim           records, fdr_snapshot(DISK_SNAPSHOT) (prints
 *                    "snapshot=<r>"), then raises SIGSEGV (crash dump) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fdr/fdr.h>

static volatile uint64_t *counts;
static int exit_early;

static void *recorder(void *arg)
{
    uint32_t t = (uint32_t)(uintptr_t)arg;
    for (uint64_t n = 0;; n++) {
        fdr_trace(disk, ev, "thread=%u n=%lu", t, (unsigned long)n);
        __atomic_store_n(&counts[t], n + 1, __ATOMIC_RELEASE);
        if (n % 100 == 99)
            usleep(1000); /* keeps traces small enough to read back */
    }
    return NULL;
}

static int run(const char *file, int threads, int early)
{
    int fd = open(file, O_RDWR);
    if (fd < 0 || threads < 1 || threads > 64)
        return 2;
    counts = mmap(NULL, 64 * sizeof *counts, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (counts == MAP_FAILED)
        return 2;
    exit_early = early;
    pthread_t th[64];
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, recorder, (void *)(uintptr_t)i);
    printf("started\n");
    fflush(stdout);
    for (;;) {
        int done = 0;
        for (int i = 0; i < threads; i++)
            done += __atomic_load_n(&counts[i], __ATOMIC_ACQUIRE) >= 2000;
        if (exit_early && done == threads)
            _exit(0);
        usleep(1000);
    }
}

static int spawn(const char *self, const char *kind, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        fdr_trace(disk, parent, "n=%u", i);
    char num[16];
    snprintf(num, sizeof num, "%u", n);
    int st = -1;
    if (strcmp(kind, "system") == 0) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "'%s' child %u", self, n);
        st = system(cmd);
    } else {
        char *argv[] = {(char *)self, "child", num, NULL};
        pid_t p = strcmp(kind, "vfork") == 0 ? vfork() : fork();
        if (p == 0) {
            execv(self, argv);
            _exit(127);
        }
        if (p < 0 || waitpid(p, &st, 0) != p)
            return 3;
    }
    if (st != 0)
        return 4;
    for (unsigned i = 0; i < n; i++)
        fdr_trace(disk, parent, "n=%u", n + i);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "spawn") == 0)
        return spawn(argv[0], argv[2], argc > 3 ? (unsigned)atoi(argv[3]) : 1000);
    if (argc == 3 && strcmp(argv[1], "child") == 0) {
        for (unsigned i = 0, n = (unsigned)atoi(argv[2]); i < n; i++)
            fdr_trace(disk, child, "n=%u", i);
        return 0;
    }
    if (argc == 4 && (strcmp(argv[1], "run") == 0 || strcmp(argv[1], "_exit") == 0))
        return run(argv[2], atoi(argv[3]), argv[1][0] == '_');
    if (argc == 4 && strcmp(argv[1], "fill") == 0) {
        unsigned n = (unsigned)atoi(argv[2]);
        for (unsigned i = 0; i < n; i++)
            fdr_trace(disk, fill, "phase=%u n=%u", 1u, i);
        printf("flush1=%d\n", fdr_flush());
        fflush(stdout);
        char line[16];
        if (!fgets(line, sizeof line, stdin))
            return 2;
        n = (unsigned)atoi(argv[3]);
        for (unsigned i = 0; i < n; i++)
            fdr_trace(disk, fill, "phase=%u n=%u", 2u, i);
        printf("flush2=%d\n", fdr_flush());
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "pause") == 0) {
        printf("%d\n", (int)getpid());
        fflush(stdout);
        char line[16];
        if (!fgets(line, sizeof line, stdin))
            return 2;
        setenv("FDR_OUTPUT", getenv("DISK_OUTPUT"), 1);
        setenv("FDR_CRASH_DIR", getenv("DISK_CRASH_DIR"), 1);
        char *args[] = {argv[0], "victim", NULL};
        execv(argv[0], args);
        return 127;
    }
    if (argc == 2 && strcmp(argv[1], "victim") == 0) {
        for (unsigned i = 0; i < 1000; i++)
            fdr_trace(disk, victim, "n=%u", i);
        printf("snapshot=%d\n", fdr_snapshot(getenv("DISK_SNAPSHOT")));
        fflush(stdout);
        raise(SIGSEGV);
        return 0;
    }
    fprintf(stderr, "usage: see the head of disk-prog.c\n");
    return 2;
}
