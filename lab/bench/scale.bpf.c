// SPDX-License-Identifier: BSD-2-Clause
/*
 * The program of lab/bench/bench_scale.c, attached once per probe name
 * of a generated target: on libusdt's header, or (SCALE_LIBBPF) on the
 * libbpf header found first on the include path. libbpf gives every attach
 * call spec IDs of its own, so its spec map must hold one per spec of
 * every name: 100,003 call sites with distinct specs need 100,003.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
/* Room for 100,003 distinct specs, in both. */
#define BPF_USDT_MAX_SPEC_CNT 131072
#ifdef SCALE_LIBBPF
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#else
#include "usdt.bpf.h"
#endif

long hits;

SEC("usdt")
int BPF_USDT(on_hit, long a)
{
	hits += a;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
