/* SPDX-License-Identifier: MIT */
/* recorder/self.h - fdr's own events (provider "fdr"): the changes a
 * controller made to the program (fdr scope, fdr control, the scope's HTTP
 * interface, all through fdrd: daemon.c), recorded in the program's own
 * trace so that a replay, babeltrace2 and a Perfetto export show when and
 * what changed:
 *
 *   fdr:tunable  name=%s value=%g    a tunable set to value (control.c)
 *   fdr:switch   event=%s what=%s on=%d
 *                                    an event's record or print switch that
 *                                    the change turned on or off
 *
 * Recorded by the thread that applied the change (fdr's own thread,
 * "fdr-daemon"), after it applied it: a switch that turned `fdr:*` off
 * is not recorded. Their sites are not listed in the fdr_sites section:
 * they are registered at their first use, so a program nobody controlled
 * does not list them.
 *
 * Recording an event is api.c's (the top layer: the slow path); tunable.c
 * and control.c, below it, call it through fdr__self_hooks, which api.c
 * fills at load (lib/README.md: a lower layer tells an upper one through
 * a pointer). Until then the hooks record nothing. */
#ifndef FDR_RECORDER_SELF_H
#define FDR_RECORDER_SELF_H

#include "fdr/fdr.h"

struct fdr__self_hooks {
    void (*tunable)(const char *name, double value);             /* fdr:tunable */
    void (*change)(const char *event, const char *what, int on); /* fdr:switch */
};
extern struct fdr__self_hooks fdr__self_hooks; /* tunable.c; set by api.c */

#define FDR__SELF_EVENT(ev, fmt, ...)                                                    \
    do {                                                                                 \
        static struct fdr__site fdr__site_ = {FDR__S_NEW,                                \
                                              FDR__SITE_TRACE,                           \
                                              FDR__NARG(__VA_ARGS__),                    \
                                              0,                                         \
                                              0,                                         \
                                              0,                                         \
                                              __LINE__,                                  \
                                              "fdr",                                     \
                                              ev,                                        \
                                              "" fmt,                                    \
                                              NULL,                                      \
                                              __FILE__,                                  \
                                              FDR__TYPES(__VA_ARGS__)};                  \
        uint8_t fdr__st = fdr__site_state(&fdr__site_);                                  \
        FDR__FORMAT_CHECK(fmt, __VA_ARGS__)                                              \
        FDR__RECORD(&fdr__site_, fdr__st, __VA_ARGS__)                                   \
    } while (0)

#endif
