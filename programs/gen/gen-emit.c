/* SPDX-License-Identifier: MIT */
/* gen-emit.c - fdr-gen's writer: parsed trace events to one C/C++ header.
 *
 * For an event `foo` of provider `net` the header defines
 *
 *     static inline void trace_foo(<arguments as declared>)
 *     {
 *         fdr_trace_fields(net, foo, "a,b", "a %d b %s", a, b);
 *     }
 *     static inline bool trace_foo_enabled(void) { return fdr_enabled(net, foo); }
 *     #define TRACE_FOO_ENABLED FDR__GEN_ON
 *     #define TRACE_FOO_BACKEND_DSTATE() trace_foo_enabled()
 *
 * DESIGN. Everything is static inline in the header: no .c file to build,
 * and fdr's call-site machinery (one static site per call, listed in the
 * "fdr_sites" section) works unchanged; a translation unit that never calls
 * an event emits nothing for it. fdr's macros pick each field's type from
 * the declared argument type at compile time (_Generic in C, templates in
 * C++), so the generator never needs to know what `hwaddr` is.
 *
 * TRACE_FOO_ENABLED is QEMU's compile-time constant: 1, or 0 for an event
 * marked `disable` or a build with -DFDR_DISABLE; it works in `#if`.
 * TRACE_FOO_BACKEND_DSTATE() is what QEMU's
 * trace_event_get_state_backends(TRACE_FOO) expands to, so existing guards
 * keep working. A `disable`d event keeps its function (callers compile
 * unchanged, its format is still checked against the argument types with
 * -Wformat) but its body is empty, and a macro of the same name wraps calls
 * in `0 && (call, 0)`: the arguments are type-checked against the
 * prototype and never evaluated, and the compiler sees the call in an
 * evaluated context, so a helper used only there is not reported unused
 * (which `sizeof(call)` would cause with clang). Every event gets the same
 * macro in a build with -DFDR_DISABLE.
 *
 * An argument consumed by %p whose type is a pointer is passed as
 * `(const void *)`: fdr records `char *` as a string, and %p on a char
 * buffer means "this address", not "read a string here". */
#include <errno.h>
#include <string.h>

#include "gen.h"

/* A file name inside a comment: no control bytes, no end of comment and
 * no "/" "*" (-Wcomment). */
static void put_comment_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        fputc(c < 0x20 || c >= 0x7f ? '?' : c, out);
        if ((c == '*' && s[1] == '/') || (c == '/' && s[1] == '*'))
            fputc(' ', out);
    }
}

static void put_upper(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(*s >= 'a' && *s <= 'z' ? *s - 32 : *s, out);
}

/* ", a, (const void *)(b)" */
static void put_call_args(FILE *out, const struct fdr__gen_event *ev)
{
    for (size_t i = 0; i < ev->nargs; i++) {
        const struct fdr__gen_arg *a = &ev->args[i];
        size_t tl = strlen(a->type);
        if (a->conv == 'p' && tl && a->type[tl - 1] == '*')
            fprintf(out, ", (const void *)(%s)", a->param);
        else
            fprintf(out, ", %s", a->param);
    }
}

static void put_event(FILE *out, const struct fdr__gen_event *ev, const char *provider)
{
    fprintf(out, "\n/* %s (", ev->name);
    put_comment_text(out, ev->file);
    fprintf(out, ":%u)%s */\n", ev->line, ev->disabled ? ", disabled" : "");
    fputs("#define TRACE_", out);
    put_upper(out, ev->name);
    fputs(ev->disabled ? "_ENABLED 0\n" : "_ENABLED FDR__GEN_ON\n", out);
    fputs("#define TRACE_", out);
    put_upper(out, ev->name);
    fprintf(out, "_BACKEND_DSTATE() trace_%s_enabled()\n", ev->name);

    fprintf(out, "static inline bool trace_%s_enabled(void)\n{\n", ev->name);
    if (ev->disabled)
        fputs("    return false;\n}\n", out);
    else
        fprintf(out, "    return fdr_enabled(%s, %s);\n}\n", provider, ev->name);

    fprintf(out, "static inline void trace_%s(", ev->name);
    if (!ev->nargs)
        fputs("void", out);
    for (size_t i = 0; i < ev->nargs; i++) {
        const struct fdr__gen_arg *a = &ev->args[i];
        size_t tl = strlen(a->type);
        fprintf(out, "%s%s%s%s", i ? ", " : "", a->type,
                a->type[tl - 1] == '*' ? "" : " ", a->param);
    }
    fputs(")\n{\n", out);
    if (ev->disabled) {
        if (ev->nargs) {
            fprintf(out, "    if (0)\n        fdr__gen_format_check(%s", ev->format);
            put_call_args(out, ev);
            fputs(");\n", out);
        }
    } else {
        fprintf(out, "    fdr_trace_fields(%s, %s, \"", provider, ev->name);
        for (size_t i = 0; i < ev->nargs; i++)
            fprintf(out, "%s%s", i ? "," : "", ev->args[i].name);
        fprintf(out, "\", %s", ev->format);
        put_call_args(out, ev);
        fputs(");\n", out);
    }
    fputs("}\n", out);
    /* when nothing is recorded, calls do not even evaluate their arguments */
    fputs("#if !TRACE_", out);
    put_upper(out, ev->name);
    fprintf(out,
            "_ENABLED\n"
            "#define trace_%s(...) ((void)(0 && (trace_%s(__VA_ARGS__), 0)))\n"
            "#endif\n",
            ev->name, ev->name);
}

int fdr__gen_emit(FILE *out, const struct fdr__gen_set *set,
                  const struct fdr__gen_opts *opts)
{
    fputs("/* Generated by fdr-gen from", out);
    for (size_t i = 0; i < opts->ninputs; i++) {
        fputs(i ? ", " : " ", out);
        put_comment_text(out, opts->inputs[i]);
    }
    fprintf(out,
            " (provider \"%s\").\n"
            " * Do not edit: change the trace-events file and run fdr-gen again.\n"
            " *\n"
            " * For each event foo:\n"
            " *   trace_foo(args)             records %s:foo through fdr\n"
            " *   trace_foo_enabled()         true while %s:foo is recorded or printed\n"
            " *   TRACE_FOO_ENABLED           1, or 0 for a `disable`d event or a build\n"
            " *                               with -DFDR_DISABLE (usable in #if)\n"
            " *   TRACE_FOO_BACKEND_DSTATE()  trace_foo_enabled(), for QEMU's\n"
            " *                               trace_event_get_state_backends() */\n",
            opts->provider, opts->provider, opts->provider);
    fprintf(out, "#ifndef %s\n#define %s\n\n", opts->guard, opts->guard);
    fputs("#include <inttypes.h>\n#include <stdbool.h>\n#include <stddef.h>\n"
          "#include <stdint.h>\n#include <sys/types.h>\n",
          out);
    for (size_t i = 0; i < opts->nincludes; i++) {
        const char *h = opts->includes[i];
        if (h[0] == '<')
            fprintf(out, "#include %s\n", h);
        else
            fprintf(out, "#include \"%s\"\n", h);
    }
    fputs("\n#include <fdr/fdr.h>\n\n"
          "#ifndef FDR__GEN_COMMON\n"
          "#define FDR__GEN_COMMON\n"
          "#ifdef FDR_DISABLE\n#define FDR__GEN_ON 0\n#else\n#define FDR__GEN_ON "
          "1\n#endif\n"
          "/* Checks a disabled event's format against its arguments; never called. */\n"
          "static inline __attribute__((format(printf, 1, 2))) void\n"
          "fdr__gen_format_check(const char *fmt, ...)\n{\n    (void)fmt;\n}\n"
          "#endif\n",
          out);
    if (set->nstructs) {
        /* a tag first seen in a parameter list would be scoped to it */
        fputc('\n', out);
        for (size_t i = 0; i < set->nstructs; i++)
            fprintf(out, "%s;\n", set->structs[i]);
    }
    for (size_t i = 0; i < set->n; i++)
        put_event(out, &set->events[i], opts->provider);
    fprintf(out, "\n#endif /* %s */\n", opts->guard);
    return ferror(out) ? -EIO : 0;
}
