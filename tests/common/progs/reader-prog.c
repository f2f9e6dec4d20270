/* SPDX-License-Identifier: MIT */
/* reader-prog.c - writes the trace that tests/common/test-reader.c reads
 * without libfdr: events of several field types (signed and unsigned
 * integers of each width, hex and octal, floats, strings, characters,
 * pointers, booleans) from the main thread and three others, so that
 * tests/common/test-reader.py can compare the reader's lines with the
 * ones FDR_TRACES printed live for the same events.
 *
 *   reader-prog N    each thread records N events of each class */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <fdr/fdr.h>

static int n_each;

static void *thread_main(void *arg)
{
    int t = (int)(long)arg;
    static const char *words[] = {"alpha", "", "with \"quotes\"", "tab\there"};
    for (int i = 0; i < n_each; i++) {
        fdr_trace(rd, ints, "t=%d i=%d i8=%hhd u16=%hu i64=%lld u64=%llu", t, i,
                  (signed char)(i - 100), (unsigned short)(i * 1000),
                  (long long)i * -123456789LL, 18446744073709551615ULL - (unsigned)i);
        fdr_trace(rd, bases, "hex=%#x HEX=%08X oct=%o ptr=%p", 0xbeefu + (unsigned)i,
                  (unsigned)i * 77u, 0755u, (void *)(uintptr_t)(0x1000u + (unsigned)i));
        fdr_trace(rd, floats, "f=%f g=%g e=%.3e", i / 3.0, (float)i * 0.5f, -1e300 * i);
        fdr_trace(rd, text, "s=%s c=%c b=%d", words[i % 4], (char)('a' + i % 26),
                  (bool)(i & 1));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    n_each = argc > 1 ? atoi(argv[1]) : 20;
    fdr_trace(rd, start, "threads=%d", 3);
    pthread_t th[3];
    for (long t = 0; t < 3; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(t + 1));
    thread_main((void *)0L);
    for (int t = 0; t < 3; t++)
        pthread_join(th[t], NULL);
    fdr_trace(rd, stop);
    return 0;
}
