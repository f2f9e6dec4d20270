/* SPDX-License-Identifier: MIT */
/* traces.c - the traces (sessions) fdrd holds, and every rule about them.
 *
 * A trace is: a name ([A-Za-z0-9_.-], 1..64 bytes, not starting with '.'
 * or '-': it becomes a directory name, so no '/' and no "..", checked by
 * fdr__proto_trace_name_check, the same code the fdr command runs first);
 * an output directory (absolute; by default $HOME/fdr-traces/NAME-
 * YYYYmmdd-HHMMSS, chosen here at creation, created when data is first
 * written); a mode (discard, overwrite = flight recorder, snapshot);
 * buffer and packet sizes; an event selection; a 32-bit filter mask; an
 * active flag. At most FDR_PROTO_TRACES_MAX (32) exist at once, the seed
 * design's bound: a thread's tracing information is one bit per trace.
 *
 * A trace may be streamed to lttng-relayd (relay.c): its sender thread is
 * started at creation, after relayd answered (an unreachable relayd is a
 * refused creation), and stopped at destroy. Without an output directory
 * of the user's, a streamed trace is written to RUNDIR/spool/NAME-STAMP
 * (the run directory is the user's own, 0700), removed at destroy.
 *
 * Sizes: the packet is a power of two from 4 KiB to 16 MiB; the buffer
 * (per thread ring) holds at least 2 packets, a whole number of them, and
 * at most 1 GiB. 0 asks for the default (64 KiB packets; a 1 MiB buffer,
 * or 4 packets if that is more); in a discard trace the default ring is
 * where a thread starts, and one that fills it moves to an 8 MiB ring
 * while the trace's memory budget has room (collect.c, route_spare).
 *
 * The event selection is a list of items of the pattern language
 * (lib/common/pattern.h), applied in order, the last match deciding, as
 * FDR_TRACES does. `enable` appends items as given; `disable` appends each
 * of its rules turned off. Each item is parsed here first; a bad one is
 * refused with the pattern module's own words, and a refused request
 * changes nothing (all items are checked before any is added). Items are
 * stored normalised ("[-]PROVIDER:EVENT" or "[-]EVENT"), one rule each.
 *
 * The filter mask: bit i is category i (0..31). An event whose category
 * set is c is recorded by a trace with mask m iff (c & m) != 0; an event
 * declared without a category is in category 0 (c = 1). The default mask
 * 0xffffffff records every category. (docs/daemon.md.) */
#define _GNU_SOURCE
#include "traces.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bufdir.h"
#include "common/pathwalk.h"
#include "common/pattern.h"
#include "common/tracedir.h"

static uint32_t last_id; /* trace ids are never reused while fdrd runs */

static struct fdrd_trace *find(struct fdrd_traces *ts, const char *name, unsigned *index)
{
    for (unsigned i = 0; i < ts->n; i++)
        if (strcmp(ts->t[i]->name, name) == 0) {
            if (index)
                *index = i;
            return ts->t[i];
        }
    return NULL;
}

static struct fdrd_trace *find_or_say(struct fdrd_traces *ts, const char *name, char *msg,
                                      size_t cap)
{
    struct fdrd_trace *t = find(ts, name, NULL);
    if (!t) {
        if (fdr__proto_trace_name_check(name, msg, cap) == 0)
            snprintf(msg, cap, "no trace named '%s' (fdr list traces shows them)", name);
    }
    return t;
}

/* Removes a spool directory: its per-process traces (fdr's files only),
 * then itself. */
static void spool_remove(const char *dir)
{
    int top = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = top >= 0 ? fdopendir(top) : NULL;
    if (!d) {
        if (top >= 0)
            close(top);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int fd = openat(top, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        fdr__tracedir_clear(fd);
        close(fd);
        unlinkat(top, e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
    rmdir(dir);
}

/* Ends what a trace holds: its relayd sender (what remains is sent
 * first), its spool, its buffer directory (everything in it was written
 * out before: collect.c). */
static void trace_free(struct fdrd_trace *t)
{
    fdrd_relay_stop(t->relay);
    if (t->spool)
        spool_remove(t->outdir);
    if (t->buf_fd >= 0)
        fdrd_bufdir_remove(t->buf_fd, t->buffers);
    free(t);
}

static int sizes(uint64_t *buffer, uint64_t *packet, char *msg, size_t cap)
{
    if (*packet == 0)
        *packet = FDRD_PACKET_DEFAULT;
    if (*packet < FDRD_PACKET_MIN || *packet > FDRD_PACKET_MAX ||
        (*packet & (*packet - 1))) {
        snprintf(msg, cap,
                 "bad packet size %llu: a power of two from 4 KiB to 16 MiB (4096 to "
                 "16777216)",
                 (unsigned long long)*packet);
        return EINVAL;
    }
    if (*buffer == 0)
        *buffer = *packet * 4 > FDRD_BUFFER_DEFAULT ? *packet * 4 : FDRD_BUFFER_DEFAULT;
    if (*buffer > FDRD_BUFFER_MAX) {
        snprintf(msg, cap, "bad buffer size %llu: at most 1 GiB (1073741824)",
                 (unsigned long long)*buffer);
        return EINVAL;
    }
    if (*buffer < 2 * *packet || *buffer % *packet) {
        snprintf(
            msg, cap,
            "bad buffer size %llu: a whole number of packets (%llu bytes), at least 2",
            (unsigned long long)*buffer, (unsigned long long)*packet);
        return EINVAL;
    }
    return 0;
}

int fdrd_traces_create(struct fdrd_traces *ts, const struct fdr__msg_create *m, char *msg,
                       size_t cap)
{
    if (fdr__proto_trace_name_check(m->name, msg, cap) < 0)
        return EINVAL;
    if (find(ts, m->name, NULL)) {
        snprintf(msg, cap, "a trace named '%s' exists already", m->name);
        return EEXIST;
    }
    if (ts->n >= FDR_PROTO_TRACES_MAX) {
        snprintf(msg, cap,
                 "%d traces exist already, the most fdrd holds (fdr destroy one)",
                 FDR_PROTO_TRACES_MAX);
        return ENOSPC;
    }
    if (m->mode > FDR__TRACE_SNAPSHOT) {
        snprintf(msg, cap, "bad mode %u", m->mode);
        return EINVAL;
    }
    uint64_t buffer = m->buffer_size, packet = m->packet_size;
    int err = sizes(&buffer, &packet, msg, cap);
    if (err)
        return err;
    uint64_t memory = m->memory ? m->memory : FDRD_MEMORY_DEFAULT;
    if (memory > FDRD_MEMORY_MAX) {
        snprintf(msg, cap, "bad memory budget %llu: at most 1 TiB",
                 (unsigned long long)m->memory);
        return EINVAL;
    }
    if (m->relayd[0] && m->mode != FDR__TRACE_DISCARD) {
        snprintf(msg, cap, "a trace streamed to relayd is in discard mode");
        return EINVAL;
    }
    if (m->live_us && (m->live_us < 1000 || m->live_us > 3600000000u ||
                       m->mode != FDR__TRACE_DISCARD)) {
        snprintf(msg, cap,
                 "a live trace is in discard mode, with a period of 1 ms to 1 h");
        return EINVAL;
    }
    if (m->outdir[0] && m->outdir[0] != '/') {
        snprintf(msg, cap, "output directory '%.200s' is not an absolute path",
                 m->outdir);
        return EINVAL;
    }
    if (m->outdir[0]) { /* refused now, in one line, rather than at the first event */
        char at[FDR_PROTO_PATH_CAP];
        int w = fdr__pathwalk_check(m->outdir, at, sizeof at);
        if (w < 0) {
            snprintf(msg, cap, "output directory %.150s: %.150s: %s", m->outdir, at,
                     fdr__pathwalk_strerror(-w));
            return -w;
        }
    }
    struct fdrd_trace *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(msg, cap, "out of memory");
        return ENOMEM;
    }
    memcpy(t->name, m->name, sizeof t->name);
    if (m->outdir[0])
        memcpy(t->outdir, m->outdir, sizeof t->outdir);
    else {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        t->spool = m->relayd[0] != 0;
        int n = t->spool ? snprintf(t->outdir, sizeof t->outdir, "%s/spool/%s-%s",
                                    ts->rundir ? ts->rundir : "/tmp", t->name, stamp)
                         : snprintf(t->outdir, sizeof t->outdir, "%s/fdr-traces/%s-%s",
                                    ts->home ? ts->home : "/tmp", t->name, stamp);
        if (n < 0 || (size_t)n >= sizeof t->outdir) {
            free(t);
            snprintf(msg, cap, "$HOME is too long for an output directory");
            return ENAMETOOLONG;
        }
    }
    t->relay_opts.live_us = m->live_us; /* also without relayd: live stream files */
    t->pid = m->pid;
    if (m->relayd[0]) {
        snprintf(t->relay_opts.host, sizeof t->relay_opts.host, "%s", m->relayd);
        t->relay_opts.ctl_port = m->relayd_ctl;
        t->relay_opts.data_port = m->relayd_data;
        int e = fdrd_relay_start(&t->relay, t->name, t->outdir, &t->relay_opts, msg, cap);
        if (e) {
            free(t);
            return e;
        }
    }
    t->mode = m->mode;
    t->mask = m->mask;
    t->buffer_size = buffer;
    t->packet_size = packet;
    /* Busy threads of a discard trace get the room an embedded trace to
     * disk has (8 MiB), the others keep the default: only when the size
     * was not asked for. Not file-backed rings: fdrd reads their headers
     * only under its guard (collect.c). */
    uint64_t grow = FDRD_GROW_DEFAULT / packet * packet;
    if (m->mode == FDR__TRACE_DISCARD && !m->buffer_size && grow > buffer &&
        !(m->flags & FDR__CREATE_FILE_BUFFERS))
        t->grow_size = grow;
    t->memory = memory;
    t->id = ++last_id;
    t->buf_fd = -1;
    if (m->flags & FDR__CREATE_FILE_BUFFERS) {
        memcpy(t->buffers, m->buffers, sizeof t->buffers);
        t->buf_fd = fdrd_bufdir_create(ts->rundir ? ts->rundir : "/tmp", t->buffers,
                                       sizeof t->buffers, t->name, t->id, t->mode,
                                       t->outdir, msg, cap);
        if (t->buf_fd < 0) {
            trace_free(t); /* its relayd sender, if any, too */
            return EINVAL;
        }
        snprintf(msg, cap, "%s", t->buffers);
    }
    ts->t[ts->n++] = t;
    return 0;
}

struct parse_ctx {
    char *msg;
    size_t cap;
    int warned;
};

static void on_warn(void *ctx, const char *message)
{
    struct parse_ctx *p = ctx;
    if (p->warned++)
        return;
    const char *prefix = "fdr: pattern: ";
    if (strncmp(message, prefix, strlen(prefix)) == 0)
        message += strlen(prefix);
    if (strncmp(message, "ignoring ", 9) == 0)
        message += 9;
    snprintf(p->msg, p->cap, "bad pattern: %s", message);
}

/* Removes from items[0..len) every item whose pattern (without its '-')
 * is pat; returns the new length (*nitems updated). */
static uint32_t drop_pattern(char *items, uint32_t len, uint32_t *nitems, const char *pat)
{
    uint32_t out = 0;
    for (uint32_t at = 0; at < len;) {
        const char *it = items + at;
        uint32_t n = (uint32_t)strlen(it) + 1;
        if (strcmp(it[0] == '-' ? it + 1 : it, pat) == 0)
            (*nitems)--;
        else {
            memmove(items + out, it, n);
            out += n;
        }
        at += n;
    }
    return out;
}

int fdrd_traces_items(struct fdrd_traces *ts, const struct fdr__msg_items *m, int disable,
                      char *msg, size_t cap)
{
    struct fdrd_trace *t = find_or_say(ts, m->name, msg, cap);
    if (!t)
        return ENOENT;
    char items[FDR_PROTO_ITEMS_CAP];
    uint32_t len = t->len, nitems = t->nitems;
    memcpy(items, t->items, len);
    const char *item = m->items;
    for (uint32_t i = 0; i < m->nitems; i++, item += strlen(item) + 1) {
        struct parse_ctx pc = {msg, cap, 0};
        struct fdr__rules *r;
        if (fdr__rules_parse_flags(item, "pattern", FDR__RULES_NO_FILES, on_warn, &pc,
                                   &r) < 0) {
            snprintf(msg, cap, "out of memory");
            return ENOMEM;
        }
        int err = 0;
        if (pc.warned)
            err = EINVAL;
        else if (fdr__rules_wants_help(r) || fdr__rules_tunable_count(r) ||
                 !fdr__rules_count(r)) {
            snprintf(msg, cap, "bad pattern: \"%.255s\" names no event", item);
            err = EINVAL;
        }
        for (size_t k = 0; !err && k < fdr__rules_count(r); k++) {
            const char *prov, *ev;
            int on;
            fdr__rules_rule(r, k, &prov, &ev, &on);
            char one[FDR_PROTO_ITEM_MAX + 2];
            int n = snprintf(one, sizeof one, "%s%s%s%s", (disable || !on) ? "-" : "",
                             prov ? prov : "", prov ? ":" : "", ev);
            if (n < 0 || n > FDR_PROTO_ITEM_MAX || len + (uint32_t)n + 1 > sizeof items ||
                nitems >= FDR_PROTO_ITEMS_MAX) {
                snprintf(msg, cap,
                         "too many pattern items for trace '%s' (at most %d, %u bytes)",
                         t->name, FDR_PROTO_ITEMS_MAX, FDR_PROTO_ITEMS_CAP);
                err = ENOSPC;
                break;
            }
            /* An earlier item of the same pattern, on or off, is overridden
             * by this one for every event it matches: dropped, so that a
             * list switched back and forth (the scope's switches) stays as
             * long as its distinct patterns. */
            len = drop_pattern(items, len, &nitems, one[0] == '-' ? one + 1 : one);
            memcpy(items + len, one, (size_t)n + 1);
            len += (uint32_t)n + 1;
            nitems++;
        }
        fdr__rules_free(r);
        if (err)
            return err;
    }
    memcpy(t->items, items, len);
    t->len = len;
    t->nitems = nitems;
    return 0;
}

int fdrd_traces_filter(struct fdrd_traces *ts, const char *name, uint32_t mask, char *msg,
                       size_t cap)
{
    struct fdrd_trace *t = find_or_say(ts, name, msg, cap);
    if (!t)
        return ENOENT;
    t->mask = mask;
    return 0;
}

int fdrd_traces_activate(struct fdrd_traces *ts, const char *name, int active, char *msg,
                         size_t cap)
{
    struct fdrd_trace *t = find_or_say(ts, name, msg, cap);
    if (!t)
        return ENOENT;
    if (t->active == (uint32_t)active) {
        snprintf(msg, cap, "trace '%s' is %s already", name,
                 active ? "started" : "stopped");
        return EALREADY;
    }
    t->active = (uint32_t)active;
    return 0;
}

int fdrd_traces_destroy(struct fdrd_traces *ts, const char *name, char *msg, size_t cap)
{
    unsigned i;
    if (!find(ts, name, &i)) {
        find_or_say(ts, name, msg, cap);
        return ENOENT;
    }
    trace_free(ts->t[i]);
    memmove(&ts->t[i], &ts->t[i + 1], (ts->n - i - 1) * sizeof ts->t[0]);
    ts->n--;
    return 0;
}

unsigned fdrd_traces_active(const struct fdrd_traces *ts)
{
    unsigned k = 0;
    for (unsigned i = 0; i < ts->n; i++)
        k += ts->t[i]->active != 0;
    return k;
}

void fdrd_traces_free(struct fdrd_traces *ts)
{
    for (unsigned i = 0; i < ts->n; i++)
        trace_free(ts->t[i]);
    ts->n = 0;
}

void fdrd_traces_keep_id(struct fdrd_traces *ts, struct fdrd_trace *t, uint32_t id)
{
    for (unsigned i = 0; i < ts->n; i++)
        if (ts->t[i] != t && ts->t[i]->id == id)
            return; /* taken: t keeps its new one */
    if (id == 0)
        return;
    t->id = id;
    if (id > last_id)
        last_id = id;
}

struct fdrd_trace *fdrd_traces_find(struct fdrd_traces *ts, const char *name)
{
    return find(ts, name, NULL);
}
