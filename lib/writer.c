/* writer.c - the writing side: one writer per thread, its packets, its exit.
 *
 * Each thread that records gets a writer: its TLS block (fdr__self, read by
 * the inline fast path), a buffer taken from the pool (buffer.c) and, at
 * any time, at most one open packet in that buffer.
 *
 * The fast path (include/fdr/internal/fastpath.h) only ever appends to the
 * open packet. Everything else comes here, to fdr__reserve_slow():
 *
 *   - first use of a call site: register its event class (registry.c);
 *   - first event of a thread: create its writer, take a buffer;
 *   - the event does not fit: close the packet and open the next one. In
 *     discard mode the next one must have been written out by the consumer,
 *     otherwise the event is dropped and counted; in overwrite mode the
 *     oldest packet is reused;
 *   - printing: the event is built in a scratch area (or in the packet if
 *     it is also recorded) and fdr__commit_slow() prints it;
 *   - nested: a signal handler recorded while this thread was inside an
 *     event; the nested event is counted as discarded (hdr->nested).
 *
 * Closing a packet fills in its end time, content size and cumulative
 * discarded count, then publishes it with a release store of `produced`
 * (the consumer's acquire load pairs with it).
 *
 * At thread exit (a pthread key destructor) the open packet is closed and
 * the buffer goes back to the pool: ten thousand short threads reuse a
 * handful of buffers. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "fdr-int.h"

__thread struct fdr__thread fdr__self __attribute__((tls_model("initial-exec")));

pthread_mutex_t fdr__writers_lock = PTHREAD_MUTEX_INITIALIZER;
struct fdr__writer *fdr__writers;
uint32_t fdr__enabled_default = 1;

static pthread_key_t writer_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* Scratch space for events that are printed but not recorded. */
#define SCRATCH_SIZE (FDR_MAX_FIELDS * 4100 + 64)
static __thread char scratch[SCRATCH_SIZE];

static void writer_destructor(void *arg)
{
    (void)arg;
    fdr__writer_thread_exit();
}

static void make_key(void)
{
    pthread_key_create(&writer_key, writer_destructor);
}

static void leave_section(struct fdr__thread *t)
{
    __atomic_store_n(&t->in_section, 0, __ATOMIC_RELEASE);
}

static void count_discarded(struct fdr__writer *w)
{
    if (w && w->buf)
        w->buf->hdr->discarded++;
}

static struct fdr__writer *writer_create(struct fdr__thread *t)
{
    fdr__init();
    pthread_once(&key_once, make_key);
    struct fdr__writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->self = t;
    w->tid = fdr__gettid();
    pthread_mutex_lock(&fdr__writers_lock);
    w->buf = fdr__buf_get();
    if (!w->buf) {
        pthread_mutex_unlock(&fdr__writers_lock);
        free(w);
        return NULL;
    }
    w->next = fdr__writers;
    if (fdr__writers)
        fdr__writers->prev = w;
    fdr__writers = w;
    t->writer = w;
    __atomic_store_n(&t->enabled, __atomic_load_n(&fdr__enabled_default, __ATOMIC_RELAXED),
                     __ATOMIC_RELEASE);
    pthread_mutex_unlock(&fdr__writers_lock);
    pthread_setspecific(writer_key, w);
    return w;
}

/* Opens the packet of sequence number hdr->produced. */
static int open_packet(struct fdr__writer *w, uint64_t now)
{
    struct fdr__buf_hdr *h = w->buf->hdr;
    uint64_t seq = h->produced;
    if (h->mode == FDR__MODE_DISCARD &&
        seq - __atomic_load_n(&h->consumed, __ATOMIC_ACQUIRE) >= h->n_packets) {
        fdr__consumer_kick();
        return -ENOSPC;
    }
    struct fdr__pkt *p = (struct fdr__pkt *)fdr__buf_slot(h, seq);
    p->magic = FDR__CTF_MAGIC;
    memcpy(p->uuid, fdr__trace_uuid, 16);
    p->stream_instance_id = h->index;
    p->ts_begin = now;
    p->ts_end = now;
    p->content_size = sizeof *p * 8;
    p->packet_size = (uint64_t)h->packet_size * 8;
    p->seq = seq;
    p->discarded = h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED);
    p->pid = (uint32_t)fdr__pid;
    p->tid = (uint32_t)w->tid;
    char name[17] = {0};
    prctl(PR_GET_NAME, name);
    memcpy(p->thread_name, name, 16);
    w->pkt = p;
    struct fdr__thread *t = w->self;
    __atomic_store_n(&t->pos, (char *)(p + 1), __ATOMIC_RELAXED);
    __atomic_store_n(&t->end, (char *)p + h->packet_size, __ATOMIC_RELAXED);
    return 0;
}

void fdr__writer_close_packet(struct fdr__writer *w, uint64_t now)
{
    struct fdr__pkt *p = w->pkt;
    if (!p)
        return;
    struct fdr__thread *t = w->self;
    char *pos = __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
    __atomic_store_n(&t->pos, (char *)NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&t->end, (char *)NULL, __ATOMIC_RELAXED);
    w->pkt = NULL;
    if (pos == (char *)(p + 1))
        return; /* empty: the slot is simply reused by the next open */
    struct fdr__buf_hdr *h = w->buf->hdr;
    if (now < p->ts_begin)
        now = p->ts_begin;
    p->ts_end = now;
    p->content_size = (uint64_t)(pos - (char *)p) * 8;
    p->discarded = h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED);
    /* Observable: the packet is complete; pairs with the acquire load of
     * `produced` in the consumer and in snapshots. */
    __atomic_store_n(&h->produced, h->produced + 1, __ATOMIC_RELEASE);
    if (h->mode == FDR__MODE_DISCARD &&
        (h->produced - __atomic_load_n(&h->consumed, __ATOMIC_RELAXED)) * 2 >= h->n_packets)
        fdr__consumer_kick();
}

/* Finds room for `total` bytes in the current packet, switching packets if
 * needed. Returns the write position or NULL (event discarded). */
static char *make_room(struct fdr__writer *w, size_t total, uint64_t now)
{
    struct fdr__thread *t = w->self;
    struct fdr__buf_hdr *h = w->buf->hdr;
    if (total > h->packet_size - sizeof(struct fdr__pkt))
        return NULL; /* can never fit */
    if (w->pkt) {
        char *pos = __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
        char *end = __atomic_load_n(&t->end, __ATOMIC_RELAXED);
        if ((size_t)(end - pos) >= total)
            return pos;
        fdr__writer_close_packet(w, now);
    }
    if (open_packet(w, now) < 0)
        return NULL;
    return __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
}

char *fdr__reserve_slow(struct fdr__site *s, size_t payload)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__writer *w = t->writer;
    if (payload == (size_t)-1) {
        /* Nested in another event of this thread (signal handler). The
         * section still belongs to the interrupted event: do not leave it. */
        if (w && w->buf)
            __atomic_fetch_add(&w->buf->hdr->nested, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    uint8_t st = fdr__site_state(s);
    if (st & FDR__S_NEW) {
        fdr__site_register(s);
        st = fdr__site_state(s);
    }
    if (!(st & (FDR__S_RECORD | FDR__S_PRINT)))
        goto out;
    if (!w) {
        w = writer_create(t);
        if (!w)
            goto out;
    }
    if (!__atomic_load_n(&t->enabled, __ATOMIC_ACQUIRE))
        goto out;
    size_t total = payload + FDR__EVENT_HEADER_SIZE;
    uint64_t now = fdr__now();
    char *p;
    if (st & FDR__S_RECORD) {
        p = make_room(w, total, now);
        if (!p) {
            count_discarded(w);
            if (!(st & FDR__S_PRINT))
                goto out;
            p = scratch; /* still print it */
        }
    } else {
        if (total > SCRATCH_SIZE)
            goto out;
        p = scratch;
    }
    uint16_t id = s->id;
    memcpy(p, &id, 2);
    memcpy(p + 2, &now, 8);
    if (st & FDR__S_PRINT) {
        t->printing = s;
        t->print_start = p;
    }
    return p + FDR__EVENT_HEADER_SIZE;
out:
    leave_section(t);
    return NULL;
}

void fdr__commit_slow(char *end)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__site *s = t->printing;
    char *start = t->print_start;
    t->printing = NULL;
    uint64_t ts;
    memcpy(&ts, start + 2, 8);
    fdr__print_event(s, start + FDR__EVENT_HEADER_SIZE,
                     (size_t)(end - start) - FDR__EVENT_HEADER_SIZE, ts);
    if (start != scratch)
        __atomic_store_n(&t->pos, end, __ATOMIC_RELAXED);
    leave_section(t);
}

void fdr__writer_thread_exit(void)
{
    struct fdr__thread *t = &fdr__self;
    struct fdr__writer *w = t->writer;
    if (!w)
        return;
    pthread_mutex_lock(&fdr__writers_lock);
    fdr__writer_close_packet(w, fdr__now());
    if (w->prev)
        w->prev->next = w->next;
    else
        fdr__writers = w->next;
    if (w->next)
        w->next->prev = w->prev;
    fdr__buf_put(w->buf);
    t->writer = NULL;
    __atomic_store_n(&t->enabled, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&fdr__writers_lock);
    fdr__consumer_kick();
    free(w);
}
