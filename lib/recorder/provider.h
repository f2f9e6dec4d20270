/* SPDX-License-Identifier: MIT */
/* recorder/provider.h - providers and raw events (provider.c). */
#ifndef FDR_RECORDER_PROVIDER_H
#define FDR_RECORDER_PROVIDER_H

#include <stddef.h>

#include "fdr/provider.h"
#include "common/provider.h"

/* fdr_raw_event_max and fdr_raw_event once the library has started
 * (api.c). */
size_t fdr__raw_event_max(void);
int fdr__raw_event(fdr_provider_t *p, unsigned event_id, const void *data, size_t size);

/* The providers registered now: ids[i] of slot i, with an empty name for a
 * free slot (for fdrd's table, daemon.c), for the slots below the count
 * returned; every slot from it on is free (and ids[] there untouched). */
uint32_t fdr__provider_snapshot(struct fdr__provider_id ids[FDR_PROVIDER_MAX]);
/* Called, outside any lock, after a provider was added or removed; set by
 * init.c (the daemon client), does nothing before. */
extern void (*fdr__provider_changed_hook)(void);

#endif
