/* SPDX-License-Identifier: MIT */
/* no-clone.c - runs a program where clone() makes no process the way
 * libfdr's drain helper is made, to reach natively what qemu-user and
 * sandboxes do to it (tests/recorder/test-core-drain.py):
 *
 *   no-clone signal0 PROG ARGS...   clone() of a process with no exit
 *                                   signal fails with EINVAL, as under
 *                                   qemu-user (which forks only with
 *                                   SIGCHLD); threads and fork() work
 *   no-clone fork PROG ARGS...      every clone() of a process fails with
 *                                   EINVAL (threads still start: glibc
 *                                   makes them with clone3, or clone
 *                                   with CLONE_THREAD)
 *
 * A seccomp filter, inherited across execve (with no_new_privs). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG0_LOW offsetof(struct seccomp_data, args[0])
#else
#define ARG0_LOW (offsetof(struct seccomp_data, args[0]) + 4)
#endif

int main(int argc, char **argv)
{
    int any = argc > 2 && strcmp(argv[1], "fork") == 0;
    if (argc < 3 || (!any && strcmp(argv[1], "signal0") != 0)) {
        fprintf(stderr, "usage: no-clone signal0|fork PROG ARGS...\n");
        return 2;
    }
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 2, 0),
        /* fork: refused whatever its exit signal; signal0: with none */
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, any ? 0 : 0xff, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
        fprintf(stderr, "no-clone: seccomp: %s\n", strerror(errno));
        return 1;
    }
    execvp(argv[2], argv + 2);
    fprintf(stderr, "no-clone: %s: %s\n", argv[2], strerror(errno));
    return 127;
}
