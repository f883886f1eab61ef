// SPDX-License-Identifier: BSD-2-Clause
/*
 * 1,000 programs in SEC("usdt/TARGET:gen:pN"), N = 0..999, for
 * usdt_manager__attach_all(): what usdt_manager__free() then destroys
 * (lab/bench/bench_scale.c). SCALE_TARGET is the generated target.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "usdt.bpf.h"

long hits;

#define P(n)                                                              \
	SEC("usdt/" SCALE_TARGET ":gen:p" #n)                             \
	int owned_##n(struct pt_regs *ctx)                                \
	{                                                                 \
		hits++;                                                   \
		return 0;                                                 \
	}
#define P10(a) P(a##0) P(a##1) P(a##2) P(a##3) P(a##4) P(a##5) P(a##6)   \
	P(a##7) P(a##8) P(a##9)
#define P100(a) P10(a##0) P10(a##1) P10(a##2) P10(a##3) P10(a##4)         \
	P10(a##5) P10(a##6) P10(a##7) P10(a##8) P10(a##9)

/* p0..p9, p10..p99, p100..p999 */
P(0) P(1) P(2) P(3) P(4) P(5) P(6) P(7) P(8) P(9)
P10(1) P10(2) P10(3) P10(4) P10(5) P10(6) P10(7) P10(8) P10(9)
P100(1) P100(2) P100(3) P100(4) P100(5) P100(6) P100(7) P100(8) P100(9)

char LICENSE[] SEC("license") = "GPL";
