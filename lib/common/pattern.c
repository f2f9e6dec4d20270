/* SPDX-License-Identifier: MIT */
/* pattern.c - the event-pattern language: which events to trace, plus tunables.
 *
 * A spec (FDR_TRACES, FDR_EVENTS, fdr_trace_set()) is a list of ITEMS parted
 * by ',' ';' or white space, e.g. "net:*:-net:rx virtio_* ring_kb=64 @my.conf".
 *
 *   [+|-]GLOB           event name glob, in any provider   virtio_*  -*_debug
 *   [+|-]PGLOB:EGLOB    provider glob and event glob       net:rx_?  -*:tick
 *   NAME=VALUE          tunable; VALUE is an integer (-3, 0x1f) or a float
 *                       (1.5e3), checked here and kept in order, not applied
 *   @PATH               read items from a file: same syntax, '#' comments to
 *                       end of line, relative paths from the including file
 *   help  list          set the help flag (the caller prints the help)
 *   all  none           the same as "*" and "-*" ("all" takes a sign)
 *
 * '-' turns matching events off, '+' or nothing turns them on. A ':' right
 * after a complete PGLOB:EGLOB item is a separator too, so "net:*:-net:rx" is
 * "net:*,-net:rx"; a token with an even number of ':' ("a:b:c") cannot be cut
 * into such pairs and is rejected whole, but one trailing ':' is ignored.
 * Globs are '*' '?' '[a-z]' '[!x]' over names of [A-Za-z0-9_]; nothing else
 * may appear in an item (so a name like "help" is matched with "*:help").
 *
 * DESIGN. Parsing turns the spec into an array of rules (provider glob or
 * "any", event glob, on/off) plus a string pool; matching walks the rules from
 * the LAST one back and the first hit decides: later items override earlier
 * ones, and no hit means -1 ("unspecified", the caller keeps its default).
 * Matching is meant for the slow path (event class registration, a spec
 * change), and reads the rules only, so a parsed set is shared by
 * threads without locks. Globs match with the iterative one-star-backtrack
 * algorithm: O(glob * text), no recursion, no blow-up.
 *
 * Bad input never stops a parse: each bad item (malformed, longer than 255
 * bytes, unreadable file, ...) gives exactly one warning line naming it, e.g.
 *   fdr: FDR_TRACES: ignoring malformed item "net:[rx": unterminated '['
 * and the rest applies. Only ENOMEM fails. Includes are bounded (depth 4, 64
 * files of 16 MiB, no loops), so parsing is linear in the input size. */
#define _GNU_SOURCE
#include "common/pattern.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NO_PROVIDER SIZE_MAX
#define QUOTE_MAX 80 /* bytes of an item shown in a warning */
#define PATH_LEN_MAX 4095
#define STR_(x) #x
#define STR(x) STR_(x)

struct rule {
    size_t provider; /* pool offset, or NO_PROVIDER: match the event name only */
    size_t event;    /* pool offset */
    int on;
};

struct tunable {
    size_t name, value; /* pool offsets */
    double dbl;
    long long ll;
    int is_integer;
};

struct fdr__rules {
    struct rule *rules;
    size_t nrules, rules_cap;
    struct tunable *tunables;
    size_t ntunables, tunables_cap;
    char *pool; /* NUL-terminated strings, addressed by offset */
    size_t pool_len, pool_cap;
    int help;
};

/* One open @file, for loop detection. */
struct open_file {
    dev_t dev;
    ino_t ino;
};

struct parser {
    struct fdr__rules *r;
    const char *origin;
    unsigned flags;
    fdr__warn_fn warn;
    void *ctx;
    int enomem;
    int nfiles;
    int depth; /* files currently open */
    struct open_file open[FDR__PATTERN_FILE_DEPTH];
};

/* Where the text being parsed comes from: the spec (file NULL) or a file. */
struct source {
    const char *file;
    unsigned long line;
};

/* strerror_r's text for e: glibc's (with _GNU_SOURCE) returns it, POSIX's
 * (musl) fills buf. */
static const char *error_text(int e, char *buf, size_t cap)
{
#if defined(__GLIBC__)
    return strerror_r(e, buf, cap);
#else
    return strerror_r(e, buf, cap) == 0 ? buf : "unknown error";
#endif
}

/* ---- growing storage ---------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2 / size)
            return -ENOMEM;
        n *= 2;
    }
    void *q = realloc(*p, n * size);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

/* Copies s[0..n) plus a NUL into the pool; returns its offset or SIZE_MAX. */
static size_t pool_add(struct parser *p, const char *s, size_t n)
{
    struct fdr__rules *r = p->r;
    void *pool = r->pool;
    if (n >= SIZE_MAX - r->pool_len - 1 ||
        grow(&pool, &r->pool_cap, r->pool_len + n + 1, 1)) {
        p->enomem = 1;
        return SIZE_MAX;
    }
    r->pool = pool;
    size_t off = r->pool_len;
    memcpy(r->pool + off, s, n);
    r->pool[off + n] = '\0';
    r->pool_len += n + 1;
    return off;
}

static void add_rule(struct parser *p, const char *provider, const char *event, int on)
{
    struct fdr__rules *r = p->r;
    void *rules = r->rules;
    if (grow(&rules, &r->rules_cap, r->nrules + 1, sizeof(struct rule))) {
        p->enomem = 1;
        return;
    }
    r->rules = rules;
    struct rule ru = {NO_PROVIDER, 0, on};
    if (provider && (ru.provider = pool_add(p, provider, strlen(provider))) == SIZE_MAX)
        return;
    if ((ru.event = pool_add(p, event, strlen(event))) == SIZE_MAX)
        return;
    r->rules[r->nrules++] = ru;
}

/* ---- warnings ----------------------------------------------------------- */

static void warnf(struct parser *p, const struct source *src, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warnf(struct parser *p, const struct source *src, const char *fmt, ...)
{
    if (!p->warn)
        return;
    char buf[1024];
    int n;
    if (src->file)
        n = snprintf(buf, sizeof(buf), "fdr: %s: %s:%lu: ", p->origin, src->file,
                     src->line);
    else
        n = snprintf(buf, sizeof(buf), "fdr: %s: ", p->origin);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof(buf)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
        va_end(ap);
    }
    /* origin and file names come from the caller: keep the message one line */
    for (char *c = buf; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    p->warn(p->ctx, buf);
}

/* Writes s[0..n) for a warning: at most QUOTE_MAX bytes, '"' '\' and
 * non-printable bytes escaped, "..." when cut. out needs QUOTE_MAX*4 + 4. */
static const char *quote(const char *s, size_t n, char *out)
{
    char *o = out;
    for (size_t i = 0; i < n && i < QUOTE_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            o += sprintf(o, "\\x%02x", c);
        } else {
            *o++ = (char)c;
        }
    }
    if (n > QUOTE_MAX)
        o = stpcpy(o, "...");
    *o = '\0';
    return out;
}

#define QUOTE_BUF (QUOTE_MAX * 4 + 4)

static void bad_item(struct parser *p, const struct source *src, const char *item,
                     size_t n, const char *why)
{
    char q[QUOTE_BUF];
    warnf(p, src, "ignoring malformed item \"%s\": %s", quote(item, n, q), why);
}

/* ---- names and globs ---------------------------------------------------- */

static int is_sep(char c)
{
    return c == ',' || c == ';' || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
           c == '\v' || c == '\f';
}

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

static void bad_char(char c, char *why, size_t size, const char *where)
{
    unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u < 0x7f && u != '\'' && u != '\\')
        snprintf(why, size, "invalid character '%c'%s", c, where);
    else
        snprintf(why, size, "invalid character '\\x%02x'%s", u, where);
}

/* Scans a class after its '[' against byte c. Returns the byte after ']' and
 * sets *hit, or returns NULL if the class has no ']'. A ']' first in the class
 * is a member, as in fnmatch(3). */
static const char *class_scan(const char *g, unsigned char c, int *hit)
{
    int neg = 0, in = 0;
    if (*g == '!' || *g == '^') {
        neg = 1;
        g++;
    }
    const char *first = g;
    while (*g && (*g != ']' || g == first)) {
        unsigned char lo = (unsigned char)g[0], hi = lo;
        if (g[1] == '-' && g[2] && g[2] != ']') {
            hi = (unsigned char)g[2];
            g += 3;
        } else {
            g++;
        }
        if (lo <= c && c <= hi)
            in = 1;
    }
    if (*g != ']')
        return NULL;
    *hit = in ^ neg;
    return g + 1;
}

/* Checks a glob of an item; returns NULL if fine, else the reason (in why). */
static const char *check_glob(const char *g, const char *empty, char *why, size_t size)
{
    if (!*g)
        return empty;
    while (*g) {
        if (*g == '*' || *g == '?' || is_name_char(*g)) {
            g++;
            continue;
        }
        if (*g != '[') {
            bad_char(*g, why, size, "");
            return why;
        }
        /* same walk as class_scan(), with every member checked */
        g++;
        if (*g == '!' || *g == '^')
            g++;
        if (*g == ']')
            return "empty '[]'";
        while (*g && *g != ']') {
            char lo = g[0], hi = lo;
            if (g[1] == '-' && g[2] && g[2] != ']') {
                hi = g[2];
                if (!is_name_char(lo) || !is_name_char(hi)) {
                    bad_char(is_name_char(lo) ? hi : lo, why, size, "");
                    return why;
                }
                if ((unsigned char)lo > (unsigned char)hi) {
                    snprintf(why, size, "reversed range '%c-%c'", lo, hi);
                    return why;
                }
                g += 3;
            } else {
                if (!is_name_char(lo)) {
                    bad_char(lo, why, size, "");
                    return why;
                }
                g++;
            }
        }
        if (!*g)
            return "unterminated '['";
        g++;
    }
    return NULL;
}

int fdr__glob_match(const char *g, const char *t)
{
    const char *star_g = NULL, *star_t = NULL;
    if (!g)
        g = "";
    if (!t)
        t = "";
    /* Cost: each step advances g and t or restarts after the last '*' with
     * t one byte further, so at most len(glob) * len(text) steps. */
    for (;;) {
        if (*g == '*') {
            while (*g == '*')
                g++;
            if (!*g)
                return 1;
            star_g = g;
            star_t = t;
            continue;
        }
        if (*t) {
            if (*g == '?') {
                g++;
                t++;
                continue;
            }
            if (*g == '[') {
                int hit;
                const char *end = class_scan(g + 1, (unsigned char)*t, &hit);
                if (end) {
                    if (hit) {
                        g = end;
                        t++;
                        continue;
                    }
                    goto backtrack;
                }
                /* no ']': a literal '[' */
            }
            if (*g == *t) {
                g++;
                t++;
                continue;
            }
        } else if (!*g) {
            return 1;
        }
    backtrack:
        /* the last '*' absorbs one more byte; earlier stars never need to */
        if (!star_g || !*star_t)
            return 0;
        g = star_g;
        t = ++star_t;
    }
}

/* ---- numbers ------------------------------------------------------------ */

static int digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int store_integer(unsigned long long mag, int neg, int overflow, double *dbl,
                         long long *ll, int *is_integer)
{
    long long v;
    if (overflow || mag > (unsigned long long)LLONG_MAX + (neg ? 1u : 0u))
        return -ERANGE;
    if (neg)
        v = mag == (unsigned long long)LLONG_MAX + 1u ? LLONG_MIN : -(long long)mag;
    else
        v = (long long)mag;
    if (dbl)
        *dbl = (double)v;
    if (ll)
        *ll = v;
    if (is_integer)
        *is_integer = 1;
    return 0;
}

int fdr__parse_number(const char *text, double *dbl, long long *ll, int *is_integer)
{
    if (!text)
        return -EINVAL;
    const char *s = text;
    int neg = 0;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';

    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        unsigned long long mag = 0;
        int overflow = 0;
        s += 2;
        if (!*s)
            return -EINVAL;
        for (; *s; s++) {
            int d = digit_value(*s);
            if (d < 0)
                return -EINVAL;
            if (mag > (ULLONG_MAX - (unsigned)d) / 16)
                overflow = 1;
            mag = mag * 16 + (unsigned)d;
        }
        return store_integer(mag, neg, overflow, dbl, ll, is_integer);
    }

    /* decimal: digits [. digits] [e [+-] digits], at least one mantissa digit */
    const char *p = s;
    size_t mant = 0;
    int is_int = 1;
    while (*p >= '0' && *p <= '9')
        p++, mant++;
    if (*p == '.') {
        is_int = 0;
        for (p++; *p >= '0' && *p <= '9'; p++)
            mant++;
    }
    if (!mant)
        return -EINVAL;
    if (*p == 'e' || *p == 'E') {
        is_int = 0;
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return -EINVAL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p)
        return -EINVAL;

    if (is_int) {
        unsigned long long mag = 0;
        int overflow = 0;
        for (; *s; s++) {
            unsigned d = (unsigned)(*s - '0');
            if (mag > (ULLONG_MAX - d) / 10)
                overflow = 1;
            mag = mag * 10 + d;
        }
        return store_integer(mag, neg, overflow, dbl, ll, is_integer);
    }

    /* strtod_l with the C locale: '.' is the decimal point whatever
     * setlocale() says (newlocale("C") does not allocate on glibc) */
    locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!c_locale)
        return -ENOMEM;
    char *end;
    double v = strtod_l(text, &end, c_locale);
    freelocale(c_locale);
    if (end != p)
        return -EINVAL;
    if (isinf(v))
        return -ERANGE;
    if (dbl)
        *dbl = v;
    if (ll) {
        if (v >= 9223372036854775808.0)
            *ll = LLONG_MAX;
        else if (v < -9223372036854775808.0)
            *ll = LLONG_MIN;
        else
            *ll = (long long)v;
    }
    if (is_integer)
        *is_integer = 0;
    return 0;
}

/* ---- items -------------------------------------------------------------- */

static void parse_buffer(struct parser *p, const char *buf, size_t len, const char *file);

/* Copies an item into a C string, or warns (too long, NUL byte) and fails. */
static int item_copy(struct parser *p, const struct source *src, const char *s, size_t n,
                     char out[FDR__PATTERN_ITEM_MAX + 1])
{
    char why[64];
    if (n > FDR__PATTERN_ITEM_MAX) {
        snprintf(why, sizeof(why), "longer than %d bytes", FDR__PATTERN_ITEM_MAX);
        bad_item(p, src, s, n, why);
        return -1;
    }
    if (memchr(s, '\0', n)) {
        bad_item(p, src, s, n, "invalid character '\\x00'");
        return -1;
    }
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}

/* GLOB or PGLOB:EGLOB (colon at s[colon], or colon == n for none), signed. */
static void event_item(struct parser *p, const struct source *src, const char *s,
                       size_t n, size_t colon)
{
    char item[FDR__PATTERN_ITEM_MAX + 1], why[64];
    const char *err;
    if (item_copy(p, src, s, n, item))
        return;
    char *provider = item, *event = NULL;
    int on = 1, sign = 0;
    if (*provider == '+' || *provider == '-') {
        on = *provider++ == '+';
        sign = 1;
    }
    if (colon < n) {
        item[colon] = '\0';
        event = item + colon + 1;
        err = check_glob(provider, "empty provider pattern", why, sizeof(why));
        if (!err)
            err = check_glob(event, "empty event pattern", why, sizeof(why));
        if (err) {
            bad_item(p, src, s, n, err);
            return;
        }
        add_rule(p, provider, event, on);
        return;
    }

    /* one glob (in provider), or a keyword */
    event = provider;
    if (!strcmp(event, "all")) {
        event = "*";
    } else if (!strcmp(event, "none") || !strcmp(event, "help") ||
               !strcmp(event, "list")) {
        if (sign) {
            snprintf(why, sizeof(why), "'%.4s' takes no sign", event);
            bad_item(p, src, s, n, why);
        } else if (*event == 'n') {
            add_rule(p, NULL, "*", 0);
        } else {
            p->r->help = 1;
        }
        return;
    }
    err = check_glob(event, "empty pattern", why, sizeof(why));
    if (err) {
        bad_item(p, src, s, n, err);
        return;
    }
    add_rule(p, NULL, event, on);
}

/* A token holding ':' : PGLOB:EGLOB items joined by ':'. */
static void chain_item(struct parser *p, const struct source *src, const char *s,
                       size_t n)
{
    size_t colons = 0;
    for (size_t i = 0; i < n; i++)
        colons += s[i] == ':';
    size_t len = n;
    if (colons % 2 == 0) {
        if (s[n - 1] != ':') {
            bad_item(p, src, s, n, "cannot split into provider:event items");
            return;
        }
        len--; /* a ':' after the last complete item is a separator */
    }
    size_t start = 0;
    while (start < len) {
        const char *c1 = memchr(s + start, ':', len - start);
        size_t colon = (size_t)(c1 - (s + start));
        const char *c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - s));
        size_t end = c2 ? (size_t)(c2 - s) : len;
        event_item(p, src, s + start, end - start, colon);
        if (p->enomem)
            return;
        start = end + 1;
    }
}

static void tunable_item(struct parser *p, const struct source *src, const char *s,
                         size_t n)
{
    char item[FDR__PATTERN_ITEM_MAX + 1], why[64];
    if (item_copy(p, src, s, n, item))
        return;
    char *eq = strchr(item, '='), *value = eq + 1;
    *eq = '\0';
    if (!*item) {
        bad_item(p, src, s, n, "empty tunable name");
        return;
    }
    for (const char *c = item; *c; c++) {
        if (!is_name_char(*c)) {
            bad_char(*c, why, sizeof(why), " in tunable name");
            bad_item(p, src, s, n, why);
            return;
        }
    }
    struct tunable t;
    int rc = *value ? fdr__parse_number(value, &t.dbl, &t.ll, &t.is_integer) : -EINVAL;
    if (rc == -ENOMEM) {
        p->enomem = 1;
        return;
    }
    if (rc) {
        bad_item(p, src, s, n,
                 !*value         ? "empty value"
                 : rc == -ERANGE ? "number out of range"
                                 : "invalid number");
        return;
    }
    struct fdr__rules *r = p->r;
    void *tunables = r->tunables;
    if (grow(&tunables, &r->tunables_cap, r->ntunables + 1, sizeof(struct tunable))) {
        p->enomem = 1;
        return;
    }
    r->tunables = tunables;
    if ((t.name = pool_add(p, item, strlen(item))) == SIZE_MAX ||
        (t.value = pool_add(p, value, strlen(value))) == SIZE_MAX)
        return;
    r->tunables[r->ntunables++] = t;
}

/* Reads a regular file of at most FDR__PATTERN_FILE_SIZE bytes from fd.
 * Returns 0 with *buf (malloc'd) and *len, or a negative errno. */
static int read_file(int fd, char **buf, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st))
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EINVAL;
    if (st.st_size < 0 || (unsigned long long)st.st_size > FDR__PATTERN_FILE_SIZE)
        return -EFBIG;
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *b = malloc(cap);
    if (!b)
        return -ENOMEM;
    for (;;) {
        if (n == cap) { /* the file grew while we read it */
            if (cap > FDR__PATTERN_FILE_SIZE) {
                free(b);
                return -EFBIG;
            }
            void *q = realloc(b, cap * 2);
            if (!q) {
                free(b);
                return -ENOMEM;
            }
            b = q;
            cap *= 2;
        }
        ssize_t got = read(fd, b + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(b);
            return -e;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    *buf = b;
    *len = n;
    return 0;
}

static void file_item(struct parser *p, const struct source *src, const char *s, size_t n)
{
    char q[QUOTE_BUF], err[128];
    const char *why = NULL;
    if (n == 1)
        why = "empty file name";
    else if (n - 1 > PATH_LEN_MAX)
        why = "file name too long";
    else if (memchr(s, '\0', n))
        why = "invalid character '\\x00'";
    else if (p->flags & FDR__RULES_NO_FILES)
        why = "files are not read here";
    else if (p->depth >= FDR__PATTERN_FILE_DEPTH)
        why = "files nested more than " STR(FDR__PATTERN_FILE_DEPTH) " deep";
    else if (p->nfiles >= FDR__PATTERN_FILE_COUNT)
        why = "more than " STR(FDR__PATTERN_FILE_COUNT) " files";
    if (why) {
        warnf(p, src, "ignoring \"%s\": %s", quote(s, n, q), why);
        return;
    }

    /* a relative path inside a file is relative to that file's directory */
    const char *slash = src->file ? strrchr(src->file, '/') : NULL;
    size_t dir = s[1] != '/' && slash ? (size_t)(slash - src->file) + 1 : 0;
    char *path = malloc(dir + n);
    if (!path) {
        p->enomem = 1;
        return;
    }
    if (dir)
        memcpy(path, src->file, dir);
    memcpy(path + dir, s + 1, n - 1);
    path[dir + n - 1] = '\0';

    p->nfiles++;
    int fd, rc = 0;
    do
        /* O_NONBLOCK: a FIFO must not hold the program (read_file then
         * refuses it as not a regular file). */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        rc = -errno;

    struct stat st;
    if (!rc && fstat(fd, &st))
        rc = -errno;
    for (int i = 0; !rc && i < p->depth; i++)
        if (p->open[i].dev == st.st_dev && p->open[i].ino == st.st_ino)
            rc = -ELOOP;

    char *buf = NULL;
    size_t len = 0;
    if (!rc)
        rc = read_file(fd, &buf, &len);
    if (fd >= 0)
        close(fd);
    if (rc == -ENOMEM) {
        p->enomem = 1;
    } else if (rc) {
        why = rc == -ELOOP    ? "include loop"
              : rc == -EINVAL ? "not a regular file"
              : rc == -EFBIG  ? "file larger than 16 MiB"
                              : error_text(-rc, err, sizeof(err));
        warnf(p, src, "ignoring \"%s\": %s", quote(s, n, q), why);
    } else {
        p->open[p->depth].dev = st.st_dev;
        p->open[p->depth].ino = st.st_ino;
        p->depth++;
        parse_buffer(p, buf, len, path);
        p->depth--;
    }
    free(buf);
    free(path);
}

static void token(struct parser *p, const struct source *src, const char *s, size_t n)
{
    if (*s == '@')
        file_item(p, src, s, n);
    else if (memchr(s, ':', n))
        chain_item(p, src, s, n);
    else if (memchr(s, '=', n))
        tunable_item(p, src, s, n);
    else
        event_item(p, src, s, n, n);
}

/* Parses buf[0..len): from a file (comments allowed) if file is not NULL.
 * Recursion happens only through file_item(), at most FILE_DEPTH deep. */
static void parse_buffer(struct parser *p, const char *buf, size_t len, const char *file)
{
    struct source src = {file, 1};
    size_t i = 0;
    while (i < len && !p->enomem) {
        char c = buf[i];
        if (is_sep(c)) {
            src.line += c == '\n';
            i++;
        } else if (file && c == '#') {
            while (i < len && buf[i] != '\n')
                i++;
        } else {
            size_t start = i;
            while (i < len && !is_sep(buf[i]) && !(file && buf[i] == '#'))
                i++;
            token(p, &src, buf + start, i - start);
        }
    }
}

/* ---- public ------------------------------------------------------------- */

int fdr__rules_parse_flags(const char *spec, const char *origin, unsigned flags,
                           fdr__warn_fn warn, void *ctx, struct fdr__rules **out)
{
    if (!out)
        return -EINVAL;
    *out = NULL;
    if (flags & ~(unsigned)FDR__RULES_NO_FILES)
        return -EINVAL;
    struct fdr__rules *r = calloc(1, sizeof(*r));
    if (!r)
        return -ENOMEM;
    struct parser p = {.r = r,
                       .origin = origin ? origin : "spec",
                       .flags = flags,
                       .warn = warn,
                       .ctx = ctx};
    if (spec)
        parse_buffer(&p, spec, strlen(spec), NULL);
    if (p.enomem) {
        fdr__rules_free(r);
        return -ENOMEM;
    }
    *out = r;
    return 0;
}

int fdr__rules_parse(const char *spec, const char *origin, fdr__warn_fn warn, void *ctx,
                     struct fdr__rules **out)
{
    return fdr__rules_parse_flags(spec, origin, 0, warn, ctx, out);
}

void fdr__rules_free(struct fdr__rules *r)
{
    if (!r)
        return;
    free(r->rules);
    free(r->tunables);
    free(r->pool);
    free(r);
}

int fdr__rules_match(const struct fdr__rules *r, const char *provider, const char *event)
{
    if (!r)
        return -1;
    if (!provider)
        provider = "";
    if (!event)
        event = "";
    for (size_t i = r->nrules; i-- > 0;) {
        const struct rule *ru = &r->rules[i];
        if (ru->provider != NO_PROVIDER &&
            !fdr__glob_match(r->pool + ru->provider, provider))
            continue;
        if (fdr__glob_match(r->pool + ru->event, event))
            return ru->on;
    }
    return -1;
}

int fdr__rules_wants_help(const struct fdr__rules *r)
{
    return r ? r->help : 0;
}

size_t fdr__rules_count(const struct fdr__rules *r)
{
    return r ? r->nrules : 0;
}

size_t fdr__rules_tunable_count(const struct fdr__rules *r)
{
    return r ? r->ntunables : 0;
}

int fdr__rules_tunable(const struct fdr__rules *r, size_t i, const char **name,
                       const char **value_text)
{
    if (!r || i >= r->ntunables)
        return -EINVAL;
    if (name)
        *name = r->pool + r->tunables[i].name;
    if (value_text)
        *value_text = r->pool + r->tunables[i].value;
    return 0;
}

int fdr__rules_tunable_number(const struct fdr__rules *r, size_t i, double *dbl,
                              long long *ll, int *is_integer)
{
    if (!r || i >= r->ntunables)
        return -EINVAL;
    const struct tunable *t = &r->tunables[i];
    if (dbl)
        *dbl = t->dbl;
    if (ll)
        *ll = t->ll;
    if (is_integer)
        *is_integer = t->is_integer;
    return 0;
}

int fdr__rules_rule(const struct fdr__rules *r, size_t i, const char **provider,
                    const char **event, int *on)
{
    if (!r || i >= r->nrules)
        return -EINVAL;
    const struct rule *ru = &r->rules[i];
    if (provider)
        *provider = ru->provider == NO_PROVIDER ? NULL : r->pool + ru->provider;
    if (event)
        *event = r->pool + ru->event;
    if (on)
        *on = ru->on;
    return 0;
}
