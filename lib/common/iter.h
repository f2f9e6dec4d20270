/* SPDX-License-Identifier: MIT */
/* common/iter.h - the events of one packet, in order.
 *
 * An event is a u16 class id, the low 32 bits of its time
 * (FDR__EVENT_HEADER_SIZE bytes; the full value is rebuilt from the
 * packet's timestamp_begin and the events before, as babeltrace2 does) and
 * its payload, whose size follows from the class's field types
 * (common/format.h, fdr__payload_size). The packet has been checked
 * (common/validate.h); the events in it are still not trusted: an unknown
 * class or a payload that does not fit ends the walk with -EINVAL. */
#ifndef FDR_COMMON_ITER_H
#define FDR_COMMON_ITER_H

#include <stddef.h>
#include <stdint.h>

#include "common/classes.h"

struct fdr__iter {
    const char *p, *end;
    const struct fdr__classes *t;
    uint64_t ts; /* the time of the last event, or the packet's begin */
    int err;
};

struct fdr__event {
    uint16_t id;
    uint64_t ts;
    const struct fdr__class *c;
    const char *payload; /* inside the packet */
    size_t len;          /* bytes of payload */
};

/* Iterates the packet at pkt whose content (header included) is `bytes`. */
void fdr__iter_init(struct fdr__iter *it, const void *pkt, uint64_t bytes,
                    const struct fdr__classes *t);
/* 1 and *ev for the next event, 0 at the end, -EINVAL at a corrupt event
 * (and from then on). */
int fdr__iter_next(struct fdr__iter *it, struct fdr__event *ev);

#endif
