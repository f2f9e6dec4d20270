/* SPDX-License-Identifier: MIT */
/* provider.c - provider identity (common/provider.h): every field equal,
 * the name compared in full (both are NUL-padded to the same size). */
#include <string.h>

#include "common/provider.h"

void fdr__provider_id_set(struct fdr__provider_id *id, const fdr_provider_desc_t *d)
{
    memset(id, 0, sizeof *id);
    id->size = (uint32_t)d->size;
    id->nevents = d->nevents;
    id->checksum = d->checksum;
    id->alignment = d->alignment;
    id->sizeof_int = d->sizeof_int;
    id->sizeof_long = d->sizeof_long;
    id->sizeof_pointer = d->sizeof_pointer;
    id->sizeof_size_t = d->sizeof_size_t;
    size_t n = strnlen(d->name, FDR_PROVIDER_NAME_MAX);
    memcpy(id->name, d->name, n);
}

const char *fdr__provider_id_differs(const struct fdr__provider_id *a,
                                     const struct fdr__provider_id *b, uint32_t *was,
                                     uint32_t *now)
{
    if (memcmp(a->name, b->name, sizeof a->name) != 0)
        return "name";
    const struct {
        const char *field;
        uint32_t a, b;
    } f[] = {
        {"size", a->size, b->size},
        {"nevents", a->nevents, b->nevents},
        {"checksum", a->checksum, b->checksum},
        {"alignment", a->alignment, b->alignment},
        {"sizeof_int", a->sizeof_int, b->sizeof_int},
        {"sizeof_long", a->sizeof_long, b->sizeof_long},
        {"sizeof_pointer", a->sizeof_pointer, b->sizeof_pointer},
        {"sizeof_size_t", a->sizeof_size_t, b->sizeof_size_t},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].a != f[i].b) {
            *was = f[i].a;
            *now = f[i].b;
            return f[i].field;
        }
    return NULL;
}
