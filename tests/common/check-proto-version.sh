#!/bin/sh
# SPDX-License-Identifier: MIT
# check-proto-version.sh SRCDIR - the protocol version docs/daemon.md
# states is the one lib/proto/proto.h defines (FDR_PROTO_VERSION), which
# fdrd and libfdr refuse any other than: a doc that says 1 while the code
# is at 2 sends whoever writes a client to a refusal. Prints one line and
# fails when they differ or either cannot be read.
src=$1
code=$(sed -n 's/^#define FDR_PROTO_VERSION \([0-9][0-9]*\).*/\1/p' "$src/lib/proto/proto.h")
doc=$(tr '\n' ' ' < "$src/docs/daemon.md" |
      sed -n 's/.*`version` is \([0-9][0-9]*\).*/\1/p')
if [ -z "$code" ] || [ -z "$doc" ]; then
    echo "cannot read the version: proto.h says '$code', docs/daemon.md says '$doc'"
    exit 1
fi
if [ "$code" != "$doc" ]; then
    echo "docs/daemon.md says the protocol version is $doc; lib/proto/proto.h has FDR_PROTO_VERSION $code"
    exit 1
fi
echo "protocol version $code in both"
