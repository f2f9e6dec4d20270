# SPDX-License-Identifier: MIT
# Copyright (c) 2026 the fdr authors
#
# Permission is hereby granted, free of charge, to any person obtaining a copy
# of this software and associated documentation files (the "Software"), to
# deal in the Software without restriction, including without limitation the
# rights to use, copy, modify, merge, publish, distribute, sublicense, and/or
# sell copies of the Software, and to permit persons to whom the Software is
# furnished to do so, subject to the following conditions:
#
# The above copyright notice and this permission notice shall be included in
# all copies or substantial portions of the Software.
#
# THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
# IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
# FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
# AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
# LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING
# FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS
# IN THE SOFTWARE.

"""
fdr back-end for QEMU's tracetool (scripts/tracetool/backend/fdr.py).

Each trace point becomes an fdr call-site event: _nocheck__trace_foo()
calls fdr_trace_fields(PROVIDER, foo, "a,b", FMT, a, b), where PROVIDER is
the trace-events file's directory (tracetool's group: "block", "hw_usb",
...; the top directory's file, group "root", is "qemu"). What fdr records
or prints is fdr's choice (FDR_EVENTS, FDR_TRACES, `fdr control`); QEMU's
own state (-trace, the trace-event monitor command) keeps driving the other
back-ends of the same build. TRACE_FOO_BACKEND_DSTATE() includes
fdr_enabled(), so QEMU's trace_event_get_state_backends() guards are true
when fdr records the event.

Field types come from the C arguments (fdr picks them with _Generic), so
this module needs no table of QEMU types. The one rewrite: an argument
printed with %p whose type is a pointer is passed as (const void *), so that
a char * shown with %p records the address, not a string. The event's
format is passed unchanged (string literals and PRI macros); fdr checks it
against the arguments at compile time.
"""

import re

PUBLIC = True

# Only tracetool's out() is needed; the module stays importable without
# QEMU's tree so that fdr's own tests can drive it (contrib/qemu/test/).
try:
    from tracetool import out
except ImportError:  # pragma: no cover - set by the caller
    out = None


def provider(group):
    """fdr provider of a tracetool group: the directory, "qemu" at the top."""
    return "qemu" if group == "root" else group


def _format_text(fmt):
    """The pieces of a C format expression: ('s', literal text) for each
    string literal (escapes kept as written) and ('m', NAME) for each macro
    between them (PRIx64, TARGET_FMT_lx, ...)."""
    pieces = []
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c == '"':
            j = i + 1
            while j < len(fmt) and fmt[j] != '"':
                j += 2 if fmt[j] == "\\" else 1
            pieces.append(("s", fmt[i + 1 : j]))
            i = j + 1
        elif c.isalpha() or c == "_":
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", fmt[i:])
            pieces.append(("m", m.group(0)))
            i += len(m.group(0))
        else:
            i += 1
    return pieces


def pointer_args(fmt):
    """Indexes of the arguments consumed by a %p conversion of fmt.

    Walks the conversions in order; a '*' width or precision consumes an
    argument of its own. A PRI macro ends the conversion it follows, and a
    macro standing alone (TARGET_FMT_lx) is a whole conversion."""
    arg = 0
    found = []
    conv = None  # text of the conversion being read, None outside one
    for kind, text in _format_text(fmt):
        if kind == "m":
            if conv is None:
                # a whole conversion from a macro (TARGET_FMT_*)
                arg += 1
            else:
                arg += 1  # PRIx64 and friends end the conversion
                conv = None
            continue
        k = 0
        while k < len(text):
            ch = text[k]
            if conv is None:
                if ch == "%":
                    if k + 1 < len(text) and text[k + 1] == "%":
                        k += 2
                        continue
                    conv = ""
                k += 1
                continue
            if ch == "*":
                arg += 1
            elif ch in "diouxXcseEfFgGaAp":
                if ch == "p":
                    found.append(arg)
                arg += 1
                conv = None
            # flags, width, precision, length modifiers: keep reading
            k += 1
    return found


def _field_name(name):
    # vcpu events get the implicit argument __cpu: the field is "cpu"
    return name.lstrip("_") or name


def call(event, group):
    """The fdr_trace_fields() statement of one event."""
    fmt = event.fmt if isinstance(event.fmt, str) else event.fmt[-1]
    # "??" would be a trigraph for a compiler in strict ISO mode
    fmt = fmt.strip().replace("??", "?\\?") or '""'
    names = list(event.args.names())
    types = list(event.args.types())
    ptr = set(pointer_args(fmt))
    values = []
    for i, (t, n) in enumerate(zip(types, names)):
        if i in ptr and t.strip().endswith("*"):
            values.append("(const void *)(%s)" % n)
        else:
            values.append(n)
    return 'fdr_trace_fields(%s, %s, "%s", %s%s);' % (
        provider(group),
        event.name,
        ",".join(_field_name(n) for n in names),
        fmt,
        "".join(", " + v for v in values),
    )


def generate_h_begin(events, group):
    out('#include <fdr/fdr.h>', '')


def generate_h(event, group):
    out('    %(call)s', call=call(event, group))


def generate_h_backend_dstate(event, group):
    out('    fdr_enabled(%(prov)s, %(name)s) || \\',
        prov=provider(group), name=event.name)
