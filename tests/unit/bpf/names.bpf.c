// SPDX-License-Identifier: BSD-2-Clause
/*
 * What a program written for libbpf's <bpf/usdt.bpf.h> uses besides the
 * functions: its limits, errno values and <bpf/bpf_tracing.h>, with no
 * host asm/ headers.
 */
#define BPF_USDT_MAX_SPEC_CNT 100
#define BPF_USDT_MAX_IP_CNT 300
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "usdt.bpf.h"

_Static_assert(BPF_USDT_MAX_ARG_CNT == 12, "twelve arguments at most");
_Static_assert(ENOENT == 2 && ESRCH == 3 && EINVAL == 22 &&
	       EOPNOTSUPP == 95, "Linux errno values");

long ip, err;

SEC("usdt")
int prog_names(struct pt_regs *ctx)
{
	long v;

	ip = PT_REGS_IP(ctx);
	if (bpf_usdt_arg(ctx, 0, &v) == -ENOENT)
		err = -ENOENT;
	return 0;
}

SEC("kprobe/do_nanosleep")
int BPF_KPROBE(prog_kprobe, void *t)
{
	ip = (long)t;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
