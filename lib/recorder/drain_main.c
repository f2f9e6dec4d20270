/* SPDX-License-Identifier: MIT */
/* drain_main.c - fdr-drain, the drain helper as a small executable of its
 * own (drainer.h, docs/environment.md FDR_DRAIN).
 *
 * A program that records to disk (FDR_OUTPUT) or keeps a crash trace
 * (FDR_CRASH_DIR) starts it with vfork + exec at start (consumer.c):
 * where the helper was a clone of the program, the clone copied the
 * program's page tables and made each page it wrote afterwards a
 * copy-on-write fault (performance.md, section 12). It is given, by
 * descriptor number:
 *
 *   fdr-drain TAG SOCK PIDFD TRACE_DIR SHARED CLASSES PID CRASH_DIR
 *
 * the socket the program sends its rings on, a pidfd of the program ("-1"
 * for none), the trace directory ("-1" with FDR_CRASH_DIR alone), the
 * memfd shared with the program (drainer.h), the class table's memfd, the
 * program's pid and FDR_CRASH_DIR. TAG is the library's (FDR__DRAIN_TAG):
 * an fdr-drain of another build says so on one line and starts nothing.
 *
 * It links lib/common, clock.c and metadata.c, not the rest of libfdr:
 * the two registry readers metadata.c and drainer.c use read the
 * program's class table here, and the globals they read are set from the
 * shared page. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/classes.h"
#include "recorder/clock.h"
#include "recorder/drainer.h"
#include "recorder/registry.h"

pid_t fdr__pid;
uint8_t fdr__trace_uuid[16];
static const struct fdr__class_table *table;

void fdr__registry_classes(struct fdr__classes *out)
{
    if (fdr__classes_from_table(table, sizeof *table, out) < 0)
        memset(out, 0, sizeof *out);
}

uint64_t fdr__registry_generation(void)
{
    return __atomic_load_n(&table->generation, __ATOMIC_ACQUIRE);
}

static int number(const char *s, long *out)
{
    char *end;
    errno = 0;
    *out = strtol(s, &end, 10);
    return errno == 0 && end != s && *end == 0;
}

int main(int argc, char **argv)
{
    long n[6];
    int ok = argc == 9 && strcmp(argv[1], FDR__DRAIN_TAG) == 0;
    for (int i = 0; ok && i < 6; i++)
        ok = number(argv[2 + i], &n[i]);
    if (!ok) {
        fprintf(stderr,
                "fdr-drain: not started by a program of this build (%s expected): "
                "no drain helper\n",
                FDR__DRAIN_TAG);
        return 2;
    }
    void *shared = mmap(NULL, FDR__DRAIN_SHARED_SIZE, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_NORESERVE, (int)n[3], 0);
    void *t =
        mmap(NULL, sizeof *table, PROT_READ, MAP_SHARED | MAP_NORESERVE, (int)n[4], 0);
    if (shared == MAP_FAILED || t == MAP_FAILED) {
        fprintf(stderr, "fdr-drain: cannot map what the program shares: %s\n",
                strerror(errno));
        return 1;
    }
    close((int)n[3]);
    close((int)n[4]);
    table = t;
    const struct fdr__drain_page *page = shared;
    fdr__pid = (pid_t)page->pid;
    memcpy(fdr__trace_uuid, page->uuid, sizeof fdr__trace_uuid);
    fdr__clock_start_set(page->clock_start);
    fdr__drainer_main((int)n[0], (int)n[1], (int)n[2], shared, (pid_t)n[5], argv[8]);
}
