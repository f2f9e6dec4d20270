/* SPDX-License-Identifier: MIT */
/* dispatch.c - what fdrd does with each (already checked) message.
 *
 * Requests of the fdr command (CREATE ... STATUS) act on the traces table
 * and are answered by one REPLY (status 0, or a positive errno value with
 * a one-line text the command prints after "fdr VERB: "), LIST by zero or
 * more *_INFO messages then END, STATUS by STATUS_INFO. Requests of a
 * traced process (REGISTER_PROCESS, REGISTER_PROVIDER,
 * UNREGISTER_PROVIDER) act on the client's own state and the provider
 * table. A message that only fdrd sends (BUFFER, REPLY, *_INFO, END)
 * coming from a client is a protocol violation: the client is dropped.
 *
 * DESIGN. The message was validated by fdr__proto_check (sizes, strings
 * terminated, items well formed), so the structs can be read directly;
 * what is checked here is meaning: names, sizes, patterns, handles. A
 * process's provider references are held in its client (a connection is
 * a process): registering a provider the connection already holds takes
 * no second reference, and fdrd_client_release drops them all when the
 * connection ends. The pid fdrd shows for a process is the kernel's
 * (SO_PEERCRED at connect), never the one it claims. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "persist.h"
#include "server.h"

static void reply(struct fdrd_server *s, struct fdrd_client *c, uint32_t seq, int status,
                  uint32_t value, const char *text)
{
    struct fdr__msg_reply r;
    memset(&r, 0, sizeof r);
    fdr__proto_init(&r, sizeof r, FDR__MSG_REPLY, seq);
    r.h.status = (uint32_t)status;
    r.value = value;
    snprintf(r.text, sizeof r.text, "%s", text ? text : "");
    fdrd_server_send(s, c, &r, sizeof r);
}

static void list_traces(struct fdrd_server *s, struct fdrd_client *c, uint32_t seq)
{
    struct fdr__msg_trace_info *m = (struct fdr__msg_trace_info *)s->tx;
    for (unsigned i = 0; i < s->traces.n; i++) {
        const struct fdrd_trace *t = s->traces.t[i];
        size_t size = sizeof *m + t->len;
        memset(m, 0, sizeof *m);
        fdr__proto_init(m, size, FDR__MSG_TRACE_INFO, seq);
        m->mode = t->mode;
        m->active = t->active;
        m->mask = t->mask;
        m->nitems = t->nitems;
        m->buffer_size = t->buffer_size;
        m->packet_size = t->packet_size;
        m->memory = t->memory;
        m->len = t->len;
        memcpy(m->name, t->name, sizeof m->name);
        memcpy(m->outdir, t->outdir, sizeof m->outdir);
        memcpy(m->items, t->items, t->len);
        m->live_us = t->relay_opts.live_us;
        m->pid = t->pid;
        if (t->relay) {
            struct fdrd_relay_stats st;
            fdrd_relay_stats(t->relay, &st);
            m->relay_bytes = st.bytes;
            m->relay_packets = st.packets;
            m->relay_discarded = st.discarded;
            m->relay_state = st.state;
            m->relay_sessions = st.sessions;
            m->relay_ctl = t->relay_opts.ctl_port;
            m->relay_data = t->relay_opts.data_port;
            memcpy(m->relayd, t->relay_opts.host, sizeof m->relayd);
        }
        fdrd_server_send(s, c, m, size);
    }
}

static void list_processes(struct fdrd_server *s, struct fdrd_client *c, uint32_t seq)
{
    for (unsigned i = 0; i < s->nclients; i++) {
        const struct fdrd_client *p = s->clients[i];
        if (!p->registered)
            continue;
        struct fdr__msg_process_info m;
        memset(&m, 0, sizeof m);
        fdr__proto_init(&m, sizeof m, FDR__MSG_PROCESS_INFO, seq);
        m.pid = (uint32_t)p->pid;
        m.claimed_pid = p->info.pid;
        m.ppid = p->info.ppid;
        m.uid = (uint32_t)p->uid;
        m.sizeof_int = p->info.sizeof_int;
        m.sizeof_long = p->info.sizeof_long;
        m.sizeof_pointer = p->info.sizeof_pointer;
        m.sizeof_size_t = p->info.sizeof_size_t;
        m.nproviders = p->nhandles;
        memcpy(m.name, p->info.name, sizeof m.name);
        fdrd_server_send(s, c, &m, sizeof m);
    }
}

static void list_providers(struct fdrd_server *s, struct fdrd_client *c, uint32_t seq)
{
    for (size_t i = 0; i < s->providers.n; i++) {
        const struct fdrd_provider *p = &s->providers.v[i];
        struct fdr__msg_provider_info m;
        memset(&m, 0, sizeof m);
        fdr__proto_init(&m, sizeof m, FDR__MSG_PROVIDER_INFO, seq);
        m.handle = p->handle;
        m.refcount = p->refcount;
        m.size = p->id.size;
        m.nevents = p->id.nevents;
        m.checksum = p->id.checksum;
        m.alignment = p->id.alignment;
        m.sizeof_int = p->id.sizeof_int;
        m.sizeof_long = p->id.sizeof_long;
        m.sizeof_pointer = p->id.sizeof_pointer;
        m.sizeof_size_t = p->id.sizeof_size_t;
        memcpy(m.name, p->id.name, sizeof m.name);
        fdrd_server_send(s, c, &m, sizeof m);
    }
}

static void status(struct fdrd_server *s, struct fdrd_client *c, uint32_t seq)
{
    struct fdr__msg_status_info *m = (struct fdr__msg_status_info *)s->tx;
    memset(m, 0, sizeof *m);
    fdr__proto_init(m, sizeof *m, FDR__MSG_STATUS_INFO, seq);
    m->pid = (uint32_t)getpid();
    m->traces = s->traces.n;
    m->active = fdrd_traces_active(&s->traces);
    for (unsigned i = 0; i < s->nclients; i++)
        m->processes += s->clients[i]->registered != 0;
    m->providers = (uint32_t)s->providers.n;
    m->clients = s->nclients;
    m->max_traces = FDR_PROTO_TRACES_MAX;
    m->max_clients = s->max_clients;
    m->started = (uint64_t)s->started;
    snprintf(m->rundir, sizeof m->rundir, "%s", s->rundir);
    fdrd_server_send(s, c, m, sizeof *m);
}

static void register_provider(struct fdrd_server *s, struct fdrd_client *c,
                              const struct fdr__msg_register_provider *m)
{
    char text[FDR_PROTO_TEXT_CAP];
    struct fdr__provider_id id;
    memset(&id, 0, sizeof id);
    id.size = m->size;
    id.nevents = m->nevents;
    id.checksum = m->checksum;
    id.alignment = m->alignment;
    id.sizeof_int = m->sizeof_int;
    id.sizeof_long = m->sizeof_long;
    id.sizeof_pointer = m->sizeof_pointer;
    id.sizeof_size_t = m->sizeof_size_t;
    memcpy(id.name, m->name, sizeof id.name); /* NUL-padded: same rule as libfdr */
    id.name[sizeof id.name - 1] = 0;
    memset(id.name + strlen(id.name), 0, sizeof id.name - strlen(id.name));
    if (fdrd_provider_check(&id, text, sizeof text) < 0) {
        reply(s, c, m->h.seq, EINVAL, 0, text);
        return;
    }
    uint32_t handle;
    /* Already held by this process: the same handle, no second reference. */
    for (unsigned i = 0; i < c->nhandles; i++) {
        const struct fdrd_provider *p = NULL;
        for (size_t k = 0; k < s->providers.n && !p; k++)
            if (s->providers.v[k].handle == c->handles[i])
                p = &s->providers.v[k];
        uint32_t was, now;
        if (p && !fdr__provider_id_differs(&p->id, &id, &was, &now)) {
            reply(s, c, m->h.seq, 0, p->handle, NULL);
            return;
        }
    }
    if (c->nhandles >= FDRD_CLIENT_PROVIDERS) {
        snprintf(text, sizeof text, "a process holds at most %d providers",
                 FDRD_CLIENT_PROVIDERS);
        reply(s, c, m->h.seq, ENOSPC, 0, text);
        return;
    }
    int rc = fdrd_providers_ref(&s->providers, &id, &handle);
    if (rc < 0) {
        snprintf(text, sizeof text, "the provider table is full (%d providers)",
                 FDRD_PROVIDERS_MAX);
        reply(s, c, m->h.seq, -rc, 0, text);
        return;
    }
    c->handles[c->nhandles++] = handle;
    reply(s, c, m->h.seq, 0, handle, NULL);
}

static void unregister_provider(struct fdrd_server *s, struct fdrd_client *c,
                                const struct fdr__msg_unregister_provider *m)
{
    for (unsigned i = 0; i < c->nhandles; i++)
        if (c->handles[i] == m->handle) {
            c->handles[i] = c->handles[--c->nhandles];
            fdrd_providers_unref(&s->providers, m->handle);
            reply(s, c, m->h.seq, 0, m->handle, NULL);
            return;
        }
    char text[FDR_PROTO_TEXT_CAP];
    snprintf(text, sizeof text, "provider handle %u is not held by this process",
             m->handle);
    reply(s, c, m->h.seq, ENOENT, 0, text);
}

/* Destroys trace t, written out first while it still exists. */
static int destroy(struct fdrd_server *s, struct fdrd_trace *t, char *text, size_t cap)
{
    char name[FDR_PROTO_NAME_CAP];
    memcpy(name, t->name, sizeof name);
    fdrd_collect_destroyed(s, t);
    int rc = fdrd_traces_destroy(&s->traces, name, text, cap);
    if (rc == 0) {
        fdrd_persist_forget(&s->traces, name);
        fdrd_log("trace %s destroyed", name);
    }
    return rc;
}

void fdrd_client_release(struct fdrd_server *s, struct fdrd_client *c)
{
    for (unsigned i = 0; i < c->nhandles; i++)
        fdrd_providers_unref(&s->providers, c->handles[i]);
    c->nhandles = 0;
    free(c->state);
    c->state = NULL;
    char text[FDR_PROTO_TEXT_CAP];
    for (unsigned i = s->traces.n; i-- > 0;)
        if (i < s->traces.n && s->traces.t[i]->owner == c->id)
            destroy(s, s->traces.t[i], text, sizeof text); /* its creator went away */
}

/* ---- steering a process (the scope) --------------------------------------- */

/* The registered process with kernel pid `pid` (the latest connection if
 * an exec'd image registered again), or NULL. */
static struct fdrd_client *process_of(struct fdrd_server *s, uint32_t pid)
{
    struct fdrd_client *best = NULL;
    for (unsigned i = 0; i < s->nclients; i++) {
        struct fdrd_client *p = s->clients[i];
        if (p->registered && !p->dead && (uint32_t)p->pid == pid &&
            (!best || p->id > best->id))
            best = p;
    }
    return best;
}

/* CONTROL from the fdr command: passed on to the process it names. */
static void control(struct fdrd_server *s, struct fdrd_client *c,
                    const struct fdr__msg_control *m)
{
    char text[FDR_PROTO_TEXT_CAP];
    struct fdrd_client *p = process_of(s, m->pid);
    if (m->what > FDR__CONTROL_STATE || (m->what == FDR__CONTROL_STATE && m->nitems)) {
        snprintf(text, sizeof text, "bad control %u", m->what);
        reply(s, c, m->h.seq, EINVAL, 0, text);
        return;
    }
    if (!p || p == c) {
        snprintf(text, sizeof text,
                 "no process with pid %u is registered with fdrd (fdr list processes)",
                 m->pid);
        reply(s, c, m->h.seq, ESRCH, 0, text);
        return;
    }
    /* To the process, as it came (checked), with pid 0 and its number as
     * seq: the process's next report says it applied it (`answers`). */
    size_t len = m->h.size;
    struct fdr__msg_control *f = (struct fdr__msg_control *)s->tx;
    memcpy(f, m, len);
    uint32_t n = ++p->controls;
    fdr__proto_init(f, len, FDR__MSG_CONTROL, n);
    f->pid = 0;
    fdrd_server_send(s, p, f, len);
    if (m->what != FDR__CONTROL_STATE) {
        fdrd_log("process %u: %s set by client %lu", m->pid,
                 m->what == FDR__CONTROL_RECORD ? "events recorded" : "events printed",
                 c->id);
        reply(s, c, m->h.seq, 0, n, NULL);
        return;
    }
    if (!p->state) {
        snprintf(text, sizeof text, "process %u has not reported its state yet", m->pid);
        reply(s, c, m->h.seq, ENODATA, 0, text);
        return;
    }
    struct fdr__msg_state *st = (struct fdr__msg_state *)s->tx;
    memcpy(st, p->state, p->state->h.size);
    fdr__proto_init(st, p->state->h.size, FDR__MSG_STATE_INFO, m->h.seq);
    st->pid = m->pid;
    fdrd_server_send(s, c, st, st->h.size);
}

/* STATE from a process: kept until the next one. */
static int keep_state(struct fdrd_client *c, const struct fdr__msg_state *m)
{
    if (!c->registered)
        return -1;
    struct fdr__msg_state *copy = malloc(m->h.size);
    if (!copy)
        return 0; /* the previous one stays */
    memcpy(copy, m, m->h.size);
    free(c->state);
    c->state = copy;
    return 0;
}

int fdrd_dispatch(struct fdrd_server *s, struct fdrd_client *c, const void *msg,
                  size_t len)
{
    (void)len;
    const struct fdr__msg_hdr *h = msg;
    char text[FDR_PROTO_TEXT_CAP] = "";
    int rc;
    switch (h->type) {
    case FDR__MSG_CREATE: {
        const struct fdr__msg_create *m = msg;
        rc = fdrd_traces_create(&s->traces, m, text, sizeof text);
        if (rc == 0 && (m->flags & FDR__CREATE_EPHEMERAL))
            s->traces.t[s->traces.n - 1]->owner = c->id;
        if (rc == 0) {
            fdrd_persist_save(&s->traces, s->traces.t[s->traces.n - 1]);
            fdrd_log("trace %s created (output %s%s%s)", m->name,
                     s->traces.t[s->traces.n - 1]->outdir,
                     m->relayd[0] ? ", relayd " : "", m->relayd);
        }
        reply(s, c, h->seq, rc, 0, text);
        return 0;
    }
    case FDR__MSG_ENABLE:
    case FDR__MSG_DISABLE:
        rc = fdrd_traces_items(&s->traces, msg, h->type == FDR__MSG_DISABLE, text,
                               sizeof text);
        if (rc == 0) {
            struct fdrd_trace *t =
                fdrd_traces_find(&s->traces, ((const struct fdr__msg_items *)msg)->name);
            if (t)
                fdrd_persist_save(&s->traces, t);
            if (t && t->active)
                fdrd_collect_changed(s, t);
        }
        reply(s, c, h->seq, rc, 0, text);
        return 0;
    case FDR__MSG_FILTER: {
        const struct fdr__msg_filter *m = msg;
        rc = fdrd_traces_filter(&s->traces, m->name, m->mask, text, sizeof text);
        struct fdrd_trace *t = rc == 0 ? fdrd_traces_find(&s->traces, m->name) : NULL;
        if (t)
            fdrd_persist_save(&s->traces, t);
        if (t && t->active)
            fdrd_collect_changed(s, t);
        reply(s, c, h->seq, rc, 0, text);
        return 0;
    }
    case FDR__MSG_START:
    case FDR__MSG_STOP: {
        const struct fdr__msg_trace *m = msg;
        rc = fdrd_traces_activate(&s->traces, m->name, h->type == FDR__MSG_START, text,
                                  sizeof text);
        struct fdrd_trace *t = rc == 0 ? fdrd_traces_find(&s->traces, m->name) : NULL;
        if (t)
            fdrd_persist_save(&s->traces, t);
        if (t && h->type == FDR__MSG_START)
            fdrd_collect_started(s, t);
        else if (t)
            fdrd_collect_stopped(s, t);
        reply(s, c, h->seq, rc, 0, text);
        return 0;
    }
    case FDR__MSG_DESTROY: {
        const struct fdr__msg_trace *m = msg;
        struct fdrd_trace *t = fdrd_traces_find(&s->traces, m->name);
        rc = t ? destroy(s, t, text, sizeof text)
               : fdrd_traces_destroy(&s->traces, m->name, text, sizeof text);
        reply(s, c, h->seq, rc, 0, text);
        return 0;
    }
    case FDR__MSG_SNAPSHOT: {
        const struct fdr__msg_snapshot *m = msg;
        struct fdrd_trace *t = fdrd_traces_find(&s->traces, m->name);
        if (!t) {
            snprintf(text, sizeof text,
                     "no trace named '%s' (fdr list traces shows them)", m->name);
            rc = ENOENT;
        } else
            rc = fdrd_collect_snapshot(s, t, m->outdir, text, sizeof text);
        if (rc == 0)
            fdrd_log("trace %s: snapshot in %s", m->name, text);
        reply(s, c, h->seq, rc, 0, text);
        return 0;
    }
    case FDR__MSG_LIST: {
        const struct fdr__msg_list *m = msg;
        switch (m->what) {
        case FDR__LIST_TRACES:
            list_traces(s, c, h->seq);
            break;
        case FDR__LIST_PROCESSES:
            list_processes(s, c, h->seq);
            break;
        case FDR__LIST_PROVIDERS:
        case FDR__LIST_EVENTS:
            list_providers(s, c, h->seq);
            break;
        default:
            snprintf(text, sizeof text, "cannot list '%u'", m->what);
            reply(s, c, h->seq, EINVAL, 0, text);
            return 0;
        }
        struct fdr__msg_hdr end;
        fdr__proto_init(&end, sizeof end, FDR__MSG_END, h->seq);
        fdrd_server_send(s, c, &end, sizeof end);
        return 0;
    }
    case FDR__MSG_STATUS:
        status(s, c, h->seq);
        return 0;
    case FDR__MSG_REGISTER_PROCESS:
        memcpy(&c->info, msg, sizeof c->info);
        c->registered = 1;
        reply(s, c, h->seq, 0, 0, NULL);
        return 0;
    case FDR__MSG_REGISTER_PROVIDER:
        register_provider(s, c, msg);
        return 0;
    case FDR__MSG_UNREGISTER_PROVIDER:
        unregister_provider(s, c, msg);
        return 0;
    case FDR__MSG_NEED_BUFFERS:
        fdrd_collect_need(s, c, msg);
        return 0;
    case FDR__MSG_DEAD_RING:
        fdrd_collect_dead_ring(s, c, msg);
        return 0;
    case FDR__MSG_LOST:
        return fdrd_collect_lost(c, msg);
    case FDR__MSG_CONTROL:
        control(s, c, msg);
        return 0;
    case FDR__MSG_STATE:
        return keep_state(c, msg);
    default:
        fdrd_log(
            "client %lu (pid %ld): sent a %s message, which only fdrd sends; dropped",
            c->id, (long)c->pid, fdr__proto_type_name(h->type));
        return -1;
    }
}
