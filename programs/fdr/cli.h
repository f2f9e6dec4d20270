/* SPDX-License-Identifier: MIT */
/* cli.h - what the verbs of the `fdr` command share (programs/fdr only).
 *
 * The command is one binary with lttng-like verbs. Each group of verbs
 * lives in its own file and exports one table (terminated by a NULL name);
 * main.c lists the tables, dispatches, and prints `fdr help [VERB]`.
 *
 * Conventions every verb follows:
 *   - argv[0] is the verb's name; options are parsed with getopt_long;
 *   - an error a person can make is ONE line on stderr, "fdr VERB: what is
 *     wrong", and a non-zero status: 2 for a usage error, 1 otherwise;
 *   - --json (where offered) prints one JSON document on stdout and
 *     nothing else there. */
#ifndef FDR_PROGRAMS_CLI_H
#define FDR_PROGRAMS_CLI_H

#include <stdio.h>

struct cli_verb {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;   /* "NAME [-o DIR] ...", after "fdr VERB " */
    const char *summary; /* one line, for `fdr help` */
    const char *help;    /* the rest of `fdr help VERB`, may be NULL */
};

/* The tables, one per file (NULL-name terminated). */
extern const struct cli_verb cli_verbs_session[]; /* session.c: fdrd's traces */
extern const struct cli_verb cli_verbs_record[];  /* record.c */
extern const struct cli_verb cli_verbs_offline[]; /* print, stats, ... */
extern const struct cli_verb cli_verbs_export[];  /* export.c: Perfetto, Chrome JSON */
extern const struct cli_verb cli_verbs_recover[]; /* recover.c: file-backed buffers */
extern const struct cli_verb cli_verbs_scope[];   /* scope.c: the live web page */
extern const struct cli_verb cli_verbs_steer[];   /* steer.c: fdr control */

/* Prints "fdr VERB: message\n" on stderr; returns status. */
int cli_fail(int status, const char *verb, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prints the usage line of `verb` to f. */
void cli_usage(FILE *f, const char *verb);

#endif
