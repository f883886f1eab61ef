// SPDX-License-Identifier: BSD-2-Clause
/* Records every argument of every hit, for the kernel tests. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* A head of 64 specs (usdt_spec.h): the tests on this object go past it,
 * into the chunks, where the default head of 1024 would hold them all. */
#define USDT_SPEC_HEAD_CNT 64
#include "usdt.bpf.h"
#include "usdt_test.h"

struct usdt_test_hit hits[USDT_TEST_MAX_HITS];
__u32 hit_cnt;
/* Only hits of this process (0: every process) are recorded. */
__u32 filter_pid;

static __always_inline void record(struct pt_regs *ctx, __u32 tag)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct usdt_test_hit *h;
	__u32 i;
	int j;

	if (filter_pid && pid != filter_pid)
		return;
	i = __sync_fetch_and_add(&hit_cnt, 1);
	if (i >= USDT_TEST_MAX_HITS)
		return;
	h = &hits[i];
	h->tag = tag;
	h->pid = pid;
	h->cookie = bpf_usdt_cookie(ctx);
	h->arg_cnt = bpf_usdt_arg_cnt(ctx);
	for (j = 0; j < USDT_TEST_MAX_ARGS; j++) {
		h->rc[j] = bpf_usdt_arg(ctx, j, &h->args[j]);
		h->size[j] = bpf_usdt_arg_size(ctx, j);
	}
}

SEC("usdt")
int on_usdt(struct pt_regs *ctx)
{
	record(ctx, 1);
	return 0;
}

/* The same through BPF_USDT(), as a user of libbpf would write it. */
SEC("usdt")
int BPF_USDT(on_usdt3, long a, long b, long c)
{
	__u32 i = __sync_fetch_and_add(&hit_cnt, 1);

	if (i >= USDT_TEST_MAX_HITS)
		return 0;
	hits[i].tag = 3;
	hits[i].arg_cnt = bpf_usdt_arg_cnt(ctx);
	hits[i].args[0] = a;
	hits[i].args[1] = b;
	hits[i].args[2] = c;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
