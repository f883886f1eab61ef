// SPDX-License-Identifier: BSD-2-Clause
/* The benchmark's BPF program, on libusdt's header. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "usdt.bpf.h"

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
