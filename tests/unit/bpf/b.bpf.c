// SPDX-License-Identifier: BSD-2-Clause
/* The second file of a two-file object: shares a.bpf.c's maps. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "usdt.bpf.h"

long seen_b;

SEC("usdt")
int prog_b(struct pt_regs *ctx)
{
	long v;

	if (!bpf_usdt_arg(ctx, 0, &v))
		seen_b = v + bpf_usdt_cookie(ctx) + bpf_usdt_arg_cnt(ctx);
	return 0;
}
