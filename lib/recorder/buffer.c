/* SPDX-License-Identifier: MIT */
/* buffer.c - per-thread buffers: a header page and a ring of CTF packets.
 *
 * Layout of one buffer (one memfd mapping, no pointers inside, so that a
 * daemon can allocate it and map it at another address):
 *
 *   offset 0      struct fdr__buf_hdr   geometry, then two cache lines:
 *                                       writer (produced, discarded, nested
 *                                       and paused discards, reported),
 *                                       reader (consumed)
 *   offset 4096   packet 0              FDR_PACKET_SIZE bytes each
 *                 packet 1
 *                 ...
 *                 packet n-1
 *
 * Packet sequence number s lives in slot s % n. The writer fills slot
 * `produced`; packets [consumed, produced) are complete and wait for the
 * consumer. In discard mode the writer never opens a slot that has not
 * been consumed; in overwrite mode it simply reuses the oldest.
 *
 * Buffers are never unmapped while the process lives: a thread that exits
 * returns its buffer to a free list and the next new thread takes it, so
 * the number of buffers is the largest number of threads recording at the
 * same time, and their stream files go on across threads (each packet
 * names its thread). The pool is protected by fdr__writers_lock. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "recorder/buffer.h"
#include "recorder/config.h"

#define MAX_BUFFERS 65536

uint8_t fdr__trace_uuid[16];

static void no_buf_hook(const struct fdr__buf *b)
{
    (void)b;
}
void (*fdr__buf_added_hook)(const struct fdr__buf *b) = no_buf_hook;

/* All buffers ever created, by index; slots are written once, before
 * `count` is published with a release store. */
static struct fdr__buf *all[MAX_BUFFERS];
static uint32_t count;
static struct fdr__buf *free_list;

static struct fdr__buf *buf_create(void)
{
    if (count >= MAX_BUFFERS)
        return NULL;
    uint32_t packet = fdr__cfg.packet_size;
    uint32_t n = fdr__cfg.buffer_size / packet;
    if (n < 2)
        n = 2;
    size_t size = FDR__BUF_HEADER + (size_t)n * packet;
    int fd = memfd_create("fdr-buffer", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    if (ftruncate(fd, (off_t)size) < 0) {
        close(fd);
        return NULL;
    }
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    struct fdr__buf *b = calloc(1, sizeof *b);
    if (!b) {
        munmap(base, size);
        close(fd);
        return NULL;
    }
    struct fdr__buf_hdr *h = base;
    h->magic = FDR__BUF_MAGIC;
    h->version = 1;
    h->packet_size = packet;
    h->n_packets = n;
    h->mode = (uint32_t)fdr__cfg.mode;
    h->index = count;
    h->size = size;
    b->hdr = h;
    b->geom = (struct fdr__ring_geom){packet, n, count, size};
    b->fd = fd;
    b->index = count;
    b->out_fd = -1;
    all[count] = b;
    __atomic_store_n(&count, count + 1, __ATOMIC_RELEASE);
    fdr__buf_added_hook(b); /* the consumer's drain helper maps it too */
    return b;
}

struct fdr__buf *fdr__buf_get(void)
{
    struct fdr__buf *b = free_list;
    if (b) {
        free_list = b->next_free;
        b->next_free = NULL;
        return b;
    }
    return buf_create();
}

void fdr__buf_put(struct fdr__buf *b)
{
    b->next_free = free_list;
    free_list = b;
}

struct fdr__buf *fdr__buf_at(uint32_t index)
{
    return index < __atomic_load_n(&count, __ATOMIC_ACQUIRE) ? all[index] : NULL;
}

uint32_t fdr__buf_count(void)
{
    return __atomic_load_n(&count, __ATOMIC_ACQUIRE);
}

char *fdr__buf_slot(const struct fdr__buf_hdr *h, uint64_t seq)
{
    return (char *)h + FDR__BUF_HEADER + (size_t)(seq % h->n_packets) * h->packet_size;
}

void fdr__buf_forget_all(void)
{
    uint32_t n = count;
    for (uint32_t i = 0; i < n; i++) {
        munmap(all[i]->hdr, all[i]->geom.size);
        close(all[i]->fd);
        if (all[i]->out_fd >= 0)
            close(all[i]->out_fd);
        free(all[i]);
        all[i] = NULL;
    }
    __atomic_store_n(&count, 0, __ATOMIC_RELEASE);
    free_list = NULL;
}
