/* SPDX-License-Identifier: MIT */
/* test-reader.c - a reader of trace directories built on the shared core
 * alone (fdr_common, no libfdr symbol: tests/common/test-reader.py checks
 * with nm), as fdr and fdrd read them.
 *
 *   test-reader DIR   prints the text line of every event of the trace in
 *                     DIR (one process's <name>-<pid>/, or a directory of
 *                     them), merged by time, as FDR_TRACES printed it live
 *
 * It uses the trace reader of the core (common/reader.h: class file, line
 * clock, packets validated with common/validate.h and walked with
 * common/iter.h) and formats each event with fdr__format_line. The files
 * are untrusted: anything wrong gives one line on stderr naming the file
 * and the byte offset, the rest is still printed, and the exit status is 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/format.h"
#include "common/reader.h"

static void bad(void *ctx, const char *file, uint64_t off, const char *why)
{
    (void)ctx;
    fprintf(stderr, "test-reader: %s: offset %llu: %s\n", file, (unsigned long long)off,
            why);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test-reader TRACE-DIR\n");
        return 2;
    }
    struct fdr__reader *r;
    int err = fdr__reader_open(argv[1], bad, NULL, &r);
    if (err == -ENODATA)
        return 1; /* each skipped process has been reported */
    if (err < 0) {
        fprintf(stderr, "test-reader: %s: offset 0: %s\n", argv[1], strerror(-err));
        return 1;
    }
    struct fdr__rd_event ev;
    while (fdr__reader_next(r, &ev) > 0) {
        char line[8192];
        struct fdr__line_info li = {ev.ns, ev.tid, NULL};
        size_t n = fdr__format_line(line, sizeof line, &ev.proc->classes, ev.c, &li,
                                    ev.payload, ev.len);
        fwrite(line, 1, n, stdout);
    }
    int status = fdr__reader_errors(r) ? 1 : 0;
    fdr__reader_close(r);
    return fflush(stdout) == 0 ? status : 1;
}
