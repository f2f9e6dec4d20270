/* SPDX-License-Identifier: MIT */
/* recorder/tunable.h - tunables set from rule lists (tunable.c). */
#ifndef FDR_RECORDER_TUNABLE_H
#define FDR_RECORDER_TUNABLE_H

struct fdr__rules;

/* Applies the NAME=VALUE items of r; warns (origin) about bad ones. */
void fdr__tunables_apply(const struct fdr__rules *r, const char *origin);
/* Warns (once each) about values set for tunables nothing declared. */
void fdr__tunables_check_unknown(void);
void fdr__tunables_help(void);

#endif
