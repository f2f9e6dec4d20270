/* SPDX-License-Identifier: MIT */
/* recover.c - `fdr recover DIR -o OUT`: a CTF trace rebuilt from the ring
 * files a trace with file-backed buffers left behind, after fdrd and the
 * programs were all killed (LTTng's lttng-crash idea, for fdr's rings).
 *
 * DIR is a buffer directory (daemon/bufdir.c: its mark file fdr-buffers,
 * then one directory per process holding metadata, .fdr-classes and its
 * ring files ring-<route>-<k>). Every byte in it is untrusted: a ring's
 * geometry is taken from its header only after fdr__geom_check against
 * the file's real size and fdr__ring_check, every packet goes through
 * fdr__pkt_check, and events are written only as far as they parse with
 * the process's classes (a packet cut there is counted). The files are
 * mapped MAP_PRIVATE: the drain code stores its bookkeeping into the
 * mapping, and recovery must never change the evidence.
 *
 * What is written, per ring, to OUT/<process>-<pid>/stream_<k> beside a
 * copy of the process's metadata and class file: the closed packets fdrd
 * had not written yet ([consumed, produced) in discard mode; what the
 * ring still holds in overwrite and snapshot mode), then the open packet
 * up to its last committed event (common/drain.h, the code fdrd uses when
 * a process dies). So the trace's own output directory (what fdrd wrote
 * before it died) and OUT together hold every committed event. The
 * discarded counts are cumulative per stream; the part of them that the
 * packets fdrd wrote already reported (out_reported, which the drain code
 * keeps in the ring header) is taken off, so that the discarded events
 * babeltrace2 reports in OUT are only the ones the trace's directory does
 * not. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "common/classes.h"
#include "common/committed.h"
#include "common/drain.h"
#include "common/iter.h"
#include "common/tracedir.h"
#include "common/tsdl.h"

#include "proto/proto.h"

#define MARK FDR__BUFDIR_MARK
#define MAGIC FDR__BUFDIR_MAGIC

struct rec {
    const char *verb;
    int out_top; /* OUT */
    uint64_t events, packets, cut, corrupt, rings, skipped, procs;
    struct progress bar;
    uint64_t total, done; /* bytes of ring files: all, read */
};

/* Bytes of the ring files of DIR (top): the progress bar's total. */
static uint64_t ring_bytes(int top)
{
    uint64_t sum = 0;
    int fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int pd = e->d_name[0] == '.'
                     ? -1
                     : openat(dirfd(d), e->d_name,
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *p = pd < 0 ? NULL : fdopendir(pd);
        if (!p) {
            if (pd >= 0)
                close(pd);
            continue;
        }
        struct dirent *r;
        struct stat st;
        while ((r = readdir(p)) != NULL)
            if (strncmp(r->d_name, "ring-", 5) == 0 &&
                fstatat(dirfd(p), r->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISREG(st.st_mode))
                sum += (uint64_t)st.st_size;
        closedir(p);
    }
    closedir(d);
    return sum;
}

/* A whole file, read into malloc'ed memory (NUL-terminated); *len its
 * size. NULL with errno. */
static char *slurp(int dir, const char *name, size_t *len)
{
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *p = NULL;
    int e = 0;
    if (fstat(fd, &st) < 0)
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = EINVAL;
    else if (st.st_size >= (64 << 20))
        e = EFBIG;
    else if ((p = malloc((size_t)st.st_size + 1)) == NULL)
        e = ENOMEM;
    else if (pread(fd, p, (size_t)st.st_size, 0) != st.st_size) {
        free(p);
        p = NULL;
        e = EIO;
    } else {
        p[st.st_size] = 0;
        *len = (size_t)st.st_size;
    }
    close(fd);
    errno = e;
    return p;
}

struct blob {
    const char *p;
    size_t len;
};

static int emit_blob(int fd, void *arg)
{
    const struct blob *b = arg;
    size_t off = 0;
    while (off < b->len) {
        ssize_t n = write(fd, b->p + off, b->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -errno;
        off += (size_t)n;
    }
    return 0;
}

/* Events in the whole packets of stream file fd. */
static uint64_t count_events(int fd, const struct fdr__classes *t)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size == 0)
        return 0;
    const char *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return 0;
    uint64_t n = 0;
    for (size_t at = 0; at + sizeof(struct fdr__pkt) <= (size_t)st.st_size;) {
        struct fdr__pkt hdr;
        memcpy(&hdr, p + at, sizeof hdr);
        size_t bytes = hdr.packet_size / 8;
        if (bytes < sizeof hdr || bytes > (size_t)st.st_size - at)
            break;
        struct fdr__iter it;
        struct fdr__event ev;
        fdr__iter_init(&it, p + at, hdr.content_size / 8, t);
        while (fdr__iter_next(&it, &ev) > 0)
            n++;
        at += bytes;
    }
    munmap((void *)p, (size_t)st.st_size);
    return n;
}

/* Closed packet seq of the (private) mapping, cut after its last event
 * that parses. 1 when it was cut, 0 when whole or not a packet. */
static int cut_packet(struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                      uint64_t seq, const struct fdr__classes *t)
{
    struct fdr__pkt hdr;
    char *slot = (char *)fdr__ring_slot(h, g, seq);
    if (fdr__pkt_check(slot, g, seq, &hdr) < 0)
        return 0;
    uint64_t last;
    size_t good = fdr__drain_committed(slot, hdr.content_size / 8, t, &hdr, &last);
    if (good == hdr.content_size / 8)
        return 0;
    hdr.content_size = (uint64_t)good * 8;
    hdr.ts_end = last > hdr.ts_begin ? last : hdr.ts_begin;
    memcpy(slot, &hdr, sizeof hdr);
    return 1;
}

/* babeltrace2 takes the discarded count of a stream's first packet as its
 * starting point, not as events lost. A recovered stream that starts in
 * the middle of the ring's (packet first > 0) therefore begins with a
 * header-only packet numbered first - 1 that reports 0 (after the counts
 * fdrd's output reported already were taken off), a copy of the header of
 * the ring's first packet that is still there: the next packets' counts,
 * above it, are reported as lost. 1 when written. */
static int baseline(int out, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                    uint64_t first, uint64_t produced)
{
    struct fdr__pkt hdr;
    struct fdr__open_packet op;
    if (first == 0)
        return 0;
    if (first < produced &&
        fdr__pkt_check(fdr__ring_slot(h, g, first), g, first, &hdr) == 0)
        hdr.ts_end = hdr.ts_begin;
    else if (fdr__committed(h, g->size, &op) == 1 && op.seq == produced &&
             fdr__pkt_check(fdr__ring_slot(h, g, op.seq), g, op.seq, &hdr) == 0)
        hdr.ts_end = hdr.ts_begin;
    else if (produced > 0 && fdr__pkt_check(fdr__ring_slot(h, g, produced - 1), g,
                                            produced - 1, &hdr) == 0)
        hdr.ts_begin = hdr.ts_end;
    else
        return 0;
    hdr.seq = first - 1;
    hdr.discarded = 0;
    hdr.content_size = sizeof hdr * 8;
    if (fdr__packet_write(out, &hdr, NULL) < 0)
        return 0;
    h->out_bytes += sizeof hdr;
    return 1;
}

/* Ring file `name` of process directory dir into out_dir. */
static void one_ring(struct rec *x, int dir, const char *pname, const char *name,
                     int out_dir, const struct fdr__classes *t)
{
    unsigned route, k;
    char tail;
    if (sscanf(name, "ring-%u-%u%c", &route, &k, &tail) != 2)
        return;
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "fdr %s: %s/%s: %s: skipped\n", x->verb, pname, name,
                fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        x->skipped++;
        return;
    }
    struct fdr__buf_hdr *h = NULL;
    struct fdr__ring_geom g = {0, 0, 0, 0};
    if ((uint64_t)st.st_size >= FDR__BUF_HEADER) {
        h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (h == MAP_FAILED)
            h = NULL;
    }
    close(fd);
    if (h) {
        static const char zero[FDR__BUF_HEADER];
        if (memcmp(h, zero, sizeof zero) == 0) {
            /* fdrd died between making the file and writing its header:
             * never given to the program, it holds nothing. */
            munmap(h, (size_t)st.st_size);
            return;
        }
        g = (struct fdr__ring_geom){h->packet_size, h->n_packets, h->index, h->size};
    }
    if (!h || fdr__geom_check(&g, (uint64_t)st.st_size) < 0 ||
        fdr__ring_check(h, &g) < 0 || g.index != k) {
        fprintf(stderr, "fdr %s: %s/%s: not a ring (corrupt header): skipped\n", x->verb,
                pname, name);
        if (h)
            munmap(h, (size_t)st.st_size);
        x->skipped++;
        return;
    }
    uint64_t produced = h->produced, consumed = h->consumed, first;
    if (h->mode == 0) /* discard: what fdrd had not written */
        first = consumed <= produced && produced - consumed <= g.n_packets
                    ? consumed
                    : (produced > g.n_packets ? produced - g.n_packets : 0);
    else /* what the ring still holds: the open packet reuses the oldest slot */
        first = produced >= g.n_packets ? produced - g.n_packets + 1 : 0;
    char sname[48];
    snprintf(sname, sizeof sname, "stream_%u", k);
    int out =
        openat(out_dir, sname, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0 && errno == EEXIST) { /* the same index in another route */
        snprintf(sname, sizeof sname, "stream_%u-%u", k, route);
        out = openat(out_dir, sname, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0644);
    }
    if (out < 0) {
        fprintf(stderr, "fdr %s: %s/%s: cannot write %s: %s: skipped\n", x->verb, pname,
                name, sname, strerror(errno));
        munmap(h, (size_t)st.st_size);
        x->skipped++;
        return;
    }
    /* The counts fdrd's packets reported already are taken off every
     * packet's (drain.c adds out_lost to them, modulo 2^64). */
    uint64_t base = h->mode == 0 ? h->out_reported : 0;
    struct fdr__pkt fp;
    if (first < produced &&
        fdr__pkt_check(fdr__ring_slot(h, &g, first), &g, first, &fp) == 0 &&
        fp.discarded < base)
        base = fp.discarded;
    h->out_bytes = 0;
    h->out_lost = (uint64_t)0 - base;
    baseline(out, h, &g, first, produced);
    for (uint64_t seq = first; seq < produced; seq++) {
        if (((seq - first) & 63) == 0)
            progress_update(&x->bar, x->done + (seq - first) * g.packet_size, x->total);
        x->cut += (uint64_t)cut_packet(h, &g, seq, t);
        uint64_t grown = 0;
        int rc = fdr__drain_packet(out, h, &g, seq, t, &grown);
        h->out_bytes += grown;
        if (rc == 0)
            x->packets++;
        else if (rc == 1)
            x->corrupt++;
        else
            fprintf(stderr, "fdr %s: %s: %s\n", x->verb, sname, strerror(-rc));
    }
    if (fdr__drain_open_packet(out, h, &g, produced, t) < 0)
        x->corrupt++;
    else if (h->out_bytes)
        x->packets++; /* the open packet, or the count after the last one */
    if (h->out_bytes == sizeof(struct fdr__pkt))
        h->out_bytes = 0; /* the baseline alone: nothing to recover */
    x->events += count_events(out, t);
    x->rings++;
    x->done += (uint64_t)st.st_size;
    uint64_t bytes = h->out_bytes;
    close(out);
    if (!bytes)
        unlinkat(out_dir, sname, 0); /* never used */
    munmap(h, (size_t)st.st_size);
}

/* Process directory `pname` of DIR. */
static void one_process(struct rec *x, int top, const char *pname)
{
    int dir = openat(top, pname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0)
        return; /* not a directory: not ours */
    size_t mlen = 0, clen = 0;
    char *meta = slurp(dir, "metadata", &mlen);
    char *cls = meta ? slurp(dir, FDR__CLASSES_FILE, &clen) : NULL;
    struct fdr__classes t;
    struct fdr__line_clock lk;
    const char *why = "";
    size_t at = 0;
    DIR *d = fdopendir(dir);
    if (!d) {
        close(dir);
        free(meta);
        free(cls);
        return;
    }
    int ok = meta && cls && fdr__classes_load(cls, clen, &t, &lk, &why, &at) == 0;
    if (!ok) {
        unsigned n = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            n += strncmp(e->d_name, "ring-", 5) == 0;
        fprintf(stderr, "fdr %s: %s: %s%s: its %u rings skipped\n", x->verb, pname,
                !meta  ? "no metadata"
                : !cls ? "no class file"
                       : "bad class file: ",
                meta && cls ? why : "", n);
        x->skipped += n;
        closedir(d);
        free(meta);
        free(cls);
        return;
    }
    /* What an earlier recovery into OUT left goes first. */
    int out_dir = fdr__tracedir_make(x->out_top, pname);
    struct blob bm = {meta, mlen}, bc = {cls, clen};
    int e = out_dir < 0 ? out_dir : fdr__tracedir_clear(out_dir);
    if (e == 0)
        e = fdr__tracedir_replace(out_dir, FDR__CLASSES_FILE, emit_blob, &bc);
    if (e == 0)
        e = fdr__tracedir_replace(out_dir, "metadata", emit_blob, &bm);
    if (e < 0) {
        fprintf(stderr, "fdr %s: cannot write the trace of %s: %s\n", x->verb, pname,
                strerror(-e));
        x->skipped++;
    } else {
        struct dirent *ent;
        while ((ent = readdir(d)) != NULL)
            one_ring(x, dirfd(d), pname, ent->d_name, out_dir, &t);
        x->procs++;
    }
    if (out_dir >= 0)
        close(out_dir);
    closedir(d);
    free(meta);
    free(cls);
}

/* Makes the missing parents of path, 0700. */
static void make_parents(const char *path)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *q = p + 1; (q = strchr(q, '/')) != NULL; q++) {
        *q = 0;
        mkdir(p, 0700);
        *q = '/';
    }
}

static int cmd_recover(int argc, char **argv)
{
    const char *verb = argv[0];
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {0, 0, 0, 0}};
    const char *out = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else if (c == ':')
            return cli_fail(2, verb, "%s needs a value", argv[optind - 1]);
        else
            return cli_fail(2, verb, "unknown option '%s' (fdr help %s)",
                            argv[optind - 1], verb);
    }
    if (optind >= argc)
        return cli_fail(2, verb, "missing buffer directory (fdr help %s)", verb);
    if (optind + 1 < argc)
        return cli_fail(2, verb, "unexpected argument '%s' (fdr help %s)",
                        argv[optind + 1], verb);
    if (!out || !*out)
        return cli_fail(2, verb, "missing -o OUT (fdr help %s)", verb);
    const char *dir = argv[optind];
    int top = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top < 0)
        return cli_fail(1, verb, "%s: %s", dir, strerror(errno));
    size_t len = 0;
    char *mark = slurp(top, MARK, &len);
    if (!mark || len < strlen(MAGIC) || memcmp(mark, MAGIC, strlen(MAGIC)) != 0) {
        int e = errno;
        free(mark);
        close(top);
        if (!mark && e != ENOENT)
            return cli_fail(1, verb, "%s/%s: %s", dir, MARK, strerror(e));
        return cli_fail(1, verb,
                        "%s is not a buffer directory (no %s file of fdr's: see fdr "
                        "create --file-buffers)",
                        dir, MARK);
    }
    free(mark);
    make_parents(out);
    struct rec x = {.verb = verb};
    x.out_top = fdr__tracedir_open_top(out);
    if (x.out_top < 0) {
        close(top);
        return cli_fail(1, verb, "%s: %s", out, strerror(-x.out_top));
    }
    DIR *d = fdopendir(top);
    if (!d) {
        close(top);
        close(x.out_top);
        return cli_fail(1, verb, "%s: %s", dir, strerror(errno));
    }
    x.total = ring_bytes(dirfd(d));
    progress_start(&x.bar, verb);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && strcmp(e->d_name, MARK) != 0)
            one_process(&x, dirfd(d), e->d_name);
    progress_end(&x.bar);
    closedir(d);
    close(x.out_top);
    printf("recovered %llu events in %llu packets from %llu rings of %llu processes "
           "into %s; %llu rings skipped, %llu corrupt packets skipped, %llu packets "
           "cut\n",
           (unsigned long long)x.events, (unsigned long long)x.packets,
           (unsigned long long)x.rings, (unsigned long long)x.procs, out,
           (unsigned long long)x.skipped, (unsigned long long)x.corrupt,
           (unsigned long long)x.cut);
    return x.skipped || x.corrupt ? 1 : 0;
}

const struct cli_verb cli_verbs_recover[] = {
    {"recover", cmd_recover, "DIR -o OUT",
     "rebuild a trace from the ring files fdrd left (fdr create --file-buffers)",
     "DIR is the buffer directory of a trace created with --file-buffers (fdr create\n"
     "prints it), after fdrd and the programs died. For every ring of every process\n"
     "it writes to OUT/<process>-<pid>/stream_<ring>, beside that process's\n"
     "metadata: the packets fdrd had not written yet (in --overwrite and --snapshot\n"
     "mode: what the ring still holds), then the open packet up to its last\n"
     "committed event. With what fdrd wrote to the trace's output directory before\n"
     "it died, that is every committed event. DIR is only read. Every ring and\n"
     "packet is checked; a corrupt one is skipped with one line and counted.\n"
     "Prints one summary line; exit 0, or 1 when something was skipped or DIR is\n"
     "not a buffer directory, 2 for a usage error.\n"},
    {0},
};
