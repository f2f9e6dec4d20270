/* SPDX-License-Identifier: MIT */
/* recorder/flight.h - the flight recorder: snapshots (snapshot.c) and
 * crash dumps (crash.c). */
#ifndef FDR_RECORDER_FLIGHT_H
#define FDR_RECORDER_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

/* Layers: crash.c is above snapshot.c (a crash dump writes the live rings
 * as a snapshot does); snapshot.c calls nothing of crash.c. */

/* snapshot.c */
void fdr__flight_init(void); /* from init_once: the snapshot signal */
/* fdr_snapshot, fdr_snapshot_on_signal once the library has started
 * (api.c). */
int fdr__snapshot(const char *dir);
int fdr__snapshot_on_signal(int sig, const char *dir);
/* 1 when sig belongs to another handler of fdr (the crash handler's,
 * installed by init.c: fdr__crash_owns), so no snapshot may take it. */
extern int (*fdr__snapshot_signal_owned)(int sig);
/* 1 for the signals a faulting instruction raises: SEGV BUS ILL FPE TRAP SYS. */
int fdr__signal_is_fault(int sig);

/* crash.c */
void fdr__crash_thread_init(void); /* alternate stack, writer creation */
void fdr__crash_thread_exit(void);
void fdr__crash_init(void); /* from init_once, before fdr__flight_init */
/* 1 when the crash handler is installed for sig. */
int fdr__crash_owns(int sig);
/* What a reader skipped because it was not valid (common/validate.h). */
struct fdr__skips {
    uint64_t rings;   /* ring headers that do not match their buffer */
    uint64_t packets; /* packets whose header is not valid */
};
/* Writes the rings as a CTF trace into dir, with the n bytes of `spans`
 * (fdr__spans_open_text) as its .fdr-spans; the caller has quiesced the
 * writers. Adds what it skipped to *sk. Async-signal-safe (open/write/close
 * only). */
int fdr__snapshot_write_live(int dir_fd, struct fdr__skips *sk, const char *spans,
                             size_t n);
/* An async span event found in the rings (fdr__spans_open_text's work). */
struct fdr__async_seen {
    uint64_t ts, id;
    uint32_t tid, order;
    uint16_t cls;
    uint8_t end;
};
/* Room for the async span events of all rings: more and the async spans
 * open are not listed (a line says so). */
#define FDR__ASYNC_WORK 16384
/* The spans open at this moment, each line starting with prefix: on each
 * thread inside any, outermost first, from the thread's span stack:
 *     <prefix>spans open in thread 4242: net:handle > db:commit
 * then each async span (fdr_span_async_begin) whose begin the rings hold
 * and whose end they do not, in the order they began:
 *     <prefix>async span open: rpc:call id=7 (begun in thread 4250)
 * (paired from the rings with work[FDR__ASYNC_WORK], so that async spans
 * cost nothing more on the fast path: see snapshot.c). Into buf (whole
 * lines, at most cap bytes); returns the bytes written. Async-signal-safe;
 * the writers are quiesced and the writers list is held (its lock, or the
 * crash handler's walk without it). */
size_t fdr__spans_open_text(char *buf, size_t cap, const char *prefix,
                            struct fdr__async_seen *work);
struct fdr__buf;
struct fdr__writer;
/* Where the content of b's open packet ends (its writer w's position), or
 * NULL when w has no open packet in the slot of sequence `produced` or its
 * position is outside it. Writers quiesced. Async-signal-safe. */
const char *fdr__open_end(const struct fdr__buf *b, const struct fdr__writer *w,
                          uint64_t produced);
/* out = dir/name<number> (no number when < 0); -ENAMETOOLONG. AS-safe. */

#endif
