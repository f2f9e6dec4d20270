/* SPDX-License-Identifier: MIT */
/* section.c - stopping writers: the "tracing enabled" / "in tracing
 * section" protocol, and the tracing-activity API (fdr/flight.h).
 *
 * A controller (flush, snapshot, crash dump, fdr_set_tracing_enabled)
 * needs writers out of their buffers. Each thread has two words in its TLS
 * block:
 *
 *   enabled      written by the controller, read by the writer's slow path
 *   end          set by the writer, pulled down to NULL by the controller
 *   in_section   written by the writer around each event
 *
 * Writer (fdr__reserve):            Controller (fdr__section_quiesce):
 *   in_section = 1                    enabled = 0 or 2     (every writer)
 *   compiler barrier                  fence, end = NULL
 *   if (no room below end) slow       barrier()            (a full fence
 *     (slow: if (enabled != 1) leave)                       on every CPU
 *   ... write the event ...                                 running a writer)
 *   in_section = 0 (release)          wait until in_section == 0 (acquire)
 *
 * The fast path reads only `end`, which stands for `enabled == 1`: the
 * controller pulls it down, and the writer's slow path sets it again only
 * when it sees enabled == 1 after a fence (writer.c, set_end).
 *
 * This is Dekker's pattern: each side stores, then loads the other's flag.
 * Without a store-load fence on both sides, both loads can miss the other
 * store (x86 store buffers do exactly that): barectf's generated code has
 * this bug. An mfence on the writer side would cost ~10-30 cycles per
 * event, so the fence is made asymmetric: the controller makes every
 * writer execute a full barrier. After it, either the writer's
 * in_section = 1 is visible to the controller (which then waits), or the
 * writer's load of `enabled` comes after the barrier and sees the stop.
 *
 * The barrier, in order of preference (FDR_SECTION_BARRIER forces one):
 *   membarrier(2) MEMBARRIER_CMD_PRIVATE_EXPEDITED (Linux 4.14): IPIs to
 *     the CPUs running threads of this process, a few microseconds;
 *   MEMBARRIER_CMD_GLOBAL (Linux 4.3): waits for a grace period, slow but
 *     the same guarantee;
 *   signals: without membarrier, the controller sends SIGRTMAX-2 to each
 *     writer thread (tgkill) and waits until each acknowledges. The handler
 *     runs a full fence and then stores the round number (release); the
 *     controller's acquire load of that number orders everything the
 *     writer stored before the interruption (in_section = 1) before the
 *     controller's next load, and everything the writer loads after the
 *     handler (enabled) after the controller's store. A writer that is
 *     slow to answer (preempted) is waited for, past the deadline again
 *     and again; one that blocks the signal while it is pending never
 *     answers: the quiesce fails with -ETIMEDOUT and is undone, it never
 *     guesses. The crash handler alone passes a bounded timeout.
 *
 * Quiesce stores FDR__PAUSED (2), not 0, in the threads that
 * were recording, so that an event that arrives meanwhile is counted as
 * discarded rather than lost silently (writer.c). The writers lock is held
 * by the caller throughout, so threads neither appear nor vanish. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include "recorder/kernel.h" /* membarrier: musl has no linux/ headers */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fdr/fdr.h"
#include "recorder/buffer.h"
#include "recorder/clock.h"
#include "recorder/config.h"
#include "recorder/section.h"
#include "recorder/writer.h"

enum { BARRIER_SIGNAL = -1 };

static int barrier_cmd;        /* membarrier command, or BARRIER_SIGNAL */
static int barrier_sig;        /* the signal of the fallback */
static uint32_t barrier_round; /* incremented per signal barrier */
int fdr__section_no_barrier;   /* test hook: skip the barrier (must fail) */
uint64_t fdr__section_barrier_retries;
void (*fdr__section_barrier_hook)(void); /* test hook: a slow acknowledgement */
static uint32_t wait_round;              /* wait_out's pass number */

#define SIGNAL_TIMEOUT_NS 1000000000ull

static long membarrier(int cmd, unsigned flags)
{
    return syscall(__NR_membarrier, cmd, flags, 0);
}

static void barrier_handler(int sig)
{
    (void)sig;
    struct fdr__writer *w = fdr__self.writer;
    /* Acquire pairs with the seq_cst increment in signal_barrier: the
     * controller's stores of `enabled` happen before what follows. */
    uint32_t round = __atomic_load_n(&barrier_round, __ATOMIC_ACQUIRE);
    /* The point of the whole handler: a full fence on this CPU, between
     * this thread's earlier stores (in_section) and its later loads. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    void (*hook)(void) = __atomic_load_n(&fdr__section_barrier_hook, __ATOMIC_RELAXED);
    if (hook)
        hook(); /* tests/recorder/test-flight-barrier-wait.c: held here */
    if (w)
        /* Observable: pairs with the acquire load in signal_barrier. */
        __atomic_store_n(&w->barrier_ack, round, __ATOMIC_RELEASE);
}

static int install_signal_barrier(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = barrier_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    barrier_sig = SIGRTMAX - 2;
    return sigaction(barrier_sig, &sa, NULL);
}

void fdr__section_init(void)
{
    int want_signal = fdr__cfg.barrier == FDR__BARRIER_SIGNAL;
    long mask = want_signal ? -1 : membarrier(MEMBARRIER_CMD_QUERY, 0);
    if (mask > 0 && (mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0)
        barrier_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
    else if (mask > 0 && (mask & MEMBARRIER_CMD_GLOBAL))
        barrier_cmd = MEMBARRIER_CMD_GLOBAL;
    else if (install_signal_barrier() == 0)
        barrier_cmd = BARRIER_SIGNAL;
    else
        barrier_cmd = 0; /* cannot happen on Linux; quiesce then fails */
}

/* 1 when thread tid blocks sig and sig waits for it (it can never answer),
 * from the SigBlk and SigPnd lines of /proc/self/task/<tid>/status; 0 when
 * not, or unknown. Blocked alone is not enough: a thread runs
 * barrier_handler with sig blocked, and one preempted there (a busy
 * machine) will still answer; then sig is no longer pending. */
static int blocks_signal(pid_t tid, int sig)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *p = strstr(buf, "SigPnd:"), *b = strstr(buf, "SigBlk:");
    if (!p || !b)
        return 0;
    unsigned long long mask = strtoull(p + 7, NULL, 16) & strtoull(b + 7, NULL, 16);
    return (int)((mask >> (sig - 1)) & 1);
}

/* The fallback: every writer but the caller runs barrier_handler. With
 * timeout_ns (the crash handler) it gives up after that long; without
 * (0: snapshot, flush), it waits as long as a writer may still answer, and
 * fails only for a writer that blocks the signal, which never will. */
static int signal_barrier(const struct fdr__writer *self, uint64_t timeout_ns)
{
    /* Seq_cst: ordered after the caller's stores of `enabled`; pairs with
     * the acquire load in barrier_handler. */
    uint32_t round = __atomic_add_fetch(&barrier_round, 1, __ATOMIC_SEQ_CST);
    pid_t pid = (pid_t)syscall(SYS_getpid);
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        if (w != self && syscall(SYS_tgkill, pid, w->tid, barrier_sig) < 0)
            __atomic_store_n(&w->barrier_ack, round, __ATOMIC_RELAXED); /* gone */
    uint64_t period = timeout_ns ? timeout_ns : SIGNAL_TIMEOUT_NS;
    uint64_t deadline = fdr__clock_mono_ns() + period;
    for (struct fdr__writer *w = fdr__writers; w; w = w->next) {
        if (w == self)
            continue;
        unsigned spins = 0;
        /* Acquire pairs with the release in barrier_handler. */
        while (__atomic_load_n(&w->barrier_ack, __ATOMIC_ACQUIRE) != round) {
            if (++spins < 64)
                continue;
            sched_yield();
            if (fdr__clock_mono_ns() <= deadline)
                continue;
            if (timeout_ns || blocks_signal(w->tid, barrier_sig))
                return -ETIMEDOUT;
            /* Only slow (preempted, a busy machine): wait on. */
            __atomic_add_fetch(&fdr__section_barrier_retries, 1, __ATOMIC_RELAXED);
            deadline = fdr__clock_mono_ns() + period;
        }
    }
    return 0;
}

static int barrier(const struct fdr__writer *self, uint64_t timeout_ns)
{
    if (fdr__section_no_barrier)
        return 0;
    if (barrier_cmd == BARRIER_SIGNAL)
        return signal_barrier(self, timeout_ns);
    if (barrier_cmd && membarrier(barrier_cmd, 0) == 0)
        return 0;
    return -ENOTSUP;
}

static int section_barrier(void)
{
    return barrier(fdr__self.writer, 0);
}

/* Waits until every writer but self has been seen outside its tracing
 * section once since the barrier (a section it enters afterwards sees the
 * stop and leaves without touching its buffer). All writers are watched at
 * once: one that is seen out is done, and only those still inside are
 * waited for, so that preempted writers are waited for together, not one
 * after the other. 0, or -ETIMEDOUT at deadline (0: none). */
static int wait_out(const struct fdr__writer *self, uint64_t deadline)
{
    uint32_t round = __atomic_add_fetch(&wait_round, 1, __ATOMIC_RELAXED);
    unsigned spins = 0;
    for (;;) {
        unsigned inside = 0;
        for (struct fdr__writer *w = fdr__writers; w; w = w->next) {
            if (w == self || __atomic_load_n(&w->out_seen, __ATOMIC_RELAXED) == round)
                continue;
            /* Acquire pairs with the release store of in_section in
             * fdr__commit: the writer's last event is complete in memory. */
            if (__atomic_load_n(&w->self->in_section, __ATOMIC_ACQUIRE))
                inside++;
            else
                __atomic_store_n(&w->out_seen, round, __ATOMIC_RELAXED);
        }
        if (!inside)
            return 0;
        if (++spins > 64)
            sched_yield();
        if (deadline && (spins & 63) == 0 && fdr__clock_mono_ns() > deadline)
            return -ETIMEDOUT;
    }
}

/* Stores a thread's `enabled` and, unless it is 1, pulls its `end` down,
 * so that its next event takes the slow path (which reads `enabled`). The
 * fence pairs with the one in writer.c's set_end. */
static void set_enabled(struct fdr__thread *t, uint32_t on, int memorder)
{
    __atomic_store_n(&t->enabled, on, memorder);
    if (on != 1) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        __atomic_store_n(&t->end, (char *)NULL, __ATOMIC_RELAXED);
    }
}

static void stop_all(void)
{
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        if (__atomic_load_n(&w->self->enabled, __ATOMIC_RELAXED) == 1)
            set_enabled(w->self, FDR__PAUSED, __ATOMIC_RELAXED);
}

int fdr__section_quiesce(void)
{
    stop_all();
    int r = section_barrier();
    if (r < 0) {
        fdr__section_resume();
        return r;
    }
    /* the caller is between events, not inside one */
    return wait_out(fdr__self.writer, 0);
}

int fdr__section_quiesce_unlocked(const struct fdr__writer *self, uint64_t timeout_ns)
{
    stop_all();
    int r = barrier(self, timeout_ns);
    if (r == 0)
        r = wait_out(self, fdr__clock_mono_ns() + timeout_ns);
    return r;
}

static uint32_t should_record(const struct fdr__writer *w)
{
    return __atomic_load_n(&fdr__enabled_default, __ATOMIC_RELAXED) && w->user_enabled;
}

void fdr__section_resume(void)
{
    /* Observable: release pairs with the acquire load of `enabled` in
     * fdr__reserve; the writer then sees what the controller changed. */
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        set_enabled(w->self, should_record(w), __ATOMIC_RELEASE);
}

/* ---- the tracing-activity API -------------------------------------------- */

static struct fdr__thread *thread_of(fdr_thread_t *t)
{
    return (struct fdr__thread *)(void *)t;
}

void fdr__section_set_enabled(bool enabled)
{
    pthread_mutex_lock(&fdr__writers_lock);
    __atomic_store_n(&fdr__enabled_default, enabled ? 1u : 0u, __ATOMIC_RELAXED);
    if (enabled) {
        fdr__section_resume();
    } else {
        for (struct fdr__writer *w = fdr__writers; w; w = w->next)
            set_enabled(w->self, 0, __ATOMIC_RELAXED);
        section_barrier();
    }
    pthread_mutex_unlock(&fdr__writers_lock);
}

void fdr_thread_set_tracing_enabled(fdr_thread_t *thread, bool enabled)
{
    if (!thread)
        return;
    struct fdr__thread *t = thread_of(thread);
    pthread_mutex_lock(&fdr__writers_lock);
    struct fdr__writer *w = t->writer;
    if (w) {
        w->user_enabled = enabled;
        /* Release: as in fdr__section_resume. */
        set_enabled(t, should_record(w), __ATOMIC_RELEASE);
        if (!enabled)
            section_barrier();
    }
    pthread_mutex_unlock(&fdr__writers_lock);
}

bool fdr_thread_is_tracing_enabled(fdr_thread_t *thread)
{
    if (!thread)
        return false;
    struct fdr__thread *t = thread_of(thread);
    pthread_mutex_lock(&fdr__writers_lock);
    bool on = t->writer && ((struct fdr__writer *)t->writer)->user_enabled;
    pthread_mutex_unlock(&fdr__writers_lock);
    return on;
}

bool fdr_is_in_tracing_section(fdr_thread_t *thread)
{
    /* Acquire: pairs with the release in fdr__commit (see wait_out). */
    return thread && __atomic_load_n(&thread_of(thread)->in_section, __ATOMIC_ACQUIRE);
}

volatile const uint32_t *fdr_is_in_tracing_section_ptr(fdr_thread_t *thread)
{
    return thread ? &thread_of(thread)->in_section : NULL;
}

/* FDR_TEST_MOVE_HOLD (tests only): the first move holds the writers for
 * 2 s (or 10: "long") before it takes their lock, and says so on stderr,
 * at its start and end: a thread that ends meanwhile must still move
 * (writer.c, hold_gone), and the event of one that waits past its ~3 s
 * must be counted in every trace (writer.c, reserve). */
static void test_move_hold(void)
{
    static int said;
    if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        return;
    static const char msg[] = "fdr: FDR_TEST_MOVE_HOLD: holding\n";
    ssize_t r = write(2, msg, sizeof msg - 1);
    struct timespec s2 = {fdr__cfg.test_move_hold, 0};
    while (nanosleep(&s2, &s2) < 0 && errno == EINTR)
        ;
    static const char end[] = "fdr: FDR_TEST_MOVE_HOLD: held\n";
    r = write(2, end, sizeof end - 1);
    (void)r;
}

/* Moves every thread that has not moved to the current routes yet, on its
 * behalf (writer.h): here, above writer.c, because it stops the writers. */
int fdr__writers_move(int idle_only)
{
    pthread_mutex_lock(&fdr__writers_lock);
    uint32_t gen = __atomic_load_n(&fdr__route_gen, __ATOMIC_ACQUIRE);
    int any = 0;
    for (struct fdr__writer *w = fdr__writers; w && !any; w = w->next)
        any = fdr__writer_behind(w, gen, idle_only);
    pthread_mutex_unlock(&fdr__writers_lock);
    if (!any)
        return 0;
    /* Held, an event that comes meanwhile waits in the slow path for the
     * move (it is not lost, as it would be while only paused). */
    fdr__writers_hold(1);
    if (fdr__cfg.test_move_hold)
        test_move_hold();
    pthread_mutex_lock(&fdr__writers_lock);
    int moved = 0;
    if (fdr__section_quiesce() == 0) {
        uint64_t now = fdr__now();
        gen = __atomic_load_n(&fdr__route_gen, __ATOMIC_ACQUIRE);
        for (struct fdr__writer *w = fdr__writers; w; w = w->next)
            if (fdr__writer_behind(w, gen, idle_only)) {
                fdr__writer_move_now(w, now);
                moved++;
            }
        fdr__section_resume();
    }
    pthread_mutex_unlock(&fdr__writers_lock);
    fdr__writers_hold(0);
    return moved;
}
