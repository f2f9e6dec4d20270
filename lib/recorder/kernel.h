/* SPDX-License-Identifier: MIT */
/* recorder/kernel.h - the few Linux constants libfdr passes to syscall(2)
 * (futex, membarrier). They come from the kernel's headers when the C
 * library's include path has them (glibc); musl's headers alone do not
 * (musl-gcc), and then the values below, which are the kernel's ABI and
 * never change, stand in. */
#ifndef FDR_RECORDER_KERNEL_H
#define FDR_RECORDER_KERNEL_H

#if __has_include(<linux/futex.h>)
#include <linux/futex.h>
#else
#define FUTEX_WAIT_PRIVATE 128 /* FUTEX_WAIT | FUTEX_PRIVATE_FLAG */
#define FUTEX_WAKE_PRIVATE 129 /* FUTEX_WAKE | FUTEX_PRIVATE_FLAG */
#endif

#if __has_include(<linux/membarrier.h>)
#include <linux/membarrier.h>
#else
#define MEMBARRIER_CMD_QUERY 0
#define MEMBARRIER_CMD_GLOBAL 1
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED 8
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED 16
#endif

#endif
