/* SPDX-License-Identifier: MIT */
/* signal.c - signal names to numbers (common/signal.h): the names of
 * signal(7) with or without "SIG", numbers, and RTMIN+n / RTMAX-n. Pure
 * string work, no handler is touched. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/signal.h"

static const struct {
    const char *name;
    int sig;
} sig_names[] = {
    {"HUP", SIGHUP},     {"INT", SIGINT},   {"QUIT", SIGQUIT},     {"ILL", SIGILL},
    {"TRAP", SIGTRAP},   {"ABRT", SIGABRT}, {"BUS", SIGBUS},       {"FPE", SIGFPE},
    {"USR1", SIGUSR1},   {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},     {"PIPE", SIGPIPE},
    {"ALRM", SIGALRM},   {"TERM", SIGTERM}, {"CHLD", SIGCHLD},     {"CONT", SIGCONT},
    {"TSTP", SIGTSTP},   {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},     {"URG", SIGURG},
    {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH}, {"IO", SIGIO},     {"PWR", SIGPWR},       {"SYS", SIGSYS},
};

int fdr__signal_parse(const char *s, size_t len)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return -EINVAL;
    memcpy(buf, s, len);
    buf[len] = 0;
    const char *p = buf;
    if (strncasecmp(p, "SIG", 3) == 0)
        p += 3;
    if (*p >= '0' && *p <= '9') {
        char *end;
        long v = strtol(p, &end, 10);
        return *end || v <= 0 || v >= NSIG ? -EINVAL : (int)v;
    }
    for (size_t i = 0; i < sizeof sig_names / sizeof sig_names[0]; i++)
        if (strcasecmp(p, sig_names[i].name) == 0)
            return sig_names[i].sig;
    int base = 0, sign = 1;
    if (strncasecmp(p, "RTMIN", 5) == 0)
        base = SIGRTMIN;
    else if (strncasecmp(p, "RTMAX", 5) == 0)
        base = SIGRTMAX, sign = -1;
    if (!base)
        return -EINVAL;
    p += 5;
    if (!*p)
        return base;
    if (*p != (sign > 0 ? '+' : '-') || p[1] < '0' || p[1] > '9')
        return -EINVAL;
    char *end;
    long v = strtol(p + 1, &end, 10);
    if (*end || end == p + 1 || v < 0 || v > SIGRTMAX - SIGRTMIN)
        return -EINVAL;
    return base + sign * (int)v;
}
