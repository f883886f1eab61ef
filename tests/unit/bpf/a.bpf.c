// SPDX-License-Identifier: BSD-2-Clause
/* Compiled by test_bpf_header: with and without __TARGET_ARCH_xxx, and
 * linked with b.bpf.c into one object. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "usdt.bpf.h"

long seen_a;

SEC("usdt")
int BPF_USDT(prog_a, int x, long y)
{
	seen_a = x + y + bpf_usdt_arg_size(ctx, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
