/* SPDX-License-Identifier: MIT */
/* disable-example.c - an instrumented program for tests/disable/check-disable.sh.
 *
 * Every fdr macro is used, with arguments that have side effects: built with
 * -DFDR_DISABLE none of them may run (the program prints "side effects 0")
 * and nothing of fdr may remain in the binary; built without it, the events
 * are recorded and the side effects happen once per event ("side effects 10",
 * spans included).
 * The names below (zqprov, zqevent..., zqfmt) are unusual on purpose, so that
 * `strings` finds them only if fdr left them in. */
#include <stdio.h>

#include <fdr/fdr.h>

static int effects;

static int bump(void)
{
    return ++effects;
}

int main(int argc, char **argv)
{
    const char *who = argc > 0 ? argv[0] : "?";
    (void)who;
    fdr_trace(zqprov, zqevent_a, "zqfmt_a n=%d who=%s", bump(), who);
    fdr_trace(zqprov, zqevent_b);
    fdr_trace(zqprov, zqevent_c, "zqfmt_c %d %u", effects++, (unsigned)bump());
    fdr_trace_fields(zqprov, zqevent_d, "zqname_d", "zqfmt_d %ld", (long)bump());
    if (fdr_enabled(zqprov, zqevent_e))
        fdr_trace(zqprov, zqevent_e, "zqfmt_e %d", bump());
    {
        fdr_span(zqprov, zqevent_f, "zqfmt_f %d", bump());
        fdr_span_begin(zqprov, zqevent_g, "zqfmt_g %d", bump());
        fdr_span_end(zqprov, zqevent_g, "zqfmt_h %d", bump());
        fdr_span_async_begin(zqprov, zqevent_i, (unsigned)bump(), "zqfmt_i %d", bump());
        fdr_span_async_end(zqprov, zqevent_i, 1);
    }
    printf("side effects %d\n", effects);
    return 0;
}
