/* SPDX-License-Identifier: MIT */
/* print.c - live text tracing: events printed as they are recorded.
 *
 * An event whose site has the FDR__S_PRINT state (FDR_TRACES,
 * fdr_trace_set) is formatted at commit, by the thread that recorded it,
 * into one line (lib/common/format.c, fdr__format_line: the same code
 * prints the crash dump and any reader's lines):
 *
 *     <seconds since start> [<tid>] <provider>:<event> <message>
 *     0.000123456 [4242] net:rx len=60 proto=6 dev=eth0
 *
 * and written with a single write(2) to stderr or FDR_TRACE_FILE (opened
 * with O_APPEND; a regular file or a character device, never a FIFO, which
 * would block the program before main; a failed write is reported once),
 * so lines of different threads never interleave: a write
 * to a pipe of at most PIPE_BUF bytes is atomic, and O_APPEND makes each
 * write to a file land whole at the end. A line is at most 8 KiB (a longer
 * message is cut); on a pipe, lines above PIPE_BUF (4 KiB) could in
 * principle be split by the kernel when the pipe is full.
 *
 * Printing is independent of recording: a printed event that is not
 * recorded is built in a per-thread scratch area (writer.c) and never
 * reaches the ring. This is the slow path by design: formatting and a
 * system call per event (see the cost measured in tests/recorder/test-live.py's
 * comment). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/format.h"
#include "common/io.h"
#include "recorder/clock.h"
#include "recorder/config.h"
#include "recorder/print.h"
#include "recorder/registry.h"

static int print_fd = 2;

/* Opened before main: O_NONBLOCK so that a FIFO (or a device that waits)
 * cannot hold the program; then only a regular file or a character device
 * (/dev/null, a terminal) is kept, and writes block again as usual. */
void fdr__print_open(void)
{
    if (!fdr__cfg.trace_file[0])
        return;
    int fd =
        open(fdr__cfg.trace_file,
             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0644);
    struct stat st;
    const char *why = NULL;
    if (fd < 0)
        why = strerror(errno);
    else if (fstat(fd, &st) < 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
        why = "not a regular file or a terminal";
    else if (fcntl(fd, F_SETFL, O_APPEND) < 0)
        why = strerror(errno);
    if (why) {
        fdr__warn("FDR_TRACE_FILE=\"%s\": %s; printing to stderr", fdr__cfg.trace_file,
                  why);
        if (fd >= 0)
            close(fd);
        return;
    }
    print_fd = fd;
}

void fdr__print_event(const struct fdr__site *s, const char *payload, size_t len,
                      uint64_t ts, uint32_t tid)
{
    struct fdr__classes t;
    fdr__registry_classes(&t);
    const struct fdr__class *c = fdr__classes_get(&t, s->id);
    if (!c)
        return;
    struct fdr__line_info li = {fdr__clock_to_ns_since_start(ts), tid, NULL};
    char line[8192];
    size_t n = fdr__format_line(line, sizeof line, &t, c, &li, payload, len);
    int wr = fdr__write_full(print_fd, line, n);
    /* A failing output (a full disk, /dev/full) is said once, not per line. */
    static int warned;
    if (wr < 0 && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        fdr__warn("printing to %s failed: %s; printed events are lost",
                  print_fd == 2 ? "stderr" : fdr__cfg.trace_file, strerror(-wr));
}
