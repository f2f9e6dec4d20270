/* crash.c - the crash dump: the last events of every thread on a fatal
 * signal, printed on stderr, and optionally a CTF snapshot.
 *
 * On SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT (FDR_CRASH_SIGNALS; FDR_CRASH=0
 * or "none" turns it off) the handler
 *
 *   1. stops the other writers (section.c, fdr__section_quiesce_unlocked,
 *      bounded wait): their rings then hold still;
 *   2. takes the last FDR_CRASH_EVENTS (default 32) complete events of each
 *      ring, newest packets first, sorts them by time and prints one line
 *      each, with a single write(2) per line:
 *          fdr: 0.001234567 [4242 worker] net:rx len=60 dev=eth0
 *      (seconds since the library started, thread id and name, event,
 *      message formatted by format.c with the real string contents);
 *   3. if FDR_CRASH_DIR is set, writes a CTF snapshot into
 *      <FDR_CRASH_DIR>/crash-<pid> (snapshot.c, fdr__snapshot_write_live);
 *   4. lets the writers go on, and chains (chain()): delivers the signal
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

#include "recorder/fdr-int.h"

#define ALT_STACK_SIZE (128u * 1024)
#define MAX_EVENTS_PER_THREAD 1024
#define MAX_ENTRIES 32768

static int crash_on;
static unsigned crash_events = 32;
static char crash_dir[PATH_MAX - 64];
static uint8_t crash_sig[NSIG];          /* 1: handled */
static struct sigaction crash_old[NSIG]; /* previous actions */
static __thread void *alt_stack;         /* ours, or NULL */

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
    while (n > 0) {
        ssize_t w = write(2, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
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
};

static struct entry entries[MAX_ENTRIES];
static size_t n_entries;
static char line[8192];

/* Walks the events of one packet (content `bytes` long, header included);
 * calls take(i) for event index i >= skip. Returns the number of events. */
static size_t walk_packet(const char *pkt, uint64_t bytes, size_t skip, int collect)
{
    const struct fdr__pkt *h = (const struct fdr__pkt *)pkt;
    const char *p = pkt + sizeof *h, *end = pkt + bytes;
    size_t i = 0;
    while (end - p >= FDR__EVENT_HEADER_SIZE) {
        uint16_t id;
        uint64_t ts;
        memcpy(&id, p, 2);
        memcpy(&ts, p + 2, 8);
        const struct fdr__class *c = fdr__class_get(id);
        if (!c)
            break; /* corrupt: stop here */
        const char *pl = p + FDR__EVENT_HEADER_SIZE;
        size_t left = (size_t)(end - pl);
        size_t sz = fdr__payload_size(c, pl, left);
        if (sz == 0 && c->nfields > 0)
            break;
        if (collect && i >= skip && n_entries < MAX_ENTRIES) {
            struct entry *e = &entries[n_entries++];
            e->ts = ts;
            e->payload = pl;
            e->len = (uint32_t)sz;
            e->tid = h->tid;
            e->id = id;
            e->thread_name = h->thread_name;
        }
        p = pl + sz;
        i++;
    }
    return i;
}

/* Collects the last `want` events of buffer b (pos: end of its open packet,
 * or NULL). */
static void collect_buffer(struct fdr__buf *b, const char *pos, size_t want)
{
    const struct fdr__buf_hdr *h = b->hdr;
    uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
    /* Newest first: the open packet (sequence `produced`), then closed ones
     * as long as their slot still holds them. */
    uint64_t oldest =
        produced >= h->n_packets ? produced - h->n_packets + (pos ? 1 : 0) : 0;
    const char *slots[64];
    uint64_t sizes[64];
    size_t counts[64], ns = 0;
    size_t have = 0;
    for (uint64_t seq = produced + (pos ? 1 : 0);
         seq-- > oldest && have < want && ns < 64;) {
        const char *pkt = fdr__buf_slot(h, seq);
        const struct fdr__pkt *ph = (const struct fdr__pkt *)pkt;
        uint64_t bytes;
        if (seq == produced) {
            bytes = (uint64_t)(pos - pkt);
        } else {
            if (ph->magic != FDR__CTF_MAGIC || ph->seq != seq || ph->content_size % 8)
                break;
            bytes = ph->content_size / 8;
        }
        if (bytes < sizeof *ph || bytes > h->packet_size)
            break;
        size_t k = walk_packet(pkt, bytes, 0, 0);
        slots[ns] = pkt;
        sizes[ns] = bytes;
        counts[ns++] = k;
        have += k;
    }
    /* Oldest packet first, skipping what exceeds `want`. */
    size_t excess = have > want ? have - want : 0;
    while (ns-- > 0) {
        size_t skip = excess < counts[ns] ? excess : counts[ns];
        excess -= skip;
        walk_packet(slots[ns], sizes[ns], skip, 1);
    }
}

static void sort_entries(void)
{
    /* Shell sort: in place, no recursion, fine for a few thousand. */
    for (size_t gap = n_entries / 2; gap > 0; gap /= 2)
        for (size_t i = gap; i < n_entries; i++) {
            struct entry tmp = entries[i];
            size_t j = i;
            for (; j >= gap && entries[j - gap].ts > tmp.ts; j -= gap)
                entries[j] = entries[j - gap];
            entries[j] = tmp;
        }
}

static void print_entry(const struct entry *e)
{
    const struct fdr__class *c = fdr__class_get(e->id);
    if (!c)
        return;
    size_t n = 0;
    memcpy(line, "fdr: ", 5);
    n = 5;
    n += fdr__fmt_seconds(line + n, fdr__clock_to_ns_since_start(e->ts));
    line[n++] = ' ';
    line[n++] = '[';
    n += fdr__fmt_u64(line + n, e->tid, 10, 0);
    size_t tl = strnlen(e->thread_name, 16);
    if (tl) {
        line[n++] = ' ';
        memcpy(line + n, e->thread_name, tl);
        n += tl;
    }
    line[n++] = ']';
    line[n++] = ' ';
    const char *p = fdr__str(c->provider), *ev = fdr__str(c->event);
    size_t pl = strnlen(p, 256), el = strnlen(ev, 256);
    memcpy(line + n, p, pl);
    n += pl;
    line[n++] = ':';
    memcpy(line + n, ev, el);
    n += el;
    line[n++] = ' ';
    n += fdr__format_payload(line + n, sizeof line - n - 1, c, e->payload, e->len);
    line[n++] = '\n';
    out(line, n);
}

/* ---- the handler ------------------------------------------------------------ */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void dump(int sig, pid_t me)
{
    char head[160];
    size_t n = 0;
    const char *nm = sig_name(sig);
    const char *a = "fdr: caught ";
    memcpy(head, a, strlen(a));
    n = strlen(a);
    if (nm) {
        memcpy(head + n, nm, strlen(nm));
        n += strlen(nm);
    } else {
        memcpy(head + n, "signal ", 7);
        n += 7;
        n += fdr__fmt_u64(head + n, (uint64_t)sig, 10, 0);
    }
    const char *b = " in thread ";
    memcpy(head + n, b, strlen(b));
    n += strlen(b);
    n += fdr__fmt_u64(head + n, (uint64_t)me, 10, 0);
    const char *c = "; last events:\n";
    memcpy(head + n, c, strlen(c));
    n += strlen(c);
    out(head, n);

    int locked = 0;
    uint64_t deadline = mono_ns() + 100000000u;
    while (!(locked = pthread_mutex_trylock(&fdr__writers_lock) == 0) &&
           mono_ns() < deadline) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    const struct fdr__writer *self = fdr__self.writer;
    if (fdr__section_quiesce_unlocked(self, 200000000u) < 0)
        outs("fdr: some threads did not stop; their last events may be missing\n");

    uint32_t nb = fdr__buf_count();
    size_t per = crash_events;
    if (nb && per * nb > MAX_ENTRIES)
        per = MAX_ENTRIES / nb;
    n_entries = 0;
    for (uint32_t i = 0; i < nb; i++) {
        struct fdr__buf *bf = fdr__buf_at(i);
        if (!bf)
            continue;
        const char *pos = NULL;
        for (const struct fdr__writer *w = fdr__writers; w; w = w->next)
            if (w->buf == bf && w->pkt) {
                pos = __atomic_load_n(&w->self->pos, __ATOMIC_RELAXED);
                if ((const char *)w->pkt != fdr__buf_slot(bf->hdr, bf->hdr->produced) ||
                    pos < (const char *)(w->pkt + 1) ||
                    pos > (const char *)w->pkt + bf->hdr->packet_size)
                    pos = NULL;
            }
        collect_buffer(bf, pos, per);
    }
    sort_entries();
    for (size_t i = 0; i < n_entries; i++)
        print_entry(&entries[i]);
    if (n_entries == 0)
        outs("fdr: (no events recorded)\n");
    outs("fdr: end of last events\n");

    if (crash_dir[0]) {
        static char path[PATH_MAX];
        int r = fdr__path_join(path, sizeof path, crash_dir, "crash-", (long)fdr__pid);
        if (r == 0) {
            mkdir(crash_dir, 0755);
            r = fdr__snapshot_write_live(path);
        }
        if (r == 0) {
            outs("fdr: crash snapshot (CTF) in ");
            outs(path);
            outs("\n");
        } else {
            char num[24];
            num[fdr__fmt_u64(num, (uint64_t)-r, 10, 0)] = 0;
            outs("fdr: could not write the crash snapshot in ");
            outs(crash_dir);
            outs(" (errno ");
            outs(num);
            outs(")\n");
        }
    }
    fdr__section_resume();
    if (locked)
        pthread_mutex_unlock(&fdr__writers_lock);
}

static pid_t dumper; /* thread that is dumping or has dumped, 0 before */
static int dump_done;

int fdr__signal_is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
           sig == SIGTRAP || sig == SIGSYS;
}

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
        dump(sig, me);
        /* Release pairs with the acquire load below (other crashing threads). */
        __atomic_store_n(&dump_done, 1, __ATOMIC_RELEASE);
    } else if (expect != me) {
        /* Another thread is dumping: let it finish (5 s at most). */
        uint64_t deadline = mono_ns() + 5000000000ull;
        while (!__atomic_load_n(&dump_done, __ATOMIC_ACQUIRE) && mono_ns() < deadline) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    chain(sig, si, uc);
    errno = saved;
}

/* ---- configuration ------------------------------------------------------------ */

static int parse_signals(const char *s, uint8_t set[NSIG])
{
    if (strcasecmp(s, "none") == 0)
        return 0;
    int n = 0;
    while (*s) {
        size_t len = strcspn(s, ", ");
        if (len) {
            int sig = fdr__signal_parse(s, len);
            if (sig < 0 || sig == SIGKILL || sig == SIGSTOP)
                return -EINVAL;
            set[sig] = 1;
            n++;
        }
        s += len;
        s += strspn(s, ", ");
    }
    return n;
}

void fdr__crash_init(void)
{
    const char *on = getenv("FDR_CRASH");
    if (on && *on) {
        if (!strcmp(on, "0") || !strcmp(on, "off") || !strcmp(on, "no") ||
            !strcmp(on, "false"))
            return;
        if (strcmp(on, "1") && strcmp(on, "on") && strcmp(on, "yes") &&
            strcmp(on, "true"))
            fdr__warn(
                "FDR_CRASH=\"%s\" is not valid (0/off or 1/on); crash dumps stay on", on);
    }
    uint8_t set[NSIG] = {0};
    const char *sigs = getenv("FDR_CRASH_SIGNALS");
    const char *def = "SEGV,BUS,ILL,FPE,ABRT";
    if (!sigs || !*sigs)
        sigs = def;
    int n = parse_signals(sigs, set);
    if (n < 0) {
        fdr__warn("FDR_CRASH_SIGNALS=\"%s\" is not valid (a list such as %s, or none); "
                  "using %s",
                  sigs, def, def);
        memset(set, 0, sizeof set);
        n = parse_signals(def, set);
    }
    if (n == 0)
        return;
    const char *ev = getenv("FDR_CRASH_EVENTS");
    if (ev && *ev) {
        char *end;
        long v = strtol(ev, &end, 10);
        if (*ev < '0' || *ev > '9' || *end || v < 1 || v > MAX_EVENTS_PER_THREAD)
            fdr__warn("FDR_CRASH_EVENTS=\"%s\" is not valid (1 to %d); using %u", ev,
                      MAX_EVENTS_PER_THREAD, crash_events);
        else
            crash_events = (unsigned)v;
    }
    const char *dir = getenv("FDR_CRASH_DIR");
    if (dir && *dir) {
        if (strlen(dir) >= sizeof crash_dir - 32)
            fdr__warn("FDR_CRASH_DIR is too long; no crash snapshot");
        else
            strcpy(crash_dir, dir);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crash_handler;
    sigemptyset(&sa.sa_mask);
    for (int sig = 1; sig < NSIG; sig++) {
        if (!set[sig] || sigaction(sig, NULL, &crash_old[sig]) < 0)
            continue;
        /* Interrupted system calls restart as they would without fdr. */
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | (crash_old[sig].sa_flags & SA_RESTART);
        if (sigaction(sig, &sa, NULL) == 0)
            crash_sig[sig] = 1;
    }
    crash_on = 1;
}
