/* SPDX-License-Identifier: MIT */
/*
 * The probes of provider bench_lttng, built as libfdr-bench-lttng-tp.so
 * and linked with liblttng-ust. Loading it (dlopen) registers the process
 * with lttng-sessiond; see tp.h.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "lttng/tp.h"
