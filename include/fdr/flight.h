/* SPDX-License-Identifier: MIT */
/* fdr/flight.h - the flight recorder: tracing activity, snapshots, crashes.
 *
 * Without FDR_OUTPUT, fdr records into per-thread rings in memory that keep
 * the newest packets (overwrite mode, FDR_MODE=overwrite; FDR_MODE=discard
 * keeps the oldest instead). Each thread that records uses FDR_BUFFER_SIZE
 * bytes of ring (default 1 MiB: 16 packets of FDR_PACKET_SIZE = 64 KiB),
 * plus a 4 KiB header, plus, while crash dumps are on, a 128 KiB alternate
 * signal stack that is mapped but only touched by a crash. A snapshot
 * writes the rings as a CTF trace; a crash prints their last events.
 *
 * Tracing activity (after barectf's API):
 *
 *     fdr_set_tracing_enabled(false);          // every thread
 *     while (fdr_is_in_tracing_section(t))     // for each thread t of
 *         ;                                    // interest
 *     ... t no longer touches its ring: read it ...
 *     fdr_set_tracing_enabled(true);
 *
 * Once fdr_set_tracing_enabled(false) (or fdr_thread_set_tracing_enabled(t,
 * false)) has returned and the thread is seen outside its tracing section,
 * the thread does not touch its ring until tracing is enabled again. The
 * call pays for a process-wide memory barrier (membarrier(2)), so the
 * recording fast path needs no fence.
 *
 * Environment (read at start, see docs/environment.md):
 *   FDR_SNAPSHOT_SIGNAL  signal that takes a snapshot (name, e.g. USR2, or
 *                        number); into FDR_SNAPSHOT_DIR (default "."), as
 *                        <dir>/snapshot-<pid>-<n>
 *   FDR_CRASH            0 turns the crash dump off (default on)
 *   FDR_CRASH_SIGNALS    signals that dump: "SEGV,BUS,ILL,FPE,ABRT" (default),
 *                        or "none"
 *   FDR_CRASH_EVENTS     events printed per thread on a crash (default 32,
 *                        at most 1024)
 *   FDR_CRASH_DIR        also write a CTF snapshot on a crash, into
 *                        <dir>/crash-<pid>
 *   FDR_SECTION_BARRIER  auto (default), membarrier or signal: how a
 *                        controller orders itself against writers (signal:
 *                        the fallback used when the kernel lacks
 *                        membarrier; writers must not block SIGRTMAX-2) */
#ifndef FDR_FLIGHT_H
#define FDR_FLIGHT_H

#include <stdbool.h>
#include <stdint.h>

#include "fdr/internal/visibility.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A recording thread. Valid from fdr_thread_self() until that thread
 * exits. */
typedef struct fdr_thread fdr_thread_t;

/* The calling thread; prepares its ring if it has none yet. NULL when the
 * library could not allocate one. */
FDR_EXTERN fdr_thread_t *fdr_thread_self(void);

/* Tracing activity of the whole process (every thread, present and future).
 * Disabling waits for nothing but orders itself with every writer: see the
 * protocol above. Events while disabled are not recorded (nor counted). */
FDR_EXTERN void fdr_set_tracing_enabled(bool enabled);
FDR_EXTERN bool fdr_is_tracing_enabled(void);

/* The same for one thread; a thread records when both its own and the
 * process's activity are on. */
FDR_EXTERN void fdr_thread_set_tracing_enabled(fdr_thread_t *thread, bool enabled);
FDR_EXTERN bool fdr_thread_is_tracing_enabled(fdr_thread_t *thread);

/* True while `thread` is writing an event (acquire load). */
FDR_EXTERN bool fdr_is_in_tracing_section(fdr_thread_t *thread);
/* The word behind it, non-zero while in the section, for a controller that
 * polls it (read it with an acquire load, or through volatile and a
 * fence). */
FDR_EXTERN volatile const uint32_t *fdr_is_in_tracing_section_ptr(fdr_thread_t *thread);

/* Writes the newest events of every thread, including each thread's
 * partially filled packet, as a CTF trace into `dir` (created if needed;
 * its metadata and stream files are replaced), then lets recording go on.
 * Writers stop only while their rings are copied (about a millisecond per
 * MiB); an event recorded meanwhile is counted as discarded. Does not
 * change what a later snapshot or the trace on disk gets: a second
 * snapshot holds the same events plus newer ones, as long as the rings did
 * not wrap in between. Packets overwritten before the snapshot show as a
 * gap in packet_seq_num (babeltrace2 reports discarded packets). Returns 0,
 * -EINVAL (NULL, empty or too long dir), -ENOMEM, -ETIMEDOUT (signal
 * barrier fallback: a writer did not answer), or the negative errno of a
 * failed mkdir/open/write (-ENOTDIR, -EACCES, -ENOSPC...). Not
 * async-signal-safe. */
FDR_EXTERN int fdr_snapshot(const char *dir);

/* From now on, signal `sig` takes a snapshot into <dir>/snapshot-<pid>-<n>
 * (n = 1, 2, ...). The handler only wakes a helper thread, which writes
 * the snapshot. sig 0 turns it off. Returns 0, or -EINVAL (a signal that
 * cannot be caught, a fault signal such as SIGSEGV, NULL or empty dir),
 * -EBUSY (a signal of the crash handler), -ENOMEM or -EAGAIN (no thread).
 * A signal that every thread blocks takes no snapshot. */
FDR_EXTERN int fdr_snapshot_on_signal(int sig, const char *dir);

#ifdef __cplusplus
}
#endif
#endif
