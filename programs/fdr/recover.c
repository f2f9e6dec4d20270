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
 * not.
 *
 * Exit 0 promises that OUT reads: the metadata is written again from the
 * parameters the process's metadata states and its class file's classes
 * (a damaged metadata file cannot disagree with the streams), packets whose
 * time goes back are skipped, and what was written for each process is
 * read back with the shared reader (common/reader.h); a stream that does
 * not read whole is removed and its ring named on stderr. */
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
#include "common/pathwalk.h"
#include "common/reader.h"
#include "common/tracedir.h"
#include "common/tsdl.h"

#include "proto/proto.h"

#define MARK FDR__BUFDIR_MARK
#define MAGIC FDR__BUFDIR_MAGIC

struct rec {
    const char *verb;
    const char *out;
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

/* Closed packet seq of the (private) mapping, cut after its last event
 * that parses; its end time made to cover its events. A packet that
 * begins before *end (the end of the last one kept: a header overwritten
 * with other times) is made unreadable, so that the drain skips it as
 * corrupt: readers (babeltrace2's muxer) stop at a stream whose time goes
 * back. 1 when it was cut, 0 when whole or not a packet. */
static int cut_packet(struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                      uint64_t seq, const struct fdr__classes *t, uint64_t *end)
{
    struct fdr__pkt hdr;
    char *slot = (char *)fdr__ring_slot(h, g, seq);
    if (fdr__pkt_check(slot, g, seq, &hdr) < 0)
        return 0;
    if (hdr.ts_begin < *end) {
        memset(slot, 0, sizeof hdr.magic);
        return 0;
    }
    uint64_t last;
    size_t good =
        fdr__packet_prefix(slot, hdr.content_size / 8, &hdr, t, hdr.ts_end, &last);
    int cut = good != hdr.content_size / 8;
    hdr.content_size = (uint64_t)good * 8;
    if (cut || hdr.ts_end < last)
        hdr.ts_end = last; /* last >= ts_begin */
    memcpy(slot, &hdr, sizeof hdr);
    *end = hdr.ts_end;
    return cut;
}

/* The open packet of the (private) mapping, made unreadable when it
 * begins before end (as cut_packet). */
static void check_open(struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                       uint64_t produced, uint64_t end)
{
    struct fdr__open_packet op;
    struct fdr__pkt hdr;
    char *slot = (char *)fdr__ring_slot(h, g, produced);
    if (fdr__committed(h, g->size, &op) == 1 && op.seq == produced &&
        fdr__pkt_check(slot, g, produced, &hdr) == 0 && hdr.ts_begin < end)
        memset(slot, 0, sizeof hdr.magic);
}

/* babeltrace2 takes the discarded count of a stream's first packet as its
 * starting point, not as events lost. A recovered stream that starts in
 * the middle of the ring's (packet first > 0) therefore begins with a
 * header-only packet numbered first - 1 that reports 0 (after the counts
 * fdrd's output reported already were taken off), a copy of the header of
 * the ring's first valid packet that is still there: the next packets'
 * counts, above it, are reported as lost. Its time when written (the time
 * the next packets may not go back from), else 0; st moves past it. */
static uint64_t baseline(int out, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                         uint64_t first, uint64_t produced, struct fdr__stream_state *st)
{
    struct fdr__pkt hdr;
    struct fdr__open_packet op;
    uint64_t seq = first;
    if (first == 0)
        return 0;
    while (seq < produced && fdr__pkt_check(fdr__ring_slot(h, g, seq), g, seq, &hdr) < 0)
        seq++;
    if (seq < produced)
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
    fdr__stream_advance(st, &hdr);
    return hdr.ts_end;
}

/* The parameters of a process's metadata (common/tsdl.c writes it), read
 * back from its text: what the rebuilt metadata is written from, with the
 * class file's classes, so that the two always agree. Each value is looked
 * up by its line; a missing or malformed one makes the metadata unreadable
 * (zeroed, truncated before its clock, overwritten). */
struct meta {
    struct fdr__tsdl_params p;
    char hostname[256], procname[256], version[64], clock_desc[256];
};

/* The string value of `key = "..."` (a line of its own) unescaped into out
 * (common/tsdl.c's put_escaped: \\, \" and \xHH). 0, or -1. */
static int meta_str(const char *m, const char *key, char *out, size_t cap)
{
    char k[64];
    snprintf(k, sizeof k, "\n\t%s = \"", key);
    const char *s = strstr(m, k);
    if (!s)
        return -1;
    size_t n = 0;
    for (s += strlen(k); *s && *s != '"' && *s != '\n'; s++) {
        char ch = *s;
        if (ch == '\\' && s[1] == 'x' && s[2] && s[3]) {
            char hex[3] = {s[2], s[3], 0}, *end;
            ch = (char)strtoul(hex, &end, 16);
            if (*end)
                return -1;
            s += 3;
        } else if (ch == '\\' && (s[1] == '\\' || s[1] == '"')) {
            ch = *++s;
        }
        if (n + 1 >= cap)
            return -1;
        out[n++] = ch;
    }
    out[n] = 0;
    return *s == '"' ? 0 : -1;
}

/* The number of `key = N;` (a line of its own). 0, or -1. */
static int meta_num(const char *m, const char *key, int is_signed, uint64_t *v)
{
    char k[64];
    snprintf(k, sizeof k, "\n\t%s = ", key);
    const char *s = strstr(m, k);
    if (!s)
        return -1;
    s += strlen(k);
    if (!(*s >= '0' && *s <= '9') && !(is_signed && *s == '-'))
        return -1;
    char *end;
    errno = 0;
    *v = is_signed ? (uint64_t)strtoll(s, &end, 10) : strtoull(s, &end, 10);
    return errno || *end != ';' ? -1 : 0;
}

/* Parses metadata m (NUL-terminated) into x. NULL, or what is wrong. */
static const char *meta_parse(const char *m, struct meta *x)
{
    static const char head[] = "/* CTF 1.8 */\n";
    char uuid[64];
    uint64_t v[7];
    if (strncmp(m, head, strlen(head)) != 0)
        return "no CTF 1.8 header";
    if (meta_str(m, "uuid", uuid, sizeof uuid) < 0 || strlen(uuid) != 36)
        return "no trace uuid";
    for (unsigned i = 0, n = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (uuid[i] != '-')
                return "bad trace uuid";
            continue;
        }
        char hex[3] = {uuid[i], uuid[i + 1], 0}, *end;
        x->p.uuid[n++] = (uint8_t)strtoul(hex, &end, 16);
        if (*end || !uuid[i + 1] || uuid[i + 1] == '-')
            return "bad trace uuid";
        i++;
    }
    if (meta_str(m, "hostname", x->hostname, sizeof x->hostname) < 0 ||
        meta_str(m, "procname", x->procname, sizeof x->procname) < 0 ||
        meta_str(m, "tracer_version", x->version, sizeof x->version) < 0 ||
        meta_num(m, "vpid", 1, &v[0]) < 0 || meta_num(m, "tracer_major", 0, &v[1]) < 0 ||
        meta_num(m, "tracer_minor", 0, &v[2]) < 0 ||
        meta_num(m, "tracer_patch", 0, &v[3]) < 0)
        return "no env block";
    if (meta_str(m, "description", x->clock_desc, sizeof x->clock_desc) < 0 ||
        meta_num(m, "freq", 0, &v[4]) < 0 || meta_num(m, "offset_s", 1, &v[5]) < 0 ||
        meta_num(m, "offset", 0, &v[6]) < 0 || v[4] == 0)
        return "no clock";
    x->p.pid = (long)(int64_t)v[0];
    for (int i = 0; i < 3; i++)
        x->p.version[i] = (unsigned)v[1 + i];
    x->p.clock_freq = v[4];
    x->p.clock_offset_s = (int64_t)v[5];
    x->p.clock_offset = v[6];
    x->p.hostname = x->hostname;
    x->p.procname = x->procname;
    x->p.version_string = x->version;
    x->p.clock_desc = x->clock_desc;
    return NULL;
}

/* The field names of the classes of t are TSDL identifiers once prefixed
 * with '_', distinct within a class, and their types are known: else the
 * metadata written from them would not parse (fdr__classes_load checks
 * bounds, not this). NULL, or what is wrong. */
static const char *classes_tsdl_check(const struct fdr__classes *t)
{
    for (uint32_t id = 1; id <= t->n && id <= FDR__MAX_CLASSES; id++) {
        const struct fdr__class *c = fdr__classes_get(t, (uint16_t)id);
        for (unsigned i = 0; c && i < c->nfields && i < FDR_MAX_FIELDS; i++) {
            const char *name = fdr__classes_str(t, c->names[i]);
            if (c->types[i] < FDR__T_BOOL || c->types[i] > FDR__T_LAST)
                return "a field of unknown type";
            if (name[strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789_")])
                return "a field name that is not an identifier";
            for (unsigned j = 0; j < i; j++)
                if (strcmp(name, fdr__classes_str(t, c->names[j])) == 0)
                    return "two fields of one class with the same name";
        }
    }
    return NULL;
}

static int emit_meta(int fd, void *arg)
{
    char buf[4096];
    return fdr__tsdl_emit(fd, buf, sizeof buf, arg);
}

/* Ring file `name` of process directory dir into out_dir; the name of the
 * stream file written, if any, into wrote (else ""). */
static void one_ring(struct rec *x, int dir, const char *pname, const char *name,
                     int out_dir, const struct fdr__classes *t, char wrote[48])
{
    wrote[0] = 0;
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
    struct fdr__stream_state sst = {0, 0, 0, 0};
    uint64_t corrupt = 0, end = baseline(out, h, &g, first, produced, &sst);
    for (uint64_t seq = first; seq < produced; seq++) {
        if (((seq - first) & 63) == 0)
            progress_update(&x->bar, x->done + (seq - first) * g.packet_size, x->total);
        x->cut += (uint64_t)cut_packet(h, &g, seq, t, &end);
        uint64_t grown = 0;
        int rc = fdr__drain_packet(out, h, &g, seq, t, &sst, &grown);
        h->out_bytes += grown;
        if (rc == 0)
            x->packets++;
        else if (rc == 1)
            corrupt++;
        else
            fprintf(stderr, "fdr %s: %s/%s: %s: %s\n", x->verb, pname, name, sname,
                    strerror(-rc));
    }
    check_open(h, &g, produced, end);
    if (fdr__drain_open_packet(out, h, &g, produced, t, &sst) < 0)
        corrupt++;
    else if (h->out_bytes)
        x->packets++; /* the open packet, or the count after the last one */
    if (h->out_bytes == sizeof(struct fdr__pkt))
        h->out_bytes = 0; /* the baseline alone: nothing to recover */
    if (corrupt)
        fprintf(stderr, "fdr %s: %s/%s: %llu corrupt packets skipped\n", x->verb, pname,
                name, (unsigned long long)corrupt);
    x->corrupt += corrupt;
    x->rings++;
    x->done += (uint64_t)st.st_size;
    uint64_t bytes = h->out_bytes;
    close(out);
    if (!bytes)
        unlinkat(out_dir, sname, 0); /* never used */
    else
        snprintf(wrote, 48, "%s", sname);
    munmap(h, (size_t)st.st_size);
}

/* A stream file written for a ring, and what the reader found wrong in it. */
struct written {
    char ring[256], stream[48];
    int bad;
    uint64_t off;
    char what[160];
};

struct check {
    struct written *w;
    size_t n;
    int other; /* a problem outside the stream files (class file) */
    char what[200];
};

static void check_diag(void *ctx, const char *file, uint64_t off, const char *what)
{
    struct check *k = ctx;
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->w[i].stream, base) == 0) {
            if (!k->w[i].bad++) {
                k->w[i].off = off;
                snprintf(k->w[i].what, sizeof k->w[i].what, "%s", what);
            }
            return;
        }
    if (!k->other++)
        snprintf(k->what, sizeof k->what, "%s: %s", base, what);
}

/* Reads back what was written for process pname (OUT/pname) with the
 * shared reader (common/reader.h: class file, every packet checked, every
 * event walked), the way `fdr print` and babeltrace2 will: a stream file
 * that does not read whole is removed and its ring named; a process whose
 * directory does not read at all is removed. Adds the events read to
 * x->events. */
static void verify(struct rec *x, int out_dir, const char *pname, struct written *w,
                   size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", x->out, pname);
    struct check k = {w, n, 0, ""};
    struct fdr__reader *r = NULL;
    int rc = n ? fdr__reader_open(path, check_diag, &k, &r) : 0;
    if (rc < 0 && rc != -ENODATA && !k.other)
        snprintf(k.what, sizeof k.what, "%s", strerror(-rc)), k.other = 1;
    struct fdr__rd_event ev;
    while (r && fdr__reader_next(r, &ev) == 1)
        ;
    if (k.other) {
        fprintf(stderr,
                "fdr %s: %s: what was rebuilt does not read (%s): its %zu rings "
                "skipped\n",
                x->verb, pname, k.what, n);
        x->skipped += n;
        fdr__tracedir_clear(out_dir);
        unlinkat(x->out_top, pname, AT_REMOVEDIR);
        fdr__reader_close(r);
        return;
    }
    for (unsigned i = 0; r && i < fdr__reader_streams(r); i++) {
        struct fdr__rd_stream_info s;
        char name[48];
        fdr__reader_stream(r, i, &s);
        snprintf(name, sizeof name, "stream_%u", s.stream);
        for (size_t j = 0; j < n; j++)
            if (!w[j].bad && strcmp(w[j].stream, name) == 0)
                x->events += s.events;
    }
    fdr__reader_close(r);
    for (size_t i = 0; i < n; i++) {
        if (!w[i].bad)
            continue;
        fprintf(stderr,
                "fdr %s: %s/%s: what was rebuilt does not read (%s at byte %llu "
                "of %s): skipped\n",
                x->verb, pname, w[i].ring, w[i].what, (unsigned long long)w[i].off,
                w[i].stream);
        unlinkat(out_dir, w[i].stream, 0);
        x->skipped++;
    }
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
    /* The metadata is written again from its own parameters and the
     * class file's classes: a metadata file cut or overwritten after its
     * clock, or older than the class file, would not describe the events
     * the rebuilt streams hold. */
    struct meta mp;
    memset(&mp, 0, sizeof mp);
    const char *bad = meta_parse(meta, &mp), *bad_cls = classes_tsdl_check(&t);
    if (bad || bad_cls) {
        unsigned n = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            n += strncmp(e->d_name, "ring-", 5) == 0;
        fprintf(stderr, "fdr %s: %s: %s (%s): its %u rings skipped\n", x->verb, pname,
                bad ? "metadata unreadable" : "bad class file", bad ? bad : bad_cls, n);
        x->skipped += n;
        closedir(d);
        free(meta);
        free(cls);
        return;
    }
    mp.p.classes = &t;
    /* What an earlier recovery into OUT left goes first. */
    int out_dir = fdr__tracedir_make(x->out_top, pname);
    struct blob bc = {cls, clen};
    int e = out_dir < 0 ? out_dir : fdr__tracedir_clear(out_dir);
    if (e == 0)
        e = fdr__tracedir_replace(out_dir, FDR__CLASSES_FILE, emit_blob, &bc);
    if (e == 0)
        e = fdr__tracedir_replace(out_dir, "metadata", emit_meta, &mp.p);
    if (e < 0) {
        fprintf(stderr, "fdr %s: cannot write the trace of %s: %s\n", x->verb, pname,
                strerror(-e));
        x->skipped++;
    } else {
        struct written *w = NULL;
        size_t n = 0, cap = 0;
        struct dirent *ent;
        while ((ent = readdir(d)) != NULL) {
            if (n == cap) {
                struct written *m = realloc(w, (cap = cap ? 2 * cap : 16) * sizeof *w);
                if (!m) {
                    fprintf(stderr, "fdr %s: %s: out of memory\n", x->verb, pname);
                    x->skipped++;
                    break;
                }
                w = m;
            }
            one_ring(x, dirfd(d), pname, ent->d_name, out_dir, &t, w[n].stream);
            if (w[n].stream[0]) {
                snprintf(w[n].ring, sizeof w[n].ring, "%s", ent->d_name);
                w[n].bad = 0;
                n++;
            }
        }
        verify(x, out_dir, pname, w, n);
        free(w);
        x->procs++;
    }
    if (out_dir >= 0)
        close(out_dir);
    closedir(d);
    free(meta);
    free(cls);
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
    struct rec x = {.verb = verb, .out = out};
    /* Walked, not trusted (common/pathwalk.h): its missing parents made,
     * no symlink followed where another user could have planted it. */
    char at[4096];
    x.out_top = fdr__pathwalk(out, 0755 | FDR__WALK_PARENTS, at, sizeof at);
    if (x.out_top < 0) {
        close(top);
        return cli_fail(1, verb, "%s: %s: %s", out, at,
                        fdr__pathwalk_strerror(-x.out_top));
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
     "What was written is read back (every packet and event); a stream that does\n"
     "not read is removed, its ring named: after exit 0, OUT reads whole.\n"
     "Prints one summary line; exit 0, or 1 when something was skipped or DIR is\n"
     "not a buffer directory, 2 for a usage error.\n"},
    {0},
};
