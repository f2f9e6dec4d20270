/* SPDX-License-Identifier: MIT */
/* common/classes.h - the event class table and its string pool.
 *
 * An event class is what a reader needs to decode and print an event: id,
 * provider, name, field names and types, format string, source location.
 * The table holds no pointers: every string is an offset into a pool of
 * NUL-terminated strings (offset 0 is ""), so that the table can live in
 * shared memory or in a file and be read by another process. The recorder
 * (lib/recorder/registry.c) fills a table; readers only look things up,
 * through a view (struct fdr__classes) whose lookups are bounded: a class
 * id outside the table gives NULL, a string offset outside the pool or a
 * string without its NUL inside the pool gives "". */
#ifndef FDR_COMMON_CLASSES_H
#define FDR_COMMON_CLASSES_H

#include <stdint.h>

#include "fdr/internal/fastpath.h" /* FDR_MAX_FIELDS, FDR__T_* */

#define FDR__MAX_CLASSES 16384
#define FDR__SITE_RAW 2          /* class kind of raw events (provider.c) */
#define FDR__T_LAST FDR__T_PTR32 /* the highest field type a class may have */

/* The type a class records for a site's field type t on this machine:
 * char and pointers as this machine has them (FDR__T_UCHAR, FDR__T_PTR32),
 * so that readers elsewhere decode them exactly. */
static inline uint8_t fdr__class_type(uint8_t t)
{
    if (t == FDR__T_CHAR && (char)-1 > 0)
        return FDR__T_UCHAR;
    if (t == FDR__T_PTR && sizeof(void *) == 4)
        return FDR__T_PTR32;
    return t;
}

struct fdr__class {
    uint16_t id;
    uint8_t nfields;
    uint8_t kind; /* FDR__SITE_TRACE, or FDR__SITE_RAW for raw events */
    uint32_t line;
    uint32_t provider, event, format, file; /* pool offsets */
    uint8_t types[FDR_MAX_FIELDS];
    uint32_t names[FDR_MAX_FIELDS];
    uint8_t category; /* 0..31: the filter-mask bit (fdr_trace_category) */
};

/* The table as the recorder keeps it, in one mapping (a memfd that fdrd
 * maps too): classes are appended, then published by a release store of
 * n_classes; `generation` grows with every class. Read from another
 * process it is untrusted: view it with fdr__classes_from_table. */
#define FDR__CLASS_TABLE_MAGIC 0x46445252u /* "FDRR" */
#define FDR__CLASS_POOL_SIZE (16u << 20)
struct fdr__class_table {
    uint32_t magic;
    uint32_t n_classes;
    uint32_t pool_used;
    uint32_t pad;
    uint64_t generation;
    struct fdr__class classes[FDR__MAX_CLASSES];
    char pool[FDR__CLASS_POOL_SIZE];
};

/* A read-only view of a table: n classes (ids 1..n) and pool_size bytes of
 * pool. Neither is owned. */
struct fdr__classes {
    const struct fdr__class *classes;
    uint32_t n;
    const char *pool;
    uint32_t pool_size;
};

/* The class with this id, or NULL when there is none or it is not valid
 * (id, number of fields or a field type out of range). */
const struct fdr__class *fdr__classes_get(const struct fdr__classes *t, uint16_t id);
/* Views the table at t, `size` bytes mapped: 0, or -1 when the mapping is
 * too small or not a table. n is read once (acquire) and bounded. */
int fdr__classes_from_table(const struct fdr__class_table *t, size_t size,
                            struct fdr__classes *out);
/* The string at pool offset off; "" when off or its NUL is outside the pool. */
const char *fdr__classes_str(const struct fdr__classes *t, uint32_t off);

#endif
