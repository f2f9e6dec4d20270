/* SPDX-License-Identifier: MIT */
/* fdr-gen.c - trace-event definition files (QEMU syntax) to a C header.
 *
 *     fdr-gen --provider NAME [-o OUT.h] [--include HEADER]... [--strict] FILE...
 *
 * Reads every FILE ("-" is standard input) into one set of events under the
 * provider NAME and writes one header (to OUT.h, or standard output) that
 * defines trace_<event>() and friends on top of fdr_trace_fields(); see
 * gen-emit.c for what is generated and gen-parse.c for the accepted syntax.
 * --include adds `#include "HEADER"` (or `#include <HEADER>` when given
 * with the angle brackets) before the events, for the typedefs that the
 * argument types use (QEMU's hwaddr, ...).
 *
 * DESIGN. One bad line does not lose a file: each bad event is reported
 * as one line "file:line: message" on stderr and skipped, the others are
 * generated, and the status is 0 (a caller of the skipped trace_foo() then
 * fails to compile, which names it again). With --strict a bad line is an
 * error: nothing is written and the status is 1. Every file is parsed and
 * the whole header is built in memory before anything is written; the
 * header then goes to a temporary file in the output's directory, renamed
 * over OUT.h at the end. On any error the temporary is removed, OUT.h is
 * left as it was (absent or the previous version) and the exit status is
 * 1. Warnings (unknown properties) are "file:line: warning: ..." and do not
 * change the status. Usage errors exit with 2. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen.h"

/* Refuse input files larger than this: a trace-events file is text. */
#define INPUT_MAX (64u << 20)

static void usage(FILE *f)
{
    fputs("usage: fdr-gen --provider NAME [-o OUT.h] [--include HEADER]... [--strict] "
          "FILE...\n"
          "Writes a C/C++ header with trace_<event>() functions recording through fdr\n"
          "for the events of the trace-event definition files FILE (QEMU syntax).\n"
          "A bad event is reported as \"file:line: message\" and skipped; the rest is\n"
          "generated and the exit status is 0. With --strict a bad event is an error:\n"
          "nothing is written and the exit status is 1. Usage errors exit with 2.\n",
          f);
}

/* Prints a warning, or a bad line (ctx counts them). */
static void on_warn(void *ctx, const char *message)
{
    if (ctx)
        ++*(unsigned *)ctx;
    fprintf(stderr, "%s\n", message);
}

/* Reads all of `path` (or stdin for "-") into a malloc'd buffer. */
static int read_all(const char *path, char **data, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rbe") : stdin;
    if (!f)
        return -errno;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : -ENOMEM;
    while (!rc) {
        if (n == cap) {
            char *more = cap < INPUT_MAX ? realloc(buf, cap * 2) : NULL;
            if (!more) {
                rc = cap < INPUT_MAX ? -ENOMEM : -EFBIG;
                break;
            }
            buf = more;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = -EIO;
            break;
        }
    }
    if (f != stdin)
        fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    *data = buf;
    *len = n;
    return 0;
}

/* FDR_GEN_<PROVIDER>_<OUTPUT FILE NAME>, letters and digits kept, the rest
 * '_'. */
static char *make_guard(const char *provider, const char *out)
{
    const char *base = out ? strrchr(out, '/') : NULL;
    base = base ? base + 1 : out;
    size_t n = 8 + strlen(provider) + 1 + (base ? strlen(base) : 1) + 1;
    char *g = malloc(n);
    if (!g)
        return NULL;
    snprintf(g, n, "FDR_GEN_%s_%s", provider, base ? base : "H");
    for (char *p = g; *p; p++) {
        if (*p >= 'a' && *p <= 'z')
            *p = (char)(*p - 32);
        else if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            *p = '_';
    }
    return g;
}

/* Writes data to `path` through a temporary file renamed over it. */
static int write_atomically(const char *path, const char *data, size_t len)
{
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp)
        return -ENOMEM;
    snprintf(tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int e = -errno;
        free(tmp);
        return e;
    }
    /* mkstemp creates 0600; a header is an ordinary file */
    mode_t mask = umask(0);
    umask(mask);
    int rc = fchmod(fd, 0666 & ~mask) ? -errno : 0;
    for (size_t off = 0; !rc && off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = w < 0 ? -errno : -EIO;
        else
            off += (size_t)w;
    }
    if (close(fd) && !rc)
        rc = -errno;
    if (!rc && rename(tmp, path))
        rc = -errno;
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"provider", required_argument, NULL, 'p'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"include", required_argument, NULL, 'I'},
                                             {"strict", no_argument, NULL, 's'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *provider = NULL, *output = NULL;
    const char **includes = calloc((size_t)argc, sizeof(*includes));
    size_t nincludes = 0;
    int c, strict = 0;
    if (!includes)
        return 1;
    while ((c = getopt_long(argc, argv, "p:o:I:sh", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            provider = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'I':
            if (!*optarg || strpbrk(optarg, "\"\n") ||
                (optarg[0] == '<') != (optarg[strlen(optarg) - 1] == '>')) {
                fprintf(stderr, "fdr-gen: bad --include '%s'\n", optarg);
                free(includes);
                return 2;
            }
            includes[nincludes++] = optarg;
            break;
        case 's':
            strict = 1;
            break;
        case 'h':
            usage(stdout);
            free(includes);
            return 0;
        default:
            fputs("fdr-gen: see fdr-gen --help\n", stderr);
            free(includes);
            return 2;
        }
    }
    if (!provider || optind == argc) {
        fprintf(stderr, "fdr-gen: %s (see fdr-gen --help)\n",
                !provider ? "--provider NAME is required" : "no input file");
        free(includes);
        return 2;
    }
    if (!fdr__gen_valid_provider(provider)) {
        fprintf(stderr,
                "fdr-gen: provider '%s' is not a C identifier of at most %d bytes\n",
                provider, FDR__GEN_IDENT_MAX);
        free(includes);
        return 2;
    }

    struct fdr__gen_set set = {0};
    unsigned skipped = 0;
    char err[1024];
    int status = 1;
    char *guard = NULL, *text = NULL;
    size_t textlen = 0;
    for (int i = optind; i < argc; i++) {
        const char *name = strcmp(argv[i], "-") ? argv[i] : "<stdin>";
        char *data = NULL;
        size_t len = 0;
        int rc = read_all(argv[i], &data, &len);
        if (rc) {
            fprintf(stderr, "fdr-gen: %s: %s\n", name, strerror(-rc));
            goto out;
        }
        if (!strict) {
            set.on_error = on_warn;
            set.on_error_ctx = &skipped;
        }
        rc = fdr__gen_parse(&set, name, data, len, on_warn, NULL, err, sizeof(err));
        free(data);
        if (rc && (rc != -EINVAL || strict)) {
            fprintf(stderr, "%s\n", rc == -EINVAL ? err : "fdr-gen: out of memory");
            goto out;
        }
    }
    if (skipped)
        fprintf(stderr, "fdr-gen: %u bad event%s skipped (--strict makes %s an error)\n",
                skipped, skipped == 1 ? "" : "s", skipped == 1 ? "it" : "them");

    guard = make_guard(provider, output);
    FILE *mem = open_memstream(&text, &textlen);
    if (!guard || !mem) {
        if (mem)
            fclose(mem);
        fprintf(stderr, "fdr-gen: out of memory\n");
        goto out;
    }
    struct fdr__gen_opts opts = {provider,
                                 guard,
                                 includes,
                                 nincludes,
                                 (const char **)argv + optind,
                                 (size_t)(argc - optind)};
    int rc = fdr__gen_emit(mem, &set, &opts);
    if (fclose(mem) || rc) {
        fprintf(stderr, "fdr-gen: out of memory\n");
        goto out;
    }
    if (output) {
        rc = write_atomically(output, text, textlen);
        if (rc) {
            fprintf(stderr, "fdr-gen: %s: %s\n", output, strerror(-rc));
            goto out;
        }
    } else if (fwrite(text, 1, textlen, stdout) != textlen || fflush(stdout)) {
        fprintf(stderr, "fdr-gen: standard output: %s\n", strerror(errno));
        goto out;
    }
    status = 0;
out:
    free(text);
    free(guard);
    free(includes);
    fdr__gen_set_free(&set);
    return status;
}
