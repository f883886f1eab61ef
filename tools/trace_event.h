/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The record tools/usdt_trace.bpf.c sends through its ring buffer for each
 * probe hit, shared byte for byte with tools/trace.c. Fixed-width fields
 * only, so both compilers lay it out alike.
 */
#ifndef __USDT_TRACE_EVENT_H
#define __USDT_TRACE_EVENT_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define TRACE_MAX_ARGS 12
#define TRACE_COMM_LEN 16

struct usdt_hit {
	__u64 ts;		/* bpf_ktime_get_ns() */
	__u64 cookie;		/* index into the tool's probe table */
	__u32 pid;		/* the process (tgid) */
	__u32 tid;		/* the thread */
	__s32 arg_cnt;		/* the call site's, or its negative errno */
	__u32 err_mask;		/* bit i: argument i could not be read */
	char comm[TRACE_COMM_LEN];
	__u64 args[TRACE_MAX_ARGS];
	__s16 errs[TRACE_MAX_ARGS];	/* bpf_usdt_arg()'s errno, when set */
	__u8 sizes[TRACE_MAX_ARGS];	/* bpf_usdt_arg_size(), 0 if unknown */
};

_Static_assert(sizeof(struct usdt_hit) == 184, "usdt_hit layout");

#endif /* __USDT_TRACE_EVENT_H */
