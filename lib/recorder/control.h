/* SPDX-License-Identifier: MIT */
/* recorder/control.h - live control: FDR_EVENTS / FDR_TRACES and their
 * rule lists (control.c). */
#ifndef FDR_RECORDER_CONTROL_H
#define FDR_RECORDER_CONTROL_H

#include "fdr/control.h"

/* Parses FDR_EVENTS and FDR_TRACES, installs them, applies their tunables. */
void fdr__control_init(void);
/* A module's sites or tunables at `range` were registered: once the main
 * program's are (or range is NULL: "now"), the work deferred until every
 * event is known runs (help, warnings about names that match nothing). */
void fdr__control_ready(const void *range);
int fdr__control_is_ready(void);
/* fdr_trace_set (print = 1) and fdr_record_set (0), fdr_event_list, once
 * the library has started (api.c). */
int fdr__control_set_rules(int print, const char *spec, const char *origin);
int fdr__control_event_list(fdr_event_cb cb, void *arg);
/* The same, for a controller (fdrd's CONTROL, daemon.c): each tunable set
 * and each event whose switch changed is an event of fdr's own (self.h). */
int fdr__control_set_recorded(int print, const char *spec, const char *origin);
/* The same list as it is now, without running the deferred work (for
 * fdrd's state reports, which may come before every name is known: they
 * must not make the warnings about unknown names come early). */
int fdr__control_event_each(fdr_event_cb cb, void *arg);

#endif
