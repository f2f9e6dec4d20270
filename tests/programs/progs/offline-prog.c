/* SPDX-License-Identifier: MIT */
/* offline-prog.c - writes traces for the tests of `fdr print`, `fdr stats`
 * and `fdr record` (tests/programs/test-fdr-offline-*.py).
 *
 *   offline-prog types N      main thread + 3 threads, each N rounds of the
 *                             classes below: every field type (bool, char,
 *                             i8..u64, float, double, pointer, string with
 *                             UTF-8 and cut by FDR_STRING_MAX, raw bytes),
 *                             edge values included
 *   offline-prog parent N     the same, after starting a second process
 *                             (fork + exec of itself: "types N") that
 *                             records into the same FDR_OUTPUT; waits for it
 *   offline-prog burst N [R]  R rounds (default 1) of: 2 threads, N events
 *                             each as fast as possible (with a small
 *                             FDR_BUFFER_SIZE: discards), then fdr_flush();
 *                             prints "emitted <total>"
 *   offline-prog exit CODE    one event, then exit(CODE)
 *   offline-prog kill SIG     one event, then raise(SIG) (default action)
 *   offline-prog sigcount     one event, prints "ready", waits for SIGINT
 *                             or SIGTERM, then 0.2 s more for a duplicate;
 *                             exits with the number of signals received */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fdr/fdr.h>

static int rounds;
static fdr_provider_t *raw;

static const char *const words[] = {
    "plain",
    "",
    "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xf0\x9f\x8e\x89",
    "with spaces and = signs",
    /* longer than FDR_STRING_MAX=32: cut on a character boundary, then "…" */
    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
    NULL,
};

static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < rounds; i++) {
        int edge = i % 3;
        bool b = i & 1;
        char c = (char)(edge == 0 ? -128 : edge == 1 ? 127 : 'a' + i % 26);
        int8_t i8 = edge == 0 ? INT8_MIN : edge == 1 ? INT8_MAX : (int8_t)(i - 50);
        int16_t i16 = edge == 0 ? INT16_MIN : edge == 1 ? INT16_MAX : (int16_t)(i * -300);
        int32_t i32 = edge == 0 ? INT32_MIN : edge == 1 ? INT32_MAX : i * -70000;
        int64_t i64 = edge == 0   ? INT64_MIN
                      : edge == 1 ? INT64_MAX
                                  : (int64_t)i * -5000000000LL;
        uint8_t u8 = edge == 0 ? 0 : edge == 1 ? UINT8_MAX : (uint8_t)i;
        uint16_t u16 = edge == 0 ? 0 : edge == 1 ? UINT16_MAX : (uint16_t)(i * 300);
        uint32_t u32 = edge == 0 ? 0 : edge == 1 ? UINT32_MAX : (uint32_t)i * 70000u;
        uint64_t u64 = edge == 0   ? 0
                       : edge == 1 ? UINT64_MAX
                                   : (uint64_t)i * 5000000000ULL;
        fdr_trace(ofl, ints,
                  "t=%d i=%d b=%d c=%d i8=%d i16=%d i32=%d i64=%lld u8=%u u16=%u u32=%u "
                  "u64=%llu",
                  t, i, b, c, i8, i16, i32, (long long)i64, u8, u16, u32,
                  (unsigned long long)u64);
        static const double dv[] = {0.0,        -0.0,   1.0 / 3.0, -2.5e-300, 1e300,
                                    123456.789, 5e-324, INFINITY,  -INFINITY, NAN};
        double d = dv[i % 10];
        float f = (float)(i % 10 == 9 ? NAN : dv[(i + 3) % 9] / 7.0);
        fdr_trace(ofl, reals, "t=%d i=%d f=%.9g d=%.17g", t, i, f, d);
        void *p =
            i % 4 == 0 ? NULL : (void *)(uintptr_t)(0x1000u * (unsigned)i + (unsigned)t);
        char ch = (char)('A' + i % 26);
        fdr_trace(ofl, ptrs, "t=%d i=%d ch=%c p=%p", t, i, ch, p);
        const char *s = words[i % 6];
        fdr_trace(ofl, text, "t=%d i=%d s=%s", t, i, s);
        unsigned char bytes[16];
        size_t n = (size_t)(i % 17);
        for (size_t k = 0; k < n; k++)
            bytes[k] = (unsigned char)(k * 37 + (size_t)i + (size_t)t);
        if (raw)
            fdr_raw_event(raw, 0, n ? bytes : NULL, n);
    }
    return NULL;
}

static void types(int n)
{
    rounds = n;
    fdr_provider_desc_t desc = FDR_PROVIDER_DESC_INIT("oraw", 1, 0x0f1);
    if (fdr_provider_register(&desc, &raw) < 0)
        raw = NULL;
    fdr_trace(ofl, start, "pid=%d", (int)getpid());
    pthread_t th[3];
    for (intptr_t t = 0; t < 3; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(t + 1));
    thread_main((void *)0);
    for (int t = 0; t < 3; t++)
        pthread_join(th[t], NULL);
    fdr_trace(ofl, stop);
}

static int burst_n;
static void *burst_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < burst_n; i++)
        fdr_trace(ofl, burst, "i=%d", i);
    return NULL;
}

static int got_sig;
static void on_sig(int sig)
{
    (void)sig;
    got_sig++;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "types";
    int n = argc > 2 ? atoi(argv[2]) : 10;
    if (strcmp(mode, "types") == 0) {
        types(n);
    } else if (strcmp(mode, "parent") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            char num[16];
            snprintf(num, sizeof num, "%d", n);
            execl("/proc/self/exe", argv[0], "types", num, (char *)NULL);
            _exit(127);
        }
        types(n);
        int st = 0;
        waitpid(pid, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    } else if (strcmp(mode, "burst") == 0) {
        burst_n = n;
        int rounds = argc > 3 ? atoi(argv[3]) : 1;
        for (int r = 0; r < rounds; r++) {
            pthread_t th[2];
            for (int t = 0; t < 2; t++)
                pthread_create(&th[t], NULL, burst_thread, NULL);
            for (int t = 0; t < 2; t++)
                pthread_join(th[t], NULL);
            fdr_flush(); /* the discards of this round in a packet of their own */
        }
        printf("emitted %d\n", 2 * n * rounds);
    } else if (strcmp(mode, "exit") == 0) {
        fdr_trace(ofl, bye, "code=%d", n);
        exit(n);
    } else if (strcmp(mode, "kill") == 0) {
        fdr_trace(ofl, bye, "sig=%d", n);
        signal(n, SIG_DFL);
        raise(n);
        return 100;
    } else if (strcmp(mode, "sigcount") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sig;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        fdr_trace(ofl, wait, "pid=%d", (int)getpid());
        printf("ready\n");
        fflush(stdout);
        while (!got_sig)
            pause();
        struct timespec ts = {0, 200 * 1000 * 1000};
        while (nanosleep(&ts, &ts) != 0)
            ;
        return got_sig;
    } else {
        fprintf(stderr, "offline-prog: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
