/* SPDX-License-Identifier: MIT */
/* format.c - an event as one line of text, async-signal-safe.
 *
 * The crash handler prints the last events of every thread from inside a
 * signal handler, where printf, malloc and locks are off limits; live
 * printing uses the same code so both look alike. So this file carries its
 * own small printf: it walks the event's format string and, for each
 * conversion, takes the next field from the recorded payload.
 *
 * The value decides how it is printed, the conversion only refines it:
 * `%x` on an integer prints hex, `%d` on a string prints the string. Flags
 * `-`, `0`, `+`, space and `#`, a width and a precision are honoured (a
 * `*` width or precision takes the next field, as printf takes an int);
 * length modifiers (hh, h, l, ll, z, j, t, q, L, and the PRIx64 family) are
 * skipped since the field type is known. Floating point is printed with %f,
 * %e and %g semantics close to glibc's for the usual magnitudes (17
 * significant digits at most; beyond that the digits are approximate).
 *
 * Payloads come from buffers and are not trusted: every read is bounded by
 * `len`, and a payload that ends early prints "<truncated>". */
#include <math.h>
#include <string.h>

#include "common/format.h"
#include "common/fields.h"

struct out {
    char *p;
    size_t cap, n;
};

static void put(struct out *o, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (o->n + 1 < o->cap)
            o->p[o->n] = s[i];
        o->n++;
    }
}

static void putc_(struct out *o, char c)
{
    put(o, &c, 1);
}

size_t fdr__fmt_u64(char *out, uint64_t v, unsigned base, int upper)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = 0;
    return n;
}

size_t fdr__fmt_seconds(char *out, uint64_t ns)
{
    size_t n = fdr__fmt_u64(out, ns / 1000000000u, 10, 0);
    out[n++] = '.';
    char frac[24];
    size_t fl = fdr__fmt_u64(frac, ns % 1000000000u, 10, 0);
    for (size_t i = fl; i < 9; i++)
        out[n++] = '0';
    memcpy(out + n, frac, fl);
    return n + fl;
}

struct spec {
    int left, zero, plus, space, alt;
    int width, prec; /* -1 when absent */
    char conv;
};

static void pad(struct out *o, int n, char c)
{
    for (; n > 0; n--)
        putc_(o, c);
}

/* Emits sign/prefix + body with the spec's width and flags. */
static void emit(struct out *o, const struct spec *sp, const char *prefix,
                 const char *body, size_t blen, int numeric)
{
    size_t plen = strlen(prefix);
    int fill = sp->width - (int)(plen + blen);
    if (!sp->left && !(sp->zero && numeric))
        pad(o, fill, ' ');
    put(o, prefix, plen);
    if (!sp->left && sp->zero && numeric)
        pad(o, fill, '0');
    put(o, body, blen);
    if (sp->left)
        pad(o, fill, ' ');
}

static void emit_int(struct out *o, const struct spec *sp, uint64_t mag, int neg)
{
    unsigned base = 10;
    int upper = 0;
    const char *prefix = neg ? "-" : sp->plus ? "+" : sp->space ? " " : "";
    if (sp->conv == 'x' || sp->conv == 'X' || sp->conv == 'p') {
        base = 16;
        upper = sp->conv == 'X';
        if ((sp->alt && mag) || sp->conv == 'p')
            prefix = upper ? "0X" : "0x";
    } else if (sp->conv == 'o') {
        base = 8;
        if (sp->alt && mag)
            prefix = "0";
    }
    char body[96];
    size_t n = fdr__fmt_u64(body + 40, mag, base, upper);
    char *b = body + 40;
    if (sp->prec >= 0) {
        while ((int)n < sp->prec && b > body) {
            *--b = '0';
            n++;
        }
        if (sp->prec == 0 && mag == 0)
            n = 0;
    }
    struct spec s2 = *sp;
    if (sp->prec >= 0)
        s2.zero = 0;
    emit(o, &s2, prefix, b, n, 1);
}

/* Decimal digits of v (>= 0, < 1e19) with `prec` decimals, rounded. */
static size_t fixed(char *buf, double v, int prec)
{
    if (prec > 17)
        prec = 17;
    double scale = 1;
    for (int i = 0; i < prec; i++)
        scale *= 10;
    double ip = floor(v);
    double frac = v - ip;
    uint64_t ipart = (uint64_t)ip;
    uint64_t fpart = (uint64_t)floor(frac * scale + 0.5);
    if ((double)fpart >= scale) {
        fpart = 0;
        ipart++;
    }
    size_t n = fdr__fmt_u64(buf, ipart, 10, 0);
    if (prec > 0) {
        buf[n++] = '.';
        char f[24];
        size_t fn = fdr__fmt_u64(f, fpart, 10, 0);
        for (int i = (int)fn; i < prec; i++)
            buf[n++] = '0';
        memcpy(buf + n, f, fn);
        n += fn;
    }
    buf[n] = 0;
    return n;
}

static size_t expo(char *buf, double v, int prec, int upper)
{
    int e = 0;
    if (v != 0) {
        while (v >= 10) {
            v /= 10;
            e++;
        }
        while (v < 1) {
            v *= 10;
            e--;
        }
    }
    size_t n = fixed(buf, v, prec);
    if (buf[0] == '1' && buf[1] == '0' && (buf[2] == '.' || buf[2] == 0)) {
        /* rounding carried to 10.0: renormalise */
        n = fixed(buf, v / 10, prec);
        e++;
    }
    buf[n++] = upper ? 'E' : 'e';
    buf[n++] = e < 0 ? '-' : '+';
    if (e < 0)
        e = -e;
    if (e < 10)
        buf[n++] = '0';
    n += fdr__fmt_u64(buf + n, (uint64_t)e, 10, 0);
    buf[n] = 0;
    return n;
}

static void strip_zeros(char *buf, size_t *n)
{
    char *dot = memchr(buf, '.', *n);
    if (!dot)
        return;
    char *e = memchr(buf, 'e', *n);
    if (!e)
        e = memchr(buf, 'E', *n);
    size_t tail = e ? (size_t)(buf + *n - e) : 0;
    char *end = e ? e : buf + *n;
    char *q = end;
    while (q > dot + 1 && q[-1] == '0')
        q--;
    if (q == dot + 1)
        q = dot;
    memmove(q, end, tail);
    *n = (size_t)(q - buf) + tail;
    buf[*n] = 0;
}

static void emit_double(struct out *o, const struct spec *sp, double v)
{
    char buf[64];
    size_t n;
    int neg = signbit(v) != 0;
    const char *prefix = neg ? "-" : sp->plus ? "+" : sp->space ? " " : "";
    int upper = sp->conv == 'F' || sp->conv == 'E' || sp->conv == 'G';
    if (isnan(v)) {
        emit(o, sp, prefix, upper ? "NAN" : "nan", 3, 0);
        return;
    }
    if (neg)
        v = -v;
    if (isinf(v)) {
        emit(o, sp, prefix, upper ? "INF" : "inf", 3, 0);
        return;
    }
    int prec = sp->prec >= 0 ? sp->prec : 6;
    char c = sp->conv;
    if (c == 'g' || c == 'G') {
        int p = prec == 0 ? 1 : prec;
        int e = 0;
        if (v != 0) {
            double t = v;
            while (t >= 10) {
                t /= 10;
                e++;
            }
            while (t < 1) {
                t *= 10;
                e--;
            }
        }
        if (e < -4 || e >= p)
            n = expo(buf, v, p - 1, upper);
        else
            n = fixed(buf, v, p - 1 - e);
        if (!sp->alt)
            strip_zeros(buf, &n);
    } else if (c == 'e' || c == 'E' || v >= 1e19) {
        n = expo(buf, v, prec, upper);
    } else {
        n = fixed(buf, v, prec);
    }
    emit(o, sp, prefix, buf, n, 1);
}

/* Sizes are checked in one place, common/fields.c. */
static size_t field_size(uint8_t type, const char *p, size_t left)
{
    return fdr__field_size(type, p, left);
}

size_t fdr__payload_size(const struct fdr__class *c, const char *payload, size_t len)
{
    size_t off = 0;
    for (unsigned i = 0; i < c->nfields && i < FDR_MAX_FIELDS; i++) {
        size_t n = field_size(c->types[i], payload + off, len - off);
        if (n == (size_t)-1 || n > len - off)
            return 0;
        off += n;
    }
    return off;
}

static void emit_field(struct out *o, const struct spec *sp, uint8_t type, const char *p)
{
    union {
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float f;
        double d;
    } v;
    memset(&v, 0, sizeof v);
    if (type != FDR__T_STR && type != FDR__T_BYTES)
        memcpy(&v, p, field_size(type, p, 8));
    switch (type) {
    case FDR__T_STR: {
        size_t len = strlen(p);
        if (sp->prec >= 0 && (size_t)sp->prec < len)
            len = (size_t)sp->prec;
        emit(o, sp, "", p, len, 0);
        return;
    }
    case FDR__T_BYTES: {
        uint32_t n;
        memcpy(&n, p, 4);
        static const char hex[] = "0123456789abcdef";
        for (uint32_t i = 0; i < n; i++) {
            unsigned char b = (unsigned char)p[4 + i];
            if (i)
                putc_(o, ' ');
            putc_(o, hex[b >> 4]);
            putc_(o, hex[b & 15]);
        }
        return;
    }
    case FDR__T_F32:
        emit_double(o, sp, v.f);
        return;
    case FDR__T_F64:
        emit_double(o, sp, v.d);
        return;
    case FDR__T_CHAR:
        if (sp->conv == 'c') {
            emit(o, sp, "", (const char *)&v.u8, 1, 0);
            return;
        }
        emit_int(o, sp, v.i8 < 0 ? (uint64_t)(-(int64_t)v.i8) : (uint64_t)v.i8, v.i8 < 0);
        return;
    case FDR__T_BOOL:
        if (sp->conv == 's') {
            emit(o, sp, "", v.u8 ? "true" : "false", v.u8 ? 4 : 5, 0);
            return;
        }
        emit_int(o, sp, v.u8 != 0, 0);
        return;
    default:
        break;
    }
    int is_signed = type == FDR__T_I8 || type == FDR__T_I16 || type == FDR__T_I32 ||
                    type == FDR__T_I64;
    int64_t s = type == FDR__T_I8    ? v.i8
                : type == FDR__T_I16 ? v.i16
                : type == FDR__T_I32 ? v.i32
                                     : v.i64;
    uint64_t u = type == FDR__T_U8    ? v.u8
                 : type == FDR__T_U16 ? v.u16
                 : type == FDR__T_U32 ? v.u32
                                      : v.u64;
    struct spec s2 = *sp;
    if (type == FDR__T_PTR && s2.conv != 'x' && s2.conv != 'X')
        s2.conv = 'p';
    if (sp->conv == 'c' && u < 128 && !is_signed) {
        char ch = (char)u;
        emit(o, sp, "", &ch, 1, 0);
        return;
    }
    if (is_signed && (sp->conv == 'd' || sp->conv == 'i' || sp->conv == 's' ||
                      sp->conv == 'f' || sp->conv == 'g' || sp->conv == 'e'))
        emit_int(o, &s2, s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s, s < 0);
    else if (is_signed) {
        /* %x / %u of a signed value: its two's complement at its width */
        uint64_t w = type == FDR__T_I8    ? (uint8_t)s
                     : type == FDR__T_I16 ? (uint16_t)s
                     : type == FDR__T_I32 ? (uint32_t)s
                                          : (uint64_t)s;
        emit_int(o, &s2, w, 0);
    } else
        emit_int(o, &s2, u, 0);
}

/* Reads the conversion after a '%' (not "%%") at f: flags, width and
 * precision ("*" for either is counted in *stars: each takes one field,
 * before the value), length modifiers skipped. Returns the position after
 * the conversion letter, or NULL when the format ends inside it. */
static const char *parse_spec(const char *f, struct spec *sp, int stars[2])
{
    struct spec init = {0, 0, 0, 0, 0, -1, -1, 0};
    *sp = init;
    stars[0] = stars[1] = 0;
    for (;; f++) {
        if (*f == '-')
            sp->left = 1;
        else if (*f == '0')
            sp->zero = 1;
        else if (*f == '+')
            sp->plus = 1;
        else if (*f == ' ')
            sp->space = 1;
        else if (*f == '#')
            sp->alt = 1;
        else
            break;
    }
    if (*f == '*')
        stars[0] = 1, f++;
    while (*f >= '0' && *f <= '9')
        sp->width = (sp->width < 0 ? 0 : sp->width) * 10 + (*f++ - '0');
    if (sp->width > 256)
        sp->width = 256;
    if (*f == '.') {
        f++;
        sp->prec = 0;
        if (*f == '*')
            stars[1] = 1, f++;
        while (*f >= '0' && *f <= '9')
            sp->prec = sp->prec * 10 + (*f++ - '0');
        if (sp->prec > 256)
            sp->prec = 256;
    }
    while (*f && strchr("hlLqjzt", *f))
        f++;
    if (!*f)
        return NULL;
    sp->conv = *f++;
    return f;
}

unsigned fdr__format_convs(const char *f, char conv[FDR_MAX_FIELDS])
{
    unsigned field = 0;
    while (*f && field < FDR_MAX_FIELDS) {
        if (*f++ != '%')
            continue;
        if (*f == '%') {
            f++;
            continue;
        }
        struct spec sp;
        int stars[2];
        f = parse_spec(f, &sp, stars);
        if (!f)
            break;
        for (int k = 0; k < stars[0] + stars[1] && field < FDR_MAX_FIELDS; k++)
            conv[field++] = '*';
        if (field < FDR_MAX_FIELDS)
            conv[field++] = sp.conv;
    }
    return field;
}

/* The integer value of a '*' width or precision field, clamped to
 * [-256, 256]; 0 for a field that is not an integer. */
static int star_value(uint8_t type, const char *p)
{
    int64_t v = 0;
    if (type == FDR__T_I32) {
        int32_t x;
        memcpy(&x, p, 4);
        v = x;
    } else if (type == FDR__T_U32) {
        uint32_t x;
        memcpy(&x, p, 4);
        v = x;
    } else if (type == FDR__T_I64 || type == FDR__T_U64) {
        memcpy(&v, p, 8);
    } else if (type == FDR__T_I16 || type == FDR__T_U16) {
        uint16_t x;
        memcpy(&x, p, 2);
        v = type == FDR__T_I16 ? (int16_t)x : x;
    } else if (type == FDR__T_I8 || type == FDR__T_U8 || type == FDR__T_CHAR) {
        v = type == FDR__T_U8 ? (int64_t)(uint8_t)*p : (int64_t)(int8_t)*p;
    }
    return v > 256 ? 256 : v < -256 ? -256 : (int)v;
}

size_t fdr__format_payload(char *outbuf, size_t cap, const struct fdr__classes *t,
                           const struct fdr__class *c, const char *payload, size_t len)
{
    struct out o = {outbuf, cap, 0};
    const char *f = fdr__classes_str(t, c->format);
    size_t off = 0;
    unsigned field = 0;
    int broken = 0;
    while (*f) {
        if (*f != '%') {
            putc_(&o, *f++);
            continue;
        }
        f++;
        if (*f == '%') {
            putc_(&o, '%');
            f++;
            continue;
        }
        struct spec sp;
        int stars[2];
        f = parse_spec(f, &sp, stars);
        if (!f)
            break;
        /* a '*' takes its field first: a negative width means '-' */
        for (int k = 0; k < 2; k++) {
            if (!stars[k] || field >= c->nfields || broken)
                continue;
            size_t n = field_size(c->types[field], payload + off, len - off);
            if (n == (size_t)-1 || n > len - off) {
                put(&o, "<truncated>", 11);
                broken = 1;
                continue;
            }
            int v = star_value(c->types[field], payload + off);
            if (k == 0) {
                sp.left |= v < 0;
                sp.width = v < 0 ? -v : v;
            } else {
                sp.prec = v < 0 ? -1 : v;
            }
            off += n;
            field++;
        }
        if (field >= c->nfields || broken) {
            put(&o, "<?>", 3);
            continue;
        }
        size_t n = field_size(c->types[field], payload + off, len - off);
        if (n == (size_t)-1 || n > len - off) {
            put(&o, "<truncated>", 11);
            broken = 1;
            continue;
        }
        emit_field(&o, &sp, c->types[field], payload + off);
        off += n;
        field++;
    }
    /* fields the format did not mention (raw events, formats without
     * conversions): name=value after the text */
    for (; field < c->nfields && !broken; field++) {
        size_t n = field_size(c->types[field], payload + off, len - off);
        if (n == (size_t)-1 || n > len - off)
            break;
        if (o.n)
            putc_(&o, ' ');
        const char *nm = fdr__classes_str(t, c->names[field]);
        put(&o, nm, strlen(nm));
        putc_(&o, '=');
        struct spec sp = {0, 0, 0, 0, 0, -1, -1, 'd'};
        if (c->types[field] == FDR__T_F32 || c->types[field] == FDR__T_F64)
            sp.conv = 'g';
        emit_field(&o, &sp, c->types[field], payload + off);
        off += n;
    }
    if (cap)
        outbuf[o.n < cap ? o.n : cap - 1] = 0;
    return o.n < cap ? o.n : cap - 1;
}

size_t fdr__format_line(char *line, size_t cap, const struct fdr__classes *t,
                        const struct fdr__class *c, const struct fdr__line_info *li,
                        const char *payload, size_t len)
{
    /* room for the prefix: seconds (21), tid (10), name (16), brackets */
    if (cap < 64)
        return 0;
    size_t n = fdr__fmt_seconds(line, li->ns);
    line[n++] = ' ';
    line[n++] = '[';
    n += fdr__fmt_u64(line + n, li->tid, 10, 0);
    size_t tl = li->thread_name ? strnlen(li->thread_name, 16) : 0;
    if (tl) {
        line[n++] = ' ';
        memcpy(line + n, li->thread_name, tl);
        n += tl;
    }
    line[n++] = ']';
    line[n++] = ' ';
    const char *p = fdr__classes_str(t, c->provider), *e = fdr__classes_str(t, c->event);
    size_t pl = strlen(p), el = strlen(e);
    if (n + pl + el + 3 < cap) {
        memcpy(line + n, p, pl);
        n += pl;
        line[n++] = ':';
        memcpy(line + n, e, el);
        n += el;
        line[n++] = ' ';
    }
    size_t m = fdr__format_payload(line + n, cap - n - 1, t, c, payload, len);
    if (m == 0 && line[n - 1] == ' ')
        n--; /* no message: the line ends with the name */
    n += m;
    line[n++] = '\n';
    return n;
}
