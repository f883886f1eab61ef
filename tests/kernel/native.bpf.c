// SPDX-License-Identifier: BSD-2-Clause
/*
 * A skeleton app's programs with no usdt_manager (test_native): one that
 * the skeleton's __attach() attaches by its section, one the test attaches
 * with usdt_program__attach(); room for 256 specs, as libbpf's default.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define BPF_USDT_MAX_SPEC_CNT 256
/* No head (usdt_spec.h): the 256 specs are one chunk, libbpf's limit
 * exactly without a manager (a head would add the outer array's chunk). */
#define USDT_SPEC_HEAD_CNT 0
#include "usdt.bpf.h"

__u32 lib_hits;
long lib_x;
long lib_cookie;
__u64 cap_hits, cap_sum, cap_errs;

/* What the last hit of on_args read: each argument's value, error, size. */
__u32 args_hits;
long args_cnt;
long args_cookie;
long args_val[12];
long args_err[12];
long args_size[12];
long arg_past_err;	/* bpf_usdt_arg() past the last argument */

SEC("usdt/libusdttest.so:testlib:fire")
int BPF_USDT(on_lib_fire, int x)
{
	__sync_fetch_and_add(&lib_hits, 1);
	lib_x = x;
	lib_cookie = bpf_usdt_cookie(ctx);
	return 0;
}

SEC("usdt")
int on_cap(struct pt_regs *ctx)
{
	long v;

	__sync_fetch_and_add(&cap_hits, 1);
	if (bpf_usdt_arg(ctx, 0, &v))
		__sync_fetch_and_add(&cap_errs, 1);
	else
		__sync_fetch_and_add(&cap_sum, v + bpf_usdt_cookie(ctx));
	return 0;
}

/*
 * A global function of the user's that takes the context, typed as every
 * arch's kernel takes it (bpf_user_pt_regs_t: arm64's refuses a struct
 * pt_regs, with libbpf too). Where the kernel would not take it for one
 * (no kernel BTF: Debian's s390x 6.1), libusdt makes it static with the
 * header's own, in the BTF the program loads with, and the object still
 * loads; elsewhere it stays global.
 */
__noinline int native_arg_cnt(bpf_user_pt_regs_t *ctx)
{
	return bpf_usdt_arg_cnt((struct pt_regs *)ctx);
}

SEC("usdt")
int on_args(struct pt_regs *ctx)
{
	long v;
	int i;

	args_cnt = native_arg_cnt((bpf_user_pt_regs_t *)ctx);
	args_cookie = bpf_usdt_cookie(ctx);
	for (i = 0; i < 12; i++) {
		v = 0;
		args_err[i] = bpf_usdt_arg(ctx, i, &v);
		args_val[i] = v;
		args_size[i] = bpf_usdt_arg_size(ctx, i);
	}
	arg_past_err = bpf_usdt_arg(ctx, args_cnt, &v);
	__sync_fetch_and_add(&args_hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
