/* SPDX-License-Identifier: MIT */
/* test-safety-signal.c - a fatal signal ends the same way with and without
 * fdr's crash handler (issue 11, "signals, handled exactly as without fdr").
 *
 *     test-safety-signal CASE
 *
 * runs itself twice as the program under test (SAFETY_CASE=CASE in the
 * environment): once with FDR_CRASH=0 (no crash handler: the reference,
 * what the program does without fdr) and once with the crash handler on,
 * and requires the same wait status and the same standard output. The
 * program installs its handler before any constructor runs (so before
 * fdr's, from .preinit_array), records an event, then faults or raises:
 *   resethand  SA_RESETHAND handler that returns from a SIGSEGV: one call,
 *              then death by SIGSEGV (fdr used to loop forever)
 *   nodefer    SA_NODEFER | SA_SIGINFO handler with SIGUSR1 in sa_mask:
 *              prints which signals are blocked inside it, and si_code
 *   mask       the same without SA_NODEFER: SIGSEGV blocked inside
 *   loop       plain handler that returns 3 times, then resets itself
 *   ignfault   SIG_IGN for SIGSEGV, then a fault: dies of SIGSEGV
 *   ignsent    SIG_IGN for SIGBUS, then raise(SIGBUS): goes on, exit 0
 *   dflsent    SIG_DFL, raise(SIGBUS): dies of SIGBUS
 *   snapsegv   FDR_SNAPSHOT_SIGNAL=SEGV (both runs) then a fault: refused
 *              with one line (checked on stderr), dies of SIGSEGV
 *   snapabrt   FDR_SNAPSHOT_SIGNAL=ABRT: a crash signal, refused with one
 *              line; abort() then dies of SIGABRT
 * Each run has 60 s (alarm(), kept across exec): a loop dies of SIGALRM,
 * which differs from the reference. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fdr/fdr.h>

static const char *mode;
static volatile int calls;
static volatile int *volatile null_ptr;

static void say(const char *s)
{
    ssize_t r = write(1, s, strlen(s));
    (void)r;
}

static void plain_handler(int sig)
{
    (void)sig;
    say("handler\n");
    if (++calls == 3 && strcmp(mode, "loop") == 0)
        signal(SIGSEGV, SIG_DFL);
}

static void info_handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    char line[128];
    snprintf(line, sizeof line, "sig=%d code=%d segv_blocked=%d usr1_blocked=%d\n", sig,
             si->si_code, sigismember(&cur, SIGSEGV), sigismember(&cur, SIGUSR1));
    say(line);
    _exit(7);
}

/* Called like main (glibc), before the C library has set up getenv. */
static void install_first(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    for (char **e = envp; *e && !mode; e++)
        if (strncmp(*e, "SAFETY_CASE=", 12) == 0)
            mode = *e + 12;
    if (!mode)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (strcmp(mode, "resethand") == 0) {
        sa.sa_handler = plain_handler;
        sa.sa_flags = SA_RESETHAND;
        sigaction(SIGSEGV, &sa, NULL);
    } else if (strcmp(mode, "nodefer") == 0 || strcmp(mode, "mask") == 0) {
        sa.sa_sigaction = info_handler;
        sa.sa_flags = SA_SIGINFO | (strcmp(mode, "nodefer") == 0 ? SA_NODEFER : 0);
        sigaddset(&sa.sa_mask, SIGUSR1);
        sigaction(SIGSEGV, &sa, NULL);
    } else if (strcmp(mode, "loop") == 0) {
        sa.sa_handler = plain_handler;
        sigaction(SIGSEGV, &sa, NULL);
    } else if (strcmp(mode, "ignfault") == 0) {
        signal(SIGSEGV, SIG_IGN);
    } else if (strcmp(mode, "ignsent") == 0) {
        signal(SIGBUS, SIG_IGN);
    }
}

/* Before every constructor, fdr's included: .preinit_array. */
__attribute__((section(".preinit_array"),
               used)) static void (*const install_ptr)(int, char **,
                                                       char **) = install_first;

static int program(void)
{
    fdr_trace(safety, start, "mode=%s", mode);
    if (strcmp(mode, "ignsent") == 0 || strcmp(mode, "dflsent") == 0)
        raise(SIGBUS);
    else if (strcmp(mode, "snapabrt") == 0)
        abort();
    else
        *null_ptr = 1;
    say("survived\n");
    return 0;
}

/* Appends what fd has now to buf (at *n, keeping room for a NUL); returns
 * 0 at end of file. */
static int drain(int fd, char *buf, size_t cap, size_t *n)
{
    char tmp[4096];
    ssize_t r = read(fd, tmp, sizeof tmp);
    for (ssize_t i = 0; i < r && *n + 1 < cap; i++)
        buf[(*n)++] = tmp[i];
    return r != 0;
}

/* Runs this program for `mode` with crash handling on or off; returns the
 * wait status, stdout in out (NUL-terminated) and stderr in err. */
static int run(const char *self, const char *m, int crash, char *out, size_t cap,
               char *err, size_t ecap)
{
    int po[2], pe[2];
    if (pipe(po) || pipe(pe))
        exit(2);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        setenv("SAFETY_CASE", m, 1);
        setenv("FDR_CRASH", crash ? "1" : "0", 1);
        unsetenv("FDR_CRASH_SIGNALS");
        unsetenv("FDR_SNAPSHOT_SIGNAL");
        if (strcmp(m, "snapsegv") == 0)
            setenv("FDR_SNAPSHOT_SIGNAL", "SEGV", 1);
        if (strcmp(m, "snapabrt") == 0)
            setenv("FDR_SNAPSHOT_SIGNAL", "ABRT", 1);
        setenv("FDR_SNAPSHOT_DIR", "/nonexistent-fdr-safety", 1);
        alarm(60);
        execl(self, self, (char *)NULL);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    /* Reads both pipes to the end (a looping child is ended by its alarm). */
    size_t n = 0, en = 0;
    int open_o = 1, open_e = 1;
    fcntl(po[0], F_SETFL, O_NONBLOCK);
    fcntl(pe[0], F_SETFL, O_NONBLOCK);
    while (open_o || open_e) {
        if (open_o)
            open_o = drain(po[0], out, cap, &n);
        if (open_e)
            open_e = drain(pe[0], err, ecap, &en);
        usleep(1000);
    }
    out[n] = err[en] = 0;
    close(po[0]);
    close(pe[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return st;
}

static void describe(char *buf, size_t cap, int st)
{
    if (WIFSIGNALED(st))
        snprintf(buf, cap, "killed by signal %d", WTERMSIG(st));
    else
        snprintf(buf, cap, "exit %d", WEXITSTATUS(st));
}

static int count_lines(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

int main(int argc, char **argv)
{
    if (mode)
        return program();
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE\n", argv[0]);
        return 2;
    }
    static char out0[1 << 16], out1[1 << 16], err0[1 << 16], err1[1 << 16];
    int st0 = run("/proc/self/exe", argv[1], 0, out0, sizeof out0, err0, sizeof err0);
    int st1 = run("/proc/self/exe", argv[1], 1, out1, sizeof out1, err1, sizeof err1);
    char d0[64], d1[64];
    describe(d0, sizeof d0, st0);
    describe(d1, sizeof d1, st1);
    int fail = 0;
    if (st0 != st1 || strcmp(out0, out1) != 0) {
        fprintf(stderr, "FAIL %s: without fdr's handler: %s, stdout:\n%.400s\n", argv[1],
                d0, out0);
        fprintf(stderr, "     with it: %s, stdout:\n%.400s\nstderr:\n%.1000s\n", d1, out1,
                err1);
        fail = 1;
    }
    if (strcmp(argv[1], "snapsegv") == 0 &&
        count_lines(err1, "FDR_SNAPSHOT_SIGNAL=\"SEGV\" is a fault signal") != 1) {
        fprintf(stderr, "FAIL snapsegv: no single refusal line:\n%.1000s\n", err1);
        fail = 1;
    }
    if (strcmp(argv[1], "snapabrt") == 0 &&
        count_lines(err1, "FDR_SNAPSHOT_SIGNAL=\"ABRT\" is a crash signal") != 1) {
        fprintf(stderr, "FAIL snapabrt: no single refusal line:\n%.1000s\n", err1);
        fail = 1;
    }
    if (!strstr(err1, "fdr: caught")) {
        fprintf(stderr, "FAIL %s: fdr's crash handler did not run:\n%.1000s\n", argv[1],
                err1);
        fail = 1;
    }
    if (!fail)
        printf("ok %s: %s, %d bytes of output, both runs\n", argv[1], d1,
               (int)strlen(out1));
    return fail;
}
