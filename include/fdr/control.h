/* SPDX-License-Identifier: MIT */
/* fdr/control.h - controlling the recorder from the program itself.
 *
 * Safe to call from any thread at any time; none of these is
 * async-signal-safe. Each returns 0 or a negative error (fdr/error.h). */
#ifndef FDR_CONTROL_H
#define FDR_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "fdr/internal/visibility.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes every event recorded so far to the trace (FDR_OUTPUT), including
 * each thread's partially filled packet, and waits until it is written to
 * the stream files (write(2): in the page cache, no fsync). Returns -EIO
 * when a write failed (also reported on stderr).
 * Recording goes on afterwards. Returns -ENOTSUP when no trace is being
 * written to disk. Call it before _exit(), which skips exit handlers. */
FDR_EXTERN int fdr_flush(void);

/* Chooses the events printed live as text, with the syntax of FDR_TRACES
 * (docs/environment.md): e.g. "net:*,-net:rx". Takes effect at once for
 * every thread; replaces the previous choice. Malformed items and patterns
 * that match no known event are reported on stderr, one line each, and
 * skipped; the rest applies. NAME=VALUE items set tunables (fdr/tunable.h);
 * a spec made only of those (and "help") leaves the event choice as it was.
 * "help" prints the events, tunables and syntax to stderr. */
FDR_EXTERN int fdr_trace_set(const char *spec);

/* The same for the events recorded (FDR_EVENTS). By default (NULL, "", or
 * a list whose first item is a '-' item) every event not switched off is
 * recorded; a list that starts with a name ("net:*") records only what its
 * items switch on. */
FDR_EXTERN int fdr_record_set(const char *spec);

/* One known event, as given to an fdr_event_cb. */
typedef struct fdr_event_info {
    size_t size; /* sizeof(fdr_event_info_t): fields may be added */
    const char *provider;
    const char *event;
    const char *format;
    const char *file;
    int line;
    bool recorded;
    bool printed;
} fdr_event_info_t;

typedef void (*fdr_event_cb)(void *arg, const fdr_event_info_t *event);

/* Calls cb once per known provider:event, with its current state. cb must
 * not call back into fdr's control functions. */
FDR_EXTERN int fdr_event_list(fdr_event_cb cb, void *arg);

#ifdef __cplusplus
}
#endif
#endif
