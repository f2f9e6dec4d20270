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
 *                    records N2 more (phase 2), prints "flush2=<r>";
 *                    with DISK_FILL_UNTIL, phase 1 goes on until that file
 *                    exists (prints "emitted1=<n>" first)
 *   fillt T N1 N2    T threads, alive to the end, each record disk:fillt
 *                    (thread, phase 1, n) N1 times; then fdr_flush()
 *                    ("flush1=<r>"), a line on stdin, N2 more each (phase
 *                    2), "flush2=<r>": one stream per thread
 *   fds HOW T N FILE records disk:fdmain once and fdr_flush()es (fdr's
 *                    descriptors are open: trace directory, stream file,
 *                    ring, drain helper's socket), then takes every
 *                    descriptor from 3 to 63 for FILE of its own: HOW
 *                    "close" closes them all first (closefrom(3)), "dup2"
 *                    puts FILE over them. Then T threads record disk:fdthr
 *                    (thread, n) N times each, and the program writes
 *                    FILE_BYTES bytes 'P' to FILE through each of those
 *                    descriptors in turn (a byte of fdr's there is a
 *                    write into the program's file), and disk:fdmain once
 *                    more
 *   pause            prints its pid, waits for a line on stdin, then execs
 *                    itself as "victim" with FDR_OUTPUT, FDR_CRASH_DIR set
 *                    from DISK_OUTPUT, DISK_CRASH_DIR (same pid: a path
 *                    prepared for it by another user is waiting)
 *   victim           records, fdr_snapshot(DISK_SNAPSHOT) (prints
 *                    "snapshot=<r>"), then raises SIGSEGV (crash dump)
 *   segv N           records disk:victim N times, then raises SIGSEGV (a
 *                    service that crashes, restarted by the test) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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

static unsigned fill_n;
static int fill_phase;
static pthread_barrier_t fill_go, fill_done;

static void *filler(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    for (int phase = 1; phase <= 2; phase++) {
        pthread_barrier_wait(&fill_go);
        for (unsigned i = 0, n = fill_n; i < n; i++)
            fdr_trace(disk, fillt, "thread=%u phase=%d n=%u", t, fill_phase, i);
        pthread_barrier_wait(&fill_done);
    }
    return NULL;
}

static int fill_threads(unsigned threads, unsigned n1, unsigned n2)
{
    pthread_t th[64];
    if (threads < 1 || threads > 64)
        return 2;
    pthread_barrier_init(&fill_go, NULL, threads + 1);
    pthread_barrier_init(&fill_done, NULL, threads + 1);
    for (unsigned i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, filler, (void *)(uintptr_t)i);
    for (int phase = 1; phase <= 2; phase++) {
        fill_n = phase == 1 ? n1 : n2;
        fill_phase = phase;
        pthread_barrier_wait(&fill_go);
        pthread_barrier_wait(&fill_done);
        printf("flush%d=%d\n", phase, fdr_flush());
        fflush(stdout);
        char line[16];
        if (phase == 1 && !fgets(line, sizeof line, stdin))
            return 2;
    }
    for (unsigned i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    return 0;
}

#define FILE_BYTES 6100

static unsigned fds_n;

static void *fds_thread(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0; i < fds_n; i++)
        fdr_trace(disk, fdthr, "thread=%u n=%u", t, i);
    return NULL;
}

static int fds(const char *how, unsigned threads, unsigned n, const char *file)
{
    pthread_t th[64];
    if (threads < 1 || threads > 64)
        return 2;
    fdr_trace(disk, fdmain, "n=%u", 0u);
    if (fdr_flush() != 0)
        return 3;
    if (strcmp(how, "close") == 0)
        syscall(SYS_close_range, 3u, ~0u, 0u);
    int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 4;
    for (int k = 3; k < 64; k++)
        if (k != fd && dup2(fd, k) != k)
            return 5;
    fds_n = n;
    for (unsigned i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, fds_thread, (void *)(uintptr_t)i);
    for (unsigned i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < FILE_BYTES; i++)
        if (write(3 + i % 61, "P", 1) != 1)
            return 6;
    fdr_trace(disk, fdmain, "n=%u", 1u);
    printf("done\n");
    return 0;
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
        unsigned n = (unsigned)atoi(argv[2]), i = 0;
        for (; i < n; i++)
            fdr_trace(disk, fill, "phase=%u n=%u", 1u, i);
        /* DISK_FILL_UNTIL=FILE: on until FILE exists (fault-writev.c makes
         * it at the torn write): the consumer thread met the fault before
         * fdr_flush() (bounded: 60 s). Prints the events recorded. */
        const char *until = getenv("DISK_FILL_UNTIL");
        for (unsigned ms = 0; until && access(until, F_OK) != 0; ms++) {
            if (ms == 60000) {
                fprintf(stderr,
                        "disk-prog: FAIL: after 60 s and %u events, the consumer "
                        "thread still had not met the fault (no %s)\n",
                        i, until);
                return 3;
            }
            for (unsigned k = 0; k < 20; k++, i++)
                fdr_trace(disk, fill, "phase=%u n=%u", 1u, i);
            usleep(1000);
        }
        if (until)
            printf("emitted1=%u\n", i);
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
    if (argc == 6 && strcmp(argv[1], "fds") == 0)
        return fds(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]), argv[5]);
    if (argc == 5 && strcmp(argv[1], "fillt") == 0)
        return fill_threads((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]),
                            (unsigned)atoi(argv[4]));
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
    if (argc == 3 && strcmp(argv[1], "segv") == 0) {
        for (unsigned i = 0, n = (unsigned)atoi(argv[2]); i < n; i++)
            fdr_trace(disk, victim, "n=%u", i);
        raise(SIGSEGV);
        return 0;
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
