/* SPDX-License-Identifier: MIT */
/* daemon.c - the process's side of fdrd: registration (docs/daemon.md).
 *
 * fdrd is optional, and the program must never be harmed by it: not
 * slowed at start, not blocked, not signalled, whatever fdrd does. So at
 * start (init.c) this file only looks whether fdrd's socket exists in the
 * run directory (FDR_RUNDIR, else $XDG_RUNTIME_DIR/fdr, else /tmp/fdr-UID:
 * one lstat, nothing that can block); with no socket nothing more happens
 * (FDR_DEBUG=1 says so in one line), and fdr works alone as always.
 *
 * With a socket, a thread "fdr-daemon" (every signal blocked, so that no
 * handler of the program runs in it) does all the talking, so the
 * program's start-up costs one pthread_create:
 *   - it connects (SOCK_SEQPACKET, close-on-exec), checks with SO_PEERCRED
 *     that the other end runs as our user (else it gives up: a socket
 *     another user prepared is not fdrd), and sends REGISTER_PROCESS;
 *   - it sends REGISTER_PROVIDER for every provider the program has, and
 *     for every one it registers later (provider.c calls the hook set by
 *     init.c, which wakes this thread through an eventfd), and
 *     UNREGISTER_PROVIDER when the program drops one; fdrd counts
 *     references per process and drops them when the connection ends,
 *     however the process ends;
 *   - it reads fdrd's replies (the handles of the providers), never
 *     waiting for one before going on;
 *   - when fdrd goes away (hang-up, error) it connects again, every second
 *     then up to every 5 s, and registers everything again.
 * Every message is sent with MSG_NOSIGNAL (no SIGPIPE), and a send that
 * fdrd does not take within a second is given up as a lost connection: a
 * stuck fdrd costs the program one sleeping thread, nothing else.
 *
 *   - it hands fdrd the class table (CLASSES: its sealed memfd, the
 *     clock and the trace uuid), from which fdrd writes the metadata;
 *   - when fdrd sends a ROUTE (a started trace, in one of 32 slots), it
 *     holds every writer on the slow path (writer.c, fdr__writers_hold),
 *     installs the trace's selection and filter mask (registry.c) and the
 *     route (buffer.c), and lets go: each thread moves itself to rings of
 *     the routes at its next event; it maps the rings fdrd sends (BUFFER),
 *     and asks for more (NEED_BUFFERS) when buffer.c says they run low.
 *     When a trace stops its slot is emptied the same way; when fdrd goes
 *     away every slot is, and the threads go back to their own rings.
 *
 *   - when fdrd passes on a CONTROL of the fdr command (the scope's
 *     switches and sliders), it applies the spec as fdr_record_set or
 *     fdr_trace_set would (control.c), on this thread, and reports the
 *     process's state (STATE: every known event with its recorded and
 *     printed switches, every tunable with its value); it reports it also
 *     once after registering, and whenever fdrd asks.
 *
 * A forked child closes its copy of the connection (fork_child in init.c
 * calls fdr__daemon_forget): the parent's registration is the parent's;
 * the child starts a thread of its own and registers as a process of its
 * own, with its own class table, and fdrd routes it like any other. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/pattern.h"
#include "proto/proto.h"
#include "recorder/buffer.h"
#include "recorder/clock.h"
#include "recorder/config.h"
#include "recorder/control.h"
#include "recorder/daemon.h"
#include "recorder/provider.h"
#include "recorder/registry.h"
#include "recorder/tunable.h"
#include "recorder/writer.h"

static int wake_fd = -1; /* eventfd: the providers changed */
static int sock_fd = -1; /* the connection, -1 when none; the thread's */
static int started;      /* the thread exists (not in a forked child) */
static char sock_path[sizeof((struct sockaddr_un *)0)->sun_path];
static uint32_t seq;
static uint32_t routes;   /* slots with a route (the thread's) */
static uint32_t want[64]; /* routes that asked for rings (a small set) */
static uint32_t nwant;    /* under want_lock */
static pthread_mutex_t want_lock = PTHREAD_MUTEX_INITIALIZER;
#define ROUTE_RINGS 16 /* rings asked for at a time */

/* What fdrd knows of our providers: the identity sent per slot and the
 * handle it answered (0: no answer yet). */
static struct fdr__provider_id sent[FDR_PROVIDER_MAX];
static uint32_t handle[FDR_PROVIDER_MAX];

/* Replies carry the seq of their request: a provider's is its slot + this. */
#define SEQ_PROVIDER 0x10000u

static void debug(const char *what)
{
    if (fdr__cfg.debug)
        fdr__warn("fdrd (%s): %s", sock_path, what);
}

static int send_msg(void *msg, size_t len, unsigned type, uint32_t s)
{
    fdr__proto_init(msg, len, type, s);
    return fdr__proto_send(sock_fd, msg, len, NULL, 0);
}

/* Sets the route of a slot (0: none) with its selection and mask; every
 * thread moves, none writes meanwhile (writer.c, fdr__writers_hold). */
static void set_route(unsigned slot, uint32_t r, struct fdr__rules *rules, uint32_t mask,
                      int backfill)
{
    fdr__writers_hold(1);
    fdr__buf_set_route(slot, r, backfill);
    /* Last: events become selected (fdr_enabled says yes) only a moment
     * before the writers are let go; an event in the hold is discarded. */
    fdr__registry_set_route(slot, r ? rules : NULL, mask);
    if (!r)
        fdr__rules_free(rules);
    fdr__writers_hold(0);
    routes = r ? routes | 1u << slot : routes & ~(1u << slot);
    debug(r ? "recording into an fdrd trace" : "an fdrd trace ended here");
}

/* The registration window (buffer.h): open from the start until fdrd
 * answers the class table, there is no fdrd, or WINDOW_MS pass. */
#define WINDOW_MS 1000
static uint32_t classes_seq;  /* CLASSES's seq: its answer closes the window */
static uint64_t window_until; /* CLOCK_MONOTONIC ns */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void window_end(void)
{
    if (window_until) {
        window_until = 0;
        fdr__buf_window_end();
    }
}

/* poll's timeout: the window's end, or none. */
static int window_ms(void)
{
    if (!window_until)
        return -1;
    uint64_t now = mono_ns();
    if (now >= window_until) {
        window_end();
        return -1;
    }
    return (int)((window_until - now) / 1000000) + 1;
}

static void drop_connection(void)
{
    window_end();
    if (routes) {
        fdr__writers_hold(1);
        for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
            if (routes >> i & 1)
                fdr__registry_set_route(i, NULL, 0);
        fdr__buf_drop_routes();
        fdr__writers_hold(0);
        routes = 0;
        debug("recording alone again");
    }
    if (sock_fd >= 0)
        close(sock_fd);
    __atomic_store_n(&sock_fd, -1, __ATOMIC_RELAXED);
    memset(sent, 0, sizeof sent);
    memset(handle, 0, sizeof handle);
}

/* Hands fdrd the class table, from which it writes our metadata. */
static int send_classes(void)
{
    uint64_t size;
    int fd = fdr__registry_share(&size);
    if (fd < 0) {
        window_end();
        return 0; /* no memfd: fdrd cannot write our traces */
    }
    struct fdr__msg_classes m;
    memset(&m, 0, sizeof m);
    struct fdr__clock_params clk;
    struct fdr__line_clock line;
    fdr__clock_params(&clk);
    fdr__clock_line(&line);
    m.size = size;
    m.clock_freq = clk.freq;
    m.clock_offset_s = clk.offset_s;
    m.clock_offset = clk.offset;
    m.line_start = line.start;
    m.line_freq = line.freq;
    memcpy(m.uuid, fdr__trace_uuid, sizeof m.uuid);
    fdr__proto_init(&m, sizeof m, FDR__MSG_CLASSES, ++seq);
    classes_seq = seq;
    if (fdr__proto_send(sock_fd, &m, sizeof m, &fd, 1) < 0) {
        drop_connection();
        return -1;
    }
    return 0;
}

/* Connects and registers the process; 0, or -1 (no connection). */
static int connect_and_register(void)
{
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, sock_path, sizeof a.sun_path);
    struct timeval tv = {1, 0}; /* a send fdrd does not take: connection lost */
    struct ucred cr;
    socklen_t crl = sizeof cr;
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0 ||
        setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 ||
        getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0) {
        close(s);
        return -1;
    }
    if (cr.uid != geteuid()) {
        close(s);
        debug("the socket belongs to another user: not fdrd, not used");
        return -2;
    }
    __atomic_store_n(&sock_fd, s, __ATOMIC_RELAXED);
    struct fdr__msg_register_process m;
    memset(&m, 0, sizeof m);
    m.pid = (uint32_t)getpid();
    m.ppid = (uint32_t)getppid();
    m.sizeof_int = sizeof(int);
    m.sizeof_long = sizeof(long);
    m.sizeof_pointer = sizeof(void *);
    m.sizeof_size_t = sizeof(size_t);
    /* The program's name (this thread's own is "fdr-daemon"), cut to fit. */
    char name[FDR_PROTO_NAME_CAP];
    snprintf(name, sizeof name, "%s", program_invocation_short_name);
    fdr__proto_set_str(m.name, sizeof m.name, name);
    if (send_msg(&m, sizeof m, FDR__MSG_REGISTER_PROCESS, ++seq) < 0) {
        drop_connection();
        return -1;
    }
    debug("registered");
    return send_classes();
}

/* Brings fdrd's view of our providers up to date. */
static void sync_providers(void)
{
    static struct fdr__provider_id now[FDR_PROVIDER_MAX];
    fdr__provider_snapshot(now);
    for (uint32_t i = 0; i < FDR_PROVIDER_MAX && sock_fd >= 0; i++) {
        int had = sent[i].name[0] != 0, has = now[i].name[0] != 0;
        if (had && (!has || memcmp(&sent[i], &now[i], sizeof now[i]) != 0)) {
            struct fdr__msg_unregister_provider u;
            memset(&u, 0, sizeof u);
            u.handle = handle[i];
            if (handle[i] &&
                send_msg(&u, sizeof u, FDR__MSG_UNREGISTER_PROVIDER, ++seq) < 0) {
                drop_connection();
                return;
            }
            memset(&sent[i], 0, sizeof sent[i]);
            handle[i] = 0;
            had = 0;
        }
        if (has && !had) {
            struct fdr__msg_register_provider r;
            memset(&r, 0, sizeof r);
            r.size = now[i].size;
            r.nevents = now[i].nevents;
            r.checksum = now[i].checksum;
            r.alignment = now[i].alignment;
            r.sizeof_int = now[i].sizeof_int;
            r.sizeof_long = now[i].sizeof_long;
            r.sizeof_pointer = now[i].sizeof_pointer;
            r.sizeof_size_t = now[i].sizeof_size_t;
            memcpy(r.name, now[i].name, sizeof r.name);
            r.name[sizeof r.name - 1] = 0;
            if (send_msg(&r, sizeof r, FDR__MSG_REGISTER_PROVIDER, SEQ_PROVIDER + i) <
                0) {
                drop_connection();
                return;
            }
            sent[i] = now[i];
        }
    }
}

/* A message's items (checked: NUL-terminated, filling len) joined by ','
 * into spec[SPEC_CAP], leaving out @file items: the process never reads a
 * file because another process said so. */
#define SPEC_CAP (FDR_PROTO_ITEMS_CAP + FDR_PROTO_ITEMS_MAX)
static void join_items(const char *items, uint32_t len, char *spec)
{
    size_t k = 0;
    for (const char *it = items; it < items + len; it += strlen(it) + 1) {
        size_t l = strlen(it);
        if (it[0] == '@')
            continue;
        if (k)
            spec[k++] = ',';
        memcpy(spec + k, it, l);
        k += l;
    }
    spec[k] = 0;
}

/* ---- the process's state, for the scope ------------------------------------ */

struct state_buf {
    struct fdr__msg_state *m;
    size_t cap; /* bytes for items */
    int full;   /* an item did not fit: "+" ends the list */
};

static void state_add(struct state_buf *b, const char *item)
{
    size_t n = strlen(item) + 1;
    if (b->full || n > FDR_PROTO_ITEM_MAX + 1)
        return;
    /* Room for this item and a final "+" if more come. */
    if (b->m->nitems + 2 > FDR_PROTO_ITEMS_MAX || b->m->len + n + 2 > b->cap) {
        memcpy(b->m->items + b->m->len, "+", 2);
        b->m->len += 2;
        b->m->nitems++;
        b->full = 1;
        return;
    }
    memcpy(b->m->items + b->m->len, item, n);
    b->m->len += (uint32_t)n;
    b->m->nitems++;
}

static void state_event(void *arg, const fdr_event_info_t *e)
{
    char item[FDR_PROTO_ITEM_MAX + 1];
    int n = snprintf(item, sizeof item, "E %d %d %s %s", e->recorded, e->printed,
                     e->provider, e->event);
    if (n > 0 && (size_t)n < sizeof item)
        state_add(arg, item);
}

static void state_tunable(void *arg, const fdr_tunable_info_t *t)
{
    char item[FDR_PROTO_ITEM_MAX + 1];
    int n =
        t->is_double
            ? snprintf(item, sizeof item, "T %s d %d %.17g %.17g %.17g %.17g", t->name,
                       t->has_range, t->value, t->min, t->max, t->def)
            : snprintf(item, sizeof item, "T %s i %d %lld %lld %lld %lld", t->name,
                       t->has_range, t->value_int, t->min_int, t->max_int, t->def_int);
    if (n > 0 && (size_t)n < sizeof item)
        state_add(arg, item);
}

/* Sends STATE: every known event and tunable, one item each; `answers`
 * the number of the last CONTROL applied. */
static void send_state(uint32_t answers)
{
    static uint64_t buf[(sizeof(struct fdr__msg_state) + FDR_PROTO_ITEMS_CAP) / 8 + 1];
    struct state_buf b = {(struct fdr__msg_state *)buf, FDR_PROTO_ITEMS_CAP, 0};
    memset(b.m, 0, sizeof *b.m);
    b.m->answers = answers;
    fdr__control_event_each(state_event, &b);
    fdr__tunable_list(state_tunable, &b);
    if (send_msg(b.m, sizeof *b.m + b.m->len, FDR__MSG_STATE, ++seq) < 0)
        drop_connection();
}

/* CONTROL, passed on by fdrd: a spec to apply (its items joined by ','),
 * or only a question; the state is the answer either way. */
static void control(const struct fdr__msg_control *m)
{
    if (m->what == FDR__CONTROL_RECORD || m->what == FDR__CONTROL_PRINT) {
        char spec[SPEC_CAP];
        join_items(m->items, m->len, spec);
        fdr__control_set_rules(m->what == FDR__CONTROL_PRINT, spec, "fdr scope");
    }
    send_state(m->h.seq);
}

/* Reads one message of fdrd's (poll said there is one): a reply to our
 * registrations. 0, or -1 when the connection ended or fdrd sent what it
 * must not: its messages are checked like anyone's. */
static int read_reply(void)
{
    uint64_t buf[FDR_PROTO_MSG_MAX / 8];
    int fds[FDR_PROTO_FDS_MAX], nfds = 0;
    long n = fdr__proto_recv(sock_fd, buf, sizeof buf, fds, &nfds, FDR_PROTO_FDS_MAX);
    if (n == -EAGAIN || n == -EINTR)
        return 0;
    if (n <= 0)
        return -1;
    if (fdr__proto_check(buf, (size_t)n, nfds, NULL, 0) < 0) {
        fdr__proto_close_fds(fds, nfds);
        return -1;
    }
    const struct fdr__msg_hdr *mh = (const void *)buf;
    if (mh->type == FDR__MSG_BUFFER) {
        const struct fdr__msg_buffer *b = (const void *)buf;
        if (b->kind == FDR__BUFFER_DOORBELL)
            fdr__buf_set_doorbell(fds[0]);
        else if (b->kind == FDR__BUFFER_RING && b->route)
            fdr__buf_adopt(fds[0], b->size, b->route);
        else
            close(fds[0]); /* a ring of a route that ended */
        return 0;
    }
    fdr__proto_close_fds(fds, nfds); /* no other message carries one */
    if (mh->type == FDR__MSG_ROUTE) {
        const struct fdr__msg_route *m = (const void *)buf;
        struct fdr__rules *rules = NULL;
        if ((m->active && m->route == 0) || m->slot >= FDR__ROUTE_SLOTS)
            return -1; /* routes are numbered from 1, slots 0..31 */
        if (m->active) {
            /* The items were checked by fdrd; parse them all the same. */
            char spec[SPEC_CAP];
            join_items(m->items, m->len, spec);
            if (fdr__rules_parse_flags(spec, "fdrd", FDR__RULES_NO_FILES, NULL, NULL,
                                       &rules) < 0)
                return -1;
        }
        set_route(m->slot, m->active ? m->route : 0, rules, m->mask,
                  (m->flags & FDR__ROUTE_BACKFILL) != 0);
        return 0;
    }
    if (mh->type == FDR__MSG_CONTROL) {
        control((const void *)buf);
        return sock_fd >= 0 ? 0 : -1;
    }
    const struct fdr__msg_reply *r = (const void *)buf;
    if (r->h.type == FDR__MSG_REPLY && r->h.seq == classes_seq && classes_seq) {
        window_end(); /* the routes of the traces started then came before */
        send_state(0);
    }
    if (r->h.type == FDR__MSG_REPLY && r->h.seq >= SEQ_PROVIDER &&
        r->h.seq < SEQ_PROVIDER + FDR_PROVIDER_MAX && r->h.status == 0)
        handle[r->h.seq - SEQ_PROVIDER] = r->value;
    return 0;
}

static void *client_main(void *arg)
{
    (void)arg;
    unsigned wait_ms = 1000;
    for (;;) {
        if (sock_fd < 0) {
            int r = connect_and_register();
            if (r == -2)
                return NULL; /* another user's socket: never again */
            if (r < 0) {
                window_end();
                struct pollfd w = {wake_fd, POLLIN, 0};
                if (poll(&w, 1, (int)wait_ms) > 0) {
                    uint64_t v;
                    ssize_t k = read(wake_fd, &v, sizeof v);
                    (void)k;
                }
                wait_ms = wait_ms < 5000 ? wait_ms * 2 : 5000;
                continue;
            }
            wait_ms = 1000;
            sync_providers();
        }
        struct pollfd p[2] = {{sock_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
        int pr = poll(p, 2, window_ms());
        if (pr <= 0)
            continue; /* the window's end; EINTR: no signal reaches here */
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            if (read_reply() < 0 || (!(p[0].revents & POLLIN) && p[0].revents)) {
                drop_connection();
                debug("fdrd went away; looking for it again");
                continue;
            }
        }
        if (p[1].revents & POLLIN) {
            uint64_t v;
            ssize_t k = read(wake_fd, &v, sizeof v);
            (void)k;
            sync_providers();
            uint32_t asked[64];
            pthread_mutex_lock(&want_lock);
            uint32_t n = nwant;
            memcpy(asked, want, n * sizeof *asked);
            nwant = 0;
            pthread_mutex_unlock(&want_lock);
            for (uint32_t i = 0; i < n && sock_fd >= 0; i++) {
                struct fdr__msg_need_buffers nb;
                memset(&nb, 0, sizeof nb);
                nb.route = asked[i];
                nb.count = ROUTE_RINGS;
                if (send_msg(&nb, sizeof nb, FDR__MSG_NEED_BUFFERS, ++seq) < 0) {
                    drop_connection();
                    debug("fdrd went away; looking for it again");
                }
            }
        }
    }
    return NULL;
}

/* buffer.c: a route's free rings run low (route lock held, maybe in a
 * writer's slow path: note it and wake the thread, nothing more). */
static void rings_low(uint32_t route)
{
    pthread_mutex_lock(&want_lock);
    int known = 0;
    for (uint32_t i = 0; i < nwant && !known; i++)
        known = want[i] == route;
    if (!known && nwant < 64)
        want[nwant++] = route;
    pthread_mutex_unlock(&want_lock);
    if (!known && wake_fd >= 0) {
        uint64_t one = 1;
        ssize_t k = write(wake_fd, &one, sizeof one);
        (void)k;
    }
}

static void providers_changed(void)
{
    if (wake_fd >= 0) {
        uint64_t one = 1;
        ssize_t k = write(wake_fd, &one, sizeof one);
        (void)k;
    }
}

void fdr__daemon_start(void)
{
    if (!fdr__cfg.daemon)
        return;
    int n = snprintf(sock_path, sizeof sock_path, "%s/fdrd.sock", fdr__cfg.rundir);
    if (n < 0 || (size_t)n >= sizeof sock_path)
        return;
    struct stat st;
    if (lstat(sock_path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
        debug("no fdrd running: recording alone");
        return;
    }
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd < 0)
        return;
    if (!fdr__cfg.output[0] && fdr__cfg.mode == FDR__MODE_OVERWRITE) {
        window_until = mono_ns() + WINDOW_MS * 1000000ull;
        __atomic_store_n(&fdr__buf_window, 1, __ATOMIC_SEQ_CST);
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&t, &at, client_main, NULL);
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        close(wake_fd);
        wake_fd = -1;
        window_end();
        return;
    }
    pthread_setname_np(t, "fdr-daemon");
    fdr__provider_changed_hook = providers_changed;
    fdr__buf_low_hook = rings_low;
    started = 1;
}

int fdr__daemon_forget(void)
{
    /* In a forked child: the parent's connection, thread and routes are
     * the parent's (buffer.c and registry.c forgot theirs). A child of a
     * registered process registers on its own, with a thread of its own,
     * and gets rings of its own from fdrd. */
    if (!started)
        return 0;
    started = 0;
    fdr__provider_changed_hook = fdr__daemon_noop;
    int s = __atomic_load_n(&sock_fd, __ATOMIC_RELAXED);
    if (s >= 0)
        close(s);
    sock_fd = -1;
    if (wake_fd >= 0)
        close(wake_fd);
    wake_fd = -1;
    memset(sent, 0, sizeof sent);
    memset(handle, 0, sizeof handle);
    routes = 0;
    nwant = 0;
    pthread_mutex_init(&want_lock, NULL);
    return 1;
}

void fdr__daemon_noop(void) {}
