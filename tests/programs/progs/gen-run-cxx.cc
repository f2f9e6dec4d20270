/* SPDX-License-Identifier: MIT */
// gen-run-cxx.cc - gen-run.c compiled as C++17: the generated header and
// fdr's C++ path must record exactly what the C build records.
#include "gen-run.c"
