/* SPDX-License-Identifier: MIT */
/* overclaim.h - makes a closed packet of a ring claim more bytes than its
 * slot, for the tests of issue 27 (every reader of a ring must reject it):
 * the packet claims its events plus copies of its last event, written over
 * the rest of its slot and into the next one, so that every byte it claims
 * parses as events in order and only the bound on its size can reject it.
 *
 *   fdr_test_overclaim(slot, packet, counter_bytes, content_only)
 *
 * slot: the packet (its slot in a mapping of packet-byte slots, the next
 * one after it); counter_bytes: 4 or 8, the size of the event's last
 * payload field, a counter that grows by one from one event to the next
 * (it finds the event's size); content_only: 0, packet and content size
 * both claim the bytes (a packet larger than its slot), 1, the packet size
 * stays the slot's (content larger than the packet). The next slot's
 * header is written over too (a corrupt packet). Returns the bytes claimed,
 * 0 when the packet is not one it can work with. Header offsets: ring.h's
 * struct fdr__pkt (content_size at 44, packet_size at 52). */
#ifndef FDR_TESTS_OVERCLAIM_H
#define FDR_TESTS_OVERCLAIM_H

#include <stdint.h>
#include <string.h>

static inline uint64_t fdr_test_counter_at(const char *p, int bytes)
{
    uint64_t v = 0;
    uint32_t v32;
    if (bytes == 4) {
        memcpy(&v32, p, 4);
        v = v32;
    } else
        memcpy(&v, p, 8);
    return v;
}

static inline uint64_t fdr_test_overclaim(char *slot, size_t packet, int counter_bytes,
                                          int content_only)
{
    uint64_t bits, psize;
    memcpy(&bits, slot + 44, 8);
    uint64_t c = bits / 8;
    if (c < 100 + 6 * 64 || c > packet)
        return 0;
    /* The size of an event: the counter steps down by one event after
     * another from the packet's end. */
    uint64_t last = fdr_test_counter_at(slot + c - counter_bytes, counter_bytes);
    size_t e = 0;
    for (size_t d = 5; d <= 64 && !e; d++) {
        int ok = 1;
        for (unsigned j = 1; j <= 5 && ok; j++)
            ok = fdr_test_counter_at(slot + c - counter_bytes - j * d, counter_bytes) ==
                 last - j;
        e = ok ? d : 0;
    }
    if (!e)
        return 0;
    size_t m = (2 * packet - 16 - c) / e;
    for (size_t k = 0; k < m; k++)
        memcpy(slot + c + k * e, slot + c - e, e);
    bits = (c + m * e) * 8;
    psize = content_only ? (uint64_t)packet * 8 : bits;
    memcpy(slot + 44, &bits, 8);
    memcpy(slot + 52, &psize, 8);
    return bits / 8;
}

#endif
