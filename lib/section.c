/* section.c - stopping writers: the "tracing enabled" / "in tracing
 * section" protocol.
 *
 * A controller (flush, snapshot, crash dump, exit) needs every writer out
 * of its buffer. Each thread has two words in its TLS block:
 *
 *   enabled      written by the controller, read by the writer
 *   in_section   written by the writer around each event
 *
 * Writer (fdr__reserve):            Controller (fdr__section_quiesce):
 *   in_section = 1                    enabled = 0          (every writer)
 *   compiler barrier                  membarrier()         (full fence on
 *   if (!enabled) leave                                     every CPU of
 *   ... write the event ...                                 this process)
 *   in_section = 0 (release)          wait until in_section == 0 (acquire)
 *
 * This is Dekker's pattern: each side stores, then loads the other's flag.
 * Without a store-load fence on both sides, both loads can miss the other
 * store (x86 store buffers do exactly that): barectf's generated code has
 * this bug. Putting an mfence on the writer side would cost ~10-30 cycles
 * per event, so the fence is made asymmetric: membarrier(2) with
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED makes every running thread of the
 * process execute a full barrier before it returns. After it, either the
 * writer's in_section = 1 is visible to the controller (which then waits),
 * or the writer's load of `enabled` happens after the barrier and sees 0.
 *
 * Fallback when the kernel lacks the private expedited command (before
 * Linux 4.14): MEMBARRIER_CMD_GLOBAL (slower, same guarantee); without
 * membarrier at all (before 4.3), a real fence on the controller side is not
 * enough, so fdr__section_barrier() signals every writer thread with
 * SIGURG-free means unavailable: we then wait for each writer to be seen
 * outside its section twice, 1 ms apart, and document the residual risk.
 *
 * The writers lock is held by the caller throughout, so threads neither
 * appear nor vanish meanwhile. */
#define _GNU_SOURCE
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fdr-int.h"

static int barrier_cmd; /* membarrier command, 0 when none */
int fdr__section_no_barrier; /* test hook: skip the barrier (must fail) */

static long membarrier(int cmd, unsigned flags)
{
    return syscall(__NR_membarrier, cmd, flags, 0);
}

void fdr__section_init(void)
{
    long mask = membarrier(MEMBARRIER_CMD_QUERY, 0);
    if (mask > 0 && (mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0)
        barrier_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
    else if (mask > 0 && (mask & MEMBARRIER_CMD_GLOBAL))
        barrier_cmd = MEMBARRIER_CMD_GLOBAL;
    else
        barrier_cmd = 0;
}

void fdr__section_barrier(void)
{
    if (fdr__section_no_barrier)
        return;
    if (barrier_cmd && membarrier(barrier_cmd, 0) == 0)
        return;
    /* No membarrier: a full fence here, and fdr__section_quiesce waits
     * twice (see the file comment). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void wait_out(struct fdr__writer *w)
{
    unsigned spins = 0;
    while (__atomic_load_n(&w->self->in_section, __ATOMIC_ACQUIRE)) {
        if (++spins > 64)
            sched_yield();
    }
}

void fdr__section_quiesce(void)
{
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        __atomic_store_n(&w->self->enabled, 0, __ATOMIC_RELAXED);
    fdr__section_barrier();
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        wait_out(w);
    if (!barrier_cmd && !fdr__section_no_barrier) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        for (struct fdr__writer *w = fdr__writers; w; w = w->next)
            wait_out(w);
    }
}

void fdr__section_resume(void)
{
    uint32_t on = __atomic_load_n(&fdr__enabled_default, __ATOMIC_RELAXED);
    /* Observable: release pairs with the acquire load of `enabled` in
     * fdr__reserve; the writer then sees what the controller changed. */
    for (struct fdr__writer *w = fdr__writers; w; w = w->next)
        __atomic_store_n(&w->self->enabled, on, __ATOMIC_RELEASE);
}
