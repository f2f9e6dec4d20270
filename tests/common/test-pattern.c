/* SPDX-License-Identifier: MIT */
/* test-pattern.c - unit tests of the event-pattern language (lib/pattern.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/pattern.h"

/* ---- helpers ------------------------------------------------------------ */

#define MAX_WARN 8

struct warnings {
    size_t count;
    char *msg[MAX_WARN];
};

static void collect(void *ctx, const char *message)
{
    struct warnings *w = ctx;
    assert_non_null(message);
    assert_null(strchr(message, '\n'));
    assert_int_equal(strncmp(message, "fdr: ", 5), 0);
    if (w->count < MAX_WARN)
        w->msg[w->count] = strdup(message);
    w->count++;
}

static void warnings_clear(struct warnings *w)
{
    for (size_t i = 0; i < w->count && i < MAX_WARN; i++)
        free(w->msg[i]);
    memset(w, 0, sizeof(*w));
}

/* Parses spec with origin "T", collecting warnings into *w (cleared first). */
static struct fdr__rules *parse(const char *spec, struct warnings *w)
{
    struct fdr__rules *r = NULL;
    warnings_clear(w);
    assert_int_equal(fdr__rules_parse(spec, "T", collect, w, &r), 0);
    assert_non_null(r);
    return r;
}

/* Asserts spec gives exactly one warning equal to `expected`, and no rules. */
static void expect_one_warning(const char *spec, const char *expected)
{
    struct warnings w = {0};
    struct fdr__rules *r = parse(spec, &w);
    if (w.count != 1 || strcmp(w.msg[0], expected))
        fail_msg("spec \"%s\": %zu warnings, first \"%s\", wanted \"%s\"", spec, w.count,
                 w.count ? w.msg[0] : "", expected);
    assert_int_equal(fdr__rules_count(r), 0);
    assert_int_equal(fdr__rules_tunable_count(r), 0);
    assert_int_equal(fdr__rules_wants_help(r), 0);
    fdr__rules_free(r);
    warnings_clear(&w);
}

static char tmpdir[64];

static char *write_file(const char *name, const char *data, size_t len)
{
    char *path;
    assert_true(asprintf(&path, "%s/%s", tmpdir, name) > 0);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return path;
}

static int setup_dir(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/test-pattern-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd);
}

/* ---- globs -------------------------------------------------------------- */

static void test_glob_basic(void **state)
{
    (void)state;
    assert_true(fdr__glob_match("", ""));
    assert_false(fdr__glob_match("", "a"));
    assert_true(fdr__glob_match(NULL, NULL));
    assert_true(fdr__glob_match("*", ""));
    assert_true(fdr__glob_match("*", "anything_at_all"));
    assert_true(fdr__glob_match("**", ""));
    assert_true(fdr__glob_match("***", "abc"));
    assert_true(fdr__glob_match("abc", "abc"));
    assert_false(fdr__glob_match("abc", "abcd"));
    assert_false(fdr__glob_match("abcd", "abc"));
    assert_false(fdr__glob_match("abc", "ABC"));
    assert_true(fdr__glob_match("net_*", "net_"));
    assert_true(fdr__glob_match("net_*", "net_rx"));
    assert_false(fdr__glob_match("net_*", "net"));
    assert_true(fdr__glob_match("*_rx", "net_rx"));
    assert_false(fdr__glob_match("*_rx", "net_rx_done"));
    assert_true(fdr__glob_match("a*b*c", "abc"));
    assert_true(fdr__glob_match("a*b*c", "a_b_b_c_c"));
    assert_false(fdr__glob_match("a*b*c", "a_b_b_c_d"));
    assert_true(fdr__glob_match("*a*", "bab"));
    assert_true(fdr__glob_match("a**b", "ab"));
    assert_true(fdr__glob_match("*ab", "aab")); /* needs backtracking */
    assert_true(fdr__glob_match("*aab", "aaab"));
    assert_false(fdr__glob_match("*aab", "aaba"));
}

static void test_glob_question_and_classes(void **state)
{
    (void)state;
    assert_true(fdr__glob_match("?", "a"));
    assert_false(fdr__glob_match("?", ""));
    assert_false(fdr__glob_match("?", "ab"));
    assert_true(fdr__glob_match("??", "ab"));
    assert_true(fdr__glob_match("rx_?", "rx_1"));
    assert_true(fdr__glob_match("*?", "a"));
    assert_false(fdr__glob_match("*?", ""));
    assert_true(fdr__glob_match("?*?", "ab"));
    assert_false(fdr__glob_match("?*?", "a"));

    assert_true(fdr__glob_match("[abc]", "b"));
    assert_false(fdr__glob_match("[abc]", "d"));
    assert_false(fdr__glob_match("[abc]", ""));
    assert_false(fdr__glob_match("[abc]", "ab"));
    assert_true(fdr__glob_match("[a-z]x", "qx"));
    assert_false(fdr__glob_match("[a-z]x", "Qx"));
    assert_true(fdr__glob_match("[a-zA-Z0-9_]", "_"));
    assert_true(fdr__glob_match("[!x]", "y"));
    assert_false(fdr__glob_match("[!x]", "x"));
    assert_true(fdr__glob_match("[^x]", "y"));
    assert_false(fdr__glob_match("[^x]", "x"));
    assert_false(fdr__glob_match("[!x]", ""));
    assert_true(fdr__glob_match("*[0-9]", "rx7"));
    assert_false(fdr__glob_match("*[0-9]", "rx7a"));
    assert_true(fdr__glob_match("[]]", "]")); /* fnmatch: leading ']' is a member */
    assert_true(fdr__glob_match("[a-]", "-"));
    /* unterminated class: a literal '[' */
    assert_true(fdr__glob_match("[abc", "[abc"));
    assert_false(fdr__glob_match("[abc", "a"));
    assert_true(fdr__glob_match("*[", "x["));
    assert_true(fdr__glob_match("[", "["));
}

static void test_glob_no_blowup(void **state)
{
    (void)state;
    /* "a*a*a*...*b" against "aaaa...": exponential for naive recursion */
    static char glob[201], text[20001];
    for (int i = 0; i < 100; i++) {
        glob[2 * i] = 'a';
        glob[2 * i + 1] = '*';
    }
    glob[200] = '\0';
    glob[199] = 'b';
    memset(text, 'a', 20000);
    text[20000] = '\0';
    clock_t t0 = clock();
    assert_false(fdr__glob_match(glob, text));
    text[19999] = 'b';
    assert_true(fdr__glob_match(glob, text));
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
}

/* ---- rules -------------------------------------------------------------- */

static void test_empty_specs(void **state)
{
    (void)state;
    struct warnings w = {0};
    const char *specs[] = {NULL, "", " ", ",,;;\n\t", "  , ;\r\n"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(*specs); i++) {
        struct fdr__rules *r = parse(specs[i], &w);
        assert_int_equal(w.count, 0);
        assert_int_equal(fdr__rules_count(r), 0);
        assert_int_equal(fdr__rules_match(r, "net", "rx"), -1);
        fdr__rules_free(r);
    }
    assert_int_equal(fdr__rules_match(NULL, "net", "rx"), -1);
    assert_int_equal(fdr__rules_count(NULL), 0);
    assert_int_equal(fdr__rules_tunable_count(NULL), 0);
    assert_int_equal(fdr__rules_wants_help(NULL), 0);
    fdr__rules_free(NULL);
    assert_int_equal(fdr__rules_parse("x", "T", NULL, NULL, NULL), -EINVAL);
    struct fdr__rules *r = (void *)1;
    assert_int_equal(fdr__rules_parse_flags("x", "T", 0x100, NULL, NULL, &r), -EINVAL);
    assert_null(r);
}

static void test_last_wins(void **state)
{
    (void)state;
    struct warnings w = {0};
    struct fdr__rules *r = parse("net:*,-net:rx", &w);
    assert_int_equal(w.count, 0);
    assert_int_equal(fdr__rules_count(r), 2);
    assert_int_equal(fdr__rules_match(r, "net", "tx"), 1);
    assert_int_equal(fdr__rules_match(r, "net", "rx"), 0);
    assert_int_equal(fdr__rules_match(r, "disk", "rx"), -1);
    fdr__rules_free(r);

    /* the same rules in the other order: the broad rule wins */
    r = parse("-net:rx net:*", &w);
    assert_int_equal(fdr__rules_match(r, "net", "rx"), 1);
    fdr__rules_free(r);

    r = parse("*,-*,+net:rx", &w);
    assert_int_equal(fdr__rules_match(r, "net", "rx"), 1);
    assert_int_equal(fdr__rules_match(r, "net", "tx"), 0);
    assert_int_equal(fdr__rules_match(r, "x", "y"), 0);
    fdr__rules_free(r);

    r = parse("+net:rx;-net:rx", &w);
    assert_int_equal(fdr__rules_match(r, "net", "rx"), 0);
    fdr__rules_free(r);
}

static void test_colon_chains(void **state)
{
    (void)state;
    struct warnings w = {0};
    const char *same[] = {"net:*:-net:rx",  "net:*,-net:rx",  "net:*;-net:rx",
                          "net:*\n-net:rx", "net:*:-net:rx:", " net:* -net:rx "};
    for (size_t i = 0; i < sizeof(same) / sizeof(*same); i++) {
        struct fdr__rules *r = parse(same[i], &w);
        assert_int_equal(w.count, 0);
        assert_int_equal(fdr__rules_count(r), 2);
        assert_int_equal(fdr__rules_match(r, "net", "tx"), 1);
        assert_int_equal(fdr__rules_match(r, "net", "rx"), 0);
        fdr__rules_free(r);
    }
    struct fdr__rules *r = parse("a:b:c:d:e:f", &w);
    assert_int_equal(w.count, 0);
    assert_int_equal(fdr__rules_count(r), 3);
    assert_int_equal(fdr__rules_match(r, "e", "f"), 1);
    assert_int_equal(fdr__rules_match(r, "b", "c"), -1);
    fdr__rules_free(r);

    /* a bad pair inside a chain is dropped alone */
    r = parse("net:*:-net:[rx:disk:*", &w);
    assert_int_equal(w.count, 1);
    assert_string_equal(w.msg[0],
                        "fdr: T: ignoring malformed item \"-net:[rx\": unterminated '['");
    assert_int_equal(fdr__rules_count(r), 2);
    assert_int_equal(fdr__rules_match(r, "disk", "io"), 1);
    assert_int_equal(fdr__rules_match(r, "net", "rx"), 1);
    fdr__rules_free(r);
    warnings_clear(&w);
}

static void test_provider_vs_name(void **state)
{
    (void)state;
    struct warnings w = {0};
    struct fdr__rules *r = parse("virtio_*", &w);
    assert_int_equal(fdr__rules_match(r, "qemu", "virtio_queue_notify"), 1);
    assert_int_equal(fdr__rules_match(r, "other", "virtio_x"), 1);
    assert_int_equal(fdr__rules_match(r, NULL, "virtio_x"), 1);
    assert_int_equal(fdr__rules_match(r, "virtio_x", "rx"), -1); /* not the provider */
    assert_int_equal(fdr__rules_match(r, "qemu", "net_virtio_x"), -1);
    fdr__rules_free(r);

    r = parse("net:rx", &w);
    assert_int_equal(fdr__rules_match(r, "net", "rx"), 1);
    assert_int_equal(fdr__rules_match(r, "netx", "rx"), -1);
    assert_int_equal(fdr__rules_match(r, "rx", "net"), -1);
    assert_int_equal(fdr__rules_match(r, NULL, "rx"), -1);
    assert_int_equal(fdr__rules_match(r, "net", NULL), -1);
    fdr__rules_free(r);

    r = parse("n?t:[rt]x -*:tx", &w);
    assert_int_equal(fdr__rules_match(r, "nat", "rx"), 1);
    assert_int_equal(fdr__rules_match(r, "nat", "tx"), 0);
    assert_int_equal(fdr__rules_match(r, "nat", "xx"), -1);
    fdr__rules_free(r);

    /* a name-only rule does not see the provider; names matching nothing */
    r = parse("nothing_matches_this_zz", &w);
    assert_int_equal(w.count, 0);
    assert_int_equal(fdr__rules_count(r), 1);
    assert_int_equal(fdr__rules_match(r, "net", "rx"), -1);
    fdr__rules_free(r);

    /* empty provider/event names only match globs that match "" */
    r = parse("*:*", &w);
    assert_int_equal(fdr__rules_match(r, "", ""), 1);
    fdr__rules_free(r);
}

static void test_keywords(void **state)
{
    (void)state;
    struct warnings w = {0};
    struct fdr__rules *r = parse("all", &w);
    assert_int_equal(fdr__rules_match(r, "a", "b"), 1);
    fdr__rules_free(r);
    r = parse("all,none", &w);
    assert_int_equal(fdr__rules_match(r, "a", "b"), 0);
    fdr__rules_free(r);
    r = parse("none,+all", &w);
    assert_int_equal(fdr__rules_match(r, "a", "b"), 1);
    fdr__rules_free(r);
    r = parse("all -all", &w);
    assert_int_equal(fdr__rules_match(r, "a", "b"), 0);
    assert_int_equal(w.count, 0);
    fdr__rules_free(r);

    r = parse("net:*,help", &w);
    assert_int_equal(fdr__rules_wants_help(r), 1);
    assert_int_equal(fdr__rules_count(r), 1);
    fdr__rules_free(r);
    r = parse("list", &w);
    assert_int_equal(fdr__rules_wants_help(r), 1);
    assert_int_equal(fdr__rules_count(r), 0);
    fdr__rules_free(r);
    r = parse("helpx,xlist,*:help", &w);
    assert_int_equal(fdr__rules_wants_help(r), 0);
    assert_int_equal(fdr__rules_count(r), 3);
    assert_int_equal(fdr__rules_match(r, "p", "help"), 1);
    fdr__rules_free(r);
    warnings_clear(&w);

    expect_one_warning("-help",
                       "fdr: T: ignoring malformed item \"-help\": 'help' takes no sign");
    expect_one_warning("+none",
                       "fdr: T: ignoring malformed item \"+none\": 'none' takes no sign");
}

static void test_malformed(void **state)
{
    (void)state;
#define BAD(item, why) "fdr: T: ignoring malformed item \"" item "\": " why
    expect_one_warning("net:", BAD("net:", "empty event pattern"));
    expect_one_warning(":rx", BAD(":rx", "empty provider pattern"));
    expect_one_warning(":", BAD(":", "empty provider pattern"));
    expect_one_warning("-", BAD("-", "empty pattern"));
    expect_one_warning("+", BAD("+", "empty pattern"));
    expect_one_warning("-:x", BAD("-:x", "empty provider pattern"));
    expect_one_warning("a:b:c", BAD("a:b:c", "cannot split into provider:event items"));
    expect_one_warning("net::rx",
                       BAD("net::rx", "cannot split into provider:event items"));
    expect_one_warning("net:[rx", BAD("net:[rx", "unterminated '['"));
    expect_one_warning("[abc", BAD("[abc", "unterminated '['"));
    expect_one_warning("[!", BAD("[!", "unterminated '['"));
    expect_one_warning("[]", BAD("[]", "empty '[]'"));
    expect_one_warning("x[!]", BAD("x[!]", "empty '[]'"));
    expect_one_warning("[z-a]", BAD("[z-a]", "reversed range 'z-a'"));
    expect_one_warning("[a-]", BAD("[a-]", "invalid character '-'"));
    expect_one_warning("[a.b]", BAD("[a.b]", "invalid character '.'"));
    expect_one_warning("net:r-x", BAD("net:r-x", "invalid character '-'"));
    expect_one_warning("net:-rx", BAD("net:-rx", "invalid character '-'"));
    expect_one_warning("--x", BAD("--x", "invalid character '-'"));
    expect_one_warning("net.rx", BAD("net.rx", "invalid character '.'"));
    expect_one_warning("rx]", BAD("rx]", "invalid character ']'"));
    expect_one_warning("!rx", BAD("!rx", "invalid character '!'"));
    expect_one_warning("r\"x", BAD("r\\\"x", "invalid character '\"'"));
    expect_one_warning("r'x", BAD("r'x", "invalid character '\\x27'"));
    expect_one_warning("r\\x", BAD("r\\\\x", "invalid character '\\x5c'"));
    expect_one_warning("r\x01x", BAD("r\\x01x", "invalid character '\\x01'"));
    expect_one_warning("\xc3\xa9t\xc3\xa9",
                       BAD("\\xc3\\xa9t\\xc3\\xa9", "invalid character '\\xc3'"));
    expect_one_warning("net:rx@", BAD("net:rx@", "invalid character '@'"));
    expect_one_warning("net:x=1", BAD("net:x=1", "invalid character '='"));
#undef BAD

    /* whitespace separates, so "net:r x" is two good items */
    struct warnings w = {0};
    struct fdr__rules *r = parse("net:r x", &w);
    assert_int_equal(w.count, 0);
    assert_int_equal(fdr__rules_count(r), 2);
    fdr__rules_free(r);

    /* the rest of the spec still applies, one warning per bad item */
    r = parse("net:*, :rx, -net:rx, a:b:c, [x, disk:io", &w);
    assert_int_equal(w.count, 3);
    assert_string_equal(
        w.msg[0], "fdr: T: ignoring malformed item \":rx\": empty provider pattern");
    assert_string_equal(w.msg[2],
                        "fdr: T: ignoring malformed item \"[x\": unterminated '['");
    assert_int_equal(fdr__rules_count(r), 3);
    assert_int_equal(fdr__rules_match(r, "net", "tx"), 1);
    assert_int_equal(fdr__rules_match(r, "net", "rx"), 0);
    assert_int_equal(fdr__rules_match(r, "disk", "io"), 1);
    fdr__rules_free(r);

    /* NULL warn callback and NULL origin */
    r = NULL;
    assert_int_equal(fdr__rules_parse("bad:[ x", NULL, NULL, NULL, &r), 0);
    assert_int_equal(fdr__rules_count(r), 1);
    fdr__rules_free(r);
    r = NULL;
    warnings_clear(&w);
    assert_int_equal(fdr__rules_parse("a:b:c", NULL, collect, &w, &r), 0);
    assert_string_equal(w.msg[0],
                        "fdr: spec: ignoring malformed item \"a:b:c\": cannot split into "
                        "provider:event items");
    fdr__rules_free(r);
    warnings_clear(&w);
}

static void test_long_items(void **state)
{
    (void)state;
    struct warnings w = {0};
    char item[300];
    memset(item, 'a', sizeof(item));
    item[255] = '\0'; /* exactly the limit: fine */
    struct fdr__rules *r = parse(item, &w);
    assert_int_equal(w.count, 0);
    assert_int_equal(fdr__rules_count(r), 1);
    fdr__rules_free(r);

    item[255] = 'a';
    item[256] = '\0';
    r = parse(item, &w);
    assert_int_equal(w.count, 1);
    char want[200];
    snprintf(want, sizeof(want),
             "fdr: T: ignoring malformed item \"%.80s...\": longer than 255 bytes", item);
    assert_string_equal(w.msg[0], want);
    assert_int_equal(fdr__rules_count(r), 0);
    fdr__rules_free(r);
    warnings_clear(&w);
}

static void test_megabyte_inputs(void **state)
{
    (void)state;
    enum { MB = 1 << 20 };
    char *s = malloc(MB + 1);
    assert_non_null(s);
    struct warnings w = {0};
    struct fdr__rules *r;

    /* many good items */
    for (size_t i = 0; i < MB; i += 2) {
        s[i] = i % 4 ? 'b' : 'a';
        s[i + 1] = ',';
    }
    s[MB] = '\0';
    r = parse(s, &w);
    assert_int_equal(w.count, 0);
    assert_int_equal(fdr__rules_count(r), MB / 2);
    assert_int_equal(fdr__rules_match(r, "p", "b"), 1);
    fdr__rules_free(r);

    /* single huge tokens of each kind: one warning each (a run of ':' is a
     * chain of ":" items, each one bad) */
    const char fills[] = {'a', '*', '[', ':', '=', '-', '@', '#', '\x01'};
    for (size_t f = 0; f < sizeof(fills); f++) {
        memset(s, fills[f], MB);
        s[MB] = '\0';
        r = parse(s, &w);
        assert_int_equal(w.count, fills[f] == ':' ? MB / 2 : 1);
        assert_int_equal(fdr__rules_count(r), 0);
        fdr__rules_free(r);
    }

    /* one long chain of short pairs */
    for (size_t i = 0; i < MB; i += 4)
        memcpy(s + i, "a:b:", 4);
    r = parse(s, &w);
    assert_int_equal(w.count, 0);
    assert_int_equal(fdr__rules_count(r), MB / 4);
    fdr__rules_free(r);

    /* many bad items: one warning per item */
    for (size_t i = 0; i < MB; i += 2)
        memcpy(s + i, "[ ", 2);
    r = parse(s, &w);
    assert_int_equal(w.count, MB / 2);
    fdr__rules_free(r);

    /* NUL ends the spec */
    memset(s, 'a', MB);
    memcpy(s, "net:rx\0[bad", 11);
    r = parse(s, &w);
    assert_int_equal(w.count, 0);
    assert_int_equal(fdr__rules_count(r), 1);
    fdr__rules_free(r);

    warnings_clear(&w);
    free(s);
}

/* ---- tunables ----------------------------------------------------------- */

static void test_parse_number(void **state)
{
    (void)state;
    double d = 0;
    long long ll = 0;
    int is_int = -1;
    assert_int_equal(fdr__parse_number("0", &d, &ll, &is_int), 0);
    assert_int_equal(ll, 0);
    assert_int_equal(is_int, 1);
    assert_int_equal(fdr__parse_number("-42", &d, &ll, &is_int), 0);
    assert_int_equal(ll, -42);
    assert_true(d == -42.0);
    assert_int_equal(fdr__parse_number("+7", NULL, &ll, NULL), 0);
    assert_int_equal(ll, 7);
    assert_int_equal(fdr__parse_number("010", NULL, &ll, NULL),
                     0); /* decimal, not octal */
    assert_int_equal(ll, 10);
    assert_int_equal(fdr__parse_number("0x1F", &d, &ll, &is_int), 0);
    assert_int_equal(ll, 31);
    assert_int_equal(is_int, 1);
    assert_int_equal(fdr__parse_number("-0Xff", NULL, &ll, NULL), 0);
    assert_int_equal(ll, -255);
    assert_int_equal(fdr__parse_number("9223372036854775807", NULL, &ll, NULL), 0);
    assert_true(ll == LLONG_MAX);
    assert_int_equal(fdr__parse_number("-9223372036854775808", NULL, &ll, NULL), 0);
    assert_true(ll == LLONG_MIN);
    assert_int_equal(fdr__parse_number("0x7fffffffffffffff", NULL, &ll, NULL), 0);
    assert_true(ll == LLONG_MAX);
    assert_int_equal(fdr__parse_number("-0x8000000000000000", NULL, &ll, NULL), 0);
    assert_true(ll == LLONG_MIN);

    assert_int_equal(fdr__parse_number("1.5e3", &d, &ll, &is_int), 0);
    assert_true(d == 1500.0);
    assert_int_equal(ll, 1500);
    assert_int_equal(is_int, 0);
    assert_int_equal(fdr__parse_number("-2.75", &d, &ll, NULL), 0);
    assert_true(d == -2.75);
    assert_int_equal(ll, -2);
    assert_int_equal(fdr__parse_number(".5", &d, NULL, NULL), 0);
    assert_true(d == 0.5);
    assert_int_equal(fdr__parse_number("5.", &d, NULL, NULL), 0);
    assert_true(d == 5.0);
    assert_int_equal(fdr__parse_number("1E-2", &d, NULL, NULL), 0);
    assert_true(d == 0.01);
    assert_int_equal(fdr__parse_number("1e+2", &d, NULL, &is_int), 0);
    assert_true(d == 100.0);
    assert_int_equal(is_int, 0);
    assert_int_equal(fdr__parse_number("1e30", &d, &ll, NULL), 0);
    assert_true(ll == LLONG_MAX);
    assert_int_equal(fdr__parse_number("-1e30", &d, &ll, NULL), 0);
    assert_true(ll == LLONG_MIN);
    assert_int_equal(fdr__parse_number("1e-400", &d, NULL, NULL), 0); /* underflow: ~0 */

    const char *bad[] = {"",    "-",     "+",   "x",   "1x",    "0x",    "0xg", "1 ",
                         " 1",  "1.2.3", "e5",  "1e",  "1e+",   ".",     "-.",  "inf",
                         "nan", "0x1p3", "1,5", "--1", "1_000", "0b101", "١"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        ll = 12345;
        if (fdr__parse_number(bad[i], &d, &ll, &is_int) != -EINVAL)
            fail_msg("\"%s\" accepted", bad[i]);
        assert_int_equal(ll, 12345); /* outputs unchanged on error */
    }
    assert_int_equal(fdr__parse_number(NULL, &d, &ll, &is_int), -EINVAL);
    assert_int_equal(fdr__parse_number("9223372036854775808", &d, &ll, &is_int), -ERANGE);
    assert_int_equal(fdr__parse_number("-9223372036854775809", &d, &ll, &is_int),
                     -ERANGE);
    assert_int_equal(fdr__parse_number("99999999999999999999999", NULL, NULL, NULL),
                     -ERANGE);
    assert_int_equal(fdr__parse_number("0x8000000000000000", NULL, NULL, NULL), -ERANGE);
    assert_int_equal(fdr__parse_number("0x10000000000000000", NULL, NULL, NULL), -ERANGE);
    assert_int_equal(fdr__parse_number("1e999", NULL, NULL, NULL), -ERANGE);
    assert_int_equal(fdr__parse_number("-1e999", NULL, NULL, NULL), -ERANGE);
}

static void test_parse_number_locale(void **state)
{
    (void)state;
    /* a locale whose decimal point is ',' must not change the syntax */
    if (!setlocale(LC_NUMERIC, "de_DE.UTF-8")) {
        /* not installed: build one in our temporary directory if we can */
        char cmd[256];
        snprintf(cmd, sizeof(cmd),
                 "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1", tmpdir);
        if (system(cmd) != 0 || setenv("LOCPATH", tmpdir, 1) ||
            !setlocale(LC_NUMERIC, "de_DE.UTF-8"))
            skip();
    }
    assert_string_equal(localeconv()->decimal_point, ",");
    double d = 0;
    int rc = fdr__parse_number("1.5", &d, NULL, NULL);
    setlocale(LC_NUMERIC, "C");
    assert_int_equal(rc, 0);
    assert_true(d == 1.5);
}

static void test_tunables(void **state)
{
    (void)state;
    struct warnings w = {0};
    struct fdr__rules *r =
        parse("ring_kb=64 net:* rate=1.5e3,off=-3;mask=0xff ring_kb=0", &w);
    assert_int_equal(w.count, 0);
    assert_int_equal(fdr__rules_count(r), 1);
    assert_int_equal(fdr__rules_tunable_count(r), 5);
    const char *name, *value;
    double d;
    long long ll;
    int is_int;
    static const struct {
        const char *name, *value;
        long long ll;
        int is_int;
    } want[] = {{"ring_kb", "64", 64, 1},
                {"rate", "1.5e3", 1500, 0},
                {"off", "-3", -3, 1},
                {"mask", "0xff", 255, 1},
                {"ring_kb", "0", 0, 1}};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(fdr__rules_tunable(r, i, &name, &value), 0);
        assert_string_equal(name, want[i].name);
        assert_string_equal(value, want[i].value);
        assert_int_equal(fdr__rules_tunable_number(r, i, &d, &ll, &is_int), 0);
        assert_int_equal(ll, want[i].ll);
        assert_int_equal(is_int, want[i].is_int);
    }
    assert_int_equal(fdr__rules_tunable_number(r, 1, &d, NULL, NULL), 0);
    assert_true(d == 1500.0);
    assert_int_equal(fdr__rules_tunable(r, 5, &name, &value), -EINVAL);
    assert_int_equal(fdr__rules_tunable(NULL, 0, &name, &value), -EINVAL);
    assert_int_equal(fdr__rules_tunable(r, 0, NULL, NULL), 0);
    assert_int_equal(fdr__rules_tunable_number(r, 9, &d, &ll, &is_int), -EINVAL);
    fdr__rules_free(r);
    warnings_clear(&w);

#define BAD(item, why) "fdr: T: ignoring malformed item \"" item "\": " why
    expect_one_warning("x=", BAD("x=", "empty value"));
    expect_one_warning("=5", BAD("=5", "empty tunable name"));
    expect_one_warning("=", BAD("=", "empty tunable name"));
    expect_one_warning("x=abc", BAD("x=abc", "invalid number"));
    expect_one_warning("x=1=2", BAD("x=1=2", "invalid number"));
    expect_one_warning("x=12k", BAD("x=12k", "invalid number"));
    expect_one_warning("x=0x", BAD("x=0x", "invalid number"));
    expect_one_warning("x=1e999", BAD("x=1e999", "number out of range"));
    expect_one_warning("x=99999999999999999999",
                       BAD("x=99999999999999999999", "number out of range"));
    expect_one_warning("a-b=5", BAD("a-b=5", "invalid character '-' in tunable name"));
    expect_one_warning("-x=5", BAD("-x=5", "invalid character '-' in tunable name"));
    expect_one_warning("x*=5", BAD("x*=5", "invalid character '*' in tunable name"));
#undef BAD
}

/* ---- files -------------------------------------------------------------- */

static void test_files(void **state)
{
    (void)state;
    struct warnings w = {0};
    const char inner[] = "# inner file\n-net:rx   # not rx\nlevel=3\n";
    char *inner_path = write_file("inner.conf", inner, sizeof(inner) - 1);
    const char outer[] = "net:* # all of net\n"
                         "\n"
                         "@inner.conf\n" /* relative to this file's directory */
                         "disk:io,#comment;with,separators\n"
                         "help";
    char *outer_path = write_file("outer.conf", outer, sizeof(outer) - 1);

    char *spec;
    assert_true(asprintf(&spec, "-disk:* @%s tail:*", outer_path) > 0);
    struct fdr__rules *r = parse(spec, &w);
    assert_int_equal(w.count, 0);
    assert_int_equal(fdr__rules_count(r), 5);
    assert_int_equal(fdr__rules_match(r, "net", "tx"), 1);
    assert_int_equal(fdr__rules_match(r, "net", "rx"), 0);
    assert_int_equal(fdr__rules_match(r, "disk", "io"), 1);
    assert_int_equal(fdr__rules_match(r, "disk", "x"), 0);
    assert_int_equal(fdr__rules_match(r, "tail", "x"), 1);
    assert_int_equal(fdr__rules_wants_help(r), 1);
    assert_int_equal(fdr__rules_tunable_count(r), 1);
    fdr__rules_free(r);
    free(spec);

    /* a bad item in a file: the warning gives file and line */
    const char bad[] = "net:*\n\n  net:[rx # broken\nx=y";
    char *bad_path = write_file("bad.conf", bad, sizeof(bad) - 1);
    assert_true(asprintf(&spec, "@%s", bad_path) > 0);
    r = parse(spec, &w);
    assert_int_equal(w.count, 2);
    char *want;
    assert_true(asprintf(&want,
                         "fdr: T: %s:3: ignoring malformed item \"net:[rx\": "
                         "unterminated '['",
                         bad_path) > 0);
    assert_string_equal(w.msg[0], want);
    free(want);
    assert_true(asprintf(&want,
                         "fdr: T: %s:4: ignoring malformed item \"x=y\": "
                         "invalid number",
                         bad_path) > 0);
    assert_string_equal(w.msg[1], want);
    free(want);
    assert_int_equal(fdr__rules_count(r), 1);
    fdr__rules_free(r);
    free(spec);

    /* NUL bytes in a file are bad characters, not the end of the file */
    const char nul[] = "a\0b c";
    char *nul_path = write_file("nul.conf", nul, sizeof(nul) - 1);
    assert_true(asprintf(&spec, "@%s", nul_path) > 0);
    r = parse(spec, &w);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.msg[0], ":1: ignoring malformed item \"a\\x00b\": invalid "
                                     "character '\\x00'"));
    assert_int_equal(fdr__rules_count(r), 1);
    assert_int_equal(fdr__rules_match(r, "p", "c"), 1);
    fdr__rules_free(r);
    free(spec);

    /* '#' is not a comment outside files */
    expect_one_warning("#x",
                       "fdr: T: ignoring malformed item \"#x\": invalid character '#'");

    free(inner_path);
    free(outer_path);
    free(bad_path);
    free(nul_path);
    warnings_clear(&w);
}

static void test_file_errors(void **state)
{
    (void)state;
    struct warnings w = {0};
    char *spec, *want;

    assert_true(asprintf(&spec, "net:* @%s/missing.conf disk:*", tmpdir) > 0);
    struct fdr__rules *r = parse(spec, &w);
    assert_int_equal(w.count, 1);
    assert_true(asprintf(&want,
                         "fdr: T: ignoring \"@%s/missing.conf\": No such file or "
                         "directory",
                         tmpdir) > 0);
    assert_string_equal(w.msg[0], want);
    assert_int_equal(fdr__rules_count(r), 2);
    fdr__rules_free(r);
    free(spec);
    free(want);

    expect_one_warning("@", "fdr: T: ignoring \"@\": empty file name");

    /* a directory is not a regular file */
    assert_true(asprintf(&spec, "@%s", tmpdir) > 0);
    r = parse(spec, &w);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.msg[0], "\": not a regular file"));
    fdr__rules_free(r);
    free(spec);

    /* include loop: a file including itself */
    char *self = write_file("self.conf", "a @self.conf b", 14);
    assert_true(asprintf(&spec, "@%s", self) > 0);
    r = parse(spec, &w);
    assert_int_equal(w.count, 1);
    assert_true(
        asprintf(&want, "fdr: T: %s:1: ignoring \"@self.conf\": include loop", self) > 0);
    assert_string_equal(w.msg[0], want);
    assert_int_equal(fdr__rules_count(r), 2);
    fdr__rules_free(r);
    free(spec);
    free(want);
    free(self);

    /* depth: d1 -> d2 -> d3 -> d4 -> d5; d5 is one file too deep */
    for (int i = 1; i <= 5; i++) {
        char name[16], data[32];
        snprintf(name, sizeof(name), "d%d.conf", i);
        int n = snprintf(data, sizeof(data), "lvl%d @d%d.conf", i, i + 1);
        free(write_file(name, data, (size_t)n));
    }
    assert_true(asprintf(&spec, "@%s/d1.conf", tmpdir) > 0);
    r = parse(spec, &w);
    assert_int_equal(w.count, 1);
    assert_true(asprintf(&want,
                         "fdr: T: %s/d4.conf:1: ignoring \"@d5.conf\": files nested "
                         "more than 4 deep",
                         tmpdir) > 0);
    assert_string_equal(w.msg[0], want);
    assert_int_equal(fdr__rules_count(r), 4);
    assert_int_equal(fdr__rules_match(r, "p", "lvl4"), 1);
    assert_int_equal(fdr__rules_match(r, "p", "lvl5"), -1);
    fdr__rules_free(r);
    free(spec);
    free(want);

    /* fan-out: a file included many times is read at most 64 times */
    char *leaf = write_file("leaf.conf", "x", 1);
    char *big = malloc(100 * (strlen(leaf) + 2) + 1);
    big[0] = '\0';
    for (int i = 0; i < 100; i++) {
        strcat(big, "@");
        strcat(big, leaf);
        strcat(big, " ");
    }
    r = parse(big, &w);
    assert_int_equal(w.count, 100 - 64);
    assert_non_null(strstr(w.msg[0], "\": more than 64 files"));
    assert_int_equal(fdr__rules_count(r), 64);
    fdr__rules_free(r);
    free(big);

    /* files can be refused */
    warnings_clear(&w);
    assert_true(asprintf(&spec, "@%s net:*", leaf) > 0);
    r = NULL;
    assert_int_equal(
        fdr__rules_parse_flags(spec, "T", FDR__RULES_NO_FILES, collect, &w, &r), 0);
    assert_int_equal(fdr__rules_count(r), 1);
    assert_non_null(strstr(w.msg[w.count - 1], "\": files are not read here"));
    fdr__rules_free(r);
    free(spec);
    free(leaf);
    warnings_clear(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glob_basic),
        cmocka_unit_test(test_glob_question_and_classes),
        cmocka_unit_test(test_glob_no_blowup),
        cmocka_unit_test(test_empty_specs),
        cmocka_unit_test(test_last_wins),
        cmocka_unit_test(test_colon_chains),
        cmocka_unit_test(test_provider_vs_name),
        cmocka_unit_test(test_keywords),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_long_items),
        cmocka_unit_test(test_megabyte_inputs),
        cmocka_unit_test(test_parse_number),
        cmocka_unit_test(test_parse_number_locale),
        cmocka_unit_test(test_tunables),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_file_errors),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
