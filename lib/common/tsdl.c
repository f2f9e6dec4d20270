/* SPDX-License-Identifier: MIT */
/* tsdl.c - the CTF 1.8 metadata (TSDL) of a trace, and its class file.
 *
 * The metadata describes everything a CTF reader needs to decode the
 * stream files: the packet header and context (docs/trace-format.md), the
 * clock, the event header (u16 class id + the clock's low 32 bits, which
 * readers extend from the packet's 64-bit timestamp_begin) and one `event`
 * block per class. All fields are byte-aligned and in native byte order,
 * which is how the fast path stores them. Field names get a leading
 * underscore, as LTTng does: CTF readers strip one, and it keeps names such
 * as `string` or `align` from clashing with TSDL keywords.
 *
 * TSDL has no place for a class's format string and source location that
 * babeltrace2 reads without complaint, so they go in a side file,
 * ".fdr-classes": the class table itself (struct fdr__class records, then
 * the string pool), which readers load with fdr__classes_load and use as
 * any other class table, bounded lookups included.
 *
 * Everything is parameters: the recorder (lib/recorder/metadata.c) gathers
 * them, and the crash handler writes from a signal handler, so the text
 * goes through a caller's buffer flushed to a file descriptor with write(2)
 * when full: no malloc, no stdio. fdr__tsdl_clock reads the clock back
 * (the scope and fdr export need absolute times). */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/format.h"
#include "common/swap.h"
#include "common/tsdl.h"

/* The TSDL of a field of type t; integers end in "base = 16; }" or
 * "base = 8; }" for a field printed with %x/%X/%p or %o, so readers show
 * them as written (the table holds each integer without its closing " }"). */
static const char *type_decl(uint8_t t)
{
    switch (t) {
    case FDR__T_BOOL:
        return "integer { size = 8; align = 8; signed = false;";
    case FDR__T_CHAR:
    case FDR__T_I8:
        return "integer { size = 8; align = 8; signed = true;";
    case FDR__T_U8:
    case FDR__T_UCHAR:
        return "integer { size = 8; align = 8; signed = false;";
    case FDR__T_I16:
        return "integer { size = 16; align = 8; signed = true;";
    case FDR__T_U16:
        return "integer { size = 16; align = 8; signed = false;";
    case FDR__T_I32:
        return "integer { size = 32; align = 8; signed = true;";
    case FDR__T_U32:
        return "integer { size = 32; align = 8; signed = false;";
    case FDR__T_I64:
        return "integer { size = 64; align = 8; signed = true;";
    case FDR__T_U64:
        return "integer { size = 64; align = 8; signed = false;";
    case FDR__T_F32:
        return "floating_point { exp_dig = 8; mant_dig = 24; align = 8; }";
    case FDR__T_F64:
        return "floating_point { exp_dig = 11; mant_dig = 53; align = 8; }";
    case FDR__T_PTR:
        return "integer { size = 64; align = 8; signed = false;";
    case FDR__T_PTR32:
        return "integer { size = 32; align = 8; signed = false;";
    case FDR__T_STR:
        return "string { encoding = UTF8; }";
    default:
        return NULL;
    }
}

/* The display base of an integer field: conversion letter conv ('x', 'o',
 * ...), or a pointer. */
static const char *base_decl(uint8_t t, char conv)
{
    if (t == FDR__T_PTR || t == FDR__T_PTR32 || conv == 'x' || conv == 'X')
        return " base = 16; }";
    return conv == 'o' ? " base = 8; }" : " }";
}

/* An output stream over a caller's buffer: no malloc, no stdio, so that
 * it is async-signal-safe. The first write error sticks in `err`. */
struct emit {
    int fd;
    char *buf;
    size_t cap, n;
    int err;
};

static void flush_out(struct emit *e)
{
    size_t off = 0;
    while (off < e->n && !e->err) {
        ssize_t w = write(e->fd, e->buf + off, e->n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            e->err = w < 0 ? -errno : -EIO;
        else
            off += (size_t)w;
    }
    e->n = 0;
}

static void put(struct emit *e, const char *s, size_t len)
{
    while (len > 0) {
        if (e->n == e->cap)
            flush_out(e);
        size_t k = e->cap - e->n < len ? e->cap - e->n : len;
        memcpy(e->buf + e->n, s, k);
        e->n += k;
        s += k;
        len -= k;
    }
}

static void puts_(struct emit *e, const char *s)
{
    put(e, s, strlen(s));
}

static void put_u64(struct emit *e, uint64_t v)
{
    char tmp[24];
    put(e, tmp, fdr__fmt_u64(tmp, v, 10, 0));
}

static void put_i64(struct emit *e, int64_t v)
{
    if (v < 0) {
        put(e, "-", 1);
        put_u64(e, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(e, (uint64_t)v);
    }
}

/* Writes s as a TSDL string literal body (escapes quotes and controls). */
static void put_escaped(struct emit *e, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            put(e, esc, 2);
        } else if (c < 0x20) {
            char esc[4] = {'\\', 'x', "0123456789abcdef"[c >> 4],
                           "0123456789abcdef"[c & 15]};
            put(e, esc, 4);
        } else {
            put(e, (const char *)&c, 1);
        }
    }
}

static void uuid_text(char out[37], const uint8_t u[16])
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[n++] = '-';
        out[n++] = hex[u[i] >> 4];
        out[n++] = hex[u[i] & 15];
    }
    out[n] = 0;
}

static void write_event(struct emit *f, const struct fdr__classes *t,
                        const struct fdr__class *c)
{
    puts_(f, "event {\n\tname = \"");
    put_escaped(f, fdr__classes_str(t, c->provider));
    put(f, ":", 1);
    put_escaped(f, fdr__classes_str(t, c->event));
    puts_(f, "\";\n\tid = ");
    put_u64(f, c->id);
    puts_(f, ";\n\tfields := struct {\n");
    char conv[FDR_MAX_FIELDS] = {0};
    fdr__format_convs(fdr__classes_str(t, c->format), conv);
    for (unsigned i = 0; i < c->nfields && i < FDR_MAX_FIELDS; i++) {
        const char *name = fdr__classes_str(t, c->names[i]);
        if (c->types[i] == FDR__T_BYTES) {
            puts_(f, "\t\tinteger { size = 32; align = 8; signed = false; } _");
            puts_(f, name);
            puts_(f, "_len;\n\t\tinteger { size = 8; align = 8; signed = false; base = "
                     "16; } _");
            puts_(f, name);
            puts_(f, "[_");
            puts_(f, name);
            puts_(f, "_len];\n");
            continue;
        }
        const char *t = type_decl(c->types[i]);
        if (t) {
            puts_(f, "\t\t");
            puts_(f, t);
            if (t[0] == 'i')
                puts_(f, base_decl(c->types[i], conv[i]));
            puts_(f, " _");
            puts_(f, name);
            puts_(f, ";\n");
        }
    }
    puts_(f, "\t};\n};\n\n");
}

int fdr__tsdl_emit(int fd, char *buf, size_t cap, const struct fdr__tsdl_params *p)
{
    struct emit e = {fd, buf, cap, 0, 0}, *f = &e;
    char uuid[37];
    uuid_text(uuid, p->uuid);
    puts_(f,
          "/* CTF 1.8 */\n\n"
          "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
          "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
          "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
          "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n\n");
    puts_(f, "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"");
    puts_(f, uuid);
    puts_(f, "\";\n\tbyte_order = ");
    puts_(f, __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "le" : "be");
    puts_(f, ";\n\tpacket.header := struct {\n"
             "\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
             "\t\tuint64_t stream_instance_id;\n\t};\n};\n\n");
    puts_(f, "env {\n\thostname = \"");
    put_escaped(f, p->hostname);
    puts_(f, "\";\n\tvpid = ");
    put_i64(f, (int64_t)p->pid);
    puts_(f, ";\n\tprocname = \"");
    put_escaped(f, p->procname);
    puts_(f, "\";\n\ttracer_name = \"fdr\";\n\ttracer_major = ");
    put_u64(f, p->version[0]);
    puts_(f, ";\n\ttracer_minor = ");
    put_u64(f, p->version[1]);
    puts_(f, ";\n\ttracer_patch = ");
    put_u64(f, p->version[2]);
    puts_(f, ";\n\ttracer_version = \"");
    put_escaped(f, p->version_string);
    puts_(f, "\";\n\tdomain = \"fdr\";\n};\n\n");
    puts_(f, "clock {\n\tname = \"fdr\";\n\tuuid = \"");
    puts_(f, uuid);
    puts_(f, "\";\n\tdescription = \"");
    put_escaped(f, p->clock_desc);
    puts_(f, "\";\n\tfreq = ");
    put_u64(f, p->clock_freq);
    puts_(f, ";\n\tprecision = 1;\n\toffset_s = ");
    put_i64(f, p->clock_offset_s);
    puts_(f, ";\n\toffset = ");
    put_u64(f, p->clock_offset);
    puts_(f, ";\n\tabsolute = TRUE;\n};\n\n");
    puts_(f, "typealias integer { size = 64; align = 8; signed = false; "
             "map = clock.fdr.value; } := uint64_clock_t;\n"
             "typealias integer { size = 32; align = 8; signed = false; "
             "map = clock.fdr.value; } := uint32_clock_t;\n\n");
    puts_(f, "stream {\n\tpacket.context := struct {\n"
             "\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"
             "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
             "\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n"
             "\t\tuint32_t pid;\n\t\tuint32_t tid;\n"
             "\t\tinteger { size = 8; align = 8; signed = false; encoding = UTF8; } "
             "thread_name[16];\n\t};\n"
             "\tevent.header := struct {\n\t\tuint16_t id;\n"
             "\t\tuint32_clock_t timestamp;\n\t};\n};\n\n");
    const struct fdr__classes *t = p->classes;
    for (uint32_t id = 1; t && id <= t->n && id <= FDR__MAX_CLASSES; id++) {
        const struct fdr__class *c = fdr__classes_get(t, (uint16_t)id);
        if (c)
            write_event(f, t, c);
    }
    flush_out(f);
    return e.err;
}

/* The class file: this header, n records of struct fdr__class, then
 * pool_size bytes of pool (docs/trace-format.md). Native byte order. */
struct classes_hdr {
    uint32_t magic; /* FDR__CLASSES_MAGIC */
    uint16_t version;
    uint16_t record_size; /* sizeof(struct fdr__class) */
    uint32_t n;
    uint32_t pool_size;
    uint64_t clock_start, clock_freq; /* struct fdr__line_clock */
};
#define FDR__CLASSES_MAGIC 0x53434446u /* "FDCS" */
/* 2: event headers of 6 bytes (u16 id, u32 clock low bits); 1 had 10 (a
 * u64 clock), which fdr's readers no longer take (babeltrace2 does: the
 * metadata describes them). */
#define FDR__CLASSES_VERSION 2

/* The end of the last string the classes of t use: the part of the pool
 * the file keeps. */
static uint32_t pool_end(const struct fdr__classes *t)
{
    uint32_t end = 1;
    for (uint32_t id = 1; id <= t->n && id <= FDR__MAX_CLASSES; id++) {
        const struct fdr__class *c = fdr__classes_get(t, (uint16_t)id);
        if (!c)
            continue;
        uint32_t offs[4 + FDR_MAX_FIELDS] = {c->provider, c->event, c->format, c->file};
        for (unsigned i = 0; i < c->nfields; i++)
            offs[4 + i] = c->names[i];
        for (unsigned i = 0; i < 4u + c->nfields; i++) {
            const char *s = fdr__classes_str(t, offs[i]);
            if (*s) {
                uint32_t e = offs[i] + (uint32_t)strlen(s) + 1;
                end = e > end ? e : end;
            }
        }
    }
    return end < t->pool_size ? end : t->pool_size;
}

uint64_t fdr__line_clock_ns(const struct fdr__line_clock *k, uint64_t v)
{
    if (v < k->start || !k->freq)
        return 0;
    return (uint64_t)((double)(v - k->start) * 1e9 / (double)k->freq);
}

int fdr__classes_emit(int fd, char *buf, size_t cap, const struct fdr__classes *t,
                      const struct fdr__line_clock *k)
{
    struct emit e = {fd, buf, cap, 0, 0};
    struct classes_hdr h = {FDR__CLASSES_MAGIC,
                            FDR__CLASSES_VERSION,
                            sizeof(struct fdr__class),
                            0,
                            0,
                            k->start,
                            k->freq};
    if (t && t->classes && t->pool && t->pool_size > 0) {
        h.n = t->n < FDR__MAX_CLASSES ? t->n : FDR__MAX_CLASSES;
        h.pool_size = pool_end(t);
    }
    put(&e, (const char *)&h, sizeof h);
    if (h.n)
        put(&e, (const char *)t->classes, (size_t)h.n * sizeof(struct fdr__class));
    if (h.pool_size)
        put(&e, t->pool, h.pool_size);
    flush_out(&e);
    return e.err;
}

int fdr__classes_swap(void *file, size_t len)
{
    struct classes_hdr h;
    if (len < sizeof h)
        return 0;
    memcpy(&h, file, sizeof h);
    if (h.magic != __builtin_bswap32(FDR__CLASSES_MAGIC))
        return 0;
    char *b = file;
    static const unsigned char hdr_sizes[] = {4, 2, 2, 4, 4, 8, 8};
    for (size_t i = 0, o = 0; i < sizeof hdr_sizes; o += hdr_sizes[i++])
        fdr__swap_bytes(b + o, hdr_sizes[i]);
    memcpy(&h, file, sizeof h);
    if (h.record_size != sizeof(struct fdr__class) || h.n > FDR__MAX_CLASSES ||
        sizeof h + (uint64_t)h.n * sizeof(struct fdr__class) > len)
        return 1; /* fdr__classes_load says what is wrong */
    for (uint32_t k = 0; k < h.n; k++) {
        char *r = b + sizeof h + (size_t)k * sizeof(struct fdr__class);
        fdr__swap_bytes(r + offsetof(struct fdr__class, id), 2);
        fdr__swap_bytes(r + offsetof(struct fdr__class, line), 4);
        for (size_t o = offsetof(struct fdr__class, provider);
             o < offsetof(struct fdr__class, types); o += 4)
            fdr__swap_bytes(r + o, 4);
        for (unsigned i = 0; i < FDR_MAX_FIELDS; i++)
            fdr__swap_bytes(r + offsetof(struct fdr__class, names) + 4 * i, 4);
    }
    return 1;
}

int fdr__classes_load(const void *file, size_t len, struct fdr__classes *out,
                      struct fdr__line_clock *k, const char **why, size_t *at)
{
    struct classes_hdr h;
    memset(out, 0, sizeof *out);
    *at = 0;
    if (len < sizeof h) {
        *why = "shorter than its header";
        return -1;
    }
    memcpy(&h, file, sizeof h);
    if (h.magic == FDR__CLASSES_MAGIC && h.version == 1) {
        *why = "written by an older fdr (10-byte event headers): babeltrace2 reads "
               "that trace, this fdr does not";
        return -1;
    }
    if (h.magic != FDR__CLASSES_MAGIC || h.version != FDR__CLASSES_VERSION) {
        *why = "not an fdr class file (magic or version)";
        return -1;
    }
    *at = 6;
    if (h.record_size != sizeof(struct fdr__class)) {
        *why = "class records of another size";
        return -1;
    }
    *at = 8;
    if (h.n > FDR__MAX_CLASSES) {
        *why = "too many classes";
        return -1;
    }
    *at = sizeof h;
    uint64_t need = sizeof h + (uint64_t)h.n * sizeof(struct fdr__class) + h.pool_size;
    if (need != len) {
        *at = need < len ? (size_t)need : len;
        *why = need < len ? "bytes after the pool" : "truncated";
        return -1;
    }
    out->classes = (const struct fdr__class *)((const char *)file + sizeof h);
    out->n = h.n;
    out->pool = (const char *)file + sizeof h + (size_t)h.n * sizeof(struct fdr__class);
    out->pool_size = h.pool_size;
    k->start = h.clock_start;
    k->freq = h.clock_freq;
    return 0;
}

int fdr__tsdl_clock(const char *meta, size_t len, uint64_t *freq, int64_t *offset_s,
                    uint64_t *offset)
{
    const char *c = memmem(meta, len, "clock {", 7);
    if (!c)
        return -1;
    const char *f = strstr(c, "\tfreq = "), *os = strstr(c, "\toffset_s = "),
               *o = strstr(c, "\toffset = ");
    if (!f || !os || !o)
        return -1;
    uint64_t hz = strtoull(f + 8, NULL, 10);
    if (!hz)
        return -1;
    *freq = hz;
    *offset_s = strtoll(os + 12, NULL, 10);
    *offset = strtoull(o + 10, NULL, 10);
    return 0;
}
