// SPDX-License-Identifier: BSD-2-Clause
/* The maps of usdt.bpf.h as a header without a layout version had them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "usdt_spec.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, int);
	__type(value, struct usdt_spec);
} usdt__specs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, long);
	__type(value, __u32);
} usdt__ip2spec SEC(".maps");

const volatile __u32 other_var = 1;

char LICENSE[] SEC("license") = "GPL";
