/* fdr-int.h - declarations shared by the files of libfdr. Not installed. */
#ifndef FDR_INT_H
#define FDR_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fdr/fdr.h"
#include "fdr/internal/fastpath.h"

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
    uint64_t freq;      /* Hz */
    int64_t offset_s;   /* seconds from the epoch at clock value 0 */
    uint64_t offset;    /* plus this many cycles */
    uint64_t start;     /* clock value when the library started */
};
FDR__HIDDEN void fdr__clock_init(void);
FDR__HIDDEN void fdr__clock_params(struct fdr__clock_params *p);
FDR__HIDDEN uint64_t fdr__clock_to_ns_since_start(uint64_t value);

/* ---- buffers and packets (buffer.c) --------------------------------------
 *
 * A buffer is one mapping (memfd) holding a header page and a ring of
 * packets. It holds no pointer: a daemon can map it at another address. */

#define FDR__BUF_MAGIC 0x46445242u /* "FDRB" */
#define FDR__CTF_MAGIC 0xC1FC1FC1u
#define FDR__BUF_HEADER 4096

struct fdr__buf_hdr {
    uint32_t magic;
    uint32_t version;
    uint32_t packet_size;
    uint32_t n_packets;
    uint32_t mode;
    uint32_t index; /* stream instance id */
    uint64_t size;  /* whole mapping */
    char pad0[32];
    /* writer's line */
    uint64_t produced;  /* packets closed; release store by the writer */
    uint64_t discarded; /* events discarded, cumulative; writer only */
    uint64_t nested;    /* events discarded because nested; atomic add */
    char pad1[40];
    /* reader's line */
    uint64_t consumed; /* packets written out; release store by the reader */
    char pad2[56];
};

/* CTF packet header + packet context, as laid out at the start of every
 * packet (docs/trace-format.md). Byte-aligned, native byte order. */
struct fdr__pkt {
    uint32_t magic;
    uint8_t uuid[16];
    uint64_t stream_instance_id;
    uint64_t ts_begin;
    uint64_t ts_end;
    uint64_t content_size; /* bits */
    uint64_t packet_size;  /* bits */
    uint64_t seq;
    uint64_t discarded;
    uint32_t pid;
    uint32_t tid;
    char thread_name[16];
} __attribute__((packed));

struct fdr__buf {
    struct fdr__buf_hdr *hdr;
    int fd;
    uint32_t index;
    struct fdr__buf *next_free;
    int out_fd;              /* stream file, consumer only */
    uint64_t out_written;    /* packets written, consumer only */
};

FDR__HIDDEN struct fdr__buf *fdr__buf_get(void);    /* from the pool or new */
FDR__HIDDEN void fdr__buf_put(struct fdr__buf *b);  /* back to the pool */
FDR__HIDDEN struct fdr__buf *fdr__buf_at(uint32_t index);
FDR__HIDDEN uint32_t fdr__buf_count(void);
FDR__HIDDEN char *fdr__buf_slot(const struct fdr__buf_hdr *h, uint64_t seq);
FDR__HIDDEN extern uint8_t fdr__trace_uuid[16];

/* ---- writers: one per thread (writer.c) ---------------------------------- */

struct fdr__writer {
    struct fdr__thread *self; /* the thread's TLS block */
    struct fdr__buf *buf;
    struct fdr__pkt *pkt;     /* current packet, NULL when none is open */
    pid_t tid;
    struct fdr__writer *next, *prev;
};

FDR__HIDDEN extern pthread_mutex_t fdr__writers_lock;
FDR__HIDDEN extern struct fdr__writer *fdr__writers; /* list, under the lock */
FDR__HIDDEN extern uint32_t fdr__enabled_default;    /* for new threads */
/* Closes w's current packet (if it holds an event) and publishes it.
 * Caller is w's thread, or holds the writers lock with w quiesced. */
FDR__HIDDEN void fdr__writer_close_packet(struct fdr__writer *w, uint64_t now);
FDR__HIDDEN void fdr__writer_thread_exit(void);

/* ---- tracing sections (section.c) ---------------------------------------- */

FDR__HIDDEN void fdr__section_init(void);
/* With the writers lock held: disables every writer and waits until none
 * is inside a tracing section. Afterwards no writer touches its buffer
 * until fdr__section_resume(). */
FDR__HIDDEN void fdr__section_quiesce(void);
FDR__HIDDEN void fdr__section_resume(void);
FDR__HIDDEN void fdr__section_barrier(void);

/* ---- registry (registry.c) ------------------------------------------------
 *
 * Event classes in a pointer-free table: strings live in a pool and are
 * named by offsets, so the table can move to shared memory. */

#define FDR__MAX_CLASSES 16384

struct fdr__class {
    uint16_t id;
    uint8_t nfields;
    uint8_t kind; /* FDR__SITE_TRACE, or 2 for raw events */
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
FDR__HIDDEN void fdr__consumer_kick(void);
FDR__HIDDEN int fdr__consumer_drain(void);
FDR__HIDDEN int fdr__metadata_write(const char *dir);
FDR__HIDDEN int fdr__consumer_prepare(void); /* creates FDR_OUTPUT */

/* ---- library state (init.c) ----------------------------------------------- */

FDR__HIDDEN void fdr__init(void);
FDR__HIDDEN extern int fdr__initialized;
FDR__HIDDEN extern pid_t fdr__pid;
FDR__HIDDEN pid_t fdr__gettid(void);
FDR__HIDDEN void fdr__help_requested(void);
FDR__HIDDEN void fdr__help_print_pending(void);

#endif
