// SPDX-License-Identifier: BSD-2-Clause
/*
 * Tasks on one CPU, three probes (test_preempt.c). Each program counts its
 * hits, and the hits during which another run of it began (on one CPU,
 * this run was preempted: the kernel runs uprobe programs with migration,
 * not preemption, disabled). "big" reads six arguments through
 * BPF_USDT(), which keeps room for twelve in the program's frame (120
 * bytes on x86_64): over 48, past which a JIT may give a frame a per-CPU
 * private stack. "four" reads four through BPF_USDT(), room for four (40
 * bytes in all), and "small" one with bpf_usdt_arg() (8): every frame of
 * theirs, usdt__args4()'s too, is 48 bytes or less. Every argument is the
 * traced process's tgid; the spin keeps its sum in a register, not on the
 * stack.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "usdt.bpf.h"

/* Long enough that a tick often lands in a run. */
#define SPIN 3000

__u64 big_hits, big_preempted, big_args_bad;
__u64 small_hits, small_preempted, small_args_bad;
__u64 four_hits, four_preempted, four_args_bad;

static __always_inline __u64 spin(void)
{
	__u64 acc = 0;
	int i;

	for (i = 0; i < SPIN; i++) {
		acc += (__u64)i;
		asm volatile("" : "+r"(acc));
	}
	return acc;
}

SEC("usdt")
int BPF_USDT(big, long a0, long a1, long a2, long a3, long a4, long a5)
{
	__u64 pid = bpf_get_current_pid_tgid() >> 32, n, acc;

	n = __sync_fetch_and_add(&big_hits, 1);
	acc = spin();
	if (*(volatile __u64 *)&big_hits != n + 1)
		__sync_fetch_and_add(&big_preempted, 1);
	/* No branch per argument: the verifier would walk each. */
	if (((__u64)a0 ^ pid) | ((__u64)a1 ^ pid) | ((__u64)a2 ^ pid) |
	    ((__u64)a3 ^ pid) | ((__u64)a4 ^ pid) | ((__u64)a5 ^ pid))
		__sync_fetch_and_add(&big_args_bad, 1);
	return acc == 1;
}

SEC("usdt")
int BPF_USDT(four, long a0, long a1, long a2, long a3)
{
	__u64 pid = bpf_get_current_pid_tgid() >> 32, n, acc;

	n = __sync_fetch_and_add(&four_hits, 1);
	acc = spin();
	if (*(volatile __u64 *)&four_hits != n + 1)
		__sync_fetch_and_add(&four_preempted, 1);
	if (((__u64)a0 ^ pid) | ((__u64)a1 ^ pid) | ((__u64)a2 ^ pid) |
	    ((__u64)a3 ^ pid))
		__sync_fetch_and_add(&four_args_bad, 1);
	return acc == 1;
}

SEC("usdt")
int small(struct pt_regs *ctx)
{
	__u64 pid = bpf_get_current_pid_tgid() >> 32, n, acc;
	long a = 0;

	n = __sync_fetch_and_add(&small_hits, 1);
	bpf_usdt_arg(ctx, 0, &a);
	acc = spin();
	if (*(volatile __u64 *)&small_hits != n + 1)
		__sync_fetch_and_add(&small_preempted, 1);
	if (*(volatile long *)&a != (long)pid)
		__sync_fetch_and_add(&small_args_bad, 1);
	return acc == 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
