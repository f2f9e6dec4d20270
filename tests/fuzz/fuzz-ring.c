/* SPDX-License-Identifier: MIT */
/* fuzz-ring.c - libFuzzer target for lib/common/validate.c, iter.c, the
 * line formatter (format.c), and what fdrd and the tools write out of a
 * ring: committed.c (the open packet of a writer that is gone) and
 * drain.c (its packets to a stream file, here /dev/null).
 *
 * Input: the bytes of a buffer of fixed geometry (ring header page and two
 * packet slots of 4096 bytes; shorter input is padded with zeros), read
 * against a small class table (ints, a string, bytes, a float).
 * Property: whatever the bytes, the ring check and every packet check
 * answer 0 or -EINVAL; a packet that passes has its content inside its
 * slot; iterating it ends (0 or -EINVAL) with every event inside the
 * content; and each event's text line fits in the line buffer and ends in
 * '\n'; the committed part of the open packet, if any, lies inside the
 * buffer; writing every packet out (closed ones, then the open one) never
 * reads outside it. ASan (fuzz build) or the replay (every build) catches
 * any read outside the buffer. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>

#include "common/committed.h"
#include "common/drain.h"
#include "common/format.h"
#include "common/iter.h"
#include "common/validate.h"

#define PACKET 4096u
#define SLOTS 2u
#define SIZE (FDR__BUF_HEADER + SLOTS * PACKET)

static const char pool[] = "\0p\0ev\0a=%d s=%s\0f.c\0a\0s\0raw\0b\0x=%g\0x";
/* offsets: p=1 ev=3 fmt=6 file=17 a=21 s=23 raw=25 b=29 fmt2=31 x=37 */
static const struct fdr__class table[3] = {
    {1, 2, 0, 10, 1, 3, 6, 17, {FDR__T_I32, FDR__T_STR}, {21, 23}, 0},
    {2, 1, FDR__SITE_RAW, 0, 1, 25, 0, 0, {FDR__T_BYTES}, {29}, 0},
    {3, 1, 0, 12, 1, 29, 31, 17, {FDR__T_F64}, {37}, 0},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char buf[SIZE];
    memset(buf, 0, sizeof buf);
    memcpy(buf, data, size < sizeof buf ? size : sizeof buf);
    const struct fdr__ring_geom g = {PACKET, SLOTS, 0, SIZE};
    const struct fdr__classes t = {table, 3, pool, sizeof pool};
    if (fdr__geom_check(&g, SIZE) != 0)
        abort();
    int r = fdr__ring_check((const struct fdr__buf_hdr *)buf, &g);
    if (r != 0 && r != -EINVAL)
        abort();
    uint64_t produced;
    memcpy(&produced, buf + 64, 8);
    for (uint64_t k = 0; k < SLOTS; k++) {
        const char *slot = fdr__ring_slot(buf, &g, k);
        struct fdr__pkt h;
        uint64_t seq = (k == produced % SLOTS) ? produced : k;
        r = fdr__pkt_check(slot, &g, seq, &h);
        if (r == -EINVAL)
            continue;
        uint64_t bytes = h.content_size / 8;
        if (r != 0 || bytes < sizeof h || bytes > PACKET)
            abort();
        struct fdr__iter it;
        struct fdr__event ev;
        fdr__iter_init(&it, slot, bytes, &t);
        while ((r = fdr__iter_next(&it, &ev)) > 0) {
            if (ev.payload < slot + sizeof h || ev.payload + ev.len > slot + bytes)
                abort();
            char line[256];
            struct fdr__line_info li = {ev.ts, h.tid, h.thread_name};
            size_t n =
                fdr__format_line(line, sizeof line, &t, ev.c, &li, ev.payload, ev.len);
            if (n == 0 || n > sizeof line || line[n - 1] != '\n')
                abort();
        }
        if (r != 0 && r != -EINVAL)
            abort();
    }
    /* As fdrd writes out a ring whose writer died (collect.c, ring_out). */
    struct fdr__open_packet op;
    r = fdr__committed(buf, SIZE, &op);
    if (r == 1 && (op.offset < FDR__BUF_HEADER || op.offset + op.bytes > SIZE ||
                   op.bytes < sizeof(struct fdr__pkt)))
        abort();
    if (r != 0 && r != 1 && r != -EINVAL)
        abort();
    static int null = -1;
    if (null < 0)
        null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    struct fdr__buf_hdr *bh = (struct fdr__buf_hdr *)(void *)buf;
    uint64_t first = produced > SLOTS ? produced - SLOTS : 0;
    struct fdr__stream_state st = {0, 0, 0, 0};
    for (uint64_t seq = first; seq < produced && seq < first + SLOTS; seq++) {
        uint64_t grown = 0;
        fdr__drain_packet(null, bh, &g, seq, &t, &st, &grown);
    }
    /* The same packets in one batch, as libfdr's consumer writes them:
     * a packet that claims more than its slot must be skipped, never
     * handed to writev (the sanitizers check what writev reads). */
    const char *slot[FDR__DRAIN_BATCH];
    uint64_t grown[FDR__DRAIN_BATCH];
    unsigned nb = 0;
    for (uint64_t seq = first; seq < produced && nb < FDR__DRAIN_BATCH && nb < SLOTS;
         seq++)
        slot[nb++] = fdr__ring_slot(bh, &g, seq);
    if (nb) {
        st = (struct fdr__stream_state){0, 0, 0, 0};
        r = fdr__drain_packets(null, bh, &g, first, nb, slot, &t, &st, grown);
        if (r < 0 || (unsigned)r > nb)
            abort();
        for (unsigned i = 0; i < nb; i++)
            if (grown[i] > g.packet_size + sizeof(struct fdr__pkt)) /* + an anchor */
                abort();
    }
    fdr__drain_open_packet(null, bh, &g, produced, &t, &st);
    return 0;
}
