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
 * back to the writer (discard mode). Before writing any packet it makes
 * sure the metadata on disk knows every class registered so far, so the
 * files on disk are always a readable trace.
 *
 * Each packet is written as its header, with packet_size trimmed to the
 * content, followed by the content. The buffer's header page records where
 * the whole packets of its stream file end (out_bytes). A write that fails
 * (full disk, any error) is cut back to that boundary, the packet's events
 * are counted in out_lost and carried in the discarded count of every
 * later packet (first in a header-only copy of the failed packet), so the
 * file stays whole and emitted = recorded + discarded still holds.
 *
 * The drain helper. A SIGKILL (or _exit, or exit from another thread) can
 * stop this thread in the middle of a writev, and closed packets still in
 * the rings would be lost. So, with FDR_OUTPUT set, a helper process is
 * cloned at start (helper_start): it shares the rings (memfd mappings,
 * new ones passed over a socket) and the registry, sleeps on a pidfd of the
 * program, and when the program has died cuts each stream file back to its
 * last whole packet, writes every packet still committed in the rings and
 * exits. It is a clone with no exit signal: wait(-1) and SIGCHLD handlers of
 * the program never see it; it blocks every signal, keeps only its three
 * descriptors, and exits only after the program is gone (init reaps it).
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
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
#include "common/tracedir.h"
#include "common/validate.h"
#include "recorder/buffer.h"
#include "recorder/config.h"
#include "recorder/consumer.h"
#include "recorder/flight.h"
#include "recorder/init.h"
#include "recorder/metadata.h"
#include "recorder/registry.h"

static pthread_t thread;
static int running;
static int stop;
static uint32_t doorbell; /* 1 while the consumer sleeps */
static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static int failed;                  /* a write error was reported once */
static int unflushed_error;         /* a write failed since the last flush */
static int trace_fd = -1;           /* <FDR_OUTPUT>/<name>-<pid>/ */
static char trace_name[4096 + 256]; /* its path, for messages */
static char meta_buf[8192];         /* under pass_lock, or the helper's */
static int helper_sock = -1;        /* to the drain helper; -1: none */

/* Shared with the drain helper (MAP_SHARED): the registry generation the
 * metadata on disk describes. Points to local_gen when there is no helper. */
static uint64_t local_gen = (uint64_t)-1;
static uint64_t *disk_gen = &local_gen;

static void futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

void fdr__consumer_kick(void)
{
    if (__atomic_load_n(&doorbell, __ATOMIC_RELAXED) &&
        __atomic_exchange_n(&doorbell, 0, __ATOMIC_ACQ_REL))
        futex(&doorbell, FUTEX_WAKE_PRIVATE, 1, NULL);
}

static void report(const char *what, int err)
{
    if (!failed)
        fdr__warn("FDR_OUTPUT=\"%s\": cannot write the trace: %s: %s", fdr__cfg.output,
                  what,
                  err == EPERM    ? "it belongs to another user or others may write it"
                  : err == EEXIST ? "a symlink or another user's file is in the way"
                                  : strerror(err));
    failed = 1;
}

/* The metadata on disk describes every class registered so far. */
static int ensure_metadata(void)
{
    uint64_t g = fdr__registry_generation();
    if (g == __atomic_load_n(disk_gen, __ATOMIC_ACQUIRE))
        return 0;
    int r = fdr__metadata_write(trace_fd, meta_buf, sizeof meta_buf);
    if (r < 0) {
        report("metadata", -r);
        return r;
    }
    __atomic_store_n(disk_gen, g, __ATOMIC_RELEASE);
    return 0;
}

/* Packets and ring headers found corrupt (principle 6): skipped, counted,
 * and reported once. */
static struct fdr__skips skips, warned; /* under pass_lock */

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

static int put_packet(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                      uint64_t seq, uint64_t *grown)
{
    struct fdr__classes t = classes_now();
    return fdr__drain_packet(fd, h, g, seq, &t, grown);
}

static int stream_name(char *out, uint32_t index)
{
    memcpy(out, "stream_", 7);
    out[7 + fdr__fmt_u64(out + 7, index, 10, 0)] = 0;
    return 0;
}

static int open_stream(struct fdr__buf *b)
{
    if (b->out_fd < 0) {
        char name[32];
        stream_name(name, b->index);
        b->out_fd = fdr__tracedir_create(trace_fd, name);
        if (b->out_fd < 0) {
            report(name, -b->out_fd);
            return b->out_fd;
        }
    }
    return 0;
}

/* Writes the packet of sequence seq of b (see put_packet). */
static int write_packet(struct fdr__buf *b, uint64_t seq, uint64_t *grown)
{
    if (open_stream(b) < 0)
        return b->out_fd;
    int r = put_packet(b->out_fd, b->hdr, &b->geom, seq, grown);
    if (r == 1) {
        skipped(0, 1);
        return 0;
    }
    if (r < 0)
        report("stream", -r);
    return r;
}

static int pass_locked(void)
{
    int r = 0;
    uint32_t n = fdr__buf_count();
    for (uint32_t i = 0; i < n; i++) {
        struct fdr__buf *b = fdr__buf_at(i);
        struct fdr__buf_hdr *h = b->hdr;
        uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
        uint64_t consumed = __atomic_load_n(&h->consumed, __ATOMIC_RELAXED);
        if (produced == consumed)
            continue;
        if (fdr__ring_check(h, &b->geom) < 0 && !b->bad_ring) {
            skipped(1, 0); /* once per buffer; its packets are still checked */
            b->bad_ring = 1;
        }
        if (produced - consumed > b->geom.n_packets) {
            /* Not a count this ring can hold: the positions were written
             * over. Only the newest n_packets slots can be what they say. */
            skipped(0, produced - consumed - b->geom.n_packets);
            consumed = produced - b->geom.n_packets;
        }
        if (ensure_metadata() < 0)
            return -EIO;
        while (consumed < produced) {
            uint64_t grown[FDR__DRAIN_BATCH];
            const char *slot[FDR__DRAIN_BATCH];
            unsigned n = fdr__drain_batch(b->geom.n_packets, produced - consumed);
            for (unsigned i = 0; i < n; i++)
                slot[i] = fdr__ring_slot(h, &b->geom, consumed + i);
            int w = open_stream(b);
            if (w == 0)
                w = fdr__drain_packets(b->out_fd, h, &b->geom, consumed, n, slot, grown);
            if (w > 0)
                skipped(0, (uint64_t)w);
            if (w < 0) {
                /* One by one: each packet that cannot be written is
                 * counted (drain.h). */
                n = 1;
                if (write_packet(b, consumed, &grown[0]) < 0) {
                    r = -EIO;
                    unflushed_error = 1; /* fdr_flush() says it, whoever wrote */
                }
            }
            for (unsigned i = 0; i < n; i++, consumed++) {
                /* Observable: the slot is free again; pairs with the acquire
                 * load of `consumed` in open_packet (writer.c). Before
                 * out_bytes, and one packet at a time: the drain helper
                 * relies on that order. */
                __atomic_store_n(&h->consumed, consumed + 1, __ATOMIC_RELEASE);
                __atomic_store_n(&h->out_bytes, h->out_bytes + grown[i],
                                 __ATOMIC_RELEASE);
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
        struct timespec ts = {fdr__cfg.flush_ms / 1000,
                              (long)(fdr__cfg.flush_ms % 1000) * 1000000};
        futex(&doorbell, FUTEX_WAIT_PRIVATE, 1, &ts);
        __atomic_store_n(&doorbell, 0, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* Creates <FDR_OUTPUT>/<name>-<pid>/ (FDR_OUTPUT itself if missing), or
 * empties it of an earlier trace (a reused pid): only files named as fdr
 * names them are removed, and other files in FDR_OUTPUT are not touched. */
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
    int top = fdr__tracedir_open_top(fdr__cfg.output);
    if (top < 0) {
        report(fdr__cfg.output, -top);
        return top;
    }
    if (!fdr__cfg.output_run) {
        /* This process starts a run: what earlier runs left in FDR_OUTPUT
         * goes (only fdr's own traces of processes that ended), and the
         * processes it starts share the run (FDR_OUTPUT_RUN, inherited). */
        fdr__tracedir_sweep(top, (unsigned long)fdr__pid);
        char pid[24];
        pid[fdr__fmt_u64(pid, (uint64_t)fdr__pid, 10, 0)] = 0;
        setenv("FDR_OUTPUT_RUN", pid, 0);
        fdr__cfg.output_run = 1;
    }
    trace_fd = fdr__tracedir_make(top, name);
    close(top);
    if (trace_fd < 0) {
        report(trace_name, -trace_fd);
        return trace_fd;
    }
    if ((r = fdr__tracedir_clear(trace_fd)) < 0) {
        report(trace_name, -r);
        close(trace_fd);
        trace_fd = -1;
        return r;
    }
    return 0;
}

/* ---- the drain helper ------------------------------------------------------
 *
 * Runs in a clone of the program made by helper_start: a copy of its memory
 * (only system calls are used: the copy's locks may be held by threads that
 * do not exist in it), the rings and the registry shared. */

#define HELPER_MAX 65536

struct helper_msg {
    uint32_t index;
    uint64_t size;
};

static struct fdr__buf_hdr *helper_bufs[HELPER_MAX]; /* the helper's maps */
static uint64_t helper_sizes[HELPER_MAX];

/* Maps the buffer of one message; 0 when there was none. */
static int helper_receive(int sock)
{
    struct helper_msg m;
    char ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {&m, sizeof m};
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = ctl,
                        .msg_controllen = sizeof ctl};
    ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        return n > 0;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    if (n == sizeof m && m.index < HELPER_MAX && !helper_bufs[m.index] &&
        m.size >= FDR__BUF_HEADER) {
        void *p = mmap(NULL, m.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
            helper_bufs[m.index] = p;
            helper_sizes[m.index] = m.size;
        }
    }
    close(fd);
    return 1;
}

/* The open packet of a dead writer (its thread was killed in the middle
 * of it): common/drain.h. */
static int helper_open_packet(int fd, struct fdr__buf_hdr *h,
                              const struct fdr__ring_geom *g, uint64_t produced)
{
    struct fdr__classes t = classes_now();
    int r = fdr__drain_open_packet(fd, h, g, produced, &t);
    if (r < 0)
        skipped(0, 1);
    return r > 0;
}

/* Finishes stream file <index> of a dead program: whole packets only, then
 * every closed packet the consumer had not written yet. */
static void helper_stream(uint32_t index, struct fdr__buf_hdr *h, uint64_t mapped)
{
    /* Untrusted memory: the geometry is read once and must fit the
     * mapping; every packet is checked against it (put_packet). */
    struct fdr__ring_geom g = {h->packet_size, h->n_packets, index, h->size};
    if (h->magic != FDR__BUF_MAGIC || fdr__geom_check(&g, mapped) < 0)
        return;
    uint64_t produced = h->produced, consumed = h->consumed;
    if (consumed > produced || produced - consumed > g.n_packets)
        return;
    char name[32];
    stream_name(name, index);
    struct fdr__open_packet op;
    int open_events = fdr__committed(h, mapped, &op) == 1 && op.seq == produced &&
                      op.bytes > sizeof(struct fdr__pkt);
    int fd = openat(trace_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && (produced != consumed || open_events))
        fd = fdr__tracedir_create(trace_fd, name);
    if (fd < 0)
        return;
    /* The consumer stores `consumed` before out_bytes: when it died
     * between the two, the packet at out_bytes is whole and is the one just
     * before `consumed`; keep it. */
    struct fdr__pkt at;
    struct stat st;
    if (consumed > 0 && fstat(fd, &st) == 0 &&
        pread(fd, &at, sizeof at, (off_t)h->out_bytes) == (ssize_t)sizeof at &&
        at.magic == FDR__CTF_MAGIC && at.seq == consumed - 1 && at.packet_size % 8 == 0 &&
        at.packet_size / 8 >= sizeof at &&
        h->out_bytes + at.packet_size / 8 <= (uint64_t)st.st_size)
        h->out_bytes += at.packet_size / 8;
    fdr__drain_cut(fd, h);
    if (fdr__registry_generation() == __atomic_load_n(disk_gen, __ATOMIC_ACQUIRE) ||
        ensure_metadata() == 0) {
        for (; consumed < produced; consumed++) {
            uint64_t grown = 0;
            put_packet(fd, h, &g, consumed, &grown);
            h->consumed = consumed + 1;
            h->out_bytes += grown;
        }
        helper_open_packet(fd, h, &g, produced);
    }
    close(fd);
}

__attribute__((noreturn)) static void helper_main(int sock, int pidfd, pid_t program)
{
    sigset_t all;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, (size_t)(_NSIG / 8));
    prctl(PR_SET_NAME, "fdr-drain", 0, 0, 0);
    /* Keep only sock, pidfd and trace_fd: the program's pipes and sockets
     * must not stay open because of us. */
    int keep[3] = {sock, pidfd, trace_fd};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (keep[j] < keep[i]) {
                int t = keep[i];
                keep[i] = keep[j];
                keep[j] = t;
            }
    unsigned from = 0;
    for (int i = 0; i < 3; i++) {
        if (keep[i] < 0)
            continue;
        if ((unsigned)keep[i] > from)
            syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0);
        from = (unsigned)keep[i] + 1;
    }
    syscall(SYS_close_range, from, ~0u, 0);
    struct pollfd p[2] = {{sock, POLLIN, 0}, {pidfd, POLLIN, 0}};
    for (;;) {
        /* Without a pidfd (old kernel), look at the parent every 20 ms. */
        int n = poll(p, 2, pidfd >= 0 ? -1 : 20);
        if (n < 0 && errno != EINTR)
            break;
        if (p[0].revents & POLLIN)
            helper_receive(sock);
        else if (p[0].revents & (POLLHUP | POLLERR))
            p[0].fd = -1; /* the program closed it: at exit, or exec */
        if (pidfd >= 0 ? (p[1].revents & POLLIN) != 0 : getppid() != program)
            break;
    }
    while (helper_receive(sock))
        ; /* buffers announced just before the end */
    for (uint32_t i = 0; i < HELPER_MAX; i++)
        if (helper_bufs[i])
            helper_stream(i, helper_bufs[i], helper_sizes[i]);
    syscall(SYS_exit_group, 0);
    for (;;)
        ;
}

void fdr__consumer_buffer_added(const struct fdr__buf *b)
{
    if (helper_sock < 0)
        return;
    struct helper_msg m = {b->index, b->hdr->size};
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

/* Clones the drain helper. Failing is not fatal: the consumer thread
 * works without it (SIGKILL then loses what it had not written). */
static void helper_start(void)
{
    int sv[2];
    if (!fdr__cfg.drain)
        return; /* FDR_DRAIN=off */
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return;
    int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    void *page =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED) {
        *(uint64_t *)page = *disk_gen;
        disk_gen = page;
    }
    pid_t program = getpid();
    /* The helper is named from its first instant: a clone takes the name
     * of the thread that makes it, so this thread bears it for the moment
     * of the clone. `fdr record` waits for the processes of that name, and
     * a program that dies at once must not leave one unnamed yet. */
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    prctl(PR_SET_NAME, "fdr-drain", 0, 0, 0);
    /* No exit signal (flags 0): not a child wait(-1) or SIGCHLD reports. */
    long pid = page == MAP_FAILED ? -1 : syscall(SYS_clone, 0UL, NULL, NULL, NULL, NULL);
    if (pid != 0)
        prctl(PR_SET_NAME, name, 0, 0, 0);
    if (pid == 0) {
        close(sv[0]);
        helper_main(sv[1], pidfd, program);
    }
    close(sv[1]);
    if (pidfd >= 0)
        close(pidfd);
    if (pid < 0) {
        close(sv[0]);
        return;
    }
    helper_sock = sv[0];
    for (uint32_t i = 0; i < fdr__buf_count(); i++)
        fdr__consumer_buffer_added(fdr__buf_at(i));
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
    if (helper_sock >= 0)
        close(helper_sock);
    helper_sock = -1;
    if (trace_fd >= 0)
        close(trace_fd);
    trace_fd = -1;
    disk_gen = &local_gen;
    local_gen = (uint64_t)-1;
}

void fdr__consumer_stop(void)
{
    if (!running)
        return;
    running = 0;
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&doorbell, 0, __ATOMIC_RELAXED);
    futex(&doorbell, FUTEX_WAKE_PRIVATE, 1, NULL);
    pthread_join(thread, NULL);
}
