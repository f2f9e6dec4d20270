/* SPDX-License-Identifier: MIT */
/* providers.c - the provider table of the LTT design, held by fdrd.
 *
 * A provider (LTT's facility) is registered by a process with its name,
 * number of events, checksum, alignment and the sizes of int, long,
 * pointer and size_t. Identity is every field equal, with the rule of
 * lib/common/provider.h (the one libfdr applies inside a process): the same
 * provider registered by any number of processes gets one handle, so the
 * daemon (and, later, its trace metadata) describes it once.
 *
 * A registration whose name matches an existing provider but whose other
 * fields differ is NOT refused: it gets a handle of its own. Two builds of
 * one program (a 32-bit and a 64-bit one, or an old and a new version
 * whose event layouts changed the checksum) may run at the same time, and
 * refusing the second would make tracing depend on which started first;
 * their payloads are laid out differently, so they must not share a
 * handle, and a reader tells them apart by the handle.
 *
 * DESIGN. An array sorted by handle (handles only grow, so appending keeps
 * it sorted; lookups by identity are linear: registration is rare and the
 * table is bounded by FDRD_PROVIDERS_MAX). References are counted per
 * process, i.e. per connection: the server keeps, for each connection, the
 * handles it took, and drops them when the connection ends however it
 * ends (exit, SIGKILL: the kernel closes the socket). An entry is freed
 * when its count reaches zero; its handle is never given out again. No
 * trace references providers yet (that comes with the buffers). */
#define _GNU_SOURCE
#include "providers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pow2_upto16(uint32_t v)
{
    return v >= 1 && v <= 16 && (v & (v - 1)) == 0;
}

int fdrd_provider_check(const struct fdr__provider_id *id, char *msg, size_t cap)
{
    const char *n = id->name;
    size_t len = strnlen(n, sizeof id->name);
    int ok = len >= 1 && len <= FDR_PROVIDER_NAME_MAX && !(n[0] >= '0' && n[0] <= '9');
    for (size_t i = 0; ok && i < len; i++)
        ok = (n[i] >= 'a' && n[i] <= 'z') || (n[i] >= 'A' && n[i] <= 'Z') ||
             (n[i] >= '0' && n[i] <= '9') || n[i] == '_';
    if (!ok) {
        snprintf(msg, cap, "bad provider name: [A-Za-z_][A-Za-z0-9_]*, 1 to %d bytes",
                 FDR_PROVIDER_NAME_MAX);
        return -EINVAL;
    }
    if (id->nevents < 1 || id->nevents > FDR_PROVIDER_EVENTS_MAX) {
        snprintf(msg, cap, "provider %s: %u events (1 to %d)", n, id->nevents,
                 FDR_PROVIDER_EVENTS_MAX);
        return -EINVAL;
    }
    if (!pow2_upto16(id->sizeof_int) || !pow2_upto16(id->sizeof_long) ||
        !pow2_upto16(id->sizeof_pointer) || !pow2_upto16(id->sizeof_size_t) ||
        (id->alignment != 0 && !pow2_upto16(id->alignment))) {
        snprintf(msg, cap,
                 "provider %s: sizes and alignment must be powers of two up to 16", n);
        return -EINVAL;
    }
    return 0;
}

int fdrd_providers_ref(struct fdrd_providers *t, const struct fdr__provider_id *id,
                       uint32_t *handle)
{
    uint32_t was, now;
    for (size_t i = 0; i < t->n; i++)
        if (!fdr__provider_id_differs(&t->v[i].id, id, &was, &now)) {
            t->v[i].refcount++;
            *handle = t->v[i].handle;
            return 0;
        }
    if (t->n >= FDRD_PROVIDERS_MAX)
        return -ENOSPC;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        struct fdrd_provider *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        t->v = v;
        t->cap = cap;
    }
    struct fdrd_provider *p = &t->v[t->n++];
    p->handle = ++t->next_handle;
    p->refcount = 1;
    p->id = *id;
    *handle = p->handle;
    return 0;
}

int fdrd_providers_unref(struct fdrd_providers *t, uint32_t handle)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].handle == handle) {
            if (--t->v[i].refcount == 0) {
                memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof *t->v);
                t->n--;
            }
            return 0;
        }
    return -ENOENT;
}

void fdrd_providers_free(struct fdrd_providers *t)
{
    free(t->v);
    memset(t, 0, sizeof *t);
}
