/* SPDX-License-Identifier: MIT */
/* gen-run.c - calls every event fdr-gen generated from
 * tests/programs/gen/ok/syntax.trace-events and second.trace-events (header
 * gen-syntax.h, provider "gent") with known values; tests/programs/gen/check-run.py
 * reads the trace back with babeltrace2 and compares. Built as C11 and,
 * through gen-run-cxx.cc, as C++17: both must record the same events.
 *
 * Prints on stdout what only the program knows (addresses) and what the
 * enabled checks said, as key=value lines. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gen-syntax.h"

/* QEMU's compile-time constants work in #if */
#ifdef FDR_DISABLE
#define GEN_ON 0
#else
#define GEN_ON 1
#endif
#if TRACE_GEN_VOID_ENABLED != GEN_ON || TRACE_GEN_DISABLED_ENABLED != 0 ||               \
    TRACE_GEN_DISABLED_VOID_ENABLED != 0
#error "TRACE_*_ENABLED constants are wrong"
#endif

/* QEMU's trace/control.h spells the dynamic check like this */
#define trace_event_get_state_backends(id) ((id##_ENABLED) && id##_BACKEND_DSTATE())

static int calls;
static int counted(int v)
{
    calls++;
    return v;
}

int main(void)
{
    struct GenDev dev = {42};
    struct CPUState cpu = {1};
    char buf[] = "buffer";
    uint8_t data[4] = {1, 2, 3, 4};

    trace_gen_void();
    trace_gen_empty();
    trace_gen_noformat();
    trace_gen_indented(-7);
    trace_gen_ints(-8, 200, -16000, 65000, -2000000000, 4000000000u, INT64_MIN,
                   UINT64_MAX, -5L, 123456789012345ULL, (size_t)77, (ssize_t)-77);
    trace_gen_split(0x1122334455667788ULL, 4096, (hwaddr)0xfee00000u);
    trace_gen_strings("alpha", buf, NULL);
    trace_gen_pointers(&dev, data, buf, &dev);
    trace_gen_misc(true, 'Z', 2.5, 0.25f, GEN_MODE_B, 0xbeefu, "s");
    trace_gen_escapes(100);
    trace_gen_literals(1, 2);
    trace_gen_keywords(1, 2, 3);
    trace_gen_star(8, 0xab, 3, "abcdef", 8);
    trace_gen_prix(5, 0xff);
    trace_gen_tcg(&cpu, 0x1000, 3);
    trace_gen_vcpu(&cpu);
    trace_gen_target(0x4000, 0x5000);
    /* a disabled event records nothing and does not evaluate its arguments */
    trace_gen_disabled(counted(5), "never");
    trace_gen_disabled_void();
    trace_gen_second(counted(9));
    trace_gen_last(-1234567890123LL);

    printf("dev=%" PRIuPTR "\n", (uintptr_t)&dev);
    printf("data=%" PRIuPTR "\n", (uintptr_t)data);
    printf("buf=%" PRIuPTR "\n", (uintptr_t)buf);
    printf("cpu=%" PRIuPTR "\n", (uintptr_t)&cpu);
    printf("calls=%d\n", calls);
    printf("void_enabled=%d\n", (int)trace_gen_void_enabled());
    printf("void_state=%d\n", (int)trace_event_get_state_backends(TRACE_GEN_VOID));
    printf("disabled_enabled=%d\n", (int)trace_gen_disabled_enabled());
    printf("disabled_state=%d\n",
           (int)trace_event_get_state_backends(TRACE_GEN_DISABLED));
    return 0;
}
