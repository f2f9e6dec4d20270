/* SPDX-License-Identifier: MIT */
/* error.c - names of error codes (fdr/error.h). */
#include <string.h>

#include "fdr/fdr.h"

const char *fdr_strerror(int err)
{
    if (err < 0)
        err = -err;
    switch (err) {
    case 0:
        return "success";
#define FDR__ERR_CASE(code, msg)                                                         \
    case code:                                                                           \
        return msg;
        FDR_ERRNO_MAP(FDR__ERR_CASE)
#undef FDR__ERR_CASE
    default:
        return strerror(err); /* other errno values, e.g. from open(2) */
    }
}
