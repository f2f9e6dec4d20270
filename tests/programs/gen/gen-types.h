/* gen-types.h - the types of tests/gen/ok/syntax.trace-events that fdr-gen
 * cannot know (passed with --include, as QEMU's osdep.h would be). */
#ifndef GEN_TYPES_H
#define GEN_TYPES_H
#include <stdint.h>

typedef uint64_t hwaddr;
struct GenDev {
    int id;
};
typedef enum { GEN_MODE_A = 1, GEN_MODE_B = 7 } GenMode;
#endif
