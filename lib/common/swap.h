/* SPDX-License-Identifier: MIT */
/* common/swap.h - a trace written on a machine of the other byte order
 * (s390x read on x86-64, or the reverse), turned into this machine's order
 * so that every reader of lib/common decodes it as its own.
 *
 * The program writes its class file and its packets in its own order and
 * says which (the metadata's byte_order for CTF readers; the class file's
 * magic for fdr's). A reader that finds the class file's magic reversed
 * swaps the file (fdr__classes_swap), then every packet it reads
 * (fdr__pkt_swap_header, fdr__pkt_swap), in place, before checking them
 * as usual. Nothing is trusted: a packet is swapped only as far as its
 * events can be walked, and the rest is left for the checks to refuse. */
#ifndef FDR_COMMON_SWAP_H
#define FDR_COMMON_SWAP_H

#include <stddef.h>

#include "common/classes.h"
#include "common/ring.h"

/* A class file of len bytes: 1 when it was in the other byte order and is
 * now in this machine's, 0 when it is in this machine's (or is not a class
 * file: fdr__classes_load says why). */
int fdr__classes_swap(void *file, size_t len);
/* The n bytes at p in the reverse order. */
void fdr__swap_bytes(void *p, size_t n);
/* A packet header read from a stream of the other byte order. */
void fdr__pkt_swap_header(struct fdr__pkt *h);
/* The bytes bytes of a packet (header first) of the other byte order:
 * its header and every event that t's classes let walk. */
void fdr__pkt_swap(void *pkt, size_t bytes, const struct fdr__classes *t);

#endif
