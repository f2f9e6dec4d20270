/* SPDX-License-Identifier: MIT */
/*
 * Results of the side-by-side benchmark: samples (ns/event) per tracer and
 * workload, merged from all measurement processes; the text table and the
 * JSON file (bench/results/latest.json).
 */
#ifndef FDR_BENCH_REPORT_H
#define FDR_BENCH_REPORT_H

#include "machine.h"
#include <stddef.h>
#include <stdio.h>

#include "adapters.h"

enum {
    BENCH_T_FLOOR,
    BENCH_T_FDR_DISCARD,
    BENCH_T_FDR_OVERWRITE,
    BENCH_T_LTTNG,
    BENCH_T_BARECTF,
    BENCH_NTRACERS
};

extern const char *const bench_tracer_names[BENCH_NTRACERS];

typedef struct bench_samples {
    double *v;
    size_t n, cap;
} bench_samples;

/* A record of the other sections (sustained, startup, memory, size,
 * snapshot, printed): free-form workload and unit. */
typedef struct bench_extra {
    char section[24];
    char tracer[24];
    char workload[40];
    char unit[16];
    bench_samples s;
} bench_extra;

typedef struct bench_results {
    bench_samples s[BENCH_NTRACERS][BENCH_NWORKLOADS];
    char note[BENCH_NTRACERS][256]; /* why a column is missing, etc. */
    bench_extra *extra;
    size_t nextra, capextra;
    char notes[8192]; /* notes of the other sections, one per line */
    bench_machine machine; /* what it ran on (machine.h) */
} bench_results;

/* Index of a tracer or workload name, or -1. */
int bench_tracer_index(const char *name);
int bench_workload_index(const char *name);

/* Appends one sample. Returns 0, -EINVAL (unknown name) or -ENOMEM. */
int bench_results_add(bench_results *r, const char *tracer,
                      const char *workload, double ns);

/* Appends one sample to the record (section, tracer, workload, unit),
 * created on first use. Returns 0 or -ENOMEM. */
int bench_extra_add(bench_results *r, const char *section, const char *tracer,
                    const char *workload, const char *unit, double v);

/* The record, or NULL. */
const bench_extra *bench_extra_find(const bench_results *r, const char *section,
                                    const char *tracer, const char *workload,
                                    const char *unit);

/* Appends a line to r->notes (printf-style). */
void bench_note(bench_results *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints the median table, the ratio tables and the notes. */
void bench_results_print(const bench_results *r, FILE *out);

/*
 * Writes a JSON list of {"section":"per_event","tracer","workload","median",
 * "min","max","unit":"ns","runs"} for every cell with samples, then one
 * record per bench_extra (its own section and unit). Creates the
 * file's directory if missing. Returns 0 or a negative errno.
 */
int bench_results_write_json(const bench_results *r, const char *path);

void bench_results_free(bench_results *r);

#endif
