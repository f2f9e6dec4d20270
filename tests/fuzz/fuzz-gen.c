/* SPDX-License-Identifier: MIT */
/* fuzz-gen.c - libFuzzer target for fdr-gen's parser (tools/gen-parse.c)
 * and emitter (tools/gen-emit.c).
 *
 * Input: the bytes of a trace-events file.
 * Property: parsing never crashes, leaks or hits undefined behaviour and
 * answers 0, -ENOMEM or -EINVAL with one printable line "fuzz:N: ..." (N
 * a line number of the input); warnings are printable lines "fuzz:N:
 * warning: ...". What it accepts is well formed (identifiers, at most 12
 * arguments, one conversion letter per argument) and round-trips: the
 * events written back as trace-events text parse to the same events. The
 * header for an accepted input is written without error and holds no NUL
 * byte, and declares trace_<name>() for every event. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static unsigned long input_lines;

static int is_ident(const char *s)
{
    if (!*s || strlen(s) > FDR__GEN_IDENT_MAX || (*s >= '0' && *s <= '9'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

/* "fuzz:N: " with 1 <= N <= lines, then printable text to the end. */
static void check_message(const char *m)
{
    char *end;
    if (strncmp(m, "fuzz:", 5))
        abort();
    unsigned long n = strtoul(m + 5, &end, 10);
    if (end == m + 5 || n < 1 || n > input_lines || strncmp(end, ": ", 2) || !end[2])
        abort();
    for (const char *p = m; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            abort();
}

static void on_warn(void *ctx, const char *message)
{
    (void)ctx;
    check_message(message);
    if (!strstr(message, ": warning: "))
        abort();
}

/* The events written back in trace-events syntax, one per line. */
static char *unparse(const struct fdr__gen_set *set, size_t *len, size_t *nlines)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        return NULL;
    *nlines = 0;
    for (size_t i = 0; i < set->n; i++) {
        const struct fdr__gen_event *e = &set->events[i];
        fprintf(f, "%s%s(", e->disabled ? "disable " : "", e->name);
        for (size_t k = 0; k < e->nargs; k++)
            fprintf(f, "%s%s %s", k ? ", " : "", e->args[k].type, e->args[k].name);
        fprintf(f, ") %s\n", e->format);
        (*nlines)++;
    }
    if (fclose(f)) {
        free(text);
        return NULL;
    }
    return text;
}

static int same_event(const struct fdr__gen_event *a, const struct fdr__gen_event *b)
{
    if (strcmp(a->name, b->name) || a->disabled != b->disabled || a->nargs != b->nargs ||
        strcmp(a->format, b->format))
        return 0;
    for (size_t k = 0; k < a->nargs; k++)
        if (strcmp(a->args[k].type, b->args[k].type) ||
            strcmp(a->args[k].name, b->args[k].name) ||
            strcmp(a->args[k].param, b->args[k].param) ||
            a->args[k].conv != b->args[k].conv)
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fdr__gen_set set = {0};
    char err[512];
    input_lines = 1;
    for (size_t i = 0; i < size; i++)
        input_lines += data[i] == '\n';

    int rc = fdr__gen_parse(&set, "fuzz", (const char *)data, size, on_warn, NULL, err,
                            sizeof(err));
    if (rc == -EINVAL)
        check_message(err);
    else if (rc && rc != -ENOMEM)
        abort();
    if (rc) {
        fdr__gen_set_free(&set);
        return 0;
    }

    for (size_t i = 0; i < set.n; i++) {
        const struct fdr__gen_event *e = &set.events[i];
        if (!is_ident(e->name) || e->nargs > FDR__GEN_ARGS_MAX || e->format[0] != '"')
            abort();
        for (size_t k = 0; k < e->nargs; k++)
            if (!is_ident(e->args[k].name) || !e->args[k].conv || !*e->args[k].type)
                abort();
    }

    /* round trip (lines that grew past the limit when re-escaped excepted) */
    size_t len, nlines;
    char *text = unparse(&set, &len, &nlines);
    if (text) {
        int fits = 1;
        for (const char *p = text; *p;) {
            const char *nl = strchr(p, '\n');
            if ((size_t)(nl - p) > FDR__GEN_LINE_MAX)
                fits = 0;
            p = nl + 1;
        }
        struct fdr__gen_set again = {0};
        unsigned long saved = input_lines;
        input_lines = nlines;
        rc = fits ? fdr__gen_parse(&again, "fuzz", text, len, on_warn, NULL, err,
                                   sizeof(err))
                  : -ENOMEM;
        input_lines = saved;
        if (rc == -EINVAL) {
            fprintf(stderr, "round trip refused: %s\n--\n%s--\n", err, text);
            abort();
        }
        if (!rc) {
            if (again.n != set.n)
                abort();
            for (size_t i = 0; i < set.n; i++)
                if (!same_event(&set.events[i], &again.events[i]))
                    abort();
        }
        fdr__gen_set_free(&again);
        free(text);
    }

    /* the header */
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    if (f) {
        const char *inputs[] = {"fuzz"};
        struct fdr__gen_opts opts = {"fuzz", "FUZZ_H", NULL, 0, inputs, 1};
        rc = fdr__gen_emit(f, &set, &opts);
        if (fclose(f) == 0) {
            if (rc || memchr(out, 0, outlen))
                abort();
            for (size_t i = 0; i < set.n; i++) {
                char decl[FDR__GEN_IDENT_MAX + 32];
                snprintf(decl, sizeof(decl), "static inline void trace_%s(",
                         set.events[i].name);
                if (!strstr(out, decl))
                    abort();
            }
        }
        free(out);
    }
    fdr__gen_set_free(&set);
    return 0;
}
