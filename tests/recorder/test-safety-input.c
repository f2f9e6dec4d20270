/* SPDX-License-Identifier: MIT */
/* test-safety-input.c - nothing fdr opens at start may block, a failing
 * print file is reported, numbers take only the documented forms (issue
 * 11, "inputs that block").
 *
 *     test-safety-input CASE DIR
 *
 * runs itself (SAFETY_INPUT=1: a program that prints two events) with
 * the environment of CASE and checks that it exits 0 (alarm 60 s, kept
 * across exec: a hang dies of SIGALRM) and that its stderr holds exactly
 * one line with the expected words:
 *   fifo-traces  FDR_TRACES=@DIR/fifo   "not a regular file"
 *   fifo-file    FDR_TRACE_FILE=DIR/fifo "; printing to stderr" (ENXIO: no reader)
 *   full         FDR_TRACE_FILE=/dev/full "printing to /dev/full failed"
 *   space        FDR_BUFFER_SIZE=" 1M"  "FDR_BUFFER_SIZE"
 *   plus         FDR_BUFFER_SIZE="+1M"  "FDR_BUFFER_SIZE"
 *   crashplus    FDR_CRASH_EVENTS="+5"  "FDR_CRASH_EVENTS"
 *   rtspace      FDR_SNAPSHOT_SIGNAL="RTMIN+ 1" "is not a signal"
 * No process reads the FIFO: an open that waits for a peer would block. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fdr/fdr.h>

int main(int argc, char **argv)
{
    if (getenv("SAFETY_INPUT")) {
        for (int i = 0; i < 2; i++)
            fdr_trace(safety, input, "i=%d", i);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: %s CASE DIR\n", argv[0]);
        return 2;
    }
    const char *c = argv[1], *dir = argv[2];
    char fifo[4096], item[4200], errpath[4200];
    mkdir(dir, 0755);
    snprintf(fifo, sizeof fifo, "%s/fifo-%.64s", dir, c);
    snprintf(errpath, sizeof errpath, "%s/stderr-%s", dir, c);
    unlink(fifo);
    if (mkfifo(fifo, 0600) < 0) {
        perror("mkfifo");
        return 2;
    }
    static const struct {
        const char *name, *var, *value, *expect;
    } cases[] = {
        {"fifo-traces", "FDR_TRACES", NULL, "not a regular file"},
        {"fifo-file", "FDR_TRACE_FILE", NULL, "; printing to stderr"},
        {"full", "FDR_TRACE_FILE", "/dev/full", "printing to /dev/full failed"},
        {"space", "FDR_BUFFER_SIZE", " 1M", "FDR_BUFFER_SIZE=\" 1M\" is not valid"},
        {"plus", "FDR_BUFFER_SIZE", "+1M", "FDR_BUFFER_SIZE=\"+1M\" is not valid"},
        {"crashplus", "FDR_CRASH_EVENTS", "+5", "FDR_CRASH_EVENTS=\"+5\" is not valid"},
        {"rtspace", "FDR_SNAPSHOT_SIGNAL", "RTMIN+ 1", "is not a signal"},
    };
    int k = -1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(cases[i].name, c) == 0)
            k = (int)i;
    if (k < 0) {
        fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    const char *value = cases[k].value;
    if (!value && strcmp(cases[k].var, "FDR_TRACES") == 0) {
        snprintf(item, sizeof item, "@%s", fifo);
        value = item;
    } else if (!value) {
        value = fifo;
    }
    pid_t pid = fork();
    if (pid == 0) {
        FILE *e = freopen(errpath, "w", stderr);
        (void)e;
        setenv("SAFETY_INPUT", "1", 1);
        setenv(cases[k].var, value, 1);
        if (strcmp(cases[k].var, "FDR_TRACES") != 0)
            setenv("FDR_TRACES", "safety:*", 1);
        alarm(60);
        execl("/proc/self/exe", argv[0], (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    unlink(fifo);
    char buf[8192];
    FILE *f = fopen(errpath, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    int lines = 0, hits = 0;
    for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
        if (strncmp(l, "fdr: ", 5) != 0)
            continue; /* a printed event ("0.000... [tid] safety:input") */
        lines++;
        hits += strstr(l, cases[k].expect) != NULL;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || lines != 1 || hits != 1) {
        fprintf(stderr, "FAIL %s (%s=\"%s\"): %s %d, %d fdr lines, %d with \"%s\"\n", c,
                cases[k].var, value, WIFSIGNALED(st) ? "signal" : "exit",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), lines, hits,
                cases[k].expect);
        return 1;
    }
    printf("ok %s\n", c);
    return 0;
}
