/* SPDX-License-Identifier: MIT */
/* gen-types.h - the types of tests/programs/gen/ok/syntax.trace-events that fdr-gen
 * cannot know (passed with --include, as QEMU's osdep.h would be). */
#ifndef GEN_TYPES_H
#define GEN_TYPES_H
#include <inttypes.h>
#include <stdint.h>

typedef uint64_t hwaddr;
struct GenDev {
    int id;
};
typedef enum { GEN_MODE_A = 1, GEN_MODE_B = 7 } GenMode;
/* what QEMU's headers define for the vcpu and TARGET_FMT_* events */
struct CPUState {
    int cpu_index;
};
#define TARGET_FMT_lx "%016" PRIx64
#define TARGET_FMT_plx "%016" PRIx64
#endif
