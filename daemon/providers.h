/* SPDX-License-Identifier: MIT */
/* providers.h - fdrd's provider table: handles shared by identity,
 * counted by process. */
#ifndef FDRD_PROVIDERS_H
#define FDRD_PROVIDERS_H

#include <stddef.h>
#include <stdint.h>

#include "common/provider.h"

#define FDRD_PROVIDERS_MAX 4096 /* providers in the table at once */

struct fdrd_provider {
    uint32_t handle;   /* 1, 2, ...: never reused while fdrd runs */
    uint32_t refcount; /* processes (connections) that use it */
    struct fdr__provider_id id;
};

struct fdrd_providers {
    struct fdrd_provider *v; /* sorted by handle */
    size_t n, cap;
    uint32_t next_handle;
};

/* Checks the fields of a registration (name [A-Za-z_][A-Za-z0-9_]*, 1 to
 * 63 bytes; nevents 1..65535; sizes powers of two 1..16; alignment 0 or a
 * power of two up to 16). Returns 0, or -EINVAL with a one-line message. */
int fdrd_provider_check(const struct fdr__provider_id *id, char *msg, size_t cap);

/* Finds the provider with identity `id` (every field equal,
 * fdr__provider_id_differs) or adds it with a new handle; takes one
 * reference. Returns 0 with *handle, or -ENOSPC (table full). */
int fdrd_providers_ref(struct fdrd_providers *t, const struct fdr__provider_id *id,
                       uint32_t *handle);

/* Drops one reference of `handle`; frees the entry at zero. Returns 0 or
 * -ENOENT. */
int fdrd_providers_unref(struct fdrd_providers *t, uint32_t handle);

/* Frees the table. */
void fdrd_providers_free(struct fdrd_providers *t);

#endif
