/* SPDX-License-Identifier: MIT */
/* consumer.c - the in-process consumer: full packets to stream files, and
 * the drain helper that finishes them when the process dies.
 *
 * Without a daemon (the embedded default), a background thread writes the
 * trace named by FDR_OUTPUT into a directory of this process's own
 * (common/tracedir.h makes it; another user's is refused):
 *
 *   <FDR_OUTPUT>/<name>-<pid>/metadata        replaced (temporary + rename)
 *                                              when event classes are added
 *   <FDR_OUTPUT>/<name>-<pid>/stream_<index>  the packets of buffer <index>
 *
 * so processes that share FDR_OUTPUT (a program and the children it runs)
 * never mix, and `babeltrace2 FDR_OUTPUT` reads them all.
 *
 * DESIGN. The consumer never touches a packet that a writer may still
 * change: it reads `produced` with an acquire load (pairs with the release
 * in fdr__writer_close_packet), writes packets [consumed, produced) and
 * then publishes `consumed` with a release store, which gives the slots
 * back to the writer (discard mode; not a held ring's, buffer.h). Before
 * writing any packet it makes sure the metadata on disk knows every class
 * registered so far, so the files on disk are always a readable trace.
 *
 * Each packet is written as its header, with packet_size trimmed to the
 * content, followed by the content, once the one validator of every reader
 * has taken it (common/validate.h: header, events, times, against what the
 * stream already holds); a packet it refuses is skipped and counted. What
 * the consumer wrote of each stream (packets, bytes, lost events, the
 * stream's state) is its own (out_states), never read back from the ring's
 * header page, which the program may write over; the header page gets a
 * copy (out_bytes: where the whole packets of its stream file end) for
 * common/drain.c. A write that fails
 * (full disk, any error) is cut back to that boundary, the packet's events
 * are counted in out_lost and carried in the discarded count of every
 * later packet (first in a header-only copy of the failed packet), so the
 * file stays whole and emitted = recorded + discarded still holds.
 *
 * The drain helper. A SIGKILL (or _exit, or exit from another thread) can
 * stop this thread in the middle of a writev, and closed packets still in
 * the rings would be lost. So, with FDR_OUTPUT set, a helper process is
 * started at start (helper_start): the small executable fdr-drain
 * (drain_main.c), with vfork + exec (helper_spawn), or, where it is not
 * found, a clone of the program (helper_clone). It shares the rings
 * (memfds, new ones passed over a socket), the registry's class table and
 * a memfd of its own with the program (drainer.h), sleeps on a pidfd of
 * the program, and when the program has died cuts each stream file back
 * to its last whole packet, writes every packet still committed in the
 * rings and exits (drainer.c). It is a process with no exit signal:
 * wait(-1) and SIGCHLD handlers of the program never see it (where that
 * is refused, as under qemu-user, it is a clone made through a child that
 * exits at once: helper_clone); it blocks every signal, keeps only its
 * three descriptors, and exits only after the program is gone (init
 * reaps it).
 *
 * The thread sleeps on a futex "doorbell" and wakes when a writer's ring
 * is half full (fdr__consumer_kick), when a thread exits, or after
 * FDR_FLUSH_MS. fdr__consumer_drain() is the same pass run by the caller
 * (flush, exit); a mutex keeps the two from writing at once. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include "recorder/kernel.h" /* futex: musl has no linux/ headers */
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/committed.h"
#include "common/drain.h"
#include "common/format.h"
#include "common/io.h"
#include "common/iter.h"
#include "common/pathwalk.h"
#include "common/tracedir.h"
#include "common/validate.h"
#include "recorder/cold.h"
#include "recorder/buffer.h"
#include "recorder/clock.h"
#include "recorder/config.h"
#include "recorder/consumer.h"
#include "recorder/drainer.h"
#include "recorder/flight.h"
#include "recorder/init.h"
#include "recorder/metadata.h"
#include "recorder/registry.h"

static pthread_t thread;
static int running;
static int stop;
static uint32_t doorbell; /* 1 while the consumer sleeps */
static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static int failed;                            /* a write error was reported once */
static int unflushed_error;                   /* a write failed since the last flush */
static int trace_fd = -1;                     /* <FDR_OUTPUT>/<name>-<pid>/ */
static struct fdr__fd_id trace_id;            /* what trace_fd names */
static char dir_name[256];                    /* <name>-<pid> */
static FDR__COLD char trace_name[4096 + 256]; /* its path, for messages */
static FDR__COLD char meta_buf[8192];         /* under pass_lock, or the helper's */
static int helper_sock = -1;                  /* to the drain helper; -1: none */
static struct fdr__fd_id sock_id;             /* what helper_sock names */

/* Shared with the drain helper (MAP_SHARED): the registry generation the
 * metadata on disk describes. Points to local_gen when there is no helper. */
static uint64_t local_gen = (uint64_t)-1;
static uint64_t *disk_gen = &local_gen;
/* Shared with the drain helper too (the word after disk_gen): set when the
 * program ended in a way that kept its events already (its exit handler
 * ran, or the crash handler wrote FDR_CRASH_DIR/crash-<pid>). Read only by
 * a helper with no trace directory (FDR_CRASH_DIR alone): it writes the
 * rings as crash-<pid> when the program died without either (SIGKILL,
 * _exit). NULL when there is no helper. */
static uint64_t *clean_end;

/* What the consumer has written of each buffer's stream (drainer.h):
 * shared with the drain helper when there is one. */
#define OUT_STATES FDR__OUT_STATES
static FDR__COLD struct fdr__out_state local_states[OUT_STATES];
static struct fdr__out_state *out_states = local_states;
static uint32_t states_used; /* entries [0, states_used) may be non-zero */

static void futex_wake(uint32_t *addr)
{
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* FUTEX_WAIT for at most ms milliseconds, the timeout in the layout of the
 * system call that takes it, not the C library's struct timespec: where
 * time_t is 64-bit on a 32-bit target (musl 1.2, glibc's _TIME_BITS=64),
 * SYS_futex would read the two halves of tv_sec as seconds and
 * nanoseconds, 100 ms as 0 s, and the consumer would never sleep. */
static void futex_wait_ms(uint32_t *addr, uint32_t val, unsigned ms)
{
#if defined(__x86_64__) && defined(__ILP32__) /* x32: 64-bit fields */
    struct {
        int64_t sec, nsec;
    } t = {ms / 1000, (int64_t)(ms % 1000) * 1000000};
#else
#if defined(SYS_futex_time64) && UINTPTR_MAX == UINT32_MAX
    struct {
        int64_t sec, nsec;
    } t64 = {ms / 1000, (int64_t)(ms % 1000) * 1000000};
    if (syscall(SYS_futex_time64, addr, FUTEX_WAIT_PRIVATE, val, &t64, NULL, 0) == 0 ||
        errno != ENOSYS)
        return; /* woken, timed out, interrupted, or the word changed */
#endif
    struct {
        long sec, nsec; /* the kernel's own: old_timespec32 on 32-bit */
    } t = {(long)(ms / 1000), (long)(ms % 1000) * 1000000};
#endif
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &t, NULL, 0);
}

void fdr__consumer_kick(void)
{
    if (__atomic_load_n(&doorbell, __ATOMIC_RELAXED) &&
        __atomic_exchange_n(&doorbell, 0, __ATOMIC_ACQ_REL))
        futex_wake(&doorbell);
}

int fdr__consumer_asleep(void)
{
    return (int)__atomic_load_n(&doorbell, __ATOMIC_ACQUIRE);
}

static void report(const char *what, int err)
{
    if (!failed)
        fdr__warn("FDR_OUTPUT=\"%s\": cannot write the trace: %s: %s", fdr__cfg.output,
                  what,
                  err == EPERM    ? "it belongs to another user or others may write it"
                  : err == EEXIST ? "a symlink or another user's file is in the way"
                                  : fdr__pathwalk_strerror(err));
    failed = 1;
}

/* The program may have closed trace_fd (closefrom(3)) and its number may
 * now be a file of the program's: checked before each use (common/io.h),
 * and opened again by its path when it is still the same directory. */
static int trace_dir(void)
{
    if (trace_fd < 0 || fdr__fd_is(trace_fd, &trace_id))
        return trace_fd < 0 ? -EBADF : 0;
    int top = fdr__tracedir_open_top(fdr__cfg.output);
    int fd = top < 0 ? top : fdr__tracedir_make(top, dir_name);
    if (top >= 0)
        close(top);
    if (fd >= 0 && fdr__fd_is(fd, &trace_id)) {
        trace_fd = fd;               /* the old number is not ours any more: left alone */
        fdr__tracedir_mark_hold(fd); /* the trace is still being written */
        return 0;
    }
    if (fd >= 0)
        close(fd);
    trace_fd = -1;
    report("its directory was closed by the program and is gone", fd < 0 ? -fd : ENOENT);
    return -EBADF;
}

/* The metadata on disk describes every class registered so far. */
static int ensure_metadata(void)
{
    uint64_t g = fdr__registry_generation();
    if (g == __atomic_load_n(disk_gen, __ATOMIC_ACQUIRE))
        return 0;
    if (trace_dir() < 0)
        return -EBADF;
    int r = fdr__metadata_write(trace_fd, meta_buf, sizeof meta_buf);
    if (r < 0) {
        report("metadata", -r);
        return r;
    }
    __atomic_store_n(disk_gen, g, __ATOMIC_RELEASE);
    return 0;
}

/* Packets and ring headers found corrupt (principle 6): skipped, counted,
 * and reported once. In overwrite mode a writer that laps the consumer
 * overwrites closed packets before they are written: counted as
 * discarded as well, but said apart (nothing was corrupt). */
static struct fdr__skips skips, warned;          /* under pass_lock */
static uint64_t overwritten, overwritten_warned; /* likewise */

static void skipped(int ring, uint64_t packets)
{
    skips.rings += (uint64_t)ring;
    skips.packets += packets;
}

/* The classes of this process (the registry), for counting events. */
static struct fdr__classes classes_now(void)
{
    struct fdr__classes t;
    fdr__registry_classes(&t);
    return t;
}

/* b's stream file, open; as trace_dir() for a descriptor the program
 * closed: the same file opened again, at the end of its whole packets. */
static int open_stream(struct fdr__buf *b)
{
    if (b->out_fd >= 0 && fdr__fd_is(b->out_fd, &b->out_id))
        return 0;
    char name[32];
    fdr__stream_name(name, b->index);
    if (trace_dir() < 0)
        return b->out_fd = -EBADF;
    if (b->out_fd >= 0) {
        int fd = openat(trace_fd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && fdr__fd_is(fd, &b->out_id)) {
            b->out_fd = fd;
            fdr__drain_cut(fd, b->hdr);
            return 0;
        }
        if (fd >= 0)
            close(fd);
        report(name, ENOENT); /* removed or replaced: a new file from here */
    }
    b->out_fd = fdr__tracedir_create(trace_fd, name);
    if (b->out_fd < 0) {
        report(name, -b->out_fd);
        return b->out_fd;
    }
    fdr__fd_id(b->out_fd, &b->out_id);
    return 0;
}

/* Writes the packet of sequence seq of b, its bytes taken from slot (see
 * copy_slots). */
static int write_packet(struct fdr__buf *b, uint64_t seq, const char *slot,
                        uint64_t *grown)
{
    if (open_stream(b) < 0)
        return b->out_fd;
    struct fdr__classes t = classes_now();
    int r = fdr__drain_slot(b->out_fd, b->hdr, &b->geom, seq, slot, &t,
                            &out_states[b->geom.index % OUT_STATES].st, grown);
    if (r == 1) {
        skipped(0, 1);
        return 0;
    }
    if (r < 0)
        report("stream", -r);
    return r;
}

/* The packets to write next, [seq, seq + n), as private copies: what is
 * checked is then what is written, whatever a stray write of the program
 * does to its ring between the two (as fdrd does, daemon/collect.c). A
 * batch is what the copy buffer holds (COPY_BYTES, or one packet when
 * packets are larger). Without the memory for it, the ring's own slots,
 * one at a time. Returns n. Under pass_lock. */
#define COPY_BYTES (1u << 20)
static char *copy_buf;
static size_t copy_size;

static unsigned copy_slots(struct fdr__buf *b, uint64_t seq, uint64_t waiting,
                           const char *slot[FDR__DRAIN_BATCH])
{
    size_t ps = b->geom.packet_size;
    size_t want = ps > COPY_BYTES ? ps : COPY_BYTES;
    if (copy_size < want) {
        free(copy_buf);
        copy_buf = malloc(want);
        copy_size = copy_buf ? want : 0;
    }
    unsigned n = fdr__drain_batch(b->geom.n_packets, waiting);
    if (!copy_buf) {
        slot[0] = fdr__ring_slot(b->hdr, &b->geom, seq);
        return 1;
    }
    if (n > copy_size / ps)
        n = (unsigned)(copy_size / ps);
    for (unsigned i = 0; i < n; i++) {
        slot[i] = copy_buf + i * ps;
        fdr__packet_copy(copy_buf + i * ps, fdr__ring_slot(b->hdr, &b->geom, seq + i),
                         (uint32_t)ps);
    }
    return n;
}

/* Overwrite mode: the first packet a stream file gets is not sequence 0
 * when the writer lapped the consumer before anything was written (the
 * newest packets, at exit or fdr_flush()). An empty packet 0 of the same
 * thread goes first, as the helper's anchor() and a snapshot do, so that
 * a reader reports the overwritten packets as discarded packets: without
 * it babeltrace2 reported none (4 threads x 1 M events, 14,044 read, 0
 * discarded). The header is taken from the first of the n copies that is
 * what it says (the writer may be reusing a slot as it is copied).
 * 0, or -errno of the write (the file is cut back). */
static int first_anchor(struct fdr__buf *b, struct fdr__out_state *os, uint64_t consumed,
                        const char *const slot[], unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        struct fdr__pkt a;
        memcpy(&a, slot[i], sizeof a);
        if (a.magic != FDR__CTF_MAGIC || a.seq != consumed + i)
            continue;
        int r = fdr__drain_anchor(b->out_fd, b->hdr, &a, 0);
        if (r < 0)
            return r;
        a.seq = 0;
        a.ts_end = a.ts_begin;
        a.discarded = 0;
        fdr__stream_advance(&os->st, &a);
        os->out_bytes = b->hdr->out_bytes;
        return 0;
    }
    return 0;
}

static int pass_locked(void)
{
    int r = 0;
    uint32_t n = fdr__buf_count();
    if (n > states_used)
        states_used = n < OUT_STATES ? n : OUT_STATES;
    for (uint32_t i = 0; i < n; i++) {
        struct fdr__buf *b = fdr__buf_at(i);
        struct fdr__buf_hdr *h = b->hdr;
        struct fdr__out_state *os = &out_states[b->index % OUT_STATES];
        /* Its thread's past may still go to fdrd's traces (buffer.h): its
         * packets are written out, but their slots stay the writer's, not
         * freed, until then (`consumed` in the ring stays where it is). A
         * slot freed and reused took its events from fdrd's trace,
         * uncounted (an fdr_flush while fdrd was stopped). */
        int held = __atomic_load_n(&b->held, __ATOMIC_ACQUIRE) != 0;
        uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
        uint64_t consumed = os->consumed;
        /* The reader's line is ours: put back what a stray write changed
         * (a writer in discard mode waits on `consumed`). */
        if (!held && __atomic_load_n(&h->consumed, __ATOMIC_RELAXED) != consumed)
            __atomic_store_n(&h->consumed, consumed, __ATOMIC_RELEASE);
        h->out_bytes = os->out_bytes;
        /* Atomic: a flush reads it (writer.c, lost_unreported). */
        __atomic_store_n(&h->out_lost, os->out_lost, __ATOMIC_RELAXED);
        if (produced == consumed || produced < consumed)
            continue;
        os->st.ts_max = fdr__now_bound(); /* after `produced` */
        if (fdr__ring_check(h, &b->geom) < 0 && !b->bad_ring) {
            skipped(1, 0); /* once per buffer; its packets are still checked */
            b->bad_ring = 1;
        }
        if (produced - consumed > b->geom.n_packets) {
            /* Not a count this ring can hold: the positions were written
             * over. Only the newest n_packets slots can be what they say. */
            if (h->mode == FDR__MODE_OVERWRITE)
                overwritten += produced - consumed - b->geom.n_packets;
            else
                skipped(0, produced - consumed - b->geom.n_packets);
            consumed = produced - b->geom.n_packets;
        }
        if (ensure_metadata() < 0)
            return -EIO;
        while (consumed < produced) {
            uint64_t grown[FDR__DRAIN_BATCH];
            const char *slot[FDR__DRAIN_BATCH];
            unsigned n = copy_slots(b, consumed, produced - consumed, slot);
            int w = open_stream(b);
            struct fdr__classes t = classes_now();
            if (w == 0 && os->out_bytes == 0 && consumed > 0 &&
                h->mode == FDR__MODE_OVERWRITE)
                w = first_anchor(b, os, consumed, slot, n);
            if (w == 0)
                w = fdr__drain_packets(b->out_fd, h, &b->geom, consumed, n, slot, &t,
                                       &os->st, grown);
            if (w > 0)
                skipped(0, (uint64_t)w);
            if (w < 0) {
                /* One by one: each packet that cannot be written is
                 * counted (drain.h). */
                n = 1;
                if (write_packet(b, consumed, slot[0], &grown[0]) < 0) {
                    r = -EIO;
                    unflushed_error = 1; /* fdr_flush() says it, whoever wrote */
                }
            }
            for (unsigned i = 0; i < n; i++, consumed++) {
                /* Observable: the slot is free again; pairs with the acquire
                 * load of `consumed` in open_packet (writer.c). Before
                 * out_bytes, and one packet at a time: the drain helper
                 * relies on that order. */
                os->out_lost = h->out_lost; /* grown by a failed write only */
                __atomic_store_n(&os->consumed, consumed + 1, __ATOMIC_RELEASE);
                __atomic_store_n(&os->out_bytes, os->out_bytes + grown[i],
                                 __ATOMIC_RELEASE);
                if (!held)
                    __atomic_store_n(&h->consumed, consumed + 1, __ATOMIC_RELEASE);
                __atomic_store_n(&h->out_bytes, os->out_bytes, __ATOMIC_RELEASE);
            }
        }
    }
    return r;
}

int fdr__consumer_drain(int flush)
{
    if (!fdr__cfg.output[0] || trace_fd < 0)
        return -ENOTSUP;
    pthread_mutex_lock(&pass_lock);
    int r = pass_locked();
    if (flush) /* rewrite: newer clock calibration */
        __atomic_store_n(disk_gen, (uint64_t)-1, __ATOMIC_RELAXED);
    if (ensure_metadata() < 0)
        r = -EIO;
    if (flush) {
        /* A write that failed in the consumer thread's passes since the
         * last flush is this flush's failure too. */
        if (unflushed_error)
            r = -EIO;
        unflushed_error = 0;
    }
    if (skips.rings != warned.rings || skips.packets != warned.packets)
        fdr__warn("FDR_OUTPUT=\"%s\": %llu corrupt packets skipped, %llu corrupt ring "
                  "headers",
                  fdr__cfg.output, (unsigned long long)skips.packets,
                  (unsigned long long)skips.rings);
    warned = skips;
    if (overwritten != overwritten_warned)
        fdr__warn("FDR_OUTPUT=\"%s\": %llu packets overwritten before they were written "
                  "(FDR_MODE=overwrite), counted as discarded",
                  fdr__cfg.output, (unsigned long long)overwritten);
    overwritten_warned = overwritten;
    pthread_mutex_unlock(&pass_lock);
    return r;
}

static void *consumer_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&pass_lock);
    ensure_metadata();
    pthread_mutex_unlock(&pass_lock);
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&pass_lock);
        pass_locked();
        pthread_mutex_unlock(&pass_lock);
        __atomic_store_n(&doorbell, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
            break;
        futex_wait_ms(&doorbell, 1, (unsigned)fdr__cfg.flush_ms);
        __atomic_store_n(&doorbell, 0, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void budget_removed(const char *name, void *arg)
{
    (void)arg;
    fdr__warn("FDR_OUTPUT=\"%s\": removed the trace %s (FDR_OUTPUT_KEEP=%d)",
              fdr__cfg.output, name, fdr__cfg.output_keep);
}

/* Creates <FDR_OUTPUT>/<name>-<pid>/ (FDR_OUTPUT itself if missing). Traces
 * on disk are evidence (the crash a restarted service had): an earlier
 * trace in that name (a reused pid, or this program before an exec) is set
 * aside as <name>-<pid>.<k>, and the traces of earlier runs are removed
 * only within FDR_OUTPUT_KEEP, each removal said. */
int fdr__consumer_prepare(void)
{
    if (trace_fd >= 0)
        return 0;
    char name[256];
    int r = fdr__tracedir_name(name, sizeof name, program_invocation_short_name,
                               (unsigned long)fdr__pid);
    if (r < 0) {
        report("directory name", -r);
        return r;
    }
    snprintf(trace_name, sizeof trace_name, "%s/%s", fdr__cfg.output, name);
    char at[PATH_MAX]; /* the refused component, if one is */
    int top = fdr__pathwalk(fdr__cfg.output, 0755, at, sizeof at);
    if (top < 0) {
        report(at, -top);
        return top;
    }
    if (!fdr__cfg.output_run) {
        /* This process starts a run: the processes it starts share it
         * (FDR_OUTPUT_RUN, inherited) and do not apply the budget again. */
        if (fdr__cfg.output_keep >= 0)
            fdr__tracedir_budget(top, (unsigned long)fdr__pid,
                                 (unsigned)fdr__cfg.output_keep, budget_removed, NULL);
        char pid[24];
        pid[fdr__fmt_u64(pid, (uint64_t)fdr__pid, 10, 0)] = 0;
        setenv("FDR_OUTPUT_RUN", pid, 0);
        fdr__cfg.output_run = 1;
    }
    char aside[256 + 8];
    if ((r = fdr__tracedir_set_aside(top, name, aside, sizeof aside)) < 0) {
        report(trace_name, -r);
        close(top);
        return r;
    }
    trace_fd = fdr__tracedir_make(top, name);
    close(top);
    if (trace_fd < 0) {
        report(trace_name, -trace_fd);
        return trace_fd;
    }
    fdr__fd_id(trace_fd, &trace_id);
    memcpy(dir_name, name, sizeof dir_name);
    if ((r = fdr__tracedir_clear(trace_fd)) < 0) {
        report(trace_name, -r);
        close(trace_fd);
        trace_fd = -1;
        return r;
    }
    /* Until the exit or the drain helper has written every event
     * (fdr__consumer_finished, drainer.c), the trace says it is open: a
     * kill that also ends the helper (a cgroup's) is then seen by its
     * readers, not silent. A mark that cannot be made costs no event. */
    fdr__tracedir_mark_open(trace_fd, 0);
    return 0;
}

void fdr__consumer_finished(void)
{
    if (trace_dir() == 0)
        fdr__tracedir_mark_done(trace_fd);
}

void fdr__consumer_buffer_added(const struct fdr__buf *b)
{
    if (helper_sock < 0)
        return;
    if (!fdr__fd_is(helper_sock, &sock_id)) {
        /* Closed by the program (closefrom): the helper keeps the rings it
         * has; it cannot be told of new ones. Never sent on the number. */
        fdr__warn("FDR_OUTPUT: the program closed the drain helper's socket: the "
                  "threads that start from now on lose their last events if the "
                  "process is killed");
        helper_sock = -1;
        return;
    }
    if (!fdr__fd_is(b->fd, &b->fd_id))
        return; /* closed by the program since it was made: not sent */
    struct fdr__drain_msg m = {b->geom};
    char ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = {&m, sizeof m};
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = ctl,
                        .msg_controllen = sizeof ctl};
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &b->fd, sizeof b->fd);
    if (sendmsg(helper_sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof m)
        fdr__warn("FDR_OUTPUT: the drain helper did not get buffer %u: its events "
                  "are lost if the process is killed",
                  b->index);
}

/* A clone that ends with SIGCHLD, as fork() but without the program's
 * pthread_atfork handlers (the caller uses system calls only). */
static long fork_raw(void)
{
#if defined(__s390__) || defined(__CRIS__) /* the stack comes first */
    return syscall(SYS_clone, 0UL, (unsigned long)SIGCHLD, NULL, NULL, NULL);
#else
    return syscall(SYS_clone, (unsigned long)SIGCHLD, NULL, NULL, NULL, NULL);
#endif
}

/* The helper's process: 0 in it, > 0 in the program, -errno when there is
 * none. A clone with no exit signal, that wait(-1) and SIGCHLD never
 * report. qemu-user refuses such a clone (it forks only with SIGCHLD:
 * EINVAL), and so may a sandbox; then a child (exit signal SIGCHLD) clones
 * the helper and exits at once, and is reaped here: the helper, orphaned,
 * goes to init or the nearest subreaper (`fdr record`), and the program
 * sees one SIGCHLD, for a child already reaped. Only with the pidfd: an
 * orphan cannot watch its parent by getppid(). Without this, a program
 * killed under qemu-user lost, uncounted, every event its consumer thread
 * had not written (issue 30: two threads' streams of three after SIGTERM
 * under qemu-arm).
 *
 * Its maker takes it out of the program's process group before the
 * program goes on (setpgid on a child is the parent's to do): the clone's
 * own setsid (drainer.c) comes only when it is first scheduled, which on
 * a busy machine can be after the program has recorded for a while, and a
 * SIGKILL to the group (`timeout -s KILL`, `kill -9 -PGID`) then killed
 * it with the program: every event the consumer had not written lost,
 * uncounted (568 of 1,000 per thread kept, under qemu-arm). */
static long helper_clone(int pidfd)
{
    long pid = syscall(SYS_clone, 0UL, NULL, NULL, NULL, NULL);
    if (pid > 0)
        syscall(SYS_setpgid, (pid_t)pid, (pid_t)pid); /* EPERM: it did setsid */
    if (pid >= 0)
        return pid;
    long err = -errno;
    if (pidfd < 0)
        return err;
    pid = fork_raw();
    if (pid == 0) {
        pid = fork_raw();
        if (pid == 0)
            return 0;
        if (pid > 0) /* before the program's wait for us ends */
            syscall(SYS_setpgid, (pid_t)pid, (pid_t)pid);
        syscall(SYS_exit_group, pid < 0 ? 1 : 0);
    }
    if (pid < 0)
        return -errno;
    int status = 0;
    long w;
    while ((w = waitpid((pid_t)pid, &status, __WALL)) < 0 && errno == EINTR)
        ;
    /* ECHILD: the program ignores SIGCHLD, or its handler reaped the
     * child first; the second clone failing is not worth a guess. */
    if (w == pid && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
        return err;
    return pid;
}

static void no_helper_why(const char *why)
{
    fdr__warn("no drain helper (%s): if this process is killed, the events its "
              "consumer has not written yet are lost (FDR_DRAIN=off goes without it "
              "and without this line)",
              why);
}

static void no_helper(int err)
{
    no_helper_why(strerror(err));
}

/* fdr-drain started by helper_spawn: its paths, its argument vector, the
 * descriptors it is given (their close-on-exec cleared in the child), and
 * errno of the last exec that failed (set by the child, which shares our
 * memory until it execs). */
#ifndef FDR_DRAIN_BUILD_PATH /* lib/recorder/CMakeLists.txt sets both */
#define FDR_DRAIN_BUILD_PATH NULL
#endif
#ifndef FDR_DRAIN_INSTALL_PATH
#define FDR_DRAIN_INSTALL_PATH NULL
#endif
struct spawn {
    int exes[3]; /* trusted_exe's descriptors, -1 past the last */
    char *const *argv;
    int fds[5];
    volatile int32_t *err; /* in the memory shared with the helper */
};

/* Runs in the child of clone(CLONE_VM | CLONE_VFORK) on a stack of the
 * caller's, while the caller waits: system calls only, nothing written
 * but *a->err (the errno they set is the caller's, which it restores). */
__attribute__((no_sanitize("address", "thread", "undefined"))) static int
spawn_child(void *arg)
{
    struct spawn *a = arg;
    static char *const env[] = {NULL};
    for (unsigned i = 0; i < sizeof a->fds / sizeof a->fds[0]; i++)
        if (a->fds[i] >= 0)
            syscall(SYS_fcntl, a->fds[i], F_SETFD, 0);
    /* Before the exec, so that the exec and the loader are niced too
     * (drainer.h, FDR__DRAIN_NICE), and out of the program's process
     * group and session from its first instruction (drainer.c, setsid). */
    syscall(SYS_setpriority, PRIO_PROCESS, 0, FDR__DRAIN_NICE);
    syscall(SYS_setsid);
    for (unsigned i = 0; i < sizeof a->exes / sizeof a->exes[0] && a->exes[i] >= 0; i++) {
        syscall(SYS_execveat, a->exes[i], "", a->argv, env, AT_EMPTY_PATH);
        *a->err = errno;
    }
    if (!*a->err)
        *a->err = ENOENT; /* no path */
    syscall(SYS_exit, 127);
    return 0;
}

/* The executable at `path`, opened (O_PATH) for execveat, only when no
 * other user can have put it there: its directory is reached by
 * fdr__pathwalk's rule (no symlink planted in a directory others can
 * write, no directory of another user's), and the file is a regular one
 * of ours or root's that neither group nor others may write. The library
 * carries its build tree's path: installed elsewhere, that path may name
 * a file another user made (under /tmp), which every traced program
 * would run. -1 when it is missing or refused (then the next one). */
static int trusted_exe(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    char dir[PATH_MAX];
    if (!slash || slash[1] == 0 || (size_t)(slash - path) >= sizeof dir)
        return -1;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    memcpy(dir, path, n);
    dir[n] = 0;
    int dfd = fdr__pathwalk(dir, 0, NULL, 0);
    if (dfd < 0)
        return -1;
    int fd = openat(dfd, slash + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    close(dfd);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
                    (st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 022))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Starts fdr-drain (drainer.h) with vfork + exec: no page table copied,
 * no page of the program made copy-on-write; the program waits only
 * until the exec has begun. A clone with no exit signal, as helper_clone
 * makes. The helper's pid, or -errno (not found, or the clone refused):
 * then the caller clones the program instead. */
static long helper_spawn(int sock, int pidfd, int shared_fd, struct fdr__drain_page *page,
                         pid_t program)
{
    uint64_t size;
    int classes_fd = fdr__registry_share(&size);
    if (shared_fd < 0 || classes_fd < 0)
        return -ENOTSUP;
    char nums[6][24];
    long v[6] = {sock, pidfd, trace_fd, shared_fd, classes_fd, program};
    for (int i = 0; i < 6; i++) {
        int n = 0;
        if (v[i] < 0)
            nums[i][n++] = '-';
        nums[i][n + fdr__fmt_u64(nums[i] + n, (uint64_t)(v[i] < 0 ? -v[i] : v[i]), 10,
                                 0)] = 0;
    }
    char *argv[] = {"fdr-drain", FDR__DRAIN_TAG, nums[0],
                    nums[1],     nums[2],        nums[3],
                    nums[4],     nums[5],        (char *)fdr__cfg.crash_dir,
                    NULL}; /* execv: char *const */
    /* FDR_DRAIN_EXE's alone when it is set; else the build tree's (the
     * helper built with the library, where it exists), then the installed
     * one. */
    struct spawn a = {{-1, -1, -1},
                      argv,
                      {sock, pidfd, trace_fd, shared_fd, classes_fd},
                      &page->spawn_err};
    page->spawn_err = 0;
    const char *paths[] = {fdr__cfg.drain_exe,
                           fdr__cfg.drain_exe ? NULL : FDR_DRAIN_BUILD_PATH,
                           fdr__cfg.drain_exe ? NULL : FDR_DRAIN_INSTALL_PATH};
    for (unsigned i = 0, k = 0; i < 3; i++)
        if (paths[i] && (a.exes[k] = trusted_exe(paths[i])) >= 0)
            k++;
    if (a.exes[0] < 0)
        return -ENOENT;
    char stack[32768] __attribute__((aligned(16)));
    sigset_t all, old;
    sigfillset(&all);
    /* No handler of the program may run in the child, which shares its
     * memory: signals wait until the exec (the helper blocks them all). */
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int saved = errno;
#if defined(__SANITIZE_THREAD__)
    /* TSan takes a clone for a fork and resets its own state, which a
     * CLONE_VM child shares with us (false reports in the program after):
     * there, a copy of the program (a vfork without CLONE_VM), as before. */
    (void)stack;
    long pid = syscall(SYS_clone, (unsigned long)CLONE_VFORK, NULL, NULL, NULL, NULL);
    if (pid == 0)
        spawn_child(&a);
#else
    long pid = clone(spawn_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK, &a);
#endif
    long r = pid < 0 ? -errno : page->spawn_err ? -page->spawn_err : pid;
    errno = saved;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid > 0 && page->spawn_err) {
        int status;
        while (waitpid((pid_t)pid, &status, __WALL) < 0 && errno == EINTR)
            ;
    }
    for (unsigned i = 0; i < 3 && a.exes[i] >= 0; i++)
        close(a.exes[i]);
    errno = saved;
    return r;
}

/* Starts the drain helper: fdr-drain, or a clone of the program where it
 * is not found. Failing is not fatal: the consumer thread works without
 * it, and says that a kill then loses what it had not written. */
static void helper_start(void)
{
    int sv[2];
    if (!fdr__cfg.drain)
        return; /* FDR_DRAIN=off */
    /* The init of a PID namespace (a container's first process): when it
     * dies the kernel kills every other process of the namespace at once,
     * the helper with it, which could then never do its work. Said, not
     * hidden behind a helper that cannot help. */
    if (getpid() == 1) {
        no_helper_why("this process is PID 1 of its PID namespace, whose death kills "
                      "the helper too");
        return;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        no_helper(errno);
        return;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    /* The memory shared with the helper (drainer.h), in a memfd that
     * fdr-drain maps; an anonymous shared map will do for a clone. */
    int shared_fd = memfd_create("fdr-drain", MFD_CLOEXEC);
    if (shared_fd >= 0 && ftruncate(shared_fd, (off_t)FDR__DRAIN_SHARED_SIZE) < 0) {
        close(shared_fd);
        shared_fd = -1;
    }
    void *shared = mmap(NULL, FDR__DRAIN_SHARED_SIZE, PROT_READ | PROT_WRITE,
                        shared_fd >= 0 ? MAP_SHARED | MAP_NORESERVE
                                       : MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
                        shared_fd, 0);
    pid_t program = getpid();
    /* The helper is named from its first instant: a process takes the name
     * of the thread that makes it, so this thread bears it for the moment
     * of the clone. `fdr record` waits for the processes of that name, and
     * a program that dies at once must not leave one unnamed yet. */
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    if (shared != MAP_FAILED) {
        struct fdr__drain_page *page = shared;
        page->disk_gen = *disk_gen;
        disk_gen = &page->disk_gen;
        clean_end = &page->clean_end;
        page->pid = fdr__pid;
        fdr__clock_start_get(page->clock_start);
        memcpy(page->uuid, fdr__trace_uuid, sizeof page->uuid);
        /* The process's name is its main thread's: the one just read when
         * this is it (reading /proc/self/comm instead costs an open, which
         * was a sixth of the helper's start-up on a busy 2-vCPU guest). */
        fdr__metadata_procname(page->procname, fdr__gettid() == fdr__pid ? name : NULL);
        out_states = (struct fdr__out_state *)((char *)shared + FDR__DRAIN_STATES_AT);
        memcpy(out_states, local_states, states_used * sizeof *local_states);
    }
    prctl(PR_SET_NAME, "fdr-drain", 0, 0, 0);
    long pid = shared == MAP_FAILED
                   ? -ENOMEM
                   : helper_spawn(sv[1], pidfd, shared_fd, shared, program);
    if (pid < 0 && pid != -ENOMEM)
        pid = helper_clone(pidfd);
    if (pid != 0)
        prctl(PR_SET_NAME, name, 0, 0, 0);
    if (pid == 0) {
        close(sv[0]);
        fdr__drainer_main(sv[1], pidfd, trace_fd, shared, program, fdr__cfg.crash_dir);
    }
    close(sv[1]);
    if (pidfd >= 0)
        close(pidfd);
    if (shared_fd >= 0)
        close(shared_fd);
    if (pid < 0) {
        close(sv[0]);
        no_helper((int)-pid);
        return;
    }
    helper_sock = sv[0];
    fdr__fd_id(helper_sock, &sock_id);
    for (uint32_t i = 0; i < fdr__buf_count(); i++)
        fdr__consumer_buffer_added(fdr__buf_at(i));
}

int fdr__consumer_flight(void)
{
    int r = fdr__consumer_prepare();
    if (r == 0)
        helper_start();
    return r;
}

int fdr__consumer_crash_flight(void)
{
    helper_start(); /* no directory until the program is found killed */
    return helper_sock >= 0 ? 0 : -ENOTSUP;
}

void fdr__consumer_clean_end(void)
{
    if (clean_end)
        __atomic_store_n(clean_end, 1, __ATOMIC_RELEASE);
}

int fdr__consumer_start(void)
{
    if (fdr__consumer_prepare() < 0)
        return -EIO;
    /* The metadata is written by the consumer thread: its clock
     * calibration may take a millisecond, not to be spent in start-up. */
    helper_start();
    /* Created with every signal blocked, so that none of the program's
     * handlers ever runs in it, not even before consumer_main starts. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int e = pthread_create(&thread, NULL, consumer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0)
        return -EAGAIN;
    pthread_setname_np(thread, "fdr-consumer");
    running = 1;
    return 0;
}

void fdr__consumer_forget(void)
{
    running = 0;
    pthread_mutex_init(&pass_lock, NULL);
    /* The parent's helper and trace directory stay the parent's. */
    fdr__fd_close(helper_sock, &sock_id);
    helper_sock = -1;
    fdr__fd_close(trace_fd, &trace_id);
    trace_fd = -1;
    disk_gen = &local_gen;
    local_gen = (uint64_t)-1;
    clean_end = NULL; /* the parent's helper's: not for the child to set */
    /* The child's buffers are numbered from 0 again (buffer.c). */
    out_states = local_states;
    memset(local_states, 0, states_used * sizeof *local_states);
    states_used = 0;
}

void fdr__consumer_stop(void)
{
    if (!running)
        return;
    running = 0;
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&doorbell, 0, __ATOMIC_RELAXED);
    futex_wake(&doorbell);
    pthread_join(thread, NULL);
}
