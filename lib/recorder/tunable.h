/* SPDX-License-Identifier: MIT */
/* recorder/tunable.h - tunables set from rule lists (tunable.c). */
#ifndef FDR_RECORDER_TUNABLE_H
#define FDR_RECORDER_TUNABLE_H

#include "fdr/tunable.h"

struct fdr__rules;

/* Registers the uses of a module's list [begin, end) (fdr__register_tunables,
 * api.c). */
void fdr__tunables_add(struct fdr__tunable *const *begin,
                       struct fdr__tunable *const *end);
/* Applies the NAME=VALUE items of r; warns (origin) about bad ones, and
 * about unknown names once `ready` (every name known, control.c). With
 * `record`, each value taken is an fdr:tunable event (self.h; at most 16
 * per call: a controller's spec sets one). */
void fdr__tunables_apply(const struct fdr__rules *r, const char *origin, int ready,
                         int record);
/* Warns (once each) about values set for tunables nothing declared. */
void fdr__tunables_check_unknown(void);
void fdr__tunables_help(void);
/* fdr_tunable_set, _set_double, _get, _list once the library has started
 * (api.c). */
int fdr__tunable_set(const char *name, long long value);
int fdr__tunable_set_double(const char *name, double value);
int fdr__tunable_get(const char *name, fdr_tunable_info_t *info);
int fdr__tunable_list(fdr_tunable_cb cb, void *arg);

#endif
