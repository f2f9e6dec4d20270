/* SPDX-License-Identifier: MIT */
/* tail.c - the scope's readers: a thread that tails a trace
 * directory while fdrd appends to it, and the replay of a whole trace.
 *
 * The idea of the tail: every 50 ms, find the <name>-<pid>/ directories
 * and their stream_N files, and read each file from where it was left up
 * to its last whole packet. Each packet header is checked on a copy
 * (common/validate.h), its events walked (common/iter.h) with the
 * process's class file (.fdr-classes), reloaded when it changes (new
 * classes appear as the program registers them) and when an event names
 * a class it does not have yet. The files come from the traced program
 * through fdrd: nothing in them is trusted; a bad packet header stops
 * that stream (counted in errors), a bad event ends its packet. The
 * scope's own trace is read once, so what was read is punched away
 * (fallocate PUNCH_HOLE): the disk it takes stays small. The db lock is
 * taken per packet, never while waiting on anything.
 *
 * The replay reads a directory with common/reader.h (time order across
 * streams and processes) into the same store: opened at once (a bad
 * directory is refused before serving), read in a thread while the page
 * loads. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "common/iter.h"
#include "common/reader.h"
#include "common/ring.h"
#include "common/validate.h"
#include "offline.h"
#include "tail.h"

#define STREAMS_MAX 256
#define TPROCS_MAX SCOPE_PROCS_MAX
#define PACKETS_PER_TURN 64
#define CLASSES_MAX (64u << 20)
#define META_MAX (4u << 20)

struct tstream {
    int fd;
    unsigned index;
    int dead;
    uint64_t off, discarded;
};

struct tproc {
    int dirfd, proc; /* proc: index in the db */
    uint32_t pid;
    char name[256];
    off_t csize; /* class file as last loaded */
    struct timespec cmtime;
    unsigned n;
    struct tstream s[STREAMS_MAX];
};

struct scope_tail {
    pthread_t thread;
    struct scope_db *db;
    char *dir;
    int dfd, punch, stop; /* dfd -1 until fdrd made the directory */
    unsigned n;
    struct tproc *p[TPROCS_MAX];
    char *pkt;
    size_t cap;
};

/* Reads a whole small file at dirfd/name (malloc'd, NUL-terminated). */
static char *slurp(int dirfd, const char *name, size_t max, size_t *len, struct stat *st)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *buf = NULL;
    if (fstat(fd, st) == 0 && S_ISREG(st->st_mode) && (uint64_t)st->st_size <= max &&
        (buf = malloc((size_t)st->st_size + 1))) {
        ssize_t k = pread(fd, buf, (size_t)st->st_size, 0);
        if (k < 0) {
            free(buf);
            buf = NULL;
        } else {
            buf[k] = 0;
            *len = (size_t)k;
        }
    }
    close(fd);
    return buf;
}

void scope_read_clock(struct scope_db *db, int proc, int dirfd)
{
    size_t len;
    struct stat st;
    char *m = slurp(dirfd, "metadata", META_MAX, &len, &st);
    if (m)
        scope_db_clock(db, proc, m, len);
    free(m);
}

/* Loads p's class file when it changed (force: whatever its stamp says).
 * 1 when loaded. */
static int load_classes(struct scope_tail *t, struct tproc *p, int force)
{
    struct stat st;
    if (fstatat(p->dirfd, FDR__CLASSES_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return 0;
    if (!force && st.st_size == p->csize && st.st_mtim.tv_sec == p->cmtime.tv_sec &&
        st.st_mtim.tv_nsec == p->cmtime.tv_nsec)
        return 0;
    size_t len;
    char *buf = slurp(p->dirfd, FDR__CLASSES_FILE, CLASSES_MAX, &len, &st);
    if (!buf)
        return 0;
    p->csize = st.st_size;
    p->cmtime = st.st_mtim;
    pthread_mutex_lock(&t->db->mu);
    int ok = scope_db_classes(t->db, p->proc, buf, len) == 0;
    if (ok && !t->db->procs[p->proc]->have_clock)
        scope_read_clock(t->db, p->proc, p->dirfd);
    pthread_mutex_unlock(&t->db->mu);
    return ok;
}

/* A directory stream of a copy of dirfd, from its start (NULL on error). */
static DIR *dir_of(int dirfd)
{
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    if (d)
        rewinddir(d);
    return d;
}

/* New <name>-<pid>/ directories of the trace. */
static void scan_procs(struct scope_tail *t)
{
    if (t->dfd < 0)
        t->dfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (t->dfd < 0)
        return;
    DIR *d = dir_of(t->dfd);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && t->n < TPROCS_MAX) {
        const char *dash = strrchr(e->d_name, '-');
        if (e->d_name[0] == '.' || !dash || dash == e->d_name || !dash[1] ||
            strlen(e->d_name) >= sizeof t->p[0]->name)
            continue;
        char *end;
        unsigned long pid = strtoul(dash + 1, &end, 10);
        if (*end || pid > UINT32_MAX)
            continue;
        int known = 0;
        for (unsigned i = 0; i < t->n; i++)
            known |= strcmp(t->p[i]->name, e->d_name) == 0;
        if (known)
            continue;
        int pfd =
            openat(t->dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0)
            continue;
        struct tproc *p = calloc(1, sizeof *p);
        pthread_mutex_lock(&t->db->mu);
        int proc = p ? scope_db_proc(t->db, (uint32_t)pid) : -1;
        pthread_mutex_unlock(&t->db->mu);
        if (proc < 0) {
            free(p);
            close(pfd);
            continue;
        }
        p->dirfd = pfd;
        p->proc = proc;
        p->pid = (uint32_t)pid;
        p->csize = -1;
        snprintf(p->name, sizeof p->name, "%s", e->d_name);
        t->p[t->n++] = p;
    }
    closedir(d);
}

/* New stream_N files of p. */
static void scan_streams(struct scope_tail *t, struct tproc *p)
{
    DIR *d = dir_of(p->dirfd);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && p->n < STREAMS_MAX) {
        if (strncmp(e->d_name, "stream_", 7) != 0 || !e->d_name[7])
            continue;
        char *end;
        unsigned long k = strtoul(e->d_name + 7, &end, 10);
        if (*end || k >= 1u << 20)
            continue;
        int known = 0;
        for (unsigned i = 0; i < p->n; i++)
            known |= p->s[i].index == k;
        if (known)
            continue;
        int sfd = openat(p->dirfd, e->d_name,
                         (t->punch ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (sfd < 0)
            continue;
        if (fstat(sfd, &st) < 0 || !S_ISREG(st.st_mode)) {
            close(sfd);
            continue;
        }
        struct tstream *s = &p->s[p->n++];
        memset(s, 0, sizeof *s);
        s->fd = sfd;
        s->index = (unsigned)k;
    }
    closedir(d);
}

/* Walks the events of one checked packet into the db, but the first
 * `skip` (taken already). -1 when an event could not be walked (an
 * unknown class, or corrupt); *done the events walked before it. */
static int walk(struct scope_tail *t, struct tproc *p, const struct fdr__pkt *h,
                size_t bytes, uint64_t skip, uint64_t *done)
{
    struct scope_db *db = t->db;
    pthread_mutex_lock(&db->mu);
    struct scope_proc *sp = db->procs[p->proc];
    struct fdr__iter it;
    struct fdr__event ev;
    int rc = 0;
    fdr__iter_init(&it, t->pkt, bytes, &sp->classes);
    char tname[16];
    memcpy(tname, h->thread_name, sizeof tname);
    scope_db_thread(db, h->pid, h->tid, tname);
    int k;
    uint64_t n = 0;
    while ((k = fdr__iter_next(&it, &ev)) > 0)
        if (n++ >= skip)
            scope_db_event(db, p->proc, ev.c, h->pid, h->tid, tname, ev.ts,
                           fdr__line_clock_ns(&sp->line, ev.ts), ev.payload, ev.len);
    *done = n;
    if (k < 0) {
        rc = -1;
        db->errors++;
    }
    pthread_mutex_unlock(&db->mu);
    return rc;
}

/* Reads the whole packets of s that are there. 1 when it read any. */
static int read_stream(struct scope_tail *t, struct tproc *p, struct tstream *s)
{
    struct stat st;
    if (s->dead || fstat(s->fd, &st) < 0)
        return 0;
    uint64_t size = (uint64_t)st.st_size, start = s->off;
    int any = 0;
    for (int turn = 0; turn < PACKETS_PER_TURN; turn++) {
        struct fdr__pkt raw, h;
        if (size < s->off + sizeof raw)
            break;
        if (pread(s->fd, &raw, sizeof raw, (off_t)s->off) != (ssize_t)sizeof raw)
            break;
        struct fdr__ring_geom g = {FDR__PACKET_MAX, 2, s->index, 0};
        if (fdr__pkt_check(&raw, &g, raw.seq, &h) != 0) {
            s->dead = 1;
            pthread_mutex_lock(&t->db->mu);
            t->db->errors++;
            pthread_mutex_unlock(&t->db->mu);
            break;
        }
        uint64_t whole = h.packet_size / 8, bytes = h.content_size / 8;
        if (size < s->off + whole)
            break;
        if (bytes > t->cap) {
            char *b = realloc(t->pkt, bytes);
            if (!b)
                break;
            t->pkt = b;
            t->cap = bytes;
        }
        if (pread(s->fd, t->pkt, bytes, (off_t)s->off) != (ssize_t)bytes)
            break;
        memcpy(t->pkt, &h, sizeof h); /* the checked copy of the header */
        uint64_t done;
        /* an unknown class: the class file may have grown since */
        if (walk(t, p, &h, bytes, 0, &done) < 0 && load_classes(t, p, 0)) {
            pthread_mutex_lock(&t->db->mu);
            t->db->errors--;
            pthread_mutex_unlock(&t->db->mu);
            walk(t, p, &h, bytes, done, &done);
        }
        pthread_mutex_lock(&t->db->mu);
        t->db->discarded += h.discarded >= s->discarded ? h.discarded - s->discarded : 0;
        pthread_mutex_unlock(&t->db->mu);
        s->discarded = h.discarded;
        s->off += whole;
        any = 1;
    }
    if (t->punch && s->off > start)
        fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)start,
                  (off_t)(s->off - start));
    return any;
}

static void *tail_main(void *arg)
{
    struct scope_tail *t = arg;
    unsigned round = 0;
    while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
        if (round++ % 4 == 0)
            scan_procs(t);
        int more = 0;
        for (unsigned i = 0; i < t->n; i++) {
            struct tproc *p = t->p[i];
            load_classes(t, p, 0);
            scan_streams(t, p);
            for (unsigned j = 0; j < p->n; j++)
                more |= read_stream(t, p, &p->s[j]);
        }
        pthread_mutex_lock(&t->db->mu);
        scope_db_tick(t->db);
        pthread_mutex_unlock(&t->db->mu);
        if (!more) {
            struct timespec ts = {0, 50 * 1000000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

int scope_tail_start(struct scope_db *db, const char *dir, int punch,
                     struct scope_tail **out)
{
    struct scope_tail *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->db = db;
    t->punch = punch;
    t->dfd = -1;
    t->dir = strdup(dir);
    int e = t->dir ? pthread_create(&t->thread, NULL, tail_main, t) : ENOMEM;
    if (e) {
        free(t->dir);
        free(t);
        return -e;
    }
    *out = t;
    return 0;
}

void scope_tail_stop(struct scope_tail *t)
{
    if (!t)
        return;
    __atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
    pthread_join(t->thread, NULL);
    for (unsigned i = 0; i < t->n; i++) {
        for (unsigned j = 0; j < t->p[i]->n; j++)
            close(t->p[i]->s[j].fd);
        close(t->p[i]->dirfd);
        free(t->p[i]);
    }
    if (t->dfd >= 0)
        close(t->dfd);
    free(t->dir);
    free(t->pkt);
    free(t);
}

/* ---- replay -------------------------------------------------------------------------
 */

/* A replay under way: the trace is opened (and refused) at once, read in
 * a thread of its own while the page loads. */
struct scope_replay {
    pthread_t thread;
    struct scope_db *db;
    struct fdr__reader *r;
    int *map;
    int stop;       /* atomic: the scope is leaving */
    sem_t has_lock; /* posted once the thread holds the store (below) */
};

static void *replay_main(void *arg)
{
    struct scope_replay *rp = arg;
    struct scope_db *db = rp->db;
    struct fdr__reader *r = rp->r;
    int *map = rp->map;
    /* the store is the reader's until the end: requests wait (the page's
     * files do not need it, so they load meanwhile). The server starts
     * only once it is taken (scope_replay_start): a request that came
     * first found no series yet (404, fdr-scope-http at load 20). */
    pthread_mutex_lock(&db->mu);
    sem_post(&rp->has_lock);
    struct fdr__rd_event ev;
    uint32_t last_tid = 0, last_pid = 0;
    for (uint64_t n = 0; fdr__reader_next(r, &ev) > 0; n++) {
        if ((n & 0xffff) == 0 && __atomic_load_n(&rp->stop, __ATOMIC_RELAXED))
            break;
        int pi = map[ev.proc->index];
        if (pi < 0)
            continue;
        const struct fdr__class *c = fdr__classes_get(&db->procs[pi]->classes, ev.c->id);
        if (!c)
            continue;
        if (ev.tid != last_tid || ev.pid != last_pid)
            scope_db_thread(db, ev.pid, ev.tid, ev.thread_name);
        last_tid = ev.tid;
        last_pid = ev.pid;
        scope_db_event(db, pi, c, ev.pid, ev.tid, ev.thread_name, ev.ts, ev.ns,
                       ev.payload, ev.len);
    }
    unsigned ns = fdr__reader_streams(r);
    for (unsigned i = 0; i < ns; i++) {
        struct fdr__rd_stream_info si;
        fdr__reader_stream(r, i, &si);
        db->discarded += si.discarded;
    }
    scope_db_replay_end(db);
    scope_db_tick(db);
    db->done = 1;
    pthread_mutex_unlock(&db->mu);
    return NULL;
}

int scope_replay_start(struct scope_db *db, const char *dir, struct scope_replay **out)
{
    struct off_diag d = {"scope", 0, 0};
    struct fdr__reader *r;
    int st = off_open(dir, &d, &r);
    if (st)
        return st;
    unsigned np = fdr__reader_procs(r);
    struct scope_replay *rp = calloc(1, sizeof *rp);
    int *map = calloc(np ? np : 1, sizeof *map);
    if (!map || !rp) {
        free(map);
        free(rp);
        fdr__reader_close(r);
        return cli_fail(1, "scope", "out of memory");
    }
    pthread_mutex_lock(&db->mu);
    for (unsigned i = 0; i < np; i++) {
        const struct fdr__rd_proc *pr = fdr__reader_proc(r, i);
        map[i] = scope_db_proc(db, pr->pid);
        int pfd = open(pr->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        size_t len;
        struct stat sst;
        char *buf =
            pfd >= 0 ? slurp(pfd, FDR__CLASSES_FILE, CLASSES_MAX, &len, &sst) : NULL;
        if (map[i] >= 0 && buf && scope_db_classes(db, map[i], buf, len) == 0)
            scope_read_clock(db, map[i], pfd);
        else if (map[i] >= 0)
            map[i] = -1;
        if (pfd >= 0)
            close(pfd);
    }
    pthread_mutex_unlock(&db->mu);
    rp->db = db;
    rp->r = r;
    rp->map = map;
    sem_init(&rp->has_lock, 0, 0);
    int e = pthread_create(&rp->thread, NULL, replay_main, rp);
    if (e) {
        sem_destroy(&rp->has_lock);
        free(map);
        free(rp);
        fdr__reader_close(r);
        return cli_fail(1, "scope", "cannot start the replay: %s", strerror(e));
    }
    while (sem_wait(&rp->has_lock) < 0 && errno == EINTR)
        ;
    *out = rp;
    return 0;
}

void scope_replay_stop(struct scope_replay *rp)
{
    if (!rp)
        return;
    __atomic_store_n(&rp->stop, 1, __ATOMIC_RELAXED);
    pthread_join(rp->thread, NULL);
    sem_destroy(&rp->has_lock);
    free(rp->map);
    fdr__reader_close(rp->r);
    free(rp);
}
