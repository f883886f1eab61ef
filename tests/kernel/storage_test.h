/* SPDX-License-Identifier: BSD-2-Clause */
/* The storage value of tests/kernel/storage_test.bpf.c. */
#ifndef __STORAGE_TEST_H
#define __STORAGE_TEST_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* 36 bytes: the kernel's array lays values out 40 bytes apart. */
struct storage_test_val {
	__u64 init;		/* set by user space */
	__u64 seen_init;	/* init as the first hit saw it */
	__u64 hits;
	__s64 last_arg;
	__u32 tag;		/* set by user space, never by BPF */
};

#endif
