/* SPDX-License-Identifier: MIT */
/* proto/proto.h - the messages of libfdr, fdrd and the fdr command.
 *
 * Transport: a UNIX socket of type SOCK_SEQPACKET, so the kernel keeps
 * message boundaries: one recvmsg() is one whole message (or a truncated
 * one, which is rejected), and fds travel with the message they belong to.
 * Every message is untrusted input for its receiver: it goes through
 * fdr__proto_check() before any field is read.
 *
 * Every message starts with this 16-byte header, in the host's byte order
 * (both ends are on one machine):
 *
 *    0        4        6        8                12               16
 *   +--------+--------+--------+----------------+----------------+
 *   | size   |version | type   | seq            | status         |
 *   | u32    | u16    | u16    | u32            | u32            |
 *   +--------+--------+--------+----------------+----------------+
 *
 *   size     bytes of the whole message, header included; it must equal
 *            what recvmsg() returned, and be at most FDR_PROTO_MSG_MAX
 *   version  FDR_PROTO_VERSION; any other is refused (no negotiation yet)
 *   type     enum fdr__msg_type; each type has a fixed payload size, except
 *            ENABLE, DISABLE and TRACE_INFO, whose fixed part ends with a
 *            bounded run of NUL-terminated pattern items (`len` bytes)
 *   seq      chosen by the requester, copied into every reply to it
 *   status   0 in requests; in a REPLY, 0 or a positive errno value
 *
 * Strings live in fixed char arrays and must be NUL-terminated inside
 * their array; the bytes after the NUL are ignored. Numbers are u32 or u64
 * at naturally aligned offsets (every struct below is padded by hand, so
 * its layout is the same with every compiler of the platform).
 *
 * Each request of the `fdr` command is answered by one REPLY, except
 * LIST (zero or more *_INFO messages, then END) and STATUS (STATUS_INFO).
 * REGISTER_PROCESS, REGISTER_PROVIDER, UNREGISTER_PROVIDER, CLASSES,
 * NEED_BUFFERS and STATE come from libfdr; ROUTE and BUFFER are fdrd's to a
 * process, unasked (docs/daemon.md, "Buffers from fdrd"); CONTROL goes from
 * the fdr command to fdrd, which passes it on to the process it names
 * (docs/daemon.md, "Steering a process"). */
#ifndef FDR_PROTO_PROTO_H
#define FDR_PROTO_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "fdr/provider.h"

/* 2: CREATE and TRACE_INFO carry relayd streaming; 3: OWN_RING; 4: 6-byte
 * event headers in the rings (an fdrd of 3 would misread every event) and
 * the own rings' ledger (common/ring.h) */
#define FDR_PROTO_VERSION 4
#define FDR_PROTO_MSG_MAX 65536u /* largest message, header included */
#define FDR_PROTO_FDS_MAX 4      /* most fds one message may carry */
#define FDR_PROTO_NAME_CAP 72    /* trace and process names: 64 + NUL, padded */
#define FDR_PROTO_TRACE_NAME_MAX 64
#define FDR_PROTO_PATH_CAP 4096    /* output directories, NUL included */
#define FDR_PROTO_ITEM_MAX 255     /* one pattern item, without its NUL */
#define FDR_PROTO_ITEMS_CAP 16384u /* all items of a message or trace */
#define FDR_PROTO_ITEMS_MAX 256    /* items of a message or trace */
#define FDR_PROTO_TEXT_CAP 256     /* a reply's message */
#define FDR_PROTO_TRACES_MAX 32    /* traces fdrd holds at once */
#define FDR_PROTO_HOST_CAP 256     /* a relayd host name or address, NUL included */

enum fdr__msg_type {
    /* libfdr -> fdrd */
    FDR__MSG_REGISTER_PROCESS = 1,
    FDR__MSG_REGISTER_PROVIDER = 2,
    FDR__MSG_UNREGISTER_PROVIDER = 3,
    /* fdrd -> libfdr, with one fd: a ring, or the trace's doorbell */
    FDR__MSG_BUFFER = 4,
    /* libfdr -> fdrd, with one fd: the class table (sealed memfd) */
    FDR__MSG_CLASSES = 5,
    /* fdrd -> libfdr: where the process records now, and what */
    FDR__MSG_ROUTE = 6,
    /* libfdr -> fdrd: more rings for a trace */
    FDR__MSG_NEED_BUFFERS = 7,
    /* a process's state, for the scope (STATE below) */
    FDR__MSG_STATE = 8,
    /* libfdr -> fdrd: a ring of a killed fdrd, cut its stream file */
    FDR__MSG_DEAD_RING = 11,
    /* libfdr -> fdrd, with one fd: one of the process's own rings */
    FDR__MSG_OWN_RING = 12,
    /* libfdr -> fdrd: events lost to a route that no ring of it counts */
    FDR__MSG_LOST = 13,
    /* fdr -> fdrd */
    FDR__MSG_CREATE = 16,
    FDR__MSG_ENABLE = 17,
    FDR__MSG_DISABLE = 18,
    FDR__MSG_FILTER = 19,
    FDR__MSG_START = 20,
    FDR__MSG_STOP = 21,
    FDR__MSG_DESTROY = 22,
    FDR__MSG_LIST = 23,
    FDR__MSG_STATUS = 24,
    FDR__MSG_SNAPSHOT = 25,
    FDR__MSG_CONTROL = 26, /* also fdrd's to a process */
    /* fdrd -> any */
    FDR__MSG_REPLY = 64,
    FDR__MSG_TRACE_INFO = 65,
    FDR__MSG_PROCESS_INFO = 66,
    FDR__MSG_PROVIDER_INFO = 67,
    FDR__MSG_STATUS_INFO = 68,
    FDR__MSG_END = 69,
    FDR__MSG_STATE_INFO = 70,
};

/* Trace modes (CREATE, TRACE_INFO). */
enum { FDR__TRACE_DISCARD = 0, FDR__TRACE_OVERWRITE = 1, FDR__TRACE_SNAPSHOT = 2 };
/* What LIST lists. */
enum {
    FDR__LIST_TRACES = 0,
    FDR__LIST_PROCESSES = 1,
    FDR__LIST_PROVIDERS = 2,
    FDR__LIST_EVENTS = 3 /* PROVIDER_INFO, one per provider */
};

struct fdr__msg_hdr {
    uint32_t size;
    uint16_t version;
    uint16_t type;
    uint32_t seq;
    uint32_t status;
};

/* START, STOP, DESTROY: a trace name.
 *   16 name[72] | 88 */
struct fdr__msg_trace {
    struct fdr__msg_hdr h;
    char name[FDR_PROTO_NAME_CAP];
};

/* CREATE. outdir "" lets fdrd choose ($HOME/fdr-traces/NAME-YYYYmmdd-HHMMSS),
 * or, with a relayd, a spool directory it removes at destroy; memory 0 the
 * default budget of one process's rings (FDRD_MEMORY_DEFAULT).
 * relayd "" : not streamed; else the trace is streamed to lttng-relayd at
 * host relayd, ports relayd_ctl and relayd_data (0: 5342, 5343), live
 * with a period of live_us µs when live_us is not 0 (daemon/relay.c).
 * flags FDR__CREATE_FILE_BUFFERS: the trace's rings are files in `buffers`
 * ("" lets fdrd choose <run dir>/buffers/NAME-<fdrd pid>.<trace id>), so
 * that `fdr recover` finds them after fdrd died; buffers is "" without it.
 * flags EPHEMERAL: fdrd destroys the trace when the connection that created
 * it closes (the scope's trace: a killed scope leaves nothing recording).
 * live_us without a relayd: each ring's open packet reaches the stream
 * files within that period (a reader tailing them sees the newest events).
 * pid 0: every process is routed into the trace; else only that one.
 *   16 mode | 20 mask | 24 buffer_size u64 | 32 packet_size u64 |
 *   40 name[72] | 112 outdir[4096] | 4208 memory u64 | 4216 relayd[256] |
 *   4472 relayd_ctl | 4476 relayd_data | 4480 live_us | 4484 pid |
 *   4488 flags | 4492 pad2 | 4496 buffers[4096] | 8592 */
struct fdr__msg_create {
    struct fdr__msg_hdr h;
    uint32_t mode;
    uint32_t mask;
    uint64_t buffer_size;
    uint64_t packet_size;
    char name[FDR_PROTO_NAME_CAP];
    char outdir[FDR_PROTO_PATH_CAP];
    uint64_t memory;
    char relayd[FDR_PROTO_HOST_CAP];
    uint32_t relayd_ctl, relayd_data;
    uint32_t live_us;
    uint32_t pid;
    uint32_t flags; /* FDR__CREATE_* */
    uint32_t pad2;
    char buffers[FDR_PROTO_PATH_CAP];
};
#define FDR__CREATE_FILE_BUFFERS 1u
#define FDR__CREATE_EPHEMERAL 2u
/* A buffer directory (daemon/bufdir.c) holds this file, which starts with
 * this line; `fdr recover` reads only a directory that has it. */
#define FDR__BUFDIR_MARK "fdr-buffers"
#define FDR__BUFDIR_MAGIC "fdr buffers 1\n"

/* SNAPSHOT: a copy of what a trace's rings hold now, written to outdir
 * ("" lets fdrd choose <trace outdir>/snapshot-N-YYYYmmdd-HHMMSS); the
 * reply's text names the directory.
 *   16 name[72] | 88 outdir[4096] | 4184 */
struct fdr__msg_snapshot {
    struct fdr__msg_hdr h;
    char name[FDR_PROTO_NAME_CAP];
    char outdir[FDR_PROTO_PATH_CAP];
};

/* ENABLE, DISABLE: items appended to a trace's event selection.
 *   16 name[72] | 88 nitems | 92 len | 96 items[len]: nitems strings of
 *   1..255 bytes, each with its NUL, nothing else (len <= 16 KiB) */
struct fdr__msg_items {
    struct fdr__msg_hdr h;
    char name[FDR_PROTO_NAME_CAP];
    uint32_t nitems;
    uint32_t len;
    char items[];
};

/* FILTER.  16 name[72] | 88 mask | 92 pad | 96 */
struct fdr__msg_filter {
    struct fdr__msg_hdr h;
    char name[FDR_PROTO_NAME_CAP];
    uint32_t mask;
    uint32_t pad;
};

/* LIST.  16 what | 20 pad | 24;  STATUS and END: the header alone. */
struct fdr__msg_list {
    struct fdr__msg_hdr h;
    uint32_t what;
    uint32_t pad;
};

/* REGISTER_PROCESS: what a process says of itself. fdrd keeps it but
 * trusts only the pid the kernel gives (SO_PEERCRED).
 *   16 pid | 20 ppid | 24 sizeof_int | 28 sizeof_long | 32 sizeof_pointer |
 *   36 sizeof_size_t | 40 flags | 44 pad | 48 name[72] | 120 */
struct fdr__msg_register_process {
    struct fdr__msg_hdr h;
    uint32_t pid, ppid;
    uint32_t sizeof_int, sizeof_long, sizeof_pointer, sizeof_size_t;
    uint32_t flags;
    uint32_t pad;
    char name[FDR_PROTO_NAME_CAP];
};

/* REGISTER_PROVIDER: the identity of lib/common/provider.h; the REPLY's
 * `value` is the handle.
 *   16 size | 20 nevents | 24 checksum | 28 alignment | 32 sizeof_int |
 *   36 sizeof_long | 40 sizeof_pointer | 44 sizeof_size_t | 48 name[64] | 112 */
struct fdr__msg_register_provider {
    struct fdr__msg_hdr h;
    uint32_t size, nevents, checksum, alignment;
    uint32_t sizeof_int, sizeof_long, sizeof_pointer, sizeof_size_t;
    char name[FDR_PROVIDER_NAME_MAX + 1];
};

/* UNREGISTER_PROVIDER.  16 handle | 20 pad | 24 */
struct fdr__msg_unregister_provider {
    struct fdr__msg_hdr h;
    uint32_t handle;
    uint32_t pad;
};

/* BUFFER, with exactly one fd. kind RING: a sealed memfd of `size` bytes
 * holding one ring (common/ring.h) that fdrd made and keeps mapped: its
 * header says its geometry and stream index, which the process checks
 * against `size` before using it. kind DOORBELL: an eventfd the process
 * writes 1 to when a ring of the trace is half full (size 0). kind GROW:
 * a RING kept for a thread that fills its ring (a larger one: fdrd's
 * collect.c, route_spare; libfdr's writer.c, grow_routed), never the
 * first ring of a thread.
 * `route` is the ROUTE generation the buffer belongs to.
 *   16 trace | 20 kind | 24 size u64 | 32 route u32 | 36 pad | 40 */
enum { FDR__BUFFER_RING = 0, FDR__BUFFER_DOORBELL = 1, FDR__BUFFER_GROW = 2 };
struct fdr__msg_buffer {
    struct fdr__msg_hdr h;
    uint32_t trace;
    uint32_t kind;
    uint64_t size;
    uint32_t route;
    uint32_t pad;
};

/* CLASSES, with exactly one fd: the process's class table (common/
 * classes.h, in a sealed memfd of `size` bytes, read-only for fdrd) and
 * what fdrd needs besides to write the process's metadata.
 *   16 size u64 | 24 clock_freq u64 | 32 clock_offset_s i64 |
 *   40 clock_offset u64 | 48 line_start u64 | 56 line_freq u64 |
 *   64 uuid[16] | 80 */
struct fdr__msg_classes {
    struct fdr__msg_hdr h;
    uint64_t size;
    uint64_t clock_freq;
    int64_t clock_offset_s;
    uint64_t clock_offset;
    uint64_t line_start, line_freq; /* the clock of text lines (common/tsdl.h) */
    uint8_t uuid[16];
};

/* ROUTE: a trace the process records into from now on (active 1), in
 * route slot `slot` (0..31), with that trace's event selection and filter
 * mask; or the end of the route in that slot (active 0). `route` numbers
 * the routes fdrd sent, from 1.
 * flags BACKFILL: the trace was started before the process registered,
 * so what its threads recorded until then belongs to it (writer.c hands
 * it over).
 *   16 trace | 20 active | 24 route | 28 mode | 32 slot | 36 mask |
 *   40 flags | 44 pad | 48 nitems | 52 len | 56 items[len] */
enum { FDR__ROUTE_BACKFILL = 1 };
struct fdr__msg_route {
    struct fdr__msg_hdr h;
    uint32_t trace, active, route, mode;
    uint32_t slot, mask;
    uint32_t flags, pad;
    uint32_t nitems, len;
    char items[];
};

/* DEAD_RING: after fdrd was killed, a ring of the process's route into
 * trace `trace` (its id, kept across the restart) that the dead fdrd
 * wrote to stream_<index>: the process counted its packets from number
 * `consumed` on as discarded (fdrd had not marked them written), so the
 * new fdrd cuts the stream before the first of them that is there (a
 * write cut short by the kill may have left some whole).
 *   16 trace | 20 index | 24 consumed | 32 */
struct fdr__msg_dead_ring {
    struct fdr__msg_hdr h;
    uint32_t trace;
    uint32_t index;
    uint64_t consumed;
};

/* OWN_RING, with exactly one fd: a ring the process made itself (its
 * flight recorder's, common/ring.h, a memfd sealed against shrinking and
 * growing) in its registration window, with the geometry it was made
 * with. fdrd keeps a read-only mapping, and when the process ends before
 * its threads handed over what they recorded there before their route
 * (killed, _exit, exec), fdrd copies those events into the traces that
 * wanted them (docs/daemon.md, "Events before the route").
 *   16 index | 20 packet_size | 24 n_packets | 28 pad | 32 size u64 | 40 */
#define FDR_PROTO_OWN_MAX 256 /* own rings fdrd keeps per process; more are closed */
struct fdr__msg_own_ring {
    struct fdr__msg_hdr h;
    uint32_t index;
    uint32_t packet_size;
    uint32_t n_packets;
    uint32_t pad;
    uint64_t size;
};

/* LOST: `count` events of thread `tid` lost to route `route` (fdrd's
 * number) that no ring of the route can count, because the process holds
 * none: no ring of it came (fdrd could not make one, or had not sent one
 * yet) before the process ended (libfdr's buffer.c, route_lost). fdrd
 * counts them as discarded, at time `ts` (the counter), in an empty
 * packet of that thread in a stream of their own. No answer.
 *   16 route | 20 tid | 24 count u64 | 32 ts u64 | 40 */
struct fdr__msg_lost {
    struct fdr__msg_hdr h;
    uint32_t route;
    uint32_t tid;
    uint64_t count;
    uint64_t ts;
};

/* NEED_BUFFERS: the process has fewer than it wants for route `route`.
 *   16 route | 20 count | 24 */
struct fdr__msg_need_buffers {
    struct fdr__msg_hdr h;
    uint32_t route;
    uint32_t count;
};

/* CONTROL: steering one process (the scope's switches and sliders). From
 * the fdr command to fdrd, pid names the process (the kernel's pid, as
 * `fdr list processes` shows); fdrd passes the message on to that process
 * with pid 0. what RECORD or PRINT: the items, joined by ',', are a spec
 * (docs/environment.md) that replaces the process's choice of events
 * recorded (as fdr_record_set) or printed (as fdr_trace_set, whose
 * NAME=VALUE items set tunables and leave the events as they were); fdrd
 * answers REPLY. what STATE (no items): fdrd answers with the state the
 * process last sent (STATE_INFO, or a REPLY ENODATA before the first) and
 * asks the process for a new one. The process applies a spec, then sends
 * its STATE.
 *   16 pid | 20 what | 24 nitems | 28 len | 32 items[len] */
enum { FDR__CONTROL_RECORD = 0, FDR__CONTROL_PRINT = 1, FDR__CONTROL_STATE = 2 };
struct fdr__msg_control {
    struct fdr__msg_hdr h;
    uint32_t pid, what;
    uint32_t nitems, len;
    char items[];
};

/* STATE (a process's, pid 0: after its CLASSES and after every CONTROL)
 * and STATE_INFO (fdrd's answer to CONTROL STATE, pid the kernel's): one
 * item per known event and tunable, at most FDR_PROTO_ITEMS_MAX (a
 * process with more reports the first ones and then the item "+"):
 *     "E R P provider event"              R, P: 1 recorded, printed; else 0
 *     "T name i|d r value min max default"  integer (%lld) or floating
 *                                           (%.17g); r 1: min and max apply
 * answers: the number of the last CONTROL the process had applied when it
 * made the report (fdrd numbers the CONTROLs it passes to a process 1, 2,
 * ... in their seq, and says the number in its REPLY's value), 0 before
 * the first: a report with answers >= n shows the effect of control n.
 *   16 pid | 20 answers | 24 nitems | 28 len | 32 items[len] */
struct fdr__msg_state {
    struct fdr__msg_hdr h;
    uint32_t pid, answers;
    uint32_t nitems, len;
    char items[];
};

/* REPLY: h.status 0 or a positive errno; text a one-line message on error
 * (what follows "fdr VERB: "), value a result (a provider's handle).
 *   16 value | 20 pad | 24 text[256] | 280 */
struct fdr__msg_reply {
    struct fdr__msg_hdr h;
    uint32_t value;
    uint32_t pad;
    char text[FDR_PROTO_TEXT_CAP];
};

/* TRACE_INFO: one trace of LIST traces. The relay_* fields describe its
 * streaming to relayd (all 0 and relayd "" when not streamed):
 * relay_state 0 none, 1 connected, 2 connecting again (relayd away),
 * 3 stopped; relay_sessions the relayd sessions opened (1 + reconnects);
 * relay_discarded the events fdrd could not send (counted, never silent).
 * pid: the one process it records, 0 for every one; live_us: its period
 * when live (with or without relayd), else 0.
 *   16 mode | 20 active | 24 mask | 28 pid | 32 buffer_size u64 |
 *   40 packet_size u64 | 48 memory u64 | 56 relay_bytes u64 |
 *   64 relay_packets u64 | 72 relay_discarded u64 | 80 relay_state |
 *   84 relay_sessions | 88 live_us | 92 relay_ctl | 96 relay_data | 100 pad2 |
 *   104 relayd[256] | 360 nitems | 364 len | 368 name[72] | 440 outdir[4096] |
 *   4536 items[len] */
struct fdr__msg_trace_info {
    struct fdr__msg_hdr h;
    uint32_t mode, active, mask, pid;
    uint64_t buffer_size, packet_size, memory;
    uint64_t relay_bytes, relay_packets, relay_discarded;
    uint32_t relay_state, relay_sessions;
    uint32_t live_us, relay_ctl, relay_data, pad2;
    char relayd[FDR_PROTO_HOST_CAP];
    uint32_t nitems, len;
    char name[FDR_PROTO_NAME_CAP];
    char outdir[FDR_PROTO_PATH_CAP];
    char items[];
};

/* PROCESS_INFO: a connection that sent REGISTER_PROCESS. pid and uid are
 * the kernel's (SO_PEERCRED); claimed_pid is what the process said.
 *   16 pid | 20 claimed_pid | 24 ppid | 28 uid | 32 sizeof_int |
 *   36 sizeof_long | 40 sizeof_pointer | 44 sizeof_size_t | 48 nproviders |
 *   52 pad | 56 name[72] | 128 */
struct fdr__msg_process_info {
    struct fdr__msg_hdr h;
    uint32_t pid, claimed_pid, ppid, uid;
    uint32_t sizeof_int, sizeof_long, sizeof_pointer, sizeof_size_t;
    uint32_t nproviders;
    uint32_t pad;
    char name[FDR_PROTO_NAME_CAP];
};

/* PROVIDER_INFO: a provider of the table.
 *   16 handle | 20 refcount | 24 size | 28 nevents | 32 checksum |
 *   36 alignment | 40 sizeof_int | 44 sizeof_long | 48 sizeof_pointer |
 *   52 sizeof_size_t | 56 name[64] | 120 */
struct fdr__msg_provider_info {
    struct fdr__msg_hdr h;
    uint32_t handle, refcount;
    uint32_t size, nevents, checksum, alignment;
    uint32_t sizeof_int, sizeof_long, sizeof_pointer, sizeof_size_t;
    char name[FDR_PROVIDER_NAME_MAX + 1];
};

/* STATUS_INFO.
 *   16 pid | 20 traces | 24 active | 28 processes | 32 providers |
 *   36 clients | 40 max_traces | 44 max_clients | 48 started u64 (Unix
 *   seconds) | 56 rundir[4096] | 4152 */
struct fdr__msg_status_info {
    struct fdr__msg_hdr h;
    uint32_t pid, traces, active, processes, providers, clients;
    uint32_t max_traces, max_clients;
    uint64_t started;
    char rundir[FDR_PROTO_PATH_CAP];
};

/* The one validator. Checks the message `buf` of `len` bytes, as received
 * with `nfds` fds: header (size == len <= FDR_PROTO_MSG_MAX, version,
 * known type), the payload size of its type, every string terminated
 * inside its field, pattern items (count, lengths, total), the number of
 * fds the type carries. Returns 0, or -EBADMSG with a one-line reason in
 * why[0..why_cap) (why may be NULL). Reads nothing outside buf[0..len) and
 * needs no alignment (fields are copied out); once it returned 0, the
 * caller may read buf through the struct of its type if buf is 8-byte
 * aligned (receive into a uint64_t array). */
int fdr__proto_check(const void *buf, size_t len, int nfds, char *why, size_t why_cap);

/* The name of a message type, "?" for an unknown one. */
const char *fdr__proto_type_name(unsigned type);

/* Fills the header of msg: size, version, type, seq, status 0. */
void fdr__proto_init(void *msg, size_t size, unsigned type, uint32_t seq);

/* Copies s into the field dst[0..cap) NUL-padded; -ENAMETOOLONG (dst
 * unchanged) if s with its NUL does not fit. */
int fdr__proto_set_str(char *dst, size_t cap, const char *s);

/* Checks a trace name: 1..64 bytes of [A-Za-z0-9_.-], not starting with
 * '.' or '-'. Returns 0, or -EINVAL with a message in msg[0..cap):
 * "bad trace name '...': ..." (the name escaped to printable text). */
int fdr__proto_trace_name_check(const char *name, char *msg, size_t cap);

/* a then b into out[0..cap), NUL-terminated when it fits; returns the
 * length of the two (>= cap: did not fit). snprintf's "%s%s" without
 * stdio's formatting machinery, whose pages a program's start would
 * otherwise fault in (libfdr's start: lib/recorder/cold.h). */
int fdr__proto_cat(char *out, size_t cap, const char *a, const char *b);

/* The run directory of user `uid`, the one rule of fdrd, libfdr and the
 * fdr command: fdr_rundir when non-empty, else xdg_runtime/fdr when
 * xdg_runtime is non-empty, else /tmp/fdr-UID, unless that exists and is
 * not a directory of uid's (lstat: another user made it first, to deny us
 * fdrd): then home/.fdr/run (home absolute), and note[0..note_cap) says
 * so in one line (else note is ""; note may be NULL). The other arguments
 * are the values of FDR_RUNDIR, XDG_RUNTIME_DIR and HOME, read by the
 * caller. Returns the length, or -ENAMETOOLONG if it does not fit in
 * out[0..cap) with room for "/fdrd.sock" within a socket address. */
int fdr__proto_rundir(char *out, size_t cap, const char *fdr_rundir,
                      const char *xdg_runtime, const char *home, unsigned long uid,
                      char *note, size_t note_cap);

/* Sends one message (and nfds fds, 0..FDR_PROTO_FDS_MAX) with one
 * sendmsg(MSG_NOSIGNAL): never raises SIGPIPE. Returns 0 or -errno
 * (-EAGAIN on a full non-blocking socket: nothing was sent). */
int fdr__proto_send(int sock, const void *msg, size_t len, const int *fds, int nfds);
/* The same with more sendmsg flags (MSG_DONTWAIT: a thread that must not
 * wait for fdrd, daemon.c's hand-over of a new ring). */
int fdr__proto_send_flags(int sock, const void *msg, size_t len, const int *fds, int nfds,
                          int flags);

/* Receives one message into buf[0..cap) (cap >= FDR_PROTO_MSG_MAX) and at
 * most maxfds (<= FDR_PROTO_FDS_MAX) fds, received close-on-exec, into
 * fds[]; *nfds is their count. Returns the message length, 0 at end of
 * stream, or -errno: -EAGAIN (nothing to read), -EMSGSIZE (longer than
 * cap), -EBADMSG (a control message other than SCM_RIGHTS, more fds than
 * maxfds, or truncated control data). On any error every fd that came with
 * the message is closed and *nfds is 0. */
long fdr__proto_recv(int sock, void *buf, size_t cap, int *fds, int *nfds, int maxfds);

/* Closes fds[0..n). */
void fdr__proto_close_fds(const int *fds, int n);

#endif
