// SPDX-License-Identifier: BSD-2-Clause
/*
 * A sleepable USDT program, SEC("usdt.s/..."), for test_native: it reads
 * its string argument with bpf_copy_from_user(), which the verifier gives
 * sleepable programs only and which faults in a page the process has not
 * touched yet.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "usdt.bpf.h"

char cold_got[16];
long cold_err = 1;
long cold_cookie;
__u32 cold_hits;

SEC("usdt.s//proc/self/exe:sleepy:cold")
int BPF_USDT(on_cold, const char *s)
{
	cold_err = bpf_copy_from_user(cold_got, sizeof(cold_got), s);
	cold_cookie = bpf_usdt_cookie(ctx);
	__sync_fetch_and_add(&cold_hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
