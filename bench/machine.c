/* SPDX-License-Identifier: MIT */
/* machine.c - what the benchmark ran on (machine.h). */
#define _GNU_SOURCE
#include "machine.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <x86intrin.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* rdtsc, the clock of the floor (floor.c), fdr and barectf. The bench is
 * x86-64 only, as floor.c. */
static uint64_t tick(void)
{
    return __rdtsc();
}

/* The value after "key\t: " in /proc/cpuinfo's first processor. */
static int cpuinfo(const char *key, char *out, size_t n)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    size_t k = strlen(key);
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon || strncmp(line, key, k) != 0 || (line[k] != ' ' && line[k] != '\t'))
            continue;
        snprintf(out, n, "%s", colon + 1 + (colon[1] == ' '));
        out[strcspn(out, "\n")] = 0;
        found = 1;
    }
    if (f)
        fclose(f);
    return found;
}

void bench_machine_probe(bench_machine *m)
{
    char v[128];
    memset(m, 0, sizeof *m);
    if (!cpuinfo("model name", m->cpu, sizeof m->cpu))
        snprintf(m->cpu, sizeof m->cpu, "unknown");
    m->family = cpuinfo("cpu family", v, sizeof v) ? atoi(v) : -1;
    m->model = cpuinfo("model", v, sizeof v) ? atoi(v) : -1;
    m->mhz = cpuinfo("cpu MHz", v, sizeof v) ? atof(v) : 0;
    /* the best of 7 rounds of 1M back-to-back reads */
    double best = 0;
    for (int r = 0; r < 7; r++) {
        volatile uint64_t sink = 0;
        double t0 = now_ns();
        for (int i = 0; i < 1000000; i++)
            sink += tick();
        double ns = (now_ns() - t0) / 1e6;
        (void)sink;
        if (r == 0 || ns < best)
            best = ns;
    }
    m->rdtsc_ns = best;
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(m->kernel, sizeof m->kernel, "%.60s %.60s", u.sysname, u.release);
    else
        snprintf(m->kernel, sizeof m->kernel, "unknown");
}

void bench_machine_print(const bench_machine *m, FILE *f)
{
    fprintf(f, "machine: %s (family %d, model %d), %.0f MHz, rdtsc %.2f ns, %s\n", m->cpu,
            m->family, m->model, m->mhz, m->rdtsc_ns, m->kernel);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    fputc('"', f);
}

void bench_machine_json(const bench_machine *m, FILE *f)
{
    fprintf(f, "{\"section\": \"machine\", \"cpu\": ");
    json_str(f, m->cpu);
    fprintf(f,
            ", \"family\": %d, \"model\": %d, \"mhz\": %.0f, \"rdtsc_ns\": %.3f, "
            "\"kernel\": ",
            m->family, m->model, m->mhz, m->rdtsc_ns);
    json_str(f, m->kernel);
    fputc('}', f);
}
