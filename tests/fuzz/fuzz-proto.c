/* SPDX-License-Identifier: MIT */
/* fuzz-proto.c - libFuzzer target for lib/proto: the message validator
 * and fd-less receiving.
 *
 * Input: one byte (the number of fds the message claims to come with,
 * modulo FDR_PROTO_FDS_MAX + 1), then the message bytes.
 * Property: fdr__proto_check never reads outside the message (ASan), never
 * crashes, and gives 0 or -EBADMSG with a one-line reason; when it accepts,
 * every string field of the type is terminated inside its field, the
 * pattern items fill their area exactly, the size field equals the length,
 * and the same bytes one byte shorter are refused. The message sent through
 * a SOCK_SEQPACKET socketpair comes out of fdr__proto_recv whole, with no
 * fds. Seeds (tests/fuzz/corpus/proto): one valid message of every type,
 * plus truncated, oversized, bad-version and unterminated ones. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/proto.h"

static uint64_t copy[FDR_PROTO_MSG_MAX / 8 + 1];
static uint64_t rx[FDR_PROTO_MSG_MAX / 8];

static void must_be_terminated(const char *field, size_t cap)
{
    if (strnlen(field, cap) >= cap)
        abort();
}

static void inspect(const void *msg, size_t len)
{
    const struct fdr__msg_hdr *h = msg;
    if (h->size != len || h->version != FDR_PROTO_VERSION)
        abort();
    const char *items = NULL;
    uint32_t nitems = 0, ilen = 0;
    switch (h->type) {
    case FDR__MSG_CREATE: {
        const struct fdr__msg_create *m = msg;
        must_be_terminated(m->name, sizeof m->name);
        must_be_terminated(m->outdir, sizeof m->outdir);
        must_be_terminated(m->relayd, sizeof m->relayd);
        must_be_terminated(m->buffers, sizeof m->buffers);
        char why[256];
        (void)fdr__proto_trace_name_check(m->name, why, sizeof why);
        break;
    }
    case FDR__MSG_ENABLE:
    case FDR__MSG_DISABLE: {
        const struct fdr__msg_items *m = msg;
        must_be_terminated(m->name, sizeof m->name);
        items = m->items, nitems = m->nitems, ilen = m->len;
        if (sizeof *m + ilen != len)
            abort();
        break;
    }
    case FDR__MSG_TRACE_INFO: {
        const struct fdr__msg_trace_info *m = msg;
        must_be_terminated(m->name, sizeof m->name);
        must_be_terminated(m->outdir, sizeof m->outdir);
        must_be_terminated(m->relayd, sizeof m->relayd);
        items = m->items, nitems = m->nitems, ilen = m->len;
        if (sizeof *m + ilen != len)
            abort();
        break;
    }
    case FDR__MSG_CONTROL: {
        const struct fdr__msg_control *m = msg;
        items = m->items, nitems = m->nitems, ilen = m->len;
        if (sizeof *m + ilen != len)
            abort();
        break;
    }
    case FDR__MSG_STATE:
    case FDR__MSG_STATE_INFO: {
        const struct fdr__msg_state *m = msg;
        items = m->items, nitems = m->nitems, ilen = m->len;
        if (sizeof *m + ilen != len)
            abort();
        break;
    }
    case FDR__MSG_REPLY: {
        const struct fdr__msg_reply *m = msg;
        must_be_terminated(m->text, sizeof m->text);
        break;
    }
    case FDR__MSG_STATUS_INFO: {
        const struct fdr__msg_status_info *m = msg;
        must_be_terminated(m->rundir, sizeof m->rundir);
        break;
    }
    default:
        if (strcmp(fdr__proto_type_name(h->type), "?") == 0)
            abort();
    }
    const char *p = items;
    for (uint32_t i = 0; i < nitems; i++) {
        size_t n = strlen(p);
        if (n == 0 || n > FDR_PROTO_ITEM_MAX)
            abort();
        p += n + 1;
    }
    if (items && p != items + ilen)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size - 1 > FDR_PROTO_MSG_MAX + 8)
        return 0;
    int nfds = data[0] % (FDR_PROTO_FDS_MAX + 1);
    size_t len = size - 1;
    memcpy(copy, data + 1, len); /* aligned, as a received message is */
    char why[256];
    why[0] = 0;
    int rc = fdr__proto_check(copy, len, nfds, why, sizeof why);
    if (rc != 0 && rc != -EBADMSG)
        abort();
    if (rc < 0 && (!why[0] || strchr(why, '\n')))
        abort();
    if (rc == 0) {
        inspect(copy, len);
        if (fdr__proto_check(copy, len - 1, nfds, NULL, 0) != -EBADMSG)
            abort();
    }

    /* The same bytes through the socket layer (messages of 1 byte up). */
    static int sv[2] = {-1, -1};
    if (sv[0] < 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        abort();
    if (len > 0 && len <= FDR_PROTO_MSG_MAX) {
        if (fdr__proto_send(sv[0], copy, len, NULL, 0) != 0)
            return 0; /* larger than the socket buffer: not what is fuzzed */
        int fds[FDR_PROTO_FDS_MAX], got = -1;
        long n = fdr__proto_recv(sv[1], rx, sizeof rx, fds, &got, FDR_PROTO_FDS_MAX);
        if (n != (long)len || got != 0 || memcmp(rx, copy, len) != 0)
            abort();
    }
    return 0;
}
