#!/bin/sh
# SPDX-License-Identifier: MIT
# check-atomics.sh NM FILE... - no atomic operation of libfdr, fdrd or fdr
# is a call into libatomic (__atomic_*, __sync_*): where the target has no
# lock-free 64-bit atomics, libatomic takes a lock, and the crash handler
# (which reads rings another thread may be writing) or a child forked while
# a thread held that lock could wait for ever (issue 30's 32-bit review:
# on armhf and i686 they are inline, ldrexd/strexd and cmpxchg8b). Run in
# every build, the cross stage's too, with the target's nm.
set -u
nm=$1
shift
bad=0
for f in "$@"; do
    calls=$("$nm" -D --undefined-only "$f" | awk '{print $NF}' | grep -E '^(__atomic_|__sync_)' |
        sort -u | tr '\n' ' ')
    if [ -n "$calls" ]; then
        echo "FAIL: $f calls $calls(atomics that are not lock-free on this target)"
        bad=1
    fi
done
[ "$bad" = 0 ] && echo "ok: $# files, no call into libatomic"
exit $bad
