// SPDX-License-Identifier: BSD-2-Clause
/*
 * Per-attach storage: one program, attached to two probes with different
 * configurations. Each attach (or each call site of it) has its own
 * struct counter, found with bpf_usdt_storage(): no map to declare, size
 * or fill, and no key to build.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "counters.h"

/* Before the include: the type of the per-attach value. */
#define USDT_STORAGE_TYPE struct counter
#include <usdt/usdt.bpf.h>

char LICENSE[] SEC("license") = "GPL";

SEC("usdt")
int count(struct pt_regs *ctx)
{
	struct counter *c = bpf_usdt_storage(ctx);
	long arg = 0;

	if (!c)
		return 0;
	__sync_fetch_and_add(&c->hits, 1);
	if (!bpf_usdt_arg(ctx, 0, &arg) && arg >= c->min_arg)
		__sync_fetch_and_add(&c->counted, 1);
	return 0;
}
