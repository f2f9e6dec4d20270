/* SPDX-License-Identifier: MIT */
/* flight-crash.c - records a few events, then dies the way it is told.
 *
 *     flight-crash null|abort|overflow|fpe|chain|handled|wait
 *
 * Events: the main thread records work:step i=0..9 with a string "s<i>",
 * a second thread (alive, blocked) records other:tick n=100..104 with
 * name="ticker", then main records crash:now kind=<kind> and crashes:
 *   null      store through a null pointer (SIGSEGV)
 *   abort     abort() (SIGABRT)
 *   overflow  infinite recursion (SIGSEGV on the alternate stack)
 *   fpe       integer division by zero (SIGFPE)
 *   chain     installs its own SIGSEGV handler that chains to the previous
 *             one (fdr's), then null
 *   handled   installs its own SIGSEGV handler that exits(42)
 *   wait      prints "ready" on stdout and waits for a signal from outside
 * tests/test-flight-crash.py checks what stderr and the parent see. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fdr/fdr.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ticked, done_flag;

static void *ticker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "ticker");
    for (int n = 100; n < 105; n++)
        fdr_trace(other, tick, "n=%d name=%s", n, "ticker");
    pthread_mutex_lock(&m);
    ticked = 1;
    pthread_cond_broadcast(&c);
    while (!done_flag)
        pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    return NULL;
}

static struct sigaction prev;

static void chaining(int sig, siginfo_t *si, void *uc)
{
    static const char msg[] = "flight-crash: own handler, chaining\n";
    ssize_t r = write(2, msg, sizeof msg - 1);
    (void)r;
    if (prev.sa_flags & SA_SIGINFO)
        prev.sa_sigaction(sig, si, uc);
    else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN)
        prev.sa_handler(sig);
}

static void exiting(int sig)
{
    (void)sig;
    _exit(42);
}

static volatile int keep_going = 1;

static int depth(int n)
{
    volatile char pad[256];
    pad[0] = (char)n;
    if (!keep_going)
        return n;
    return depth(n + 1) + pad[0]; /* not a tail call */
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s null|abort|overflow|fpe|chain|handled\n", argv[0]);
        return 2;
    }
    const char *kind = argv[1];
    char s[16];
    for (int i = 0; i < 10; i++) {
        snprintf(s, sizeof s, "s%d", i);
        fdr_trace(work, step, "i=%d s=%s", i, s);
    }
    pthread_t th;
    pthread_create(&th, NULL, ticker, NULL);
    pthread_mutex_lock(&m);
    while (!ticked)
        pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    fdr_trace(crash, now, "kind=%s", kind);
    if (strcmp(kind, "chain") == 0 || strcmp(kind, "handled") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        if (strcmp(kind, "chain") == 0) {
            sa.sa_sigaction = chaining;
            sa.sa_flags = SA_SIGINFO;
        } else {
            sa.sa_handler = exiting;
        }
        sigaction(SIGSEGV, &sa, &prev);
        kind = "null";
    }
    if (strcmp(kind, "null") == 0) {
        *(volatile int *)(uintptr_t)0 = 1;
    } else if (strcmp(kind, "abort") == 0) {
        abort();
    } else if (strcmp(kind, "overflow") == 0) {
        return depth(0);
    } else if (strcmp(kind, "wait") == 0) {
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    } else if (strcmp(kind, "fpe") == 0) {
        volatile int zero = 0;
        volatile int x = 7 / zero;
        (void)x;
        /* Only x86 traps an integer division by zero: elsewhere (aarch64,
         * arm, riscv64, and qemu-user for s390x) it gives a number, so the
         * program sends itself the signal instead. */
        raise(SIGFPE);
    }
    fprintf(stderr, "flight-crash: still alive after %s\n", kind);
    return 3;
}
