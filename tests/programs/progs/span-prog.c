/* SPDX-License-Identifier: MIT */
/* span-prog.c - spans (include/fdr/span.h) for tests/programs/test-fdr-spans.py.
 *
 *     span-prog nested N      N rounds of sp:outer (scoped) holding 3 sp:inner
 *                             (scoped) and one sp:expl (begin/end, end field
 *                             rc); then one recursion 20 deep (sp:deep), more
 *                             than the 16 spans a thread's stack keeps
 *     span-prog async N       thread "producer" begins sp:req async spans
 *                             0..N-1 and hands each id to thread "consumer",
 *                             which ends it; id N ends on its own thread
 *     span-prog unbalanced    what does not pair, one of each (the driver
 *                             knows the counts): an end with no span open,
 *                             a thread that exits inside a span, a span
 *                             begun inside a scoped one and never ended, an
 *                             async id begun twice, an async end of an id
 *                             never begun, an end of another name
 *     span-prog snapshot DIR  fdr_snapshot(DIR) inside sp:outer > sp:mid, with
 *                             async sp:rpc 3 open (begun by main), 4 begun
 *                             by main and ended by a thread, 5 begun and
 *                             ended by main
 *     span-prog wrap DIR      (flight mode, rings of two small packets) main
 *                             begins async sp:rpc 2; thread "filler" begins
 *                             sp:rpc 1, ends 2, then records 2,000 sp:fill
 *                             events (its ring wraps: 1's begin and 2's end
 *                             overwritten); main takes fdr_snapshot(DIR) and
 *                             prints its pid
 *     span-prog hang          inside sp:killed (after one whole sp:done),
 *                             says "ready" and waits to be killed
 *     span-prog crash [segv]  main inside sp:outer > sp:mid > sp:inner and a
 *                             thread "worker" inside sp:work, then abort()
 *                             (or a SIGSEGV): the crash dump names both
 *                             stacks; async sp:rpc 7 (begun by main) and 30
 *                             (begun by worker) are open, 20 (begun by main,
 *                             ended by worker) and 8 (main) are not
 * Every round does a little work of its own length (a loop of i * 37 % 1000
 * steps) so that durations differ. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fdr/fdr.h>

/* Busy work the compiler keeps; threads call it at once (async spans),
 * so its result is stored atomically (TSan: no race on the sink). */
static unsigned sink;

static void work(unsigned n)
{
    volatile unsigned acc = 0;
    for (unsigned i = 0; i < n; i++)
        acc += i;
    __atomic_store_n(&sink, acc, __ATOMIC_RELAXED);
}

static void expl_step(int i)
{
    fdr_span_begin(sp, expl, "k=%d", i);
    work((unsigned)(i * 53 % 700));
    fdr_span_end(sp, expl, "rc=%d", -i);
}

static void deep(int n)
{
    fdr_span(sp, deep, "n=%d", n);
    if (n > 1)
        deep(n - 1);
}

static void nested(int rounds)
{
    for (int i = 0; i < rounds; i++) {
        fdr_span(sp, outer, "i=%d", i);
        for (int j = 0; j < 3; j++) {
            fdr_span(sp, inner);
            work((unsigned)((i * 37 + j * 11) % 1000));
        }
        expl_step(i);
    }
    deep(20);
}

static int handoff[2];

static void *producer(void *arg)
{
    int n = *(int *)arg;
    pthread_setname_np(pthread_self(), "producer");
    for (int i = 0; i < n; i++) {
        fdr_span_async_begin(sp, req, (uint64_t)i, "op=%s", i % 2 ? "get" : "put");
        work((unsigned)(i * 17 % 500));
        if (write(handoff[1], &i, sizeof i) != sizeof i)
            abort();
    }
    close(handoff[1]);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "consumer");
    int id;
    while (read(handoff[0], &id, sizeof id) == sizeof id) {
        work((unsigned)(id * 29 % 800));
        fdr_span_async_end(sp, req, (uint64_t)id, "status=%d", id % 3);
    }
    return NULL;
}

static void async_spans(int n)
{
    pthread_t a, b;
    if (pipe(handoff) != 0)
        abort();
    pthread_create(&b, NULL, consumer, NULL);
    pthread_create(&a, NULL, producer, &n);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    fdr_span_async_begin(sp, req, (uint64_t)n, "op=%s", "local");
    fdr_span_async_end(sp, req, (uint64_t)n, "status=%d", 0);
}

static void *leaker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "leaker");
    fdr_span_begin(sp, leak);
    return NULL; /* the thread ends inside sp:leak */
}

static void unbalanced(void)
{
    fdr_span_end(sp, stray); /* nothing open: span_end=0 */
    pthread_t t;
    pthread_create(&t, NULL, leaker, NULL);
    pthread_join(t, NULL);
    {
        fdr_span(sp, holder);
        fdr_span_begin(sp, forgot); /* closed, unended, by holder's end */
    }
    fdr_span_async_begin(sp, job, 7);
    fdr_span_async_begin(sp, job, 7); /* reused: the first stays unended */
    fdr_span_async_end(sp, job, 7);
    fdr_span_async_end(sp, job, 99); /* never begun */
    fdr_span_begin(sp, alpha);
    fdr_span_end(sp, beta);  /* not alpha's name: unmatched */
    fdr_span_end(sp, alpha); /* the stack is empty now: unmatched too */
    fdr_span(sp, last);      /* a normal one after all of it */
}

static int go[2];

static void *crash_worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "worker");
    fdr_span(sp, work);
    fdr_span_async_end(sp, rpc, 20);   /* begun by main */
    fdr_span_async_begin(sp, rpc, 30); /* left open */
    char c = 1;
    if (write(go[1], &c, 1) != 1)
        abort();
    for (;;)
        pause(); /* inside sp:work until the process dies */
    return NULL;
}

/* A real fault, not undefined behaviour UBSan stops at: a store into a
 * page mapped without access. */
static void segv(void)
{
    volatile int *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED)
        *p = 1;
}

static void crash(int fault)
{
    pthread_t t;
    if (pipe(go) != 0)
        abort();
    fdr_span_async_begin(sp, rpc, 7, "op=%s", "left open");
    fdr_span_async_begin(sp, rpc, 20); /* the worker ends it */
    fdr_span_async_begin(sp, rpc, 8);
    fdr_span_async_end(sp, rpc, 8);
    fdr_span(sp, outer);
    fdr_span_begin(sp, mid);
    pthread_create(&t, NULL, crash_worker, NULL);
    char c;
    if (read(go[0], &c, 1) != 1)
        abort();
    {
        fdr_span(sp, inner, "x=%d", 5);
        if (fault)
            segv();
        abort();
    }
}

static void *ender(void *arg)
{
    (void)arg;
    fdr_span_async_end(sp, rpc, 4);
    return NULL;
}

static int snapshot(const char *dir)
{
    pthread_t t;
    fdr_span_async_begin(sp, rpc, 3);
    fdr_span_async_begin(sp, rpc, 4);
    pthread_create(&t, NULL, ender, NULL);
    pthread_join(t, NULL);
    fdr_span_async_begin(sp, rpc, 5);
    fdr_span_async_end(sp, rpc, 5);
    fdr_span(sp, outer);
    fdr_span_begin(sp, mid);
    int r = fdr_snapshot(dir);
    fdr_span_end(sp, mid);
    return r == 0 ? 0 : 1;
}

static int filled[2];

static void *filler(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "filler");
    fdr_span_async_begin(sp, rpc, 1);
    fdr_span_async_end(sp, rpc, 2);
    for (int i = 0; i < 2000; i++)
        fdr_trace(sp, fill, "i=%d", i);
    char c = 1;
    if (write(filled[1], &c, 1) != 1)
        abort();
    for (;;)
        pause(); /* its ring stays as it is until the process ends */
    return NULL;
}

static int wrap(const char *dir)
{
    pthread_t t;
    if (pipe(filled) != 0)
        abort();
    fdr_span_async_begin(sp, rpc, 2);
    pthread_create(&t, NULL, filler, NULL);
    char c;
    if (read(filled[0], &c, 1) != 1)
        abort();
    int r = fdr_snapshot(dir);
    printf("%d\n", (int)getpid());
    return r == 0 ? 0 : 1;
}

static void hang(void)
{
    {
        fdr_span(sp, done);
    }
    fdr_span(sp, killed);
    fputs("ready\n", stdout);
    fflush(stdout);
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int n = argc > 2 ? atoi(argv[2]) : 100;
    if (strcmp(argv[1], "nested") == 0)
        nested(n);
    else if (strcmp(argv[1], "async") == 0)
        async_spans(n);
    else if (strcmp(argv[1], "unbalanced") == 0)
        unbalanced();
    else if (strcmp(argv[1], "snapshot") == 0 && argc > 2)
        return snapshot(argv[2]);
    else if (strcmp(argv[1], "wrap") == 0 && argc > 2)
        return wrap(argv[2]);
    else if (strcmp(argv[1], "hang") == 0)
        hang();
    else if (strcmp(argv[1], "crash") == 0)
        crash(argc > 2 && strcmp(argv[2], "segv") == 0);
    else
        return 2;
    return 0;
}
