/* SPDX-License-Identifier: MIT */
/* reader.c - trace directories read back, every stream of every process
 * merged by time (common/reader.h).
 *
 * Each stream file has a cursor: its file descriptor, the offset of its
 * next packet and a buffer holding the content of its current packet (read
 * with pread, validated with fdr__pkt_check, walked with fdr__iter_next),
 * and the next event, peeked. A binary heap of cursors, keyed by that
 * event's clock value, gives the events in time order; each step costs
 * one event decode and O(log streams), and reads a packet only when the
 * previous one is used up. Nothing here trusts a byte of the files: sizes
 * come from checked headers and reads are bounded by the file. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/iter.h"
#include "common/reader.h"
#include "common/ring.h"
#include "common/swap.h"
#include "common/tracedir.h"
#include "common/validate.h"

/* A class file holds at most 16384 records of 84 bytes and its pool; a
 * larger one is refused before it is read. */
#define CLASS_FILE_MAX (64u << 20)
/* Bytes read at a time while looking for the next packet header. */
#define RESYNC_CHUNK (64u << 10)

struct cursor {
    struct fdr__rd_proc *proc;
    char *path;
    int fd;
    unsigned stream;
    uint64_t size;    /* file size when opened */
    uint64_t off;     /* offset of the next packet */
    uint64_t pkt_off; /* offset of the current packet */
    uint64_t next_seq;
    int have_seq, loaded, done;
    char *buf;
    size_t cap;
    struct fdr__pkt hdr;
    struct fdr__iter it;
    struct fdr__event ev; /* the next event, when in the heap */
    uint64_t packets, events, discarded, lost;
    uint64_t last_gap; /* packets the current one's number says were lost */
    unsigned problems; /* reported for this file */
};

struct fdr__reader {
    fdr__reader_diag_fn diag;
    void *ctx;
    uint64_t errors, bytes;
    struct fdr__rd_proc **procs;
    unsigned n_procs, cap_procs;
    char **class_files; /* one per process, owned */
    struct cursor *cur;
    unsigned n_cur, cap_cur;
    struct cursor **heap;
    unsigned n_heap;
    struct cursor *pending; /* heap[0], to move on at the next call */
};

static void diag(struct fdr__reader *r, const char *file, uint64_t off, const char *what)
{
    r->errors++;
    if (r->diag)
        r->diag(r->ctx, file, off, what);
}

/* A problem in a stream file: the first few are reported, then one line
 * says the rest of that file's problems are only counted (a class file
 * that does not match its streams would give one per packet). */
#define FILE_PROBLEMS_SHOWN 5
static void cdiag(struct fdr__reader *r, struct cursor *c, uint64_t off, const char *what)
{
    c->problems++;
    if (c->problems <= FILE_PROBLEMS_SHOWN) {
        diag(r, c->path, off, what);
        return;
    }
    r->errors++;
    if (c->problems == FILE_PROBLEMS_SHOWN + 1 && r->diag)
        r->diag(r->ctx, c->path, off, "more problems in this file, not shown");
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, a);
    size_t n = a;
    if (a && dir[a - 1] != '/')
        p[n++] = '/';
    memcpy(p + n, name, b + 1);
    return p;
}

static int is_stream_name(const char *s, unsigned *index)
{
    if (strncmp(s, "stream_", 7) != 0 || !s[7])
        return 0;
    unsigned long v = 0;
    for (s += 7; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000000ul)
            return 0;
        v = v * 10 + (unsigned long)(*s - '0');
    }
    *index = (unsigned)v;
    return 1;
}

/* Reads exactly n bytes at off; the count read (short at the end of file),
 * or -errno. */
static ssize_t pread_full(int fd, void *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

/* ---- the heap of cursors ------------------------------------------------- */

static int before(const struct cursor *a, const struct cursor *b)
{
    if (a->ev.ts != b->ev.ts)
        return a->ev.ts < b->ev.ts;
    if (a->proc->index != b->proc->index)
        return a->proc->index < b->proc->index;
    return a->stream < b->stream;
}

static void sift_down(struct fdr__reader *r, unsigned i)
{
    struct cursor **h = r->heap;
    for (;;) {
        unsigned l = 2 * i + 1, m = i;
        if (l < r->n_heap && before(h[l], h[m]))
            m = l;
        if (l + 1 < r->n_heap && before(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        struct cursor *t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void sift_up(struct fdr__reader *r, unsigned i)
{
    struct cursor **h = r->heap;
    while (i > 0) {
        unsigned p = (i - 1) / 2;
        if (!before(h[i], h[p]))
            return;
        struct cursor *t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

/* ---- one stream ------------------------------------------------------------ */

static void cursor_end(struct cursor *c)
{
    c->done = 1;
    c->loaded = 0;
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->buf);
    c->buf = NULL;
    c->cap = 0;
}

/* Checks the header at c->off (already read into raw): 0 when it is a
 * packet of this stream that comes after the previous one. */
static int header_ok(struct cursor *c, const struct fdr__pkt *raw, struct fdr__pkt *h,
                     const char **why)
{
    struct fdr__ring_geom g = {FDR__PACKET_MAX, 2, c->stream, 0};
    if (fdr__pkt_check(raw, &g, raw->seq, h) != 0) {
        *why = raw->magic != FDR__CTF_MAGIC ? "invalid packet header (bad magic)"
               : raw->stream_instance_id != c->stream
                   ? "invalid packet header (stream id is not the file's)"
                   : "invalid packet header (sizes)";
        return -1;
    }
    /* A copy of an older packet goes back in time too. One that does not
     * follows a packet whose number was wrong (a scribbled header): refused,
     * it would take the rest of the stream with it (cursor_load). */
    if (c->have_seq && h->seq < c->next_seq && h->ts_begin < c->hdr.ts_end) {
        *why = "packet sequence number goes back";
        return -1;
    }
    return 0;
}

/* After a bad header at c->off: the offset of the next valid packet header
 * of this stream, found by its magic, or the end of the file. */
static uint64_t resync(struct cursor *c, uint64_t from)
{
    char *chunk = malloc(RESYNC_CHUNK);
    if (!chunk)
        return c->size;
    const uint32_t magic =
        c->proc->swapped ? __builtin_bswap32(FDR__CTF_MAGIC) : FDR__CTF_MAGIC;
    uint64_t at = from;
    while (at + sizeof(struct fdr__pkt) <= c->size) {
        ssize_t n = pread_full(c->fd, chunk, RESYNC_CHUNK, at);
        if (n < 4)
            break;
        for (ssize_t i = 0; i + 4 <= n; i++) {
            if (memcmp(chunk + i, &magic, 4) != 0)
                continue;
            struct fdr__pkt raw, h;
            const char *why;
            if (at + (uint64_t)i + sizeof raw > c->size)
                break;
            if (pread_full(c->fd, &raw, sizeof raw, at + (uint64_t)i) != sizeof raw)
                continue;
            if (c->proc->swapped)
                fdr__pkt_swap_header(&raw);
            if (header_ok(c, &raw, &h, &why) == 0) {
                free(chunk);
                return at + (uint64_t)i;
            }
        }
        at += (uint64_t)n - 3; /* a magic may straddle two chunks */
    }
    free(chunk);
    return c->size;
}

/* Reads the next valid packet: 1, or 0 at the end of the stream. */
static int cursor_load(struct fdr__reader *r, struct cursor *c)
{
    char what[160];
    while (!c->done && c->off < c->size) {
        struct fdr__pkt raw, h;
        const char *why;
        if (c->size - c->off < sizeof raw) {
            snprintf(what, sizeof what, "truncated packet header (%llu bytes at the end)",
                     (unsigned long long)(c->size - c->off));
            cdiag(r, c, c->off, what);
            break;
        }
        ssize_t n = pread_full(c->fd, &raw, sizeof raw, c->off);
        if (n != (ssize_t)sizeof raw) {
            cdiag(r, c, c->off, n < 0 ? strerror((int)-n) : "file shrank while read");
            break;
        }
        if (c->proc->swapped)
            fdr__pkt_swap_header(&raw);
        if (header_ok(c, &raw, &h, &why) != 0) {
            cdiag(r, c, c->off, why);
            c->off = resync(c, c->off + 1);
            continue;
        }
        uint64_t psize = h.packet_size / 8, csize = h.content_size / 8;
        if (psize > c->size - c->off) {
            snprintf(what, sizeof what, "truncated packet (%llu of %llu bytes)",
                     (unsigned long long)(c->size - c->off), (unsigned long long)psize);
            cdiag(r, c, c->off, what);
            /* The file's end, or a size scribbled larger: the packets after
             * it are still read. */
            c->off = resync(c, c->off + 1);
            continue;
        }
        if (csize > c->cap) {
            char *b = realloc(c->buf, csize);
            if (!b) {
                cdiag(r, c, c->off, "out of memory");
                break;
            }
            c->buf = b;
            c->cap = csize;
        }
        n = pread_full(c->fd, c->buf, csize, c->off);
        if (n != (ssize_t)csize) {
            cdiag(r, c, c->off, n < 0 ? strerror((int)-n) : "file shrank while read");
            break;
        }
        if (c->proc->swapped) /* a program of the other byte order */
            fdr__pkt_swap(c->buf, csize, &c->proc->classes);
        if (c->have_seq && h.seq < c->next_seq) {
            /* Its times follow the last packet's (header_ok): that one's
             * number was wrong, and the gap it made no loss. */
            cdiag(r, c, c->off,
                  "packet sequence number goes back, its times do not: read");
            c->lost -= c->last_gap;
        }
        c->last_gap = c->have_seq && h.seq > c->next_seq ? h.seq - c->next_seq : 0;
        c->lost += c->last_gap;
        c->next_seq = h.seq + 1;
        c->have_seq = 1;
        c->hdr = h;
        c->packets++;
        c->discarded = h.discarded;
        c->pkt_off = c->off;
        c->off += psize;
        fdr__iter_init(&c->it, c->buf, csize, &c->proc->classes);
        c->loaded = 1;
        return 1;
    }
    cursor_end(c);
    return 0;
}

/* Peeks the next event of c into c->ev: 1, or 0 at the end of the stream. */
static int cursor_step(struct fdr__reader *r, struct cursor *c)
{
    for (;;) {
        if (!c->loaded && !cursor_load(r, c))
            return 0;
        int k = fdr__iter_next(&c->it, &c->ev);
        if (k > 0)
            return 1;
        if (k < 0) {
            char what[120];
            uint16_t id;
            memcpy(&id, c->it.p, 2);
            snprintf(what, sizeof what,
                     "invalid event (class id %u%s); rest of the packet skipped", id,
                     fdr__classes_get(&c->proc->classes, id)
                         ? ", payload past the packet's end"
                         : " unknown");
            cdiag(r, c, c->pkt_off + (uint64_t)(c->it.p - c->buf), what);
        }
        c->loaded = 0;
    }
}

/* ---- processes ------------------------------------------------------------- */

static int add_cursor(struct fdr__reader *r, struct fdr__rd_proc *p, int dfd,
                      const char *name, unsigned index)
{
    if (r->n_cur == r->cap_cur) {
        unsigned cap = r->cap_cur ? 2 * r->cap_cur : 16;
        struct cursor *n = realloc(r->cur, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        r->cur = n;
        r->cap_cur = cap;
    }
    char *path = join(p->path, name);
    if (!path)
        return -ENOMEM;
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        diag(r, path, 0, fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        free(path);
        return 0;
    }
    r->bytes += (uint64_t)st.st_size;
    struct cursor *c = &r->cur[r->n_cur++];
    memset(c, 0, sizeof *c);
    c->proc = p;
    c->path = path;
    c->fd = fd;
    c->stream = index;
    c->size = (uint64_t)st.st_size;
    p->n_streams++;
    return 0;
}

struct sname {
    unsigned index;
    char name[24];
};

static int by_index(const void *a, const void *b)
{
    unsigned x = ((const struct sname *)a)->index, y = ((const struct sname *)b)->index;
    return (x > y) - (x < y);
}

/* The class file of the process in dfd, or NULL (reported). */
static char *load_classes(struct fdr__reader *r, struct fdr__rd_proc *p, int dfd)
{
    char *path = join(p->path, FDR__CLASSES_FILE);
    if (!path)
        return NULL;
    char *b = NULL;
    int fd = openat(dfd, FDR__CLASSES_FILE, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    const char *why = NULL;
    size_t at = 0;
    if (fd < 0 || fstat(fd, &st) < 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if ((uint64_t)st.st_size > CLASS_FILE_MAX)
        why = "class file larger than 64 MiB";
    else if (!(b = malloc((size_t)st.st_size + 1)))
        why = "out of memory";
    if (!why) {
        ssize_t n = pread_full(fd, b, (size_t)st.st_size, 0);
        if (n < 0) {
            why = strerror((int)-n);
        } else {
            /* a program of the other byte order: its classes, then each
             * of its packets (cursor_load), become this machine's */
            p->swapped = fdr__classes_swap(b, (size_t)n);
            if (fdr__classes_load(b, (size_t)n, &p->classes, &p->clock, &why, &at) == 0)
                r->bytes += (uint64_t)n;
        }
    }
    if (fd >= 0)
        close(fd);
    if (why) {
        diag(r, path, at, why);
        free(b);
        b = NULL;
    }
    free(path);
    return b;
}

/* Adds the process whose trace is in directory path (open as dfd). */
static int add_proc(struct fdr__reader *r, const char *path, int dfd)
{
    if (r->n_procs == r->cap_procs) {
        unsigned cap = r->cap_procs ? 2 * r->cap_procs : 8;
        struct fdr__rd_proc **n = realloc(r->procs, cap * sizeof *n);
        char **f = realloc(r->class_files, cap * sizeof *f);
        if (n)
            r->procs = n;
        if (f)
            r->class_files = f;
        if (!n || !f)
            return -ENOMEM;
        r->cap_procs = cap;
    }
    struct fdr__rd_proc *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(path))) {
        free(p);
        return -ENOMEM;
    }
    /* The name: the last component, without its "-<pid>". */
    const char *base = path + strlen(path);
    while (base > path && base[-1] == '/')
        base--;
    const char *end = base;
    while (base > path && base[-1] != '/')
        base--;
    const char *dash = end;
    while (dash > base && dash[-1] >= '0' && dash[-1] <= '9')
        dash--;
    if (dash > base + 1 && dash[-1] == '-' && dash < end && end - dash <= 10) {
        p->pid = (uint32_t)strtoul(dash, NULL, 10);
        end = dash - 1;
    }
    p->name = strndup(base, (size_t)(end - base));
    if (!p->name) {
        free(p->path);
        free(p);
        return -ENOMEM;
    }
    p->unfinished = fdr__tracedir_unfinished(dfd, p->pid);
    if (p->unfinished < 0) {
        diag(r, path, 0,
             "its open mark (" FDR__OPEN_FILE ") is not an empty file: ignored");
        p->unfinished = 0;
    }
    char *cf = NULL;
    int no_classes = faccessat(dfd, FDR__CLASSES_FILE, F_OK, 0) != 0;
    if (p->unfinished == 1 && no_classes) {
        /* Begun, nothing written yet: no trace so far, and no error. */
    } else if (p->unfinished >= 2 && no_classes) {
        /* Killed before its writer wrote anything: said, not "no trace". */
        char what[300];
        snprintf(what, sizeof what,
                 p->unfinished == 2
                     ? "process %u ended before writing any of this trace (killed "
                       "with its drain helper, or without one): the events it recorded "
                       "are lost, and no count says how many"
                     : "fdrd ended before writing any of this trace of process %u "
                       "(killed, and not started again while the process lived): its "
                       "events are lost, and no count says how many",
                 p->pid);
        diag(r, path, 0, what);
    } else {
        cf = load_classes(r, p, dfd);
    }
    if (!cf) {
        free(p->name);
        free(p->path);
        free(p);
        return 0; /* reported; the process is skipped */
    }
    p->index = r->n_procs;
    r->class_files[r->n_procs] = cf;
    r->procs[r->n_procs++] = p;

    /* Its stream files, in index order; other sizes counted as trace bytes. */
    int d2 = dup(dfd);
    DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
    if (!d) {
        int e = errno;
        if (d2 >= 0)
            close(d2);
        diag(r, path, 0, strerror(e));
        return 0;
    }
    struct sname *names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int err = 0;
    while ((e = readdir(d))) {
        unsigned idx;
        if (strcmp(e->d_name, "metadata") == 0) {
            struct stat st;
            if (fstatat(dfd, "metadata", &st, 0) == 0 && S_ISREG(st.st_mode))
                r->bytes += (uint64_t)st.st_size;
        }
        if (!is_stream_name(e->d_name, &idx) || strlen(e->d_name) >= sizeof names->name)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            struct sname *x = realloc(names, cap * sizeof *x);
            if (!x) {
                err = -ENOMEM;
                break;
            }
            names = x;
        }
        names[n].index = idx;
        memcpy(names[n].name, e->d_name, strlen(e->d_name) + 1);
        n++;
    }
    closedir(d);
    if (names)
        qsort(names, n, sizeof *names, by_index);
    for (size_t i = 0; i < n && !err; i++)
        err = add_cursor(r, p, dfd, names[i].name, names[i].index);
    free(names);
    return err;
}

/* 1 when directory dfd holds a process's trace (a class file, metadata, a
 * stream file, or the open mark of one begun: common/tracedir.h). */
static int looks_like_trace(int dfd)
{
    if (faccessat(dfd, FDR__CLASSES_FILE, F_OK, 0) == 0 ||
        faccessat(dfd, "metadata", F_OK, 0) == 0 ||
        faccessat(dfd, FDR__OPEN_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
        faccessat(dfd, FDR__OPEN_FILE_FDRD, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        return 1;
    return faccessat(dfd, "stream_0", F_OK, 0) == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int fdr__reader_open(const char *path, fdr__reader_diag_fn diagfn, void *ctx,
                     struct fdr__reader **out)
{
    *out = NULL;
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
    if (dfd < 0)
        return -errno;
    struct fdr__reader *r = calloc(1, sizeof *r);
    if (!r) {
        close(dfd);
        return -ENOMEM;
    }
    r->diag = diagfn;
    r->ctx = ctx;
    int err = 0;
    if (looks_like_trace(dfd)) {
        err = add_proc(r, path, dfd);
    } else {
        /* The output layout: one directory per process, in name order. */
        int d2 = dup(dfd);
        DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
        char **subs = NULL;
        size_t n = 0, cap = 0;
        if (!d) {
            err = -errno;
            if (d2 >= 0)
                close(d2);
        }
        struct dirent *e;
        while (d && !err && (e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                char **x = realloc(subs, cap * sizeof *x);
                if (!x) {
                    err = -ENOMEM;
                    break;
                }
                subs = x;
            }
            if (!(subs[n] = strdup(e->d_name))) {
                err = -ENOMEM;
                break;
            }
            n++;
        }
        if (d)
            closedir(d);
        if (subs)
            qsort(subs, n, sizeof *subs, by_name);
        for (size_t i = 0; i < n; i++) {
            int sfd = err ? -1
                          : openat(dfd, subs[i],
                                   O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
            if (sfd >= 0) {
                if (looks_like_trace(sfd)) {
                    char *sp = join(path, subs[i]);
                    err = sp ? add_proc(r, sp, sfd) : -ENOMEM;
                    free(sp);
                }
                close(sfd);
            } else if (!err && errno != ENOTDIR && errno != ENOENT) {
                /* A directory we may not read (EACCES...): said, skipped. */
                int e = errno;
                char *sp = join(path, subs[i]);
                if (sp)
                    diag(r, sp, 0, strerror(e));
                free(sp);
            }
            free(subs[i]);
        }
        free(subs);
    }
    close(dfd);
    if (!err && r->n_procs == 0)
        err = -ENODATA;
    if (!err && r->n_cur && !(r->heap = malloc(r->n_cur * sizeof *r->heap)))
        err = -ENOMEM;
    if (err) {
        fdr__reader_close(r);
        return err;
    }
    /* Line time starts at the first process's start. */
    uint64_t ref = UINT64_MAX;
    for (unsigned i = 0; i < r->n_procs; i++)
        if (r->procs[i]->clock.freq && r->procs[i]->clock.start < ref)
            ref = r->procs[i]->clock.start;
    for (unsigned i = 0; i < r->n_procs; i++) {
        r->procs[i]->line.start = ref == UINT64_MAX ? 0 : ref;
        r->procs[i]->line.freq = r->procs[i]->clock.freq;
    }
    for (unsigned i = 0; i < r->n_cur; i++) {
        struct cursor *c = &r->cur[i];
        if (cursor_step(r, c)) {
            r->heap[r->n_heap] = c;
            sift_up(r, r->n_heap++);
        }
        /* The pid its packets carry (a snapshot-<pid>-<n> directory's name
         * ends with another number). */
        if (c->packets && c->hdr.pid && !c->proc->pid_from_packets) {
            c->proc->pid = c->hdr.pid;
            c->proc->pid_from_packets = 1;
        }
    }
    *out = r;
    return 0;
}

int fdr__reader_next(struct fdr__reader *r, struct fdr__rd_event *ev)
{
    /* The event given last time is still the top of the heap: its payload
     * lives in its cursor's packet buffer, so the cursor moves on only now. */
    if (r->pending) {
        struct cursor *c = r->pending;
        r->pending = NULL;
        if (cursor_step(r, c)) {
            sift_down(r, 0);
        } else {
            r->heap[0] = r->heap[--r->n_heap];
            if (r->n_heap)
                sift_down(r, 0);
        }
    }
    if (!r->n_heap)
        return 0;
    struct cursor *c = r->heap[0];
    const struct fdr__event *e = &c->ev;
    ev->proc = c->proc;
    ev->c = e->c;
    ev->pid = c->hdr.pid;
    ev->tid = c->hdr.tid;
    ev->thread_name = c->hdr.thread_name;
    ev->stream = c->stream;
    ev->ts = e->ts;
    ev->ns = fdr__line_clock_ns(&c->proc->line, e->ts);
    ev->payload = e->payload;
    ev->len = e->len;
    ev->pkt_discarded = c->hdr.discarded;
    c->events++;
    r->pending = c;
    return 1;
}

void fdr__reader_close(struct fdr__reader *r)
{
    /* No early return for NULL: the compiler would split the function in
     * two (a local "fdr__reader_close.part.0" that a reader's symbol check
     * takes for a symbol from outside the core). */
    struct fdr__reader none = {0}, *x = r ? r : &none;
    for (unsigned i = 0; i < x->n_cur; i++) {
        cursor_end(&x->cur[i]);
        free(x->cur[i].path);
    }
    for (unsigned i = 0; i < x->n_procs; i++) {
        free(x->procs[i]->path);
        free(x->procs[i]->name);
        free(x->procs[i]);
        free(x->class_files[i]);
    }
    free(x->cur);
    free(x->heap);
    free(x->procs);
    free(x->class_files);
    free(r);
}

unsigned fdr__reader_procs(const struct fdr__reader *r)
{
    return r->n_procs;
}

const struct fdr__rd_proc *fdr__reader_proc(const struct fdr__reader *r, unsigned i)
{
    return i < r->n_procs ? r->procs[i] : NULL;
}

unsigned fdr__reader_streams(const struct fdr__reader *r)
{
    return r->n_cur;
}

void fdr__reader_stream(const struct fdr__reader *r, unsigned i,
                        struct fdr__rd_stream_info *out)
{
    memset(out, 0, sizeof *out);
    if (i >= r->n_cur)
        return;
    const struct cursor *c = &r->cur[i];
    out->proc = c->proc;
    out->stream = c->stream;
    out->bytes = c->size;
    out->packets = c->packets;
    out->events = c->events;
    out->discarded = c->discarded;
    out->lost_packets = c->lost;
}

uint64_t fdr__reader_errors(const struct fdr__reader *r)
{
    return r->errors;
}

uint64_t fdr__reader_bytes(const struct fdr__reader *r)
{
    return r->bytes;
}

uint64_t fdr__reader_stream_bytes_done(const struct fdr__reader *r, uint64_t *total)
{
    uint64_t done = 0, all = 0;
    for (unsigned i = 0; i < r->n_cur; i++) {
        const struct cursor *c = &r->cur[i];
        all += c->size;
        done += c->done || c->off > c->size ? c->size : c->off;
    }
    if (total)
        *total = all;
    return done;
}
