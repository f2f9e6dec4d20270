/* SPDX-License-Identifier: MIT */
/* metadata.c - the CTF 1.8 metadata (TSDL) of a trace.
 *
 * One text file, `metadata`, describes everything a reader needs to decode
 * the stream files: the packet header and context (docs/trace-format.md),
 * the clock (frequency and offset from the epoch, see clock.c), the event
 * header (u16 class id + u64 timestamp) and one `event` block per class of
 * the registry. All fields are byte-aligned and in native byte order, which
 * is how the fast path stores them.
 *
 * The file is rewritten whole, through a temporary file and rename(2), each
 * time the set of classes grows, so a reader never sees half of it. Field
 * names get a leading underscore, as LTTng does: CTF readers strip one, and
 * it keeps names such as `string` or `align` from clashing with TSDL
 * keywords.
 *
 * The text is produced without stdio or malloc, through a caller's buffer
 * that is flushed to a file descriptor with write(2) when full
 * (fdr__metadata_emit): the crash handler writes the metadata of its
 * snapshot from a signal handler with it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdr/fdr.h"
#include "common/format.h"
#include "recorder/buffer.h"
#include "recorder/clock.h"
#include "recorder/init.h"
#include "recorder/metadata.h"
#include "recorder/registry.h"
#include "common/tracedir.h"

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
        return sizeof(void *) == 8 ? "integer { size = 64; align = 8; signed = false;"
                                   : "integer { size = 32; align = 8; signed = false;";
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
    if (t == FDR__T_PTR || conv == 'x' || conv == 'X')
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

static void write_event(struct emit *f, const struct fdr__class *c)
{
    puts_(f, "event {\n\tname = \"");
    put_escaped(f, fdr__str(c->provider));
    put(f, ":", 1);
    put_escaped(f, fdr__str(c->event));
    puts_(f, "\";\n\tid = ");
    put_u64(f, c->id);
    puts_(f, ";\n\tfields := struct {\n");
    char conv[FDR_MAX_FIELDS] = {0};
    fdr__format_convs(fdr__str(c->format), conv);
    for (unsigned i = 0; i < c->nfields && i < FDR_MAX_FIELDS; i++) {
        const char *name = fdr__str(c->names[i]);
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

/* The program's name from /proc/self/comm, with open/read only. */
static void proc_name(char out[17])
{
    memcpy(out, "unknown", 8);
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, 16);
    close(fd);
    if (n <= 0) {
        memcpy(out, "unknown", 8);
        return;
    }
    out[n] = 0;
    out[strcspn(out, "\n")] = 0;
}

int fdr__metadata_emit(int fd, char *buf, size_t cap)
{
    struct emit e = {fd, buf, cap, 0, 0}, *f = &e;
    char uuid[37];
    uuid_text(uuid, fdr__trace_uuid);
    struct fdr__clock_params clk;
    fdr__clock_params(&clk);
    char proc[17];
    proc_name(proc);
    struct utsname un; /* uname(2) is async-signal-safe, gethostname is not listed */
    if (uname(&un) < 0)
        memcpy(un.nodename, "unknown", 8);
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
    put_escaped(f, un.nodename);
    puts_(f, "\";\n\tvpid = ");
    put_i64(f, (int64_t)fdr__pid);
    puts_(f, ";\n\tprocname = \"");
    put_escaped(f, proc);
    puts_(f, "\";\n\ttracer_name = \"fdr\";\n\ttracer_major = ");
    put_u64(f, FDR_VERSION_MAJOR);
    puts_(f, ";\n\ttracer_minor = ");
    put_u64(f, FDR_VERSION_MINOR);
    puts_(f, ";\n\ttracer_patch = ");
    put_u64(f, FDR_VERSION_PATCH);
    puts_(f, ";\n\ttracer_version = \"" FDR_VERSION_STRING
             "\";\n\tdomain = \"fdr\";\n};\n\n");
    puts_(f, "clock {\n\tname = \"fdr\";\n\tuuid = \"");
    puts_(f, uuid);
    puts_(f, "\";\n\tdescription = \""
#if defined(__x86_64__) || defined(__i386__)
             "x86 TSC, calibrated against CLOCK_MONOTONIC and CLOCK_REALTIME"
#elif defined(__aarch64__)
             "arm64 CNTVCT_EL0"
#else
             "CLOCK_MONOTONIC"
#endif
             "\";\n\tfreq = ");
    put_u64(f, clk.freq);
    puts_(f, ";\n\tprecision = 1;\n\toffset_s = ");
    put_i64(f, clk.offset_s);
    puts_(f, ";\n\toffset = ");
    put_u64(f, clk.offset);
    puts_(f, ";\n\tabsolute = TRUE;\n};\n\n");
    puts_(f, "typealias integer { size = 64; align = 8; signed = false; "
             "map = clock.fdr.value; } := uint64_clock_t;\n\n");
    puts_(f, "stream {\n\tpacket.context := struct {\n"
             "\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"
             "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
             "\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n"
             "\t\tuint32_t pid;\n\t\tuint32_t tid;\n"
             "\t\tinteger { size = 8; align = 8; signed = false; encoding = UTF8; } "
             "thread_name[16];\n\t};\n"
             "\tevent.header := struct {\n\t\tuint16_t id;\n"
             "\t\tuint64_clock_t timestamp;\n\t};\n};\n\n");
    uint32_t n = fdr__class_count();
    for (uint32_t id = 1; id <= n; id++) {
        const struct fdr__class *c = fdr__class_get((uint16_t)id);
        if (c)
            write_event(f, c);
    }
    flush_out(f);
    return e.err;
}

struct emit_buf {
    char *buf;
    size_t cap;
};

static int emit_into(int fd, void *arg)
{
    const struct emit_buf *e = arg;
    return fdr__metadata_emit(fd, e->buf, e->cap);
}

int fdr__metadata_write(int dir_fd, char *buf, size_t cap)
{
    struct emit_buf e = {buf, cap};
    return fdr__tracedir_replace(dir_fd, "metadata", emit_into, &e);
}
