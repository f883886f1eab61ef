// SPDX-License-Identifier: BSD-2-Clause
/* The same program on the system libbpf's <bpf/usdt.bpf.h>. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

long sum;
long hits;

SEC("usdt")
int BPF_USDT(on_hit, long a, long b, long c)
{
	sum += a + b + c;
	hits++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
