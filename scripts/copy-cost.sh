#!/bin/sh
# SPDX-License-Identifier: MIT
# copy-cost.sh [MB] [DIR] - what writing packets from a ring to a stream
# file costs in CPU, by the consumer's ways (writev of header + body from
# the mapping, one packet per call as before issue 12, or 16 per call as
# common/drain.h's batches) and by the kernel's "zero-copy" ways (sendfile
# from the ring's memfd; vmsplice into a pipe then splice to the file), for
# issue 12. An 8 MiB memfd ring of 64 KiB packets, each trimmed to its
# content (a few bytes short of the slot, as a closed packet is), is
# written MB times over (default 1024) to DIR/copy-cost.out
# (default: the current directory, so the file system a trace would use);
# the CPU time (user + system) of the best of 5 rounds is printed per GB.
# A measurement, not a test.
set -eu
mb=${1:-1024} dir=${2:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f "$dir/copy-cost.out"' EXIT
cat > "$tmp/c.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

static double cpu(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
           (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
    const size_t ring = 8 << 20, pkt = 64 << 10, hsz = 100;
    long total = atol(argv[1]) << 20;
    const char *out = argv[2];
    static const char *names[] = {"writev", "writev x16", "sendfile", "vmsplice+splice"};
    const size_t trim = 37; /* a closed packet's content ends short of the slot */
    int m = memfd_create("ring", 0), pp[2];
    if (m < 0 || ftruncate(m, (off_t)ring) < 0 || pipe(pp) < 0)
        return 1;
    fcntl(pp[1], F_SETPIPE_SZ, 1 << 20);
    char *p = mmap(NULL, ring, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0), hdr[100] = {0};
    if (p == MAP_FAILED)
        return 1;
    memset(p, 7, ring);
    for (int way = 0; way < 4; way++) {
        double best = 1e9;
        for (int round = 0; round < 5; round++) {
            int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            double c0 = cpu();
            long step = (long)pkt * (way == 1 ? 16 : 1);
            for (long done = 0; o >= 0 && done < total; done += step) {
                size_t off = (size_t)done % ring;
                struct iovec v[32];
                for (int i = 0; i < 16; i++) {
                    v[2 * i] = (struct iovec){hdr, hsz};
                    v[2 * i + 1] = (struct iovec){p + (off + i * pkt) % ring + hsz,
                                                  pkt - hsz - trim};
                }
                ssize_t n;
                if (way == 0)
                    n = writev(o, v, 2);
                else if (way == 1)
                    n = writev(o, v, 32);
                else if (way == 2) {
                    off_t at = (off_t)(off + hsz);
                    n = write(o, hdr, hsz) < 0 ? -1 : sendfile(o, m, &at, pkt - hsz - trim);
                } else {
                    n = vmsplice(pp[1], v, 2, 0);
                    for (ssize_t left = n; left > 0;) {
                        ssize_t k = splice(pp[0], NULL, o, NULL, (size_t)left, SPLICE_F_MOVE);
                        if (k <= 0) {
                            n = -1;
                            break;
                        }
                        left -= k;
                    }
                }
                if (n < 0) {
                    perror(names[way]);
                    return 1;
                }
            }
            double c = cpu() - c0;
            close(o);
            if (c < best)
                best = c;
        }
        printf("%-16s %.3f s CPU per GB written (best of 5)\n", names[way],
               best / ((double)total / (1 << 30)));
    }
    return 0;
}
C
cc -O2 -o "$tmp/c" "$tmp/c.c"
"$tmp/c" "$mb" "$dir/copy-cost.out"
