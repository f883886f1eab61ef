// SPDX-License-Identifier: BSD-2-Clause
/*
 * The whole API through <usdt/usdt.bpf.h> as a user's program includes it,
 * from the public include directory alone (no -Ibpf): the headers it
 * includes are there beside it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <usdt/usdt.bpf.h>

long seen;

SEC("usdt")
int BPF_USDT(prog_public, int x)
{
	long *st = bpf_usdt_storage(ctx);
	long v = 0;

	if (!bpf_usdt_arg(ctx, 0, &v) && st)
		*st += x + v + bpf_usdt_arg_cnt(ctx) + bpf_usdt_arg_size(ctx, 0) +
		       bpf_usdt_cookie(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
