#!/bin/sh
# SPDX-License-Identifier: MIT
# consumer-cost.sh [LIBDIR] [N] [RATE] [DIR] - the in-process consumer's CPU
# per GB written, for issue 12. A program linked with libfdr.so from LIBDIR
# (default build-bench/lib/recorder, `make bench`'s) records N events
# (default 50,000,000) of int + double + 16-byte string at RATE events/s
# (default 30,000,000, a rate the consumer keeps up with; 0: unpaced), with
# FDR_OUTPUT=DIR/consumer-cost.out (default: the current directory); after
# fdr_flush() it reads the CPU time of its "fdr-consumer" thread from
# /proc and divides by the bytes of the trace. Prints one line per round
# (3 rounds). A measurement, not a test.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:-$top/build-bench/lib/recorder} n=${2:-50000000} rate=${3:-30000000}
dir=${4:-.}
tmp=$(mktemp -d)
out="$dir/consumer-cost.out"
trap 'rm -rf "$tmp" "$out"' EXIT
cat > "$tmp/c.c" <<'C'
#define _GNU_SOURCE
#include <dirent.h>
#include <fdr/fdr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *volatile str = "flight-recorder!";

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* CPU seconds of this process's thread named `want`. */
static double thread_cpu(const char *want)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    double r = -1;
    while (d && (e = readdir(d))) {
        char p[300], b[1024] = {0};
        snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        if (!fgets(b, sizeof b, f))
            b[0] = 0;
        fclose(f);
        b[strcspn(b, "\n")] = 0;
        if (strcmp(b, want) != 0)
            continue;
        snprintf(p, sizeof p, "/proc/self/task/%s/stat", e->d_name);
        if (!(f = fopen(p, "r")))
            continue;
        size_t n = fread(b, 1, sizeof b - 1, f);
        fclose(f);
        b[n] = 0;
        unsigned long ut, st;
        char *q = strrchr(b, ')');
        if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
                        &st) == 2)
            r = (double)(ut + st) / 100.0;
    }
    if (d)
        closedir(d);
    return r;
}

int main(int argc, char **argv)
{
    uint64_t n = strtoull(argv[1], 0, 10);
    double rate = atof(argv[2]);
    const char *s = str;
    uint64_t t0 = now_ns();
    for (uint64_t i = 0; i < n; i += 64) {
        if (rate > 0)
            while (now_ns() < t0 + (uint64_t)((double)i * 1e9 / rate))
                ;
        for (uint64_t k = i; k < i + 64; k++)
            fdr_trace(bench, int_double_string, "i=%d d=%f s=%s", (int)k, (double)k * 0.5, s);
    }
    uint64_t t1 = now_ns();
    fdr_flush();
    printf("%.2f %.3f\n", (double)(t1 - t0) / (double)n, thread_cpu("fdr-consumer"));
    return 0;
}
C
cc -O2 -I"$top/include" -o "$tmp/c" "$tmp/c.c" -L"$lib" -lfdr -Wl,-rpath,"$lib"
for round in 1 2 3; do
    rm -rf "$out"
    mkdir -p "$out"
    r=$(FDR_OUTPUT="$out" "$tmp/c" "$n" "$rate")
    bytes=$(du -sb "$out" | cut -f1)
    echo "$r $bytes" | awk '{printf "%.2f ns/event, consumer %.2f s CPU for %.0f MB: %.3f s per GB\n",
                                   $1, $2, $3 / 1e6, $2 / ($3 / 1e9)}'
done
