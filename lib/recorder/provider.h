/* SPDX-License-Identifier: MIT */
/* recorder/provider.h - providers and raw events (provider.c). */
#ifndef FDR_RECORDER_PROVIDER_H
#define FDR_RECORDER_PROVIDER_H

#include <stddef.h>

#include "fdr/provider.h"

/* fdr_raw_event_max and fdr_raw_event once the library has started
 * (api.c). */
size_t fdr__raw_event_max(void);
int fdr__raw_event(fdr_provider_t *p, unsigned event_id, const void *data, size_t size);

#endif
