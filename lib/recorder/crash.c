/* SPDX-License-Identifier: MIT */
/* crash.c - the crash dump: the last events of every thread on a fatal
 * signal, printed on stderr, and optionally a CTF snapshot.
 *
 * On SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT (FDR_CRASH_SIGNALS; FDR_CRASH=0
 * or "none" turns it off) the handler
 *
 *   1. stops the other writers (section.c, fdr__section_quiesce_unlocked,
 *      bounded wait): their rings then hold still;
 *   2. takes the last FDR_CRASH_EVENTS (default 256) complete events of each
 *      ring, newest packets first, sorts them by time and prints one line
 *      each, with a single write(2) per line:
 *          fdr: 0.001234567 [4242 worker] net:rx len=60 dev=eth0
 *      (seconds since the library started, thread id and name, event,
 *      message formatted by format.c with the real string contents);
 *   3. prints the spans open on each thread (fdr/span.h), outermost first,
 *      from the thread's span stack (struct fdr__thread), then the async
 *      spans begun and not ended, paired from the rings (snapshot.c):
 *          fdr: spans open in thread 4242: net:handle > db:commit
 *          fdr: async span open: rpc:call id=7 (begun in thread 4250)
 *   4. if FDR_CRASH_DIR is set, writes a CTF snapshot into
 *      <FDR_CRASH_DIR>/crash-<pid> (snapshot.c, fdr__snapshot_write_live);
 *   5. lets the writers go on, and chains (chain()): delivers the signal
 *      to the action installed before fdr's as the kernel would have,
 *      honouring its SA_RESETHAND, SA_NODEFER, SA_SIGINFO, sa_mask and
 *      SA_RESTART, SIG_IGN and SIG_DFL, so that the program goes on, loops
 *      or dies (same signal, same core dump) exactly as without fdr.
 *
 * Everything here is async-signal-safe: no malloc, no stdio, no lock taken
 * by blocking. The writers lock may be held by the crashing thread itself
 * (or by a thread that will never run again): it is tried for 100 ms, then
 * the writer list is walked without it. State is static, as one crash at a
 * time is dumped: a second thread that crashes meanwhile waits for the
 * first dump, a crash inside the dump goes straight to the default action.
 *
 * The handler runs on an alternate signal stack (128 KiB, mapped when a
 * thread starts recording and unmapped at its exit) so that a stack
 * overflow is dumped too. A thread that has its own alternate stack keeps
 * it. A program that installs its own handler later replaces ours; if that
 * handler chains to the previous one, ours runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "common/format.h"
#include "common/io.h"
#include "common/iter.h"
#include "common/signal.h"
#include "common/validate.h"
#include "recorder/cold.h"
#include "recorder/buffer.h"
#include "recorder/clock.h"
#include "recorder/config.h"
#include "recorder/consumer.h"
#include "recorder/flight.h"
#include "recorder/registry.h"
#include "recorder/section.h"
#include "recorder/writer.h"
#include "common/tracedir.h"

#define ALT_STACK_SIZE (128u * 1024)
#define MAX_ENTRIES 32768

static int crash_on;
static uint8_t crash_sig[NSIG];                         /* 1: handled */
static FDR__COLD_PAGE struct sigaction crash_old[NSIG]; /* previous actions */
static __thread void *alt_stack;                        /* ours, or NULL */

/* ---- per-thread alternate stacks ------------------------------------------- */

void fdr__crash_thread_init(void)
{
    if (!crash_on || alt_stack)
        return;
    stack_t old;
    if (sigaltstack(NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE))
        return; /* the program's own */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, ALT_STACK_SIZE + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;
    mprotect(p, page, PROT_NONE); /* guard page below the stack */
    stack_t st = {.ss_sp = p + page, .ss_size = ALT_STACK_SIZE, .ss_flags = 0};
    if (sigaltstack(&st, NULL) < 0) {
        munmap(p, ALT_STACK_SIZE + page);
        return;
    }
    alt_stack = p;
}

void fdr__crash_thread_exit(void)
{
    if (!alt_stack)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    stack_t cur;
    if (sigaltstack(NULL, &cur) < 0 || (cur.ss_flags & SS_ONSTACK))
        return;
    if (cur.ss_sp == (char *)alt_stack + page) {
        stack_t off = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
        sigaltstack(&off, NULL);
    }
    munmap(alt_stack, ALT_STACK_SIZE + page);
    alt_stack = NULL;
}

/* ---- output --------------------------------------------------------------- */

static void out(const char *s, size_t n)
{
    fdr__write_full(2, s, n);
}

static void outs(const char *s)
{
    out(s, strlen(s));
}

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGILL:
        return "SIGILL";
    case SIGFPE:
        return "SIGFPE";
    case SIGABRT:
        return "SIGABRT";
    case SIGTRAP:
        return "SIGTRAP";
    case SIGSYS:
        return "SIGSYS";
    default:
        return NULL;
    }
}

/* ---- collecting events ----------------------------------------------------- */

struct entry {
    uint64_t ts;
    const char *payload; /* in the ring */
    uint32_t len;
    uint32_t tid;
    uint16_t id;
    const char *thread_name; /* in the packet header, not NUL-terminated */
    uint32_t seq;            /* collection order: a thread's events, oldest first */
};

static FDR__COLD struct entry entries[MAX_ENTRIES];
static size_t n_entries;
static FDR__COLD char line[8192];
static struct fdr__classes classes;
static struct fdr__skips skips;

/* Walks the events of one checked packet (hdr, content `bytes` long,
 * header included); keeps events of index >= skip when collecting.
 * Returns the number of events; a corrupt event ends the walk. */
static size_t walk_packet(const char *pkt, const struct fdr__pkt *hdr, uint64_t bytes,
                          size_t skip, int collect)
{
    struct fdr__iter it;
    struct fdr__event ev;
    size_t i = 0;
    fdr__iter_init(&it, pkt, bytes, &classes);
    for (; fdr__iter_next(&it, &ev) > 0; i++) {
        if (collect && i >= skip && n_entries < MAX_ENTRIES) {
            entries[n_entries] =
                (struct entry){ev.ts, ev.payload,       (uint32_t)ev.len,   hdr->tid,
                               ev.id, hdr->thread_name, (uint32_t)n_entries};
            n_entries++;
        }
    }
    return i;
}

/* Collects the last `want` events of buffer b (pos: end of its open packet,
 * or NULL). */
static void collect_buffer(struct fdr__buf *b, const char *pos, size_t want)
{
    const struct fdr__ring_geom *g = &b->geom;
    const struct fdr__buf_hdr *h = b->hdr;
    skips.rings += fdr__ring_check(h, g) < 0;
    uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
    /* Newest first: the open packet (sequence `produced`), then closed ones
     * as long as their slot still holds them. */
    uint64_t oldest =
        produced >= g->n_packets ? produced - g->n_packets + (pos ? 1 : 0) : 0;
    static FDR__COLD struct fdr__pkt hdrs[64];
    const char *slots[64];
    size_t counts[64], ns = 0;
    size_t have = 0;
    for (uint64_t seq = produced + (pos ? 1 : 0);
         seq-- > oldest && have < want && ns < 64;) {
        const char *pkt = fdr__ring_slot(h, g, seq);
        struct fdr__pkt open;
        const void *from = pkt;
        if (seq == produced) {
            memcpy(&open, pkt, sizeof open);
            open.content_size = (uint64_t)(pos - pkt) * 8;
            from = &open;
        }
        if (fdr__pkt_check(from, g, seq, &hdrs[ns]) < 0) {
            skips.packets++;
            break;
        }
        if (seq == produced) { /* open: up to its last good event */
            uint64_t last;
            size_t good = fdr__packet_prefix(pkt, hdrs[ns].content_size / 8, &hdrs[ns],
                                             &classes, UINT64_MAX, &last);
            hdrs[ns].content_size = (uint64_t)good * 8;
            hdrs[ns].ts_end = last;
        }
        /* The one check of every reader (validate.h), packet by packet:
         * the dump goes from the newest back, and stops at a bad one. */
        struct fdr__stream_state one = {0, 0, 0, fdr__now_bound()};
        if (fdr__packet_valid(pkt, &hdrs[ns], &classes, &one) < 0) {
            skips.packets++;
            break;
        }
        size_t k = walk_packet(pkt, &hdrs[ns], hdrs[ns].content_size / 8, 0, 0);
        slots[ns] = pkt;
        counts[ns++] = k;
        have += k;
    }
    /* Oldest packet first, skipping what exceeds `want`. */
    size_t excess = have > want ? have - want : 0;
    while (ns-- > 0) {
        size_t skip = excess < counts[ns] ? excess : counts[ns];
        excess -= skip;
        walk_packet(slots[ns], &hdrs[ns], hdrs[ns].content_size / 8, skip, 1);
    }
}

/* Whether a goes after b: by time, and in collection order for one time (a
 * coarse clock, such as qemu's or a fallback's, gives several events of a
 * thread the same time, and the sort alone would mix them up). */
static int after(const struct entry *a, const struct entry *b)
{
    return a->ts != b->ts ? a->ts > b->ts : a->seq > b->seq;
}

static void sort_entries(void)
{
    /* Shell sort: in place, no recursion, fine for a few thousand. */
    for (size_t gap = n_entries / 2; gap > 0; gap /= 2)
        for (size_t i = gap; i < n_entries; i++) {
            struct entry tmp = entries[i];
            size_t j = i;
            for (; j >= gap && after(&entries[j - gap], &tmp); j -= gap)
                entries[j] = entries[j - gap];
            entries[j] = tmp;
        }
}

static void print_entry(const struct entry *e)
{
    const struct fdr__class *c = fdr__classes_get(&classes, e->id);
    if (!c)
        return;
    struct fdr__line_info li = {fdr__clock_to_ns_since_start(e->ts), e->tid,
                                e->thread_name};
    memcpy(line, "fdr: ", 5);
    size_t n =
        fdr__format_line(line + 5, sizeof line - 5, &classes, c, &li, e->payload, e->len);
    out(line, 5 + n);
}

/* "fdr: <who> skipped N corrupt packets and M corrupt ring headers". */
static void out_skips(const char *who, const struct fdr__skips *sk)
{
    if (!sk->rings && !sk->packets)
        return;
    char num[24];
    outs("fdr: ");
    outs(who);
    outs(" skipped ");
    num[fdr__fmt_u64(num, sk->packets, 10, 0)] = 0;
    outs(num);
    outs(" corrupt packets and ");
    num[fdr__fmt_u64(num, sk->rings, 10, 0)] = 0;
    outs(num);
    outs(" corrupt ring headers\n");
}

/* ---- the handler ------------------------------------------------------------ */

/* Appends s to head[*n], within cap. */
static void add(char *head, size_t cap, size_t *n, const char *s)
{
    size_t k = strlen(s);
    if (k > cap - *n)
        k = cap - *n;
    memcpy(head + *n, s, k);
    *n += k;
}

static void add_u64(char *head, size_t cap, size_t *n, uint64_t v, unsigned base)
{
    char num[24];
    num[fdr__fmt_u64(num, v, base, 0)] = 0;
    add(head, cap, n, num);
}

/* The banner: which signal, where it came from (si_code > 0: the kernel,
 * for a fault at si_addr; otherwise kill/raise/abort by si_pid), which
 * thread, and how much follows:
 *   fdr: caught SIGSEGV (fault at address 0x0) in thread 4242; last 256
 *   events per thread (FDR_CRASH_EVENTS):
 *   fdr: caught SIGTERM (sent by process 977, uid 0) in thread 4242; ... */
static void banner(int sig, const siginfo_t *si, pid_t me)
{
    char head[256];
    size_t n = 0, cap = sizeof head;
    const char *nm = sig_name(sig);
    add(head, cap, &n, "fdr: caught ");
    if (nm) {
        add(head, cap, &n, nm);
    } else {
        add(head, cap, &n, "signal ");
        add_u64(head, cap, &n, (uint64_t)sig, 10);
    }
    int fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
    if (si && si->si_code > 0 && fault) {
        add(head, cap, &n, " (fault at address 0x");
        add_u64(head, cap, &n, (uint64_t)(uintptr_t)si->si_addr, 16);
        add(head, cap, &n, ")");
    } else if (si && si->si_code > 0) {
        add(head, cap, &n, " (sent by the kernel)");
    } else if (si && si->si_pid == fdr__pid) {
        add(head, cap, &n, " (raised by this process: raise, abort or kill)");
    } else if (si) {
        add(head, cap, &n, " (sent by process ");
        add_u64(head, cap, &n, (uint64_t)si->si_pid, 10);
        add(head, cap, &n, ", uid ");
        add_u64(head, cap, &n, (uint64_t)si->si_uid, 10);
        add(head, cap, &n, ")");
    }
    add(head, cap, &n, " in thread ");
    add_u64(head, cap, &n, (uint64_t)me, 10);
    add(head, cap, &n, "; last ");
    add_u64(head, cap, &n, fdr__cfg.crash_events, 10);
    add(head, cap, &n, " events per thread (FDR_CRASH_EVENTS):\n");
    out(head, n);
}

static void dump(int sig, const siginfo_t *si, pid_t me)
{
    banner(sig, si, me);

    int locked = 0;
    uint64_t deadline = fdr__clock_mono_ns() + 100000000u;
    while (!(locked = pthread_mutex_trylock(&fdr__writers_lock) == 0) &&
           fdr__clock_mono_ns() < deadline) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    const struct fdr__writer *self = fdr__self.writer;
    if (fdr__section_quiesce_unlocked(self, 200000000u) < 0)
        outs("fdr: some threads did not stop; their last events may be missing\n");

    fdr__registry_classes(&classes);
    skips = (struct fdr__skips){0, 0};
    uint32_t nb = fdr__buf_count();
    size_t per = fdr__cfg.crash_events;
    if (nb && per * nb > MAX_ENTRIES)
        per = MAX_ENTRIES / nb;
    n_entries = 0;
    for (uint32_t i = 0; i < nb; i++) {
        struct fdr__buf *bf = fdr__buf_at(i);
        if (!bf)
            continue;
        const char *pos = NULL;
        uint64_t produced = __atomic_load_n(&bf->hdr->produced, __ATOMIC_ACQUIRE);
        for (const struct fdr__writer *w = fdr__writers; w; w = w->next)
            if (w->buf == bf && w->pkt)
                pos = fdr__open_end(bf, w, produced);
        collect_buffer(bf, pos, per);
    }
    sort_entries();
    for (size_t i = 0; i < n_entries; i++)
        print_entry(&entries[i]);
    if (n_entries == 0)
        outs("fdr: (no events recorded)\n");
    out_skips("crash dump", &skips);
    outs("fdr: end of last events\n");
    /* The stack of what each thread was doing, and the async spans open:
     * printed, and the crash snapshot's .fdr-spans. */
    static FDR__COLD char spans[16384];
    static FDR__COLD struct fdr__async_seen work[FDR__ASYNC_WORK];
    size_t spans_n = fdr__spans_open_text(spans, sizeof spans, "", work);
    for (size_t a = 0, b; a < spans_n; a = b + 1) {
        for (b = a; spans[b] != '\n'; b++)
            ;
        memcpy(line, "fdr: ", 5); /* one write per line */
        memcpy(line + 5, spans + a, b + 1 - a);
        out(line, 5 + b + 1 - a);
    }
    if (!fdr__cfg.crash_dir[0])
        outs("fdr: set FDR_CRASH_DIR=DIR to keep every recorded event of a crash as a "
             "CTF trace\n");

    if (fdr__cfg.crash_dir[0]) {
        /* FDR_CRASH_DIR is the user's; crash-<pid> in it is fdr's own and
         * may be shared with other users: common/tracedir.h. */
        static char name[32];
        fdr__tracedir_name(name, sizeof name, "crash", (unsigned long)fdr__pid);
        int top = fdr__tracedir_open_top(fdr__cfg.crash_dir), r = top;
        if (top >= 0) {
            int d = r = fdr__tracedir_make(top, name);
            close(top);
            if (d >= 0) {
                skips = (struct fdr__skips){0, 0};
                r = fdr__snapshot_write_live(d, &skips, spans, spans_n);
                out_skips("crash snapshot", &skips);
                close(d);
            }
        }
        if (r == 0)
            fdr__consumer_clean_end(); /* the drain helper need not write one */
        outs(r == 0 ? "fdr: crash snapshot (CTF) in "
                    : "fdr: could not write the crash snapshot in ");
        outs(fdr__cfg.crash_dir);
        outs("/");
        outs(name);
        if (r == -EPERM)
            outs(": it belongs to another user or others may write it");
        else if (r == -EEXIST)
            outs(": a file there is a symlink or another user's; not written");
        else if (r == -ELOOP)
            outs(": a symlink on the path where others can write: not followed");
        else if (r < 0) {
            char num[24];
            num[fdr__fmt_u64(num, (uint64_t)-r, 10, 0)] = 0;
            outs(" (errno ");
            outs(num);
            outs(")");
        }
        outs("\n");
    }
    fdr__section_resume();
    if (locked)
        pthread_mutex_unlock(&fdr__writers_lock);
}

static pid_t dumper; /* thread that is dumping or has dumped, 0 before */
static int dump_done;

/* A fault the kernel raised (not one sent with kill): it comes back when
 * the faulting instruction runs again. */
static int is_fault(int sig, const siginfo_t *si)
{
    return si->si_code > 0 && fdr__signal_is_fault(sig);
}

/* Delivers sig to the action that was installed before fdr's, as the
 * kernel would have: with SA_RESETHAND the disposition becomes SIG_DFL
 * before the handler runs; the handler runs with the mask the interrupted
 * code had, plus its own sa_mask, plus sig unless SA_NODEFER (the kernel
 * restores the interrupted mask when we return). SIG_IGN ignores a sent
 * signal; a fault cannot be ignored (the kernel would kill the process),
 * nor can SIG_DFL: both take the default action. */
static void chain(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction old = crash_old[sig];
    int handler = (old.sa_flags & SA_SIGINFO)
                      ? old.sa_sigaction != NULL
                      : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
    if (!handler && old.sa_handler == SIG_IGN && !is_fault(sig, si))
        return;
    if (handler) {
        if (old.sa_flags & SA_RESETHAND) {
            struct sigaction dfl;
            memset(&dfl, 0, sizeof dfl);
            dfl.sa_handler = SIG_DFL;
            sigemptyset(&dfl.sa_mask);
            sigaction(sig, &dfl, NULL);
            crash_old[sig] = dfl;
        }
        sigset_t mask = ((const ucontext_t *)uc)->uc_sigmask;
        sigorset(&mask, &mask, &old.sa_mask);
        if (old.sa_flags & SA_NODEFER)
            sigdelset(&mask, sig);
        else
            sigaddset(&mask, sig);
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
        if (old.sa_flags & SA_SIGINFO)
            old.sa_sigaction(sig, si, uc);
        else
            old.sa_handler(sig);
        return;
    }
    /* Default action, as if fdr were not there. A fault (si_code > 0) comes
     * back when the instruction runs again after we return; a signal that
     * was sent (abort, kill) is sent again, and is delivered when the
     * handler returns, since it is blocked until then. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (!is_fault(sig, si))
        syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), sig);
}

int fdr__crash_owns(int sig)
{
    return sig > 0 && sig < NSIG && crash_sig[sig];
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    pid_t me = (pid_t)syscall(SYS_gettid);
    pid_t expect = 0;
    if (__atomic_compare_exchange_n(&dumper, &expect, me, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        dump(sig, si, me);
        /* Release pairs with the acquire load below (other crashing threads). */
        __atomic_store_n(&dump_done, 1, __ATOMIC_RELEASE);
    } else if (expect != me) {
        /* Another thread is dumping: let it finish (5 s at most). */
        uint64_t deadline = fdr__clock_mono_ns() + 5000000000ull;
        while (!__atomic_load_n(&dump_done, __ATOMIC_ACQUIRE) &&
               fdr__clock_mono_ns() < deadline) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    chain(sig, si, uc);
    errno = saved;
}

/* ---- installation ------------------------------------------------------------ */

void fdr__crash_init(void)
{
    if (!fdr__cfg.crash_on)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crash_handler;
    sigemptyset(&sa.sa_mask);
    for (int sig = 1; sig < NSIG; sig++) {
        if (!fdr__cfg.crash_signals[sig] || sigaction(sig, NULL, &crash_old[sig]) < 0)
            continue;
        /* Interrupted system calls restart as they would without fdr. */
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | (crash_old[sig].sa_flags & SA_RESTART);
        if (sigaction(sig, &sa, NULL) == 0)
            crash_sig[sig] = 1;
    }
    crash_on = 1;
}
