/* SPDX-License-Identifier: MIT */
/* flight-scribble-race.c - a stray write between the consumer's check of a
 * packet and its write, driven by tests/recorder/test-flight-scribble.py.
 *
 * FDR_OUTPUT, discard mode: records scr:ev i=0..N-1; the first time the
 * consumer has checked a batch of packets and is about to write it (test
 * hook fdr__drain_checked_hook, common/drain.h), writes an unknown event
 * id over the first event of every packet slot of the ring, as a stray
 * pointer of the program could at that moment. What the consumer writes
 * must be what it checked: its private copies, not the slots (the fuzz
 * build's 1,000 seeds once met this, one seed in a thousand; here it is
 * every run). Then fdr_flush(); prints "flush R". */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fdr/fdr.h>

#include "common/drain.h"
#include "common/validate.h"

#define N 2000
#define PACKET 4096

static int scribbled;

static void scribble(void)
{
    if (__atomic_exchange_n(&scribbled, 1, __ATOMIC_RELAXED))
        return;
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (!strstr(line, "fdr-buffer") || sscanf(line, "%lx-%lx", &lo, &hi) != 2 ||
            hi - lo <= 4096)
            continue;
        /* Event id 0xff01 (little-endian), which no class has. */
        for (unsigned long at = lo + 4096; at + PACKET <= hi; at += PACKET)
            memcpy((char *)at + sizeof(struct fdr__pkt), "\x01\xff", 2);
    }
    if (f)
        fclose(f);
}

int main(void)
{
    fdr__drain_checked_hook = scribble;
    for (unsigned i = 0; i < N; i++)
        fdr_trace(scr, ev, "i=%u", i);
    int r = fdr_flush();
    printf("flush %d scribbled %d\n", r, scribbled);
    return r == 0 && scribbled ? 0 : 1;
}
