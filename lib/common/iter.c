/* SPDX-License-Identifier: MIT */
/* iter.c - the events of one packet (common/iter.h). Bounded by the
 * packet's content: no read ever goes past `end`. Async-signal-safe. */
#include <errno.h>
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
}

int fdr__iter_next(struct fdr__iter *it, struct fdr__event *ev)
{
    if (it->err)
        return it->err;
    if (it->end - it->p < FDR__EVENT_HEADER_SIZE)
        return 0;
    memcpy(&ev->id, it->p, 2);
    memcpy(&ev->ts, it->p + 2, 8);
    ev->c = fdr__classes_get(it->t, ev->id);
    ev->payload = it->p + FDR__EVENT_HEADER_SIZE;
    size_t left = (size_t)(it->end - ev->payload);
    ev->len = ev->c ? fdr__payload_size(ev->c, ev->payload, left) : 0;
    if (!ev->c || (ev->len == 0 && ev->c->nfields > 0))
        return it->err = -EINVAL;
    it->p = ev->payload + ev->len;
    return 1;
}
