/* SPDX-License-Identifier: MIT */
/* steer.c - `fdr control PID [--record SPEC] [--print SPEC] [--set NAME=VALUE]
 * [--json]`: steers a running program through fdrd, as the scope's
 * switches and sliders do, then prints its state.
 *
 * The program must be registered with fdrd (it finds fdrd only when it
 * starts). --record replaces the program's choice of recorded events
 * (fdr_record_set's syntax), --print its choice of printed events
 * (fdr_trace_set's); --set is a NAME=VALUE item given to the latter, which
 * sets a tunable and leaves the events as they were. The program applies
 * them on its fdrd thread and reports its state; the state printed here
 * is the first report that came after the changes (fdrd keeps the last one
 * each program sent, with the number of the last control it had applied;
 * we ask until it shows ours, for at most 10 s). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "client.h"

static int cmd_control(int argc, char **argv);

const struct cli_verb cli_verbs_steer[] = {
    {"control", cmd_control,
     "PID [--record SPEC] [--print SPEC] [--set NAME=VALUE]... [--json]",
     "steer a running program through fdrd: events recorded and printed, tunables",
     "Changes what process PID records (--record, FDR_EVENTS syntax: it replaces\n"
     "the program's choice) and prints (--print, FDR_TRACES syntax), and sets its\n"
     "tunables (--set NAME=VALUE, repeatable), then prints the program's events\n"
     "(R recorded, P printed) and tunables. Without options it only prints\n"
     "them. The program must have found fdrd when it started.\n"
     "  --json   one JSON document: {\"pid\", \"events\": [...], \"tunables\": [...]}\n"},
    {NULL, NULL, NULL, NULL, NULL},
};

static const char *reply_text(struct client *c)
{
    const void *b = c->buf;
    const struct fdr__msg_reply *r = b;
    return r->text;
}

/* One line "E R P provider event" or "T name i|d r value min max def". */
static void print_line(const char *line, int json, int *first)
{
    char a[256], b[256], k[8];
    int r, p;
    if (sscanf(line, "E %d %d %255s %255s", &r, &p, a, b) == 4) {
        if (json) {
            printf("%s{\"provider\": ", (*first)++ ? ", " : "");
            json_str(stdout, a);
            printf(", \"event\": ");
            json_str(stdout, b);
            printf(", \"recorded\": %s, \"printed\": %s}", r ? "true" : "false",
                   p ? "true" : "false");
        } else
            printf("  %c%c  %s:%s\n", r ? 'R' : '-', p ? 'P' : '-', a, b);
        return;
    }
    char v[64], lo[64], hi[64], def[64];
    if (sscanf(line, "T %255s %7s %d %63s %63s %63s %63s", a, k, &r, v, lo, hi, def) ==
        7) {
        if (json) {
            printf("%s{\"name\": ", (*first)++ ? ", " : "");
            json_str(stdout, a);
            printf(", \"double\": %s, \"range\": %s, \"value\": %s, \"min\": %s, "
                   "\"max\": %s, \"default\": %s}",
                   k[0] == 'd' ? "true" : "false", r ? "true" : "false", v, lo, hi, def);
        } else if (r)
            printf("  %s = %s (%s, %s to %s, default %s)\n", a, v,
                   k[0] == 'd' ? "floating" : "integer", lo, hi, def);
        else
            printf("  %s = %s (%s, default %s)\n", a, v,
                   k[0] == 'd' ? "floating" : "integer", def);
    }
}

static void print_state(uint32_t pid, const char *state, int json)
{
    const char *kinds = "ET";
    if (json)
        printf("{\"pid\": %u", pid);
    else
        printf("process %u\n", pid);
    for (int i = 0; i < 2; i++) {
        int first = 0;
        if (json)
            printf(", \"%s\": [", i ? "tunables" : "events");
        else
            printf("%s\n", i ? "tunables:" : "events (R recorded, P printed):");
        for (const char *l = state; *l; l = strchr(l, '\n') + 1) {
            char line[512];
            size_t n = strcspn(l, "\n");
            if (l[0] == kinds[i] && n < sizeof line) {
                memcpy(line, l, n);
                line[n] = 0;
                print_line(line, json, &first);
            }
            if (!l[n])
                break;
        }
        if (json)
            printf("]");
        else if (!first && !strchr(state, kinds[i]))
            printf("  (none)\n");
    }
    if (json)
        printf("}\n");
    if (!json && strstr(state, "+\n"))
        printf("  ... (more than one message holds)\n");
}

static int cmd_control(int argc, char **argv)
{
    const char *verb = argv[0];
    static const struct option opts[] = {{"record", required_argument, 0, 'r'},
                                         {"print", required_argument, 0, 'p'},
                                         {"set", required_argument, 0, 's'},
                                         {"json", no_argument, 0, 'j'},
                                         {0, 0, 0, 0}};
    const char *record = NULL, *print = NULL;
    char sets[4096] = "";
    size_t nsets = 0;
    int json = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            record = optarg;
            break;
        case 'p':
            print = optarg;
            break;
        case 's': {
            size_t n = strlen(optarg);
            if (!strchr(optarg, '=') || optarg[0] == '=' || strchr(optarg, ','))
                return cli_fail(2, verb, "bad --set '%s': NAME=VALUE", optarg);
            if (nsets + n + 2 > sizeof sets)
                return cli_fail(2, verb, "too many --set");
            nsets += (size_t)snprintf(sets + nsets, sizeof sets - nsets, "%s%s",
                                      nsets ? "," : "", optarg);
            break;
        }
        case 'j':
            json = 1;
            break;
        case ':':
            return cli_fail(2, verb, "%s needs a value", argv[optind - 1]);
        default:
            return cli_fail(2, verb, "unknown option '%s' (fdr help %s)",
                            argv[optind - 1], verb);
        }
    }
    if (optind != argc - 1)
        return cli_fail(2, verb, "one PID expected (fdr help %s)", verb);
    char *end;
    errno = 0;
    unsigned long pid = strtoul(argv[optind], &end, 10);
    if (end == argv[optind] || *end || errno || pid == 0 || pid > 0x7fffffff)
        return cli_fail(2, verb, "bad PID '%s'", argv[optind]);
    struct client cl;
    int rc = client_open(&cl, verb, 0);
    if (rc < 0)
        return cli_fail(1, verb,
                        "fdrd is not running (a program finds it when it starts)");
    if (rc)
        return rc;
    static char state[1 << 16];
    const struct {
        const char *spec;
        unsigned what;
    } todo[] = {{record, FDR__CONTROL_RECORD},
                {print, FDR__CONTROL_PRINT},
                {nsets ? sets : NULL, FDR__CONTROL_PRINT}};
    uint32_t ticket = 0, answers = 0;
    for (size_t i = 0; i < sizeof todo / sizeof *todo; i++) {
        if (!todo[i].spec)
            continue;
        int err = client_control(&cl, (uint32_t)pid, todo[i].what, todo[i].spec, &ticket);
        if (err) {
            rc = cli_fail(1, verb, "%s", reply_text(&cl));
            goto out;
        }
    }
    /* The program reports after each control: wait for the report that
     * shows the last one applied (fdrd keeps the last report; each call
     * also asks for a new one). Without a change, the last report. */
    struct timespec t0, now, nap = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int err = client_state(&cl, (uint32_t)pid, state, sizeof state, &answers);
        if (err && (err != ENODATA || !ticket)) {
            rc = cli_fail(1, verb, "%s", reply_text(&cl));
            goto out;
        }
        if (!err && answers >= ticket)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 10) {
            rc = cli_fail(1, verb, "process %lu did not answer in 10 s", pid);
            goto out;
        }
        nanosleep(&nap, NULL);
    }
    print_state((uint32_t)pid, state, json);
out:
    client_close(&cl);
    return rc;
}
