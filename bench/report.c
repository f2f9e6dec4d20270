/*
 * Table and JSON output of the side-by-side benchmark (see report.h).
 *
 * A cell is "median [min..max]" in ns/event over all samples (one sample is
 * one batch of `iters` events in one process). Ratios are medians divided
 * by medians: every tracer against the floor, and each fdr mode against
 * each other tracer ("fdr/other" < 1 means fdr is cheaper).
 */
#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const bench_workload_names[BENCH_NWORKLOADS] = {
    "disabled", "two_ints", "int_double_string"};

const char *const bench_tracer_names[BENCH_NTRACERS] = {
    "floor", "fdr-discard", "fdr-overwrite", "lttng-ust", "barectf"};

int bench_tracer_index(const char *name)
{
    for (int t = 0; t < BENCH_NTRACERS; t++)
        if (strcmp(name, bench_tracer_names[t]) == 0)
            return t;
    return -1;
}

int bench_workload_index(const char *name)
{
    for (int w = 0; w < BENCH_NWORKLOADS; w++)
        if (strcmp(name, bench_workload_names[w]) == 0)
            return w;
    return -1;
}

int bench_results_add(bench_results *r, const char *tracer,
                      const char *workload, double ns)
{
    int t = bench_tracer_index(tracer), w = bench_workload_index(workload);
    if (t < 0 || w < 0)
        return -EINVAL;
    bench_samples *s = &r->s[t][w];
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        double *v = realloc(s->v, cap * sizeof *v);
        if (v == NULL)
            return -ENOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = ns;
    return 0;
}

static benchfn_stats cell(const bench_results *r, int t, int w)
{
    return benchfn_stats_of(r->s[t][w].v, r->s[t][w].n);
}

static void print_ratio_row(const bench_results *r, FILE *out, int num,
                            int den)
{
    char label[48];
    snprintf(label, sizeof label, "%s/%s", bench_tracer_names[num],
             bench_tracer_names[den]);
    fprintf(out, "  %-26s", label);
    for (int w = 0; w < BENCH_NWORKLOADS; w++) {
        benchfn_stats a = cell(r, num, w), b = cell(r, den, w);
        if (a.n == 0 || b.n == 0 || b.median <= 0)
            fprintf(out, " %18s", "n/a");
        else
            fprintf(out, " %18.2f", a.median / b.median);
    }
    fputc('\n', out);
}

void bench_results_print(const bench_results *r, FILE *out)
{
    fprintf(out, "\nper-event cost, ns/event: median [min..max] (samples)\n");
    fprintf(out, "  %-18s", "workload");
    for (int t = 0; t < BENCH_NTRACERS; t++)
        fprintf(out, " %-22s", bench_tracer_names[t]);
    fputc('\n', out);
    for (int w = 0; w < BENCH_NWORKLOADS; w++) {
        fprintf(out, "  %-18s", bench_workload_names[w]);
        for (int t = 0; t < BENCH_NTRACERS; t++) {
            benchfn_stats s = cell(r, t, w);
            char buf[64];
            if (s.n == 0)
                snprintf(buf, sizeof buf, "n/a");
            else
                snprintf(buf, sizeof buf, "%.2f [%.2f..%.2f] (%zu)", s.median,
                         s.min, s.max, s.n);
            fprintf(out, " %-22s", buf);
        }
        fputc('\n', out);
    }

    fprintf(out, "\nratios of medians\n  %-26s", "");
    for (int w = 0; w < BENCH_NWORKLOADS; w++)
        fprintf(out, " %18s", bench_workload_names[w]);
    fputc('\n', out);
    for (int t = 1; t < BENCH_NTRACERS; t++)
        print_ratio_row(r, out, t, BENCH_T_FLOOR);
    for (int f = BENCH_T_FDR_DISCARD; f <= BENCH_T_FDR_OVERWRITE; f++)
        for (int o = BENCH_T_LTTNG; o < BENCH_NTRACERS; o++)
            print_ratio_row(r, out, f, o);

    int any = 0;
    for (int t = 0; t < BENCH_NTRACERS; t++) {
        if (r->note[t][0] == '\0')
            continue;
        if (!any++)
            fprintf(out, "\nnotes\n");
        fprintf(out, "  %s: %s\n", bench_tracer_names[t], r->note[t]);
    }
}

static void mkdir_parents(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(dir, 0777);
        *p = '/';
    }
}

int bench_results_write_json(const bench_results *r, const char *path)
{
    mkdir_parents(path);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -errno;
    fprintf(f, "[");
    int first = 1;
    for (int w = 0; w < BENCH_NWORKLOADS; w++) {
        for (int t = 0; t < BENCH_NTRACERS; t++) {
            benchfn_stats s = cell(r, t, w);
            if (s.n == 0)
                continue;
            fprintf(f,
                    "%s\n  {\"section\": \"per_event\", \"tracer\": \"%s\", "
                    "\"workload\": \"%s\", \"median\": %.4f, \"min\": %.4f, "
                    "\"max\": %.4f, \"unit\": \"ns\", \"runs\": %zu}",
                    first ? "" : ",", bench_tracer_names[t],
                    bench_workload_names[w], s.median, s.min, s.max, s.n);
            first = 0;
        }
    }
    fprintf(f, "\n]\n");
    if (fclose(f) != 0)
        return -errno;
    return 0;
}

void bench_results_free(bench_results *r)
{
    for (int t = 0; t < BENCH_NTRACERS; t++)
        for (int w = 0; w < BENCH_NWORKLOADS; w++) {
            free(r->s[t][w].v);
            r->s[t][w] = (bench_samples){0};
        }
}
