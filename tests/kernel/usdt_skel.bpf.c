// SPDX-License-Identifier: BSD-2-Clause
/*
 * Programs that name their probes in the section, libbpf's auto-attach
 * syntax, for test_skel: one by a bare library name, one by a path.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "usdt.bpf.h"

__u32 lib_hits;
long lib_x;
long lib_cookie;
__u32 self_hits;
long self_v;
__u32 bare_hits;

SEC("usdt/libusdttest.so:testlib:fire")
int BPF_USDT(on_lib_fire, int x)
{
	__sync_fetch_and_add(&lib_hits, 1);
	lib_x = x;
	lib_cookie = bpf_usdt_cookie(ctx);
	return 0;
}

SEC("usdt//proc/self/exe:skel:one")
int BPF_USDT(on_self, long v)
{
	__sync_fetch_and_add(&self_hits, 1);
	self_v = v;
	return 0;
}

/* No target: usdt_manager__attach_all() leaves it alone. */
SEC("usdt")
int on_bare(struct pt_regs *ctx)
{
	__sync_fetch_and_add(&bare_hits, 1);
	return 0;
}

/* Not loaded unless a test asks: a probe that does not exist, last so
 * that the others are attached before it fails. */
SEC("usdt/libusdttest.so:testlib:no_such_probe")
int on_missing(struct pt_regs *ctx)
{
	return 0;
}

/* Not loaded unless a test asks: no PROVIDER:NAME. */
SEC("usdt/libusdttest.so")
int on_malformed(struct pt_regs *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
