/* SPDX-License-Identifier: MIT */
/* common/format.h - an event's payload and its text line, formatted
 * without malloc, stdio or locks (async-signal-safe): the one formatter of
 * live tracing, the crash dump and every reader of a trace. */
#ifndef FDR_COMMON_FORMAT_H
#define FDR_COMMON_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "common/classes.h"

/* Formats the message of one event (its class's format string applied to
 * the payload) into out, always NUL-terminated; returns its length. Reads
 * at most `len` payload bytes; an early end prints "<truncated>". */
size_t fdr__format_payload(char *out, size_t cap, const struct fdr__classes *t,
                           const struct fdr__class *c, const char *payload, size_t len);
/* Size of the payload of class c that starts at payload, at most len bytes;
 * 0 if it does not fit (corrupt). */
size_t fdr__payload_size(const struct fdr__class *c, const char *payload, size_t len);
/* The conversion letter that consumes each field of format f, '*' for a
 * '*' width or precision; returns the number of fields the format takes. */
unsigned fdr__format_convs(const char *f, char conv[FDR_MAX_FIELDS]);
/* Writes v in base (10 or 16), NUL-terminated; returns the digits' count. */
size_t fdr__fmt_u64(char *out, uint64_t v, unsigned base, int upper);
/* "S.NNNNNNNNN" (seconds, nine decimals) for ns; no NUL; returns length. */
size_t fdr__fmt_seconds(char *out, uint64_t ns);

/* What a text line says besides the event itself. */
struct fdr__line_info {
    uint64_t ns;             /* time since the trace started */
    uint32_t tid;            /* thread id */
    const char *thread_name; /* at most 16 bytes, NUL-terminated or not; or NULL */
};

/* The text line of one event, as live tracing prints it:
 *     <seconds> [<tid>[ <thread name>]] <provider>:<event> <message>\n
 * into line (not NUL-terminated); returns its length, 0 when cap < 64. */
size_t fdr__format_line(char *line, size_t cap, const struct fdr__classes *t,
                        const struct fdr__class *c, const struct fdr__line_info *li,
                        const char *payload, size_t len);

#endif
