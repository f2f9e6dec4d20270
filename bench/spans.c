/* SPDX-License-Identifier: MIT */
/* spans.c - fdr-bench-spans: what a span (fdr/span.h) costs next to the two
 * plain events it replaces, measured in one run (benchfn: cases interleaved,
 * median of the repetitions), for issue 33's promise "begin + end cost no
 * more than two events" and "an off span costs what an off event costs".
 *
 *     fdr-bench-spans [--iters N] [--reps R] [--json FILE]
 *
 * Rows, ns per iteration (one iteration = one span, or two events):
 *   event_off        fdr_trace of an event that is off (FDR_EVENTS rule)
 *   span_off         fdr_span of a span that is off (its begin and its end)
 *   two_events       fdr_trace(a, "x=%d") + fdr_trace(b)      (scoped's twin)
 *   span_scoped      { fdr_span(s, "x=%d"); }
 *   two_events_int   fdr_trace(a, "x=%d") + fdr_trace(b, "r=%d")
 *   span_begin_end   fdr_span_begin(s, "x=%d") + fdr_span_end(s, "r=%d")
 *   span_async       fdr_span_async_begin(s, id, "x=%d") + _end(s, id, "r=%d")
 * and the ratios span/two events. Recording into the process's own rings
 * (no FDR_OUTPUT: flight mode, overwrite), as an always-on program does.
 * For scale: Tracy documents a zone (begin + end) at a few ns on its own
 * queue; an fdr event is ~5-8 ns here (docs/performance.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fdr/fdr.h>

#include "benchfn.h"

#define NOINLINE __attribute__((noinline))

static NOINLINE void event_off(void *arg, uint64_t n)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i++)
        fdr_trace(bench, ev_off, "x=%d", (int)i);
}

static NOINLINE void span_off(void *arg, uint64_t n)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i++) {
        fdr_span(bench, span_off, "x=%d", (int)i);
    }
}

static NOINLINE void two_events(void *arg, uint64_t n)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i++) {
        fdr_trace(bench, ev_a, "x=%d", (int)i);
        fdr_trace(bench, ev_b);
    }
}

static NOINLINE void span_scoped(void *arg, uint64_t n)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i++) {
        fdr_span(bench, span_s, "x=%d", (int)i);
    }
}

static NOINLINE void two_events_int(void *arg, uint64_t n)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i++) {
        fdr_trace(bench, ev_c, "x=%d", (int)i);
        fdr_trace(bench, ev_d, "r=%d", (int)i);
    }
}

static NOINLINE void span_begin_end(void *arg, uint64_t n)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i++) {
        fdr_span_begin(bench, span_e, "x=%d", (int)i);
        fdr_span_end(bench, span_e, "r=%d", (int)i);
    }
}

static NOINLINE void span_async(void *arg, uint64_t n)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i++) {
        fdr_span_async_begin(bench, span_a, i, "x=%d", (int)i);
        fdr_span_async_end(bench, span_a, i, "r=%d", (int)i);
    }
}

int main(int argc, char **argv)
{
    benchfn_params p = {1000000, 21, 2};
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            p.iters = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            p.reps = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json = argv[++i];
        else {
            fprintf(stderr,
                    "usage: fdr-bench-spans [--iters N] [--reps R] [--json FILE]\n");
            return 2;
        }
    }
    if (fdr_record_set("-bench:ev_off,-bench:span_off") != 0) {
        fprintf(stderr, "fdr-bench-spans: fdr_record_set failed\n");
        return 1;
    }
    static const benchfn_case cases[] = {
        {"event_off", event_off, NULL},
        {"span_off", span_off, NULL},
        {"two_events", two_events, NULL},
        {"span_scoped", span_scoped, NULL},
        {"two_events_int", two_events_int, NULL},
        {"span_begin_end", span_begin_end, NULL},
        {"span_async", span_async, NULL},
    };
    enum { N = sizeof cases / sizeof *cases };
    double *res = calloc((size_t)p.reps * N, sizeof *res);
    if (!res || benchfn_run(cases, N, &p, res) != 0) {
        fprintf(stderr, "fdr-bench-spans: bad parameters\n");
        return 1;
    }
    benchfn_stats st[N];
    for (size_t c = 0; c < N; c++) {
        double col[p.reps];
        for (unsigned r = 0; r < p.reps; r++)
            col[r] = res[(size_t)r * N + c];
        st[c] = benchfn_stats_of(col, p.reps);
    }
    printf("%-16s %10s %10s %10s   (ns per iteration, %u x %llu)\n", "case", "median",
           "min", "max", p.reps, (unsigned long long)p.iters);
    for (size_t c = 0; c < N; c++)
        printf("%-16s %10.2f %10.2f %10.2f\n", cases[c].name, st[c].median, st[c].min,
               st[c].max);
    double r_off = st[1].median / st[0].median, r_scoped = st[3].median / st[2].median,
           r_be = st[5].median / st[4].median, r_async = st[6].median / st[4].median;
    printf("ratios (medians): span_off/event_off %.2f, span_scoped/two_events %.2f, "
           "span_begin_end/two_events_int %.2f, span_async/two_events_int %.2f\n",
           r_off, r_scoped, r_be, r_async);
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            perror(json);
            return 1;
        }
        fprintf(f, "{\"iters\": %llu, \"reps\": %u, \"cases\": {",
                (unsigned long long)p.iters, p.reps);
        for (size_t c = 0; c < N; c++)
            fprintf(f, "%s\"%s\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f}",
                    c ? ", " : "", cases[c].name, st[c].median, st[c].min, st[c].max);
        fprintf(
            f,
            "},\n \"ratios\": {\"span_off/event_off\": %.3f, \"span_scoped/two_events\": "
            "%.3f, \"span_begin_end/two_events_int\": %.3f, "
            "\"span_async/two_events_int\": %.3f}}\n",
            r_off, r_scoped, r_be, r_async);
        fclose(f);
    }
    free(res);
    return 0;
}
