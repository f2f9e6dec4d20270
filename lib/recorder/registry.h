/* SPDX-License-Identifier: MIT */
/* recorder/registry.h - the process's event classes, call sites and their
 * state (registry.c). The class table itself is common/classes.h. */
#ifndef FDR_RECORDER_REGISTRY_H
#define FDR_RECORDER_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "common/classes.h"
#include "recorder/buffer.h" /* FDR__ROUTE_SLOTS */
#include "fdr/internal/fastpath.h"

struct fdr__rules;

void fdr__registry_init(void);
/* In a forked child: the registry becomes a private copy (it is shared
 * with the drain helper, consumer.c). */
void fdr__registry_fork_child(void);
uint64_t fdr__registry_generation(void);
/* The class table as it is now (a view; classes are only added). */
void fdr__registry_classes(struct fdr__classes *out);
void fdr__site_register(struct fdr__site *s);
/* Registers the sites of a module's list [begin, end) (fdr__register_sites,
 * api.c); 0 when the list was known already, else 1. */
int fdr__registry_add_sites(struct fdr__site *const *begin, struct fdr__site *const *end);
void fdr__registry_lock(void);
void fdr__registry_unlock(void);
/* Replaces a rule list (takes ownership of r) and recomputes every site:
 * RECORD (FDR_EVENTS, fdr_record_set) or PRINT (FDR_TRACES). */
enum { FDR__RULES_RECORD = 0, FDR__RULES_PRINT = 1 };
void fdr__registry_set_rules(int which, struct fdr__rules *r);
/* fdrd traces (route slots, daemon.c): slot's selection r (taken; NULL
 * turns the slot off) and filter mask. While any slot is on, the slots
 * decide what is recorded instead of RECORD (see registry.c). */
void fdr__registry_set_route(unsigned slot, struct fdr__rules *r, uint32_t mask);
/* The slots on, and per class id the slots that record it. */
uint32_t fdr__registry_routes_on(void);
extern uint32_t fdr__class_sel[FDR__MAX_CLASSES + 1]; /* per class id (relaxed) */
/* The class table's sealed memfd (fdrd maps it) and its size; -1 when the
 * table is not in one. */
int fdr__registry_share(uint64_t *size);
void fdr__registry_each(void (*fn)(void *arg, const struct fdr__site *s, uint8_t state),
                        void *arg);

/* A module's site or tunable list [begin, end) is unloaded: removes it
 * from the known ranges (list, *n), gives its lowest and highest pointer. */
void fdr__range_forget(const void **list, size_t *n, void *const *begin, void *const *end,
                       uintptr_t *lo, uintptr_t *hi);

#endif
