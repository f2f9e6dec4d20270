/* SPDX-License-Identifier: MIT */
/* print.c - `fdr print DIR`: a trace on disk as text, one line per event,
 * merged by time across threads and processes (common/reader.h), each line
 * made by the formatter of live tracing (common/format.h,
 * fdr__format_line), so a one-process trace prints exactly what
 * FDR_TRACES printed live. A trace of several processes gets "<pid> "
 * before each line.
 *
 * Fast path: no allocation per event; each line is formatted straight
 * into a 1 MiB output buffer written with write(2) when it fills; the
 * filter is decided once per class (a table per process). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common/format.h"
#include "common/io.h"
#include "common/pattern.h"
#include "offline.h"

#define OUT_CAP (1u << 20)
#define LINE_MAX_ (8192u + 16u)

struct out {
    char *buf;
    size_t n;
    int err;
};

static void out_flush(struct out *o)
{
    if (o->n && !o->err) {
        int e = fdr__write_full(1, o->buf, o->n);
        if (e < 0)
            o->err = -e;
    }
    o->n = 0;
}

int cli_print_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"filter", required_argument, NULL, 'f'}, {"pid", required_argument, NULL, 'p'},
        {"tid", required_argument, NULL, 't'},    {"since", required_argument, NULL, 's'},
        {"until", required_argument, NULL, 'u'},  {0, 0, 0, 0},
    };
    const char *filter = NULL;
    uint32_t pid = 0, tid = 0;
    int want_pid = 0, want_tid = 0;
    uint64_t since = 0, until = UINT64_MAX;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            filter = optarg;
            break;
        case 'p':
        case 't':
            if (off_u32(optarg, c == 'p' ? &pid : &tid) != 0)
                return cli_fail(2, "print", "--%s wants a number, not '%s'",
                                c == 'p' ? "pid" : "tid", optarg);
            *(c == 'p' ? &want_pid : &want_tid) = 1;
            break;
        case 's':
        case 'u':
            if (off_seconds(optarg, c == 's' ? &since : &until) != 0)
                return cli_fail(2, "print",
                                "--%s wants seconds from the trace's start (e.g. 1.5), "
                                "not '%s'",
                                c == 's' ? "since" : "until", optarg);
            break;
        case ':':
            return cli_fail(2, "print", "option '%s' needs a value (fdr help print)",
                            argv[optind - 1]);
        default:
            return cli_fail(2, "print", "unknown option '%s' (fdr help print)",
                            argv[optind - 1]);
        }
    }
    if (optind + 1 != argc) {
        cli_usage(stderr, "print");
        return 2;
    }
    struct fdr__rules *rules = NULL;
    if (filter) {
        int st = off_pattern("print", "--filter", filter, 1, &rules);
        if (st)
            return st;
    }
    struct off_diag d = {"print", 0, 0};
    struct fdr__reader *r;
    int st = off_open(argv[optind], &d, &r);
    if (st) {
        fdr__rules_free(rules);
        return st;
    }
    /* Per process and class: 0 not decided yet, 1 printed, 2 not. */
    unsigned np = fdr__reader_procs(r);
    uint8_t **sel = calloc(np, sizeof *sel);
    struct out o = {malloc(OUT_CAP), 0, 0};
    int ok = sel && o.buf;
    for (unsigned i = 0; ok && i < np; i++)
        ok = !!(sel[i] = calloc(fdr__reader_proc(r, i)->classes.n + 1u, 1));
    if (!ok) {
        st = cli_fail(1, "print", "out of memory");
        goto done;
    }
    int multi = np > 1;
    struct fdr__rd_event ev;
    while (fdr__reader_next(r, &ev) > 0) {
        if ((want_pid && ev.pid != pid) || (want_tid && ev.tid != tid) || ev.ns < since ||
            ev.ns > until)
            continue;
        if (rules) {
            uint8_t *s = &sel[ev.proc->index][ev.c->id];
            if (!*s) {
                const struct fdr__classes *t = &ev.proc->classes;
                *s = off_pattern_match(rules, fdr__classes_str(t, ev.c->provider),
                                       fdr__classes_str(t, ev.c->event))
                         ? 1
                         : 2;
            }
            if (*s != 1)
                continue;
        }
        if (OUT_CAP - o.n < LINE_MAX_)
            out_flush(&o);
        if (multi) {
            o.n += fdr__fmt_u64(o.buf + o.n, ev.pid, 10, 0);
            o.buf[o.n++] = ' ';
        }
        struct fdr__line_info li = {ev.ns, ev.tid, NULL};
        o.n += fdr__format_line(o.buf + o.n, 8192, &ev.proc->classes, ev.c, &li,
                                ev.payload, ev.len);
        if (o.err)
            break;
    }
    out_flush(&o);
    if (o.err)
        st = cli_fail(1, "print", "writing the output: %s", strerror(o.err));
    else if (d.count)
        st = 1;
done:
    for (unsigned i = 0; sel && i < np; i++)
        free(sel[i]);
    free(sel);
    free(o.buf);
    fdr__reader_close(r);
    fdr__rules_free(rules);
    return st;
}
