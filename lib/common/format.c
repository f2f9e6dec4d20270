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
 * skipped since the field type is known. Floating point is printed with
 * %f, %e and %g as glibc prints it, correctly rounded, with integers only
 * (the same digits on every machine), at most 40 digits after the point;
 * %f of 1e19 or more is printed as %e.
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

/* ---- floating point, exact ------------------------------------------------
 *
 * A double is m * 2^e2 (m < 2^53), so its decimal expansion is finite, and
 * printing it correctly rounded (as glibc does) needs only integers: the
 * integer part by division of a big integer by 10^9, the fraction by
 * multiplying it by 10 and taking the bits above the point. No floating
 * point arithmetic, so every machine prints the same digits (with x87's
 * excess precision, i686 printed 1/3 with %.17g as ...331 and x86-64 as
 * ...332, glibc's being ...331). */

#define PREC_MAX 40 /* most digits after the point (more: 40) */
#define LIMBS 36    /* 32-bit limbs: 2^1024, or a fraction of 1074 bits + 4 */
#define DIGITS (310 + PREC_MAX + 360)

struct dec {
    char d[DIGITS]; /* the digits, integer part first, '0' to '9' */
    int n;          /* digits in d */
    int point;      /* digits before the point (0: the integer part is 0) */
    int sticky;     /* digits after the last one in d are not all zero */
};

/* The integer part of v = m * 2^e2 (e2 >= 0) into x->d. */
static void int_digits(uint64_t m, int e2, struct dec *x)
{
    uint32_t l[LIMBS] = {0};
    int nl = 0;
    for (int i = 0; i < 64; i++)
        if (m >> i & 1) {
            int b = i + e2;
            l[b / 32] |= 1u << (b % 32);
            if (b / 32 + 1 > nl)
                nl = b / 32 + 1;
        }
    char rev[320];
    int n = 0;
    while (nl > 0) {
        uint64_t rem = 0;
        for (int i = nl - 1; i >= 0; i--) {
            uint64_t cur = rem << 32 | l[i];
            l[i] = (uint32_t)(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        while (nl > 0 && l[nl - 1] == 0)
            nl--;
        for (int k = 0; k < 9 && (nl > 0 || rem > 0); k++) {
            rev[n++] = (char)('0' + rem % 10);
            rem /= 10;
        }
    }
    for (int i = 0; i < n; i++)
        x->d[i] = rev[n - 1 - i];
    x->n = x->point = n;
}

/* The exact digits of finite v >= 0: the whole integer part, then fraction
 * digits until there are `frac` of them and `sig` significant ones in all
 * (or the fraction is exhausted, then zeros up to `frac`). */
static void decimal(double v, int frac, int sig, struct dec *x)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int be = (int)(bits >> 52 & 0x7ff);
    uint64_t m = bits & ((1ull << 52) - 1);
    if (be)
        m |= 1ull << 52;
    int e2 = (be ? be : 1) - 1075;
    x->n = x->point = x->sticky = 0;
    uint32_t f[LIMBS] = {0};
    int s = 0; /* the fraction is f / 2^s */
    if (e2 >= 0)
        int_digits(m, e2, x);
    else {
        s = -e2;
        uint64_t ip = s < 64 ? m >> s : 0;
        if (ip)
            int_digits(ip, 0, x);
        uint64_t fm = s < 64 ? m & ((1ull << s) - 1) : m;
        f[0] = (uint32_t)fm;
        f[1] = (uint32_t)(fm >> 32);
    }
    int nz = 0;
    for (int i = 0; i < x->n; i++)
        nz += x->d[i] != '0' || nz;
    int nl = s / 32 + 2, got = 0;
    for (;;) {
        int any = 0;
        for (int i = 0; i < nl; i++)
            any |= f[i] != 0;
        if (!any) {
            while (got++ < frac && x->n < DIGITS)
                x->d[x->n++] = '0';
            return;
        }
        if ((got >= frac && nz >= sig) || x->n >= DIGITS) {
            x->sticky = 1;
            return;
        }
        uint64_t carry = 0;
        for (int i = 0; i < nl; i++) {
            uint64_t cur = (uint64_t)f[i] * 10 + carry;
            f[i] = (uint32_t)cur;
            carry = cur >> 32;
        }
        /* the digit: bits s to s + 3, then cleared */
        int q = s / 32, r = s % 32;
        uint32_t dig = f[q] >> r;
        if (r)
            dig |= f[q + 1] << (32 - r);
        f[q] &= r ? (1u << r) - 1 : 0;
        for (int i = q + 1; i < nl; i++)
            f[i] = 0;
        dig &= 15;
        x->d[x->n++] = (char)('0' + dig);
        got++;
        nz += dig != 0 || nz;
    }
}

/* Keeps d[0, keep) of d[0, n), rounded half to even by what follows (and
 * sticky: more digits, not all zero). Returns 1 when it carried out of
 * d[0] (then d[0, keep) are zeros and the number is 1 followed by them). */
static int round_at(char *d, int n, int keep, int sticky)
{
    int next = keep < n ? d[keep] - '0' : 0;
    int rest = sticky;
    for (int i = keep + 1; i < n && !rest; i++)
        rest = d[i] != '0';
    int odd = keep > 0 && (d[keep - 1] - '0') % 2;
    if (next < 5 || (next == 5 && !rest && !odd))
        return 0;
    for (int i = keep - 1; i >= 0; i--) {
        if (d[i] != '9') {
            d[i]++;
            return 0;
        }
        d[i] = '0';
    }
    return 1;
}

/* v (>= 0, < 1e19) with `prec` decimals. */
static size_t fixed(char *buf, double v, int prec)
{
    struct dec x;
    if (prec > PREC_MAX)
        prec = PREC_MAX;
    decimal(v, prec + 1, 0, &x);
    int keep = x.point + prec;
    if (round_at(x.d, x.n, keep, x.sticky)) {
        memmove(x.d + 1, x.d, (size_t)keep);
        x.d[0] = '1';
        x.point++;
    }
    size_t n = 0;
    if (x.point == 0)
        buf[n++] = '0';
    memcpy(buf + n, x.d, (size_t)x.point);
    n += (size_t)x.point;
    if (prec > 0) {
        buf[n++] = '.';
        memcpy(buf + n, x.d + x.point, (size_t)prec);
        n += (size_t)prec;
    }
    buf[n] = 0;
    return n;
}

/* v (>= 0) as d.ddde+XX with `prec` digits after the point; *exp10 is the
 * exponent printed (%g chooses by it). */
static size_t expo(char *buf, double v, int prec, int upper, int *exp10)
{
    struct dec x;
    if (prec > PREC_MAX)
        prec = PREC_MAX;
    decimal(v, 0, prec + 2, &x);
    int f = 0;
    while (f < x.n && x.d[f] == '0')
        f++;
    int e = f < x.n ? x.point - f - 1 : 0;
    if (f == x.n)
        f = 0; /* zero: its digits are zeros */
    while (x.n < f + prec + 1)
        x.d[x.n++] = '0';
    if (round_at(x.d + f, x.n - f, prec + 1, x.sticky)) {
        x.d[f] = '1';
        e++;
    }
    size_t n = 0;
    buf[n++] = x.d[f];
    if (prec > 0) {
        buf[n++] = '.';
        memcpy(buf + n, x.d + f + 1, (size_t)prec);
        n += (size_t)prec;
    }
    *exp10 = e;
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

/* '#': the point is printed even with no digit after it. */
static void alt_point(char *buf, size_t *n)
{
    if (memchr(buf, '.', *n))
        return;
    char *e = memchr(buf, 'e', *n);
    if (!e)
        e = memchr(buf, 'E', *n);
    size_t at = e ? (size_t)(e - buf) : *n;
    memmove(buf + at + 1, buf + at, *n - at + 1);
    buf[at] = '.';
    (*n)++;
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
    int e;
    if (c == 'g' || c == 'G') {
        /* %e's exponent, after rounding to p digits, chooses (C11 7.21.6.1) */
        int p = prec == 0 ? 1 : prec > PREC_MAX ? PREC_MAX : prec;
        n = expo(buf, v, p - 1, upper, &e);
        if (e >= -4 && e < p)
            n = fixed(buf, v, p - 1 - e);
        if (!sp->alt)
            strip_zeros(buf, &n);
    } else if (c == 'e' || c == 'E' || v >= 1e19) {
        n = expo(buf, v, prec, upper, &e);
    } else {
        n = fixed(buf, v, prec);
    }
    if (sp->alt)
        alt_point(buf, &n);
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
    case FDR__T_UCHAR: /* plain char where it is unsigned: 200 is 200 */
        if (sp->conv == 'c')
            emit(o, sp, "", (const char *)&v.u8, 1, 0);
        else
            emit_int(o, sp, v.u8, 0);
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
    uint64_t u = type == FDR__T_U8                            ? v.u8
                 : type == FDR__T_U16                         ? v.u16
                 : type == FDR__T_U32 || type == FDR__T_PTR32 ? v.u32
                                                              : v.u64;
    struct spec s2 = *sp;
    if ((type == FDR__T_PTR || type == FDR__T_PTR32) && s2.conv != 'x' && s2.conv != 'X')
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
    } else if (type == FDR__T_I8 || type == FDR__T_U8 || type == FDR__T_CHAR ||
               type == FDR__T_UCHAR) {
        v = type == FDR__T_U8 || type == FDR__T_UCHAR ? (int64_t)(uint8_t)*p
                                                      : (int64_t)(int8_t)*p;
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
