// SPDX-License-Identifier: BSD-2-Clause
/* Per-attach storage: count hits in this attach's value. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "storage_test.h"

#define USDT_STORAGE_TYPE struct storage_test_val
#define USDT_MAX_STORAGE_CNT 64
#include "usdt.bpf.h"

/* Hits whose attach had no storage; all hits. */
__u64 none_cnt;
__u64 all_cnt;

SEC("usdt")
int on_hit(struct pt_regs *ctx)
{
	struct storage_test_val *v = bpf_usdt_storage(ctx);
	long a = 0;

	__sync_fetch_and_add(&all_cnt, 1);
	if (!v) {
		__sync_fetch_and_add(&none_cnt, 1);
		return 0;
	}
	bpf_usdt_arg(ctx, 0, &a);
	if (__sync_fetch_and_add(&v->hits, 1) == 0)
		v->seen_init = v->init;
	v->last_arg = a;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
