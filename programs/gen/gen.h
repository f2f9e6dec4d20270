/* SPDX-License-Identifier: MIT */
/* gen.h - fdr-gen's parser (gen-parse.c) and emitter (gen-emit.c).
 *
 * Not installed: shared by programs/gen/fdr-gen.c and the fuzz target
 * tests/fuzz/fuzz-gen.c. */
#ifndef FDR_GEN_H
#define FDR_GEN_H

#include <stddef.h>
#include <stdio.h>

/* Longest physical line of a trace-events file, newline excluded. */
#define FDR__GEN_LINE_MAX 4096
/* Longest identifier (event, argument, provider), in bytes. fdr keeps field
 * names up to 63 bytes; longer ones would silently become "argN". */
#define FDR__GEN_IDENT_MAX 63
/* fdr records at most FDR_MAX_FIELDS (12) fields per event. */
#define FDR__GEN_ARGS_MAX 12

struct fdr__gen_arg {
    char *type;  /* normalised: "const char *", "unsigned long long", "struct Foo *" */
    char *name;  /* as written; the field name */
    char *param; /* the C parameter name: name, or name_ for a C++ keyword */
    char conv;   /* conversion letter that consumes it: 'd', 's', 'p', ... */
};

struct fdr__gen_event {
    char *name;
    char *file; /* owned by the event (copied) */
    unsigned line;
    int disabled;
    int tcg, vcpu; /* QEMU's properties: two formats, an implicit CPUState *cpu */
    size_t nargs;
    struct fdr__gen_arg args[FDR__GEN_ARGS_MAX];
    /* The format as C tokens ready to paste: "a %" PRIx64 " b"; literals
     * are re-escaped (no raw control or non-ASCII bytes, no trigraphs). */
    char *format;
};

struct fdr__gen_set {
    struct fdr__gen_event *events;
    size_t n, cap;
    char **structs; /* struct/union tags seen in argument types */
    size_t nstructs, capstructs;
    /* When set, each bad line is reported here ("file:line: message") and
     * skipped, and parsing goes on; when NULL the first one stops it. */
    void (*on_error)(void *ctx, const char *message);
    void *on_error_ctx;
};

/* Called with one line, "file:line: warning: ..." (no newline). */
typedef void (*fdr__gen_warn_cb)(void *ctx, const char *message);

/* Parses `len` bytes of `text` (need not be NUL-terminated) named `file`
 * and appends its events to `set`, checking names against the events
 * already there. Returns 0; -EINVAL with the first "file:line: message"
 * (one line, no newline) in err[errlen], leaving `set` with the events
 * parsed before the bad line, or with every good event of the file when
 * set->on_error is set; -ENOMEM. */
int fdr__gen_parse(struct fdr__gen_set *set, const char *file, const char *text,
                   size_t len, fdr__gen_warn_cb warn, void *ctx, char *err,
                   size_t errlen);

void fdr__gen_set_free(struct fdr__gen_set *set);

/* 1 when s is a provider name fdr-gen accepts (a C identifier of at most
 * FDR__GEN_IDENT_MAX bytes). */
int fdr__gen_valid_provider(const char *s);

struct fdr__gen_opts {
    const char *provider;
    const char *guard;     /* include guard macro */
    const char **includes; /* headers to #include first, as given */
    size_t nincludes;
    const char **inputs; /* file names, for the banner */
    size_t ninputs;
};

/* Writes the header for `set` to `out`. Returns 0 or -EIO (see ferror). */
int fdr__gen_emit(FILE *out, const struct fdr__gen_set *set,
                  const struct fdr__gen_opts *opts);

#endif
