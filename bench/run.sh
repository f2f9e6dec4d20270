#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/run.sh [fdr-bench options] - the full side-by-side benchmark.
# Installs missing Debian packages (scripts/bench-deps.sh), configures and
# builds a release build in build-bench/ (or $FDR_BENCH_BUILD), then runs
# fdr-bench, which prints the tables and writes bench/results/latest.json.
# Options go to fdr-bench, e.g. `bench/run.sh --quick` or `--no-lttng`.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${FDR_BENCH_BUILD:-$top/build-bench}
"$top/scripts/bench-deps.sh"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFDR_BENCH=ON \
      -DFDR_SANITIZE= >/dev/null
# fdrd and fdr beside fdr-bench: its daemon, relay and scope sections run them.
cmake --build "$build" --target fdr-bench fdrd fdr-cli -j"$(nproc)"
exec "$build/bench/fdr-bench" "$@"
