/* SPDX-License-Identifier: MIT */
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
#include <stdarg.h>
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

static int samples_add(bench_samples *s, double v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        double *nv = realloc(s->v, cap * sizeof *nv);
        if (nv == NULL)
            return -ENOMEM;
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = v;
    return 0;
}

const bench_extra *bench_extra_find(const bench_results *r, const char *section,
                                    const char *tracer, const char *workload,
                                    const char *unit)
{
    for (size_t i = 0; i < r->nextra; i++) {
        const bench_extra *e = &r->extra[i];
        if (strcmp(e->section, section) == 0 && strcmp(e->tracer, tracer) == 0 &&
            strcmp(e->workload, workload) == 0 && strcmp(e->unit, unit) == 0)
            return e;
    }
    return NULL;
}

int bench_extra_add(bench_results *r, const char *section, const char *tracer,
                    const char *workload, const char *unit, double v)
{
    bench_extra *e =
        (bench_extra *)bench_extra_find(r, section, tracer, workload, unit);
    if (e == NULL) {
        if (r->nextra == r->capextra) {
            size_t cap = r->capextra ? r->capextra * 2 : 32;
            bench_extra *ne = realloc(r->extra, cap * sizeof *ne);
            if (ne == NULL)
                return -ENOMEM;
            r->extra = ne;
            r->capextra = cap;
        }
        e = &r->extra[r->nextra++];
        *e = (bench_extra){0};
        snprintf(e->section, sizeof e->section, "%s", section);
        snprintf(e->tracer, sizeof e->tracer, "%s", tracer);
        snprintf(e->workload, sizeof e->workload, "%s", workload);
        snprintf(e->unit, sizeof e->unit, "%s", unit);
    }
    return samples_add(&e->s, v);
}

void bench_note(bench_results *r, const char *fmt, ...)
{
    size_t len = strlen(r->notes);
    if (len + 2 >= sizeof r->notes)
        return;
    r->notes[len++] = ' ';
    r->notes[len++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes + len, sizeof r->notes - len, fmt, ap);
    va_end(ap);
    len = strlen(r->notes);
    if (len + 1 < sizeof r->notes) {
        r->notes[len] = '\n';
        r->notes[len + 1] = '\0';
    }
}

static void fmt_value(char *buf, size_t n, double v)
{
    if (v != 0 && (v >= 1e6 || v <= -1e6))
        snprintf(buf, n, "%.4g", v);
    else if (v == (double)(long long)v)
        snprintf(buf, n, "%lld", (long long)v);
    else
        snprintf(buf, n, "%.3f", v);
}

/* One table per section: a row per (workload, unit), a column per tracer,
 * then fdr/other ratios of the medians. */
static void print_extras(const bench_results *r, FILE *out)
{
    for (size_t i = 0; i < r->nextra; i++) {
        const char *sec = r->extra[i].section;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(r->extra[k].section, sec) == 0;
        if (seen)
            continue;
        fprintf(out, "\n%s: median [min..max] (runs)\n  %-34s", sec, "workload (unit)");
        for (int t = 0; t < BENCH_NTRACERS; t++)
            fprintf(out, " %-26s", bench_tracer_names[t]);
        fputc('\n', out);
        for (size_t k = i; k < r->nextra; k++) {
            const bench_extra *row = &r->extra[k];
            if (strcmp(row->section, sec) != 0)
                continue;
            int dup = 0;
            for (size_t m = i; m < k && !dup; m++)
                dup = strcmp(r->extra[m].section, sec) == 0 &&
                      strcmp(r->extra[m].workload, row->workload) == 0 &&
                      strcmp(r->extra[m].unit, row->unit) == 0;
            if (dup)
                continue;
            char label[64];
            snprintf(label, sizeof label, "%s (%s)", row->workload, row->unit);
            fprintf(out, "  %-34s", label);
            double med[BENCH_NTRACERS];
            for (int t = 0; t < BENCH_NTRACERS; t++) {
                const bench_extra *e = bench_extra_find(
                    r, sec, bench_tracer_names[t], row->workload, row->unit);
                char buf[128] = "-";
                med[t] = -1;
                if (e != NULL && e->s.n > 0) {
                    benchfn_stats st = benchfn_stats_of(e->s.v, e->s.n);
                    char a[32], b[32], c[32];
                    fmt_value(a, sizeof a, st.median);
                    fmt_value(b, sizeof b, st.min);
                    fmt_value(c, sizeof c, st.max);
                    med[t] = st.median;
                    if (st.n == 1)
                        snprintf(buf, sizeof buf, "%s", a);
                    else
                        snprintf(buf, sizeof buf, "%s [%s..%s] (%zu)", a, b, c, st.n);
                }
                fprintf(out, " %-26s", buf);
            }
            /* fdr / other, where both have a non-zero median. */
            for (int f = BENCH_T_FDR_DISCARD; f <= BENCH_T_FDR_OVERWRITE; f++)
                for (int o = 0; o < BENCH_NTRACERS; o++) {
                    if (o == BENCH_T_FDR_DISCARD || o == BENCH_T_FDR_OVERWRITE)
                        continue;
                    if (med[f] > 0 && med[o] > 0)
                        fprintf(out, " %s/%s=%.2f", bench_tracer_names[f] + 4,
                                bench_tracer_names[o], med[f] / med[o]);
                }
            fputc('\n', out);
        }
    }
    if (r->notes[0] != '\0')
        fprintf(out, "\nnotes (other sections)\n%s", r->notes);
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
    print_extras(r, out);
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
    fprintf(f, "[\n  ");
    bench_machine_json(&r->machine, f);
    int first = 0;
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
    for (size_t i = 0; i < r->nextra; i++) {
        const bench_extra *e = &r->extra[i];
        if (e->s.n == 0)
            continue;
        benchfn_stats st = benchfn_stats_of(e->s.v, e->s.n);
        fprintf(f,
                "%s\n  {\"section\": \"%s\", \"tracer\": \"%s\", "
                "\"workload\": \"%s\", \"median\": %.6g, \"min\": %.6g, "
                "\"max\": %.6g, \"unit\": \"%s\", \"runs\": %zu}",
                first ? "" : ",", e->section, e->tracer, e->workload, st.median,
                st.min, st.max, e->unit, st.n);
        first = 0;
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
    for (size_t i = 0; i < r->nextra; i++)
        free(r->extra[i].s.v);
    free(r->extra);
    r->extra = NULL;
    r->nextra = r->capextra = 0;
}
