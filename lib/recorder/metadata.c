/* SPDX-License-Identifier: MIT */
/* metadata.c - the metadata of this process's trace: the TSDL text and
 * the class file (common/tsdl.h), from the process's clock, uuid, pid,
 * name, host and class registry.
 *
 * Both files are rewritten whole, through a temporary file and rename(2)
 * (common/tracedir.h), each time the set of classes grows, so a reader
 * never sees half of either. Gathering the parameters uses system calls
 * only (open/read, uname), so the crash handler writes the metadata of its
 * snapshot from a signal handler too. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdr/version.h"
#include "recorder/buffer.h"
#include "recorder/clock.h"
#include "recorder/config.h"
#include "recorder/metadata.h"
#include "recorder/registry.h"
#include "common/tracedir.h"
#include "common/tsdl.h"

static char frozen[17]; /* fdr__metadata_freeze_procname */

/* The program's name from /proc/self/comm, with open/read only. */
static void proc_name(char out[17])
{
    if (frozen[0]) {
        memcpy(out, frozen, sizeof frozen);
        return;
    }
    memcpy(out, "unknown", 8);
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, 16);
    close(fd);
    if (n <= 0) {
        memcpy(out, "unknown", 8);
        return;
    }
    out[n] = 0;
    out[strcspn(out, "\n")] = 0;
}

static int metadata_emit(int fd, char *buf, size_t cap)
{
    struct fdr__tsdl_params p = {
        .pid = (long)fdr__pid,
        .version = {FDR_VERSION_MAJOR, FDR_VERSION_MINOR, FDR_VERSION_PATCH},
        .version_string = FDR_VERSION_STRING,
    };
    memcpy(p.uuid, fdr__trace_uuid, 16);
    struct fdr__clock_params clk;
    fdr__clock_params(&clk);
    p.clock_freq = clk.freq;
    p.clock_offset_s = clk.offset_s;
    p.clock_offset = clk.offset;
    p.clock_desc =
#if defined(__x86_64__) || defined(__i386__)
        "x86 TSC, calibrated against CLOCK_MONOTONIC and CLOCK_REALTIME";
#elif defined(__aarch64__)
        "arm64 CNTVCT_EL0";
#else
        "CLOCK_MONOTONIC";
#endif
    char proc[17];
    proc_name(proc);
    p.procname = proc;
    struct utsname un; /* uname(2) is async-signal-safe, gethostname is not listed */
    if (uname(&un) < 0)
        memcpy(un.nodename, "unknown", 8);
    p.hostname = un.nodename;
    struct fdr__classes t;
    fdr__registry_classes(&t);
    p.classes = &t;
    return fdr__tsdl_emit(fd, buf, cap, &p);
}

struct emit_buf {
    char *buf;
    size_t cap;
};

static int emit_into(int fd, void *arg)
{
    const struct emit_buf *e = arg;
    return metadata_emit(fd, e->buf, e->cap);
}

static int classes_into(int fd, void *arg)
{
    const struct emit_buf *e = arg;
    struct fdr__classes t;
    fdr__registry_classes(&t);
    struct fdr__line_clock k;
    fdr__clock_line(&k);
    return fdr__classes_emit(fd, e->buf, e->cap, &t, &k);
}

int fdr__metadata_write(int dir_fd, char *buf, size_t cap)
{
    struct emit_buf e = {buf, cap};
    /* The class file first: a reader that finds an event in the metadata
     * finds its class there too (classes are only added). */
    int r = fdr__tracedir_replace(dir_fd, FDR__CLASSES_FILE, classes_into, &e);
    int m = fdr__tracedir_replace(dir_fd, "metadata", emit_into, &e);
    return r < 0 ? r : m;
}

void fdr__metadata_freeze_procname(int on, const char *known)
{
    memset(frozen, 0, sizeof frozen);
    if (on)
        fdr__metadata_procname(frozen, known);
}

void fdr__metadata_procname(char out[17], const char *known)
{
    memset(out, 0, 17);
    if (known && known[0])
        memcpy(out, known, strnlen(known, 16));
    else
        proc_name(out);
}
