/* SPDX-License-Identifier: MIT */
/* main.c - the `fdr` command: verb dispatch and help.
 *
 *     fdr VERB [ARGS...]      run a verb
 *     fdr help [VERB]         list the verbs, or one verb's help
 *     fdr VERB --help         the same as fdr help VERB
 *
 * The verbs are in tables, one per file (cli.h); this file only finds the
 * verb and prints help. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct cli_verb *const tables[] = {
    cli_verbs_session, cli_verbs_record, cli_verbs_offline, cli_verbs_export,
    cli_verbs_recover, cli_verbs_steer,  cli_verbs_scope,
};

static const struct cli_verb *find(const char *name)
{
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        for (const struct cli_verb *v = tables[i]; v->name; v++)
            if (strcmp(v->name, name) == 0)
                return v;
    return NULL;
}

int cli_fail(int status, const char *verb, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fdr %s: ", verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return status;
}

void cli_usage(FILE *f, const char *verb)
{
    const struct cli_verb *v = find(verb);
    if (v)
        fprintf(f, "usage: fdr %s %s\n", v->name, v->usage);
}

static void list(FILE *f)
{
    fputs("usage: fdr VERB [ARGS...]   (fdr help VERB for one verb)\n\nverbs:\n", f);
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        for (const struct cli_verb *v = tables[i]; v->name; v++)
            fprintf(f, "  %-10s %s\n", v->name, v->summary);
}

static int help(const char *name)
{
    if (!name) {
        list(stdout);
        return 0;
    }
    const struct cli_verb *v = find(name);
    if (!v)
        return cli_fail(2, "help", "unknown verb '%s' (fdr help lists them)", name);
    printf("usage: fdr %s %s\n%s\n", v->name, v->usage, v->summary);
    if (v->help)
        printf("\n%s", v->help);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        list(stderr);
        return 2;
    }
    const char *verb = argv[1];
    if (strcmp(verb, "help") == 0 || strcmp(verb, "--help") == 0 ||
        strcmp(verb, "-h") == 0)
        return help(argc > 2 ? argv[2] : NULL);
    if (strcmp(verb, "--version") == 0) {
        printf("fdr %s\n", FDR_CLI_VERSION);
        return 0;
    }
    const struct cli_verb *v = find(verb);
    if (!v) {
        fprintf(stderr, "fdr: unknown verb '%s' (fdr help lists them)\n", verb);
        return 2;
    }
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return help(verb);
    return v->run(argc - 1, argv + 1);
}
