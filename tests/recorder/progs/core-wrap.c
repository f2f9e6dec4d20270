/* SPDX-License-Identifier: MIT */
/* core-wrap.c - events whose times need the whole clock rebuilt from the
 * 32 bits an event header keeps (fastpath.h), for
 * tests/recorder/test-core-wrap.py and tests/programs/test-fdr-daemon-wrap.py.
 *
 *   core-wrap MODE [DIR]
 *
 * Every event wrap:ev carries `before`, the clock (fdr__now) read just
 * before it, so its timestamp must lie in [before, the next event's
 * before]: a time rebuilt wrong is off by 2^32 ticks. Phase 0 records a
 * burst; phase 1 one event every 20 ms for 2^32 + 2^28 ticks (the packet
 * they go in spans a multiple of 2^32: its low 32 bits wrap, and then its
 * limit ends it); phase 2 waits as long without an event (a packet left
 * open that long would need two wraps), then a burst. wrap:end closes it.
 * MODE: "run" ends there; "snapshot" takes fdr_snapshot(DIR); "crash"
 * aborts (FDR_CRASH_DIR keeps the dump); "go" first waits for a line on
 * stdin, then prints "done" and waits for the end of stdin. Prints
 * "emitted N" (wrap:ev events) on stdout. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fdr/fdr.h>
#include <fdr/internal/fastpath.h>

static unsigned emitted;

static void ev(unsigned phase, unsigned i)
{
    uint64_t before = fdr__now();
    fdr_trace(wrap, ev, "before=%" PRIu64 " phase=%u i=%u", before, phase, i);
    emitted++;
}

static void sleep_ms(long ms)
{
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&d, NULL);
}

/* Calls ev() every `every_ms` (none with 0) until the clock moved
 * 2^32 + 2^28 ticks; fails after 120 s of wall time (a clock that
 * stopped, or one far slower than any TSC). */
static void span(unsigned phase, long every_ms)
{
    uint64_t from = fdr__now(), want = ((uint64_t)1 << 32) + ((uint64_t)1 << 28);
    time_t t0 = time(NULL);
    for (unsigned i = 0; fdr__now() - from < want; i++) {
        if (time(NULL) - t0 > 120) {
            fprintf(stderr,
                    "core-wrap: the clock moved %" PRIu64 " ticks in 120 s, "
                    "waited for %" PRIu64 "\n",
                    fdr__now() - from, want);
            exit(2);
        }
        if (every_ms)
            ev(phase, i);
        sleep_ms(every_ms ? every_ms : 10);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "run";
    char line[64];
    if (!strcmp(mode, "go") && !fgets(line, sizeof line, stdin))
        return 1;
    for (unsigned i = 0; i < 100; i++)
        ev(0, i);
    span(1, 20);
    span(2, 0);
    for (unsigned i = 0; i < 100; i++)
        ev(2, i);
    uint64_t before = fdr__now();
    fdr_trace(wrap, end, "before=%" PRIu64, before);
    printf("emitted %u\n", emitted);
    fflush(stdout);
    if (!strcmp(mode, "snapshot"))
        return fdr_snapshot(argv[2]) == 0 ? 0 : 1;
    if (!strcmp(mode, "crash"))
        abort();
    if (!strcmp(mode, "go")) {
        printf("done\n");
        fflush(stdout);
        while (fgets(line, sizeof line, stdin))
            ;
    }
    return 0;
}
