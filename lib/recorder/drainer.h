/* SPDX-License-Identifier: MIT */
/* recorder/drainer.h - the drain helper's work (drainer.c), shared by the
 * two ways it is started (consumer.c): the small executable fdr-drain
 * (drain_main.c), started with vfork + exec, and a clone of the program
 * where that executable is not found. */
#ifndef FDR_RECORDER_DRAINER_H
#define FDR_RECORDER_DRAINER_H

#include <stdint.h>
#include <sys/types.h>

#include "common/classes.h"
#include "common/validate.h"
#include "fdr/version.h"

/* What the consumer has written of each buffer's stream, by buffer index:
 * kept by the consumer, not in the ring's header page, which the program
 * may write over. Shared with the drain helper. */
struct fdr__out_state {
    struct fdr__stream_state st; /* what the next packet must follow */
    uint64_t consumed;           /* packets written out (or skipped) */
    uint64_t out_bytes;          /* bytes of whole packets in the stream file */
    uint64_t out_lost;           /* events that failed to reach it (drain.h) */
};
#define FDR__OUT_STATES 65536 /* buffer.c's MAX_BUFFERS */

/* The first page of the memory the program shares with its helper (a
 * memfd: fdr-drain maps it too), then FDR__OUT_STATES out states. */
struct fdr__drain_page {
    uint64_t disk_gen;  /* the registry generation the metadata on disk has */
    uint64_t clean_end; /* the program ended keeping its events (consumer.h) */
    /* What the metadata is made of, set before the helper starts. */
    int64_t pid;
    uint64_t clock_start[4]; /* clock.h: fdr__clock_start_get */
    uint8_t uuid[16];
    char procname[17];
    int32_t spawn_err; /* errno of the exec of fdr-drain that failed (consumer.c) */
};
#define FDR__DRAIN_STATES_AT 4096
#define FDR__DRAIN_SHARED_SIZE                                                           \
    (FDR__DRAIN_STATES_AT + (uint64_t)FDR__OUT_STATES * sizeof(struct fdr__out_state))

/* The helper's nice value, set before its exec. It has nothing to do
 * while the program lives, yet its exec and loader (about 0.7 ms of CPU)
 * ran beside the program's start on a 2-vCPU guest and made the start
 * 1.03-1.14 ms later than without it; at nice 19 0.32-0.44 ms (nice 5 or
 * 10 did not help: docs/performance.md, section 18). The price: once the
 * program is killed, the helper writes its rings with the share of a
 * nice-19 process where the CPUs are busy (never none: it is not
 * SCHED_IDLE). An unprivileged process cannot undo a nice, so it stays. */
#define FDR__DRAIN_NICE 19

/* The first argument of fdr-drain: a helper of another build (an
 * installed one older than the library) refuses to start. */
#define FDR__DRAIN_TAG_STR2(x) #x
#define FDR__DRAIN_TAG_STR(x) FDR__DRAIN_TAG_STR2(x)
#define FDR__DRAIN_TAG                                                                   \
    "fdr-drain/" FDR_VERSION_STRING                                                      \
    "/" FDR__DRAIN_TAG_STR(FDR__OUT_STATES) "/" FDR__DRAIN_TAG_STR(FDR__MAX_CLASSES)

/* What the program sends the helper with each ring's memfd. */
struct fdr__drain_msg {
    struct fdr__ring_geom geom; /* as the buffer was made, not its header's */
};

/* "stream_<index>" */
void fdr__stream_name(char *out, uint32_t index);

/* The helper: waits on the program's pidfd (without one, for its parent
 * to change), mapping each ring announced on sock, then finishes the
 * trace in trace_fd (or, with trace_fd < 0, writes crash_dir/crash-<pid>
 * unless the program ended cleanly). Uses system calls only: in a clone,
 * the locks of the program's memory may be held by threads that are not
 * there. */
__attribute__((noreturn)) void fdr__drainer_main(int sock, int pidfd, int trace_fd,
                                                 void *shared, pid_t program,
                                                 const char *crash_dir);

#endif
