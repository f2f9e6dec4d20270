/* SPDX-License-Identifier: MIT */
/* drainer.c - the drain helper's work: finish the trace of a program that
 * died without its exit handler (consumer.c, "The drain helper").
 *
 * It runs in the small executable fdr-drain (drain_main.c), which the
 * program starts with vfork + exec, or, where that executable is not
 * found, in a clone of the program. Either way it has the rings (memfds
 * passed over a socket, as the program makes them), the class table and
 * a memfd shared with the program (recorder/drainer.h: the registry
 * generation the metadata on disk has, the consumer's out states, what
 * the metadata is made of), and uses system calls only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/committed.h"
#include "common/drain.h"
#include "common/format.h"
#include "common/tracedir.h"
#include "recorder/cold.h"
#include "recorder/clock.h"
#include "recorder/config.h" /* enum fdr__mode */
#include "recorder/drainer.h"
#include "recorder/metadata.h"
#include "recorder/registry.h"

#define HELPER_MAX 65536

static FDR__COLD struct fdr__buf_hdr *helper_bufs[HELPER_MAX]; /* the helper's maps */
static FDR__COLD struct fdr__ring_geom helper_geoms[HELPER_MAX];
static struct fdr__drain_page *page;      /* shared with the program */
static struct fdr__out_state *out_states; /* likewise, after the page */
static int trace_fd = -1;
static FDR__COLD char meta_buf[8192];

static struct fdr__classes classes_now(void)
{
    struct fdr__classes t;
    fdr__registry_classes(&t);
    return t;
}

/* The metadata on disk describes every class registered so far. */
static int ensure_metadata(void)
{
    uint64_t g = fdr__registry_generation();
    if (g == __atomic_load_n(&page->disk_gen, __ATOMIC_ACQUIRE))
        return 0;
    int r = fdr__metadata_write(trace_fd, meta_buf, sizeof meta_buf);
    if (r == 0)
        __atomic_store_n(&page->disk_gen, g, __ATOMIC_RELEASE);
    return r;
}

void fdr__stream_name(char *out, uint32_t index)
{
    memcpy(out, "stream_", 7);
    out[7 + fdr__fmt_u64(out + 7, index, 10, 0)] = 0;
}

/* Maps the buffer of one message; 0 when there was none. */
static int helper_receive(int sock)
{
    struct fdr__drain_msg m;
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
    uint32_t i = m.geom.index;
    if (n == sizeof m && i < HELPER_MAX && !helper_bufs[i] &&
        fdr__geom_check(&m.geom, m.geom.size) == 0) {
        void *p = mmap(NULL, m.geom.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
            helper_bufs[i] = p;
            helper_geoms[i] = m.geom;
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
    return fdr__drain_open_packet(fd, h, g, produced, &t,
                                  &out_states[g->index % FDR__OUT_STATES].st) > 0;
}

/* Overwrite mode: a stream file whose first packet is not sequence 0 starts
 * with an empty packet 0 of the same thread, as a snapshot's does
 * (docs/design.md, "First-packet rule"), so that a reader reports the
 * overwritten packets as discarded packets and the first packet's count as
 * discarded events. `first` is the sequence of the first packet to come,
 * `open_at` the offset of the open packet's slot (when first is it, the
 * bounded `produced`). */
static void anchor(int fd, struct fdr__buf_hdr *h, const struct fdr__ring_geom *g,
                   uint64_t first, uint64_t produced, size_t open_at)
{
    struct fdr__pkt a;
    const char *slot =
        first < produced ? fdr__ring_slot(h, g, first) : (const char *)h + open_at;
    memcpy(&a, slot, sizeof a);
    if (first > 0 && a.magic == FDR__CTF_MAGIC && a.seq == first)
        fdr__drain_anchor(fd, h, &a, 0);
}

/* The state of stream file fd after its first `bytes` bytes (whole
 * packets, which the consumer checked before it wrote them): the packets
 * the helper adds must follow the last one there, not what the consumer
 * had checked of a batch it may not have finished writing. */
static struct fdr__stream_state helper_scan(int fd, uint64_t bytes)
{
    struct fdr__stream_state st = {0, 0, 0, 0};
    struct fdr__pkt hdr;
    for (uint64_t at = 0; at + sizeof hdr <= bytes;) {
        if (pread(fd, &hdr, sizeof hdr, (off_t)at) != (ssize_t)sizeof hdr ||
            hdr.packet_size / 8 < sizeof hdr)
            break;
        fdr__stream_advance(&st, &hdr);
        at += hdr.packet_size / 8;
    }
    st.discarded = 0; /* the file's counts include out_lost: not the ring's */
    return st;
}

/* Finishes stream file <index> of a dead program: whole packets only, then
 * every closed packet the consumer had not written yet. */
static void helper_stream(struct fdr__buf_hdr *h, const struct fdr__ring_geom *gp)
{
    /* Untrusted memory: the geometry is the one the buffer was made with
     * (fdr__drain_msg), what was written out the consumer's (out_states);
     * only `produced` comes from the ring, bounded here, and every packet
     * is checked (put_packet). */
    struct fdr__ring_geom g = *gp;
    uint64_t mapped = g.size;
    struct fdr__out_state *os = &out_states[g.index % FDR__OUT_STATES];
    uint64_t produced = h->produced;
    uint64_t consumed = __atomic_load_n(&os->consumed, __ATOMIC_ACQUIRE);
    h->out_bytes = __atomic_load_n(&os->out_bytes, __ATOMIC_ACQUIRE);
    h->out_lost = os->out_lost;
    if (consumed > produced)
        produced = consumed; /* written over: nothing closed to trust */
    if (produced - consumed > g.n_packets)
        consumed = produced - g.n_packets; /* only the newest are there */
    /* Overwrite mode: only the newest n_packets - 1 closed packets are
     * whole (the writer of the open packet reused the oldest slot). */
    int overwrite = h->mode == FDR__MODE_OVERWRITE;
    char name[32];
    fdr__stream_name(name, g.index);
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
    if (overwrite && produced - consumed > g.n_packets - 1)
        consumed = produced - (g.n_packets - 1);
    os->st = helper_scan(fd, h->out_bytes);
    os->st.ts_max = fdr__now_bound();
    if (ensure_metadata() == 0) {
        if (h->out_bytes == 0 && (consumed < produced || open_events))
            anchor(fd, h, &g, consumed < produced ? consumed : produced, produced,
                   op.offset);
        for (; consumed < produced; consumed++) {
            uint64_t grown = 0;
            struct fdr__classes t = classes_now();
            fdr__drain_packet(fd, h, &g, consumed, &t, &os->st, &grown);
            h->consumed = consumed + 1;
            h->out_bytes += grown;
        }
        helper_open_packet(fd, h, &g, produced);
    }
    close(fd);
}

void fdr__drainer_main(int sock, int pidfd, int trace, void *shared, pid_t program,
                       const char *crash_dir)
{
    page = shared;
    out_states = (struct fdr__out_state *)((char *)shared + FDR__DRAIN_STATES_AT);
    trace_fd = trace;
    /* Out of the program's session first of all: the program took us out
     * of its process group (consumer.c, helper_clone), and this is the
     * rest. EPERM when that made us a group leader already; fdr-drain did
     * it before its exec. */
    syscall(SYS_setsid);
    fdr__metadata_freeze_procname(1, page->procname);
    sigset_t all;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, (size_t)(_NSIG / 8));
    prctl(PR_SET_NAME, "fdr-drain", 0, 0, 0);
    /* fdr-drain was niced and made a session of its own before its exec
     * (consumer.c, spawn_child); a clone of the program is here. A session
     * of its own (above): a signal to the program's process group must not
     * end the helper with the program, which is when it has its work to do:
     * `timeout -s KILL`, `kill -9 -PGID`, a shell's `kill -9 %1` killed
     * both, and the events the consumer had not written were lost,
     * uncounted (1,296 of 3,000). No terminal is ours either, so its
     * hangup does not reach us. */
    syscall(SYS_setpriority, PRIO_PROCESS, 0, FDR__DRAIN_NICE);
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
        else if (p[0].revents & (POLLHUP | POLLERR)) {
            p[0].fd = -1; /* the program closed it: at exit, or exec */
            /* FDR_CRASH_DIR alone: a program that goes on without our
             * socket has exec'd (or closed it): what it records from now
             * on is not in these rings, and an ending of the new image is
             * no crash of this one. A dying program closes its files a
             * moment before its pidfd says so: wait for that (bounded). */
            struct pollfd d = {pidfd, POLLIN, 0};
            if (trace_fd < 0 && pidfd >= 0 && poll(&d, 1, 1000) == 0)
                syscall(SYS_exit_group, 0);
        }
        if (pidfd >= 0 ? (p[1].revents & POLLIN) != 0 : getppid() != program)
            break;
    }
    while (helper_receive(sock))
        ; /* buffers announced just before the end */
    if (trace_fd < 0) {
        /* FDR_CRASH_DIR alone: a trace only of an ending that kept
         * nothing, in the crash handler's place (crash.c). */
        if (__atomic_load_n(&page->clean_end, __ATOMIC_ACQUIRE))
            syscall(SYS_exit_group, 0);
        char name[32];
        fdr__tracedir_name(name, sizeof name, "crash", (unsigned long)program);
        int top = fdr__tracedir_open_top(crash_dir);
        trace_fd = top < 0 ? top : fdr__tracedir_make(top, name);
        if (top >= 0)
            close(top);
        if (trace_fd < 0)
            syscall(SYS_exit_group, 0);
    }
    for (uint32_t i = 0; i < HELPER_MAX; i++)
        if (helper_bufs[i])
            helper_stream(helper_bufs[i], &helper_geoms[i]);
    /* Every event is in the stream files or counted there: the trace is
     * no longer open (common/tracedir.h; a crash directory has no mark). */
    fdr__tracedir_mark_done(trace_fd);
    syscall(SYS_exit_group, 0);
    for (;;)
        ;
}
