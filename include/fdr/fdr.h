/* SPDX-License-Identifier: MIT */
/* fdr/fdr.h - the one header an instrumented program includes.
 *
 * fdr is a flight data recorder: events recorded at a few nanoseconds each
 * into per-thread rings in memory, written as CTF 1.8 traces (babeltrace2,
 * Trace Compass), dumped on a crash, printed live when chosen by pattern.
 * See docs/getting-started.md. */
#ifndef FDR_FDR_H
#define FDR_FDR_H

#include "fdr/version.h"

#include "fdr/trace.h"
#include "fdr/span.h"
/* Outside the #ifndef below: with FDR_DISABLE its macros are constants. */
#include "fdr/tunable.h"
#ifndef FDR_DISABLE
#include "fdr/error.h"
#include "fdr/control.h"
#include "fdr/provider.h"
#include "fdr/flight.h"
#endif

#endif
