/* SPDX-License-Identifier: MIT */
/* core-fork.c [SNAPDIR] - a forked child must not write into its parent's
 * rings or trace. Before fork() the parent records from main and from a thread that
 * exits (its ring goes back to the pool); after fork() the child turns
 * tracing on and records 5000 events while the parent records from main
 * and from a new thread, which takes the pooled ring. The parent's trace
 * must hold exactly the parent's events. With SNAPDIR, the child then takes
 * fdr_snapshot(SNAPDIR): its packets and metadata must carry the child's
 * pid, printed on stdout as "child=<pid>". */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fdr/fdr.h>

static void *worker(void *arg)
{
    int base = *(int *)arg;
    for (int i = base; i < base + 500; i++)
        fdr_trace(fork, worker, "seq=%d", i);
    return NULL;
}

static void run_worker(int base)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, &base);
    pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    const char *snapdir = argc > 1 ? argv[1] : NULL;
    for (int i = 0; i < 1000; i++)
        fdr_trace(fork, parent, "seq=%d", i);
    run_worker(0);
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        fdr_set_tracing_enabled(true); /* must use rings of its own */
        for (int i = 0; i < 5000; i++)
            fdr_trace(fork, child, "seq=%d", i);
        if (snapdir && fdr_snapshot(snapdir) != 0)
            _exit(4);
        /* No trace on disk for the child; flushing says so. */
        _exit(fdr_flush() == -ENOTSUP ? 0 : 3);
    }
    printf("child=%d\n", (int)pid);
    int st = 0;
    waitpid(pid, &st, 0);
    for (int i = 1000; i < 2000; i++)
        fdr_trace(fork, parent, "seq=%d", i);
    run_worker(500);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "core-fork: child failed (status %d)\n", st);
        return 1;
    }
    return 0;
}
