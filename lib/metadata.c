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
 * keywords. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdr-int.h"

static const char *type_decl(uint8_t t)
{
    switch (t) {
    case FDR__T_BOOL: return "integer { size = 8; align = 8; signed = false; }";
    case FDR__T_CHAR: return "integer { size = 8; align = 8; signed = true; }";
    case FDR__T_I8: return "integer { size = 8; align = 8; signed = true; }";
    case FDR__T_U8: return "integer { size = 8; align = 8; signed = false; }";
    case FDR__T_I16: return "integer { size = 16; align = 8; signed = true; }";
    case FDR__T_U16: return "integer { size = 16; align = 8; signed = false; }";
    case FDR__T_I32: return "integer { size = 32; align = 8; signed = true; }";
    case FDR__T_U32: return "integer { size = 32; align = 8; signed = false; }";
    case FDR__T_I64: return "integer { size = 64; align = 8; signed = true; }";
    case FDR__T_U64: return "integer { size = 64; align = 8; signed = false; }";
    case FDR__T_F32: return "floating_point { exp_dig = 8; mant_dig = 24; align = 8; }";
    case FDR__T_F64: return "floating_point { exp_dig = 11; mant_dig = 53; align = 8; }";
    case FDR__T_PTR:
        return sizeof(void *) == 8
                   ? "integer { size = 64; align = 8; signed = false; base = 16; }"
                   : "integer { size = 32; align = 8; signed = false; base = 16; }";
    case FDR__T_STR: return "string { encoding = UTF8; }";
    default: return NULL;
    }
}

/* Writes s as a TSDL string literal body (escapes quotes and controls). */
static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
}

static void uuid_text(char out[37], const uint8_t u[16])
{
    snprintf(out, 37,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

static void write_event(FILE *f, const struct fdr__class *c)
{
    fprintf(f, "event {\n\tname = \"");
    put_escaped(f, fdr__str(c->provider));
    fputc(':', f);
    put_escaped(f, fdr__str(c->event));
    fprintf(f, "\";\n\tid = %u;\n\tfields := struct {\n", c->id);
    for (unsigned i = 0; i < c->nfields && i < FDR_MAX_FIELDS; i++) {
        const char *name = fdr__str(c->names[i]);
        if (c->types[i] == FDR__T_BYTES) {
            fprintf(f, "\t\tinteger { size = 32; align = 8; signed = false; } _%s_len;\n",
                    name);
            fprintf(f,
                    "\t\tinteger { size = 8; align = 8; signed = false; base = 16; } "
                    "_%s[_%s_len];\n",
                    name, name);
            continue;
        }
        const char *t = type_decl(c->types[i]);
        if (t)
            fprintf(f, "\t\t%s _%s;\n", t, name);
    }
    fprintf(f, "\t};\n};\n\n");
}

static int write_to(FILE *f)
{
    char uuid[37];
    uuid_text(uuid, fdr__trace_uuid);
    struct fdr__clock_params clk;
    fdr__clock_params(&clk);
    char host[256] = "unknown", proc[17] = "unknown";
    gethostname(host, sizeof host - 1);
    FILE *comm = fopen("/proc/self/comm", "re");
    if (comm) {
        if (fgets(proc, sizeof proc, comm))
            proc[strcspn(proc, "\n")] = 0;
        fclose(comm);
    }
    fprintf(f, "/* CTF 1.8 */\n\n"
               "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
               "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
               "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
               "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n\n");
    fprintf(f,
            "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n"
            "\tbyte_order = %s;\n\tpacket.header := struct {\n"
            "\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
            "\t\tuint64_t stream_instance_id;\n\t};\n};\n\n",
            uuid, __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "le" : "be");
    fprintf(f, "env {\n\thostname = \"");
    put_escaped(f, host);
    fprintf(f, "\";\n\tvpid = %d;\n\tprocname = \"", (int)fdr__pid);
    put_escaped(f, proc);
    fprintf(f,
            "\";\n\ttracer_name = \"fdr\";\n\ttracer_major = %d;\n\ttracer_minor = %d;\n"
            "\ttracer_patch = %d;\n\ttracer_version = \"%s\";\n\tdomain = \"fdr\";\n};\n\n",
            FDR_VERSION_MAJOR, FDR_VERSION_MINOR, FDR_VERSION_PATCH, FDR_VERSION_STRING);
    fprintf(f,
            "clock {\n\tname = \"fdr\";\n\tuuid = \"%s\";\n"
            "\tdescription = \"%s\";\n\tfreq = %llu;\n\tprecision = 1;\n"
            "\toffset_s = %lld;\n\toffset = %llu;\n\tabsolute = TRUE;\n};\n\n",
            uuid,
#if defined(__x86_64__) || defined(__i386__)
            "x86 TSC, calibrated against CLOCK_MONOTONIC and CLOCK_REALTIME",
#elif defined(__aarch64__)
            "arm64 CNTVCT_EL0",
#else
            "CLOCK_MONOTONIC",
#endif
            (unsigned long long)clk.freq, (long long)clk.offset_s,
            (unsigned long long)clk.offset);
    fprintf(f, "typealias integer { size = 64; align = 8; signed = false; "
               "map = clock.fdr.value; } := uint64_clock_t;\n\n");
    fprintf(f, "stream {\n\tpacket.context := struct {\n"
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
    return ferror(f) ? -EIO : 0;
}

int fdr__metadata_write(const char *dir)
{
    char tmp[PATH_MAX + 32], path[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s/.metadata.tmp", dir);
    snprintf(path, sizeof path, "%s/metadata", dir);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return -ENOMEM;
    }
    int r = write_to(f);
    if (fclose(f) != 0 && r == 0)
        r = -EIO;
    if (r == 0 && rename(tmp, path) < 0)
        r = -errno;
    if (r < 0)
        unlink(tmp);
    return r;
}
