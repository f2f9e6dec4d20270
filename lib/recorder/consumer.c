/* SPDX-License-Identifier: MIT */
/* consumer.c - the in-process consumer: full packets to stream files.
 *
 * Without a daemon (the embedded default), a background thread writes the
 * trace named by FDR_OUTPUT:
 *
 *   <FDR_OUTPUT>/metadata          rewritten when event classes are added
 *   <FDR_OUTPUT>/stream_<index>    the packets of buffer <index>, in order
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
 * content, followed by the content: the padding after the last event of a
 * packet is not written. (A packet is otherwise byte for byte what the
 * writer made.)
 *
 * The thread sleeps on a futex "doorbell" and wakes when a writer's ring
 * is half full (fdr__consumer_kick), when a thread exits, or after
 * FDR_FLUSH_MS. fdr__consumer_drain() is the same pass run by the caller
 * (flush, exit); a mutex keeps the two from writing at once. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/io.h"
#include "common/validate.h"
#include "recorder/buffer.h"
#include "recorder/config.h"
#include "recorder/consumer.h"
#include "recorder/flight.h"
#include "recorder/metadata.h"
#include "recorder/registry.h"

static pthread_t thread;
static int running;
static int stop;
static uint32_t doorbell; /* 1 while the consumer sleeps */
static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t metadata_gen = (uint64_t)-1;
static int failed; /* a write error was reported once */

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
                  what, strerror(err));
    failed = 1;
}

static int ensure_metadata(void)
{
    uint64_t g = fdr__registry_generation();
    if (g == metadata_gen)
        return 0;
    int r = fdr__metadata_write(fdr__cfg.output);
    if (r < 0) {
        report("metadata", -r);
        return r;
    }
    metadata_gen = g;
    return 0;
}

int fdr__packet_write(int fd, struct fdr__pkt *hdr, const char *body)
{
    uint64_t bytes = hdr->content_size / 8;
    hdr->packet_size = hdr->content_size;
    struct iovec iov[2] = {{hdr, sizeof *hdr}, {(char *)body, bytes - sizeof *hdr}};
    return fdr__writev_full(fd, iov, 2);
}

/* Packets and ring headers found corrupt (principle 6): skipped, counted,
 * and reported once. */
static struct fdr__skips skips, warned; /* under pass_lock */

static void skipped(int ring, uint64_t packets)
{
    skips.rings += (uint64_t)ring;
    skips.packets += packets;
}

/* Writes the packet of sequence seq; it is checked first, as buffers are
 * not trusted (principle 6): a corrupt one is skipped and counted. */
static int write_packet(struct fdr__buf *b, uint64_t seq)
{
    struct fdr__pkt hdr;
    const char *slot = fdr__ring_slot(b->hdr, &b->geom, seq);
    if (fdr__pkt_check(slot, &b->geom, seq, &hdr) < 0) {
        skipped(0, 1);
        return 0;
    }
    if (b->out_fd < 0) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/stream_%u", fdr__cfg.output, b->index);
        b->out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (b->out_fd < 0) {
            report(path, errno);
            return -errno;
        }
    }
    int r = fdr__packet_write(b->out_fd, &hdr, slot + sizeof hdr);
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
        for (; consumed < produced; consumed++) {
            if (write_packet(b, consumed) < 0)
                r = -EIO;
            /* Observable: the slot is free again; pairs with the acquire
             * load of `consumed` in open_packet (writer.c). */
            __atomic_store_n(&h->consumed, consumed + 1, __ATOMIC_RELEASE);
        }
    }
    return r;
}

int fdr__consumer_drain(int refresh)
{
    if (!fdr__cfg.output[0])
        return -ENOTSUP;
    pthread_mutex_lock(&pass_lock);
    int r = pass_locked();
    if (refresh)
        metadata_gen = (uint64_t)-1; /* rewrite: newer clock calibration */
    if (ensure_metadata() < 0)
        r = -EIO;
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

/* 1 for the names of files fdr writes in a trace directory. */
static int ours(const char *name)
{
    if (strcmp(name, "metadata") == 0 || strcmp(name, ".metadata.tmp") == 0)
        return 1;
    if (strncmp(name, "stream_", 7) != 0 || !name[7])
        return 0;
    for (const char *c = name + 7; *c; c++)
        if (*c < '0' || *c > '9')
            return 0;
    return 1;
}

/* Creates FDR_OUTPUT, or empties it of an earlier trace: a stream file
 * left by a run with more threads would otherwise be read as part of this
 * trace. Only files named as fdr names them are removed. */
int fdr__consumer_prepare(void)
{
    if (mkdir(fdr__cfg.output, 0755) < 0 && errno != EEXIST) {
        report("mkdir", errno);
        return -errno;
    }
    DIR *d = opendir(fdr__cfg.output);
    if (!d) {
        report("opendir", errno);
        return -errno;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (ours(e->d_name))
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
    return 0;
}

int fdr__consumer_start(void)
{
    if (fdr__consumer_prepare() < 0)
        return -EIO;
    /* The metadata is written by the consumer thread: its clock
     * calibration may take a millisecond, not to be spent in start-up. */
    if (access(fdr__cfg.output, W_OK) < 0) {
        report("access", errno);
        return -errno;
    }
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
