/* SPDX-License-Identifier: MIT */
/* daemon.c - the process's side of fdrd: registration (docs/daemon.md).
 *
 * fdrd is optional, and the program must never be harmed by it: not
 * slowed at start, not blocked, not signalled, whatever fdrd does. So at
 * start (init.c) this file only looks whether fdrd's socket exists in the
 * run directory (FDR_RUNDIR, else $XDG_RUNTIME_DIR/fdr, else /tmp/fdr-UID
 * or $HOME/.fdr/run when another user made that, fdr__proto_rundir at
 * config time: one lstat each, nothing that can block); with no socket nothing more
 * happens (FDR_DEBUG=1 says so in one line), and fdr works alone as always.
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
 * Every message is sent with MSG_NOSIGNAL (no SIGPIPE). A send that fdrd's
 * socket cannot take (a stopped or busy fdrd) waits for room, as long as
 * the connection lasts, keeping what fdrd sends meanwhile for later
 * (send_fds): a connection given up would leave behind what fdrd was to
 * get of the registration (the own rings it lacks, their ledger). A stuck
 * fdrd costs the program one sleeping thread, nothing else.
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
 *     A thread that has recorded nothing 20 ms after a change (idle, or
 *     waiting) is moved by this thread, on its behalf, with what it
 *     recorded before (writer.c, fdr__writers_move): a next event may
 *     never come, and the program may be killed; and a thread or the
 *     process that ends while the registration is under way waits for
 *     fdrd's answer first, at most 3 s (fdr__daemon_settle), so that
 *     what a short program recorded reaches the traces started already.
 *
 *   - when fdrd passes on a CONTROL of the fdr command (the scope's
 *     switches and sliders), it applies the spec as fdr_record_set or
 *     fdr_trace_set would (control.c), on this thread, and reports the
 *     process's state (STATE: every known event with its recorded and
 *     printed switches, every tunable with its value); it reports it also
 *     once after registering, and whenever fdrd asks. Each tunable it set
 *     and each switch it changed is recorded, by this thread, as an event
 *     of fdr's own (fdr:tunable, fdr:switch: recorder/self.h).
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
#include <stdlib.h>
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
#include "recorder/cold.h"
#include "recorder/config.h"
#include "recorder/control.h"
#include "recorder/daemon.h"
#include "recorder/init.h"
#include "recorder/provider.h"
#include "recorder/registry.h"
#include "recorder/tunable.h"
#include "recorder/writer.h"

static int wake_fd = -1; /* eventfd: the providers changed */
static int sock_fd = -1; /* the connection, -1 when none; the thread's */
/* The same for OWN_RING from any thread, once registered (send_own_rings) */
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;
static int own_fd = -1;
static int started; /* the thread exists (not in a forked child) */
static char sock_path[sizeof((struct sockaddr_un *)0)->sun_path];
static uint32_t seq;
static uint32_t routes;   /* slots with a route (the thread's) */
static uint32_t want[64]; /* routes that asked for rings (a small set) */
static uint32_t nwant;    /* under want_lock */
static pthread_mutex_t want_lock = PTHREAD_MUTEX_INITIALIZER;
#define ROUTE_RINGS 16 /* rings asked for at a time */

/* What fdrd knows of our providers: the identity sent per slot and the
 * handle it answered (0: no answer yet). */
static FDR__COLD struct fdr__provider_id sent[FDR_PROVIDER_MAX];
static uint32_t handle[FDR_PROVIDER_MAX];
/* Slots from this one on were never sent: the arrays above are looked at
 * and cleared below it only, so that a program with few providers touches
 * few of their pages (a page fault each, ~40 us on a virtual machine). */
static uint32_t sent_end;

/* Replies carry the seq of their request: a provider's is its slot + this. */
#define SEQ_PROVIDER 0x10000u

static void debug(const char *what)
{
    if (fdr__cfg.debug)
        fdr__warn("fdrd (%s): %s", sock_path, what);
}

static int wait_room(void);
static void providers_changed(void);
/* The registration at start, in the program's own thread (fdr__daemon_start):
 * it never waits for room; what a full socket does not take is the
 * fdr-daemon thread's. */
static int at_start;

/* Sends on the connection, waiting for room as long as it lasts: 0, or a
 * send's -errno (the connection ended). */
static int send_fds(const void *msg, size_t len, const int *fds, int nfds)
{
    for (;;) {
        int e = fdr__proto_send_flags(sock_fd, msg, len, fds, nfds, MSG_DONTWAIT);
        if (e != -EAGAIN || at_start)
            return e;
        if (wait_room() < 0)
            return -EPIPE;
    }
}

static int send_msg(void *msg, size_t len, unsigned type, uint32_t s)
{
    fdr__proto_init(msg, len, type, s);
    return send_fds(msg, len, NULL, 0);
}

/* Threads that have not moved to the routes MOVE_MS after a change (idle,
 * blocked, or a main thread waiting for its children: a next event may
 * never come, and the program may be killed) are moved by this thread, on
 * their behalf (writer.c, fdr__writers_move), their past with them. Not
 * at once, and only those that recorded nothing meanwhile: the threads
 * that record move themselves at their next event, and a move on their
 * behalf stops them all for a moment. */
#define MOVE_MS 20
static uint64_t move_at; /* CLOCK_MONOTONIC ns, 0: none due */

/* Routes staged, applied together (routes_apply): the routes of the
 * traces started before the process registered (FDR__ROUTE_BACKFILL)
 * come one message each, before fdrd's answer to the class table. Applied
 * one at a time, a thread recording between two of them moved to the
 * first and recorded there what the second then never got: its past for
 * the second is read from its own ring, which no longer had it; and an
 * idle thread, busy when fdr looked (MOVE_MS), never moved to the second
 * at all, so that a kill left those events in neither that trace nor its
 * count (issue 24: 2 of 40 programs killed at random under two traces;
 * 213 of 2,000 events of one with three). So they wait for the answer (or
 * the window's end) and every thread moves once, with its whole past; the
 * threads record into their own rings meanwhile, waiting for nothing. */
static struct {
    uint32_t r;
    struct fdr__rules *rules;
    uint32_t mask;
    int backfill;
} stage[FDR__ROUTE_SLOTS];
static uint32_t staged; /* slots in stage */

/* Held while this thread holds memory only its stack knows: a route's
 * rules from their parse until a global (stage) holds them, a ring from
 * its allocation until the route lists do (fdr__buf_adopt). A child forked
 * in between (another thread's fork) found that memory nowhere, a leak
 * LeakSanitizer reported at its exit (fdr-daemon-early, brood). And while
 * the staged routes are applied (routes_apply): a child forked in the
 * middle found a slot's rules both staged and handed to the registry (or
 * freed), and freed them twice as it dropped the parent's routes
 * (AddressSanitizer, heap-use-after-free in fdr__daemon_forget: one brood
 * child of 200, 1 run in 40), or inherited the writers' hold for good.
 * Taken first of fdr's locks by fork (init.c), and by this thread only,
 * holding no other: what it takes under it (the registry's, the writers',
 * the route lock) fork takes after it too, and none of them waits. */
static pthread_mutex_t fork_gate = PTHREAD_MUTEX_INITIALIZER;

/* Sets the staged routes of their slots (0: none) with their selections
 * and masks; every thread moves, none writes meanwhile (writer.c,
 * fdr__writers_hold). */
static void routes_apply(void)
{
    if (!staged)
        return;
    pthread_mutex_lock(&fork_gate); /* a child sees them all staged, or none */
    fdr__writers_hold(1);
    for (uint32_t u = staged; u; u &= u - 1) {
        unsigned slot = (unsigned)__builtin_ctz(u);
        uint32_t r = stage[slot].r;
        fdr__buf_set_route(slot, r, stage[slot].backfill);
        /* Last: events become selected (fdr_enabled says yes) only a
         * moment before the writers are let go; an event in the hold is
         * discarded. */
        fdr__registry_set_route(slot, r ? stage[slot].rules : NULL, stage[slot].mask);
        if (!r)
            fdr__rules_free(stage[slot].rules);
        routes = r ? routes | 1u << slot : routes & ~(1u << slot);
    }
    fdr__writers_hold(0);
    uint32_t done = staged;
    staged = 0;
    pthread_mutex_unlock(&fork_gate);
    for (uint32_t u = done; u; u &= u - 1)
        debug(stage[__builtin_ctz(u)].r ? "recording into an fdrd trace"
                                        : "an fdrd trace ended here");
    if (!move_at) {
        move_at = fdr__clock_mono_ns() + MOVE_MS * 1000000ull;
        fdr__writers_note();
    }
}

/* The staged routes dropped (the connection ended before they applied). */
static void routes_unstage(void)
{
    for (uint32_t u = staged; u; u &= u - 1)
        fdr__rules_free(stage[__builtin_ctz(u)].rules);
    staged = 0;
}

static int window_open;     /* below */
static int classes_waiting; /* CLASSES sent on this connection, not answered */

/* The route of a slot: at once, or with the others at fdrd's answer
 * (not only while the window lasts: a first connection that failed
 * closes it, and the next one's routes come the same way). */
static int stage_route(unsigned slot, uint32_t r, struct fdr__rules *rules, uint32_t mask,
                       int backfill)
{
    if (staged >> slot & 1)
        fdr__rules_free(stage[slot].rules); /* replaced before it applied */
    stage[slot].r = r;
    stage[slot].rules = rules;
    stage[slot].mask = mask;
    stage[slot].backfill = backfill;
    staged |= 1u << slot;
    return !(backfill && classes_waiting); /* apply now */
}

static void set_route(unsigned slot, uint32_t r, struct fdr__rules *rules, uint32_t mask,
                      int backfill)
{
    if (stage_route(slot, r, rules, mask, backfill))
        routes_apply();
}

void fdr__daemon_fork(enum fdr__fork_phase ph)
{
    if (ph == FDR__FORK_PREPARE)
        pthread_mutex_lock(&fork_gate);
    else if (ph == FDR__FORK_PARENT)
        pthread_mutex_unlock(&fork_gate);
    else
        pthread_mutex_init(&fork_gate, NULL);
}

/* A registration under way, which a thread or the process that ends waits
 * for (fdr__daemon_settle, bounded by SETTLE_MS): from the start (and
 * each new connection) until fdrd answers the class table (the routes of
 * the traces started then came before the answer, and were applied), or
 * the connection fails. */
#define SETTLE_MS 3000
static uint32_t reg_pending;
static int reg_gave_up; /* a wait timed out: no more waits until an answer */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cond;

static void reg_set(uint32_t pending)
{
    pthread_mutex_lock(&reg_lock);
    __atomic_store_n(&reg_pending, pending, __ATOMIC_RELEASE);
    if (!pending)
        reg_gave_up = 0;
    pthread_cond_broadcast(&reg_cond);
    pthread_mutex_unlock(&reg_lock);
}

/* The registration window (buffer.h): open from the start until fdrd
 * answers the class table, or there is no fdrd (no connection, or it
 * ended: fdrd's death hangs it up). Not on a timer: a window ended while
 * fdrd still held the connection, stopped or slow, put the rings back to
 * overwrite (the first events, which a trace started before the program
 * wanted, written over uncounted), and a ring made after it never reached
 * fdrd (its events lost if the process was then killed: issue 24). So a
 * program whose fdrd is stopped for long keeps its first events, and
 * counts the rest, until fdrd answers; it never waits for it. */
static uint32_t classes_seq; /* CLASSES's seq: its answer closes the window */

/* answered: by fdrd's answer, after the routes it sent; else the routes
 * that want the process's past did not come (buffer.h, held). */
static void window_end(int answered)
{
    if (window_open) {
        window_open = 0;
        routes_apply(); /* the routes that came before the answer */
        fdr__buf_window_end();
        fdr__writers_unhold(!answered);
    }
}

/* fdrd's death (docs/daemon.md, "When fdrd dies"). The routes stay: every
 * thread goes on recording into the rings of the dead fdrd, which the
 * process still maps, with the same selections and masks. Nobody empties
 * them any more, so a discard-mode ring fills and then counts each event
 * it cannot take, per thread. When the next fdrd routes the process into
 * the same trace again (its definition outlived fdrd: daemon/persist.c,
 * and it keeps its id), the new route takes the dead one's slot, and each
 * thread, leaving the dead ring, counts what never reached the stream
 * file (the packets fdrd had not written, the discards no written packet
 * reported: fdr__writer_dead_lost) as discarded in its new ring. Slots are
 * the process's own: `local` maps the new fdrd's slot numbers to ours.
 * Route numbers of a new fdrd start from 1 again: ours are its + `base`,
 * so that a dead route's number is never a live one's. */
static uint32_t orphans;                      /* slots whose route's fdrd died */
static uint32_t slot_trace[FDR__ROUTE_SLOTS]; /* the trace id of each slot's route */
static uint8_t local[FDR__ROUTE_SLOTS];       /* fdrd's slot -> ours + 1 */
static uint32_t base, route_max;              /* route numbers: fdrd's + base */
static int resumed;                           /* registered before: no backfill */

/* The dead routes' traces, for DEAD_RING (the last DEAD of them). */
#define DEAD 64
static struct {
    uint32_t route, trace;
} dead[DEAD];
static unsigned ndead;

/* poll's timeout: the move of idle threads, if due; else none. A thread
 * that recorded since the last look (fdr__writers_note) is left to move
 * itself at its next packet, but one whose few events fitted in its open
 * packet and that then went quiet never opens one: the move is looked at
 * again, every MOVE_MS, while any thread is behind. Once, a main thread
 * that recorded 5 events just after its route came was never moved
 * (fdr-daemon-early "kill", TSan build, 1 run in 4). */
static int timeout_ms(void)
{
    static int said = -1; /* threads behind at the last look (debug) */
    if (!move_at)
        return -1;
    uint64_t now = fdr__clock_mono_ns();
    if (now >= move_at) {
        move_at = 0;
        int n = fdr__writers_move(1);
        int wait = fdr__writers_behind();
        if (wait) {
            move_at = now + MOVE_MS * 1000000ull;
            fdr__writers_note();
        }
        if (fdr__cfg.debug && (n || !wait || wait != said)) {
            char m[96];
            if (wait)
                snprintf(m, sizeof m,
                         "%d threads moved to fdrd's routes by fdr, %d not yet (or "
                         "waiting for a ring)",
                         n, wait);
            else
                snprintf(m, sizeof m, "every thread on fdrd's routes (%d moved by fdr)",
                         n);
            debug(m);
        }
        said = wait;
        return move_at ? MOVE_MS : -1;
    }
    return (int)((move_at - now) / 1000000) + 1;
}

/* Messages of fdrd's received while this thread waited to send (stash_one),
 * handled in order by the loop (client_main) once the send went: fdrd
 * does not read a client while its replies to it wait, so that both
 * sides would otherwise wait for each other. At most STASH_MAX. */
#define STASH_MAX 4096
struct stashed {
    struct stashed *next;
    long n;
    int nfds;
    int fds[FDR_PROTO_FDS_MAX];
    uint64_t buf[];
};
static struct stashed *stash, **stash_end = &stash;
static unsigned nstash;

/* One message of fdrd's into the stash: 0, or -1 (the connection ended). */
static int stash_one(void)
{
    uint64_t buf[FDR_PROTO_MSG_MAX / 8];
    int fds[FDR_PROTO_FDS_MAX], nfds = 0;
    long n = fdr__proto_recv(sock_fd, buf, sizeof buf, fds, &nfds, FDR_PROTO_FDS_MAX);
    if (n == -EAGAIN || n == -EINTR)
        return 0;
    struct stashed *m =
        n > 0 && nstash < STASH_MAX ? malloc(sizeof *m + (size_t)n) : NULL;
    if (!m) {
        fdr__proto_close_fds(fds, nfds);
        return -1;
    }
    m->next = NULL;
    m->n = n;
    m->nfds = nfds;
    memcpy(m->fds, fds, sizeof fds);
    memcpy(m->buf, buf, (size_t)n);
    *stash_end = m;
    stash_end = &m->next;
    nstash++;
    return 0;
}

static struct stashed *stash_take(void)
{
    struct stashed *m = stash;
    if (m && !(stash = m->next))
        stash_end = &stash;
    nstash -= m != NULL;
    return m;
}

/* A send fdrd's socket cannot take now (fdrd stopped, or busy): waits for
 * room, stashing what fdrd sends meanwhile and moving idle threads when
 * due, however long fdrd takes while it holds the connection. 0 to try
 * again, -1 when the connection ended. */
static int wait_room(void)
{
    struct pollfd p = {sock_fd, POLLOUT | POLLIN, 0};
    if (poll(&p, 1, timeout_ms()) <= 0)
        return 0;
    if (p.revents & POLLIN)
        return stash_one();
    return p.revents & (POLLHUP | POLLERR) ? -1 : 0;
}

static void drop_connection(void)
{
    routes_unstage();
    classes_waiting = 0;
    window_end(0);
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
        if (routes >> i & 1) {
            dead[ndead % DEAD].route = __atomic_load_n(&fdr__routes[i], __ATOMIC_RELAXED);
            dead[ndead % DEAD].trace = slot_trace[i];
            ndead++;
        }
    reg_set(0);
    if (routes) {
        orphans |= routes;
        routes = 0;
        debug("fdrd died: recording on into its rings, counting what they cannot take");
    }
    base = route_max;
    __atomic_store_n(&fdr__route_dead_max, route_max, __ATOMIC_RELAXED);
    memset(local, 0, sizeof local);
    pthread_mutex_lock(&want_lock);
    nwant = 0;
    pthread_mutex_unlock(&want_lock);
    pthread_mutex_lock(&own_lock);
    own_fd = -1; /* no thread sends on it any more */
    /* Its ledger is counted when fdrd sees the connection end; a thread
     * whose ring it never got records into it from now on. */
    __atomic_store_n(&fdr__buf_ledger, (struct fdr__ledger *)NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&own_lock);
    if (sock_fd >= 0) {
        close(sock_fd);
        resumed = 1;
    }
    __atomic_store_n(&sock_fd, -1, __ATOMIC_RELAXED);
    memset(sent, 0, sent_end * sizeof *sent);
    memset(handle, 0, sent_end * sizeof *handle);
    sent_end = 0;
    for (struct stashed *m; (m = stash_take());) {
        fdr__proto_close_fds(m->fds, m->nfds);
        free(m);
    }
}

/* Tells the new fdrd which packets of the dead rings the threads counted
 * as discarded (writer.c, fdr__writer_dead_lost): it cuts any of them that
 * a write cut short by the kill left in the stream file, so that none is
 * both in the trace and counted. */
static void send_cuts(void)
{
    struct fdr__dead_cut cut[16];
    unsigned n;
    while (sock_fd >= 0 && (n = fdr__buf_dead_take(cut, 16)) > 0)
        for (unsigned i = 0; i < n && sock_fd >= 0; i++)
            for (unsigned k = 0; k < DEAD && k < ndead; k++)
                if (dead[k].route == cut[i].route) {
                    struct fdr__msg_dead_ring m;
                    memset(&m, 0, sizeof m);
                    m.trace = dead[k].trace;
                    m.index = cut[i].index;
                    m.consumed = cut[i].consumed;
                    if (send_msg(&m, sizeof m, FDR__MSG_DEAD_RING, ++seq) < 0)
                        drop_connection();
                    break;
                }
}

/* Counts lost to routes that no ring of them counts (buffer.c,
 * route_lost), taken at the process's end (fdr__daemon_lost_send) and
 * sent by this thread (LOST), which owns the socket: fdrd writes them
 * as discarded. Before, a process that ended before any ring of a route
 * came (fdrd could not make one, or was slow to send it) took them along
 * uncounted: 2,000 events of 4 threads, neither in the trace nor counted
 * (test-fdr-daemon-lost.py). */
static pthread_mutex_t lost_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lost_cond; /* CLOCK_MONOTONIC (fdr__daemon_start) */
static FDR__COLD struct fdr__lost_count lost_out[FDR__ROUTE_SLOTS];
static unsigned nlost_out; /* waiting in lost_out */

static void send_lost(void)
{
    struct fdr__lost_count l[FDR__ROUTE_SLOTS];
    pthread_mutex_lock(&lost_lock);
    unsigned n = nlost_out;
    memcpy(l, lost_out, n * sizeof *l);
    pthread_mutex_unlock(&lost_lock);
    for (unsigned i = 0; i < n && sock_fd >= 0; i++) {
        if (l[i].route <= base)
            continue; /* a dead fdrd's route: no fdrd writes its trace now */
        struct fdr__msg_lost m;
        memset(&m, 0, sizeof m);
        m.route = l[i].route - base;
        m.tid = l[i].tid;
        m.count = l[i].n;
        m.ts = l[i].ts;
        if (send_msg(&m, sizeof m, FDR__MSG_LOST, ++seq) < 0)
            drop_connection();
    }
    if (!n)
        return;
    pthread_mutex_lock(&lost_lock);
    nlost_out = 0;
    pthread_cond_broadcast(&lost_cond);
    pthread_mutex_unlock(&lost_lock);
}

void fdr__daemon_lost_send(void)
{
    if (!started)
        return;
    struct fdr__lost_count l[FDR__ROUTE_SLOTS];
    unsigned n = fdr__buf_lost_take(l, FDR__ROUTE_SLOTS);
    if (!n)
        return;
    pthread_mutex_lock(&lost_lock);
    memcpy(lost_out, l, n * sizeof *l);
    nlost_out = n;
    pthread_mutex_unlock(&lost_lock);
    providers_changed(); /* wakes the thread */
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += 1;
    int late = 0;
    pthread_mutex_lock(&lost_lock);
    while (nlost_out && !late)
        late = pthread_cond_timedwait(&lost_cond, &lost_lock, &dl) == ETIMEDOUT;
    late = nlost_out != 0;
    pthread_mutex_unlock(&lost_lock);
    if (late)
        debug("events lost to an fdrd trace with no ring of it here: fdrd did not take "
              "their count within 1 s");
}

/* The new fdrd has sent the routes of every trace started (before its
 * answer to our class table): a dead route whose trace did not come back
 * ends here, and the threads go back to their own rings. */
static void orphans_end(void)
{
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
        if (orphans >> i & 1) {
            orphans &= ~(1u << i);
            set_route(i, 0, NULL, 0, 0);
        }
}

/* Our slot for fdrd's slot fs of trace `trace`: the dead route's of that
 * trace, else fs, else the lowest free one; -1 when none is free. */
static int local_slot(unsigned fs, uint32_t trace)
{
    if (local[fs])
        return local[fs] - 1;
    int ls = -1;
    for (unsigned i = 0; i < FDR__ROUTE_SLOTS && ls < 0; i++)
        if ((orphans >> i & 1) && slot_trace[i] == trace)
            ls = (int)i;
    for (unsigned i = 0; i <= FDR__ROUTE_SLOTS && ls < 0; i++) {
        unsigned k = i ? i - 1 : fs;
        if (!((routes | orphans) >> k & 1))
            ls = (int)k;
    }
    if (ls >= 0)
        local[fs] = (uint8_t)(ls + 1);
    return ls;
}

/* Hands fdrd the class table, from which it writes our metadata. */
static int send_classes(void)
{
    uint64_t size;
    int fd = fdr__registry_share(&size);
    if (fd < 0) {
        window_end(0);
        reg_set(0);
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
    classes_waiting = 1;
    if (send_fds(&m, sizeof m, &fd, 1) < 0) {
        drop_connection();
        return -1;
    }
    return 0;
}

/* Hands fdrd the rings made in the registration window that it does not
 * have yet (OWN_RING): should the process end before its threads hand
 * over what they recorded there (killed, _exit, exec), fdrd copies it
 * itself (docs/daemon.md, "Events before the route"). Not after a
 * reconnection: a process that registers again hands nothing over.
 *
 * A ring is handed over by the thread that makes it, at once, before its
 * first event (own_now, buffer.c's early hook), and not by this thread
 * when it next wakes: a process killed in between (a second thread's
 * first events, then SIGKILL) would leave them where fdrd never looks,
 * uncounted. That thread holds the writers lock, so it must not wait for
 * fdrd: every OWN_RING goes with MSG_DONTWAIT, and one fdrd's queue cannot
 * take now is left to this thread (it waits for room, send_fds).
 * own_lock (a leaf: taken under the writers lock, never the other way)
 * orders the two senders and keeps own_fd open while it is used.
 *
 * A ring fdrd does not hold yet (its socket full: a stopped or busy fdrd
 * takes ~280 small messages, the sender's socket buffer; or past the
 * FDR_PROTO_OWN_MAX rings fdrd keeps) is marked so (b->sent clear): its
 * thread records nothing into it while the window lasts, and counts each
 * event in the ledger of the first ring fdrd holds instead (writer.c),
 * which fdrd reads however the process ends. So no event of the window
 * is ever only in a ring fdrd cannot read, and nobody waits for fdrd. */
static uint32_t own_sent;  /* rings below this index were looked at */
static uint32_t own_count; /* OWN_RING messages sent */

/* Under own_lock: 0, or a send's -errno (-EAGAIN: fdrd's queue is full). */
static int own_send_locked(void)
{
    for (uint32_t n = fdr__buf_count();
         own_fd >= 0 && own_sent < n && own_count < FDR_PROTO_OWN_MAX; own_sent++) {
        struct fdr__buf *b = fdr__buf_at(own_sent);
        if (!b || !b->early)
            continue;
        struct fdr__msg_own_ring m;
        memset(&m, 0, sizeof m);
        m.index = b->geom.index;
        m.packet_size = b->geom.packet_size;
        m.n_packets = b->geom.n_packets;
        m.size = b->geom.size;
        int fd = b->fd;
        fdr__proto_init(&m, sizeof m, FDR__MSG_OWN_RING, 0); /* no answer */
        int e = fdr__proto_send_flags(own_fd, &m, sizeof m, &fd, 1, MSG_DONTWAIT);
        if (e < 0)
            return e;
        own_count++;
        __atomic_store_n(&b->sent, 1, __ATOMIC_RELEASE);
        if (!__atomic_load_n(&fdr__buf_ledger, __ATOMIC_RELAXED))
            __atomic_store_n(&fdr__buf_ledger, b->hdr->ledger, __ATOMIC_RELEASE);
    }
    return 0;
}

/* This thread's turn: what the makers of rings could not send. */
static void send_own_rings(void)
{
    for (;;) {
        pthread_mutex_lock(&own_lock);
        int e = own_send_locked();
        pthread_mutex_unlock(&own_lock);
        if (e == -EAGAIN && at_start) {
            providers_changed(); /* the thread's, then */
            return;
        }
        if (e == -EAGAIN && wait_room() == 0)
            continue;
        if (e < 0)
            drop_connection();
        return;
    }
}

/* buffer.c, a ring made in the window (writers lock held): to fdrd now. */
static void own_now(void)
{
    pthread_mutex_lock(&own_lock);
    own_send_locked(); /* what it could not send, the thread sends */
    pthread_mutex_unlock(&own_lock);
    providers_changed();
}

/* Connects and registers the process; 0, or -1 (no connection). With
 * `nonblock` (at start: the program must not wait for a busy fdrd to
 * accept) a full backlog is a failure, left to the thread. */
static int connect_and_register(int nonblock)
{
    int s = socket(AF_UNIX,
                   SOCK_SEQPACKET | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
    if (s < 0)
        return -1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, sock_path, sizeof a.sun_path);
    struct ucred cr;
    socklen_t crl = sizeof cr;
    /* FDR_TEST_SNDBUF (tests only): a small send buffer, so that a test
     * fills it with a few messages, as a stopped fdrd does with ~280. */
    int sb = (int)fdr__cfg.test_sndbuf;
    if (sb)
        setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sb, sizeof sb);
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0 ||
        (nonblock && fcntl(s, F_SETFL, 0) < 0) ||
        getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0) {
        close(s);
        return -1;
    }
    if (cr.uid != geteuid()) {
        close(s);
        reg_set(0);
        debug("the socket belongs to another user: not fdrd, not used");
        return -2;
    }
    __atomic_store_n(&sock_fd, s, __ATOMIC_RELAXED);
    reg_set(1);
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
    if (send_classes() < 0)
        return -1;
    if (!resumed) {
        pthread_mutex_lock(&own_lock);
        own_fd = sock_fd;
        pthread_mutex_unlock(&own_lock);
    }
    send_own_rings();
    return sock_fd >= 0 ? 0 : -1;
}

/* Brings fdrd's view of our providers up to date. */
static void sync_providers(void)
{
    static FDR__COLD struct fdr__provider_id now[FDR_PROVIDER_MAX];
    uint32_t n = fdr__provider_snapshot(now), end = n > sent_end ? n : sent_end;
    for (uint32_t i = 0; i < end && sock_fd >= 0; i++) {
        int had = sent[i].name[0] != 0, has = i < n && now[i].name[0] != 0;
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
            if (i >= sent_end)
                sent_end = i + 1;
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
    static FDR__COLD uint64_t
        buf[(sizeof(struct fdr__msg_state) + FDR_PROTO_ITEMS_CAP) / 8 + 1];
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
        fdr__control_set_recorded(m->what == FDR__CONTROL_PRINT, spec, "fdr scope");
    }
    send_state(m->h.seq);
}

/* Reads one message of fdrd's (poll said there is one): a reply to our
 * registrations. 0, or -1 when the connection ended or fdrd sent what it
 * must not: its messages are checked like anyone's. */
static int handle_msg(const uint64_t *buf, long n, int *fds, int nfds);

static int read_reply(void)
{
    uint64_t buf[FDR_PROTO_MSG_MAX / 8];
    int fds[FDR_PROTO_FDS_MAX], nfds = 0;
    long n = fdr__proto_recv(sock_fd, buf, sizeof buf, fds, &nfds, FDR_PROTO_FDS_MAX);
    if (n == -EAGAIN || n == -EINTR)
        return 0;
    if (n <= 0)
        return -1;
    return handle_msg(buf, n, fds, nfds);
}

/* Whether a ring of trace `trace` is taken: always, but in tests
 * (FDR_TEST_NO_RINGS: none; 3, only the first trace's that sends one). */
static int test_rings_taken(uint32_t trace)
{
    static uint32_t first; /* 0: none yet (fdrd numbers traces from 1) */
    if (fdr__cfg.test_no_rings != 3)
        return !fdr__cfg.test_no_rings;
    if (!first)
        first = trace;
    return trace == first;
}

/* One message of fdrd's, received (read_reply, or the stash). */
static int handle_msg(const uint64_t *buf, long n, int *fds, int nfds)
{
    if (fdr__proto_check(buf, (size_t)n, nfds, NULL, 0) < 0) {
        fdr__proto_close_fds(fds, nfds);
        return -1;
    }
    const struct fdr__msg_hdr *mh = (const void *)buf;
    if (mh->type == FDR__MSG_BUFFER) {
        const struct fdr__msg_buffer *b = (const void *)buf;
        if (b->kind == FDR__BUFFER_DOORBELL)
            fdr__buf_set_doorbell(fds[0]);
        else if ((b->kind == FDR__BUFFER_RING || b->kind == FDR__BUFFER_GROW) &&
                 b->route && test_rings_taken(b->trace)) {
            /* Announced ahead of its route: its number is taken too. */
            if (b->route + base > route_max)
                route_max = b->route + base;
            pthread_mutex_lock(&fork_gate);
            fdr__buf_adopt(fds[0], b->size, b->route + base, b->kind == FDR__BUFFER_GROW);
            pthread_mutex_unlock(&fork_gate);
            /* Threads that wait for one and record nothing more (idle, or
             * about to end) take it at the next move, as after a change of
             * routes: at their end there may be none left, and what they
             * recorded was then counted on no thread of theirs. */
            if (!move_at && b->kind == FDR__BUFFER_RING) {
                move_at = fdr__clock_mono_ns() + MOVE_MS * 1000000ull;
                fdr__writers_note();
            }
        } else
            close(fds[0]); /* a ring of a route that ended */
        return 0;
    }
    fdr__proto_close_fds(fds, nfds); /* no other message carries one */
    if (mh->type == FDR__MSG_ROUTE) {
        const struct fdr__msg_route *m = (const void *)buf;
        struct fdr__rules *rules = NULL;
        if ((m->active && m->route == 0) || m->slot >= FDR__ROUTE_SLOTS)
            return -1; /* routes are numbered from 1, slots 0..31 */
        pthread_mutex_lock(&fork_gate);
        if (m->active) {
            /* The items were checked by fdrd; parse them all the same. */
            char spec[SPEC_CAP];
            join_items(m->items, m->len, spec);
            if (fdr__rules_parse_flags(spec, "fdrd", FDR__RULES_NO_FILES, NULL, NULL,
                                       &rules) < 0) {
                pthread_mutex_unlock(&fork_gate);
                return -1;
            }
        }
        int ls = local_slot(m->slot, m->trace);
        if (ls < 0) {
            fdr__rules_free(rules); /* 32 routes held already: not this one */
            pthread_mutex_unlock(&fork_gate);
            return 0;
        }
        if (!m->active)
            local[m->slot] = 0;
        uint32_t r = m->active ? m->route + base : 0;
        if (r > route_max)
            route_max = r;
        orphans &= ~(1u << ls); /* a dead route, replaced */
        slot_trace[ls] = m->trace;
        /* A process that registers again handed its past to the traces
         * already (or counts it, above): no backfill twice. */
        int now = stage_route((unsigned)ls, r, rules, m->mask,
                              !resumed && (m->flags & FDR__ROUTE_BACKFILL) != 0);
        pthread_mutex_unlock(&fork_gate);
        if (now)
            routes_apply();
        return 0;
    }
    if (mh->type == FDR__MSG_CONTROL) {
        control((const void *)buf);
        return sock_fd >= 0 ? 0 : -1;
    }
    const struct fdr__msg_reply *r = (const void *)buf;
    if (r->h.type == FDR__MSG_REPLY && r->h.seq == classes_seq && classes_seq) {
        classes_waiting = 0;
        routes_apply(); /* the routes of the traces started then came before */
        window_end(1);
        orphans_end();
        reg_set(0);
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
    /* Named here, not by the program's thread: pthread_setname_np of
     * another thread opens, writes and closes /proc/self/task/N/comm,
     * three system calls at the program's start instead of one here. */
    prctl(PR_SET_NAME, "fdr-daemon", 0, 0, 0);
    unsigned wait_ms = 1000;
    if (fdr__cfg.test_daemon_delay_ms) {
        /* FDR_TEST_DAEMON_DELAY (tests only): the registration window held
         * open, fdrd's answers unread, so that a test kills a process in it. */
        struct timespec d = {fdr__cfg.test_daemon_delay_ms / 1000,
                             (long)(fdr__cfg.test_daemon_delay_ms % 1000) * 1000000};
        while (nanosleep(&d, &d) < 0 && errno == EINTR)
            ;
    }
    if (sock_fd >= 0) /* registered at start (fdr__daemon_start) */
        sync_providers();
    for (;;) {
        if (sock_fd < 0) {
            int r = connect_and_register(0);
            if (r == -2) {
                window_end(0);
                return NULL; /* another user's socket: never again */
            }
            if (r < 0) {
                window_end(0);
                reg_set(0);
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
        /* What fdrd sent while this thread waited to send, first. */
        struct stashed *m = stash_take();
        if (m) {
            int r = handle_msg(m->buf, m->n, m->fds, m->nfds);
            free(m);
            if (r < 0 || sock_fd < 0) {
                drop_connection();
                debug("fdrd went away; looking for it again");
            }
            continue;
        }
        struct pollfd p[2] = {{sock_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
        int pr = poll(p, 2, timeout_ms());
        if (pr <= 0)
            continue; /* the move of idle threads; EINTR: no signal reaches here */
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
            send_own_rings();
            send_cuts();
            send_lost();
            uint32_t asked[64];
            pthread_mutex_lock(&want_lock);
            uint32_t n = nwant;
            memcpy(asked, want, n * sizeof *asked);
            nwant = 0;
            pthread_mutex_unlock(&want_lock);
            for (uint32_t i = 0; i < n && sock_fd >= 0; i++) {
                struct fdr__msg_need_buffers nb;
                if (asked[i] <= base)
                    continue; /* a dead fdrd's route */
                memset(&nb, 0, sizeof nb);
                nb.route = asked[i] - base;
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

void fdr__daemon_counter(void)
{
#if FDR__COUNTER_MEASURED
    char path[sizeof fdr__cfg.rundir + sizeof FDR__COUNTER_FILE + 1];
    int n = fdr__proto_cat(path, sizeof path, fdr__cfg.rundir, "/" FDR__COUNTER_FILE);
    if (!fdr__cfg.daemon || n < 0 || (size_t)n >= sizeof path)
        return;
    /* The run directory is ours (0700, checked by fdrd); the file must be
     * too, and no link: what it says is then checked against the counter. */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return;
    struct stat st;
    char buf[FDR__COUNTER_MAX];
    ssize_t k = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()
                    ? read(fd, buf, sizeof buf)
                    : -1;
    close(fd);
    struct fdr__counter_ref r;
    if (k <= 0 || fdr__counter_parse(buf, (size_t)k, &r) < 0)
        return;
    int e = fdr__clock_adopt(&r);
    if (fdr__cfg.debug && e < 0)
        fdr__warn("%s: fdrd's measure of the counter does not fit this process's: "
                  "measured here",
                  path);
    else if (fdr__cfg.debug)
        fdr__warn("%s: fdrd's measure of the counter taken: %llu Hz", path,
                  (unsigned long long)r.freq);
#endif
}

void fdr__daemon_start(void)
{
    if (!fdr__cfg.daemon)
        return;
    int n = fdr__proto_cat(sock_path, sizeof sock_path, fdr__cfg.rundir, "/fdrd.sock");
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
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&reg_cond, &ca);
    pthread_cond_init(&lost_cond, &ca);
    pthread_condattr_destroy(&ca);
    __atomic_store_n(&reg_pending, 1, __ATOMIC_RELEASE);
    window_open = 1;
    __atomic_store_n(&fdr__buf_window, 1, __ATOMIC_SEQ_CST);
    /* Registered here, not waiting for an answer (one round of system
     * calls, tens of microseconds), with a ring made ahead for the first
     * thread that records: fdrd then holds the rings of a process killed
     * right after its first events (docs/daemon.md, "Events before the
     * route"). The rest is the thread's. */
    pthread_mutex_lock(&fdr__writers_lock);
    fdr__buf_spare();
    pthread_mutex_unlock(&fdr__writers_lock);
    fdr__buf_early_hook = own_now;
    at_start = 1;
    int r = connect_and_register(1);
    at_start = 0;
    if (r == -2) {
        window_end(0);
        reg_pending = 0;
        return;
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
        window_end(0);
        reg_pending = 0;
        return;
    }
    fdr__writer_settle_hook = fdr__daemon_settle;
    fdr__provider_changed_hook = providers_changed;
    fdr__buf_low_hook = rings_low;
    fdr__buf_dead_hook = providers_changed; /* wakes the thread: send_cuts */
    fdr__buf_dead_lost_hook = fdr__writer_dead_lost;
    fdr__buf_carry_hook = fdr__writer_carry_as;
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
    fdr__writer_settle_hook = fdr__daemon_noop;
    pthread_mutex_init(&reg_lock, NULL);
    reg_pending = 0;
    reg_gave_up = 0;
    int s = __atomic_load_n(&sock_fd, __ATOMIC_RELAXED);
    if (s >= 0)
        close(s);
    sock_fd = -1;
    if (wake_fd >= 0)
        close(wake_fd);
    wake_fd = -1;
    memset(sent, 0, sent_end * sizeof *sent);
    memset(handle, 0, sent_end * sizeof *handle);
    sent_end = 0;
    routes = 0;
    orphans = 0;
    ndead = 0;
    fdr__buf_dead_hook = fdr__daemon_noop;
    resumed = 0;
    base = route_max = 0;
    memset(local, 0, sizeof local);
    nwant = 0;
    routes_unstage();
    classes_waiting = 0;
    own_sent = own_count = 0;
    own_fd = -1;
    pthread_mutex_init(&own_lock, NULL);
    fdr__buf_early_hook = fdr__daemon_noop;
    move_at = 0;
    pthread_mutex_init(&want_lock, NULL);
    pthread_mutex_init(&lost_lock, NULL);
    nlost_out = 0;
    return 1;
}

void fdr__daemon_noop(void) {}

void fdr__daemon_settle(void)
{
    if (!started || !__atomic_load_n(&reg_pending, __ATOMIC_ACQUIRE))
        return;
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += SETTLE_MS / 1000;
    dl.tv_nsec += (long)(SETTLE_MS % 1000) * 1000000;
    if (dl.tv_nsec >= 1000000000) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&reg_lock);
    int said = reg_gave_up, late = 0;
    while (reg_pending && !reg_gave_up)
        if (pthread_cond_timedwait(&reg_cond, &reg_lock, &dl) == ETIMEDOUT)
            reg_gave_up = late = reg_pending != 0;
    pthread_mutex_unlock(&reg_lock);
    if (late && !said)
        debug("no answer to the registration within 3 s at the end of a thread or of "
              "the process: fdrd copies what it recorded from the rings it was handed "
              "when it reads this connection (the first events, the rest counted)");
}
