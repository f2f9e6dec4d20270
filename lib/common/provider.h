/* SPDX-License-Identifier: MIT */
/* common/provider.h - what a provider is, and when two are the same.
 *
 * A provider (LTT's "facility") is identified by its name and the sizes
 * its events were compiled with. The rule: two registrations are the same
 * provider iff every field below is equal. The library applies it to the
 * registrations of one process; fdrd will apply it, through this same
 * code, to the providers of many processes. */
#ifndef FDR_COMMON_PROVIDER_H
#define FDR_COMMON_PROVIDER_H

#include <stdint.h>

#include "fdr/provider.h"

struct fdr__provider_id {
    uint32_t size; /* of the description the program was compiled with */
    uint32_t nevents;
    uint32_t checksum;
    uint32_t alignment;
    uint32_t sizeof_int, sizeof_long, sizeof_pointer, sizeof_size_t;
    char name[FDR_PROVIDER_NAME_MAX + 1]; /* NUL-padded */
};

/* The identity that desc describes (desc checked by the caller: its name
 * fits). */
void fdr__provider_id_set(struct fdr__provider_id *id, const fdr_provider_desc_t *desc);
/* NULL when a and b are the same provider; else the name of the first
 * field that differs ("name", "size", ...), with its values in *was (a's)
 * and *now (b's) for a number. */
const char *fdr__provider_id_differs(const struct fdr__provider_id *a,
                                     const struct fdr__provider_id *b, uint32_t *was,
                                     uint32_t *now);

#endif
