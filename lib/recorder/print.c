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
#include <pthread.h>
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
static struct fdr__fd_id print_id; /* what print_fd names (common/io.h) */
static pthread_mutex_t reopen_lock = PTHREAD_MUTEX_INITIALIZER;

/* Opens FDR_TRACE_FILE; the descriptor, or -1 with *why set. */
static int open_file(const char **why)
{
    int fd =
        open(fdr__cfg.trace_file,
             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0644);
    struct stat st;
    *why = NULL;
    if (fd < 0)
        *why = strerror(errno);
    else if (fstat(fd, &st) < 0)
        *why = strerror(errno);
    else if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
        *why = "not a regular file or a terminal";
    else if (fcntl(fd, F_SETFL, O_APPEND) < 0)
        *why = strerror(errno);
    if (*why && fd >= 0)
        close(fd);
    return *why ? -1 : fd;
}

static void publish(int fd)
{
    struct fdr__fd_id id;
    fdr__fd_id(fd, &id);
    __atomic_store_n(&print_id.dev, id.dev, __ATOMIC_RELAXED);
    __atomic_store_n(&print_id.ino, id.ino, __ATOMIC_RELAXED);
    __atomic_store_n(&print_fd, fd, __ATOMIC_RELEASE);
}

/* The descriptor to print to: print_fd, unless the program closed it (its
 * number may now be a file of the program's, never written): then the file
 * is opened again, once, by one thread; -1 meanwhile or when it fails. */
static int print_target(void)
{
    int fd = __atomic_load_n(&print_fd, __ATOMIC_ACQUIRE);
    struct fdr__fd_id id = {__atomic_load_n(&print_id.dev, __ATOMIC_RELAXED),
                            __atomic_load_n(&print_id.ino, __ATOMIC_RELAXED)};
    if (fd == 2 || fdr__fd_is(fd, &id))
        return fd;
    if (fd < 0 || pthread_mutex_trylock(&reopen_lock) != 0)
        return -1; /* given up, or another thread is opening it again */
    int now = __atomic_load_n(&print_fd, __ATOMIC_ACQUIRE);
    if (now == fd) {
        const char *why;
        now = open_file(&why);
        fdr__warn(
            "FDR_TRACE_FILE=\"%s\": its descriptor was closed by the program; %s%s",
            fdr__cfg.trace_file,
            now >= 0 ? "opened again" : "printed events are lost: ", now >= 0 ? "" : why);
        if (now >= 0)
            publish(now);
        else
            __atomic_store_n(&print_fd, -1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&reopen_lock);
    return now;
}

/* Opened before main: O_NONBLOCK so that a FIFO (or a device that waits)
 * cannot hold the program; then only a regular file or a character device
 * (/dev/null, a terminal) is kept, and writes block again as usual. */
void fdr__print_open(void)
{
    if (!fdr__cfg.trace_file[0])
        return;
    const char *why;
    int fd = open_file(&why);
    if (fd < 0) {
        fdr__warn("FDR_TRACE_FILE=\"%s\": %s; printing to stderr", fdr__cfg.trace_file,
                  why);
        return;
    }
    publish(fd);
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
    int fd = print_target();
    if (fd < 0)
        return;
    int wr = fdr__write_full(fd, line, n);
    /* A failing output (a full disk, /dev/full) is said once, not per line. */
    static int warned;
    if (wr < 0 && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        fdr__warn("printing to %s failed: %s; printed events are lost",
                  fd == 2 ? "stderr" : fdr__cfg.trace_file, strerror(-wr));
}
