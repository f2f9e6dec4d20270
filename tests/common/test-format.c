/* SPDX-License-Identifier: MIT */
/* test-format.c - fdr's own printf of doubles and floats (lib/common/
 * format.c: the crash dump, live printing, fdr print) against the C
 * library's: the same characters for %f, %e and %g at several precisions,
 * widths and flags (not %#g: glibc prints 999999.5 as "1.e+06", C11 and
 * fdr as "1.00000e+06"), on values chosen at the edges (halfway cases, powers of
 * ten, the largest and the smallest, subnormals) and 30,000 doubles of
 * random bits. Run natively and by the cross stage under qemu-user
 * (issue 30: with x87's precision, i686 printed 1/3 with %.17g as
 * 0.33333333333333331 and x86-64 as ...332; glibc prints ...331 on both).
 * Prints the first differences and exits 1 when there is one. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/classes.h"
#include "common/format.h"

static const char *const formats[] = {
    "%.17g", "%g",   "%.3g",   "%.1g",     "%.0g",    "%.20g", "%G",    "%f",    "%.0f",
    "%.1f",  "%.2f", "%.17f",  "%.30f",    "%e",      "%.0e",  "%.3e",  "%.16e", "%E",
    "%+.5e", "% g",  "%12.4f", "%-14.3e|", "%015.6g", "%#.0f", "%#.0e",
};
#define NFORMATS (sizeof formats / sizeof formats[0])

static char pool[4096];
static unsigned failures;

static void one(const char *fmt, uint32_t at, double v, int is_float)
{
    struct fdr__class c;
    memset(&c, 0, sizeof c);
    c.nfields = 1;
    c.types[0] = is_float ? FDR__T_F32 : FDR__T_F64;
    c.format = at;
    struct fdr__classes t = {&c, 1, pool, sizeof pool};
    char payload[8], got[512], want[512];
    float f = (float)v;
    if (is_float)
        memcpy(payload, &f, sizeof f);
    else
        memcpy(payload, &v, sizeof v);
    /* fdr prints %f of 1e19 and more as %e: not compared there */
    if (strchr(fmt, 'f') && fabs(v) >= 1e19)
        return;
    fdr__format_payload(got, sizeof got, &t, &c, payload, is_float ? 4 : 8);
    snprintf(want, sizeof want, fmt, is_float ? (double)f : v);
    if (strcmp(got, want) != 0 && failures++ < 20)
        printf("FAIL: %s of %a (%s): fdr \"%s\", libc \"%s\"\n", fmt,
               is_float ? (double)f : v, is_float ? "float" : "double", got, want);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(void)
{
    uint32_t at[NFORMATS], used = 1;
    for (unsigned i = 0; i < NFORMATS; i++) {
        at[i] = used;
        memcpy(pool + used, formats[i], strlen(formats[i]) + 1);
        used += (uint32_t)strlen(formats[i]) + 1;
    }
    static const double edges[] = {
        0.0,
        -0.0,
        1.0 / 3,
        2.0 / 3,
        0.1,
        0.5,
        1.5,
        2.5,
        0.125,
        0.375,
        1e-5,
        9.5,
        99.5,
        0.05,
        0.15,
        0.25,
        0.35,
        1e15,
        1e16,
        1e17,
        1e18,
        9.999999999999999e18,
        1e22,
        1e23,
        123456789.125,
        0.000123456,
        9.9999e-5,
        0.0001,
        999999.5,
        9999995,
        1.0000000000000002,
        0.9999999999999999,
        DBL_MAX,
        DBL_MIN,
        DBL_TRUE_MIN,
        DBL_EPSILON,
        FLT_MAX,
        FLT_MIN,
        5e-324,
        2.2250738585072009e-308,
        4.35,
        1.005,
        2.675,
        1.45,
        8.5,
        0.45,
        5e-5,
        6.02214076e23,
        -273.15,
        M_PI,
        M_E,
    };
    for (unsigned k = 0; k < sizeof edges / sizeof edges[0]; k++)
        for (unsigned i = 0; i < NFORMATS; i++) {
            one(formats[i], at[i], edges[k], 0);
            one(formats[i], at[i], -edges[k], 0);
            one(formats[i], at[i], edges[k], 1);
        }
    /* Random bits (not NaN or infinity): every exponent, every mantissa;
     * and values near the powers of ten where %g changes style. */
    for (unsigned k = 0; k < 30000; k++) {
        uint64_t b = next();
        double v;
        memcpy(&v, &b, sizeof v);
        if (!isfinite(v))
            continue;
        one(formats[k % NFORMATS], at[k % NFORMATS], v, k % 7 == 0);
        double p = pow(10, (int)(next() % 40) - 20) * (1 - (double)(next() % 16) * 1e-17);
        one(formats[k % NFORMATS], at[k % NFORMATS], p, 0);
    }
    if (failures) {
        printf("%u differences\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
