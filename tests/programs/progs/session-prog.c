/* SPDX-License-Identifier: MIT */
/* session-prog.c - an instrumented program (libfdr) for the tests of its
 * registration with fdrd (tests/programs/test-fdr-session-libfdr.py).
 *
 *   session-prog hold NAME CHECKSUM LONG_SIZE
 *       registers provider NAME (4 events, that checksum and sizeof_long,
 *       the rest as this build), records one raw event, prints "ready",
 *       then per line of stdin: "unregister" drops the provider (prints
 *       "unregistered"); at end of input exits 0
 *   session-prog spin
 *       two threads record events without pause; prints "ready" once both
 *       have; at end of input prints "events N" and exits 0
 *   session-prog start
 *       prints "main" first thing, records one event, exits 0
 *   session-prog go THREADS N [kill]
 *       starts THREADS threads (at most 16); at the line "go" on stdin
 *       each records, in this order, N events: ses:tick (t, n = 0..N-1),
 *       and every 10th of them also ses:rare (t, n), every 7th ses:hot
 *       (t, n) in category 5 (fdr_trace_category); then prints "done"
 *       and exits 0 at end of input; with "kill", the threads do not end
 *       (their packets stay open): once all are done it prints "done" and
 *       waits to be killed
 *   session-prog early THREADS N
 *       each thread records N ses:tick (t, n = 0..N-1) at once; prints
 *       "recorded"; at the line "more" each records n = N; prints "done"
 *       and exits 0 at end of input
 *   session-prog forks K N [T]   (with FDR_EVENTS=-ses:*)
 *       once routed into a trace that takes ses:tick (fdr_enabled), records
 *       N ses:tick (t = 0, n), then forks K children, while T more threads
 *       of its own record N ses:tick each (t = 100000 + i): each child, once
 *       routed on its own, records N ses:tick (t = its number, from 1) and
 *       exits 0; prints "done F" (F children failed) when all have ended
 *   session-prog bounds packet|content   (with FDR_EVENTS=-ses:*)
 *       once routed, main records 2000 ses:tick (t = 0, n), then makes
 *       packet 2 of the ring it recorded into (4 KiB packets; fdrd's: a
 *       memfd, or a file of --file-buffers) claim more bytes than its
 *       slot (tests/lib/overclaim.h: packet and content size, or content
 *       size alone), prints "claims B" and waits for EOF on stdin
 *   session-prog scribble ROUNDS [SEED]   (with FDR_EVENTS=-ses:*)
 *       once routed, a thread records ses:tick without pause while main
 *       writes over the rings fdrd gave it (the "fdrd-ring" mappings of
 *       /proc/self/maps), ROUNDS times, 1 ms apart: random bytes anywhere,
 *       absurd produced/consumed counts in a ring's header, packet headers
 *       with bad sizes and sequence numbers, a packet tail's committed
 *       position pointing anywhere (random from SEED, default the pid);
 *       then prints "done" and exits 0
 *   session-prog exec N   (with FDR_EVENTS=-ses:*)
 *       once routed, records N ses:tick (t = 0), forks a child that, once
 *       routed, records N (t = 1) and then execs "session-prog forks 0 N"
 *       (the new image registers again and records N with t = 0); prints
 *       "done S" with the child's exit status
 *   session-prog steer
 *       (fdr control's test) a thread records, every 100 µs, ses:tick (t =
 *       the tunable gain, FDR_TUNABLE_RANGE(gain, 5, 0, 100), n = 0, 1, ...);
 *       main prints "ready", then per line of stdin records ses:mark (t =
 *       gain, n = the line's number, from 1) and prints "marked N"; at end
 *       of input stops the thread and exits 0
 *   session-prog storm THREADS [tick [idle]]
 *       THREADS threads record ses:tick and ses:rare (t, n) without pause
 *       until the end of input; prints "ready" once they run; with
 *       "tick", ses:tick alone, and at the end "t N" for each thread (N
 *       events recorded, n = 0..N-1); with "idle", main records one
 *       ses:tick (t = 2, n = 0) first and then nothing: a thread fdr's
 *       own thread moves to new routes on its behalf
 *   session-prog waiters THREADS N   (with FDR_EVENTS=-ses:*)
 *       once routed, at the line "go" starts THREADS threads (at most 16)
 *       one after the other: each records N ses:tick (t, n = 0..N-1) and
 *       holds, the next starting once it has (so the first ones take the
 *       rings the process holds, the rest wait for theirs); prints
 *       "recorded"; at the line "end" lets them end one at a time, in the
 *       order they started (a waiting one ends after the ring holders gave
 *       their rings back); prints "ended" and exits 0 at end of input.
 *       At the line "exit K" instead, threads THREADS-1 down to K end one
 *       at a time (the waiting ones, while the K holders keep the rings),
 *       then it prints "ended" and exits 0 with the K holders still there
 *       (their ring is the route's only one: nobody takes one again)
 *   session-prog many THREADS N [go|flush]
 *       (with "go": once the line "go" is read) THREADS threads (up to
 *       4,000, small stacks) at once, each records N
 *       ses:tick (t, n = 0..N-1) and waits; prints "done" once all have,
 *       and at the end of input lets them end and exits 0 (the memory
 *       budget's test: their rings are all held while it waits); with
 *       "flush", main calls fdr_flush() over and over until they have
 *   session-prog grow IDLE N   (with FDR_EVENTS=-ses:*)
 *       once routed, IDLE threads (at most 64) record one ses:tick each
 *       (t = 1..IDLE, n = 0) and wait; prints "idle" once they have; at
 *       the line "go" main records N ses:tick (t = 0, n = 0..N-1) as fast
 *       as it can and prints "done"; at the end of input lets the threads
 *       end and exits 0 (test-fdr-daemon-grow.py)
 *   session-prog pipe THREADS END MS   (with FDR_EVENTS=-ses:*)
 *       once routed into a trace that takes ses:tick (fdr_enabled),
 *       THREADS threads record ses:tick (t, n = 0, 1, ...) in blocks of
 *       100, pausing 1 ms after each, and after each block print "t n" (n
 *       the last one committed) on stdout, a line written whole; once the
 *       first block of every thread is out it prints "ready". MS ms after
 *       that main ends the process as END says: "kill" waits to be killed,
 *       "segv" dereferences NULL, "abrt" calls abort(), "exit" calls
 *       _exit(0) (the nothing-committed-lost test)
 *   session-prog pace THREADS [BURST [MAX]]
 *       THREADS threads each record bursts of BURST (default 100) ses:tick
 *       (t, n = 0, 1, ...) with a 1 ms sleep between bursts, until the end
 *       of input or MAX events (BURST 1: about 1,000 events/s per thread);
 *       prints "ready" once they run; at the end "events T N" per thread,
 *       "rate R" (events per second, all threads) and "maxburst_us M" (the
 *       longest burst: a program blocked by its tracer shows here)
 *   session-prog resume THREADS [BURST [MAX]]   (with FDR_EVENTS=-ses:*)
 *       as pace, in bursts of 10 by default, each thread starting once routed
 *       (fdr_enabled, and "ready" then), so
 *       that every event it emits is the trace's: recorded or counted as
 *       discarded (fdrd killed and restarted meanwhile:
 *       test-fdr-daemon-death.py); at the end "events T N TID" per thread
 *   session-prog shrink N   (with FDR_EVENTS=-ses:*)
 *       once routed, records N ses:tick (t = 0, n), then shrinks every
 *       ring file of fdrd's it has open (file-backed buffers: a regular
 *       file, not a memfd, that starts with a ring's magic) to 0 bytes,
 *       prints "shrunk K"
 *       and leaves with _exit(0): a hostile program, for fdrd's SIGBUS guard
 *   session-prog soak THREADS N END   (with FDR_EVENTS=-ses:*)
 *       once routed, THREADS threads each record N ses:tick (t, n); then
 *       END: "exit" exits 0; "segv" dies of a real SIGSEGV, "abrt" of
 *       abort(); "late" sets the time of each count its threads lost
 *       to a route no ring held past any clock (prints "late K"), then
 *       raise(SIGKILL); "fork" forks a child that, once routed on its own,
 *       records N ses:tick (t = 100, n) on one thread and exits 0, waited
 *       for (its pid printed first: "child PID"); "hang" prints "done" and
 *       waits to be killed (make soak)
 *   session-prog quick N MS [T]
 *       records N ses:tick (t = T, default 0; n = 0..N-1) at once, without
 *       waiting for any route, prints "recorded", sleeps MS ms and returns
 *       from main (exit 0): a short program, an idle one, or (MS large) one
 *       to kill (tests/programs/test-fdr-daemon-early.py)
 *   session-prog flush N T   (with FDR_OUTPUT)
 *       records N ses:tick (t = T, n = 0..N-1) at once, calls fdr_flush,
 *       records N more (n = N..2N-1), prints "flushed" and exits 0 at end
 *       of input (test-fdr-daemon-early.py, fdrd stopped meanwhile)
 *   session-prog brood K N
 *       a parent of two threads: main records N ses:tick (t = 0) at once,
 *       a second thread records N (t = 100000) and stays until the end;
 *       main forks K children, each records N (t = its number, from 1) at
 *       once, writes "rec PID" to stdout and calls exit(0); prints "done F"
 *       (F children failed)
 *   session-prog spawn N
 *       records N ses:tick (t = 0) at once; a forked child execs at once
 *       "session-prog quick N 0 2"; then system() runs "session-prog quick
 *       N 0 3"; prints "done S1 S2" (their exit statuses)
 *   session-prog die N HOW T
 *       records N ses:tick (t = T, n = 0..N-1) at once, and a ses:rare
 *       before every 10th of the first 100 (no test's trace takes it; a
 *       ring that fills keeps them: what it counts as discarded is
 *       ses:tick only), writing one byte to
 *       stdout after each tick (so that a test that kills it knows how many it
 *       recorded, give or take the last), then ends without any exit
 *       handler: HOW "kill" raise(SIGKILL), "exit" _exit(0), "segv" a real
 *       SIGSEGV, "wait" sleeps (to be killed), "scribble" writes over its
 *       own rings (seed T) and raise(SIGKILL); "exec": a forked child
 *       records them and execs /bin/true at once, waited for (its pid
 *       printed first: "child PID"); "two": then a second thread records
 *       N (t = T + 100000; its ring is made after the registration, so
 *       handed over on its own) and main raise(SIGKILL) once it ended;
 *       "threads": then 24 threads, alive at once (so each makes a ring),
 *       record N each (thread j: t = T + 100000 * j, from 1) and main
 *       raise(SIGKILL) once all have; "late": then 30 threads, alive at
 *       once, record N each (thread j: t = T + 100000 * j, from 1), main
 *       writes "r" and reads a line of stdin ("go"; the test waits past
 *       the registration's first seconds), records 20,000 more (n = N, ...),
 *       the 30 threads N more each (n = N, ...), a 31st thread started
 *       then records N, and main raise(SIGKILL)
 *       (tests/programs/test-fdr-daemon-early.py, -ended.py) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fdr/fdr.h>

#include "stack.h"

#include "overclaim.h"

static int stop;
static uint64_t counts[2];

static int go, go_hold, go_done, go_more;
static unsigned long go_n;

/* Until fdrd routed this process into a trace that takes ses:tick: run
 * with FDR_EVENTS=-ses:* so that fdr_enabled says no until then. */
static void wait_routed(void)
{
    while (!fdr_enabled(ses, tick))
        usleep(1000);
}

static int storm_tick;                /* storm ... tick: ses:tick alone */
static unsigned long storm_count[16]; /* events per thread, with tick */

static void *storm(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned long n = 0;
    for (; !__atomic_load_n(&stop, __ATOMIC_RELAXED); n++) {
        fdr_trace(ses, tick, "t=%d n=%lu", t, n);
        if (!storm_tick)
            fdr_trace(ses, rare, "t=%d n=%lu", t, n);
    }
    storm_count[t] = n;
    return NULL;
}

struct pace {
    pthread_t th;
    int t, burst;
    unsigned long n, max; /* max: events at most (0: no bound) */
    uint64_t maxburst_ns;
    long tid;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* die ... two: the second thread's events. */
struct die_arg {
    unsigned long n;
    int t;
};
static void *die_second(void *arg)
{
    const struct die_arg *a = arg;
    for (unsigned long i = 0; i < a->n; i++)
        fdr_trace(ses, tick, "t=%d n=%lu", a->t, i);
    return NULL;
}

/* die ... threads: each records, then waits for the others (alive at
 * once, each has a ring of its own); the last one lets main go. */
#define DIE_THREADS 300
static pthread_barrier_t die_all;
static void *die_many(void *arg)
{
    die_second(arg);
    pthread_barrier_wait(&die_all);
    pause();
    return NULL;
}

/* die ... late: the 30 threads record N, wait for main's "go", record
 * N more (n = N, ...) and wait for the others. */
#define DIE_LATE 30
static pthread_barrier_t die_go;
static void *die_late(void *arg)
{
    const struct die_arg *a = arg;
    die_second(arg);
    pthread_barrier_wait(&die_all);
    pthread_barrier_wait(&die_go);
    for (unsigned long i = a->n; i < 2 * a->n; i++)
        fdr_trace(ses, tick, "t=%d n=%lu", a->t, i);
    pthread_barrier_wait(&die_all);
    pause();
    return NULL;
}

/* Starts k threads fn(&a[j]) recording n each (thread j: t + 100000 *
 * (j + 1)), with main on the barrier die_all. */
static void die_start(struct die_arg *a, int k, unsigned long n, int t,
                      void *(*fn)(void *))
{
    pthread_t th;
    pthread_barrier_init(&die_all, NULL, (unsigned)k + 1);
    for (int j = 0; j < k; j++) {
        a[j] = (struct die_arg){n, t + 100000 * (j + 1)};
        if (pthread_create(&th, NULL, fn, &a[j]))
            _exit(8);
    }
}

static int pace_routed; /* "resume": start once routed */
static void *pace_thread(void *arg)
{
    struct pace *p = arg;
    p->tid = (long)gettid();
    if (pace_routed)
        wait_routed();
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED) && (!p->max || p->n < p->max)) {
        uint64_t t0 = mono_ns();
        for (int i = 0; i < p->burst && (!p->max || p->n < p->max); i++, p->n++)
            fdr_trace(ses, tick, "t=%d n=%lu", p->t, p->n);
        uint64_t d = mono_ns() - t0;
        if (d > p->maxburst_ns)
            p->maxburst_ns = d;
        usleep(1000);
    }
    return NULL;
}

/* "early": N events at once, then one more (n = N) once told. */
static void *early_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (unsigned long n = 0; n < go_n; n++)
        fdr_trace(ses, tick, "t=%d n=%lu", t, n);
    __atomic_fetch_add(&go_done, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&go_more, __ATOMIC_ACQUIRE))
        usleep(1000);
    fdr_trace(ses, tick, "t=%d n=%lu", t, go_n);
    return NULL;
}

static void *forks_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (unsigned long n = 0; n < go_n; n++) {
        fdr_trace(ses, tick, "t=%d n=%lu", t, n);
        if (n == 0) /* its writer made: no malloc of ours while main forks */
            __atomic_fetch_add(&go_done, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* A forked child's safety net: 300 s, then its stack on stderr (the test
 * prints it) and SIGALRM's status, so that a hang says where it waited
 * (a GCC 12 libasan fork hang, test-safety-fork.c, shows frames of
 * libasan under malloc). */
static void child_alarm(int sig)
{
    /* "child PID hung; its stack:" with async-signal-safe calls only */
    char head[64] = "child ", digits[16];
    size_t at = 6, k = 0;
    for (unsigned long v = (unsigned long)getpid(); v || !k; v /= 10)
        digits[k++] = (char)('0' + v % 10);
    while (k)
        head[at++] = digits[--k];
    memcpy(head + at, " hung; its stack:\n", 18);
    if (write(2, head, at + 18) < 0)
        _exit(99);
    void *frames[64];
    int n = backtrace(frames, 64);
    backtrace_symbols_fd(frames, n, 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void child_safety_net_load(void)
{
    void *f[2];
    backtrace(f, 2); /* libgcc's unwinder loaded in the parent, before any hang */
}

static void child_safety_net(void)
{
    signal(SIGALRM, child_alarm);
    alarm(300); /* a busy machine may take long */
}

/* Forks k children that record n ses:tick each (t = their number, from
 * 1): `routed`, once fdrd routed them, ending with _exit (forks); else at
 * once, ending with exit (brood). -1 when a fork failed, else the number
 * of children that did not exit 0, all waited for. */
static int fork_children(int k, unsigned long n, int routed)
{
    child_safety_net_load();
    for (int c = 0; c < k; c++) {
        pid_t pid = fork();
        if (pid < 0)
            return -1;
        if (pid == 0) {
            child_safety_net();
            if (routed)
                wait_routed();
            for (unsigned long i = 0; i < n; i++)
                fdr_trace(ses, tick, "t=%d n=%lu", c + 1, i);
            if (routed)
                _exit(0);
            /* Its events are recorded: a child that then hangs (the
             * sanitizer runtime's, at exit) must still have them in the
             * trace; one that hung before (in the runtime's allocator,
             * forked while a parent thread held its lock) has none. */
            char line[32];
            int len = snprintf(line, sizeof line, "rec %ld\n", (long)getpid());
            if (write(1, line, (size_t)len) != len)
                _exit(98);
            exit(0);
        }
    }
    int bad = 0, st;
    pid_t pid;
    while ((pid = wait(&st)) > 0)
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            bad++;
            fprintf(stderr, "child %ld: %s %d\n", (long)pid,
                    WIFEXITED(st) ? "exit" : "signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        }
    return bad;
}

/* brood's second thread: records, then stays while main forks. */
static void *brood_thread(void *arg)
{
    (void)arg;
    for (unsigned long n = 0; n < go_n; n++)
        fdr_trace(ses, tick, "t=%d n=%lu", 100000, n);
    __atomic_store_n(&go_done, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        usleep(1000);
    return NULL;
}

static int brood(int k, unsigned long n)
{
    pthread_t th;
    go_n = n;
    for (unsigned long i = 0; i < n; i++)
        fdr_trace(ses, tick, "t=%d n=%lu", 0, i);
    pthread_create(&th, NULL, brood_thread, NULL);
    while (!__atomic_load_n(&go_done, __ATOMIC_ACQUIRE))
        usleep(100);
    int bad = fork_children(k, n, 0);
    if (bad < 0)
        return 5;
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    printf("done %d\n", bad);
    return bad != 0;
}

static int spawn(const char *n)
{
    unsigned long k = strtoul(n, NULL, 10);
    for (unsigned long i = 0; i < k; i++)
        fdr_trace(ses, tick, "t=%d n=%lu", 0, i);
    char exe[4096];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (l <= 0)
        return 5;
    exe[l] = 0;
    pid_t pid = fork();
    if (pid < 0)
        return 5;
    if (pid == 0) {
        execl(exe, "session-prog", "quick", n, "0", "2", (char *)NULL);
        _exit(6);
    }
    int st1 = 0;
    waitpid(pid, &st1, 0);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' quick %s 0 3 >/dev/null", exe, n);
    int st2 = system(cmd);
    printf("done %d %d\n", st1, st2);
    return st1 != 0 || st2 != 0;
}

static int bounds(const char *kind)
{
    wait_routed();
    for (unsigned long n = 0; n < 2000; n++)
        fdr_trace(ses, tick, "t=%d n=%lu", 0, n);
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    uint64_t claimed = 0;
    while (f && !claimed && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        uint64_t produced;
        uint32_t magic;
        /* A shared mapping that is a ring (ring.h: "FDRB"), memfd or file */
        if (!strstr(line, " rw-s ") || sscanf(line, "%lx-%lx", &lo, &hi) != 2 ||
            hi - lo < 4096 + 4 * 4096)
            continue;
        memcpy(&magic, (char *)lo, 4);
        memcpy(&produced, (char *)lo + 64, 8); /* the writer's line */
        if (magic == 0x46445242 && produced >= 4)
            claimed = fdr_test_overclaim((char *)lo + 4096 + 2 * 4096, 4096, 8,
                                         strcmp(kind, "content") == 0);
    }
    if (f)
        fclose(f);
    printf("claims %llu %s", (unsigned long long)claimed, claimed ? line : "\n");
    fflush(stdout);
    while (getchar() != EOF)
        ;
    return claimed ? 0 : 3;
}

static void *scribble_writer(void *arg)
{
    (void)arg;
    for (unsigned long n = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); n++)
        fdr_trace(ses, tick, "t=%d n=%lu", 0, n);
    return NULL;
}

/* The next mapping in /proc/self/maps (f) whose line names `name`: its
 * start and size; 0 when there is none left. */
static int next_map(FILE *f, const char *name, char **base, size_t *size)
{
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (strstr(line, name) && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
            *base = (char *)lo;
            *size = hi - lo;
            return 1;
        }
    }
    return 0;
}

static int scribble(unsigned rounds, unsigned seed)
{
    wait_routed();
    pthread_t th;
    pthread_create(&th, NULL, scribble_writer, NULL);
    usleep(20000);
    for (unsigned r = 0; r < rounds; r++) {
        FILE *f = fopen("/proc/self/maps", "r");
        char *base;
        size_t size;
        while (next_map(f, "fdrd-ring", &base, &size)) {
            size_t slot = 4096 + (size_t)rand_r(&seed) % ((size - 4096) / 4096) * 4096;
            uint64_t v = (uint64_t)rand_r(&seed) << 33 | (uint64_t)rand_r(&seed);
            switch (rand_r(&seed) % 5) {
            case 0: /* random bytes anywhere past the header page */
                for (int k = 0; k < 64; k++)
                    base[4096 + (size_t)rand_r(&seed) % (size - 4096)] =
                        (char)rand_r(&seed);
                break;
            case 1: /* the ring header's counts (produced, consumed) */
                memcpy(base + (rand_r(&seed) % 2 ? 64 : 128), &v, 8);
                break;
            case 2: /* a packet header: content_size, packet_size, seq */
                memcpy(base + slot + 44 + 8 * (size_t)(rand_r(&seed) % 3), &v, 8);
                break;
            case 3: /* an event length or id inside a packet */
                memcpy(base + slot + 100 + (size_t)rand_r(&seed) % 64, &v, 4);
                break;
            default: /* a packet tail's committed position */
                memcpy(base + slot + 4096 - 8, &v, 8);
                break;
            }
        }
        if (f)
            fclose(f);
        usleep(1000);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    puts("done");
    return 0;
}

static pthread_mutex_t pipe_lock = PTHREAD_MUTEX_INITIALIZER;
static int pipe_ready;
static void *pipe_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    wait_routed();
    for (unsigned long n = 0;; n++) {
        fdr_trace(ses, tick, "t=%d n=%lu", t, n);
        if (n % 100 == 99) {
            char line[64];
            int len = snprintf(line, sizeof line, "%d %lu\n", t, n);
            pthread_mutex_lock(&pipe_lock);
            if (write(1, line, (size_t)len) != len)
                _exit(3);
            if (n == 99 && ++pipe_ready == go_done && write(1, "ready\n", 6) != 6)
                _exit(3);
            pthread_mutex_unlock(&pipe_lock);
            usleep(1000);
        }
    }
    return NULL;
}

static int pipe_mode(int nt, const char *end, unsigned ms)
{
    pthread_t th;
    if (nt < 1 || nt > 16)
        return 2;
    go_done = nt; /* threads whose first block makes "ready" */
    for (int t = 0; t < nt; t++)
        pthread_create(&th, NULL, pipe_thread, (void *)(intptr_t)t);
    wait_routed();
    for (;;) { /* every thread has reported once ("ready") */
        pthread_mutex_lock(&pipe_lock);
        int all = pipe_ready == nt;
        pthread_mutex_unlock(&pipe_lock);
        if (all)
            break;
        usleep(1000);
    }
    usleep(ms * 1000);
    if (strcmp(end, "segv") == 0)
        *(volatile int *)(uintptr_t)0 = 1;
    else if (strcmp(end, "abrt") == 0)
        abort();
    else if (strcmp(end, "exit") == 0)
        _exit(0);
    for (;;)
        pause();
}

/* Thread t records go_n ses:tick (t, n) and counts itself done. */
static void tick_done(int t)
{
    for (unsigned long n = 0; n < go_n; n++)
        fdr_trace(ses, tick, "t=%d n=%lu", t, n);
    __atomic_fetch_add(&go_done, 1, __ATOMIC_RELEASE);
}

/* "grow": idle threads record once (tick_done, go_n 1) and wait. */
static void *grow_idle(void *arg)
{
    tick_done((int)(intptr_t)arg);
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        usleep(1000);
    return NULL;
}

static int grow(int idle, unsigned long n)
{
    wait_routed();
    pthread_t th[64];
    int made = 0;
    go_n = 1;
    while (made < idle && made < 64 &&
           pthread_create(&th[made], NULL, grow_idle, (void *)(intptr_t)(made + 1)) == 0)
        made++;
    while (__atomic_load_n(&go_done, __ATOMIC_ACQUIRE) < made)
        usleep(1000);
    printf("%s\n", made == idle ? "idle" : "no threads");
    fflush(stdout);
    char line[64];
    if (fgets(line, sizeof line, stdin)) {
        for (unsigned long i = 0; i < n; i++)
            fdr_trace(ses, tick, "t=%d n=%lu", 0, i);
        puts("done");
        fflush(stdout);
    }
    while (fgets(line, sizeof line, stdin))
        ;
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    while (made)
        pthread_join(th[--made], NULL);
    return 0;
}

static pthread_barrier_t many_end;
static void *many_thread(void *arg)
{
    tick_done((int)(intptr_t)arg);
    pthread_barrier_wait(&many_end);
    return NULL;
}

/* "waiters": threads that end while waiting for their ring, after
 * threads that held one (test-fdr-daemon-memory.py, fdrd stopped). */
static int waiters_end;
static int waiters_only = -1; /* "exit K": the one thread to end now */
static void *waiter_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    tick_done(t);
    while (__atomic_load_n(&waiters_end, __ATOMIC_ACQUIRE) <= t &&
           __atomic_load_n(&waiters_only, __ATOMIC_ACQUIRE) != t)
        usleep(1000);
    return NULL;
}

static int waiters(int nt, unsigned long n)
{
    pthread_t th[16];
    char line[64];
    if (nt < 1 || nt > 16)
        return 2;
    go_n = n;
    wait_routed();
    if (!fgets(line, sizeof line, stdin) || strncmp(line, "go", 2) != 0)
        return 4;
    for (int t = 0; t < nt; t++) {
        if (pthread_create(&th[t], NULL, waiter_thread, (void *)(intptr_t)t))
            return 3;
        while (__atomic_load_n(&go_done, __ATOMIC_ACQUIRE) <= t)
            usleep(1000);
    }
    puts("recorded");
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin))
        return 4;
    if (strncmp(line, "exit ", 5) == 0) {
        int k = atoi(line + 5);
        for (int t = nt - 1; t >= k && t >= 0; t--) {
            __atomic_store_n(&waiters_only, t, __ATOMIC_RELEASE);
            pthread_join(th[t], NULL);
        }
        puts("ended");
        fflush(stdout);
        exit(0);
    }
    if (strncmp(line, "end", 3) != 0)
        return 4;
    for (int t = 0; t < nt; t++) {
        __atomic_store_n(&waiters_end, t + 1, __ATOMIC_RELEASE);
        pthread_join(th[t], NULL);
    }
    puts("ended");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin))
        ;
    return 0;
}

/* "shrink": a program that shrinks its own ring files under fdrd. */
static int shrink(unsigned long n)
{
    wait_routed();
    for (unsigned long i = 0; i < n; i++)
        fdr_trace(ses, tick, "t=%d n=%lu", 0, i);
    int k = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char path[300], target[4096];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = 0;
        int fd = atoi(e->d_name);
        uint32_t magic = 0;
        struct stat st;
        if (strncmp(target, "/memfd:", 7) != 0 && fstat(fd, &st) == 0 &&
            S_ISREG(st.st_mode) && pread(fd, &magic, sizeof magic, 0) == sizeof magic &&
            magic == 0x46445242u /* "FDRB": a ring */ && ftruncate(fd, 0) == 0)
            k++;
    }
    if (d)
        closedir(d);
    printf("shrunk %d\n", k);
    fflush(stdout);
    _exit(0);
}

/* "soak": THREADS threads record N ses:tick each, then END. */
static void *soak_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (unsigned long n = 0; n < go_n; n++)
        fdr_trace(ses, tick, "t=%d n=%lu", t, n);
    return NULL;
}

static int *volatile soak_null;

static int soak(int nt, unsigned long n, const char *end)
{
    pthread_t th[16];
    if (nt < 1 || nt > 16)
        return 2;
    go_n = n;
    wait_routed();
    for (int t = 0; t < nt; t++)
        pthread_create(&th[t], NULL, soak_thread, (void *)(intptr_t)t);
    for (int t = 0; t < nt; t++)
        pthread_join(th[t], NULL);
    if (strcmp(end, "segv") == 0)
        *soak_null = 1; /* a real fault, not raise() */
    if (strcmp(end, "abrt") == 0)
        abort();
    if (strcmp(end, "late") == 0) {
        /* The counts its threads lost to a route no ring held (common/
         * ring.h, route_lost: 32 entries of route, tid, count, time from
         * byte 3008 of an own ring), each given a time past any clock;
         * then SIGKILL. */
        FILE *f = fopen("/proc/self/maps", "r");
        char *base;
        size_t size;
        int k = 0;
        while (next_map(f, "fdr-buffer", &base, &size))
            for (int i = 0; i < 32 && size >= 4096; i++) {
                uint64_t *e = (uint64_t *)(void *)(base + 3008 + 24 * i);
                if (e[1]) {
                    e[2] = ~0ull;
                    k++;
                }
            }
        if (f)
            fclose(f);
        printf("late %d\n", k);
        fflush(stdout);
        raise(SIGKILL);
    }
    if (strcmp(end, "fork") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(60);
            wait_routed();
            for (unsigned long i = 0; i < n; i++)
                fdr_trace(ses, tick, "t=%d n=%lu", 100, i);
            exit(0);
        }
        printf("child %ld\n", (long)pid);
        fflush(stdout);
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
            WEXITSTATUS(st) != 0)
            return 5;
    }
    if (strcmp(end, "hang") == 0) {
        puts("done");
        fflush(stdout);
        for (;;)
            pause();
    }
    return 0;
}

/* "many" (usage above). With "flush", each fdr_flush() pauses every
 * writer: the events that come then are lost, and must be counted in
 * every trace that takes them. */
static int many(int nt, unsigned long n, const char *how)
{
    static pthread_t th[4000];
    char line[64];
    if (nt < 1 || nt > 4000)
        return 2;
    if (strcmp(how, "go") == 0 &&
        (!fgets(line, sizeof line, stdin) || strncmp(line, "go", 2) != 0))
        return 4;
    go_n = n;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 256 << 10);
    pthread_barrier_init(&many_end, NULL, (unsigned)nt + 1);
    for (int t = 0; t < nt; t++)
        if (pthread_create(&th[t], &a, many_thread, (void *)(intptr_t)t))
            return 3;
    int flush = strcmp(how, "flush") == 0;
    while (__atomic_load_n(&go_done, __ATOMIC_ACQUIRE) < nt) {
        if (!flush)
            usleep(1000);
        else if (fdr_flush() < 0)
            return 5;
    }
    puts("done");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin))
        ;
    pthread_barrier_wait(&many_end);
    for (int t = 0; t < nt; t++)
        pthread_join(th[t], NULL);
    return 0;
}

static void *go_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
    for (unsigned long n = 0; n < go_n; n++) {
        fdr_trace(ses, tick, "t=%d n=%lu", t, n);
        if (n % 10 == 0)
            fdr_trace(ses, rare, "t=%d n=%lu", t, n);
        if (n % 7 == 0)
            fdr_trace_category(5, ses, hot, "t=%d n=%lu", t, n);
    }
    __atomic_fetch_add(&go_done, 1, __ATOMIC_RELEASE);
    while (go_hold) /* its packet stays open: to be killed so */
        pause();
    return NULL;
}

static void *spin(void *arg)
{
    int t = (int)(intptr_t)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        fdr_trace(ses, tick, "t=%d n=%llu", t, (unsigned long long)counts[t]);
        __atomic_store_n(&counts[t], counts[t] + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void *steer_thread(void *arg)
{
    (void)arg;
    struct timespec nap = {0, 100 * 1000};
    for (long n = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); n++) {
        fdr_trace(ses, tick, "t=%d n=%ld", (int)FDR_TUNABLE_RANGE(gain, 5, 0, 100), n);
        nanosleep(&nap, NULL);
    }
    return NULL;
}

static int steer(void)
{
    char line[64];
    pthread_t th;
    pthread_create(&th, NULL, steer_thread, NULL);
    puts("ready");
    fflush(stdout);
    for (long n = 1; fgets(line, sizeof line, stdin); n++) {
        fdr_trace(ses, mark, "t=%d n=%ld", (int)FDR_TUNABLE_RANGE(gain, 5, 0, 100), n);
        printf("marked %ld\n", n);
        fflush(stdout);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    char line[64];
    if (argc == 2 && strcmp(argv[1], "start") == 0) {
        puts("main");
        fflush(stdout);
        fdr_trace(ses, start, "argc=%d", argc);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "hold") == 0) {
        fdr_provider_desc_t d =
            FDR_PROVIDER_DESC_INIT(argv[2], 4, (uint32_t)strtoul(argv[3], NULL, 0));
        d.sizeof_long = (uint32_t)atoi(argv[4]);
        fdr_provider_t *p;
        if (fdr_provider_register(&d, &p) != 0)
            return 3;
        uint32_t v = 42;
        fdr_raw_event(p, 1, &v, sizeof v);
        puts("ready");
        fflush(stdout);
        while (fgets(line, sizeof line, stdin))
            if (strncmp(line, "unregister", 10) == 0) {
                fdr_provider_unregister(p);
                puts("unregistered");
                fflush(stdout);
            }
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "spin") == 0) {
        pthread_t th[2];
        for (int t = 0; t < 2; t++)
            pthread_create(&th[t], NULL, spin, (void *)(intptr_t)t);
        while (!__atomic_load_n(&counts[0], __ATOMIC_ACQUIRE) ||
               !__atomic_load_n(&counts[1], __ATOMIC_ACQUIRE))
            ;
        puts("ready");
        fflush(stdout);
        while (fgets(line, sizeof line, stdin))
            ;
        __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
        printf("events %llu\n", (unsigned long long)(counts[0] + counts[1]));
        return 0;
    }
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "go") == 0) {
        int nt = atoi(argv[2]);
        go_n = strtoul(argv[3], NULL, 10);
        pthread_t th[16];
        if (nt < 1 || nt > 16)
            return 2;
        go_hold = argc == 5;
        for (int t = 0; t < nt; t++)
            pthread_create(&th[t], NULL, go_thread, (void *)(intptr_t)t);
        if (!fgets(line, sizeof line, stdin) || strncmp(line, "go", 2) != 0)
            return 4;
        __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
        if (go_hold)
            while (__atomic_load_n(&go_done, __ATOMIC_ACQUIRE) < nt)
                usleep(1000);
        else
            for (int t = 0; t < nt; t++)
                pthread_join(th[t], NULL);
        puts("done");
        fflush(stdout);
        if (argc == 5)
            for (;;)
                pause();
        while (fgets(line, sizeof line, stdin))
            ;
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "early") == 0) {
        int nt = atoi(argv[2]);
        go_n = strtoul(argv[3], NULL, 10);
        pthread_t th[16];
        if (nt < 1 || nt > 16)
            return 2;
        for (int t = 0; t < nt; t++)
            pthread_create(&th[t], NULL, early_thread, (void *)(intptr_t)t);
        while (__atomic_load_n(&go_done, __ATOMIC_ACQUIRE) < nt)
            usleep(1000);
        puts("recorded");
        fflush(stdout);
        if (!fgets(line, sizeof line, stdin) || strncmp(line, "more", 4) != 0)
            return 4;
        __atomic_store_n(&go_more, 1, __ATOMIC_RELEASE);
        for (int t = 0; t < nt; t++)
            pthread_join(th[t], NULL);
        puts("done");
        fflush(stdout);
        while (fgets(line, sizeof line, stdin))
            ;
        return 0;
    }
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "quick") == 0) {
        unsigned long n = strtoul(argv[2], NULL, 10);
        int t = argc == 5 ? atoi(argv[4]) : 0;
        for (unsigned long i = 0; i < n; i++)
            fdr_trace(ses, tick, "t=%d n=%lu", t, i);
        puts("recorded");
        fflush(stdout);
        unsigned long ms = strtoul(argv[3], NULL, 10);
        struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "flush") == 0) {
        unsigned long n = strtoul(argv[2], NULL, 10);
        int t = atoi(argv[3]);
        for (unsigned long i = 0; i < 2 * n; i++) {
            if (i == n && fdr_flush() < 0)
                return 5;
            fdr_trace(ses, tick, "t=%d n=%lu", t, i);
        }
        puts("flushed");
        fflush(stdout);
        while (fgets(line, sizeof line, stdin))
            ;
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "die") == 0) {
        unsigned long n = strtoul(argv[2], NULL, 10);
        const char *how = argv[3];
        int t = atoi(argv[4]);
        if (strcmp(how, "exec") == 0) {
            pid_t pid = fork();
            if (pid == 0) {
                for (unsigned long i = 0; i < n; i++)
                    fdr_trace(ses, tick, "t=%d n=%lu", t, i);
                execl("/bin/true", "true", (char *)NULL);
                _exit(6);
            }
            int st = 0;
            printf("child %ld\n", (long)pid);
            fflush(stdout);
            waitpid(pid, &st, 0);
            _exit(pid < 0 || st != 0);
        }
        for (unsigned long i = 0; i < n; i++) {
            if (i % 10 == 0 && i < 100) /* no trace takes it: fdrd must leave it out */
                fdr_trace(ses, rare, "t=%d n=%lu", t, i);
            fdr_trace(ses, tick, "t=%d n=%lu", t, i);
            if (write(1, ".", 1) != 1)
                _exit(7);
        }
        if (strcmp(how, "two") == 0) {
            pthread_t th;
            if (pthread_create(&th, NULL, die_second, &(struct die_arg){n, t + 100000}) ||
                pthread_join(th, NULL))
                _exit(8);
            raise(SIGKILL);
        }
        if (strcmp(how, "threads") == 0) {
            static struct die_arg a[DIE_THREADS];
            die_start(a, DIE_THREADS, n, t, die_many);
            pthread_barrier_wait(&die_all);
            raise(SIGKILL);
        }
        if (strcmp(how, "late") == 0) {
            static struct die_arg a[DIE_LATE + 1];
            pthread_t th;
            char line[16];
            pthread_barrier_init(&die_go, NULL, DIE_LATE + 1);
            die_start(a, DIE_LATE, n, t, die_late);
            pthread_barrier_wait(&die_all);
            if (write(1, "r", 1) != 1 || !fgets(line, sizeof line, stdin))
                _exit(7);
            for (unsigned long i = n; i < n + 20000; i++)
                fdr_trace(ses, tick, "t=%d n=%lu", t, i);
            pthread_barrier_wait(&die_go);
            pthread_barrier_wait(&die_all);
            a[DIE_LATE] = (struct die_arg){n, t + 100000 * (DIE_LATE + 1)};
            if (pthread_create(&th, NULL, die_second, &a[DIE_LATE]) ||
                pthread_join(th, NULL))
                _exit(8);
            raise(SIGKILL);
        }
        if (strcmp(how, "kill") == 0)
            raise(SIGKILL);
        else if (strcmp(how, "segv") == 0)
            *(volatile int *)(uintptr_t)0 = 1;
        else if (strcmp(how, "wait") == 0)
            pause();
        else if (strcmp(how, "scribble") == 0) {
            /* Its own rings, written over (seed T), then SIGKILL: fdrd
             * copies from them as untrusted input. */
            unsigned seed = (unsigned)t;
            FILE *f = fopen("/proc/self/maps", "r");
            char *base;
            size_t size;
            while (next_map(f, "fdr-buffer", &base, &size)) {
                for (int k = 0; k < 16; k++)
                    base[4096 + (size_t)rand_r(&seed) % 8192 % (size - 4096)] =
                        (char)rand_r(&seed);
                uint64_t v = (uint64_t)rand_r(&seed) << 33 | (uint64_t)rand_r(&seed);
                if (rand_r(&seed) % 2)
                    memcpy(base + 64, &v, 8); /* produced */
                /* Counts lost to a route no ring held (common/ring.h,
                 * route_lost: 32 entries of route, tid, count, time from
                 * byte 3008): routes 0-3 (its own among them), any count,
                 * any time (fdrd takes none past its own clock). */
                for (int k = rand_r(&seed) % 3; k > 0; k--) {
                    uint32_t e[6];
                    for (int j = 0; j < 6; j++)
                        e[j] = (uint32_t)rand_r(&seed) * 2654435761u;
                    e[0] %= 4;
                    memcpy(base + 3008 + 24 * (size_t)(rand_r(&seed) % 32), e, sizeof e);
                }
            }
            if (f)
                fclose(f);
            raise(SIGKILL);
        }
        _exit(0);
    }
    if (argc == 4 && strcmp(argv[1], "brood") == 0)
        return brood(atoi(argv[2]), strtoul(argv[3], NULL, 10));
    if (argc == 3 && strcmp(argv[1], "spawn") == 0)
        return spawn(argv[2]);
    if (argc == 3 && strcmp(argv[1], "bounds") == 0)
        return bounds(argv[2]);
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "scribble") == 0)
        return scribble((unsigned)atoi(argv[2]),
                        argc == 4 ? (unsigned)atoi(argv[3]) : (unsigned)getpid());
    if (argc == 3 && strcmp(argv[1], "exec") == 0) {
        unsigned long n = strtoul(argv[2], NULL, 10);
        wait_routed();
        for (unsigned long i = 0; i < n; i++)
            fdr_trace(ses, tick, "t=%d n=%lu", 0, i);
        child_safety_net_load();
        pid_t pid = fork();
        if (pid < 0)
            return 5;
        if (pid == 0) {
            child_safety_net();
            wait_routed();
            for (unsigned long i = 0; i < n; i++)
                fdr_trace(ses, tick, "t=%d n=%lu", 1, i);
            execl("/proc/self/exe", "session-prog", "forks", "0", argv[2], (char *)NULL);
            _exit(6);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        printf("done %d\n", st);
        return st != 0;
    }
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "forks") == 0) {
        int k = atoi(argv[2]);
        unsigned long n = strtoul(argv[3], NULL, 10);
        int nt = argc == 5 ? atoi(argv[4]) : 0;
        pthread_t more[16];
        if (nt < 0 || nt > 16)
            return 2;
        wait_routed();
        for (unsigned long i = 0; i < n; i++)
            fdr_trace(ses, tick, "t=%d n=%lu", 0, i);
        go_n = n;
        for (int i = 0; i < nt; i++)
            pthread_create(&more[i], NULL, forks_thread, (void *)(intptr_t)(100000 + i));
        while (__atomic_load_n(&go_done, __ATOMIC_ACQUIRE) < nt)
            usleep(100);
        int bad = fork_children(k, n, 1);
        if (bad < 0)
            return 5;
        for (int i = 0; i < nt; i++)
            pthread_join(more[i], NULL);
        printf("done %d\n", bad);
        return bad != 0;
    }
    if ((argc == 3 || argc == 4 || argc == 5) &&
        (strcmp(argv[1], "pace") == 0 || strcmp(argv[1], "resume") == 0)) {
        pace_routed = argv[1][0] == 'r';
        unsigned long max = argc == 5 ? strtoul(argv[4], NULL, 10) : 0;
        int nt = atoi(argv[2]), burst = argc >= 4     ? atoi(argv[3])
                                        : pace_routed ? 10
                                                      : 100;
        static struct pace ps[16];
        if (nt < 1 || nt > 16 || burst < 1)
            return 2;
        uint64_t t0 = mono_ns();
        for (int t = 0; t < nt; t++) {
            ps[t].t = t;
            ps[t].burst = burst;
            ps[t].max = max;
            pthread_create(&ps[t].th, NULL, pace_thread, &ps[t]);
        }
        if (pace_routed)
            wait_routed();
        puts("ready");
        fflush(stdout);
        while (fgets(line, sizeof line, stdin))
            ;
        __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
        uint64_t total = 0, maxb = 0;
        for (int t = 0; t < nt; t++) {
            pthread_join(ps[t].th, NULL);
            printf("events %d %lu", t, ps[t].n);
            printf(pace_routed ? " %ld\n" : "\n", ps[t].tid);
            total += ps[t].n;
            maxb = ps[t].maxburst_ns > maxb ? ps[t].maxburst_ns : maxb;
        }
        printf("rate %.0f\nmaxburst_us %llu\n", total * 1e9 / (double)(mono_ns() - t0),
               (unsigned long long)(maxb / 1000));
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "steer") == 0)
        return steer();
    if ((argc == 3 || (argc >= 4 && strcmp(argv[3], "tick") == 0)) &&
        (argc <= 4 || (argc == 5 && strcmp(argv[4], "idle") == 0)) &&
        strcmp(argv[1], "storm") == 0) {
        int nt = atoi(argv[2]);
        pthread_t th[16];
        if (nt < 1 || nt > 16)
            return 2;
        storm_tick = argc >= 4;
        if (argc == 5)
            fdr_trace(ses, tick, "t=%d n=%d", 2, 0);
        for (int t = 0; t < nt; t++)
            pthread_create(&th[t], NULL, storm, (void *)(intptr_t)t);
        puts("ready");
        fflush(stdout);
        while (fgets(line, sizeof line, stdin))
            ;
        __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
        for (int t = 0; t < nt; t++)
            pthread_join(th[t], NULL);
        for (int t = 0; t < nt && storm_tick; t++)
            printf("%d %lu\n", t, storm_count[t]);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "pipe") == 0)
        return pipe_mode(atoi(argv[2]), argv[3], (unsigned)atoi(argv[4]));
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "many") == 0)
        return many(atoi(argv[2]), strtoul(argv[3], NULL, 10), argc == 5 ? argv[4] : "");
    if (argc == 4 && strcmp(argv[1], "grow") == 0)
        return grow(atoi(argv[2]), strtoul(argv[3], NULL, 10));
    if (argc == 4 && strcmp(argv[1], "waiters") == 0)
        return waiters(atoi(argv[2]), strtoul(argv[3], NULL, 10));
    if (argc == 3 && strcmp(argv[1], "shrink") == 0)
        return shrink(strtoul(argv[2], NULL, 10));
    if (argc == 5 && strcmp(argv[1], "soak") == 0)
        return soak(atoi(argv[2]), strtoul(argv[3], NULL, 10), argv[4]);
    fprintf(
        stderr,
        "usage: session-prog hold NAME CHECKSUM LONG_SIZE | spin | start | "
        "go THREADS N [kill] | storm THREADS [tick [idle]] | many THREADS N [go|flush] |\n"
        "pipe THREADS kill|segv|abrt|exit MS | forks K N [T] | exec N |\n"
        "scribble ROUNDS [SEED] | bounds packet|content | pace THREADS [BURST [MAX]] |\n"
        "resume THREADS | shrink N | waiters THREADS N | grow IDLE N |\n"
        "soak THREADS N END | quick N MS [T] | brood K N | spawn N\n");
    return 2;
}
