/* SPDX-License-Identifier: MIT */
/* init.c - starting and stopping the library, flush, fork.
 *
 * fdr__init() runs once, on the first call into the library (usually from
 * the constructor that registers the program's call sites): configuration,
 * clock, registry, membarrier registration, the rule lists from FDR_EVENTS
 * and FDR_TRACES, the print file and, when a trace is written to disk in
 * discard mode, the consumer thread. It registers an exit handler early, so
 * it runs late: events recorded in the program's own exit handlers are
 * still in the trace.
 *
 * Flushing (fdr_flush, exit) stops every writer with the tracing-section
 * protocol (section.c), closes each thread's partially filled packet, then
 * writes everything out: through the consumer in discard mode, or the
 * newest packets of each ring in overwrite mode.
 *
 * After fork() only the forking thread exists in the child, and the
 * parent's rings (MAP_SHARED) and trace files are not the child's: the
 * child drops the parent's writers, unmaps the rings and records into new
 * rings of its own, in memory (flight recorder), writing nothing to disk.
 * (With the daemon, the child will get new buffers from it.) Every lock of
 * fdr is taken around fork() (fork_prepare), so that a child forked while
 * another thread is inside fdr (a snapshot, a flush, fdr_trace_set...)
 * never waits for a thread that does not exist in it. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "fdr/fdr.h"
#include "recorder/buffer.h"
#include "recorder/clock.h"
#include "recorder/config.h"
#include "recorder/consumer.h"
#include "recorder/daemon.h"
#include "recorder/control.h"
#include "recorder/flight.h"
#include "recorder/init.h"
#include "recorder/print.h"
#include "recorder/registry.h"
#include "recorder/section.h"
#include "recorder/writer.h"

static int initialized;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int exiting;

/* Every discarded event must reach the trace: each buffer whose last
 * packet does not report its current count gets an empty packet that does
 * (writer.c). A full ring is written out first. Writers are quiesced. */
static void carry_all_discards(uint64_t now)
{
    for (uint32_t i = 0; i < fdr__buf_count(); i++) {
        struct fdr__buf *b = fdr__buf_at(i);
        struct fdr__writer *owner = NULL;
        for (struct fdr__writer *w = fdr__writers; w && !owner; w = w->next)
            if (w->buf == b)
                owner = w;
        for (int tries = 0; tries < 2; tries++) {
            int r = owner ? fdr__writer_carry_discards(owner, now)
                          : fdr__buf_carry_discards(b, now);
            if (r != -ENOSPC)
                break;
            fdr__consumer_drain(0);
        }
    }
}

static int flush_all(int final)
{
    int r = 0;
    pthread_mutex_lock(&fdr__writers_lock);
    if (fdr__section_quiesce() < 0) {
        /* A writer could not be stopped (signal fallback, signal blocked):
         * its packet may be changing, so nothing is closed. */
        pthread_mutex_unlock(&fdr__writers_lock);
        fdr__warn("flush: a thread could not be stopped; its events are not written");
        return -ETIMEDOUT;
    }
    uint64_t now = fdr__now();
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        fdr__writer_close_packet(w, now);
    carry_all_discards(now);
    if (fdr__cfg.mode == FDR__MODE_OVERWRITE) {
        /* Only the newest n-1 complete packets of each ring are whole, and
         * writers must stay paused while they are written out. */
        for (uint32_t i = 0; i < fdr__buf_count(); i++) {
            struct fdr__buf *b = fdr__buf_at(i);
            struct fdr__buf_hdr *h = b->hdr;
            uint32_t keep = b->geom.n_packets - 1; /* not h's: it may be scribbled */
            /* A held ring's slots stay the writer's (consumer.c). */
            if (!__atomic_load_n(&b->held, __ATOMIC_ACQUIRE) &&
                h->produced - h->consumed > keep)
                h->consumed = h->produced - keep;
        }
        r = fdr__consumer_drain(1);
    }
    if (final)
        __atomic_store_n(&fdr__enabled_default, 0, __ATOMIC_RELAXED);
    else
        fdr__section_resume();
    pthread_mutex_unlock(&fdr__writers_lock);
    /* Discard mode: the closed packets are published; writing them out
     * does not need the writers stopped. */
    if (fdr__cfg.mode == FDR__MODE_DISCARD)
        r = fdr__consumer_drain(1);
    return r;
}

static void at_exit(void)
{
    if (exiting)
        return;
    exiting = 1;
    /* A process that ends before fdrd's routes came (a short program, a
     * forked child): they come first, so what it recorded reaches the
     * traces started already (daemon.c; bounded). */
    if (fdr__buf_used()) {
        fdr__daemon_settle();
        fdr__writers_move(0);
    }
    fdr__daemon_lost_send(); /* counts no ring of their route holds */
    fdr__consumer_stop();
    if (fdr__cfg.output[0]) {
        flush_all(1);
        fdr__consumer_finished();
    }
    fdr__consumer_clean_end(); /* an exit is no crash: FDR_CRASH_DIR keeps nothing */
}

int fdr_flush(void)
{
    fdr__init();
    if (!fdr__cfg.output[0])
        return -ENOTSUP;
    return flush_all(0);
}

/* Every lock of fdr, in the one order (init.h, fdr__fork_phase): a
 * child forked while another thread is inside fdr finds them free and the
 * state they guard whole. */
static void fork_prepare(void)
{
    fdr__daemon_fork(FDR__FORK_PREPARE);
    fdr__control_fork(FDR__FORK_PREPARE);
    fdr__tunables_fork(FDR__FORK_PREPARE);
    fdr__snapshot_fork(FDR__FORK_PREPARE);
    fdr__provider_fork(FDR__FORK_PREPARE);
    fdr__registry_lock();
    pthread_mutex_lock(&fdr__writers_lock);
    fdr__buf_route_lock();
}

static void fork_release(enum fdr__fork_phase ph)
{
    if (ph == FDR__FORK_PARENT)
        fdr__buf_route_unlock(); /* the child's is made anew (buffer.c) */
    pthread_mutex_unlock(&fdr__writers_lock);
    fdr__registry_unlock();
    fdr__provider_fork(ph);
    fdr__snapshot_fork(ph);
    fdr__tunables_fork(ph);
    fdr__control_fork(ph);
    fdr__daemon_fork(ph);
}

static void fork_parent(void)
{
    fork_release(FDR__FORK_PARENT);
}

/* The trace's (and its clock's) UUID: random, version 4. */
static void new_uuid(void)
{
    if (getrandom(fdr__trace_uuid, sizeof fdr__trace_uuid, GRND_NONBLOCK) !=
        (ssize_t)sizeof fdr__trace_uuid) {
        uint64_t a = fdr__now() ^ (uint64_t)fdr__pid << 32;
        memcpy(fdr__trace_uuid, &a, 8);
    }
    fdr__trace_uuid[6] = (uint8_t)((fdr__trace_uuid[6] & 0x0f) | 0x40);
    fdr__trace_uuid[8] = (uint8_t)((fdr__trace_uuid[8] & 0x3f) | 0x80);
}

static void fork_child(void)
{
    /* The parent's writers, rings and trace files stay the parent's: the
     * child starts with new rings of its own, in memory (flight recorder,
     * crash dumps, snapshots), and writes no trace to disk. */
    fdr__pid = getpid();
    /* A trace of its own: readers that see two traces with one UUID take
     * them for one (their clocks too, and the child's clock parameters
     * are its own: babeltrace2 then merges them out of order). */
    new_uuid();
    struct fdr__thread *t = &fdr__self;
    for (struct fdr__writer *w = fdr__writers, *next; w; w = next) {
        next = w->next;
        /* Its rings of fdrd's routes are the parent's: unmapped here (every
         * writer's: the other threads' too, which do not exist here). */
        for (unsigned i = 0; i < FDR__ROUTE_SLOTS; i++)
            if (w->lane[i].buf)
                fdr__buf_unmap(w->lane[i].buf);
        if (w->buf != w->local && !w->pslot)
            fdr__buf_unmap(w->buf);
        fdr__writer_free(w);
    }
    t->writer = NULL;
    t->pos = t->end = NULL;
    fdr__writers = NULL;
    fdr__buf_forget_all();
    fdr__consumer_forget();
    int registered = fdr__daemon_forget();
    fdr__registry_fork_child();
    fdr__cfg.output[0] = 0;
    fdr__cfg.mode = FDR__MODE_OVERWRITE;
    fork_release(FDR__FORK_CHILD);
    if (registered)
        fdr__daemon_start(); /* the child registers on its own */
}

/* What the lower layers tell the upper ones goes through pointers set here,
 * once, before anything else: buffer.c and writer.c never call up into the
 * consumer or the crash handler, snapshot.c never into crash.c
 * (docs/design.md, Layers). */
static void install_hooks(void)
{
    fdr__buf_added_hook = fdr__consumer_buffer_added;
    fdr__writer_hooks =
        (struct fdr__writer_hooks){fdr__consumer_kick, fdr__consumer_drain,
                                   fdr__crash_thread_init, fdr__crash_thread_exit};
    fdr__snapshot_signal_owned = fdr__crash_owns;
}

static void init_once(void)
{
    install_hooks();
    fdr__pid = getpid();
    fdr__config_load();
    fdr__clock_init();
    fdr__registry_init();
    fdr__section_init();
    new_uuid();
    fdr__control_init(); /* FDR_EVENTS, FDR_TRACES (control.c) */
    fdr__print_open();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    atexit(at_exit);
    fdr__daemon_counter(); /* before the consumer's metadata needs the clock */
    if (fdr__cfg.output[0] && fdr__cfg.mode == FDR__MODE_DISCARD &&
        fdr__consumer_start() < 0) {
        /* No trace on disk (reported): keep the newest events in memory. */
        fdr__cfg.output[0] = 0;
        fdr__cfg.mode = FDR__MODE_OVERWRITE;
    } else if (fdr__cfg.output[0] && fdr__cfg.mode == FDR__MODE_OVERWRITE)
        fdr__consumer_flight();
    else if (!fdr__cfg.output[0] && fdr__cfg.crash_dir[0] &&
             fdr__cfg.mode == FDR__MODE_OVERWRITE)
        fdr__consumer_crash_flight();
    fdr__crash_init();   /* crash handlers (crash.c) */
    fdr__flight_init();  /* snapshot signal (snapshot.c) */
    fdr__daemon_start(); /* fdrd, if one runs: registration (daemon.c) */
    __atomic_store_n(&initialized, 1, __ATOMIC_RELEASE);
}

void fdr__init(void)
{
    if (__builtin_expect(__atomic_load_n(&initialized, __ATOMIC_ACQUIRE), 1))
        return;
    pthread_once(&once, init_once);
}
