/* SPDX-License-Identifier: MIT */
/* fuzz-pattern.c - libFuzzer target for lib/pattern.c.
 *
 * Input: SPEC '\0' PROVIDER '\0' EVENT (missing parts are "").
 * Property: any spec parses (files refused) without a crash, a leak or
 * undefined behaviour; every warning is one printable line starting with
 * "fdr: fuzz: "; matching gives -1, 0 or 1; every tunable's text re-parses to
 * its stored value; and fdr__glob_match agrees with fnmatch(3) (FNM_NOESCAPE,
 * C locale) on short globs over the name and glob characters (with '[' only
 * in globs the parser accepts). */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pattern.h"

struct check {
    size_t warnings;
};

static void on_warn(void *ctx, const char *message)
{
    struct check *c = ctx;
    c->warnings++;
    if (strncmp(message, "fdr: fuzz: ", 11) || strlen(message) >= 1024)
        abort();
    for (const char *p = message; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            abort();
}

static int glob_charset(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n > max)
        return 0;
    return strspn(s, "abcXYZ019_*?[]!^-") == n;
}

/* A glob the parser accepts as one name-only item (or one without '['):
 * glibc's fnmatch has quirks with unterminated '[' that the parser rejects. */
static int valid_glob(const char *glob)
{
    if (!strchr(glob, '['))
        return 1;
    if (*glob == '+' || *glob == '-' || *glob == '!' || *glob == '^')
        return 0;
    struct check c = {0};
    struct fdr__rules *r = NULL;
    if (fdr__rules_parse_flags(glob, "fuzz", FDR__RULES_NO_FILES, on_warn, &c, &r))
        return 0;
    int ok = c.warnings == 0 && fdr__rules_count(r) == 1;
    fdr__rules_free(r);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 3);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = buf[size + 1] = buf[size + 2] = '\0';
    const char *spec = buf;
    /* buf[size..size+2] are NULs, so both stay inside the buffer */
    const char *provider = spec + strlen(spec) + 1;
    const char *event = provider + strlen(provider) + 1;

    struct check c = {0};
    struct fdr__rules *r = NULL;
    int rc = fdr__rules_parse_flags(spec, "fuzz", FDR__RULES_NO_FILES, on_warn, &c, &r);
    if (rc == -ENOMEM) {
        free(buf);
        return 0;
    }
    if (rc || !r)
        abort();
    /* each bad item is at least one byte plus a separator */
    if (c.warnings > strlen(spec) || fdr__rules_count(r) > strlen(spec))
        abort();

    int m = fdr__rules_match(r, provider, event);
    if (m < -1 || m > 1)
        abort();
    if (fdr__rules_count(r) == 0 && m != -1)
        abort();
    fdr__rules_wants_help(r);

    for (size_t i = 0; i < fdr__rules_tunable_count(r); i++) {
        const char *name, *value;
        double d1, d2;
        long long l1, l2;
        int i1, i2;
        if (fdr__rules_tunable(r, i, &name, &value) ||
            fdr__rules_tunable_number(r, i, &d1, &l1, &i1) ||
            fdr__parse_number(value, &d2, &l2, &i2) || !*name ||
            memcmp(&d1, &d2, sizeof(d1)) || l1 != l2 || i1 != i2)
            abort();
    }
    fdr__rules_free(r);

    /* glob: never crashes on any input, agrees with fnmatch where both apply */
    int g = fdr__glob_match(spec, provider);
    if (g != 0 && g != 1)
        abort();
    if (glob_charset(spec, 64) && glob_charset(provider, 64) && valid_glob(spec)) {
        int f = fnmatch(spec, provider, FNM_NOESCAPE) == 0;
        if (f != g) {
            fprintf(stderr, "glob \"%s\" text \"%s\": fdr %d fnmatch %d\n", spec,
                    provider, g, f);
            abort();
        }
    }
    if (!fdr__glob_match("*", provider))
        abort();
    if (!strpbrk(event, "*?[") && !fdr__glob_match(event, event))
        abort();

    free(buf);
    return 0;
}
