/* SPDX-License-Identifier: MIT */
/* test-safety-fork.c - fork() at random moments while other threads are
 * inside every fdr API that takes a lock: no child hangs (issue 11, "fork
 * while fdr holds a lock").
 *
 *     test-safety-fork DIR [CHILDREN]
 *
 * Seven threads call, in loops: fdr_snapshot, fdr_flush (FDR_OUTPUT is
 * set by the test), fdr_trace_set + fdr_record_set, fdr_event_list,
 * fdr_tunable_set/get/list, fdr_provider_register/unregister, and
 * fdr_snapshot_on_signal + kill(SIGUSR2) (the helper thread's snapshot).
 * The main thread forks CHILDREN (default 1000) children, one at a time,
 * at random moments. Each child calls all of them once, and every 50th
 * also waits for a snapshot taken by its own signal (a child needs a
 * helper thread of its own), then exits 0. A child that hangs is ended by
 * its alarm (60 s) and reported (SAFETY_FORK_NO_HELPER skips the wait for
 * the child's helper: TSan does not support threads started in a child,
 * GCC 12's ASan can block in its own allocator there); so is any other
 * failure. A child that got stuck in a lock held by a thread of its parent would never
 * end.
 *
 * A hung child writes its stack when its alarm comes (hung-C.txt, printed
 * by the parent). A hang inside the sanitizer runtime itself is told
 * apart and not counted as fdr's: GCC 12's libasan does not take its
 * allocator's locks around fork(), so a child forked while a parent thread
 * is in malloc can wait forever in its first malloc (seen once in 200
 * children, CI at load 15). Such a stack's innermost frame outside libc is
 * an unnamed address in libasan or libtsan (their internals export no
 * names; an interceptor, such as read, has its name: a wait in fdr that
 * passes through one counts as a hang). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fdr/fdr.h>

#include "stack.h"

#include "check.h"

static const char *dir;
static int stop;    /* atomic */
static int started; /* atomic: hammers past their first call */

static void ev_cb(void *arg, const fdr_event_info_t *e)
{
    (void)e;
    ++*(int *)arg;
}

static void tun_cb(void *arg, const fdr_tunable_info_t *t)
{
    (void)t;
    ++*(int *)arg;
}

/* Calls API number k once; returns 0 or a negative errno of a real
 * failure (what a busy machine may return, such as -ETIMEDOUT, is fine). */
static int call(int k, const char *snapdir)
{
    int n = 0, r = 0;
    fdr_tunable_info_t info;
    fdr_provider_t *p = NULL;
    fdr_provider_desc_t d = FDR_PROVIDER_DESC_INIT("forkprov", 2, 0x1234);
    switch (k) {
    case 0:
        r = fdr_snapshot(snapdir);
        return r == -ETIMEDOUT ? 0 : r;
    case 1:
        r = fdr_flush();
        return r == -ENOTSUP || r == -ETIMEDOUT ? 0 : r;
    case 2:
        r = fdr_trace_set("-fork:child");
        return r < 0 ? r : fdr_record_set("fork:*");
    case 3:
        return fdr_event_list(ev_cb, &n);
    case 4:
        fdr_tunable_set("fork_knob", 5);
        r = fdr_tunable_get("fork_knob", &info);
        return r < 0 ? r : fdr_tunable_list(tun_cb, &n);
    case 5:
        r = fdr_provider_register(&d, &p);
        return r < 0 ? r : fdr_provider_unregister(p);
    default:
        r = fdr_snapshot_on_signal(SIGUSR2, snapdir);
        if (r == 0)
            kill(getpid(), SIGUSR2);
        return r;
    }
}

static void *hammer(void *arg)
{
    int k = (int)(long)arg;
    char snapdir[4096];
    snprintf(snapdir, sizeof snapdir, "%s/parent-%d", dir, k);
    unsigned i = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        fdr_trace(fork, tick, "k=%d i=%u", k, i++);
        usleep(200); /* six engineers share two cores */
        if (k == 6 && i % 1000 != 0)
            continue; /* the signal's snapshots: not too many */
        int r = call(k, snapdir);
        if (r < 0) {
            fprintf(stderr, "parent: API %d failed: %s\n", k, strerror(-r));
            exit(1);
        }
        if (i == 1 || (k == 6 && i == 1000))
            __atomic_fetch_add(&started, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* Waits for a snapshot-<pid>-1 directory (with its metadata) in d. */
static int wait_signal_snapshot(const char *d)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/snapshot-%d-1/metadata", d, (int)getpid());
    struct stat st;
    for (;;) { /* the alarm bounds it */
        if (stat(path, &st) == 0 && st.st_size > 0)
            return 0;
        usleep(1000);
    }
}

static int hung_fd = -1;

static void on_alarm(int sig)
{
    (void)sig;
    void *frames[64];
    int n = backtrace(frames, 64);
    backtrace_symbols_fd(frames, n, hung_fd);
    _exit(128 + SIGALRM);
}

static void child(int c)
{
    char hp[4200];
    snprintf(hp, sizeof hp, "%s/hung-%d.txt", dir, c);
    hung_fd = open(hp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    struct sigaction sa = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &sa, NULL);
    alarm(60);
    char d[4096];
    snprintf(d, sizeof d, "%s/child-%d", dir, c);
    fdr_trace(fork, child, "c=%d", c);
    for (int k = 0; k < 7; k++) {
        int r = call(k, d);
        if (r < 0) {
            fprintf(stderr, "child %d: API %d failed: %s\n", c, k, strerror(-r));
            _exit(3);
        }
    }
    if (c % 50 == 0 && !getenv("SAFETY_FORK_NO_HELPER"))
        wait_signal_snapshot(d);
    _exit(0);
}

/* Prints child c's stack (hung-C.txt); 1 if its innermost frame outside
 * libc is an unnamed address of the sanitizer runtime (above). */
static int in_sanitizer(int c)
{
    char hp[4200], line[1024];
    snprintf(hp, sizeof hp, "%s/hung-%d.txt", dir, c);
    FILE *f = fopen(hp, "r");
    int past_handler = 0, verdict = -1;
    fprintf(stderr, "child %d hung; its stack:\n", c);
    while (f && fgets(line, sizeof line, f)) {
        fprintf(stderr, "  %s", line);
        int libc = strstr(line, "libc.so") != NULL;
        past_handler |= libc; /* the signal's return is libc's */
        if (!past_handler || libc || verdict >= 0)
            continue;
        verdict =
            (strstr(line, "libasan") || strstr(line, "libtsan")) && strstr(line, "(+0x");
    }
    if (f)
        fclose(f);
    if (verdict == 1)
        fprintf(stderr, "child %d: hung inside the sanitizer runtime, not in fdr\n", c);
    return verdict == 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [CHILDREN]\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    int children = argc > 2 ? atoi(argv[2]) : 1000;
    mkdir(dir, 0755);
    fdr_tunable_set("fork_knob", FDR_TUNABLE(fork_knob, 1));
    pthread_t th[7];
    for (long k = 0; k < 7; k++)
        pthread_create(&th[k], NULL, hammer, (void *)k);
    /* Forks start once every thread is inside its loop: children forked
     * while threads are still being created test the C library's thread
     * start, not fdr. */
    WAIT_UNTIL(__atomic_load_n(&started, __ATOMIC_ACQUIRE) >= 7,
               "7 threads in their loop, %d",
               __atomic_load_n(&started, __ATOMIC_ACQUIRE));
    srand((unsigned)getpid());
    int hung = 0, failed = 0, sanitizer_hung = 0;
    for (int c = 0; c < children; c++) {
        usleep((useconds_t)(rand() % 2000));
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0)
            child(c);
        else if (c == 0) {
            void *f[4];
            backtrace(f, 4); /* libgcc's unwinder loaded once, before any hang */
        }
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        int alarmed = (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) ||
                      (WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGALRM);
        if (alarmed && in_sanitizer(c)) {
            if (++sanitizer_hung >= 3) {
                children = c + 1; /* each costs its 60 s alarm */
                break;
            }
            continue;
        } else if (alarmed)
            hung++;
        else if (!ok)
            failed++;
        if (!ok && hung + failed <= 5)
            fprintf(stderr, "child %d: %s %d\n", c,
                    WIFSIGNALED(st) ? "killed by signal" : "exit",
                    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        if (hung >= 3) {
            /* each hang costs its 60 s alarm: stop before the test's TIMEOUT */
            children = c + 1;
            break;
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int k = 0; k < 7; k++)
        pthread_join(th[k], NULL);
    fdr_snapshot_on_signal(0, NULL);
    printf("%d children: %d hung, %d failed, %d hung in the sanitizer runtime\n",
           children, hung, failed, sanitizer_hung);
    return hung || failed;
}
