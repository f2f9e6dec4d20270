/* SPDX-License-Identifier: MIT */
/* scope-prog.c - the program that `fdr scope` watches and steers in the
 * scope's tests (tests/scope/test-*.mjs) and by hand.
 *
 *   scope-prog [--seconds S] [--period-us U] [--threads T] [--level-max K]
 *              [--quiet] [--report FILE]
 *       Every U microseconds (default 2000; a late loop waits U/2 at
 *       least: one thread's loops are never closer than that) each of T
 *       threads (default 1; thread i, from 0) records, in this order:
 *         scope:level  value=%d        value = i * 1000000 + n, n = 1, 2, ...
 *                                      (the loop count of that thread), in
 *                                      the first K loops only with --level-max
 *         scope:tick   n=%lu mono=%lu  thread 0 only: n, and the
 *                                      CLOCK_MONOTONIC time in ns just before
 *                                      the event (the switch-off test)
 *         scope:gain   value=%d        the tunable gain as read this loop,
 *                                      FDR_TUNABLE_RANGE(gain, 5, 0, 100)
 *         scope:wave   x=%f            amp * sin(n / 25.0), amp the tunable
 *                                      FDR_TUNABLE_DOUBLE_RANGE(amp, 1, 0, 10),
 *                                      plus the tunable FDR_TUNABLE(offset, 0)
 *         scope:note   text=%s         every 100th loop, a string field
 *         scope:temp   t__degC=%f      thread 0, every 10th loop: 20 + (n % 100)
 *                                      / 10, a field with a unit (docs/api.md)
 *       Thread 0 is the program's main thread; thread i >= 1 is named
 *       "worker-i".
 *       With --quiet, one more thread (named "quiet") waits for SIGUSR2,
 *       then records once
 *         scope:start  value=%d        value = 1
 *       and sleeps until the end: a thread that records once and sleeps,
 *       whose event must still reach a live reader.
 *   scope-prog --rate N [--seconds S] [--report FILE]
 *       One thread records scope:load value=%d (a sawtooth 0..999) N times
 *       a second, paced by catching up: at each moment it has recorded
 *       N x (elapsed time) events, in bursts, sleeping when ahead. The
 *       achieved rate is the program's own measure: a program slowed down
 *       by its observer falls behind and stays behind.
 *   scope-prog --square P --count E [--rate N] [--chunks]
 *       One thread records E events scope:square value=%d, a square wave:
 *       value = ((n + P / 20) / P) % 2 for the n-th event (from 0), an
 *       edge every P events, at N events a second (default 100000) in
 *       chunks of P / 10 and never catching up (a late chunk does not make
 *       a burst: edges are never closer than P / N seconds); an edge falls
 *       in the middle of a chunk, its two sides microseconds apart. With
 *       --chunks, after each chunk
 *         scope:chunk  n=%d            n = the chunk's number, from 0
 *       (a second series whose times are not the wave's). Then it exits
 *       (the replay's fidelity test).
 *   scope-prog --spans N
 *       One thread records N spans scope:op (fdr/span.h) of known, varied
 *       lengths: span i sleeps (i % 7 + 1) x 30 us, or x 300 us when i % 3
 *       is 0. After the first N / 2 it waits for SIGUSR2 (the histogram
 *       test sees the page show them, then lets the rest come), then
 *       exits.
 *
 * SIGUSR1 starts the measure again (what the report counts): events, time
 * and CPU from that moment (the load test sends it once the browsers watch).
 *
 * Both run until SIGTERM or SIGINT, or for S seconds (0: no limit, the
 * default); then they exit 0 through exit() (the trace of FDR_OUTPUT is
 * written whole) after writing, to FILE (default: stdout), one line:
 *     events E seconds S rate R cpu_ns_per_event C max_gap_us G total T
 * E the events recorded (scope:load, or scope:level of thread 0) since the
 * measure started, T since the program started, R = E / S,
 * C the process's CPU time (user + system) per event, G the longest time
 * between two consecutive events of thread 0 (a stalled program shows). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <fdr/fdr.h>

/* set by signal handlers, read by every thread: atomics (lock-free ints
 * are async-signal-safe) */
static int stop, restart;
#define STOPPED() __atomic_load_n(&stop, __ATOMIC_RELAXED)
static long period_us = 2000;
static uint64_t level_max;
static uint64_t rate, square, count, spans;
static uint64_t events0, max_gap0;
static int quiet, quiet_go, chunks;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
    (void)sig;
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
}

static void on_usr1(int sig)
{
    (void)sig;
    __atomic_store_n(&restart, 1, __ATOMIC_RELAXED);
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !STOPPED())
        ;
}

static uint64_t measure_t0, measure_n0;
static struct rusage measure_ru0;

static void measure_start(uint64_t n)
{
    getrusage(RUSAGE_SELF, &measure_ru0);
    measure_t0 = mono_ns();
    measure_n0 = n;
}

static void *watch_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint64_t next = mono_ns(), last = 0, gap = 0;
    if (t > 0) {
        char name[16];
        snprintf(name, sizeof name, "worker-%d", t % 64); /* t < 64 */
        pthread_setname_np(pthread_self(), name);
    }
    static const char *const notes[] = {"hello", "scope with spaces", "h\xc3\xa9llo"};
    for (uint64_t n = 1; !STOPPED(); n++) {
        int value = t * 1000000 + (int)n;
        if (!level_max || n <= level_max)
            fdr_trace(scope, level, "value=%d", value);
        uint64_t now = mono_ns();
        if (t == 0) {
            fdr_trace(scope, tick, "n=%lu mono=%lu", (unsigned long)n,
                      (unsigned long)now);
            if (last && now - last > gap)
                gap = now - last;
            last = now;
            events0 = n;
            if (__atomic_exchange_n(&restart, 0, __ATOMIC_RELAXED)) {
                measure_start(n);
                gap = 0;
            }
        }
        int gain = (int)FDR_TUNABLE_RANGE(gain, 5, 0, 100);
        fdr_trace(scope, gain, "value=%d", gain);
        double amp = FDR_TUNABLE_DOUBLE_RANGE(amp, 1.0, 0.0, 10.0);
        double x = amp * sin((double)n / 25.0) + (double)FDR_TUNABLE(offset, 0);
        fdr_trace(scope, wave, "x=%f", x);
        if (n % 100 == 0)
            fdr_trace(scope, note, "text=%s", notes[(n / 100) % 3]);
        if (t == 0 && n % 10 == 0)
            fdr_trace(scope, temp, "t__degC=%f", 20.0 + (double)(n % 100) / 10.0);
        /* the next loop at the next period, and never sooner than half a
         * period from now: a late loop does not make a burst (the scope's
         * tests rely on events of one thread being that far apart) */
        next += (uint64_t)period_us * 1000u;
        now = mono_ns();
        if (next < now + (uint64_t)period_us * 500u)
            next = now + (uint64_t)period_us * 500u;
        sleep_ns(next - now);
    }
    if (t == 0)
        max_gap0 = gap;
    return NULL;
}

static void on_usr2(int sig)
{
    (void)sig;
    __atomic_store_n(&quiet_go, 1, __ATOMIC_RELAXED);
}

/* Records scope:start once, at SIGUSR2, then sleeps until the program
 * stops. */
static void *quiet_thread(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "quiet");
    int done = 0;
    while (!STOPPED()) {
        if (!done && __atomic_load_n(&quiet_go, __ATOMIC_RELAXED)) {
            fdr_trace(scope, start, "value=%d", 1);
            done = 1;
        }
        sleep_ns(10000000);
    }
    return NULL;
}

/* Catch-up pacing: records until the count due at this moment is reached
 * (bursts of at most 4096 between two reads of the clock), then sleeps
 * 50 us when ahead. */
static void rate_loop(void)
{
    uint64_t t0 = mono_ns(), n = 0, last = t0, gap = 0;
    while (!STOPPED()) {
        if (__atomic_exchange_n(&restart, 0, __ATOMIC_RELAXED)) {
            measure_start(n);
            gap = 0;
            last = mono_ns();
        }
        uint64_t now = mono_ns();
        if (now - last > gap)
            gap = now - last;
        last = now;
        uint64_t due = (uint64_t)((double)(now - t0) * (double)rate / 1e9);
        if (n >= due) {
            sleep_ns(50000);
            continue;
        }
        uint64_t end = due - n > 4096 ? n + 4096 : due;
        for (; n < end; n++)
            fdr_trace(scope, load, "value=%d", (int)(n % 1000));
    }
    events0 = n;
    max_gap0 = gap;
}

/* The square wave of --square: chunks of P / 10 events, each chunk at
 * least its share of a second after the previous one. */
static void square_loop(void)
{
    uint64_t chunk = square / 10 ? square / 10 : 1, next = mono_ns();
    uint64_t per = rate ? rate : 100000;
    for (uint64_t n = 0; n < count && !STOPPED();) {
        for (uint64_t end = n + chunk; n < end && n < count; n++)
            fdr_trace(scope, square, "value=%d", (int)(((n + square / 20) / square) % 2));
        if (chunks)
            fdr_trace(scope, chunk, "n=%d", (int)((n - 1) / chunk));
        next += chunk * 1000000000u / per;
        uint64_t now = mono_ns();
        if (next < now)
            next = now;
        sleep_ns(next - now);
    }
    events0 = count;
}

/* The spans of --spans. */
static void spans_loop(void)
{
    for (uint64_t i = 0; i < spans && !STOPPED(); i++) {
        if (i == spans / 2)
            while (!__atomic_load_n(&quiet_go, __ATOMIC_RELAXED) && !STOPPED())
                sleep_ns(10000000);
        fdr_span_begin(scope, op, "i=%d", (int)i);
        sleep_ns((i % 7 + 1) * (i % 3 ? 30000u : 300000u));
        fdr_span_end(scope, op);
    }
    events0 = spans;
}

static void usage(void)
{
    fprintf(stderr, "usage: scope-prog [--seconds S] [--period-us U] [--threads T] "
                    "[--level-max K] [--rate N] [--square P --count E [--chunks]] "
                    "[--spans N] [--quiet] "
                    "[--report FILE]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    double seconds = 0;
    int threads = 1;
    const char *report = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
            continue;
        }
        if (!strcmp(argv[i], "--chunks")) {
            chunks = 1;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--period-us"))
            period_us = atol(argv[++i]);
        else if (!strcmp(argv[i], "--threads"))
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rate"))
            rate = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--square"))
            square = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--spans"))
            spans = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--count"))
            count = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--level-max"))
            level_max = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--report"))
            report = argv[++i];
        else
            usage();
    }
    if (threads < 1 || threads > 64 || period_us < 1 || seconds < 0)
        usage();

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    if (seconds > 0) {
        /* a timer thread would be one more recording thread: alarm() in
         * whole seconds is too coarse, so a POSIX timer signalling us */
        timer_t tm;
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_SIGNAL;
        sev.sigev_signo = SIGTERM;
        struct itimerspec its;
        memset(&its, 0, sizeof its);
        its.it_value.tv_sec = (time_t)seconds;
        its.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
        if (timer_create(CLOCK_MONOTONIC, &sev, &tm) != 0 ||
            timer_settime(tm, 0, &its, NULL))
            return perror("scope-prog: timer"), 1;
    }

    struct sigaction su;
    memset(&su, 0, sizeof su);
    su.sa_handler = on_usr1;
    sigaction(SIGUSR1, &su, NULL);
    su.sa_handler = on_usr2;
    sigaction(SIGUSR2, &su, NULL);
    measure_start(0);
    pthread_t qt;
    if (quiet && pthread_create(&qt, NULL, quiet_thread, NULL))
        return perror("scope-prog: pthread_create"), 1;
    if (spans) {
        spans_loop();
    } else if (square) {
        square_loop();
    } else if (rate) {
        rate_loop();
    } else {
        pthread_t tids[64];
        for (int i = 1; i < threads; i++)
            if (pthread_create(&tids[i], NULL, watch_thread, (void *)(intptr_t)i))
                return perror("scope-prog: pthread_create"), 1;
        watch_thread((void *)0);
        for (int i = 1; i < threads; i++)
            pthread_join(tids[i], NULL);
    }
    if (quiet)
        pthread_join(qt, NULL);
    uint64_t t1 = mono_ns(), t0 = measure_t0;
    struct rusage ru1, ru0 = measure_ru0;
    uint64_t total = events0;
    events0 -= measure_n0;
    getrusage(RUSAGE_SELF, &ru1);
    double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec +
                          ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) *
                     1e9 +
                 (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec +
                          ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) *
                     1e3;
    double secs = (double)(t1 - t0) / 1e9;
    FILE *out = report ? fopen(report, "w") : stdout;
    if (!out)
        return perror(report), 1;
    fprintf(out,
            "events %llu seconds %.6f rate %.1f cpu_ns_per_event %.1f max_gap_us %.1f "
            "total %llu\n",
            (unsigned long long)events0, secs, (double)events0 / secs,
            events0 ? cpu / (double)events0 : 0.0, (double)max_gap0 / 1e3,
            (unsigned long long)total);
    if (report)
        fclose(out);
    else
        fflush(out);
    return 0;
}
