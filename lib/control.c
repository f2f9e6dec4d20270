/* control.c - runtime control from the program: which events are recorded
 * and printed, the list of known events, help.
 *
 * fdr_trace_set() and fdr_record_set() take the same pattern syntax as
 * FDR_TRACES and FDR_EVENTS (pattern.c). A new rule list replaces the old
 * one as a whole and every call site is recomputed under the registry lock
 * (registry.c), so concurrent calls are serialized and the last one wins. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fdr-int.h"
#include "pattern.h"

static void warn_cb(void *ctx, const char *msg)
{
    (void)ctx;
    fdr__warn("%s", msg + (strncmp(msg, "fdr: ", 5) == 0 ? 5 : 0));
}

static int set_rules(int print, const char *spec, const char *origin)
{
    fdr__init();
    struct fdr__rules *r = NULL;
    int e = fdr__rules_parse(spec, origin, warn_cb, NULL, &r);
    if (e < 0)
        return e;
    int help = fdr__rules_wants_help(r);
    fdr__registry_set_rules(print, r);
    if (help) {
        fdr__help_requested();
        fdr__help_print_pending();
    }
    return 0;
}

int fdr_trace_set(const char *spec)
{
    return set_rules(1, spec, "fdr_trace_set");
}

int fdr_record_set(const char *spec)
{
    return set_rules(0, spec, "fdr_record_set");
}

struct list_ctx {
    fdr_event_cb cb;
    void *arg;
};

static void list_one(void *arg, const struct fdr__site *s, uint8_t state)
{
    struct list_ctx *l = arg;
    fdr_event_info_t info = {sizeof info, s->provider, s->event, s->format, s->file,
                             (int)s->line, (state & FDR__S_RECORD) != 0,
                             (state & FDR__S_PRINT) != 0};
    l->cb(l->arg, &info);
}

int fdr_event_list(fdr_event_cb cb, void *arg)
{
    if (!cb)
        return -EINVAL;
    fdr__init();
    struct list_ctx l = {cb, arg};
    fdr__registry_each(list_one, &l);
    return 0;
}

static void help_one(void *arg, const fdr_event_info_t *e)
{
    (void)arg;
    fprintf(stderr, "  %c%c %s:%s  \"%s\"\n", e->recorded ? 'R' : '-',
            e->printed ? 'P' : '-', e->provider, e->event, e->format ? e->format : "");
}

static int help_pending;

/* Help asked for in FDR_TRACES is printed once the program's call sites are
 * registered (fdr__register_sites), so that the list is complete. */
void fdr__help_requested(void)
{
    help_pending = 1;
}

void fdr__help_print_pending(void)
{
    if (!__atomic_exchange_n(&help_pending, 0, __ATOMIC_ACQ_REL))
        return;
    fprintf(stderr,
            "fdr: FDR_TRACES / FDR_EVENTS syntax: items separated by ',' ';' or spaces\n"
            "  provider:event   glob patterns (* ? [a-z]), e.g. net:*  or  virtio_*\n"
            "  -pattern         switch off; later items override earlier ones\n"
            "  name=value       set a tunable\n"
            "  @file            read items from a file (# comments)\n"
            "  help, list       print this list; the program continues\n"
            "known events (R recorded, P printed):\n");
    fdr_event_list(help_one, NULL);
    fflush(stderr);
}
