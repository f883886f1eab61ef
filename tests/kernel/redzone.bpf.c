// SPDX-License-Identifier: BSD-2-Clause
/*
 * For test_redzone: the two sites of a leaf function that keeps values
 * in its red zone, "nop; nop5" and "nop; nop10", each with its value
 * argument and a %rip-relative one. Named in the section, so that the
 * skeleton's __attach() attaches them too.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "usdt.bpf.h"

__u32 hits[2];
long val[2];
long glob[2];

static __always_inline int rec(int k, long v, long g)
{
	__sync_fetch_and_add(&hits[k], 1);
	val[k] = v;
	glob[k] = g;
	return 0;
}

SEC("usdt//proc/self/exe:rz:nop5")
int BPF_USDT(on_nop5, long v, int g)
{
	return rec(0, v, g);
}

SEC("usdt//proc/self/exe:rz:nop10")
int BPF_USDT(on_nop10, long v, int g)
{
	return rec(1, v, g);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
