/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by the kernel tests and their BPF program. */
#ifndef __USDT_TEST_H
#define __USDT_TEST_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define USDT_TEST_MAX_HITS 512
#define USDT_TEST_MAX_ARGS 13 /* one past the most, to see -ENOENT */

struct usdt_test_hit {
	__u32 tag;
	__u32 pid;
	__s32 arg_cnt;
	__s32 rc[USDT_TEST_MAX_ARGS];
	__s32 size[USDT_TEST_MAX_ARGS];
	long args[USDT_TEST_MAX_ARGS];
	long cookie;
};

#endif
