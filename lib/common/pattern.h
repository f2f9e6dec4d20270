/* SPDX-License-Identifier: MIT */
/* pattern.h - the event-pattern language of FDR_TRACES, FDR_EVENTS and
 * fdr_trace_set() (internal to libfdr; the language is described at the top
 * of pattern.c).
 *
 * Errors are negative errno values. A rule set is immutable once parsed and
 * may be read from many threads at once without locking. */
#ifndef FDR_LIB_PATTERN_H
#define FDR_LIB_PATTERN_H

#include <stddef.h>

/* Receives one warning: a single line, without a trailing newline, that
 * starts with "fdr: <origin>: ". `message` is only valid during the call. */
typedef void (*fdr__warn_fn)(void *ctx, const char *message);

/* A parsed spec: event rules, tunable assignments and the help flag. */
struct fdr__rules;

/* Longest item accepted, in bytes (longer items are warned about). */
#define FDR__PATTERN_ITEM_MAX 255
/* Deepest nesting of @file includes. */
#define FDR__PATTERN_FILE_DEPTH 4
/* Most files read by one parse (bounds the work of include fan-out). */
#define FDR__PATTERN_FILE_COUNT 64
/* Largest file read by an @file include, in bytes. */
#define FDR__PATTERN_FILE_SIZE (16u << 20)

/* Flags for fdr__rules_parse_flags(). */
enum {
    FDR__RULES_NO_FILES = 1u << 0, /* "@PATH" items are warned about, not read */
};

/* Parses `spec` (NULL or "" gives an empty rule set) into a new rule set,
 * stored in *out; the caller owns it and releases it with fdr__rules_free().
 * Bad items are skipped with exactly one warning each through `warn(ctx, msg)`
 * (warn may be NULL); `origin` names the source in warnings (e.g. "FDR_TRACES";
 * NULL gives "spec"). Unreadable @files are warnings too.
 * Returns 0, or -ENOMEM (then *out is NULL and no rule set exists).
 * Does not keep `spec`, `origin` or `ctx`. */
int fdr__rules_parse(const char *spec, const char *origin, fdr__warn_fn warn, void *ctx,
                     struct fdr__rules **out);

/* Same as fdr__rules_parse() with FDR__RULES_* `flags`; also returns -EINVAL
 * (and *out NULL) for an unknown flag or a NULL `out`. */
int fdr__rules_parse_flags(const char *spec, const char *origin, unsigned flags,
                           fdr__warn_fn warn, void *ctx, struct fdr__rules **out);

/* Releases a rule set and everything it owns; NULL is a no-op. */
void fdr__rules_free(struct fdr__rules *r);

/* Evaluates the rules for an event: the last rule that matches decides.
 * Returns 1 (on), 0 (off), or -1 when no rule matches (or r is NULL), so the
 * caller keeps its default. A NULL provider or event is matched as "". */
int fdr__rules_match(const struct fdr__rules *r, const char *provider, const char *event);

/* 1 if the spec contained "help" or "list", else 0 (also for NULL). */
int fdr__rules_wants_help(const struct fdr__rules *r);

/* Number of event rules (0 for NULL). */
size_t fdr__rules_count(const struct fdr__rules *r);

/* The i-th event rule, in spec order: its provider glob (NULL when the item
 * named no provider: any provider matches), event glob and on (1) / off (0).
 * Strings live as long as the rule set. Returns 0, or -EINVAL if r is NULL
 * or i is out of range (outputs unchanged). Used by live control (control.c)
 * to warn about items that match no known event. */
int fdr__rules_rule(const struct fdr__rules *r, size_t i, const char **provider,
                    const char **event, int *on);

/* Number of NAME=VALUE tunable assignments (0 for NULL). */
size_t fdr__rules_tunable_count(const struct fdr__rules *r);

/* The i-th tunable assignment, in spec order (a name may repeat: the caller
 * applies them in order). *name and *value_text (either pointer may be NULL)
 * point into the rule set and live as long as it does.
 * Returns 0, or -EINVAL if r is NULL or i is out of range (outputs unchanged). */
int fdr__rules_tunable(const struct fdr__rules *r, size_t i, const char **name,
                       const char **value_text);

/* The parsed value of the i-th tunable, as fdr__parse_number() gives it
 * (output pointers may be NULL). Returns 0 or -EINVAL like fdr__rules_tunable(). */
int fdr__rules_tunable_number(const struct fdr__rules *r, size_t i, double *dbl,
                              long long *ll, int *is_integer);

/* Matches `text` against shell-style `glob`: '*' any run (also empty), '?' one
 * byte, '[abc]' '[a-z]' '[!x]' '[^x]' one byte of (or not of) a class; a '['
 * without its ']' is a literal '['; no escapes. Case-sensitive, byte-wise.
 * Iterative, O(len(glob) * len(text)) at worst. NULL is matched as "".
 * Returns 1 on match, 0 otherwise. */
int fdr__glob_match(const char *glob, const char *text);

/* Parses a whole number: [+-] then decimal digits, 0x/0X hex digits, or a
 * decimal floating-point form ("1.5", ".5", "5.", "1.5e3", "-2E-4"); always
 * '.' as decimal point, whatever the locale. No white space, no "inf"/"nan".
 * On success stores (each pointer may be NULL) the value as a double, as a long
 * long (a float is truncated toward zero, saturated to the long long range)
 * and whether the text was an integer form; returns 0.
 * Returns -EINVAL for an empty or malformed text (trailing junk included),
 * -ERANGE for an integer outside long long or a float overflowing double;
 * on error the outputs are unchanged. */
int fdr__parse_number(const char *text, double *dbl, long long *ll, int *is_integer);

#endif /* FDR_LIB_PATTERN_H */
