/* SPDX-License-Identifier: MIT */
/* session.c - the verbs that steer fdrd's traces: create, enable, disable,
 * filter, start, stop, destroy, list, status.
 *
 * Each verb is one request to fdrd (client.c), which holds the traces and
 * applies every rule about them (daemon/traces.c); this file parses the
 * command line, checks what it can alone (the trace name with the same
 * code as fdrd, sizes and masks syntactically), and prints the answers.
 * Verbs that change something start fdrd when none runs; `list` and
 * `status` never do: with no fdrd they say so ("no fdrd running (DIR)",
 * or an empty list / {"running": false} with --json) and exit 0.
 *
 * Exit status: 0 done; 2 a usage error (missing or extra argument, unknown
 * option, a name, size or mask that does not parse); 1 anything else (fdrd
 * refused: unknown trace, bad pattern, size out of range, 33rd trace; or
 * fdrd cannot be reached). Every error is one line "fdr VERB: ...". */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"

static const char *const mode_names[] = {"discard", "overwrite", "snapshot"};

static int check_name(const char *verb, const char *name)
{
    char msg[FDR_PROTO_TEXT_CAP];
    if (fdr__proto_trace_name_check(name, msg, sizeof msg) < 0)
        return cli_fail(2, verb, "%s", msg);
    return 0;
}

/* "123", "64K", "1M", "2G" (also lower case) to bytes. -1 if malformed. */
static int parse_size(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    unsigned shift = 0;
    if (*p == 'K' || *p == 'k')
        shift = 10;
    else if (*p == 'M' || *p == 'm')
        shift = 20;
    else if (*p == 'G' || *p == 'g')
        shift = 30;
    if (shift)
        p++;
    if (*p || v == 0 || v > (UINT64_MAX >> 34))
        return -1;
    *out = v << shift;
    return 0;
}

/* "0x" + 1..8 hex digits, or a decimal number below 2^32. -1 if not. */
static int parse_mask(const char *s, uint32_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        p += 2;
        size_t n = 0;
        for (; *p; p++, n++) {
            int d = *p >= '0' && *p <= '9'   ? *p - '0'
                    : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                    : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                             : -1;
            if (d < 0 || n >= 8)
                return -1;
            v = v * 16 + (uint64_t)d;
        }
        if (n == 0)
            return -1;
    } else {
        if (!*p)
            return -1;
        for (; *p; p++) {
            if (*p < '0' || *p > '9')
                return -1;
            v = v * 10 + (uint64_t)(*p - '0');
            if (v > UINT32_MAX)
                return -1;
        }
    }
    *out = (uint32_t)v;
    return 0;
}

static FILE *out; /* list's output, printed only when the whole list came */

static void print_size(uint64_t v)
{
    if (v >= (1u << 30) && v % (1u << 30) == 0)
        fprintf(out, "%" PRIu64 "G", v >> 30);
    else if (v >= (1u << 20) && v % (1u << 20) == 0)
        fprintf(out, "%" PRIu64 "M", v >> 20);
    else if (v >= 1024 && v % 1024 == 0)
        fprintf(out, "%" PRIu64 "K", v >> 10);
    else
        fprintf(out, "%" PRIu64, v);
}

/* One request with a trace name and a yes/no answer. */
static int simple(const char *verb, void *msg, size_t len, unsigned type)
{
    struct client *c = malloc(sizeof *c);
    if (!c)
        return cli_fail(1, verb, "out of memory");
    int rc = client_open(c, verb, 1);
    if (rc == 0)
        rc = client_call(c, msg, len, type, NULL);
    client_close(c);
    free(c);
    return rc;
}

static int only_name(int argc, char **argv, const char **name)
{
    if (argc < 2)
        return cli_fail(2, argv[0], "missing trace name (fdr help %s)", argv[0]);
    if (argc > 2)
        return cli_fail(2, argv[0], "unexpected argument '%s' (fdr help %s)", argv[2],
                        argv[0]);
    *name = argv[1];
    return check_name(argv[0], argv[1]);
}

/* -o DIR as fdrd needs it: absolute (fdrd has its own working directory). */
static int absolute_dir(const char *verb, const char *out, char *dst, size_t cap)
{
    char cwd[PATH_MAX];
    int n;
    if (!*out)
        return cli_fail(2, verb, "-o needs a directory");
    if (out[0] == '/')
        n = snprintf(dst, cap, "%s", out);
    else if (getcwd(cwd, sizeof cwd))
        n = snprintf(dst, cap, "%s/%s", strcmp(cwd, "/") ? cwd : "", out);
    else
        return cli_fail(1, verb, "cannot make '%s' absolute: %s", out, strerror(errno));
    if (n < 0 || (size_t)n >= cap)
        return cli_fail(2, verb, "output directory too long");
    return 0;
}

/* "HOST[:CONTROL[:DATA]]" ("[v6 address]" in brackets) into m's relayd
 * fields; ports default to relayd's 5342 and 5343. 0 or -1. */
static int parse_relayd(const char *arg, struct fdr__msg_create *m)
{
    char host[FDR_PROTO_HOST_CAP];
    const char *rest;
    if (arg[0] == '[') {
        const char *close = strchr(arg, ']');
        if (!close || (size_t)(close - arg - 1) >= sizeof host || close == arg + 1)
            return -1;
        memcpy(host, arg + 1, (size_t)(close - arg - 1));
        host[close - arg - 1] = 0;
        rest = close + 1;
    } else {
        size_t n = strcspn(arg, ":");
        if (n == 0 || n >= sizeof host)
            return -1;
        memcpy(host, arg, n);
        host[n] = 0;
        rest = arg + n;
    }
    unsigned long port[2] = {5342, 5343};
    for (int i = 0; i < 2 && *rest; i++) {
        char *end;
        if (*rest != ':' || rest[1] < '0' || rest[1] > '9')
            return -1;
        port[i] = strtoul(rest + 1, &end, 10);
        if (port[i] == 0 || port[i] > 65535)
            return -1;
        rest = end;
    }
    if (*rest)
        return -1;
    fdr__proto_set_str(m->relayd, sizeof m->relayd, host);
    m->relayd_ctl = (uint32_t)port[0];
    m->relayd_data = (uint32_t)port[1];
    return 0;
}

/* "N" seconds, or N with a unit s, ms, us: microseconds in *us (1 ms to
 * 1 hour). 0 or -1. */
static int parse_period(const char *arg, uint32_t *us)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (end == arg || errno)
        return -1;
    double mult = 1e6;
    if (strcmp(end, "ms") == 0)
        mult = 1e3;
    else if (strcmp(end, "us") == 0)
        mult = 1;
    else if (*end && strcmp(end, "s") != 0)
        return -1;
    v *= mult;
    if (!(v >= 1000 && v <= 3600e6))
        return -1;
    *us = (uint32_t)v;
    return 0;
}

static int cmd_create(int argc, char **argv)
{
    const char *verb = argv[0];
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"overwrite", no_argument, 0, 'O'},
                                         {"snapshot", no_argument, 0, 'S'},
                                         {"buffer-size", required_argument, 0, 'b'},
                                         {"packet-size", required_argument, 0, 'p'},
                                         {"memory", required_argument, 0, 'm'},
                                         {"relayd", required_argument, 0, 'R'},
                                         {"live", optional_argument, 0, 'L'},
                                         {"pid", required_argument, 0, 'P'},
                                         {"file-buffers", optional_argument, 0, 'F'},
                                         {0, 0, 0, 0}};
    static struct fdr__msg_create m;
    memset(&m, 0, sizeof m);
    m.mask = 0xffffffffu;
    const char *out = NULL, *buffers = NULL;
    int c, rc, modes = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'F':
            m.flags |= FDR__CREATE_FILE_BUFFERS;
            buffers = optarg;
            if (buffers && !*buffers)
                return cli_fail(2, verb, "--file-buffers= needs a directory");
            break;
        case 'O':
            m.mode = FDR__TRACE_OVERWRITE;
            modes++;
            break;
        case 'S':
            m.mode = FDR__TRACE_SNAPSHOT;
            modes++;
            break;
        case 'b':
        case 'p':
        case 'm':
            if (parse_size(optarg, c == 'b'   ? &m.buffer_size
                                   : c == 'p' ? &m.packet_size
                                              : &m.memory) < 0)
                return cli_fail(
                    2, verb,
                    "bad %s '%s': a number of bytes above 0, with an optional "
                    "K, M or G suffix",
                    c == 'b'   ? "--buffer-size"
                    : c == 'p' ? "--packet-size"
                               : "--memory",
                    optarg);
            break;
        case 'R':
            if (parse_relayd(optarg, &m) < 0)
                return cli_fail(2, verb,
                                "bad --relayd '%s': HOST[:CONTROL_PORT[:DATA_PORT]], "
                                "ports 1 to 65535",
                                optarg);
            break;
        case 'P': {
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (end == optarg || *end || errno || v == 0 || v > 0x7fffffff)
                return cli_fail(2, verb, "bad --pid '%s': a process id", optarg);
            m.pid = (uint32_t)v;
            break;
        }
        case 'L':
            m.live_us = 1000000;
            if (optarg && parse_period(optarg, &m.live_us) < 0)
                return cli_fail(2, verb,
                                "bad --live period '%s': seconds, or a number with s, "
                                "ms or us (1 ms to 1 hour)",
                                optarg);
            break;
        case ':':
            return cli_fail(2, verb, "%s needs a value", argv[optind - 1]);
        default:
            return cli_fail(2, verb, "unknown option '%s' (fdr help %s)",
                            argv[optind - 1], verb);
        }
    }
    if (modes > 1)
        return cli_fail(2, verb, "--overwrite and --snapshot exclude each other");
    if (m.live_us && m.mode != FDR__TRACE_DISCARD)
        return cli_fail(2, verb, "--live is for a trace in discard mode");
    if (m.relayd[0] && m.mode != FDR__TRACE_DISCARD)
        return cli_fail(2, verb,
                        "--relayd streams a discard-mode trace (not --overwrite or "
                        "--snapshot)");
    if (optind >= argc)
        return cli_fail(2, verb, "missing trace name (fdr help %s)", verb);
    if (optind + 1 < argc)
        return cli_fail(2, verb, "unexpected argument '%s' (fdr help %s)",
                        argv[optind + 1], verb);
    const char *name = argv[optind];
    if (check_name(verb, name))
        return 2;
    fdr__proto_set_str(m.name, sizeof m.name, name);
    if (out && (rc = absolute_dir(verb, out, m.outdir, sizeof m.outdir)) != 0)
        return rc;
    if (buffers && (rc = absolute_dir(verb, buffers, m.buffers, sizeof m.buffers)) != 0)
        return rc;
    struct client *cl = malloc(sizeof *cl);
    if (!cl)
        return cli_fail(1, verb, "out of memory");
    rc = client_open(cl, verb, 1);
    if (rc == 0)
        rc = client_call(cl, &m, sizeof m, FDR__MSG_CREATE, NULL);
    if (rc == 0 && m.flags) {
        const void *b = cl->buf;
        const struct fdr__msg_reply *r = b;
        printf("trace %s created, buffers in %s\n", name, r->text);
    } else if (rc == 0)
        printf("trace %s created\n", name);
    client_close(cl);
    free(cl);
    return rc;
}

static int items_verb(int argc, char **argv, unsigned type)
{
    const char *verb = argv[0];
    int i = 1;
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc)
        return cli_fail(2, verb, "missing trace name (fdr help %s)", verb);
    const char *name = argv[i++];
    if (check_name(verb, name))
        return 2;
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc)
        return cli_fail(2, verb, "missing PATTERN (fdr help %s)", verb);
    static uint64_t buf[FDR_PROTO_MSG_MAX / 8];
    struct fdr__msg_items *m = (struct fdr__msg_items *)buf;
    memset(m, 0, sizeof *m);
    fdr__proto_set_str(m->name, sizeof m->name, name);
    size_t len = 0;
    for (; i < argc; i++) {
        size_t n = strlen(argv[i]);
        if (n == 0 || n > FDR_PROTO_ITEM_MAX)
            return cli_fail(2, verb, "bad pattern '%.40s%s': 1 to %d bytes", argv[i],
                            n > 40 ? "..." : "", FDR_PROTO_ITEM_MAX);
        if (len + n + 1 > FDR_PROTO_ITEMS_CAP || m->nitems >= FDR_PROTO_ITEMS_MAX)
            return cli_fail(2, verb, "too many patterns (at most %d, %u bytes)",
                            FDR_PROTO_ITEMS_MAX, FDR_PROTO_ITEMS_CAP);
        memcpy(m->items + len, argv[i], n + 1);
        len += n + 1;
        m->nitems++;
    }
    m->len = (uint32_t)len;
    return simple(verb, m, sizeof *m + len, type);
}

static int cmd_enable(int argc, char **argv)
{
    return items_verb(argc, argv, FDR__MSG_ENABLE);
}

static int cmd_disable(int argc, char **argv)
{
    return items_verb(argc, argv, FDR__MSG_DISABLE);
}

static int cmd_filter(int argc, char **argv)
{
    const char *verb = argv[0];
    if (argc < 3)
        return cli_fail(2, verb, "missing %s (fdr help %s)",
                        argc < 2 ? "trace name" : "MASK", verb);
    if (argc > 3)
        return cli_fail(2, verb, "unexpected argument '%s' (fdr help %s)", argv[3], verb);
    if (check_name(verb, argv[1]))
        return 2;
    struct fdr__msg_filter m;
    memset(&m, 0, sizeof m);
    if (parse_mask(argv[2], &m.mask) < 0)
        return cli_fail(2, verb,
                        "bad mask '%s': 0x and 1 to 8 hex digits, or a decimal number "
                        "below 2^32",
                        argv[2]);
    fdr__proto_set_str(m.name, sizeof m.name, argv[1]);
    return simple(verb, &m, sizeof m, FDR__MSG_FILTER);
}

static int name_verb(int argc, char **argv, unsigned type, const char *done)
{
    const char *name = NULL;
    int rc = only_name(argc, argv, &name);
    if (rc)
        return rc;
    struct fdr__msg_trace m;
    memset(&m, 0, sizeof m);
    fdr__proto_set_str(m.name, sizeof m.name, name);
    rc = simple(argv[0], &m, sizeof m, type);
    if (rc == 0)
        printf("trace %s %s\n", name, done);
    return rc;
}

static int cmd_start(int argc, char **argv)
{
    return name_verb(argc, argv, FDR__MSG_START, "started");
}

static int cmd_stop(int argc, char **argv)
{
    return name_verb(argc, argv, FDR__MSG_STOP, "stopped");
}

static int cmd_destroy(int argc, char **argv)
{
    return name_verb(argc, argv, FDR__MSG_DESTROY, "destroyed");
}

static int cmd_snapshot(int argc, char **argv)
{
    const char *verb = argv[0];
    static struct fdr__msg_snapshot m;
    memset(&m, 0, sizeof m);
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0) {
            if (++i >= argc)
                return cli_fail(2, verb, "-o needs a value");
            int rc = absolute_dir(verb, argv[i], m.outdir, sizeof m.outdir);
            if (rc)
                return rc;
        } else if (argv[i][0] == '-' && argv[i][1])
            return cli_fail(2, verb, "unknown option '%s' (fdr help %s)", argv[i], verb);
        else if (name)
            return cli_fail(2, verb, "unexpected argument '%s' (fdr help %s)", argv[i],
                            verb);
        else
            name = argv[i];
    }
    if (!name)
        return cli_fail(2, verb, "missing trace name (fdr help %s)", verb);
    if (check_name(verb, name))
        return 2;
    fdr__proto_set_str(m.name, sizeof m.name, name);
    struct client *c = malloc(sizeof *c);
    if (!c)
        return cli_fail(1, verb, "out of memory");
    int rc = client_open(c, verb, 1);
    if (rc == 0)
        rc = client_call(c, &m, sizeof m, FDR__MSG_SNAPSHOT, NULL);
    if (rc == 0) {
        const void *b = c->buf;
        const struct fdr__msg_reply *r = b;
        printf("snapshot of trace %s written to %s\n", name, r->text);
    }
    client_close(c);
    free(c);
    return rc;
}

/* Takes --json out of argv; returns 1 if it was there. */
static int take_json(int *argc, char **argv)
{
    int json = 0, k = 1;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else
            argv[k++] = argv[i];
    }
    *argc = k;
    return json;
}

static const char *const relay_states[] = {"none", "connected", "reconnecting",
                                           "stopped"};

/* A streamed trace's relayd: a JSON object, or one text line. */
static void relay_out(FILE *f, const struct fdr__msg_trace_info *t, int json)
{
    const char *st = t->relay_state < 4 ? relay_states[t->relay_state] : "?";
    if (json) {
        if (!t->relayd[0]) {
            fprintf(f, "null");
            return;
        }
        fprintf(f, "{\"host\": ");
        json_str(f, t->relayd);
        fprintf(f,
                ", \"control_port\": %u, \"data_port\": %u, \"live_us\": %u, "
                "\"state\": \"%s\", \"sessions\": %u, \"bytes_sent\": %" PRIu64
                ", \"packets_sent\": %" PRIu64 ", \"discarded\": %" PRIu64 "}",
                t->relay_ctl, t->relay_data, t->live_us, st, t->relay_sessions,
                t->relay_bytes, t->relay_packets, t->relay_discarded);
        return;
    }
    fprintf(f,
            "    relayd: %s:%u:%u %s, %s, session %u; sent %" PRIu64 " bytes, %" PRIu64
            " packets; discarded %" PRIu64 " events\n",
            t->relayd, t->relay_ctl, t->relay_data, t->live_us ? "live" : "not live", st,
            t->relay_sessions, t->relay_bytes, t->relay_packets, t->relay_discarded);
}

static void trace_out(const struct fdr__msg_trace_info *t, int json, int first)
{
    const char *mode = t->mode <= FDR__TRACE_SNAPSHOT ? mode_names[t->mode] : "?";
    const char *item = t->items;
    if (json) {
        fprintf(out, "%s\n    {\"name\": ", first ? "" : ",");
        json_str(out, t->name);
        fprintf(
            out,
            ", \"active\": %s, \"mode\": \"%s\", \"mask\": %u, \"mask_hex\": \"0x%08x\", "
            "\"buffer_size\": %" PRIu64 ", \"packet_size\": %" PRIu64
            ", \"memory\": %" PRIu64 ", \"pid\": %u, \"live_us\": %u, \"output\": ",
            t->active ? "true" : "false", mode, t->mask, t->mask, t->buffer_size,
            t->packet_size, t->memory, t->pid, t->live_us);
        json_str(out, t->outdir);
        fprintf(out, ", \"events\": [");
        for (uint32_t i = 0; i < t->nitems; i++, item += strlen(item) + 1) {
            fprintf(out, "%s", i ? ", " : "");
            json_str(out, item);
        }
        fprintf(out, "], \"relayd\": ");
        relay_out(out, t, 1);
        fprintf(out, "}");
        return;
    }
    fprintf(out, "%s  %s  mode=%s mask=0x%08x buffer=", t->name,
            t->active ? "started" : "stopped", mode, t->mask);
    print_size(t->buffer_size);
    fprintf(out, " packet=");
    print_size(t->packet_size);
    fprintf(out, " memory=");
    print_size(t->memory);
    if (t->pid)
        fprintf(out, " pid=%u", t->pid);
    if (t->live_us)
        fprintf(out, " live=%gs", t->live_us / 1e6);
    fprintf(out, "\n    output: %s\n    events:", t->outdir);
    if (!t->nitems)
        fprintf(out, " (none)");
    for (uint32_t i = 0; i < t->nitems; i++, item += strlen(item) + 1)
        fprintf(out, " %s", item);
    fprintf(out, "\n");
    if (t->relayd[0])
        relay_out(out, t, 0);
}

/* After STATUS_INFO: the streamed traces and their relayd counters, as
 * ", \"relayd\": [...]" (json) or lines. 0 or 1. */
static int status_relays(struct client *c, const char *verb, int json)
{
    struct fdr__msg_list m;
    memset(&m, 0, sizeof m);
    m.what = FDR__LIST_TRACES;
    if (client_send(c, &m, sizeof m, FDR__MSG_LIST))
        return 1;
    int t, n = 0;
    if (json)
        printf(", \"relayd\": [");
    while ((t = client_next(c)) == FDR__MSG_TRACE_INFO) {
        const struct fdr__msg_trace_info *ti = (const void *)c->buf;
        if (!ti->relayd[0])
            continue;
        if (json) {
            printf("%s{\"trace\": ", n ? ", " : "");
            json_str(stdout, ti->name);
            printf(", \"relayd\": ");
            relay_out(stdout, ti, 1);
            printf("}");
        } else {
            printf("trace %s streamed to relayd:\n", ti->name);
            relay_out(stdout, ti, 0);
        }
        n++;
    }
    if (json)
        printf("]");
    if (t != 0)
        return cli_fail(1, verb, "bad answer from fdrd to LIST");
    return 0;
}

static void process_out(const struct fdr__msg_process_info *p, int json, int first)
{
    if (json) {
        fprintf(out,
                "%s\n    {\"pid\": %u, \"claimed_pid\": %u, \"ppid\": %u, \"uid\": %u, "
                "\"name\": ",
                first ? "" : ",", p->pid, p->claimed_pid, p->ppid, p->uid);
        json_str(out, p->name);
        fprintf(out,
                ", \"sizeof_int\": %u, \"sizeof_long\": %u, \"sizeof_pointer\": %u, "
                "\"sizeof_size_t\": %u, \"providers\": %u}",
                p->sizeof_int, p->sizeof_long, p->sizeof_pointer, p->sizeof_size_t,
                p->nproviders);
        return;
    }
    fprintf(out, "%-8u %-16s ppid=%u abi=int%u/long%u/ptr%u/size_t%u providers=%u",
            p->pid, p->name, p->ppid, p->sizeof_int * 8, p->sizeof_long * 8,
            p->sizeof_pointer * 8, p->sizeof_size_t * 8, p->nproviders);
    if (p->claimed_pid != p->pid)
        fprintf(out, " (claims pid %u)", p->claimed_pid);
    fprintf(out, "\n");
}

static void provider_out(const struct fdr__msg_provider_info *p, int json, int first,
                         int events)
{
    if (json && events) {
        fprintf(out, "%s\n    {\"provider\": ", first ? "" : ",");
        json_str(out, p->name);
        fprintf(out, ", \"handle\": %u, \"nevents\": %u, \"pattern\": ", p->handle,
                p->nevents);
        char pat[sizeof p->name + 16];
        snprintf(pat, sizeof pat, "%s:event_*", p->name);
        json_str(out, pat);
        fprintf(out, "}");
        return;
    }
    if (json) {
        fprintf(out, "%s\n    {\"handle\": %u, \"name\": ", first ? "" : ",", p->handle);
        json_str(out, p->name);
        fprintf(out,
                ", \"refcount\": %u, \"size\": %u, \"nevents\": %u, \"checksum\": %u, "
                "\"alignment\": %u, \"sizeof_int\": %u, \"sizeof_long\": %u, "
                "\"sizeof_pointer\": %u, \"sizeof_size_t\": %u}",
                p->refcount, p->size, p->nevents, p->checksum, p->alignment,
                p->sizeof_int, p->sizeof_long, p->sizeof_pointer, p->sizeof_size_t);
        return;
    }
    if (events) {
        fprintf(out, "%s:event_0 .. %s:event_%u  (handle %u)\n", p->name, p->name,
                p->nevents - 1, p->handle);
        return;
    }
    fprintf(
        out,
        "%-6u %-20s refs=%u nevents=%u checksum=0x%08x align=%u int=%u long=%u ptr=%u "
        "size_t=%u size=%u\n",
        p->handle, p->name, p->refcount, p->nevents, p->checksum, p->alignment,
        p->sizeof_int, p->sizeof_long, p->sizeof_pointer, p->sizeof_size_t, p->size);
}

static int cmd_list(int argc, char **argv)
{
    const char *verb = argv[0];
    int json = take_json(&argc, argv);
    static const char *const whats[] = {"traces", "processes", "providers", "events"};
    unsigned what = FDR__LIST_TRACES;
    if (argc > 2)
        return cli_fail(2, verb, "unexpected argument '%s' (fdr help list)", argv[2]);
    if (argc == 2) {
        for (what = 0; what < 4 && strcmp(argv[1], whats[what]); what++)
            ;
        if (what == 4)
            return cli_fail(2, verb,
                            "cannot list '%s': traces, processes, providers or events",
                            argv[1]);
    }
    struct client *c = malloc(sizeof *c);
    if (!c)
        return cli_fail(1, verb, "out of memory");
    int rc = client_open(c, verb, 0);
    if (rc < 0) {
        if (json)
            printf("{\"running\": false, \"%s\": []}\n", whats[what]);
        else
            printf("no fdrd running (%s)\n", c->rundir);
        free(c);
        return 0;
    }
    if (rc) {
        free(c);
        return rc;
    }
    struct fdr__msg_list m;
    memset(&m, 0, sizeof m);
    m.what = what;
    char *text = NULL;
    size_t text_len = 0;
    out = open_memstream(&text, &text_len);
    if (!out) {
        client_close(c);
        free(c);
        return cli_fail(1, verb, "out of memory");
    }
    rc = client_send(c, &m, sizeof m, FDR__MSG_LIST);
    int n = 0, t = 0;
    if (json && !rc)
        fprintf(out, "{\"running\": true, \"%s\": [", whats[what]);
    while (!rc && (t = client_next(c)) > 0) {
        int want = what == FDR__LIST_TRACES      ? FDR__MSG_TRACE_INFO
                   : what == FDR__LIST_PROCESSES ? FDR__MSG_PROCESS_INFO
                                                 : FDR__MSG_PROVIDER_INFO;
        if (t != want) {
            rc = cli_fail(1, verb, "bad answer from fdrd: a %s message",
                          fdr__proto_type_name((unsigned)t));
            break;
        }
        if (what == FDR__LIST_TRACES)
            trace_out((const void *)c->buf, json, n == 0);
        else if (what == FDR__LIST_PROCESSES)
            process_out((const void *)c->buf, json, n == 0);
        else
            provider_out((const void *)c->buf, json, n == 0, what == FDR__LIST_EVENTS);
        n++;
    }
    if (t < 0)
        rc = 1;
    if (json && !rc)
        fprintf(out, "%s]}\n", n ? "\n  " : "");
    else if (!rc && n == 0)
        fprintf(out, "no %s\n", whats[what]);
    fclose(out);
    if (!rc)
        fputs(text, stdout);
    free(text);
    client_close(c);
    free(c);
    return rc;
}

static int cmd_status(int argc, char **argv)
{
    const char *verb = argv[0];
    int json = take_json(&argc, argv);
    if (argc > 1)
        return cli_fail(2, verb, "unexpected argument '%s' (fdr help status)", argv[1]);
    struct client *c = malloc(sizeof *c);
    if (!c)
        return cli_fail(1, verb, "out of memory");
    int rc = client_open(c, verb, 0);
    if (rc < 0) {
        if (json) {
            printf("{\"running\": false, \"rundir\": ");
            json_str(stdout, c->rundir);
            printf("}\n");
        } else
            printf("no fdrd running (%s)\n", c->rundir);
        free(c);
        return 0;
    }
    if (rc == 0) {
        struct fdr__msg_hdr m;
        rc = client_send(c, &m, sizeof m, FDR__MSG_STATUS);
        int t = rc ? -1 : client_next(c);
        if (t == FDR__MSG_STATUS_INFO) {
            const struct fdr__msg_status_info *s = (const void *)c->buf;
            if (json) {
                printf("{\"running\": true, \"pid\": %u, \"rundir\": ", s->pid);
                json_str(stdout, s->rundir);
                printf(", \"started\": %" PRIu64 ", \"traces\": %u, \"active\": %u, "
                       "\"processes\": %u, \"providers\": %u, \"clients\": %u, "
                       "\"max_traces\": %u, \"max_clients\": %u",
                       s->started, s->traces, s->active, s->processes, s->providers,
                       s->clients, s->max_traces, s->max_clients);
            } else
                printf("fdrd running, pid %u, in %s\n"
                       "traces: %u (%u started, at most %u)\n"
                       "processes: %u, providers: %u, connections: %u (at most %u)\n",
                       s->pid, s->rundir, s->traces, s->active, s->max_traces,
                       s->processes, s->providers, s->clients, s->max_clients);
            rc = status_relays(c, verb, json);
            if (json)
                printf("}\n");
        } else if (t >= 0)
            rc = cli_fail(1, verb, "bad answer from fdrd: a %s message",
                          fdr__proto_type_name((unsigned)t));
        else
            rc = 1;
    }
    client_close(c);
    free(c);
    return rc;
}

const struct cli_verb cli_verbs_session[] = {
    {"create", cmd_create,
     "NAME [-o DIR] [--overwrite|--snapshot] [--buffer-size N] [--packet-size N]\n"
     "       [--memory N] [--relayd HOST[:CONTROL[:DATA]] [--live[=PERIOD]]]\n"
     "       [--file-buffers[=DIR]] [--pid PID]",
     "create a trace in fdrd (started by this verb if it is not running)",
     "NAME: 1 to 64 of [A-Za-z0-9_.-], not starting with '.' or '-'; at most 32\n"
     "traces exist at once. The trace records nothing until `fdr enable` selects\n"
     "events and `fdr start` starts it.\n"
     "  -o DIR            output directory (default $HOME/fdr-traces/NAME-DATE-TIME)\n"
     "  --overwrite       flight recorder: the newest packets replace the oldest\n"
     "  --snapshot        keep the buffers in memory until `fdr snapshot`\n"
     "                    (default: discard mode, new events are dropped and counted\n"
     "                    when the buffer is full)\n"
     "  --buffer-size N   per-thread ring: a whole number of packets, at least 2,\n"
     "                    at most 1G (default 1M, or 4 packets if more)\n"
     "  --packet-size N   a power of two from 4K to 16M (default 64K)\n"
     "  --memory N        ring memory of one process in this trace (default 256M):\n"
     "                    threads past it get the smallest ring (12K), and what\n"
     "                    they lose is counted as discarded\n"
     "  --relayd HOST[:CONTROL[:DATA]]\n"
     "                    stream the trace to lttng-relayd (ports 5342, 5343 by\n"
     "                    default; discard mode only); without -o the local copy\n"
     "                    is a spool fdrd removes at destroy (docs/fleet.md)\n"
     "  --live[=PERIOD]   open packets reach the stream files within PERIOD\n"
     "                    (default 1s; also 500ms, 2, ...), for readers that\n"
     "                    tail them; with --relayd, a live relay session\n"
     "  --pid PID         record only process PID\n"
     "  --file-buffers[=DIR]  keep the rings in files in DIR (made by fdrd, 0700;\n"
     "                    it must not exist; default RUNDIR/buffers/NAME-PID.ID),\n"
     "                    so that `fdr recover DIR` rebuilds what the programs\n"
     "                    committed after fdrd and the programs were killed\n"
     "Sizes are bytes with an optional K, M or G suffix.\n"},
    {"snapshot", cmd_snapshot, "NAME [-o DIR]",
     "write what a trace's rings hold now, the programs running on",
     "A copy of every ring of every process of the trace: its closed packets that\n"
     "the program has not reused meanwhile, and its open packet up to the last\n"
     "committed event. Any mode (the flight recorder's --overwrite and\n"
     "--snapshot traces are what it is for).\n"
     "  -o DIR            where (default OUTPUT/snapshot-N-DATE-TIME, OUTPUT the\n"
     "                    trace's directory); DIR/<process>-<pid>/ per process\n"},
    {"enable", cmd_enable, "NAME PATTERN...", "add event patterns to a trace's selection",
     "Each PATTERN is an item of the FDR_TRACES language: [+|-]EVENT_GLOB or\n"
     "[+|-]PROVIDER_GLOB:EVENT_GLOB (e.g. 'net:*', '-net:rx'). Items are appended\n"
     "to the trace's list; the last item that matches an event decides. A bad\n"
     "pattern is refused and nothing is added.\n"},
    {"disable", cmd_disable, "NAME PATTERN...", "add patterns that turn events off",
     "Appends each PATTERN turned off ('net:*' becomes '-net:*'); see fdr help "
     "enable.\n"},
    {"filter", cmd_filter, "NAME MASK", "set a trace's 32-bit category mask",
     "MASK: 0x and 1 to 8 hex digits, or a decimal number below 2^32. Bit i is\n"
     "category i: an event whose category bits are c is recorded iff (c & MASK)\n"
     "!= 0; an event without a category is in category 0. Default 0xffffffff.\n"},
    {"start", cmd_start, "NAME", "start recording into a trace",
     "Sets the trace's active flag. Starting a started trace is an error.\n"},
    {"stop", cmd_stop, "NAME", "stop recording into a trace",
     "Clears the trace's active flag; its settings stay. Stopping a stopped\n"
     "trace is an error.\n"},
    {"destroy", cmd_destroy, "NAME", "remove a trace from fdrd",
     "The trace and its settings are gone; its name is free again.\n"},
    {"list", cmd_list, "[traces|processes|providers|events] [--json]",
     "list fdrd's traces (default), processes, providers or events",
     "processes: the connections that registered as processes; the pid shown is\n"
     "the kernel's (SO_PEERCRED), not the one a process claims. providers: handle,\n"
     "every identity field and the number of processes using it. With no fdrd\n"
     "running: \"no fdrd running (DIR)\", or an empty list with --json; exit 0.\n"},
    {"status", cmd_status, "[--json]", "show whether fdrd runs, and its counts",
     "With no fdrd running: \"no fdrd running (DIR)\" or {\"running\": false}; exit "
     "0.\n"},
    {0},
};
