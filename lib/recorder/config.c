/* SPDX-License-Identifier: MIT */
/* config.c - configuration from environment variables: the only file of
 * libfdr that calls getenv.
 *
 * Read once, when the library starts. Every variable has a safe default; a
 * bad value gives one warning line on stderr naming the variable and the
 * value, and the default is used. The program never stops because of it.
 *
 *   FDR_OUTPUT       directory of the CTF trace to write; unset: nothing is
 *                    written to disk except snapshots
 *   FDR_MODE         discard (default with FDR_OUTPUT) or overwrite
 *                    (default without): what a full buffer does
 *   FDR_BUFFER_SIZE  bytes of ring a busy thread grows to (default 1M in
 *                    memory, 8M when writing to disk; K/M/G suffixes)
 *   FDR_PACKET_SIZE  bytes per packet (default 64K; 4K to 16M, power of 2)
 *   FDR_MEMORY       budget of all the process's rings (default 32M;
 *                    threads start small and grow within it: buffer.c)
 *   FDR_STRING_MAX   longest string stored, in bytes (default 256)
 *   FDR_EVENTS       which events are recorded (pattern list, default all)
 *   FDR_TRACES       which events are printed live (default none)
 *   FDR_TRACE_FILE   where printed events go (default stderr)
 *   FDR_FLUSH_MS     longest time a full packet waits before the consumer
 *                    writes it (default 100)
 *   FDR_DRAIN        the drain helper process that finishes the trace of a
 *                    killed process (default on; off: none, consumer.c);
 *                    FDR_DRAIN_EXE: the fdr-drain executable it runs
 *   FDR_DAEMON       register with a running fdrd (default on, daemon.c);
 *                    FDR_RUNDIR, XDG_RUNTIME_DIR: where its socket is
 *   FDR_DEBUG        one line on what fdr decided at start (default off)
 *   FDR_CRASH, FDR_CRASH_SIGNALS, FDR_CRASH_EVENTS, FDR_CRASH_DIR
 *                    the crash dump (crash.c)
 *   FDR_SNAPSHOT_SIGNAL, FDR_SNAPSHOT_DIR  snapshot on a signal (snapshot.c)
 *   FDR_SECTION_BARRIER  auto, membarrier or signal (section.c)
 * See docs/environment.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdr/internal/fastpath.h"
#include "proto/proto.h"
#include "common/signal.h"
#include "recorder/cold.h"
#include "recorder/config.h"

struct fdr__config fdr__cfg FDR__COLD_PAGE;
uint32_t fdr__string_max = 256;
pid_t fdr__pid;

pid_t fdr__gettid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

void fdr__warn(const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof line, "fdr: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t r = write(2, line, (size_t)n);
    (void)r;
}

/* Parses "123", "64K", "4M", "1G" into bytes; -1 when malformed (also
 * leading spaces and a sign, which strtoll would take). */
static long long parse_size(const char *s)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    long long mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1024, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1024 * 1024, end++;
    else if (*end == 'g' || *end == 'G')
        mul = 1024LL * 1024 * 1024, end++;
    if (*end == 'i' || *end == 'B')
        end++;
    if (*end == 'B')
        end++;
    if (*end)
        return -1;
    if (v > (1LL << 40) / mul)
        return -1;
    return v * mul;
}

static uint32_t size_var(const char *name, uint32_t def, long long min, long long max,
                         int pow2)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    long long v = parse_size(s);
    if (v < min || v > max || (pow2 && (v & (v - 1)))) {
        fdr__warn("%s=\"%s\" is not valid (%s from %lld to %lld); using %u", name, s,
                  pow2 ? "a power of two" : "a size", min, max, def);
        return def;
    }
    return (uint32_t)v;
}

/* A list of signal names ("SEGV,BUS"), or "none": the number of signals
 * put in set, or -EINVAL. */
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

/* A switch: 1 (1/on/yes/true), 0 (0/off/no/false), or def when unset or
 * empty; anything else warns and gives def. */
static int on_off(const char *name, int def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    if (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "false"))
        return 0;
    if (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true"))
        return 1;
    fdr__warn("%s=\"%s\" is not valid (0/off or 1/on); it stays %s", name, v,
              def ? "on" : "off");
    return def;
}

/* A setting's own copy (the environment can change under us); "" if no
 * memory. Kept for the life of the process. */
static const char *copy_of(const char *s)
{
    char *c = strdup(s);
    return c ? c : "";
}

/* FDR_CRASH, FDR_CRASH_SIGNALS, FDR_CRASH_EVENTS, FDR_CRASH_DIR (crash.c). */
static void crash_load(void)
{
    /* 256: 32 covered about 1 us of a busy interpreter's hottest thread;
     * 256 show a few microseconds of it, a screenful or two per thread.
     * The CTF crash snapshot (FDR_CRASH_DIR) is the complete record. */
    fdr__cfg.crash_events = 256;
    fdr__cfg.crash_dir = "";
    if (!on_off("FDR_CRASH", 1))
        return;
    uint8_t *set = fdr__cfg.crash_signals;
    const char *sigs = getenv("FDR_CRASH_SIGNALS");
    const char *def = "SEGV,BUS,ILL,FPE,ABRT";
    int n;
    if (!sigs || !*sigs) {
        /* def, without parsing it: no string functions faulted in at start */
        set[SIGSEGV] = set[SIGBUS] = set[SIGILL] = set[SIGFPE] = set[SIGABRT] = 1;
        n = 5;
    } else {
        n = parse_signals(sigs, set);
    }
    if (n < 0) {
        fdr__warn("FDR_CRASH_SIGNALS=\"%s\" is not valid (a list such as %s, or none); "
                  "using %s",
                  sigs, def, def);
        memset(set, 0, NSIG);
        n = parse_signals(def, set);
    }
    if (n == 0)
        return;
    const char *ev = getenv("FDR_CRASH_EVENTS");
    if (ev && *ev) {
        char *end;
        long v = strtol(ev, &end, 10);
        if (*ev < '0' || *ev > '9' || *end || v < 1 || v > FDR__CRASH_EVENTS_MAX)
            fdr__warn("FDR_CRASH_EVENTS=\"%s\" is not valid (1 to %d); using %u", ev,
                      FDR__CRASH_EVENTS_MAX, fdr__cfg.crash_events);
        else
            fdr__cfg.crash_events = (unsigned)v;
    }
    const char *dir = getenv("FDR_CRASH_DIR");
    if (dir && *dir) {
        if (strlen(dir) >= 4000)
            fdr__warn("FDR_CRASH_DIR is too long; no crash snapshot");
        else
            fdr__cfg.crash_dir = copy_of(dir);
    }
    fdr__cfg.crash_on = 1;
}

/* FDR_SNAPSHOT_SIGNAL, FDR_SNAPSHOT_DIR (snapshot.c). */
static void snapshot_load(void)
{
    const char *s = getenv("FDR_SNAPSHOT_SIGNAL");
    if (!s || !*s)
        return;
    int sig = fdr__signal_parse(s, strlen(s));
    if (sig < 0 || sig == SIGKILL || sig == SIGSTOP) {
        fdr__warn("FDR_SNAPSHOT_SIGNAL=\"%s\" is not a signal (e.g. USR2 or 12); "
                  "no snapshot on signal",
                  s);
        return;
    }
    const char *dir = getenv("FDR_SNAPSHOT_DIR");
    fdr__cfg.snapshot_signal = sig;
    fdr__cfg.snapshot_signal_text = s;
    fdr__cfg.snapshot_dir = dir && *dir ? dir : ".";
}

void fdr__config_load(void)
{
    const char *out = getenv("FDR_OUTPUT");
    if (out && *out) {
        if (strlen(out) >= sizeof fdr__cfg.output - 64)
            fdr__warn("FDR_OUTPUT is too long; no trace is written");
        else
            strcpy(fdr__cfg.output, out);
    }
    const char *run = getenv("FDR_OUTPUT_RUN");
    fdr__cfg.output_run = run && *run;
    fdr__cfg.output_keep = -1;
    const char *keep = getenv("FDR_OUTPUT_KEEP");
    if (keep && *keep) {
        char *end;
        long v = strtol(keep, &end, 10);
        if (*keep < '0' || *keep > '9' || *end || v > 1000000)
            fdr__warn("FDR_OUTPUT_KEEP=\"%s\" is not valid (0 to 1000000 traces); "
                      "every trace is kept",
                      keep);
        else
            fdr__cfg.output_keep = (int)v;
    }
    fdr__cfg.mode = fdr__cfg.output[0] ? FDR__MODE_DISCARD : FDR__MODE_OVERWRITE;
    const char *mode = getenv("FDR_MODE");
    if (mode && *mode) {
        if (strcmp(mode, "discard") == 0)
            fdr__cfg.mode = FDR__MODE_DISCARD;
        else if (strcmp(mode, "overwrite") == 0)
            fdr__cfg.mode = FDR__MODE_OVERWRITE;
        else
            fdr__warn("FDR_MODE=\"%s\" is not valid (discard or overwrite); using %s",
                      mode, fdr__cfg.mode == FDR__MODE_DISCARD ? "discard" : "overwrite");
    }
    fdr__cfg.packet_size = size_var("FDR_PACKET_SIZE", 64 * 1024, 4096, 16 << 20, 1);
    /* Writing to disk needs room to ride out stalls of write(2) (dirty page
     * throttling): 8 MiB holds ~0.05 s of events at 10 million per second.
     * Pages are touched only as the ring is filled. */
    uint32_t def_buf =
        fdr__cfg.mode == FDR__MODE_DISCARD && fdr__cfg.output[0] ? 8u << 20 : 1u << 20;
    fdr__cfg.buffer_size =
        size_var("FDR_BUFFER_SIZE", def_buf, 2LL * fdr__cfg.packet_size, 1LL << 31, 0);
    /* Rings start small and grow within the budget (buffer.c): 32 MiB is
     * 3 busy threads of 8 MiB writing to disk (the next ones get halves),
     * 31 of 1 MiB in memory; past it threads keep their small ring. */
    fdr__cfg.memory = 32u << 20;
    const char *mem = getenv("FDR_MEMORY");
    if (mem && *mem) {
        long long v = parse_size(mem);
        if (v < 0 || v > (1LL << 40))
            fdr__warn("FDR_MEMORY=\"%s\" is not valid (a size up to 1T); using 32M", mem);
        else
            fdr__cfg.memory = (uint64_t)v;
    }
    fdr__cfg.string_max = size_var("FDR_STRING_MAX", 256, 8, 4096, 0);
    fdr__string_max = fdr__cfg.string_max;
    fdr__cfg.flush_ms = size_var("FDR_FLUSH_MS", 100, 1, 60000, 0);
    fdr__cfg.drain = on_off("FDR_DRAIN", 1);
    /* A program to exec: not from the environment of a set-user-ID one. */
    fdr__cfg.drain_exe = secure_getenv("FDR_DRAIN_EXE");
    fdr__cfg.daemon = on_off("FDR_DAEMON", 1);
    fdr__cfg.debug = on_off("FDR_DEBUG", 0);
    if (fdr__proto_rundir(fdr__cfg.rundir, sizeof fdr__cfg.rundir, getenv("FDR_RUNDIR"),
                          getenv("XDG_RUNTIME_DIR"), getenv("HOME"),
                          (unsigned long)geteuid(), NULL, 0) < 0) {
        const char *rd = getenv("FDR_RUNDIR");
        fdr__warn(
            "FDR_RUNDIR=\"%s\" is too long for a socket path; fdrd is not looked for",
            rd ? rd : "");
        fdr__cfg.daemon = 0;
    }
    fdr__cfg.events = getenv("FDR_EVENTS");
    fdr__cfg.traces = getenv("FDR_TRACES");
    const char *tf = getenv("FDR_TRACE_FILE");
    fdr__cfg.trace_file = "";
    if (tf && *tf && strlen(tf) < 4096)
        fdr__cfg.trace_file = copy_of(tf);
    const char *force = getenv("FDR_SECTION_BARRIER");
    if (force && strcmp(force, "signal") == 0)
        fdr__cfg.barrier = FDR__BARRIER_SIGNAL;
    else if (force && *force && strcmp(force, "auto") != 0 &&
             strcmp(force, "membarrier") != 0)
        fdr__warn("FDR_SECTION_BARRIER=\"%s\" is not valid (auto, membarrier or signal); "
                  "using auto",
                  force);
    /* Tests only: the fdr-daemon thread waits this many ms before its
     * first word with fdrd (a registration window held open). */
    const char *dd = getenv("FDR_TEST_DAEMON_DELAY");
    if (dd && *dd) {
        char *end;
        unsigned long v = strtoul(dd, &end, 10);
        if (*end || v > 60000 || *dd == '-')
            fdr__warn(
                "FDR_TEST_DAEMON_DELAY=\"%s\" is not valid (ms, 0 to 60000); using 0",
                dd);
        else
            fdr__cfg.test_daemon_delay_ms = (unsigned)v;
    }
    /* Tests only: the send buffer of the connection to fdrd, in bytes. */
    const char *sb = getenv("FDR_TEST_SNDBUF");
    if (sb && *sb) {
        char *end;
        unsigned long v = strtoul(sb, &end, 10);
        if (*end || v > (1ul << 24) || *sb == '-')
            fdr__warn("FDR_TEST_SNDBUF=\"%s\" is not valid (bytes, 0 to 16777216); "
                      "using the system's",
                      sb);
        else
            fdr__cfg.test_sndbuf = (unsigned)v;
    }
    /* Tests only: every ring fdrd sends is closed unused, as if none had
     * come yet (what a thread loses to its route is then held by no ring:
     * buffer.c, route_lost, which fdrd sees in the process's first own
     * ring); 2: nor is that shown to fdrd (as in a process that registered
     * again after fdrd died), so the process sends it at exit (LOST); 3:
     * only the rings of the first trace that sends any are taken, so that
     * another trace's slot waits beside a routed primary (daemon.c). */
    const char *nr = getenv("FDR_TEST_NO_RINGS");
    fdr__cfg.test_no_rings = !nr || !*nr            ? 0
                             : strcmp(nr, "1") == 0 ? 1
                             : strcmp(nr, "2") == 0 ? 2
                             : strcmp(nr, "3") == 0 ? 3
                                                    : -1;
    if (fdr__cfg.test_no_rings < 0) {
        fdr__warn("FDR_TEST_NO_RINGS=\"%s\" is not valid (1, 2 or 3); using off", nr);
        fdr__cfg.test_no_rings = 0;
    }
    /* Tests only: SIGKILL in the middle of a thread's hand-over of its
     * past (after that many events of the copy, or before its mark). */
    const char *kh = getenv("FDR_TEST_KILL_HANDING");
    if (kh && *kh) {
        char *end;
        unsigned long long v = strtoull(kh, &end, 10);
        if (*end || *kh == '-')
            fdr__warn("FDR_TEST_KILL_HANDING=\"%s\" is not valid (a count); using 0", kh);
        else
            fdr__cfg.test_kill_handing = v;
    }
    /* Tests only: a thread whose own ring is full waits, between its look
     * at the routes and the opening of its next packet, until the
     * registration window ends (writer.c, make_room). */
    const char *rw = getenv("FDR_TEST_REUSE_WAIT");
    fdr__cfg.test_reuse_wait = rw && strcmp(rw, "1") == 0;
    if (rw && *rw && !fdr__cfg.test_reuse_wait)
        fdr__warn("FDR_TEST_REUSE_WAIT=\"%s\" is not valid (1); using off", rw);
    /* Tests only: fdr's first move of the threads to new routes holds
     * them for 2 s before it stops them (section.c, fdr__writers_move);
     * "long": 10 s, past the ~3 s a writer waits for a hold. */
    const char *mh = getenv("FDR_TEST_MOVE_HOLD");
    fdr__cfg.test_move_hold = !mh                       ? 0
                              : strcmp(mh, "1") == 0    ? 2
                              : strcmp(mh, "long") == 0 ? 10
                                                        : 0;
    if (mh && *mh && !fdr__cfg.test_move_hold)
        fdr__warn("FDR_TEST_MOVE_HOLD=\"%s\" is not valid (1 or long); using off", mh);
    crash_load();
    snapshot_load();
}
