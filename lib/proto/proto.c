/* SPDX-License-Identifier: MIT */
/* proto.c - the one validator of fdr's messages, and small encode helpers.
 *
 * Every message that crosses the socket, in either direction, is hostile
 * until fdr__proto_check() said otherwise: the daemon must survive any
 * client, and a process must survive a daemon that is not ours. The layouts
 * are drawn in proto.h; this file knows, per type, the fixed payload size,
 * which char arrays are strings, whether a run of pattern items follows,
 * and how many fds come with it (the TYPES table below). Adding a message
 * type is one row there and one struct in proto.h.
 *
 * DESIGN. The check never reads outside buf[0..len) and copies every number
 * it reads out with memcpy, so it works on unaligned bytes (the fuzzer's)
 * and never trusts a length before comparing it with len. Strings must end
 * inside their field: strnlen(field, cap) < cap. Pattern items must fill
 * their area exactly: nitems strings of 1..FDR_PROTO_ITEM_MAX bytes, each
 * with its NUL, summing to len. The reason of a refusal is one line for
 * the daemon's log. No globals, no allocation. */
#define _GNU_SOURCE
#include "proto/proto.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* clang-format off */
/* A string field: its offset and capacity. */
#define STR(type, field) {offsetof(type, field), sizeof(((type *)0)->field)}
#define NONE {0, 0}
/* A message of fixed size carrying nfds fds. */
#define FIXED(code, name, type, nfds, s0, s1) {code, name, sizeof(type), 0, 0, nfds, {s0, s1, NONE}}
/* The same with four string fields. */
#define FIXED4(code, name, type, s0, s1, s2, s3) {code, name, sizeof(type), 0, 0, 0, {s0, s1, s2, s3}}
/* A fixed part with u32 nitems, u32 len, then len bytes of items. */
#define ITEMS(code, name, type, s0, s1) \
    {code, name, sizeof(type), 1, offsetof(type, nitems), 0, {s0, s1, NONE}}
/* clang-format on */

struct str_field {
    unsigned short off, cap;
};

struct type_info {
    unsigned type;
    const char *name;
    size_t size;       /* fixed size, header included */
    int items;         /* 1: nitems/len at nitems_off, then the items area */
    size_t nitems_off; /* offset of u32 nitems, then u32 len */
    int nfds;          /* fds the message carries */
    struct str_field str[4];
};

#define P_ struct fdr__msg_register_process
#define V_ struct fdr__msg_register_provider
#define C_ struct fdr__msg_create
#define I_ struct fdr__msg_items
#define T_ struct fdr__msg_trace
#define TI_ struct fdr__msg_trace_info
/* clang-format off */
static const struct type_info TYPES[] = {
    FIXED(FDR__MSG_REGISTER_PROCESS, "register-process", P_, 0, STR(P_, name), NONE),
    FIXED(FDR__MSG_REGISTER_PROVIDER, "register-provider", V_, 0, STR(V_, name), NONE),
    FIXED(FDR__MSG_UNREGISTER_PROVIDER, "unregister-provider",
          struct fdr__msg_unregister_provider, 0, NONE, NONE),
    FIXED(FDR__MSG_BUFFER, "buffer", struct fdr__msg_buffer, 1, NONE, NONE),
    FIXED(FDR__MSG_CLASSES, "classes", struct fdr__msg_classes, 1, NONE, NONE),
    ITEMS(FDR__MSG_ROUTE, "route", struct fdr__msg_route, NONE, NONE),
    FIXED(FDR__MSG_NEED_BUFFERS, "need-buffers", struct fdr__msg_need_buffers, 0,
          NONE, NONE),
    FIXED(FDR__MSG_DEAD_RING, "dead-ring", struct fdr__msg_dead_ring, 0, NONE, NONE),
    FIXED(FDR__MSG_OWN_RING, "own-ring", struct fdr__msg_own_ring, 1, NONE, NONE),
    FIXED(FDR__MSG_LOST, "lost", struct fdr__msg_lost, 0, NONE, NONE),
    FIXED4(FDR__MSG_CREATE, "create", C_, STR(C_, name), STR(C_, outdir), STR(C_, relayd),
           STR(C_, buffers)),
    ITEMS(FDR__MSG_ENABLE, "enable", I_, STR(I_, name), NONE),
    ITEMS(FDR__MSG_DISABLE, "disable", I_, STR(I_, name), NONE),
    FIXED(FDR__MSG_FILTER, "filter", struct fdr__msg_filter, 0,
          STR(struct fdr__msg_filter, name), NONE),
    FIXED(FDR__MSG_START, "start", T_, 0, STR(T_, name), NONE),
    FIXED(FDR__MSG_STOP, "stop", T_, 0, STR(T_, name), NONE),
    FIXED(FDR__MSG_DESTROY, "destroy", T_, 0, STR(T_, name), NONE),
    FIXED(FDR__MSG_LIST, "list", struct fdr__msg_list, 0, NONE, NONE),
    FIXED(FDR__MSG_STATUS, "status", struct fdr__msg_hdr, 0, NONE, NONE),
    ITEMS(FDR__MSG_CONTROL, "control", struct fdr__msg_control, NONE, NONE),
    ITEMS(FDR__MSG_STATE, "state", struct fdr__msg_state, NONE, NONE),
    ITEMS(FDR__MSG_STATE_INFO, "state-info", struct fdr__msg_state, NONE, NONE),
    FIXED(FDR__MSG_SNAPSHOT, "snapshot", struct fdr__msg_snapshot, 0,
          STR(struct fdr__msg_snapshot, name), STR(struct fdr__msg_snapshot, outdir)),
    FIXED(FDR__MSG_REPLY, "reply", struct fdr__msg_reply, 0,
          STR(struct fdr__msg_reply, text), NONE),
    {FDR__MSG_TRACE_INFO, "trace-info", sizeof(TI_), 1, offsetof(TI_, nitems), 0,
     {STR(TI_, name), STR(TI_, outdir), STR(TI_, relayd)}},
    FIXED(FDR__MSG_PROCESS_INFO, "process-info", struct fdr__msg_process_info, 0,
          STR(struct fdr__msg_process_info, name), NONE),
    FIXED(FDR__MSG_PROVIDER_INFO, "provider-info", struct fdr__msg_provider_info, 0,
          STR(struct fdr__msg_provider_info, name), NONE),
    FIXED(FDR__MSG_STATUS_INFO, "status-info", struct fdr__msg_status_info, 0,
          STR(struct fdr__msg_status_info, rundir), NONE),
    FIXED(FDR__MSG_END, "end", struct fdr__msg_hdr, 0, NONE, NONE),
};
/* clang-format on */

_Static_assert(sizeof(struct fdr__msg_hdr) == 16, "header layout");
_Static_assert(sizeof(struct fdr__msg_trace) == 88, "trace layout");
_Static_assert(sizeof(struct fdr__msg_create) == 8592, "create layout");
_Static_assert(sizeof(struct fdr__msg_snapshot) == 4184, "snapshot layout");
_Static_assert(sizeof(struct fdr__msg_items) == 96, "items layout");
_Static_assert(sizeof(struct fdr__msg_control) == 32, "control layout");
_Static_assert(sizeof(struct fdr__msg_state) == 32, "state layout");
_Static_assert(offsetof(struct fdr__msg_control, len) ==
                   offsetof(struct fdr__msg_control, nitems) + 4,
               "len follows nitems");
_Static_assert(offsetof(struct fdr__msg_state, len) ==
                   offsetof(struct fdr__msg_state, nitems) + 4,
               "len follows nitems");
_Static_assert(sizeof(struct fdr__msg_filter) == 96, "filter layout");
_Static_assert(sizeof(struct fdr__msg_list) == 24, "list layout");
_Static_assert(sizeof(struct fdr__msg_register_process) == 120, "process layout");
_Static_assert(sizeof(struct fdr__msg_register_provider) == 112, "provider layout");
_Static_assert(sizeof(struct fdr__msg_buffer) == 40, "buffer layout");
_Static_assert(sizeof(struct fdr__msg_classes) == 80, "classes layout");
_Static_assert(sizeof(struct fdr__msg_own_ring) == 40, "own-ring layout");
_Static_assert(sizeof(struct fdr__msg_lost) == 40, "lost layout");
_Static_assert(sizeof(struct fdr__msg_route) == 56, "route layout");
_Static_assert(offsetof(struct fdr__msg_route, len) ==
                   offsetof(struct fdr__msg_route, nitems) + 4,
               "len follows nitems");
_Static_assert(sizeof(struct fdr__msg_need_buffers) == 24, "need-buffers layout");
_Static_assert(sizeof(struct fdr__msg_reply) == 280, "reply layout");
_Static_assert(sizeof(struct fdr__msg_trace_info) == 4536, "trace-info layout");
_Static_assert(sizeof(struct fdr__msg_process_info) == 128, "process-info layout");
_Static_assert(sizeof(struct fdr__msg_provider_info) == 120, "provider-info layout");
_Static_assert(sizeof(struct fdr__msg_status_info) == 4152, "status-info layout");
_Static_assert(offsetof(struct fdr__msg_items, len) ==
                   offsetof(struct fdr__msg_items, nitems) + 4,
               "len follows nitems");
_Static_assert(offsetof(struct fdr__msg_trace_info, len) ==
                   offsetof(struct fdr__msg_trace_info, nitems) + 4,
               "len follows nitems");
_Static_assert(sizeof(struct fdr__msg_trace_info) + FDR_PROTO_ITEMS_CAP <=
                   FDR_PROTO_MSG_MAX,
               "a full trace fits in one message");

static const struct type_info *find_type(unsigned type)
{
    for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
        if (TYPES[i].type == type)
            return &TYPES[i];
    return NULL;
}

const char *fdr__proto_type_name(unsigned type)
{
    const struct type_info *t = find_type(type);
    return t ? t->name : "?";
}

static int refuse(char *why, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t cap, const char *fmt, ...)
{
    if (why && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, cap, fmt, ap);
        va_end(ap);
    }
    return -EBADMSG;
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

int fdr__proto_check(const void *buf, size_t len, int nfds, char *why, size_t why_cap)
{
    const unsigned char *b = buf;
    struct fdr__msg_hdr h;
    if (!buf || len < sizeof h)
        return refuse(why, why_cap, "%zu bytes, shorter than a header (16)", len);
    memcpy(&h, b, sizeof h);
    if (h.size != len)
        return refuse(why, why_cap, "size field %u but %zu bytes came", h.size, len);
    if (len > FDR_PROTO_MSG_MAX)
        return refuse(why, why_cap, "%zu bytes, more than %u", len, FDR_PROTO_MSG_MAX);
    if (h.version != FDR_PROTO_VERSION)
        return refuse(why, why_cap, "version %u (this is version %u)", h.version,
                      FDR_PROTO_VERSION);
    const struct type_info *t = find_type(h.type);
    if (!t)
        return refuse(why, why_cap, "unknown type %u", h.type);
    if (nfds != t->nfds)
        return refuse(why, why_cap, "%s with %d fds (it carries %d)", t->name, nfds,
                      t->nfds);
    if (!t->items && len != t->size)
        return refuse(why, why_cap, "%s of %zu bytes (it has %zu)", t->name, len,
                      t->size);
    if (t->items && len < t->size)
        return refuse(why, why_cap, "%s of %zu bytes (at least %zu)", t->name, len,
                      t->size);
    for (size_t i = 0; i < sizeof t->str / sizeof *t->str; i++) {
        const struct str_field *s = &t->str[i];
        if (s->cap && strnlen((const char *)b + s->off, s->cap) == s->cap)
            return refuse(why, why_cap,
                          "%s: string at offset %u not terminated in its %u bytes",
                          t->name, s->off, s->cap);
    }
    if (!t->items)
        return 0;
    uint32_t nitems = get32(b + t->nitems_off), ilen = get32(b + t->nitems_off + 4);
    if (ilen != len - t->size)
        return refuse(why, why_cap, "%s: items length %u but %zu bytes follow", t->name,
                      ilen, len - t->size);
    if (ilen > FDR_PROTO_ITEMS_CAP || nitems > FDR_PROTO_ITEMS_MAX)
        return refuse(why, why_cap, "%s: %u items of %u bytes (at most %u of %u)",
                      t->name, nitems, ilen, FDR_PROTO_ITEMS_MAX, FDR_PROTO_ITEMS_CAP);
    const char *p = (const char *)b + t->size, *end = p + ilen;
    for (uint32_t i = 0; i < nitems; i++) {
        size_t n = strnlen(p, (size_t)(end - p));
        if (p + n == end)
            return refuse(why, why_cap, "%s: item %u not terminated", t->name, i);
        if (n == 0 || n > FDR_PROTO_ITEM_MAX)
            return refuse(why, why_cap, "%s: item %u of %zu bytes (1 to %d)", t->name, i,
                          n, FDR_PROTO_ITEM_MAX);
        p += n + 1;
    }
    if (p != end)
        return refuse(why, why_cap, "%s: %zu bytes after the %u items", t->name,
                      (size_t)(end - p), nitems);
    return 0;
}

void fdr__proto_init(void *msg, size_t size, unsigned type, uint32_t seq)
{
    struct fdr__msg_hdr h = {(uint32_t)size, FDR_PROTO_VERSION, (uint16_t)type, seq, 0};
    memcpy(msg, &h, sizeof h);
}

int fdr__proto_set_str(char *dst, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n >= cap)
        return -ENAMETOOLONG;
    memcpy(dst, s, n);
    memset(dst + n, 0, cap - n);
    return 0;
}

int fdr__proto_trace_name_check(const char *name, char *msg, size_t cap)
{
    size_t n = strlen(name);
    const char *why = NULL;
    if (n == 0)
        why = "empty";
    else if (n > FDR_PROTO_TRACE_NAME_MAX)
        why = "longer than 64 bytes";
    else if (name[0] == '.' || name[0] == '-')
        why = "starts with '.' or '-'";
    else
        for (size_t i = 0; i < n && !why; i++) {
            char c = name[i];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
                why = "only letters, digits, '_', '.' and '-' are allowed";
        }
    if (!why)
        return 0;
    if (msg && cap) {
        char shown[FDR_PROTO_TRACE_NAME_MAX * 4 + 8];
        size_t o = 0;
        for (size_t i = 0; i < n && o + 8 < sizeof shown; i++) {
            unsigned char c = (unsigned char)name[i];
            if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\')
                o += (size_t)snprintf(shown + o, sizeof shown - o, "\\x%02x", c);
            else
                shown[o++] = (char)c;
        }
        if (o + 8 >= sizeof shown)
            o += (size_t)snprintf(shown + o, sizeof shown - o, "...");
        shown[o] = 0;
        snprintf(msg, cap, "bad trace name '%s': %s", shown, why);
    }
    return -EINVAL;
}

int fdr__proto_cat(char *out, size_t cap, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la + lb < cap) {
        memcpy(out, a, la);
        memcpy(out + la, b, lb + 1);
    } else if (cap) {
        out[0] = 0;
    }
    return la + lb > INT_MAX ? INT_MAX : (int)(la + lb);
}

int fdr__proto_rundir(char *out, size_t cap, const char *fdr_rundir,
                      const char *xdg_runtime, const char *home, unsigned long uid,
                      char *note, size_t note_cap)
{
    int n;
    if (note && note_cap)
        note[0] = 0;
    if (fdr_rundir && *fdr_rundir)
        n = fdr__proto_cat(out, cap, fdr_rundir, "");
    else if (xdg_runtime && *xdg_runtime)
        n = fdr__proto_cat(out, cap, xdg_runtime, "/fdr");
    else {
        char num[24], *p = num + sizeof num; /* uid in decimal, backwards */
        unsigned long u = uid;
        *--p = 0;
        do
            *--p = (char)('0' + u % 10);
        while (u /= 10);
        n = fdr__proto_cat(out, cap, "/tmp/fdr-", p);
        /* Anyone can make /tmp/fdr-UID first (a squatter): then the
         * user's own $HOME/.fdr/run, which nobody else can make. One
         * lstat, which never blocks on a local /tmp. */
        struct stat st;
        char alt[128];
        int k = home && home[0] == '/'
                    ? fdr__proto_cat(alt, sizeof alt, home, "/.fdr/run")
                    : -1;
        if (n > 0 && (size_t)n < cap && lstat(out, &st) == 0 &&
            (!S_ISDIR(st.st_mode) || st.st_uid != uid) && k > 0 &&
            (size_t)k < sizeof alt && (size_t)k < cap) {
            if (note && note_cap)
                snprintf(note, note_cap,
                         "%s is not a directory of yours (uid %lu made it): fdrd's run "
                         "directory is %s",
                         out, (unsigned long)st.st_uid, alt);
            memcpy(out, alt, (size_t)k + 1);
            n = k;
        }
    }
    /* sun_path holds 108 bytes with the NUL; "/fdrd.sock" is 10 */
    if (n < 0 || (size_t)n >= cap || n + 10 >= 108)
        return -ENAMETOOLONG;
    return n;
}
