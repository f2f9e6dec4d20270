/* fdr-int.h - declarations shared by the files of libfdr. Not installed. */
#ifndef FDR_INT_H
#define FDR_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fdr/fdr.h"
#include "fdr/internal/fastpath.h"
#include "common/ring.h"

#define FDR__HIDDEN __attribute__((visibility("hidden")))

/* ---- configuration (config.c) ------------------------------------------ */

enum fdr__mode { FDR__MODE_DISCARD = 0, FDR__MODE_OVERWRITE = 1 };

struct fdr__config {
    char output[4096];     /* FDR_OUTPUT, "" when not writing to disk */
    int mode;              /* FDR_MODE */
    uint32_t buffer_size;  /* FDR_BUFFER_SIZE, bytes per thread */
    uint32_t packet_size;  /* FDR_PACKET_SIZE, bytes */
    uint32_t string_max;   /* FDR_STRING_MAX */
    const char *events;    /* FDR_EVENTS, which events are recorded */
    const char *traces;    /* FDR_TRACES, which events are printed */
    char trace_file[4096]; /* FDR_TRACE_FILE, where printed events go */
    uint32_t flush_ms;     /* FDR_FLUSH_MS, consumer period */
};

FDR__HIDDEN extern struct fdr__config fdr__cfg;
FDR__HIDDEN void fdr__config_load(void);
FDR__HIDDEN void fdr__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- clock (clock.c) ----------------------------------------------------- */

struct fdr__clock_params {
    uint64_t freq;    /* Hz */
    int64_t offset_s; /* seconds from the epoch at clock value 0 */
    uint64_t offset;  /* plus this many cycles */
    uint64_t start;   /* clock value when the library started */
};
FDR__HIDDEN void fdr__clock_init(void);
FDR__HIDDEN void fdr__clock_params(struct fdr__clock_params *p);
FDR__HIDDEN uint64_t fdr__clock_to_ns_since_start(uint64_t value);

struct fdr__buf {
    struct fdr__buf_hdr *hdr;
    int fd;
    uint32_t index;
    struct fdr__buf *next_free;
    int out_fd;           /* stream file, consumer only */
    uint64_t out_written; /* packets written, consumer only */
};

FDR__HIDDEN struct fdr__buf *fdr__buf_get(void);   /* from the pool or new */
FDR__HIDDEN void fdr__buf_put(struct fdr__buf *b); /* back to the pool */
FDR__HIDDEN struct fdr__buf *fdr__buf_at(uint32_t index);
FDR__HIDDEN uint32_t fdr__buf_count(void);
FDR__HIDDEN char *fdr__buf_slot(const struct fdr__buf_hdr *h, uint64_t seq);
FDR__HIDDEN extern uint8_t fdr__trace_uuid[16];
/* In a forked child: unmaps every buffer (they are the parent's). */
FDR__HIDDEN void fdr__buf_forget_all(void);

/* ---- writers: one per thread (writer.c) ---------------------------------- */

struct fdr__writer {
    struct fdr__thread *self; /* the thread's TLS block */
    struct fdr__buf *buf;
    struct fdr__pkt *pkt; /* current packet, NULL when none is open */
    pid_t tid;
    struct fdr__writer *next, *prev;
    uint32_t user_enabled; /* fdr_thread_set_tracing_enabled; under the lock */
    uint32_t barrier_ack;  /* section.c signal barrier: last round answered */
};

FDR__HIDDEN extern pthread_mutex_t fdr__writers_lock;
FDR__HIDDEN extern struct fdr__writer *fdr__writers; /* list, under the lock */
FDR__HIDDEN extern uint32_t fdr__enabled_default;    /* for new threads */
/* Closes w's current packet (if it holds an event) and publishes it.
 * Caller is w's thread, or holds the writers lock with w quiesced. */
FDR__HIDDEN void fdr__writer_close_packet(struct fdr__writer *w, uint64_t now);
/* When events were discarded since the last closed packet of w's buffer,
 * closes an empty packet that carries the count, so that readers see it.
 * Same callers as fdr__writer_close_packet, after it. -ENOSPC when the ring
 * is full (discard mode): write packets out and retry. */
FDR__HIDDEN int fdr__writer_carry_discards(struct fdr__writer *w, uint64_t now);
/* The same for a buffer no thread uses (in the pool); writers lock held. */
FDR__HIDDEN int fdr__buf_carry_discards(struct fdr__buf *b, uint64_t now);
FDR__HIDDEN void fdr__writer_thread_exit(void);
/* The calling thread's writer, created if needed; NULL when out of memory. */
FDR__HIDDEN struct fdr__writer *fdr__writer_self(void);
/* For raw events (provider.c): enters the tracing section and reserves a
 * payload of `payload` bytes for site s, like fdr__reserve(); finish with
 * fdr__commit(). NULL and *why < 0 when not recorded (see writer.c,
 * reserve()); a result with *why == -ENOSPC is only printed. */
FDR__HIDDEN char *fdr__reserve_raw(struct fdr__site *s, size_t payload, int *why);

/* ---- tracing sections (section.c) ---------------------------------------- */

/* Values of fdr__thread.enabled: 1 records; 0 is off by the user's choice;
 * FDR__PAUSED is off while fdr itself reads the buffers (flush, snapshot,
 * crash): events then are counted as discarded. */
#define FDR__PAUSED 2u

FDR__HIDDEN void fdr__section_init(void);
/* With the writers lock held: disables every writer and waits until none
 * is inside a tracing section. Afterwards no writer touches its buffer
 * until fdr__section_resume(). */
FDR__HIDDEN int fdr__section_quiesce(void); /* 0 or -ETIMEDOUT (then resume) */
FDR__HIDDEN void fdr__section_resume(void);
FDR__HIDDEN int fdr__section_barrier(void);
FDR__HIDDEN extern int fdr__section_no_barrier; /* test hook: skip the barrier */
/* Lock-free variant for the crash handler: stops every writer but `self`,
 * waits at most timeout_ns; returns 0 or -ETIMEDOUT. Async-signal-safe. */
FDR__HIDDEN int fdr__section_quiesce_unlocked(const struct fdr__writer *self,
                                              uint64_t timeout_ns);

/* ---- flight recorder (snapshot.c, crash.c) -------------------------------- */

FDR__HIDDEN void fdr__flight_init(void);       /* from init_once: env, handlers */
FDR__HIDDEN void fdr__crash_thread_init(void); /* alternate stack, writer creation */
FDR__HIDDEN void fdr__crash_thread_exit(void);
FDR__HIDDEN void fdr__crash_init(void);
/* 1 when the crash handler is installed for sig (crash.c). */
FDR__HIDDEN int fdr__crash_owns(int sig);
/* 1 for the signals a faulting instruction raises: SEGV BUS ILL FPE TRAP SYS. */
FDR__HIDDEN int fdr__signal_is_fault(int sig);
/* Writes the rings as a CTF trace into dir; the caller has quiesced the
 * writers. Async-signal-safe (open/write/close only). */
FDR__HIDDEN int fdr__snapshot_write_live(const char *dir);
/* Writes one packet, trimmed to its content: hdr is a copy of the packet's
 * header (packet_size is changed), body the bytes after it. Returns 0,
 * -EINVAL when the header is not valid for a slot of slot_size bytes (the
 * packet is skipped), or -errno. Async-signal-safe. */
FDR__HIDDEN int fdr__packet_write(int fd, struct fdr__pkt *hdr, const char *body,
                                  uint32_t slot_size);
/* Writes the TSDL metadata to fd through buf (no malloc, no stdio).
 * Async-signal-safe. */
FDR__HIDDEN int fdr__metadata_emit(int fd, char *buf, size_t cap);
/* "USR2", "SIGUSR2", "12", "RTMIN+3": the signal number, or -EINVAL. */
FDR__HIDDEN int fdr__signal_parse(const char *s, size_t len);
/* out = dir/name<number> (no number when < 0); -ENAMETOOLONG. AS-safe. */
FDR__HIDDEN int fdr__path_join(char *out, size_t cap, const char *dir, const char *name,
                               long number);

/* ---- registry (registry.c) ------------------------------------------------
 *
 * Event classes in a pointer-free table: strings live in a pool and are
 * named by offsets, so the table can move to shared memory. */

#define FDR__MAX_CLASSES 16384
#define FDR__SITE_RAW 2 /* site and class kind of raw events (provider.c) */

struct fdr__class {
    uint16_t id;
    uint8_t nfields;
    uint8_t kind; /* FDR__SITE_TRACE, or FDR__SITE_RAW for raw events */
    uint32_t line;
    uint32_t provider, event, format, file; /* pool offsets */
    uint8_t types[FDR_MAX_FIELDS];
    uint32_t names[FDR_MAX_FIELDS];
};

FDR__HIDDEN void fdr__registry_init(void);
FDR__HIDDEN const struct fdr__class *fdr__class_get(uint16_t id);
FDR__HIDDEN uint32_t fdr__class_count(void);
FDR__HIDDEN uint64_t fdr__registry_generation(void);
FDR__HIDDEN const char *fdr__str(uint32_t off);
FDR__HIDDEN void fdr__site_register(struct fdr__site *s);
/* A module's site or tunable list [begin, end) is unloaded: removes it
 * from the known ranges (list, *n), gives its lowest and highest pointer. */
FDR__HIDDEN void fdr__range_forget(const void **list, size_t *n, void *const *begin,
                                   void *const *end, uintptr_t *lo, uintptr_t *hi);
FDR__HIDDEN void fdr__registry_lock(void);
FDR__HIDDEN void fdr__registry_unlock(void);
struct fdr__rules;
FDR__HIDDEN void fdr__registry_set_rules(int print, struct fdr__rules *r);
FDR__HIDDEN void fdr__registry_each(void (*fn)(void *arg, const struct fdr__site *s,
                                               uint8_t state),
                                    void *arg);

/* ---- formatting (format.c): async-signal-safe ------------------------------ */

/* Formats one event as text into out (always NUL-terminated); returns the
 * length. Reads at most `len` payload bytes. */
FDR__HIDDEN size_t fdr__format_payload(char *out, size_t cap, const struct fdr__class *c,
                                       const char *payload, size_t len);
/* Size of the payload of class c that starts at payload, at most len bytes;
 * 0 if it does not fit (corrupt). */
FDR__HIDDEN size_t fdr__payload_size(const struct fdr__class *c, const char *payload,
                                     size_t len);
FDR__HIDDEN size_t fdr__fmt_u64(char *out, uint64_t v, unsigned base, int upper);
/* "S.NNNNNNNNN" (seconds, nine decimals) for ns; no NUL; returns length. */
FDR__HIDDEN size_t fdr__fmt_seconds(char *out, uint64_t ns);

/* ---- live printing (print.c) ---------------------------------------------- */

FDR__HIDDEN extern int fdr__print_fd;
FDR__HIDDEN void fdr__print_open(void);
/* "<sec> [tid] provider:event message\n" into line; returns its length. */
FDR__HIDDEN size_t fdr__format_line(char *line, size_t cap, const struct fdr__class *c,
                                    const char *payload, size_t len, uint64_t ts);
FDR__HIDDEN void fdr__print_event(const struct fdr__site *s, const char *payload,
                                  size_t len, uint64_t ts);

/* ---- consumer (consumer.c) ------------------------------------------------ */

FDR__HIDDEN int fdr__consumer_start(void);
FDR__HIDDEN void fdr__consumer_stop(void);
FDR__HIDDEN void fdr__consumer_forget(void); /* forked child: no thread */
FDR__HIDDEN void fdr__consumer_kick(void);
/* Writes out every complete packet now; with refresh, rewrites the
 * metadata too (its clock calibration improves with time). */
FDR__HIDDEN int fdr__consumer_drain(int refresh);
FDR__HIDDEN int fdr__metadata_write(const char *dir);
FDR__HIDDEN int fdr__consumer_prepare(void); /* creates FDR_OUTPUT */

/* ---- library state (init.c) ----------------------------------------------- */

FDR__HIDDEN void fdr__init(void);
FDR__HIDDEN extern int fdr__initialized;
FDR__HIDDEN extern pid_t fdr__pid;
FDR__HIDDEN pid_t fdr__gettid(void);
/* ---- live control (control.c, tunable.c) ---------------------------------- */

/* Parses FDR_EVENTS and FDR_TRACES, installs them, applies their tunables. */
FDR__HIDDEN void fdr__control_init(void);
/* A module's sites or tunables at `range` were registered: once the main
 * program's are (or range is NULL: "now"), the work deferred until every
 * event is known runs (help, warnings about names that match nothing). */
FDR__HIDDEN void fdr__control_ready(const void *range);
FDR__HIDDEN int fdr__control_is_ready(void);
/* Applies the NAME=VALUE items of r; warns (origin) about bad ones. */
FDR__HIDDEN void fdr__tunables_apply(const struct fdr__rules *r, const char *origin);
/* Warns (once each) about values set for tunables nothing declared. */
FDR__HIDDEN void fdr__tunables_check_unknown(void);
FDR__HIDDEN void fdr__tunables_help(void);
/* fork() safety (init.c): every lock is taken before fork and released
 * after it, in one order: control (ready), tunables, snapshot trigger,
 * providers, registry, writers. A lock held for long (a snapshot writing
 * files) is made anew in the child instead. */
enum fdr__fork_phase { FDR__FORK_PREPARE, FDR__FORK_PARENT, FDR__FORK_CHILD };
FDR__HIDDEN void fdr__control_fork(enum fdr__fork_phase ph);
FDR__HIDDEN void fdr__tunables_fork(enum fdr__fork_phase ph);
FDR__HIDDEN void fdr__snapshot_fork(enum fdr__fork_phase ph);
FDR__HIDDEN void fdr__provider_fork(enum fdr__fork_phase ph);

#endif
