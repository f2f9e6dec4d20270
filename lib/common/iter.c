/* SPDX-License-Identifier: MIT */
/* iter.c - the events of one packet (common/iter.h). Bounded by the
 * packet's content: no read ever goes past `end`. Async-signal-safe. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "common/format.h"
#include "common/iter.h"
#include "common/ring.h"

void fdr__iter_init(struct fdr__iter *it, const void *pkt, uint64_t bytes,
                    const struct fdr__classes *t)
{
    it->p = (const char *)pkt + sizeof(struct fdr__pkt);
    it->end = (const char *)pkt +
              (bytes < sizeof(struct fdr__pkt) ? sizeof(struct fdr__pkt) : bytes);
    it->t = t;
    it->err = 0;
    /* The clock value events are rebuilt from (fastpath.h): the packet's
     * timestamp_begin, then each event's time. */
    it->ts = 0;
    if (bytes >= sizeof(struct fdr__pkt))
        memcpy(&it->ts, (const char *)pkt + offsetof(struct fdr__pkt, ts_begin), 8);
}

int fdr__iter_next(struct fdr__iter *it, struct fdr__event *ev)
{
    if (it->err)
        return it->err;
    if (it->p == it->end)
        return 0;
    /* A few bytes left that cannot be an event: a reader (babeltrace2)
     * stops there ("Cannot handle state ... EVENT_HEADER"), so they are
     * corrupt, not the end. */
    if (it->end - it->p < FDR__EVENT_HEADER_SIZE)
        return it->err = -EINVAL;
    uint32_t low;
    memcpy(&ev->id, it->p, 2);
    memcpy(&low, it->p + 2, 4);
    /* As babeltrace2 does with a clock field narrower than the clock: the
     * low bits replaced, one wrap when they went back. */
    ev->ts = (it->ts & ~(uint64_t)UINT32_MAX) | low;
    if (low < (uint32_t)it->ts)
        ev->ts += (uint64_t)1 << 32;
    it->ts = ev->ts;
    ev->c = fdr__classes_get(it->t, ev->id);
    ev->payload = it->p + FDR__EVENT_HEADER_SIZE;
    size_t left = (size_t)(it->end - ev->payload);
    ev->len = ev->c ? fdr__payload_size(ev->c, ev->payload, left) : 0;
    if (!ev->c || (ev->len == 0 && ev->c->nfields > 0))
        return it->err = -EINVAL;
    it->p = ev->payload + ev->len;
    return 1;
}
