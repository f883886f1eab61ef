// SPDX-License-Identifier: BSD-2-Clause
/* A BPF object that does not include usdt.bpf.h. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("uprobe")
int plain(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
