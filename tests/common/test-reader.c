/* SPDX-License-Identifier: MIT */
/* test-reader.c - a reader of trace directories built on the shared core
 * alone (fdr_common, no libfdr symbol: tests/common/test-reader.py checks
 * with nm), as fdr and fdrd will read them.
 *
 *   test-reader DIR   prints the text line of every event of the trace in
 *                     DIR (one process's <name>-<pid>/), stream by stream,
 *                     as FDR_TRACES printed it live
 *
 * It loads the class file (common/tsdl.h: classes, formats, source
 * locations, line clock), then validates (common/validate.h) and iterates
 * (common/iter.h) every packet of every stream file and formats each event
 * with fdr__format_line. The files are untrusted: anything wrong gives one
 * line on stderr naming the file and the byte offset, and exit status 1. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/format.h"
#include "common/iter.h"
#include "common/tsdl.h"
#include "common/validate.h"

static const char *dir;

static void bad(const char *file, size_t at, const char *why)
{
    fprintf(stderr, "test-reader: %s/%s: offset %zu: %s\n", dir, file, at, why);
    exit(1);
}

/* The whole of dir/name, in memory aligned for any record; *len bytes. */
static char *slurp(int dfd, const char *name, size_t *len)
{
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        bad(name, 0, strerror(errno));
    char *b = malloc((size_t)st.st_size + 1);
    size_t n = 0;
    while (b && n < (size_t)st.st_size) {
        ssize_t r = read(fd, b + n, (size_t)st.st_size - n);
        if (r <= 0)
            bad(name, n, r < 0 ? strerror(errno) : "shorter than its size");
        n += (size_t)r;
    }
    if (!b)
        bad(name, 0, "out of memory");
    close(fd);
    *len = n;
    return b;
}

static int by_index(const struct dirent **a, const struct dirent **b)
{
    unsigned long x = strtoul((*a)->d_name + 7, NULL, 10);
    unsigned long y = strtoul((*b)->d_name + 7, NULL, 10);
    return (x > y) - (x < y);
}

static int is_stream(const struct dirent *e)
{
    const char *s = e->d_name;
    if (strncmp(s, "stream_", 7) != 0 || !s[7])
        return 0;
    for (s += 7; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static void read_stream(int dfd, const char *name, const struct fdr__classes *t,
                        const struct fdr__line_clock *k)
{
    size_t len;
    char *f = slurp(dfd, name, &len);
    /* Any slot size: each packet says its own, bounded by the largest. */
    struct fdr__ring_geom g = {FDR__PACKET_MAX, 2, (uint32_t)strtoul(name + 7, NULL, 10),
                               0};
    uint64_t seq = 0;
    for (size_t off = 0; off < len;) {
        struct fdr__pkt h;
        if (len - off < sizeof h)
            bad(name, off, "truncated packet header");
        memcpy(&h, f + off, sizeof h);
        if (off > 0 && h.seq < seq)
            bad(name, off, "packet sequence number goes back");
        seq = h.seq;
        if (fdr__pkt_check(f + off, &g, seq, &h) != 0)
            bad(name, off, "invalid packet header");
        if (h.packet_size / 8 > len - off)
            bad(name, off, "truncated packet");
        struct fdr__iter it;
        struct fdr__event ev;
        int r;
        fdr__iter_init(&it, f + off, h.content_size / 8, t);
        while ((r = fdr__iter_next(&it, &ev)) > 0) {
            char line[8192];
            struct fdr__line_info li = {fdr__line_clock_ns(k, ev.ts), h.tid, NULL};
            size_t n =
                fdr__format_line(line, sizeof line, t, ev.c, &li, ev.payload, ev.len);
            fwrite(line, 1, n, stdout);
        }
        if (r < 0)
            bad(name, (size_t)(it.p - f), "invalid event");
        off += h.packet_size / 8;
        seq++;
    }
    free(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test-reader TRACE-DIR\n");
        return 2;
    }
    dir = argv[1];
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        bad(".", 0, strerror(errno));
    size_t clen;
    char *cf = slurp(dfd, FDR__CLASSES_FILE, &clen);
    struct fdr__classes t;
    struct fdr__line_clock k;
    const char *why;
    size_t at;
    if (fdr__classes_load(cf, clen, &t, &k, &why, &at) != 0)
        bad(FDR__CLASSES_FILE, at, why);
    struct dirent **names;
    int n = scandir(dir, &names, is_stream, by_index);
    if (n < 0)
        bad(".", 0, strerror(errno));
    for (int i = 0; i < n; i++) {
        read_stream(dfd, names[i]->d_name, &t, &k);
        free(names[i]);
    }
    free(names);
    free(cf);
    close(dfd);
    return fflush(stdout) == 0 ? 0 : 1;
}
