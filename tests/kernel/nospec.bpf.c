// SPDX-License-Identifier: BSD-2-Clause
/*
 * Programs on bpf/usdt.bpf.h that name no spec map (test_native): one that
 * only counts hits, as libbpf's optimized_attach selftest does, and one
 * that reads only its storage. Neither reads anything a spec store holds.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct cnt {
	__u64 n;
};
#define USDT_STORAGE_TYPE struct cnt
#include "usdt.bpf.h"

__u32 hits;
__u32 store_hits, store_null;

SEC("usdt/libusdttest.so:testlib:fire")
int count_fire(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("usdt")
int storage_fire(struct pt_regs *ctx)
{
	struct cnt *c = bpf_usdt_storage(ctx);

	if (c)
		__sync_fetch_and_add(&c->n, 1);
	else
		__sync_fetch_and_add(&store_null, 1);
	__sync_fetch_and_add(&store_hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
