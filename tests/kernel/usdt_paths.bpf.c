// SPDX-License-Identifier: BSD-2-Clause
/*
 * The two ways the BPF side reads registers, side by side on one probe:
 * BPF_USDT() (the context copied once per hit) and checked bpf_usdt_arg()
 * calls (words read from the context itself). test_bpf_usdt compares them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "usdt.bpf.h"

long by_macro[12];
long by_call[12];
int rc[12];
int macro_hits, call_hits;

SEC("usdt")
int BPF_USDT(read_macro, long a0, long a1, long a2, long a3, long a4, long a5,
	     long a6, long a7, long a8, long a9, long a10, long a11)
{
	by_macro[0] = a0;
	by_macro[1] = a1;
	by_macro[2] = a2;
	by_macro[3] = a3;
	by_macro[4] = a4;
	by_macro[5] = a5;
	by_macro[6] = a6;
	by_macro[7] = a7;
	by_macro[8] = a8;
	by_macro[9] = a9;
	by_macro[10] = a10;
	by_macro[11] = a11;
	macro_hits++;
	return 0;
}

SEC("usdt")
int read_calls(struct pt_regs *ctx)
{
	int i;

	for (i = 0; i < 12; i++)
		rc[i] = bpf_usdt_arg(ctx, i, &by_call[i]);
	call_hits++;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
