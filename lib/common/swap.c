/* SPDX-License-Identifier: MIT */
/* swap.c - packets of the other byte order turned into this machine's
 * (common/swap.h). In place, bounded by the packet: an event whose class
 * is unknown or whose fields run past the end stops the walk, and the
 * iterator then reports it as it would in a trace of this machine. */
#include <string.h>

#include "common/fields.h"
#include "common/swap.h"
#include "fdr/internal/fastpath.h" /* FDR__EVENT_HEADER_SIZE */

void fdr__swap_bytes(void *p, size_t n)
{
    unsigned char *b = p;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned char t = b[i];
        b[i] = b[n - 1 - i];
        b[n - 1 - i] = t;
    }
}

void fdr__pkt_swap_header(struct fdr__pkt *h)
{
    unsigned char *b = (unsigned char *)h;
    fdr__swap_bytes(b + offsetof(struct fdr__pkt, magic), 4);
    for (size_t o = offsetof(struct fdr__pkt, stream_instance_id);
         o < offsetof(struct fdr__pkt, pid); o += 8)
        fdr__swap_bytes(b + o, 8);
    fdr__swap_bytes(b + offsetof(struct fdr__pkt, pid), 4);
    fdr__swap_bytes(b + offsetof(struct fdr__pkt, tid), 4);
}

/* The size of a field of type t whose value is stored in the other byte
 * order: 1, 2, 4 or 8 for a number, 0 for what is bytes (a string, the
 * bytes of a raw event). */
static size_t number_size(uint8_t t)
{
    switch (t) {
    case FDR__T_I16:
    case FDR__T_U16:
        return 2;
    case FDR__T_I32:
    case FDR__T_U32:
    case FDR__T_F32:
    case FDR__T_PTR32:
        return 4;
    case FDR__T_I64:
    case FDR__T_U64:
    case FDR__T_F64:
    case FDR__T_PTR:
        return 8;
    default:
        return 0;
    }
}

void fdr__pkt_swap(void *pkt, size_t bytes, const struct fdr__classes *t)
{
    if (bytes < sizeof(struct fdr__pkt))
        return;
    fdr__pkt_swap_header(pkt);
    char *p = (char *)pkt + sizeof(struct fdr__pkt), *end = (char *)pkt + bytes;
    while (end - p >= FDR__EVENT_HEADER_SIZE) {
        uint16_t id;
        fdr__swap_bytes(p, 2);
        fdr__swap_bytes(p + 2, 4); /* the clock's low 32 bits */
        memcpy(&id, p, 2);
        const struct fdr__class *c = fdr__classes_get(t, id);
        if (!c)
            return;
        p += FDR__EVENT_HEADER_SIZE;
        for (unsigned i = 0; i < c->nfields; i++) {
            size_t left = (size_t)(end - p);
            if (c->types[i] == FDR__T_BYTES && left >= 4)
                fdr__swap_bytes(p, 4); /* the length, before it is read */
            size_t n = fdr__field_size(c->types[i], p, left);
            if (n == (size_t)-1)
                return;
            size_t w = number_size(c->types[i]);
            if (w)
                fdr__swap_bytes(p, w);
            p += n;
        }
    }
}
