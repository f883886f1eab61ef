// SPDX-License-Identifier: BSD-2-Clause
/*
 * The program shapes whose verifier cost the performance issue tracks,
 * each a program of its own. Built at -mcpu=v1, v2 and v3 for
 * test_verifier, and by `make bench` on libbpf's headers too
 * (USDT_SHAPES_LIBBPF) for the side-by-side table.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#ifdef USDT_SHAPES_LIBBPF
#include <bpf/usdt.bpf.h>
#else
#include "usdt.bpf.h"
#endif

long total;
long total_errs;
long hits;

#define CHECKED(i)                                                          \
	do {                                                                \
		if (bpf_usdt_arg(ctx, i, &v))                               \
			errs++;                                             \
		else                                                        \
			sum += v;                                           \
	} while (0)

/* The counts stay in registers until the end, as a user's would: the
 * verifier then sees a different state on each side of every check. */
static __always_inline void record(long sum, int errs)
{
	total += sum;
	total_errs += errs;
	hits++;
}

/* Three checked bpf_usdt_arg() calls. */
SEC("usdt")
int checked3(struct pt_regs *ctx)
{
	long v, sum = 0;
	int errs = 0;

	CHECKED(0);
	CHECKED(1);
	CHECKED(2);
	record(sum, errs);
	return 0;
}

/* Twelve of them: each branch doubles the paths a per-call reader sees. */
SEC("usdt")
int checked12(struct pt_regs *ctx)
{
	long v, sum = 0;
	int errs = 0;

	CHECKED(0);
	CHECKED(1);
	CHECKED(2);
	CHECKED(3);
	CHECKED(4);
	CHECKED(5);
	CHECKED(6);
	CHECKED(7);
	CHECKED(8);
	CHECKED(9);
	CHECKED(10);
	CHECKED(11);
	record(sum, errs);
	return 0;
}

/* Every argument through BPF_USDT(). */
SEC("usdt")
int BPF_USDT(usdt12, long a0, long a1, long a2, long a3, long a4, long a5,
	     long a6, long a7, long a8, long a9, long a10, long a11)
{
	record(a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11, 0);
	return 0;
}

/* As many arguments as the call site has. */
SEC("usdt")
int loop(struct pt_regs *ctx)
{
	int i, errs = 0, cnt = bpf_usdt_arg_cnt(ctx);
	long v, sum = 0;

	for (i = 0; i < cnt && i < 12; i++) {
		if (bpf_usdt_arg(ctx, i, &v))
			errs++;
		else
			sum += v;
	}
	record(sum, errs);
	return 0;
}

/* Nothing read: what any program costs per hit (the bench's floor). */
SEC("usdt")
int empty(struct pt_regs *ctx)
{
	hits++;
	return 0;
}

#ifdef USDT_STORAGE_TYPE
/* This attach's storage, one increment: what bpf_usdt_storage() costs. */
SEC("usdt")
int storage(struct pt_regs *ctx)
{
	USDT_STORAGE_TYPE *v = bpf_usdt_storage(ctx);

	if (v)
		(*v)++;
	hits++;
	return 0;
}
#endif

char LICENSE[] SEC("license") = "GPL";
