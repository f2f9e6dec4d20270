/* SPDX-License-Identifier: MIT */
/* classes.c - bounded lookups in an event class table (common/classes.h).
 *
 * The table may come from another process or from a file, so nothing in it
 * is trusted: an id is checked against the table's size, a class's field
 * count and types against what the format code knows, and a string must
 * end inside the pool. A reader that goes through these two functions
 * never reads outside the table or the pool. */
#include <string.h>

#include "common/classes.h"

const struct fdr__class *fdr__classes_get(const struct fdr__classes *t, uint16_t id)
{
    if (!t || !t->classes || id == 0 || id > t->n)
        return NULL;
    const struct fdr__class *c = &t->classes[id - 1];
    if (c->id != id || c->nfields > FDR_MAX_FIELDS)
        return NULL;
    for (unsigned i = 0; i < c->nfields; i++)
        if (c->types[i] == FDR__T_NONE || c->types[i] > FDR__T_LAST)
            return NULL;
    return c;
}

const char *fdr__classes_str(const struct fdr__classes *t, uint32_t off)
{
    if (!t || !t->pool || off >= t->pool_size)
        return "";
    const char *s = t->pool + off;
    return memchr(s, 0, t->pool_size - off) ? s : "";
}

int fdr__classes_from_table(const struct fdr__class_table *t, size_t size,
                            struct fdr__classes *out)
{
    memset(out, 0, sizeof *out);
    if (size < sizeof *t ||
        __atomic_load_n(&t->magic, __ATOMIC_RELAXED) != FDR__CLASS_TABLE_MAGIC)
        return -1;
    /* Pairs with the release store of n_classes by the recorder. */
    uint32_t n = __atomic_load_n(&t->n_classes, __ATOMIC_ACQUIRE);
    out->classes = t->classes;
    out->n = n < FDR__MAX_CLASSES ? n : FDR__MAX_CLASSES;
    out->pool = t->pool;
    out->pool_size = FDR__CLASS_POOL_SIZE;
    return 0;
}
