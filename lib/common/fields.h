/* SPDX-License-Identifier: MIT */
/* common/fields.h - the fields of one event's payload, decoded.
 *
 * A payload is the class's fields one after the other, byte-aligned, in
 * native byte order (docs/trace-format.md): fixed-size numbers, strings
 * NUL-terminated, byte sequences as a u32 length then the bytes. Readers
 * that need values rather than a text line (fdr export, fdr stats, the
 * scope) decode them here; the line formatter (format.h) sizes fields with
 * the same fdr__field_size. The payload is untrusted: nothing is read past
 * `len`. */
#ifndef FDR_COMMON_FIELDS_H
#define FDR_COMMON_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "common/classes.h"

enum fdr__field_kind {
    FDR__FK_INT,   /* signed integer: .i (bool and char too) */
    FDR__FK_UINT,  /* unsigned integer: .u */
    FDR__FK_FLOAT, /* .d */
    FDR__FK_PTR,   /* .u, an address */
    FDR__FK_STR,   /* .s, NUL-terminated inside the payload, .n bytes */
    FDR__FK_BYTES, /* .s, .n bytes */
};

struct fdr__field {
    const char *name; /* from the class table ("" when none) */
    uint8_t type;     /* FDR__T_* */
    uint8_t kind;     /* enum fdr__field_kind */
    union {
        int64_t i;
        uint64_t u;
        double d;
    } v;
    const char *s; /* STR and BYTES: inside the payload */
    size_t n;
};

/* Bytes field `type` takes at p, with `left` bytes available; (size_t)-1
 * when it does not fit or the type is unknown. */
size_t fdr__field_size(uint8_t type, const char *p, size_t left);

/* Decodes the fields of class c from payload (len bytes) into
 * out[0..c->nfields). Returns the number of fields, or -1 when the payload
 * does not hold them. t gives the field names. */
int fdr__fields_decode(const struct fdr__classes *t, const struct fdr__class *c,
                       const char *payload, size_t len,
                       struct fdr__field out[FDR_MAX_FIELDS]);

/* 1 when the field is a number a chart can show (integers, floats; not
 * pointers, strings or bytes); its value as a double in *out. */
int fdr__field_number(const struct fdr__field *f, double *out);

#endif
