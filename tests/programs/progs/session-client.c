/* SPDX-License-Identifier: MIT */
/* session-client.c - a stand-in for a traced process talking to fdrd,
 * driven line by line on stdin (links fdr_proto + fdr_common only):
 *
 *   process NAME                       REGISTER_PROCESS (claims pid+1000000)
 *   provider NAME NEVENTS CHECKSUM LONG  REGISTER_PROVIDER, sizeof(long) =
 *                                      LONG, the rest from the compiler
 *   unregister HANDLE                  UNREGISTER_PROVIDER
 *   exit                               exit(0) at once (no goodbye)
 *   create NAME DIR | enable NAME PATTERN | start NAME | stop NAME |
 *   destroy NAME                       the trace verbs, as `fdr` sends them
 *                                      (many in a row without a process each)
 *   sleep MS                           waits MS milliseconds (no output)
 *
 * Each command prints one line on stdout: "ok VALUE" or "error STATUS
 * TEXT". Usage: session-client SOCKET. Used by test-fdr-session-providers.py:
 * same provider from two processes shares a handle; one differing in
 * long_size or checksum does not; references drop on exit and SIGKILL. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/proto.h"

static uint64_t rx[FDR_PROTO_MSG_MAX / 8];
static uint32_t seq;

static void call(int fd, void *msg, size_t len, unsigned type)
{
    fdr__proto_init(msg, len, type, ++seq);
    if (fdr__proto_send(fd, msg, len, NULL, 0) < 0) {
        printf("error send\n");
        exit(1);
    }
    int fds[FDR_PROTO_FDS_MAX], nfds;
    long n = fdr__proto_recv(fd, rx, sizeof rx, fds, &nfds, 0);
    char why[200];
    if (n <= 0 || fdr__proto_check(rx, (size_t)n, nfds, why, sizeof why) < 0) {
        printf("error recv %ld\n", n);
        exit(1);
    }
    const void *b = rx;
    const struct fdr__msg_reply *r = b;
    if (r->h.type != FDR__MSG_REPLY || r->h.seq != seq) {
        printf("error reply type %u\n", r->h.type);
        exit(1);
    }
    if (r->h.status)
        printf("error %u %s\n", r->h.status, r->text);
    else
        printf("ok %u\n", r->value);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: session-client SOCKET\n");
        return 2;
    }
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", argv[1]);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        perror("connect");
        return 1;
    }
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        char name[128], arg[256];
        unsigned long nevents, checksum, lsize, handle;
        int k;
        if (sscanf(line, "process %127s", name) == 1) {
            struct fdr__msg_register_process m;
            memset(&m, 0, sizeof m);
            m.pid = (uint32_t)getpid() + 1000000; /* a lie fdrd must not believe */
            m.ppid = (uint32_t)getppid();
            m.sizeof_int = sizeof(int);
            m.sizeof_long = sizeof(long);
            m.sizeof_pointer = sizeof(void *);
            m.sizeof_size_t = sizeof(size_t);
            fdr__proto_set_str(m.name, sizeof m.name, name);
            call(fd, &m, sizeof m, FDR__MSG_REGISTER_PROCESS);
        } else if (sscanf(line, "provider %63s %lu %lu %lu", name, &nevents, &checksum,
                          &lsize) == 4) {
            struct fdr__msg_register_provider m;
            memset(&m, 0, sizeof m);
            m.size = sizeof(fdr_provider_desc_t);
            m.nevents = (uint32_t)nevents;
            m.checksum = (uint32_t)checksum;
            m.alignment = _Alignof(long long);
            m.sizeof_int = sizeof(int);
            m.sizeof_long = (uint32_t)lsize;
            m.sizeof_pointer = sizeof(void *);
            m.sizeof_size_t = sizeof(size_t);
            fdr__proto_set_str(m.name, sizeof m.name, name);
            call(fd, &m, sizeof m, FDR__MSG_REGISTER_PROVIDER);
        } else if (sscanf(line, "unregister %lu", &handle) == 1) {
            struct fdr__msg_unregister_provider m;
            memset(&m, 0, sizeof m);
            m.handle = (uint32_t)handle;
            call(fd, &m, sizeof m, FDR__MSG_UNREGISTER_PROVIDER);
        } else if (sscanf(line, "create %63s %255s", name, arg) == 2) {
            static struct fdr__msg_create m;
            memset(&m, 0, sizeof m);
            m.mask = 0xffffffffu;
            fdr__proto_set_str(m.name, sizeof m.name, name);
            fdr__proto_set_str(m.outdir, sizeof m.outdir, arg);
            call(fd, &m, sizeof m, FDR__MSG_CREATE);
        } else if (sscanf(line, "enable %63s %255s", name, arg) == 2) {
            static uint64_t buf[(sizeof(struct fdr__msg_items) + 256) / 8 + 1];
            struct fdr__msg_items *m = (struct fdr__msg_items *)buf;
            memset(buf, 0, sizeof buf);
            fdr__proto_set_str(m->name, sizeof m->name, name);
            m->nitems = 1;
            m->len = (uint32_t)strlen(arg) + 1;
            memcpy(m->items, arg, m->len);
            call(fd, m, sizeof *m + m->len, FDR__MSG_ENABLE);
        } else if ((k = sscanf(line, "start %63s", name)) == 1 ||
                   (k = 2 * (sscanf(line, "stop %63s", name) == 1)) == 2 ||
                   (k = 3 * (sscanf(line, "destroy %63s", name) == 1)) == 3) {
            struct fdr__msg_trace m;
            memset(&m, 0, sizeof m);
            fdr__proto_set_str(m.name, sizeof m.name, name);
            call(fd, &m, sizeof m,
                 k == 1   ? FDR__MSG_START
                 : k == 2 ? FDR__MSG_STOP
                          : FDR__MSG_DESTROY);
        } else if (sscanf(line, "sleep %lu", &handle) == 1) {
            usleep((useconds_t)handle * 1000);
        } else if (strncmp(line, "exit", 4) == 0) {
            exit(0);
        } else {
            printf("error unknown command\n");
            fflush(stdout);
        }
    }
    return 0;
}
