/* SPDX-License-Identifier: MIT */
/* persist.c - fdrd's traces outlive fdrd: their definitions on disk, and
 * the stream files a killed fdrd left cut back to whole packets.
 *
 * Every change of a trace (create, enable, disable, filter, start, stop)
 * rewrites RUNDIR/traces/NAME (0600, in a 0700 directory; a temporary,
 * then rename: a definition is whole or absent, whenever fdrd dies);
 * destroy removes it. When fdrd starts, it makes every trace found there
 * again, started if it was, before it serves anyone: the programs that
 * reconnect are routed into them as into any started trace.
 *
 * A definition is the two requests that would make the trace again, as a
 * client sends them: a CREATE (the output directory the trace got, never
 * a new default) and an ENABLE of its selection (its items stored already
 * normalised, "-x" for an item off), after a small header (magic, the
 * active flag, the spool flag). Loading runs them through the protocol's
 * validator and the very functions a client's requests go through
 * (traces.c), so a corrupt or hostile file is one log line and skipped,
 * never trusted further than a client is. Ephemeral traces (the scope's)
 * die with their creator and are not kept.
 *
 * Stream files: fdrd killed in the middle of a write leaves a stream that
 * ends inside a packet, which babeltrace2 refuses whole. At start, every
 * stream_N under each restored trace's output directory is walked packet
 * by packet (header magic, sizes) and cut back after its last whole
 * packet; each cut is logged. */
#define _GNU_SOURCE
#include "persist.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ring.h"
#include "log.h"

#define MAGIC "fdrd trace 1\n"
#define MAGIC_LEN (sizeof MAGIC - 1)

struct head { /* then a CREATE, then an ENABLE with its items */
    char magic[16];
    uint32_t active, spool;
    uint32_t create_len, items_len;
    uint32_t id, pad; /* the trace's id: programs know it by it (ROUTE) */
};

/* RUNDIR/traces, made 0700 if missing; its fd or -1. */
/* A definition's bytes (8-aligned for the messages' u64 fields), one
 * more than the largest, to see one that is too long. */
#define FILE_MAX                                                                         \
    (sizeof(struct head) + sizeof(struct fdr__msg_create) +                              \
     sizeof(struct fdr__msg_items) + FDR_PROTO_ITEMS_CAP + 1)
static uint64_t file[FILE_MAX / 8 + 1];

static int dir_open(const char *rundir, int make)
{
    char path[FDR_PROTO_PATH_CAP + 16];
    if (snprintf(path, sizeof path, "%s/traces", rundir) >= (int)sizeof path)
        return -1;
    if (make && mkdir(path, 0700) < 0 && errno != EEXIST)
        return -1;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 &&
        (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 0077) != 0)) {
        fdrd_log("%s: not a directory of yours with mode 0700: traces not kept", path);
        close(fd);
        return -1;
    }
    return fd;
}

void fdrd_persist_save(const struct fdrd_traces *ts, const struct fdrd_trace *t)
{
    if (!ts->rundir || t->owner)
        return;
    int dir = dir_open(ts->rundir, 1);
    if (dir < 0)
        return;
    memset(file, 0, sizeof file);
    struct head *h = (void *)file;
    struct fdr__msg_create *c = (void *)(h + 1);
    struct fdr__msg_items *i = (void *)(c + 1);
    memcpy(h->magic, MAGIC, MAGIC_LEN);
    h->active = t->active;
    h->spool = (uint32_t)t->spool;
    h->id = t->id;
    h->create_len = sizeof *c;
    h->items_len = (uint32_t)(sizeof *i + t->len);
    /* The request that made it, with what fdrd chose (its output). */
    *c = (struct fdr__msg_create){.mode = t->mode,
                                  .mask = t->mask,
                                  .buffer_size = t->grow_size ? 0 : t->buffer_size,
                                  .packet_size = t->packet_size,
                                  .memory = t->memory,
                                  .relayd_ctl = t->relay_opts.ctl_port,
                                  .relayd_data = t->relay_opts.data_port,
                                  .live_us = t->relay_opts.live_us,
                                  .pid = t->pid};
    fdr__proto_init(c, sizeof *c, FDR__MSG_CREATE, 0);
    memcpy(c->name, t->name, sizeof c->name);
    memcpy(c->outdir, t->outdir, sizeof c->outdir);
    memcpy(c->relayd, t->relay_opts.host, sizeof c->relayd);
    if (t->buf_fd >= 0) {
        c->flags |= FDR__CREATE_FILE_BUFFERS;
        memcpy(c->buffers, t->buffers, sizeof c->buffers);
    }
    fdr__proto_init(i, h->items_len, FDR__MSG_ENABLE, 0);
    memcpy(i->name, t->name, sizeof i->name);
    i->nitems = t->nitems;
    i->len = t->len;
    memcpy(i->items, t->items, t->len);
    size_t size = sizeof *h + sizeof *c + h->items_len;
    char tmp[FDR_PROTO_NAME_CAP + 8];
    snprintf(tmp, sizeof tmp, ".%s.tmp", t->name);
    unlinkat(dir, tmp, 0);
    int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int ok = fd >= 0 && write(fd, file, size) == (ssize_t)size && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    if (!ok || renameat(dir, tmp, dir, t->name) < 0) {
        fdrd_log("trace %s: cannot keep its definition in %s/traces: %s", t->name,
                 ts->rundir, strerror(errno));
        unlinkat(dir, tmp, 0);
    }
    close(dir);
}

void fdrd_persist_forget(const struct fdrd_traces *ts, const char *name)
{
    if (!ts->rundir)
        return;
    int dir = dir_open(ts->rundir, 0);
    if (dir >= 0) {
        unlinkat(dir, name, 0);
        close(dir);
    }
}

/* Directory `name` in `at` (AT_FDCWD: a path), opened for reading (never
 * through a symlink but at the top), or NULL. */
static DIR *dir_at(int at, const char *name, int nofollow)
{
    int fd = openat(at, name,
                    O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

/* ---- stream files cut back to whole packets -------------------------------- */

/* Cuts stream file `name` in dir after its last whole packet. */
static void cut_stream(int dir, const char *path, const char *name)
{
    int fd = openat(dir, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        if (fd >= 0)
            close(fd);
        return;
    }
    uint64_t at = 0, size = (uint64_t)st.st_size;
    struct fdr__pkt p;
    while (at < size) {
        if (size - at < sizeof p || pread(fd, &p, sizeof p, (off_t)at) != sizeof p ||
            p.magic != FDR__CTF_MAGIC || p.packet_size % 8 ||
            p.packet_size / 8 < sizeof p || p.content_size > p.packet_size ||
            p.content_size < sizeof p * 8 || p.packet_size / 8 > size - at)
            break;
        at += p.packet_size / 8;
    }
    if (at < size) {
        if (ftruncate(fd, (off_t)at) == 0)
            fdrd_log("%s/%s: cut from %llu to %llu bytes (a packet fdrd did not finish "
                     "writing)",
                     path, name, (unsigned long long)size, (unsigned long long)at);
        else
            fdrd_log("%s/%s: cannot cut a torn packet: %s", path, name, strerror(errno));
    }
    close(fd);
}

/* Every <outdir>/<process>/stream_N cut back to whole packets. */
static void cut_trace(const char *outdir)
{
    DIR *d = dir_at(AT_FDCWD, outdir, 0);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        DIR *pd = e->d_name[0] == '.' ? NULL : dir_at(dirfd(d), e->d_name, 1);
        if (!pd)
            continue;
        char path[FDR_PROTO_PATH_CAP + 300];
        snprintf(path, sizeof path, "%s/%s", outdir, e->d_name);
        struct dirent *f;
        while ((f = readdir(pd)) != NULL)
            if (strncmp(f->d_name, "stream_", 7) == 0)
                cut_stream(dirfd(pd), path, f->d_name);
        closedir(pd);
    }
    closedir(d);
}

/* ---- loading ---------------------------------------------------------------- */

/* Makes the trace of definition `name` (read from dir) again: 0, or -1
 * with the reason in why. */
static int load_one(struct fdrd_traces *ts, int dir, const char *name, char *why,
                    size_t cap)
{
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        snprintf(why, cap, "not a regular file of yours");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    ssize_t n = read(fd, file, FILE_MAX);
    close(fd);
    const struct head *h = (const void *)file;
    if (n < (ssize_t)sizeof *h || memcmp(h->magic, MAGIC, MAGIC_LEN) != 0 ||
        h->active > 1 || h->spool > 1 ||
        h->create_len != sizeof(struct fdr__msg_create) ||
        h->items_len < sizeof(struct fdr__msg_items) ||
        (size_t)n != sizeof *h + h->create_len + h->items_len) {
        snprintf(why, cap, "not a trace definition of this fdrd (bad header or size)");
        return -1;
    }
    const struct fdr__msg_create *c = (const void *)(h + 1);
    const struct fdr__msg_items *it = (const void *)(c + 1);
    char text[FDR_PROTO_TEXT_CAP];
    if (fdr__proto_check(c, h->create_len, 0, text, sizeof text) < 0 ||
        c->h.type != FDR__MSG_CREATE || (c->flags & FDR__CREATE_EPHEMERAL) ||
        fdr__proto_check(it, h->items_len, 0, text, sizeof text) < 0 ||
        it->h.type != FDR__MSG_ENABLE || strcmp(c->name, name) != 0 ||
        strcmp(it->name, name) != 0 || c->outdir[0] != '/') {
        snprintf(why, cap, "a malformed definition");
        return -1;
    }
    text[0] = 0;
    if (fdrd_traces_create(ts, c, text, sizeof text) != 0) {
        snprintf(why, cap, "%s", text);
        return -1;
    }
    struct fdrd_trace *t = ts->t[ts->n - 1];
    t->spool = (int)h->spool;
    fdrd_traces_keep_id(ts, t, h->id);
    if (it->nitems && fdrd_traces_items(ts, it, 0, text, sizeof text) != 0) {
        snprintf(why, cap, "%s", text);
        fdrd_traces_destroy(ts, name, text, sizeof text);
        return -1;
    }
    t->active = h->active;
    return 0;
}

void fdrd_persist_load(struct fdrd_traces *ts)
{
    if (!ts->rundir)
        return;
    int top = dir_open(ts->rundir, 0);
    DIR *d = top >= 0 ? dir_at(top, ".", 0) : NULL;
    if (top >= 0)
        close(top);
    if (!d)
        return;
    int dir = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') {
            if (strncmp(e->d_name, ".", 2) && strncmp(e->d_name, "..", 3))
                unlinkat(dir, e->d_name, 0); /* a temporary of a save cut short */
            continue;
        }
        char why[FDR_PROTO_TEXT_CAP + 64];
        if (load_one(ts, dir, e->d_name, why, sizeof why) < 0) {
            fdrd_log("%s/traces/%.80s: ignored: %s", ts->rundir, e->d_name, why);
            continue;
        }
        const struct fdrd_trace *t = ts->t[ts->n - 1];
        fdrd_log("trace %s restored (%s, output %s)", t->name,
                 t->active ? "started" : "stopped", t->outdir);
        cut_trace(t->outdir);
    }
    closedir(d);
}
