/* SPDX-License-Identifier: MIT */
/* offline.c - the verbs that read a trace on disk (`fdr print`, print.c;
 * `fdr stats`, stats.c) and what they share (offline.h): opening a trace
 * with common/reader.h and printing its diagnostics, event patterns, time
 * and number arguments, JSON strings. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "common/pattern.h"
#include "offline.h"

int cli_print_run(int argc, char **argv);
int cli_stats_run(int argc, char **argv);

const struct cli_verb cli_verbs_offline[] = {
    {"print", cli_print_run,
     "DIR [--filter PATTERN] [--pid N] [--tid N] [--since T] [--until T]",
     "print a trace's events as text, merged by time",
     "Prints one line per event of the trace in DIR (a directory written with\n"
     "FDR_OUTPUT or fdr record, or one process's <name>-<pid>/ in it), in time\n"
     "order across threads and processes, as live tracing (FDR_TRACES) prints:\n"
     "    <seconds> [<tid>] <provider>:<event> <message>\n"
     "When DIR holds more than one process, each line starts with the pid and a\n"
     "space. Seconds count from the start of the (first) process.\n"
     "  --filter PATTERN  only the events the pattern selects (FDR_EVENTS syntax)\n"
     "  --pid N, --tid N  only the events of this process or thread\n"
     "  --since T, --until T  only the events at or after / at or before T\n"
     "                    seconds (e.g. 1.5), on the time of the lines\n"
     "Corrupt input: one line on stderr per problem (file and offset), the rest\n"
     "is printed, and the exit status is 1.\n"},
    {"stats", cli_stats_run, "DIR [--json]",
     "events per class, thread and process, rates, discarded counts",
     "Counts the events of the trace in DIR per class (provider:event), per\n"
     "thread and per process, with rates (events/s over the trace's span), the\n"
     "events discarded (events_discarded of each stream's last packet, summed)\n"
     "and the first and last event times. --json prints one JSON document\n"
     "(docs/tools.md has its schema).\n"},
    {0},
};

void off_diag_fn(void *ctx, const char *file, uint64_t offset, const char *what)
{
    struct off_diag *d = ctx;
    d->count++;
    if (!d->quiet)
        fprintf(stderr, "fdr %s: %s: offset %llu: %s\n", d->verb, file,
                (unsigned long long)offset, what);
}

unsigned off_unfinished(struct fdr__reader *r, const char *verb)
{
    unsigned n = 0;
    for (unsigned i = 0; i < fdr__reader_procs(r); i++) {
        const struct fdr__rd_proc *p = fdr__reader_proc(r, i);
        if (p->unfinished == 2)
            fprintf(stderr,
                    "fdr %s: %s: warning: process %u ended before finishing this "
                    "trace (killed with its drain helper, or without one): the "
                    "events it had not written yet are lost, and no count says how "
                    "many\n",
                    verb, p->path, p->pid);
        else if (p->unfinished == 3)
            fprintf(stderr,
                    "fdr %s: %s: warning: fdrd ended before finishing this trace of "
                    "process %u (killed, and not started again while the process "
                    "lived): the events fdrd had not written yet are lost, and no "
                    "count says how many\n",
                    verb, p->path, p->pid);
        n += p->unfinished >= 2;
    }
    return n;
}

int off_open(const char *dir, struct off_diag *d, struct fdr__reader **r)
{
    /* One descriptor per stream file: allow as many as the hard limit. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int err = fdr__reader_open(dir, off_diag_fn, d, r);
    if (err == 0) {
        if (!d->quiet)
            off_unfinished(*r, d->verb);
        return 0;
    }
    if (d->quiet)
        return 1;
    if (err == -ENODATA)
        return cli_fail(1, d->verb,
                        "%s: no trace here (no <name>-<pid>/ directory holding "
                        ".fdr-classes and stream files%s)",
                        dir, d->count ? " that could be read" : "");
    return cli_fail(1, d->verb, "cannot read '%s': %s", dir, strerror(-err));
}

struct first_warning {
    char line[512];
    int n;
};

static void keep_first(void *ctx, const char *msg)
{
    struct first_warning *w = ctx;
    if (w->n++)
        return;
    /* "fdr: ORIGIN: ignoring malformed item ..." -> "malformed item ..." */
    const char *p = msg;
    if (strncmp(p, "fdr: ", 5) == 0 && (p = strstr(p + 5, ": ")))
        p += 2;
    else
        p = msg;
    if (strncmp(p, "ignoring ", 9) == 0)
        p += 9;
    snprintf(w->line, sizeof w->line, "%s", p);
}

int off_pattern(const char *verb, const char *what, const char *spec, int events_only,
                struct fdr__rules **out)
{
    struct first_warning w = {{0}, 0};
    *out = NULL;
    struct fdr__rules *r = NULL;
    if (fdr__rules_parse(spec, what, keep_first, &w, &r) < 0)
        return cli_fail(1, verb, "out of memory");
    if (!w.n && events_only && fdr__rules_tunable_count(r))
        snprintf(w.line, sizeof w.line, "a tunable (NAME=VALUE) is not an event pattern"),
            w.n = 1;
    if (!w.n && events_only && fdr__rules_wants_help(r))
        snprintf(w.line, sizeof w.line, "'help' and 'list' are not event patterns"),
            w.n = 1;
    if (w.n) {
        fdr__rules_free(r);
        return cli_fail(2, verb, "bad pattern '%s' (%s): %s", spec, what, w.line);
    }
    *out = r;
    return 0;
}

int off_pattern_match(const struct fdr__rules *r, const char *provider, const char *event)
{
    int m = fdr__rules_match(r, provider, event);
    if (m >= 0)
        return m;
    int on = 0;
    return fdr__rules_count(r) == 0 ||
           (fdr__rules_rule(r, 0, NULL, NULL, &on) == 0 && !on);
}

int off_seconds(const char *s, uint64_t *ns)
{
    uint64_t sec = 0, frac = 0;
    int digits = 0, fd = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (sec > 10000000000ull)
            return -1;
        sec = sec * 10 + (uint64_t)(*s - '0');
    }
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, digits++)
            if (fd < 9)
                frac = frac * 10 + (uint64_t)(*s - '0'), fd++;
    if (*s || !digits)
        return -1;
    for (; fd < 9; fd++)
        frac *= 10;
    *ns = sec * 1000000000ull + frac;
    return 0;
}

int off_u32(const char *s, uint32_t *v)
{
    uint64_t x = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || x > 0xffffffffull)
            return -1;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    if (x > 0xffffffffull)
        return -1;
    *v = (uint32_t)x;
    return 0;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, min = 0x10000;
    else
        return 0;
    if (len > n)
        return 0;
    unsigned cp = c & (0x3f >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

void off_json_str(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t len = strnlen(str, n);
    fputc('"', f);
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
            i++;
        } else {
            size_t k = utf8_len(s + i, len - i);
            if (k == 0) {
                fputs("\\ufffd", f);
                i++;
            } else {
                fwrite(s + i, 1, k, f);
                i += k;
            }
        }
    }
    fputc('"', f);
}
