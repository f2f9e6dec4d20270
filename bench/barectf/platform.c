/* SPDX-License-Identifier: MIT */
/*
 * In-memory barectf platform (see platform.h).
 *
 * DESIGN. barectf serializes event records into one packet buffer and calls
 * the platform back when the packet is full (close_packet) and when it needs
 * a new one (open_packet). We keep npkts packet buffers in one array; on
 * close we let barectf finish the packet header (content size, end time) and
 * then point barectf at the next buffer of the ring with
 * bbench_packet_set_buf(). When the ring has gone round once, every new
 * packet overwrites the oldest one; is_backend_full() is therefore always
 * false and no event record is ever discarded, which is the barectf analogue
 * of LTTng's / fdr's overwrite mode with no reader.
 *
 * There is a single writer thread and no reader, so no synchronization.
 */
#include "platform.h"

#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

struct bench_barectf_platform {
    struct bbench_default_ctx ctx; /* first: barectf works on it */
    uint8_t *ring;
    size_t pkt_size;
    unsigned npkts;
    unsigned cur;
    uint64_t packets;
    uint64_t overwritten;
};

static uint64_t plat_clock(void *data)
{
    (void)data;
    return __rdtsc();
}

static int plat_is_backend_full(void *data)
{
    (void)data;
    return 0;
}

static void plat_open_packet(void *data)
{
    bench_barectf_platform *p = data;
    bbench_default_open_packet(&p->ctx);
}

static void plat_close_packet(void *data)
{
    bench_barectf_platform *p = data;
    bbench_default_close_packet(&p->ctx);
    p->packets++;
    if (p->packets >= p->npkts)
        p->overwritten++;
    p->cur = (p->cur + 1) % p->npkts;
    bbench_packet_set_buf(&p->ctx, p->ring + (size_t)p->cur * p->pkt_size,
                          (uint32_t)p->pkt_size);
}

bench_barectf_platform *bench_barectf_platform_create(size_t pkt_size,
                                                      unsigned npkts)
{
    if (pkt_size < 256 || pkt_size % 8 || pkt_size > (256u << 20) ||
        npkts == 0)
        return NULL;
    bench_barectf_platform *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->ring = malloc(pkt_size * npkts);
    if (p->ring == NULL) {
        free(p);
        return NULL;
    }
    memset(p->ring, 0, pkt_size * npkts); /* fault the pages in */
    p->pkt_size = pkt_size;
    p->npkts = npkts;

    struct bbench_platform_callbacks cbs = {
        .tsc_clock_get_value = plat_clock,
        .is_backend_full = plat_is_backend_full,
        .open_packet = plat_open_packet,
        .close_packet = plat_close_packet,
    };
    bbench_init(&p->ctx, p->ring, (uint32_t)pkt_size, cbs, p);
    plat_open_packet(p);
    return p;
}

void bench_barectf_platform_destroy(bench_barectf_platform *p)
{
    if (p == NULL)
        return;
    if (bbench_packet_is_open(&p->ctx) && !bbench_packet_is_empty(&p->ctx))
        bbench_default_close_packet(&p->ctx);
    free(p->ring);
    free(p);
}

struct bbench_default_ctx *bench_barectf_platform_ctx(bench_barectf_platform *p)
{
    return &p->ctx;
}

uint64_t bench_barectf_platform_packets(const bench_barectf_platform *p)
{
    return p->packets;
}

uint64_t bench_barectf_platform_overwritten(const bench_barectf_platform *p)
{
    return p->overwritten;
}
