/* SPDX-License-Identifier: MIT */
/* gen-parse.c - fdr-gen's reader of trace-event definition files.
 *
 * The syntax is QEMU's: one event per line,
 *
 *     [property ...] name(type arg, ...) "format" [PRIx64 "more format" ...]
 *
 * with `#` comment lines and blank lines in between; an event without
 * arguments may omit the format. Properties: `disable` (the event records
 * nothing); `vcpu` (QEMU's tracetool adds a first argument `CPUState *cpu`
 * and "cpu=%p " before the format: so does fdr-gen); `tcg` (older trees
 * give two formats, `"translation", "execution"`: the second, which covers
 * every argument, is kept). Any other is accepted with a warning and
 * ignored. `()` and `(void)` both mean no argument.
 *
 * DESIGN. The parser is deliberately strict about what it does not
 * understand, because everything it accepts is pasted into C and C++ code:
 * an argument type is a run of identifiers and `*` (no arrays, function
 * pointers or parentheses), a name is an identifier of at most 63 bytes
 * (fdr's field name limit), a format is string literals and inttypes.h
 * `PRI*` macros only (and the TARGET_FMT_* macros of older QEMU trees,
 * whole conversions that QEMU's headers define). Types are not resolved
 * here: the generated function declares the arguments as written and fdr's
 * macros pick the field types at compile time.
 *
 * Literals are decoded (escapes included) and re-encoded for output, so the
 * header never holds a raw control byte, a non-ASCII byte or a `??`
 * trigraph, whatever the input. The decoded format is checked like printf
 * would read it: each conversion takes one argument, and the count must
 * equal the number of arguments; a `*` width or precision takes one (an
 * int), as in printf, and a PRI macro right after a whole conversion is
 * text ("%u" PRIx8 is "%ux", valid C). What fdr cannot record or print is
 * refused: positional `%1$d`, `%n`, `%m`, wide `%C`/`%S`.
 * The C compiler later checks each conversion against its argument's type
 * (-Wformat as an error, inside fdr_trace_fields()).
 *
 * Every error is one line "file:line: message" and concerns one line: with
 * set->on_error the line is skipped and parsing goes on. Lines are limited
 * to FDR__GEN_LINE_MAX bytes so a runaway line (a binary file, a missing
 * newline) is caught early. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

struct parser {
    struct fdr__gen_set *set;
    const char *file;
    unsigned line;
    const char *p, *end; /* the current line, without its newline */
    fdr__gen_warn_cb warn;
    void *ctx;
    char *err;
    size_t errlen;
    int nomem;
};

static int fail(struct parser *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Formats the error; always returns -EINVAL so callers can `return fail()`. */
static int fail(struct parser *ps, const char *fmt, ...)
{
    if (ps->errlen) {
        int n = snprintf(ps->err, ps->errlen, "%s:%u: ", ps->file, ps->line);
        if (n >= 0 && (size_t)n < ps->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -EINVAL;
}

static int is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_ident_char(int c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

static int is_space(int c)
{
    return c == ' ' || c == '\t';
}

/* A byte for a message: itself when printable, else \xNN. */
static const char *show(char buf[8], unsigned char c)
{
    if (c >= 0x20 && c < 0x7f && c != '\'')
        snprintf(buf, 8, "%c", c);
    else
        snprintf(buf, 8, "\\x%02x", c);
    return buf;
}

static void skip_space(struct parser *ps)
{
    while (ps->p < ps->end && is_space(*ps->p))
        ps->p++;
}

/* Length of the identifier at p (0 if none). */
static size_t ident_len(const char *p, const char *end)
{
    if (p >= end || !is_ident_start((unsigned char)*p))
        return 0;
    size_t n = 1;
    while (p + n < end && is_ident_char((unsigned char)p[n]))
        n++;
    return n;
}

static int ident_is(const char *p, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(p, word, n) == 0;
}

static int in_list(const char *p, size_t n, const char *const *list)
{
    for (; *list; list++)
        if (ident_is(p, n, *list))
            return 1;
    return 0;
}

/* Words that cannot name an argument in C (the stdbool macros included). */
static const char *const c_keywords[] = {"auto",
                                         "break",
                                         "case",
                                         "char",
                                         "const",
                                         "continue",
                                         "default",
                                         "do",
                                         "double",
                                         "else",
                                         "enum",
                                         "extern",
                                         "float",
                                         "for",
                                         "goto",
                                         "if",
                                         "inline",
                                         "int",
                                         "long",
                                         "register",
                                         "restrict",
                                         "return",
                                         "short",
                                         "signed",
                                         "sizeof",
                                         "static",
                                         "struct",
                                         "switch",
                                         "typedef",
                                         "union",
                                         "unsigned",
                                         "void",
                                         "volatile",
                                         "while",
                                         "_Bool",
                                         "_Complex",
                                         "_Imaginary",
                                         "_Alignas",
                                         "_Alignof",
                                         "_Atomic",
                                         "_Generic",
                                         "_Noreturn",
                                         "_Static_assert",
                                         "_Thread_local",
                                         "bool",
                                         "true",
                                         "false",
                                         "asm",
                                         "typeof",
                                         "__attribute__",
                                         NULL};

/* C++ keywords that are plain identifiers in C: the parameter is renamed
 * name_ (the field keeps its name) so the header also compiles as C++. */
static const char *const cxx_keywords[] = {
    "alignas",    "alignof",       "and",          "and_eq",
    "bitand",     "bitor",         "catch",        "char8_t",
    "char16_t",   "char32_t",      "class",        "compl",
    "concept",    "consteval",     "constexpr",    "constinit",
    "const_cast", "co_await",      "co_return",    "co_yield",
    "decltype",   "delete",        "dynamic_cast", "explicit",
    "export",     "friend",        "mutable",      "namespace",
    "new",        "noexcept",      "not",          "not_eq",
    "nullptr",    "operator",      "or",           "or_eq",
    "private",    "protected",     "public",       "reinterpret_cast",
    "requires",   "static_assert", "static_cast",  "template",
    "this",       "thread_local",  "throw",        "try",
    "typeid",     "typename",      "using",        "virtual",
    "wchar_t",    "xor",           "xor_eq",       NULL};

static char *dup_n(struct parser *ps, const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) {
        ps->nomem = 1;
        return NULL;
    }
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

static void event_free(struct fdr__gen_event *ev)
{
    free(ev->name);
    free(ev->file);
    free(ev->format);
    for (size_t i = 0; i < ev->nargs; i++) {
        free(ev->args[i].type);
        free(ev->args[i].name);
        free(ev->args[i].param);
    }
}

void fdr__gen_set_free(struct fdr__gen_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        event_free(&set->events[i]);
    free(set->events);
    for (size_t i = 0; i < set->nstructs; i++)
        free(set->structs[i]);
    free(set->structs);
    memset(set, 0, sizeof(*set));
}

int fdr__gen_valid_provider(const char *s)
{
    size_t n = strlen(s);
    return n && n <= FDR__GEN_IDENT_MAX && ident_len(s, s + n) == n;
}

/* Remembers "struct Tag" / "union Tag" for a forward declaration. */
static int add_struct(struct parser *ps, const char *kw, const char *tag, size_t n)
{
    struct fdr__gen_set *set = ps->set;
    char s[FDR__GEN_IDENT_MAX * 2 + 8];
    snprintf(s, sizeof(s), "%s %.*s", kw, (int)n, tag);
    for (size_t i = 0; i < set->nstructs; i++)
        if (strcmp(set->structs[i], s) == 0)
            return 0;
    if (set->nstructs == set->capstructs) {
        size_t cap = set->capstructs ? set->capstructs * 2 : 8;
        char **more = realloc(set->structs, cap * sizeof(*more));
        if (!more) {
            ps->nomem = 1;
            return -ENOMEM;
        }
        set->structs = more;
        set->capstructs = cap;
    }
    set->structs[set->nstructs] = dup_n(ps, s, strlen(s));
    if (!set->structs[set->nstructs])
        return -ENOMEM;
    set->nstructs++;
    return 0;
}

#define ARG_TOKENS_MAX 32

/* One argument declaration [b, e): identifiers and '*', the last identifier
 * being the name. Fills a->type (normalised spacing: "const char *",
 * "char * const *", "uint8_t **") and a->name/param. */
static int parse_arg(struct parser *ps, struct fdr__gen_event *ev, unsigned idx,
                     const char *b, const char *e)
{
    struct fdr__gen_arg *a = &ev->args[ev->nargs];
    struct {
        const char *p;
        size_t n;
    } t[ARG_TOKENS_MAX];
    size_t nt = 0, nident = 0;
    char c8[8];

    for (const char *p = b; p < e;) {
        if (is_space(*p)) {
            p++;
            continue;
        }
        size_t n = ident_len(p, e);
        if (!n && *p != '*')
            return fail(ps, "unexpected character '%s' in argument %u",
                        show(c8, (unsigned char)*p), idx);
        if (nt == ARG_TOKENS_MAX)
            return fail(ps, "argument %u has more than %d words", idx, ARG_TOKENS_MAX);
        if (n > FDR__GEN_IDENT_MAX)
            return fail(ps, "argument %u: identifier longer than %d bytes", idx,
                        FDR__GEN_IDENT_MAX);
        t[nt].p = p;
        t[nt].n = n ? n : 1;
        nident += n != 0;
        p += t[nt++].n;
    }
    if (!nt)
        return fail(ps, "argument %u is empty", idx);
    const char *name = t[nt - 1].p;
    size_t namen = t[nt - 1].n;
    if (*name == '*' || in_list(name, namen, c_keywords))
        return fail(ps, "argument %u has no name", idx);
    if (nident < 2)
        return fail(ps, "argument %u has no type", idx);
    if (namen >= 5 && memcmp(name, "fdr__", 5) == 0)
        return fail(ps, "argument %u: names starting with fdr__ are reserved", idx);
    for (size_t i = 0; i < ev->nargs; i++)
        if (ident_is(name, namen, ev->args[i].name))
            return fail(ps, "duplicate argument name '%.*s'", (int)namen, name);

    char type[ARG_TOKENS_MAX * (FDR__GEN_IDENT_MAX + 1) + 1];
    size_t tn = 0;
    for (size_t i = 0; i + 1 < nt; i++) {
        int is_tag_kw =
            ident_is(t[i].p, t[i].n, "struct") || ident_is(t[i].p, t[i].n, "union");
        if (is_tag_kw) {
            if (i + 2 >= nt || *t[i + 1].p == '*')
                return fail(ps, "argument %u: '%.*s' without a tag", idx, (int)t[i].n,
                            t[i].p);
            if (add_struct(ps, *t[i].p == 's' ? "struct" : "union", t[i + 1].p,
                           t[i + 1].n))
                return -ENOMEM;
        }
        /* a space between words and before the first '*' of a run */
        if (i && !(*t[i].p == '*' && *t[i - 1].p == '*'))
            type[tn++] = ' ';
        memcpy(type + tn, t[i].p, t[i].n);
        tn += t[i].n;
    }
    a->type = dup_n(ps, type, tn);
    a->name = dup_n(ps, name, namen);
    if (in_list(name, namen, cxx_keywords)) {
        a->param = malloc(namen + 2);
        if (a->param) {
            memcpy(a->param, name, namen);
            memcpy(a->param + namen, "_", 2);
        } else {
            ps->nomem = 1;
        }
    } else {
        a->param = dup_n(ps, name, namen);
    }
    ev->nargs++; /* owned by ev from here on, freed with it */
    if (!a->type || !a->name || !a->param)
        return -ENOMEM;
    return 0;
}

/* The argument list after '(' up to the matching ')'. */
static int parse_args(struct parser *ps, struct fdr__gen_event *ev)
{
    const char *b = ps->p, *q = b;
    while (q < ps->end && *q != ')') {
        if (*q == '(')
            return fail(ps, "'(' in the argument list (function pointer types are not "
                            "supported)");
        if (*q == '"')
            return fail(ps, "unbalanced parentheses: missing ')' before the format");
        q++;
    }
    if (q == ps->end)
        return fail(ps, "unbalanced parentheses: missing ')'");
    ps->p = q + 1;

    const char *t = b, *te = q;
    while (t < te && is_space(*t))
        t++;
    while (te > t && is_space(te[-1]))
        te--;
    if (t == te || ident_is(t, (size_t)(te - t), "void"))
        return 0;
    unsigned idx = 1;
    for (const char *s = t;; idx++) {
        const char *c = memchr(s, ',', (size_t)(te - s));
        if (!c)
            c = te;
        if (ev->nargs == FDR__GEN_ARGS_MAX) {
            unsigned total = idx;
            for (const char *r = c; r < te; r++)
                total += *r == ',';
            return fail(ps, "too many arguments (%u; fdr records at most %d)", total,
                        FDR__GEN_ARGS_MAX);
        }
        int rc = parse_arg(ps, ev, idx, s, c);
        if (rc)
            return rc;
        if (c == te)
            break;
        s = c + 1;
    }
    return 0;
}

struct outbuf {
    char *p;
    size_t n, cap;
};

static void out_add(struct outbuf *o, const char *s, size_t n)
{
    /* cap is sized by the caller for the worst case, see parse_format */
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

/* PRI{d,i,o,u,x,X}{8,16,32,64,PTR,MAX,LEAST*,FAST*}: the conversion letter,
 * or 0. */
static int pri_conv(const char *p, size_t n)
{
    static const char *const sizes[] = {
        "8",       "16",      "32",    "64",     "PTR",    "MAX",    "LEAST8", "LEAST16",
        "LEAST32", "LEAST64", "FAST8", "FAST16", "FAST32", "FAST64", NULL};
    if (n < 5 || memcmp(p, "PRI", 3) != 0 || !strchr("diouxX", p[3]))
        return 0;
    return in_list(p + 4, n - 4, sizes) ? p[3] : 0;
}

/* QEMU's TARGET_FMT_lx, _ld, _lu and _plx (older trees): a whole
 * conversion, '%' included, that QEMU's own headers define (the generated
 * header gets them through --include). Its conversion letter, or 0. */
static int target_fmt_conv(const char *p, size_t n)
{
    static const char *const names[] = {"TARGET_FMT_lx", "TARGET_FMT_ld", "TARGET_FMT_lu",
                                        "TARGET_FMT_plx", NULL};
    return in_list(p, n, names) ? p[n - 1] : 0;
}

/* Appends decoded byte c to the output literal, escaped. */
static void put_escaped(struct outbuf *o, unsigned char c, int *prev_q)
{
    char buf[8];
    int q = 0;
    switch (c) {
    case '"':
        out_add(o, "\\\"", 2);
        break;
    case '\\':
        out_add(o, "\\\\", 2);
        break;
    case '\n':
        out_add(o, "\\n", 2);
        break;
    case '\t':
        out_add(o, "\\t", 2);
        break;
    case '\r':
        out_add(o, "\\r", 2);
        break;
    case '?':
        /* "??x" is a trigraph in strict ISO C modes */
        if (*prev_q)
            out_add(o, "\\?", 2);
        else
            out_add(o, "?", 1);
        q = 1;
        break;
    default:
        if (c < 0x20 || c >= 0x7f) {
            snprintf(buf, sizeof(buf), "\\%03o", c);
            out_add(o, buf, 4);
        } else {
            out_add(o, (const char *)&c, 1);
        }
    }
    *prev_q = q;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The decoded format: a byte per element, or 256 + letter for a PRI macro. */
struct dfmt {
    int *v;
    size_t n;
};

/* A string literal at ps->p (on the opening quote). */
static int parse_literal(struct parser *ps, struct outbuf *o, struct dfmt *d)
{
    const char *p = ps->p + 1;
    int prev_q = 0;
    char c8[8];
    out_add(o, "\"", 1);
    for (;;) {
        if (p >= ps->end)
            return fail(ps, "unterminated string");
        unsigned char c = (unsigned char)*p++;
        if (c == '"')
            break;
        if (c == '\\') {
            if (p >= ps->end)
                return fail(ps, "unterminated string");
            unsigned char e = (unsigned char)*p++;
            static const char from[] = "\"'?\\abfnrtv";
            static const char to[] = "\"'?\\\a\b\f\n\r\t\v";
            const char *simple = e ? strchr(from, e) : NULL;
            if (simple) {
                c = (unsigned char)to[simple - from];
            } else if (e >= '0' && e <= '7') {
                unsigned v = e - '0';
                for (int k = 0; k < 2 && p < ps->end && *p >= '0' && *p <= '7'; k++)
                    v = v * 8 + (unsigned)(*p++ - '0');
                if (v > 0xff)
                    return fail(ps, "octal escape out of range in format");
                c = (unsigned char)v;
            } else if (e == 'x') {
                unsigned v = 0;
                int digits = 0;
                while (p < ps->end && hexval((unsigned char)*p) >= 0) {
                    v = v * 16 + (unsigned)hexval((unsigned char)*p++);
                    if (v > 0xff)
                        return fail(ps, "hex escape out of range in format");
                    digits++;
                }
                if (!digits)
                    return fail(ps, "'\\x' without hex digits in format");
                c = (unsigned char)v;
            } else {
                return fail(ps, "unknown escape sequence '\\%s' in format", show(c8, e));
            }
            if (c == 0)
                return fail(ps, "NUL character ('\\0') in format");
        } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
            return fail(ps, "control character '%s' in format", show(c8, c));
        }
        d->v[d->n++] = c;
        put_escaped(o, c, &prev_q);
    }
    out_add(o, "\"", 1);
    ps->p = p;
    return 0;
}

/* Checks the decoded format like printf reads it and records, for each
 * argument, the conversion letter that consumes it. */
static int check_conversions(struct parser *ps, struct fdr__gen_event *ev,
                             const struct dfmt *d)
{
    size_t nconv = 0;
    char c8[8];
    int after_conv = 0;
    for (size_t i = 0; i < d->n;) {
        int c = d->v[i++];
        /* "%u" PRIx8 is valid C: the macro is plain text after a whole
         * conversion ("%ux"); anywhere else it is a missing '%' */
        if (c >= 256 && !after_conv)
            return fail(ps, "PRI%c* macro not preceded by '%%' in format", c - 256);
        after_conv = 0;
        if (c != '%')
            continue;
        if (i < d->n && d->v[i] == '%') {
            i++;
            continue;
        }
        while (i < d->n && d->v[i] < 256 && strchr("-+ #0", d->v[i]) && d->v[i])
            i++;
        if (i < d->n && d->v[i] == '\'')
            return fail(ps, "flag ''' in format is not supported");
        if (i < d->n && d->v[i] == '*') { /* the width is an argument */
            i++;
            if (nconv < ev->nargs)
                ev->args[nconv].conv = '*';
            nconv++;
        }
        while (i < d->n && d->v[i] >= '0' && d->v[i] <= '9')
            i++;
        if (i < d->n && d->v[i] == '$')
            return fail(ps, "positional argument ('%%N$') in format is not supported");
        if (i < d->n && d->v[i] == '.') {
            i++;
            if (i < d->n && d->v[i] == '*') {
                i++;
                if (nconv < ev->nargs)
                    ev->args[nconv].conv = '*';
                nconv++;
            }
            while (i < d->n && d->v[i] >= '0' && d->v[i] <= '9')
                i++;
        }
        while (i < d->n && d->v[i] < 256 && d->v[i] && strchr("hlLqjzt", d->v[i]))
            i++;
        if (i == d->n)
            return fail(ps, "format ends inside a conversion");
        c = d->v[i++];
        if (c >= 256)
            c -= 256;
        else if (c == 'n')
            return fail(ps, "'%%n' in format is not allowed");
        else if (c == 'm')
            return fail(ps, "'%%m' in format is not supported (it takes no argument)");
        else if (!strchr("diouxXcspeEfFgGaA", c) || !c)
            return fail(ps, "unknown conversion '%%%s' in format",
                        show(c8, (unsigned char)c));
        if (nconv < ev->nargs)
            ev->args[nconv].conv = (char)c;
        nconv++;
        after_conv = 1;
    }
    if (nconv != ev->nargs)
        return fail(ps, "format has %zu conversion%s but the event has %zu argument%s",
                    nconv, nconv == 1 ? "" : "s", ev->nargs, ev->nargs == 1 ? "" : "s");
    return 0;
}

/* What a `vcpu` event's format starts with: QEMU's tracetool adds the
 * CPUState argument, first, and prints it so. */
#define VCPU_PREFIX "cpu=%p "

/* The format after ')': literals and PRI macros up to the end of the line.
 * A `tcg` event may have two, "translation", "execution" (QEMU before
 * 5.1): the second, which covers every argument, is kept. */
static int parse_format(struct parser *ps, struct fdr__gen_event *ev)
{
    size_t len = (size_t)(ps->end - ps->p);
    /* each input byte gives at most 4 output bytes (\ooo), plus a space
     * between tokens, plus the vcpu prefix */
    size_t cap = len * 5 + 8 + sizeof(VCPU_PREFIX) + 2;
    struct outbuf o = {malloc(cap), 0, cap};
    struct dfmt d = {malloc((len + sizeof(VCPU_PREFIX)) * sizeof(int)), 0};
    int rc = 0, tokens = 0, literals = 0, formats = 1;
    size_t prefix_o = 0, prefix_d = 0;
    char c8[8];
    if (!o.p || !d.v) {
        ps->nomem = 1;
        rc = -ENOMEM;
        goto out;
    }
    if (ev->vcpu) {
        out_add(&o, "\"" VCPU_PREFIX "\"", sizeof(VCPU_PREFIX) + 1);
        for (const char *c = VCPU_PREFIX; *c; c++)
            d.v[d.n++] = *c;
        prefix_o = o.n;
        prefix_d = d.n;
    }
    for (;;) {
        skip_space(ps);
        if (ps->p == ps->end)
            break;
        if (tokens || o.n)
            out_add(&o, " ", 1);
        if (*ps->p == '"') {
            rc = parse_literal(ps, &o, &d);
            if (rc)
                goto out;
            literals++;
        } else if (is_ident_start((unsigned char)*ps->p)) {
            size_t n = ident_len(ps->p, ps->end);
            int conv = pri_conv(ps->p, n), tconv = target_fmt_conv(ps->p, n);
            if (!tokens) {
                rc = fail(ps, "expected a format string after ')'");
                goto out;
            }
            if (tconv) {
                out_add(&o, ps->p, n);
                d.v[d.n++] = '%';
                d.v[d.n++] = 256 + tconv;
                ps->p += n;
                tokens++;
                continue;
            }
            if (!conv) {
                rc = fail(ps,
                          "unexpected '%.*s' in format (only string literals and "
                          "inttypes.h PRI* macros)",
                          (int)(n > FDR__GEN_IDENT_MAX ? FDR__GEN_IDENT_MAX : n), ps->p);
                goto out;
            }
            out_add(&o, ps->p, n);
            d.v[d.n++] = 256 + conv;
            ps->p += n;
        } else if (*ps->p == ')') {
            rc = fail(ps, "unbalanced parentheses: unexpected ')'");
            goto out;
        } else if (!tokens) {
            rc = fail(ps, "expected a format string after ')'");
            goto out;
        } else if (*ps->p == ',' && ev->tcg && literals && formats == 1) {
            o.n = prefix_o; /* the translation-time format is dropped */
            d.n = prefix_d;
            tokens = literals = 0;
            formats++;
            ps->p++;
            continue;
        } else {
            rc = fail(ps, "unexpected character '%s' after the format",
                      show(c8, (unsigned char)*ps->p));
            goto out;
        }
        tokens++;
    }
    if (!literals && ev->nargs) {
        rc = fail(ps, "missing format string");
        goto out;
    }
    if (!literals)
        out_add(&o, "\"\"", 2); /* QEMU allows `name(void)` alone */
    rc = check_conversions(ps, ev, &d);
    if (rc)
        goto out;
    ev->format = dup_n(ps, o.p, o.n);
    if (!ev->format)
        rc = -ENOMEM;
out:
    free(o.p);
    free(d.v);
    return rc;
}

/* Refuses a name that is, or would generate the same C name as, one
 * already defined. */
static int check_clash(struct parser *ps, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < ps->set->n; i++) {
        const struct fdr__gen_event *e = &ps->set->events[i];
        size_t en = strlen(e->name);
        if (strcmp(e->name, name) == 0)
            return fail(ps, "duplicate event '%s' (first defined at %s:%u)", name,
                        e->file, e->line);
        if (en == n && strcasecmp(e->name, name) == 0) {
            char up[FDR__GEN_IDENT_MAX + 1];
            for (size_t k = 0; k <= n; k++)
                up[k] = (char)(name[k] >= 'a' && name[k] <= 'z' ? name[k] - 32 : name[k]);
            return fail(
                ps, "event '%s' clashes with '%s' (%s:%u): both define TRACE_%s_ENABLED",
                name, e->name, e->file, e->line, up);
        }
        const char *longer = en > n ? e->name : name, *shorter = en > n ? name : e->name;
        size_t sn = en > n ? n : en;
        if (strlen(longer) == sn + 8 && memcmp(longer, shorter, sn) == 0 &&
            strcmp(longer + sn, "_enabled") == 0)
            return fail(ps,
                        "event '%s' clashes with '%s' (%s:%u): both define trace_%s()",
                        name, e->name, e->file, e->line, longer);
    }
    return 0;
}

/* A `vcpu` event's implicit first argument, as QEMU's tracetool adds it:
 * CPUState *cpu, printed with %p (see VCPU_PREFIX). */
static int add_vcpu_arg(struct parser *ps, struct fdr__gen_event *ev)
{
    struct fdr__gen_arg *a = &ev->args[ev->nargs];
    a->type = dup_n(ps, "struct CPUState *", 17);
    a->name = dup_n(ps, "cpu", 3);
    a->param = dup_n(ps, "cpu", 3);
    ev->nargs++;
    if (!a->type || !a->name || !a->param)
        return -ENOMEM;
    return add_struct(ps, "struct", "CPUState", 8);
}

static int parse_line(struct parser *ps)
{
    struct fdr__gen_event ev;
    char c8[8];
    int rc;
    memset(&ev, 0, sizeof(ev));

    skip_space(ps);
    if (ps->p == ps->end || *ps->p == '#')
        return 0;
    /* properties, then the name */
    for (;;) {
        size_t n = ident_len(ps->p, ps->end);
        if (!n)
            return fail(ps, "expected an event name, found '%s'",
                        show(c8, (unsigned char)*ps->p));
        const char *id = ps->p;
        ps->p += n;
        skip_space(ps);
        if (ps->p < ps->end && *ps->p == '(') {
            if (n > FDR__GEN_IDENT_MAX)
                return fail(ps, "event name longer than %d bytes", FDR__GEN_IDENT_MAX);
            if (n >= 5 && memcmp(id, "fdr__", 5) == 0)
                return fail(ps, "event names starting with fdr__ are reserved");
            ev.name = dup_n(ps, id, n);
            if (!ev.name)
                return -ENOMEM;
            ps->p++;
            break;
        }
        if (ps->p == ps->end || !is_ident_start((unsigned char)*ps->p))
            return fail(ps, "expected '(' after event name '%.*s'",
                        (int)(n > FDR__GEN_IDENT_MAX ? FDR__GEN_IDENT_MAX : n), id);
        if (ident_is(id, n, "disable")) {
            ev.disabled = 1;
        } else if (ident_is(id, n, "tcg")) {
            ev.tcg = 1;
        } else if (ident_is(id, n, "vcpu")) {
            ev.vcpu = 1;
        } else if (ps->warn) {
            char msg[256];
            snprintf(msg, sizeof(msg), "%s:%u: warning: unknown property '%.*s' ignored",
                     ps->file, ps->line,
                     (int)(n > FDR__GEN_IDENT_MAX ? FDR__GEN_IDENT_MAX : n), id);
            ps->warn(ps->ctx, msg);
        }
    }
    rc = check_clash(ps, ev.name);
    if (!rc && ev.vcpu)
        rc = add_vcpu_arg(ps, &ev);
    if (!rc)
        rc = parse_args(ps, &ev);
    if (!rc)
        rc = parse_format(ps, &ev);
    if (!rc) {
        ev.file = dup_n(ps, ps->file, strlen(ps->file));
        ev.line = ps->line;
        rc = ev.file ? 0 : -ENOMEM;
    }
    struct fdr__gen_set *set = ps->set;
    if (!rc && set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 64;
        struct fdr__gen_event *more = realloc(set->events, cap * sizeof(*more));
        if (more) {
            set->events = more;
            set->cap = cap;
        } else {
            rc = -ENOMEM;
        }
    }
    if (rc) {
        event_free(&ev);
        return rc;
    }
    set->events[set->n++] = ev;
    return 0;
}

int fdr__gen_parse(struct fdr__gen_set *set, const char *file, const char *text,
                   size_t len, fdr__gen_warn_cb warn, void *ctx, char *err, size_t errlen)
{
    char msg[1024];
    struct parser ps = {set, file, 0, NULL, NULL, warn, ctx, msg, sizeof(msg), 0};
    const char *end = text + len;
    int bad = 0;
    if (errlen)
        err[0] = 0;
    for (const char *p = text; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        int rc;
        ps.line++;
        ps.p = p;
        ps.end = le;
        if (le > p && le[-1] == '\r')
            ps.end--;
        msg[0] = 0;
        if ((size_t)(ps.end - p) > FDR__GEN_LINE_MAX)
            rc = fail(&ps, "line too long (more than %d bytes)", FDR__GEN_LINE_MAX);
        else if (memchr(p, 0, (size_t)(ps.end - p)))
            rc = fail(&ps, "NUL byte in line");
        else
            rc = parse_line(&ps);
        if (rc && ps.nomem)
            return -ENOMEM;
        if (rc) {
            if (!bad++ && errlen)
                snprintf(err, errlen, "%s", msg);
            if (!set->on_error)
                return rc;
            set->on_error(set->on_error_ctx, msg); /* the line is skipped */
        }
        p = nl ? nl + 1 : end;
    }
    return bad ? -EINVAL : 0;
}
