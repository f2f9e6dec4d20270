/* SPDX-License-Identifier: MIT */
/* fields.c - an event's payload decoded field by field (fields.h). The
 * payload is untrusted: every size is checked against what is left. */
#include "common/fields.h"

#include <string.h>

size_t fdr__field_size(uint8_t type, const char *p, size_t left)
{
    size_t n;
    switch (type) {
    case FDR__T_BOOL:
    case FDR__T_CHAR:
    case FDR__T_UCHAR:
    case FDR__T_I8:
    case FDR__T_U8:
        n = 1;
        break;
    case FDR__T_I16:
    case FDR__T_U16:
        n = 2;
        break;
    case FDR__T_I32:
    case FDR__T_U32:
    case FDR__T_F32:
    case FDR__T_PTR32:
        n = 4;
        break;
    case FDR__T_I64:
    case FDR__T_U64:
    case FDR__T_F64:
    case FDR__T_PTR:
        n = 8;
        break;
    case FDR__T_STR: {
        const char *z = memchr(p, 0, left);
        return z ? (size_t)(z - p) + 1 : (size_t)-1;
    }
    case FDR__T_BYTES: {
        uint32_t b;
        if (left < 4)
            return (size_t)-1;
        memcpy(&b, p, 4);
        n = (size_t)b + 4;
        break;
    }
    default:
        return (size_t)-1;
    }
    return n <= left ? n : (size_t)-1;
}

static void decode_one(struct fdr__field *f, const char *p, size_t n)
{
    union {
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float f32;
        double f64;
    } v;
    memset(&v, 0, sizeof v);
    if (f->type != FDR__T_STR && f->type != FDR__T_BYTES)
        memcpy(&v, p, n);
    f->s = NULL;
    f->n = 0;
    switch (f->type) {
    case FDR__T_BOOL:
    case FDR__T_U8:
    case FDR__T_UCHAR:
        f->kind = f->type == FDR__T_BOOL ? FDR__FK_INT : FDR__FK_UINT;
        f->v.u = v.u8;
        if (f->kind == FDR__FK_INT)
            f->v.i = v.u8;
        break;
    case FDR__T_CHAR:
    case FDR__T_I8:
        f->kind = FDR__FK_INT;
        f->v.i = v.i8;
        break;
    case FDR__T_I16:
        f->kind = FDR__FK_INT;
        f->v.i = v.i16;
        break;
    case FDR__T_U16:
        f->kind = FDR__FK_UINT;
        f->v.u = v.u16;
        break;
    case FDR__T_I32:
        f->kind = FDR__FK_INT;
        f->v.i = v.i32;
        break;
    case FDR__T_U32:
        f->kind = FDR__FK_UINT;
        f->v.u = v.u32;
        break;
    case FDR__T_I64:
        f->kind = FDR__FK_INT;
        f->v.i = v.i64;
        break;
    case FDR__T_U64:
        f->kind = FDR__FK_UINT;
        f->v.u = v.u64;
        break;
    case FDR__T_F32:
        f->kind = FDR__FK_FLOAT;
        f->v.d = v.f32;
        break;
    case FDR__T_F64:
        f->kind = FDR__FK_FLOAT;
        f->v.d = v.f64;
        break;
    case FDR__T_PTR:
        f->kind = FDR__FK_PTR;
        f->v.u = v.u64;
        break;
    case FDR__T_PTR32:
        f->kind = FDR__FK_PTR;
        f->v.u = v.u32;
        break;
    case FDR__T_STR:
        f->kind = FDR__FK_STR;
        f->s = p;
        f->n = n - 1;
        break;
    default: /* FDR__T_BYTES: checked by fdr__field_size */
        f->kind = FDR__FK_BYTES;
        f->s = p + 4;
        f->n = n - 4;
        break;
    }
}

int fdr__fields_decode(const struct fdr__classes *t, const struct fdr__class *c,
                       const char *payload, size_t len,
                       struct fdr__field out[FDR_MAX_FIELDS])
{
    size_t off = 0;
    unsigned n = c->nfields < FDR_MAX_FIELDS ? c->nfields : FDR_MAX_FIELDS;
    for (unsigned i = 0; i < n; i++) {
        size_t sz = fdr__field_size(c->types[i], payload + off, len - off);
        if (sz == (size_t)-1)
            return -1;
        out[i].name = fdr__classes_str(t, c->names[i]);
        out[i].type = c->types[i];
        decode_one(&out[i], payload + off, sz);
        off += sz;
    }
    return (int)n;
}

int fdr__field_number(const struct fdr__field *f, double *out)
{
    switch (f->kind) {
    case FDR__FK_INT:
        *out = (double)f->v.i;
        return 1;
    case FDR__FK_UINT:
        *out = (double)f->v.u;
        return 1;
    case FDR__FK_FLOAT:
        *out = f->v.d;
        return 1;
    default:
        return 0;
    }
}
