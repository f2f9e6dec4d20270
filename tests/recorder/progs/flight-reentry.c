/* SPDX-License-Identifier: MIT */
/* flight-reentry.c - events recorded from a 10 kHz timer signal handler
 * while the main thread records, driven by tests/test-flight-reentry.py.
 *
 *     flight-reentry SECONDS
 *
 * The main thread records main:ev seq=<n> neg=<-n> s=<"m" n> pad=<240 x>
 * every few us;
 * SIGALRM (setitimer, 100 us) records sig:ev seq=<k> neg=<-k> s=<"s" k>
 * from its handler (for SECONDS, and until the timer fired 2,000 times,
 * at most 60 s). A handler that interrupts main inside an event has its
 * own event counted as discarded (nested); every other event must be
 * recorded intact. At the end the timer stops and the program prints how
 * many events each side emitted: "emitted <main> <sig>". */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <fdr/fdr.h>

static volatile sig_atomic_t sig_count;

static void put_num(char *out, char c, unsigned long v)
{
    char tmp[24];
    int n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while (v /= 10);
    *out++ = c;
    while (n)
        *out++ = tmp[--n];
    *out = 0;
}

static void on_alarm(int sig)
{
    (void)sig;
    unsigned long k = (unsigned long)sig_count;
    char s[32];
    put_num(s, 's', k);
    fdr_trace(sig, ev, "seq=%lu neg=%ld s=%s", k, -(long)k, s);
    sig_count = (sig_atomic_t)(k + 1);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    /* An event is async-signal-safe in a thread that has its ring
     * (docs/api.md): a timer that fired before main's first event made
     * the handler create main's ring (calloc, a lock) inside the signal
     * (TSan at load: signal-unsafe call). */
    if (!fdr_thread_self())
        return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 100}, {0, 100}}; /* 10 kHz */
    setitimer(ITIMER_REAL, &it, NULL);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long n = 0;
    char s[32], pad[241];
    memset(pad, 'x', 240);
    pad[240] = 0;
    for (;;) {
        put_num(s, 'm', n);
        /* the long pad makes the event last longer, so that the timer
         * often interrupts it */
        fdr_trace(main, ev, "seq=%lu neg=%ld s=%s pad=%s", n, -(long)n, s, pad);
        n++;
        for (volatile int i = 0; i < 8000; i++) /* a few us: a trace bt2 reads fast */
            ;
        if ((n & 63) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            double dt =
                (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
            /* On a busy machine the timer fires less often than 10 kHz:
             * go on until it fired 2,000 times (the test asks more than
             * 1,000), for at most 60 s. */
            if (dt > secs && (sig_count >= 2000 || dt > 60))
                break;
        }
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("emitted %lu %lu\n", n, (unsigned long)sig_count);
    return 0;
}
