/* SPDX-License-Identifier: MIT */
/*
 * The physical floor: what any tracer must at least do per event — read the
 * TSC, store a fixed-size record into a ring in memory, and publish the new
 * write position with a release store (what a reader would acquire-load).
 * Every tracer column is compared to this one.
 *
 * Cost budget and dependency chain of one two_ints event:
 *   rdtsc (~8-25 cycles on AMD, not serializing) -> 3 x 8-byte stores to
 *   ring[pos] -> pos += 24 -> release store of pos (a plain mov on x86-64,
 *   the "release" only forbids compiler reordering).
 * There is no dependency between consecutive events except pos, so the
 * loop is bounded by rdtsc throughput.
 *
 * Records:
 *   two_ints           [tsc:8][id:4 a:4][b:4 pad:4]               24 bytes
 *   int_double_string  [tsc:8][id:4 i:4][d:8] + s with its NUL, rounded to 8
 *   disabled           nothing: one relaxed load of an enable flag and a
 *                      predictable branch (the floor of a disabled event).
 *
 * The ring is 1 MiB and wraps; a record that starts near the end spills
 * into 64 bytes of slack (string records wrap early instead).
 */
#include "adapters.h"

#include <string.h>
#include <x86intrin.h>

#define FLOOR_RING_SIZE (1u << 20)

static unsigned char floor_ring[FLOOR_RING_SIZE + 64]
    __attribute__((aligned(64)));
static uint64_t floor_pos; /* writer-private position */
/* Published position; a reader would pair an acquire load with the release
 * store in floor_publish(). */
static uint64_t floor_published __attribute__((aligned(64)));
static int floor_disabled_on; /* always 0: the disabled event */

static inline void floor_publish(void)
{
    /* Observable: record bytes before the new position (x86: plain mov). */
    __atomic_store_n(&floor_published, floor_pos, __ATOMIC_RELEASE);
}

static inline void floor_rec24(uint32_t id, uint32_t a, uint64_t w2)
{
    uint64_t tsc = __rdtsc();
    unsigned char *p = floor_ring + (floor_pos & (FLOOR_RING_SIZE - 1));
    uint64_t w1 = (uint64_t)id | ((uint64_t)a << 32);
    memcpy(p, &tsc, 8);
    memcpy(p + 8, &w1, 8);
    memcpy(p + 16, &w2, 8);
    floor_pos += 24;
    floor_publish();
}

static inline void floor_rec_ids(int i, double d, const char *s)
{
    size_t len = strlen(s) + 1;
    size_t total = (24 + len + 7) & ~(size_t)7;
    uint64_t off = floor_pos & (FLOOR_RING_SIZE - 1);
    if (off + total > FLOOR_RING_SIZE) { /* wrap to the start */
        floor_pos += FLOOR_RING_SIZE - off;
        off = 0;
    }
    uint64_t tsc = __rdtsc();
    unsigned char *p = floor_ring + off;
    uint64_t w1 = 2u | ((uint64_t)(uint32_t)i << 32);
    memcpy(p, &tsc, 8);
    memcpy(p + 8, &w1, 8);
    memcpy(p + 16, &d, 8);
    memcpy(p + 24, s, len);
    floor_pos += total;
    floor_publish();
}

static void floor_disabled(void *arg, uint64_t iters)
{
    (void)arg;
    BENCH_LOOP(iters, {
        if (__builtin_expect(__atomic_load_n(&floor_disabled_on,
                                             __ATOMIC_RELAXED), 0))
            floor_rec24(0, (uint32_t)a, (uint32_t)b);
    });
}

static void floor_two_ints(void *arg, uint64_t iters)
{
    (void)arg;
    BENCH_LOOP(iters, floor_rec24(1, (uint32_t)a, (uint32_t)b));
}

static void floor_ids(void *arg, uint64_t iters)
{
    (void)arg;
    BENCH_LOOP(iters, floor_rec_ids(a, d, s));
}

static int floor_setup(bench_adapter *self, char *why, size_t whysz)
{
    (void)self; (void)why; (void)whysz;
    memset(floor_ring, 0, sizeof floor_ring); /* fault the pages in */
    return 0;
}

bench_adapter bench_floor_adapter = {
    .tracer = "floor",
    .setup = floor_setup,
    .report = NULL,
    .fn = {floor_disabled, floor_two_ints, floor_ids},
};
