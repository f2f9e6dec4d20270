/* SPDX-License-Identifier: MIT */
/* machine.h - what the benchmark ran on: CPU model, family and model
 * numbers, frequency when the kernel says it, the cost of rdtsc measured
 * here, the kernel. Printed at the top of the report and written as the
 * first record of the JSON, so that every result file says where its
 * numbers come from (bench/results/ keeps one file per CPU family). */
#ifndef FDR_BENCH_MACHINE_H
#define FDR_BENCH_MACHINE_H

#include <stdio.h>

typedef struct {
    char cpu[128];     /* /proc/cpuinfo "model name", or "unknown" */
    int family, model; /* /proc/cpuinfo "cpu family" / "model", -1 if unknown */
    double mhz;        /* /proc/cpuinfo "cpu MHz", 0 if unknown */
    double rdtsc_ns;   /* one rdtsc (or the clock read of fdr__now), ns */
    char kernel[128];  /* uname -sr */
} bench_machine;

void bench_machine_probe(bench_machine *m);
void bench_machine_print(const bench_machine *m, FILE *f);
/* The JSON object, without a trailing comma or newline. */
void bench_machine_json(const bench_machine *m, FILE *f);

#endif
