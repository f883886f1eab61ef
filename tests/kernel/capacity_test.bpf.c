// SPDX-License-Identifier: BSD-2-Clause
/* Counts hits and sums the first argument; a storage value per attach. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define USDT_STORAGE_TYPE __u64
#include "usdt.bpf.h"

__u64 hit_cnt, arg_sum, err_cnt, stored_cnt;

SEC("usdt")
int on_site(struct pt_regs *ctx)
{
	__u64 *st = bpf_usdt_storage(ctx);
	long v;

	__sync_fetch_and_add(&hit_cnt, 1);
	if (bpf_usdt_arg(ctx, 0, &v))
		__sync_fetch_and_add(&err_cnt, 1);
	else
		__sync_fetch_and_add(&arg_sum, v);
	if (st) {
		__sync_fetch_and_add(st, 1);
		__sync_fetch_and_add(&stored_cnt, 1);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
