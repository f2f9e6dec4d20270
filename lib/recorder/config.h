/* SPDX-License-Identifier: MIT */
/* recorder/config.h - the library's configuration, read from the
 * environment once at start (config.c): the only place that calls getenv. */
#ifndef FDR_RECORDER_CONFIG_H
#define FDR_RECORDER_CONFIG_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

enum fdr__mode { FDR__MODE_DISCARD = 0, FDR__MODE_OVERWRITE = 1 };
enum fdr__barrier_choice { FDR__BARRIER_AUTO = 0, FDR__BARRIER_SIGNAL = 1 };

struct fdr__config {
    int output_run;        /* FDR_OUTPUT_RUN set: a process of a run started by another */
    int output_keep;       /* FDR_OUTPUT_KEEP: earlier traces kept; -1: all */
    int mode;              /* FDR_MODE */
    uint32_t buffer_size;  /* FDR_BUFFER_SIZE, bytes per thread */
    uint32_t packet_size;  /* FDR_PACKET_SIZE, bytes */
    uint64_t memory;       /* FDR_MEMORY, budget of all own rings (common/ring.h) */
    uint32_t string_max;   /* FDR_STRING_MAX */
    const char *events;    /* FDR_EVENTS, which events are recorded */
    const char *traces;    /* FDR_TRACES, which events are printed */
    uint32_t flush_ms;     /* FDR_FLUSH_MS, consumer period */
    int drain;             /* FDR_DRAIN: the drain helper process (consumer.c) */
    const char *drain_exe; /* FDR_DRAIN_EXE: the fdr-drain to start, or NULL */
    int daemon;            /* FDR_DAEMON: register with fdrd (daemon.c) */
    int debug;             /* FDR_DEBUG: say what fdr decided at start */
    int barrier;           /* FDR_SECTION_BARRIER: enum fdr__barrier_choice */
    unsigned test_daemon_delay_ms; /* FDR_TEST_DAEMON_DELAY (tests only, daemon.c) */
    unsigned test_sndbuf;          /* FDR_TEST_SNDBUF (tests only, daemon.c) */
    int test_no_rings;             /* FDR_TEST_NO_RINGS (tests only, daemon.c) */
    uint64_t test_kill_handing;    /* FDR_TEST_KILL_HANDING (tests only, writer.c) */
    int test_reuse_wait;           /* FDR_TEST_REUSE_WAIT (tests only, writer.c) */
    int test_move_hold;            /* FDR_TEST_MOVE_HOLD, s (tests only, section.c) */
    /* crash dumps (crash.c) */
    int crash_on;                /* FDR_CRASH and FDR_CRASH_SIGNALS: 0 = off */
    uint8_t crash_signals[NSIG]; /* FDR_CRASH_SIGNALS, 1 = handled */
    unsigned crash_events;       /* FDR_CRASH_EVENTS */
    /* snapshot on signal (snapshot.c) */
    int snapshot_signal;              /* FDR_SNAPSHOT_SIGNAL, 0 for none */
    const char *snapshot_signal_text; /* as the user wrote it, for messages */
    const char *snapshot_dir;         /* FDR_SNAPSHOT_DIR, "." by default */
    const char *trace_file;           /* FDR_TRACE_FILE (a copy), "" for stderr */
    const char *crash_dir;            /* FDR_CRASH_DIR (a copy), "" for none */
    /* Last: start-up reads only the head of the struct, rundir (a socket
     * path: under 108 bytes) and output's first byte (cold.h). */
    char rundir[128];  /* fdrd's run directory: FDR_RUNDIR, XDG_RUNTIME_DIR */
    char output[4096]; /* FDR_OUTPUT, "" when not writing to disk */
};

#define FDR__CRASH_EVENTS_MAX 1024

extern struct fdr__config fdr__cfg;
void fdr__config_load(void);
/* The process: its pid (set at start and in a forked child, init.c) and
 * the calling thread's id. */
extern pid_t fdr__pid;
pid_t fdr__gettid(void);
/* One line "fdr: <message>\n" on stderr, with a single write(2). */
void fdr__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
