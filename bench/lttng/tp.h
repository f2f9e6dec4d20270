/* SPDX-License-Identifier: MIT */
/*
 * LTTng-UST 2.13 tracepoint provider of the fdr benchmark (bench/README.md).
 *
 * Provider bench_lttng, events:
 *   two_ints(int a, int b)
 *   int_double_string(int i, double d, const char *s)
 *   disabled(int a, int b)      never enabled in the session
 *
 * This header follows the LTTng-UST multi-read protocol: it is included
 * once normally (call sites, lttng_adapter.c) and once with
 * LTTNG_UST_TRACEPOINT_CREATE_PROBES (the probe shared object, tp.c).
 * The probes live in libfdr-bench-lttng-tp.so, which the measurement
 * process dlopen()s, so that only that process registers with
 * lttng-sessiond (the driver process never loads liblttng-ust).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench_lttng

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "lttng/tp.h"

#if !defined(FDR_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define FDR_BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
    bench_lttng, two_ints,
    LTTNG_UST_TP_ARGS(int, a, int, b),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int, a, a)
        lttng_ust_field_integer(int, b, b)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(
    bench_lttng, int_double_string,
    LTTNG_UST_TP_ARGS(int, i, double, d, const char *, s),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int, i, i)
        lttng_ust_field_float(double, d, d)
        lttng_ust_field_string(s, s)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(
    bench_lttng, disabled,
    LTTNG_UST_TP_ARGS(int, a, int, b),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int, a, a)
        lttng_ust_field_integer(int, b, b)
    )
)

#endif /* FDR_BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
