/* SPDX-License-Identifier: MIT */
/* flight-scribble.c - a program that writes over its own ring, driven by
 * tests/recorder/test-flight-scribble.py.
 *
 *     flight-scribble snapshot DIR | crash | flush
 *
 * Records scr:ev i=0..N-1 from the main thread (FDR_PACKET_SIZE=4096 and
 * FDR_BUFFER_SIZE=64K, set by the driver: about ten packets in a ring of
 * sixteen), then, as a stray pointer would, writes garbage over the ring
 * header's geometry (magic, packet size, packet count, mapping size) and
 * over the headers of packets 1 (magic) and 2 (content size), found
 * through /proc/self/maps (the ring is the memfd "fdr-buffer"). Then it
 * takes fdr_snapshot(DIR), or aborts (crash dump), or calls fdr_flush()
 * (FDR_OUTPUT, overwrite mode). fdr must not crash: it skips the bad
 * headers, counts them, and writes the rest. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fdr/fdr.h>

#define N 2000
#define PACKET 4096

static char *find_ring(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    char *ring = NULL;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "fdr-buffer")) {
            ring = (char *)(uintptr_t)strtoull(line, NULL, 16);
            break;
        }
    if (f)
        fclose(f);
    return ring;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: flight-scribble snapshot DIR | crash | flush\n");
        return 2;
    }
    for (unsigned i = 0; i < N; i++)
        fdr_trace(scr, ev, "i=%u", i);
    char *ring = find_ring();
    if (!ring) {
        fprintf(stderr, "flight-scribble: no ring in /proc/self/maps\n");
        return 1;
    }
    uint32_t junk[8];
    memset(junk, 0xa5, sizeof junk);
    memcpy(ring, junk, 16);                /* magic, version, packet_size, n_packets */
    memcpy(ring + 24, junk, 8);            /* size */
    memcpy(ring + 4096 + PACKET, junk, 4); /* packet 1: magic */
    uint64_t huge = (uint64_t)1 << 60;
    /* packet 2: content_size (after magic, uuid, stream id, two times) */
    memcpy(ring + 4096 + 2 * PACKET + 4 + 16 + 8 + 8 + 8, &huge, 8);
    if (strcmp(argv[1], "snapshot") == 0 && argc == 3) {
        int r = fdr_snapshot(argv[2]);
        printf("snapshot %d\n", r);
        return r == 0 ? 0 : 1;
    }
    if (strcmp(argv[1], "crash") == 0)
        abort();
    if (strcmp(argv[1], "flush") == 0) {
        int r = fdr_flush();
        printf("flush %d\n", r);
        return r == 0 ? 0 : 1;
    }
    return 2;
}
