// SPDX-License-Identifier: BSD-2-Clause
/* A file built on libbpf's header: linked with a.bpf.c (ours), in either
 * order, the object must fail to link. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>

long seen_lb;

SEC("usdt")
int BPF_USDT(prog_lb, long x)
{
	seen_lb = x;
	return 0;
}
