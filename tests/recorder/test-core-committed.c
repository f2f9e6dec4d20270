/* SPDX-License-Identifier: MIT */
/* test-core-committed.c - a reader with only the buffer's mapping finds
 * every committed event of the open packet, and no byte of a half-written
 * one, after the writer is stopped (SIGSTOP) or killed (SIGKILL).
 *
 *     test-core-committed stop|kill ROUNDS
 *
 * Each round forks a writer process that records fdr_trace(committed, ev,
 * "a=%u b=%u", i, ~i) for i = 0, 1, 2, ... as fast as it can (18-byte
 * events: 10 of header, two u32), stores i + 1 in a shared counter after
 * each event, and reports the counter through a pipe every 64 events. The
 * test opens the writer's buffer through /proc/PID/fd/N, stops or kills it
 * at a random moment, maps the buffer and asks fdr__committed() (lib/common)
 * for the open packet (none when the writer stopped between closing one
 * packet and opening the next: then the last closed one holds them all). It checks that
 * the committed bytes are the header and whole events; that every event has a = previous
 * + 1, b = ~a and a non-decreasing time, starting right after the last event of the
 * packet before (or at 0); and that the last one is the writer's last: counter - 1, or
 * counter when the writer was stopped between its commit and its store of the counter,
 * and never less than the pipe reported. A commit that published its position before the
 * event's bytes would show a partial event (b != ~a) in some rounds; one that did not
 * publish it would show too few events. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fdr/fdr.h>

#include "check.h"
#include "common/committed.h"
#include "common/ring.h"

/* u16 id + u32 clock low bits (fastpath.h) + two u32 fields */
#define EV_SIZE (FDR__EVENT_HEADER_SIZE + 8)

/* A failed expectation is a check.h failure (the FAIL line, then the
 * round) and ends this round's check: what follows would read garbage. */
#define EXPECT(cond, ...)                                                                \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            CHECK_MSG(0, __VA_ARGS__);                                                   \
            printf("  in round %d\n", round);                                            \
            return -1;                                                                   \
        }                                                                                \
    } while (0)

static void writer(int out, uint64_t *counter)
{
    for (uint32_t i = 0;; i++) {
        fdr_trace(committed, ev, "a=%u b=%u", i, ~i);
        __atomic_store_n(counter, (uint64_t)i + 1, __ATOMIC_RELEASE);
        if ((i & 63) == 0) {
            uint64_t c = (uint64_t)i + 1;
            if (write(out, &c, sizeof c) < 0 && errno != EAGAIN)
                _exit(3);
        }
    }
}

/* The writer's buffer: its memfd named fdr-buffer, opened while it runs. */
static int open_buffer(pid_t pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    int fd = -1;
    struct dirent *e;
    while (d && fd < 0 && (e = readdir(d))) {
        char path[384], link[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n > 0) {
            link[n] = 0;
            if (strncmp(link, "/memfd:fdr-buffer", 17) == 0)
                fd = open(path, O_RDONLY | O_CLOEXEC);
        }
    }
    if (d)
        closedir(d);
    return fd;
}

static int last_a(const char *slot, size_t bytes, uint32_t *a)
{
    if (bytes < sizeof(struct fdr__pkt) + EV_SIZE)
        return 0;
    memcpy(a, slot + bytes - 8, 4);
    return 1;
}

static int check(int round, const char *map, size_t size, uint64_t counter,
                 uint64_t reported)
{
    struct fdr__open_packet op;
    int r = fdr__committed(map, size, &op);
    const struct fdr__buf_hdr *h = (const void *)map;
    EXPECT(r >= 0, "fdr__committed: %d", r);
    if (r == 0) { /* stopped between two packets: all is in the closed one */
        op.seq = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
        op.offset = 0;
        op.bytes = sizeof(struct fdr__pkt);
        EXPECT(op.seq > 0, "no packet at all");
    }
    const char *slot = map + op.offset;
    size_t body = op.bytes - sizeof(struct fdr__pkt);
    EXPECT(body % EV_SIZE == 0, "committed %zu bytes of events: not whole events", body);
    uint32_t next = 0;
    if (op.seq > 0) {
        const char *prev = map + FDR__BUF_HEADER +
                           (size_t)((op.seq - 1) % h->n_packets) * h->packet_size;
        struct fdr__pkt ph;
        memcpy(&ph, prev, sizeof ph);
        EXPECT(ph.seq == op.seq - 1 && last_a(prev, ph.content_size / 8, &next),
               "packet %llu before the open one is not there",
               (unsigned long long)op.seq - 1);
        next++;
    }
    struct fdr__pkt oh;
    memcpy(&oh, slot, sizeof oh);
    uint64_t ts_prev = oh.ts_begin; /* the times rebuilt as a reader does */
    uint16_t id0 = 0;
    for (size_t k = 0; k < body / EV_SIZE; k++) {
        const char *e = slot + sizeof(struct fdr__pkt) + k * EV_SIZE;
        uint16_t id;
        uint32_t low, a, b;
        memcpy(&id, e, 2);
        memcpy(&low, e + 2, 4);
        memcpy(&a, e + FDR__EVENT_HEADER_SIZE, 4);
        memcpy(&b, e + FDR__EVENT_HEADER_SIZE + 4, 4);
        uint64_t ts = fdr__ts_full(ts_prev, low);
        if (k == 0)
            id0 = id;
        EXPECT(id == id0 && a == next && b == ~a && ts >= ts_prev,
               "event %zu of the open packet: id %u a %u b %#x ts %llu, expected id %u "
               "a %u b %#x",
               k, id, a, b, (unsigned long long)ts, id0, next, ~next);
        ts_prev = ts;
        next++;
    }
    /* next is now one past the last committed event's a */
    EXPECT(next == counter || next == counter + 1,
           "last committed event is a=%u, the writer's counter says %llu", next - 1,
           (unsigned long long)counter);
    EXPECT(next >= reported, "found %u events, the pipe reported %llu", next,
           (unsigned long long)reported);
    return 0;
}

static int one_round(int round, int sig)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return perror("pipe"), -1;
    uint64_t *counter =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (counter == MAP_FAILED)
        return perror("mmap"), -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        fcntl(fds[1], F_SETFL, O_NONBLOCK);
        writer(fds[1], counter);
    }
    close(fds[1]);
    uint64_t reported = 0;
    if (read(fds[0], &reported, sizeof reported) != sizeof reported) /* first event */
        return fprintf(stderr, "round %d: the writer did not start\n", round), -1;
    int buf = open_buffer(pid);
    /* a random moment: 0 to ~20 ms of recording, many packets */
    struct timespec d = {0, (long)(rand() % 20000) * 1000};
    nanosleep(&d, NULL);
    kill(pid, sig);
    int st;
    waitpid(pid, &st, sig == SIGSTOP ? WUNTRACED : 0);
    uint64_t c = __atomic_load_n(counter, __ATOMIC_ACQUIRE);
    /* drain what the pipe holds: the writer is stopped or dead */
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    uint64_t v;
    while (read(fds[0], &v, sizeof v) == sizeof v)
        reported = v;
    close(fds[0]);
    int r = -1;
    struct stat sb;
    if (buf < 0 || fstat(buf, &sb) < 0) {
        CHECK_MSG(0, "round %d: no fdr-buffer memfd in /proc/%d/fd", round, (int)pid);
    } else {
        void *map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, buf, 0);
        if (map == MAP_FAILED) {
            CHECK_MSG(0, "round %d: mmap buffer: %s", round, strerror(errno));
        } else {
            r = check(round, map, (size_t)sb.st_size, c, reported);
            munmap(map, (size_t)sb.st_size);
        }
        close(buf);
    }
    if (sig == SIGSTOP) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    munmap(counter, 4096);
    return r;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "stop") && strcmp(argv[1], "kill"))) {
        fprintf(stderr, "usage: test-core-committed stop|kill ROUNDS\n");
        return 2;
    }
    int sig = strcmp(argv[1], "stop") == 0 ? SIGSTOP : SIGKILL;
    int rounds = atoi(argv[2]);
    srand((unsigned)getpid());
    for (int i = 0; i < rounds && check_failures < 5; i++)
        one_round(i, sig);
    printf("%s: %d rounds, %d failed\n", argv[1], rounds, check_failures);
    return check_status();
}
