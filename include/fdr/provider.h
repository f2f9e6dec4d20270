/* SPDX-License-Identifier: MIT */
/* fdr/provider.h - explicit providers and generic raw events.
 *
 * For code that cannot use fdr_trace() call sites: a generated layer, an
 * interpreter, a foreign-language binding, or data that already comes as a
 * byte buffer. The design is LTT's "facility": a provider is registered
 * with its name, its number of events and a description of the ABI its
 * payloads were laid out with; events are then recorded as
 * (provider, event id, data, size).
 *
 *     static fdr_provider_t *net;
 *     fdr_provider_desc_t d = FDR_PROVIDER_DESC_INIT("net", 4, 0x5eed);
 *     int err = fdr_provider_register(&d, &net);
 *     if (err < 0)
 *         fprintf(stderr, "net: %s\n", fdr_strerror(err));
 *     ...
 *     struct rx_rec r = {len, proto};
 *     fdr_raw_event(net, 2, &r, sizeof r);
 *     ...
 *     fdr_provider_unregister(net);
 *
 * In the trace, event `id` of provider `net` is the event class
 * "net:event_<id>" with one field, `data`, a byte sequence (CTF: a u32
 * length `data_len` and an array of u8 `data`). Its class is created the
 * first time the event is recorded. FDR_EVENTS / fdr_record_set() and
 * FDR_TRACES / fdr_trace_set() select raw events by that name like any
 * other ("net:*", "-net:event_3"); printed, the payload shows as hex bytes.
 *
 * Not available with -DFDR_DISABLE (this header is then not included by
 * <fdr/fdr.h>): guard raw-event code with #ifndef FDR_DISABLE. */
#ifndef FDR_PROVIDER_H
#define FDR_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include "fdr/internal/visibility.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest provider name, in bytes, without the terminating NUL. */
#define FDR_PROVIDER_NAME_MAX 63

/* Most events a provider may declare (event ids are 0 .. nevents - 1). */
#define FDR_PROVIDER_EVENTS_MAX 65535

/* Most providers registered at once in a process. */
#define FDR_PROVIDER_MAX 256

/* What a provider is. Identity is every field: two registrations name the
 * same provider only when all of them are equal (and `size` too).
 *
 *   size        sizeof(fdr_provider_desc_t) as the caller compiled it;
 *               fields may be added at the end in later versions.
 *   name        [A-Za-z_][A-Za-z0-9_]*, 1 to FDR_PROVIDER_NAME_MAX bytes;
 *               copied, the caller's string is not kept.
 *   nevents     number of event ids, 1 to FDR_PROVIDER_EVENTS_MAX.
 *   checksum    of the provider's event definitions, chosen by the caller
 *               (a changed layout must change it).
 *   alignment   alignment of the widest scalar in the payloads as the
 *               producer laid them out (a power of two up to 16), or 0
 *               for packed payloads.
 *   sizeof_*    sizeof(int), sizeof(long), sizeof(void *), sizeof(size_t)
 *               of the producer: each a power of two from 1 to 16.
 *
 * FDR_PROVIDER_DESC_INIT(name, nevents, checksum) fills in size,
 * alignment and the four sizes from the compiler. */
typedef struct fdr_provider_desc {
    size_t size;
    const char *name;
    uint32_t nevents;
    uint32_t checksum;
    uint32_t alignment;
    uint32_t sizeof_int;
    uint32_t sizeof_long;
    uint32_t sizeof_pointer;
    uint32_t sizeof_size_t;
} fdr_provider_desc_t;

#ifdef __cplusplus
#define FDR__ALIGNOF(t) alignof(t)
#else
#define FDR__ALIGNOF(t) _Alignof(t)
#endif

#define FDR_PROVIDER_DESC_INIT(name, nevents, checksum)                                  \
    {                                                                                    \
        sizeof(fdr_provider_desc_t), (name), (nevents), (checksum),                      \
            (uint32_t)FDR__ALIGNOF(long long), (uint32_t)sizeof(int),                    \
            (uint32_t)sizeof(long), (uint32_t)sizeof(void *), (uint32_t)sizeof(size_t)   \
    }

/* A registered provider (opaque). */
typedef struct fdr_provider fdr_provider_t;

/* Registers the provider described by desc and stores its handle in *out.
 * Registering a provider that is already registered with exactly the same
 * description returns the same handle and takes one more reference.
 * Returns 0, or:
 *   -EINVAL  desc or out is NULL, desc->size is too small, the name is
 *            empty, too long (> FDR_PROVIDER_NAME_MAX) or not an
 *            identifier, nevents is 0 or too large, a size or the
 *            alignment is not valid (a line on stderr says which);
 *   -EEXIST  a provider of that name is registered with a different
 *            description (a line on stderr names the first field that
 *            differs); the existing one is unchanged;
 *   -ENOSPC  FDR_PROVIDER_MAX providers are registered already.
 * *out is left unchanged on error. */
FDR_EXTERN int fdr_provider_register(const fdr_provider_desc_t *desc,
                                     fdr_provider_t **out);

/* Drops one reference to p. The provider is freed when its last reference
 * goes; the handle must not be used afterwards (until its slot is reused,
 * fdr_raw_event() on it returns -EINVAL). The classes of events already
 * recorded stay in the trace. Returns 0, or -EINVAL when p is not a
 * registered provider. */
FDR_EXTERN int fdr_provider_unregister(fdr_provider_t *p);

/* Records event `event_id` of provider p with a payload of `size` bytes
 * copied from data (data may be NULL when size is 0). Safe from any thread;
 * not async-signal-safe the first time an event id is used (its class is
 * created), safe afterwards. Returns 0 when the event is recorded (or, if
 * it is only printed, printed), or why it is not:
 *   -EINVAL   p is not a registered provider, event_id >= its nevents, or
 *             data is NULL with size > 0;
 *   -E2BIG    size > fdr_raw_event_max(): it can never fit in a packet
 *             (or, for an event printed but not recorded, it is larger
 *             than the print area, about 48 KiB);
 *   -ENODATA  the event is disabled (FDR_EVENTS / fdr_record_set and
 *             FDR_TRACES / fdr_trace_set select neither recording nor
 *             printing of it) or tracing is off in this thread;
 *   -EBUSY    called while this thread is recording another event (from a
 *             signal handler), or while fdr has paused the writers to read
 *             the buffers (flush, snapshot): counted as discarded;
 *   -ENOSPC   the buffer is full (discard mode) and the event was dropped:
 *             counted as discarded (CTF events_discarded);
 *   -ENOMEM   this thread's buffer could not be created.
 * Only -EBUSY and -ENOSPC drop an event the rules selected, and both are
 * counted in the trace; the others record nothing and count nothing. */
FDR_EXTERN int fdr_raw_event(fdr_provider_t *p, unsigned event_id, const void *data,
                             size_t size);

/* The largest payload fdr_raw_event() accepts, in bytes: what fits in one
 * packet (FDR_PACKET_SIZE) with the packet and event headers. */
FDR_EXTERN size_t fdr_raw_event_max(void);

#ifdef __cplusplus
}
#endif
#endif
