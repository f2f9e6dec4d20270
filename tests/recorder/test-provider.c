/* SPDX-License-Identifier: MIT */
/* test-provider.c - providers: identity, conflicts, reference counts, bad
 * input, and the return codes of fdr_raw_event() (the payloads as read by
 * babeltrace2 are checked by test-provider-raw.py).
 *
 * Every warning fdr writes goes to fd 2, which each check redirects to a
 * temporary file so that the message itself is checked: one line, naming
 * what is wrong. No FDR_OUTPUT: events stay in memory, which is enough for
 * return codes. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fdr/fdr.h>

#include "check.h"

/* ---- stderr capture ------------------------------------------------------ */

static int saved_stderr = -1;
static FILE *cap;
static char captured[8192];

static void capture_begin(void)
{
    fflush(stderr);
    cap = tmpfile();
    saved_stderr = dup(2);
    dup2(fileno(cap), 2);
}

/* Stops capturing; returns what was written (also in `captured`). */
static const char *capture_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    rewind(cap);
    size_t n = fread(captured, 1, sizeof captured - 1, cap);
    captured[n] = 0;
    fclose(cap);
    return captured;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Runs a registration expected to fail with `want`, and checks that exactly
 * one line was written, containing `needle`. */
static void expect_refused(const fdr_provider_desc_t *d, int want, const char *needle,
                           int line)
{
    fdr_provider_t *h = (fdr_provider_t *)&check_failures; /* must stay unchanged */
    capture_begin();
    int r = fdr_provider_register(d, &h);
    const char *err = capture_end();
    if (r != want || h != (fdr_provider_t *)&check_failures || count_lines(err) != 1 ||
        strncmp(err, "fdr: ", 5) != 0 || !strstr(err, needle)) {
        CHECK_MSG(0, "line %d: got %d (%s), want %d; stderr: %s", line, r,
                  fdr_strerror(r), want, err[0] ? err : "(nothing)\n");
    }
}
#define EXPECT_REFUSED(d, want, needle) expect_refused(d, want, needle, __LINE__)

/* ---- tests --------------------------------------------------------------- */

static void test_identity(void)
{
    fdr_provider_desc_t d = FDR_PROVIDER_DESC_INIT("ident", 3, 42);
    fdr_provider_t *a = NULL, *b = NULL, *c = NULL;
    CHECK_ERR(fdr_provider_register(&d, &a), 0);
    CHECK(a != NULL);
    /* A copy of the description, with its own copy of the name. */
    char name[] = "ident";
    fdr_provider_desc_t d2 = d;
    d2.name = name;
    CHECK_ERR(fdr_provider_register(&d2, &b), 0);
    CHECK(a == b);
    fdr_provider_desc_t other = FDR_PROVIDER_DESC_INIT("ident2", 3, 42);
    CHECK_ERR(fdr_provider_register(&other, &c), 0);
    CHECK(c != a);
    CHECK(d.sizeof_int == sizeof(int) && d.sizeof_long == sizeof(long) &&
          d.sizeof_pointer == sizeof(void *) && d.sizeof_size_t == sizeof(size_t) &&
          d.size == sizeof(fdr_provider_desc_t) && d.alignment == _Alignof(long long));
    CHECK_ERR(fdr_provider_unregister(a), 0);
    CHECK_ERR(fdr_provider_unregister(b), 0);
    CHECK_ERR(fdr_provider_unregister(c), 0);
}

static void test_conflict(void)
{
    fdr_provider_desc_t d = FDR_PROVIDER_DESC_INIT("conf", 4, 0x1234);
    fdr_provider_t *h = NULL;
    CHECK_ERR(fdr_provider_register(&d, &h), 0);
    struct {
        const char *field;
        fdr_provider_desc_t d;
    } cases[9];
    int n = 0;
#define CASE(fieldname, value)                                                           \
    cases[n].field = #fieldname;                                                         \
    cases[n].d = d;                                                                      \
    cases[n].d.fieldname = (value);                                                      \
    n++;
    CASE(size, d.size + 8)
    CASE(nevents, 5)
    CASE(checksum, 0x1235)
    CASE(alignment, d.alignment == 4 ? 8 : 4)
    CASE(alignment, 0)
    CASE(sizeof_int, 8)
    CASE(sizeof_long, d.sizeof_long == 4 ? 8 : 4)
    CASE(sizeof_pointer, d.sizeof_pointer == 4 ? 8 : 4)
    CASE(sizeof_size_t, d.sizeof_size_t == 4 ? 8 : 4)
#undef CASE
    for (int i = 0; i < n; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "with %s ", cases[i].field);
        EXPECT_REFUSED(&cases[i].d, -EEXIST, needle);
    }
    CHECK(strcmp(fdr_strerror(-EEXIST), "already exists with different properties") == 0);
    /* The original is unchanged: the same description still matches. */
    fdr_provider_t *again = NULL;
    CHECK_ERR(fdr_provider_register(&d, &again), 0);
    CHECK(again == h);
    CHECK_ERR(fdr_provider_unregister(h), 0);
    CHECK_ERR(fdr_provider_unregister(h), 0);
}

static void test_refcount(void)
{
    fdr_provider_desc_t d = FDR_PROVIDER_DESC_INIT("refs", 2, 7);
    fdr_provider_t *a = NULL, *b = NULL;
    CHECK_ERR(fdr_provider_register(&d, &a), 0);
    CHECK_ERR(fdr_provider_register(&d, &b), 0);
    CHECK(a == b);
    CHECK_ERR(fdr_provider_unregister(a), 0);
    /* One reference left: still registered, still the same. */
    CHECK_ERR(fdr_raw_event(b, 1, "x", 1), 0);
    fdr_provider_desc_t changed = d;
    changed.checksum = 8;
    EXPECT_REFUSED(&changed, -EEXIST, "checksum 7 (0x7), not 8 (0x8)");
    CHECK_ERR(fdr_provider_unregister(b), 0);
    /* Freed: the handle is dead, and the name is free for another
     * description. */
    CHECK_ERR(fdr_raw_event(b, 1, "x", 1), -EINVAL);
    capture_begin();
    CHECK_ERR(fdr_provider_unregister(b), -EINVAL);
    CHECK(strstr(capture_end(), "is not a registered provider") != NULL);
    fdr_provider_t *c = NULL;
    CHECK_ERR(fdr_provider_register(&changed, &c), 0);
    CHECK_ERR(fdr_raw_event(c, 1, "y", 1), 0);
    CHECK_ERR(fdr_provider_unregister(c), 0);
    /* Re-registering the first description after a free works too. */
    CHECK_ERR(fdr_provider_register(&d, &a), 0);
    CHECK_ERR(fdr_raw_event(a, 0, NULL, 0), 0);
    CHECK_ERR(fdr_provider_unregister(a), 0);
}

static void test_table_full(void)
{
    static fdr_provider_t *h[FDR_PROVIDER_MAX];
    char names[FDR_PROVIDER_MAX][16];
    int ok = 1;
    for (int i = 0; i < FDR_PROVIDER_MAX; i++) {
        snprintf(names[i], sizeof names[i], "full%d", i);
        fdr_provider_desc_t d = FDR_PROVIDER_DESC_INIT(names[i], 1, 0);
        ok &= fdr_provider_register(&d, &h[i]) == 0;
    }
    CHECK(ok);
    fdr_provider_desc_t one = FDR_PROVIDER_DESC_INIT("onemore", 1, 0);
    EXPECT_REFUSED(&one, -ENOSPC, "256 providers are registered already");
    /* An existing one is still found when the table is full. */
    fdr_provider_desc_t d0 = FDR_PROVIDER_DESC_INIT(names[0], 1, 0);
    fdr_provider_t *again = NULL;
    CHECK_ERR(fdr_provider_register(&d0, &again), 0);
    CHECK(again == h[0]);
    CHECK_ERR(fdr_provider_unregister(again), 0);
    for (int i = 0; i < FDR_PROVIDER_MAX; i++)
        ok &= fdr_provider_unregister(h[i]) == 0;
    CHECK(ok);
    fdr_provider_t *x = NULL;
    CHECK_ERR(fdr_provider_register(&one, &x), 0);
    CHECK_ERR(fdr_provider_unregister(x), 0);
}

static void test_bad_input(void)
{
    fdr_provider_t *h = NULL;
    fdr_provider_desc_t good = FDR_PROVIDER_DESC_INIT("good", 1, 0);
    capture_begin();
    CHECK_ERR(fdr_provider_register(NULL, &h), -EINVAL);
    CHECK(strstr(capture_end(), "desc is NULL") != NULL);
    capture_begin();
    CHECK_ERR(fdr_provider_register(&good, NULL), -EINVAL);
    CHECK(strstr(capture_end(), "out is NULL") != NULL);

    fdr_provider_desc_t d;
#define BAD(field, value, needle)                                                        \
    d = good;                                                                            \
    d.field = (value);                                                                   \
    EXPECT_REFUSED(&d, -EINVAL, needle);
    BAD(size, 0, "desc->size is 0")
    BAD(size, sizeof(fdr_provider_desc_t) - 4, "FDR_PROVIDER_DESC_INIT")
    BAD(name, NULL, "name is NULL")
    BAD(name, "", "name is empty")
    BAD(name, "0123456789012345678901234567890123456789012345678901234567890123",
        "is longer than 63 bytes")
    BAD(name, "net:rx", "is not an identifier")
    BAD(name, "9net", "is not an identifier")
    BAD(name, "a b", "is not an identifier")
    BAD(nevents, 0, "nevents is 0")
    BAD(nevents, FDR_PROVIDER_EVENTS_MAX + 1, "nevents is 65536")
    BAD(alignment, 3, "alignment is 3")
    BAD(alignment, 32, "alignment is 32")
    BAD(sizeof_int, 0, "sizeof_int is 0")
    BAD(sizeof_long, 3, "sizeof_long is 3")
    BAD(sizeof_pointer, 32, "sizeof_pointer is 32")
    BAD(sizeof_size_t, 6, "sizeof_size_t is 6")
#undef BAD
    /* The limits themselves are fine. */
    d = good;
    d.name = "_23456789012345678901234567890123456789012345678901234567890123";
    d.nevents = FDR_PROVIDER_EVENTS_MAX;
    d.alignment = 0;
    CHECK_ERR(fdr_provider_register(&d, &h), 0);
    CHECK_ERR(fdr_raw_event(h, FDR_PROVIDER_EVENTS_MAX - 1, "z", 1), 0);
    CHECK_ERR(fdr_raw_event(h, FDR_PROVIDER_EVENTS_MAX, "z", 1), -EINVAL);
    CHECK_ERR(fdr_provider_unregister(h), 0);

    /* Handles that are not providers. */
    CHECK_ERR(fdr_raw_event(NULL, 0, "z", 1), -EINVAL);
    CHECK_ERR(fdr_raw_event((fdr_provider_t *)&d, 0, "z", 1), -EINVAL);
    capture_begin();
    CHECK_ERR(fdr_provider_unregister(NULL), -EINVAL);
    CHECK(count_lines(capture_end()) == 1);
}

struct seen {
    int listed, recorded;
};

static void list_cb(void *arg, const fdr_event_info_t *e)
{
    struct seen *s = arg;
    if (strcmp(e->provider, "codes") == 0 && strcmp(e->event, "event_1") == 0) {
        s->listed++;
        s->recorded = e->recorded;
    }
}

static void test_raw_codes(void)
{
    fdr_provider_desc_t d = FDR_PROVIDER_DESC_INIT("codes", 3, 1);
    fdr_provider_t *p = NULL;
    CHECK_ERR(fdr_provider_register(&d, &p), 0);
    size_t max = fdr_raw_event_max();
    CHECK(max > 60000 && max < 65536); /* default packets of 64 KiB */
    char *big = calloc(1, max + 1);
    CHECK_ERR(fdr_raw_event(p, 0, big, max), 0);
    CHECK_ERR(fdr_raw_event(p, 0, big, max + 1), -E2BIG);
    CHECK_ERR(fdr_raw_event(p, 0, big, (size_t)-1), -E2BIG);
    free(big);
    CHECK_ERR(fdr_raw_event(p, 3, "a", 1), -EINVAL);
    CHECK_ERR(fdr_raw_event(p, 0, NULL, 1), -EINVAL);

    /* The recording rules apply to "<provider>:event_<id>". */
    CHECK_ERR(fdr_raw_event(p, 1, "a", 1), 0);
    CHECK_ERR(fdr_record_set("-codes:event_1"), 0);
    CHECK_ERR(fdr_raw_event(p, 1, "a", 1), -ENODATA);
    CHECK_ERR(fdr_raw_event(p, 2, "a", 1), 0);
    struct seen s = {0, -1};
    CHECK_ERR(fdr_event_list(list_cb, &s), 0);
    CHECK(s.listed == 1 && s.recorded == 0);
    CHECK_ERR(fdr_record_set("codes:event_2"), 0); /* only that one */
    CHECK_ERR(fdr_raw_event(p, 0, "a", 1), -ENODATA);
    CHECK_ERR(fdr_raw_event(p, 2, "a", 1), 0);
    CHECK_ERR(fdr_record_set(""), 0);
    CHECK_ERR(fdr_raw_event(p, 1, "a", 1), 0);
    CHECK(strstr(fdr_strerror(-ENODATA), "disabled") != NULL);

    /* Printed live: the payload as hex bytes. */
    CHECK_ERR(fdr_trace_set("codes:event_2"), 0);
    capture_begin();
    CHECK_ERR(fdr_raw_event(p, 2, "\xde\xad\x01", 3), 0);
    const char *out = capture_end();
    CHECK(strstr(out, "codes:event_2 data=de ad 01\n") != NULL);
    CHECK_ERR(fdr_trace_set(""), 0);
    CHECK_ERR(fdr_provider_unregister(p), 0);
}

/* Threads register, record and unregister the same providers at once: one
 * handle for all, and the table ends empty (a new provider fits in every
 * slot again). Mostly for TSan. */
static fdr_provider_t *shared_handle;

static void *worker(void *arg)
{
    long id = (long)arg;
    fdr_provider_desc_t d = FDR_PROVIDER_DESC_INIT("shared", 8, 99);
    for (int i = 0; i < 300; i++) {
        fdr_provider_t *h = NULL;
        if (fdr_provider_register(&d, &h) != 0 || h != shared_handle)
            __atomic_fetch_add(&check_failures, 1, __ATOMIC_RELAXED);
        int r = fdr_raw_event(h, (unsigned)(i % 8), &i, sizeof i);
        if (r != 0 && r != -ENOSPC)
            __atomic_fetch_add(&check_failures, 1, __ATOMIC_RELAXED);
        if (fdr_provider_unregister(h) != 0)
            __atomic_fetch_add(&check_failures, 1, __ATOMIC_RELAXED);
        /* a provider of its own, freed each time */
        char name[32];
        snprintf(name, sizeof name, "own%ld", id);
        fdr_provider_desc_t o = FDR_PROVIDER_DESC_INIT(name, 2, (uint32_t)i);
        fdr_provider_t *mine = NULL;
        if (fdr_provider_register(&o, &mine) != 0 ||
            fdr_raw_event(mine, 1, name, 4) == -EINVAL ||
            fdr_provider_unregister(mine) != 0)
            __atomic_fetch_add(&check_failures, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void test_threads(void)
{
    fdr_provider_desc_t d = FDR_PROVIDER_DESC_INIT("shared", 8, 99);
    CHECK_ERR(fdr_provider_register(&d, &shared_handle), 0);
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    CHECK_ERR(fdr_provider_unregister(shared_handle), 0);
    CHECK_ERR(fdr_raw_event(shared_handle, 0, NULL, 0), -EINVAL);
}

int main(void)
{
    unsetenv("FDR_OUTPUT");
    unsetenv("FDR_EVENTS");
    unsetenv("FDR_TRACES");
    unsetenv("FDR_TRACE_FILE");
    unsetenv("FDR_PACKET_SIZE");
    test_identity();
    test_conflict();
    test_refcount();
    test_bad_input();
    test_raw_codes();
    test_threads();
    test_table_full(); /* last: needs every slot free */
    if (check_status())
        return 1;
    printf("ok\n");
    return 0;
}
