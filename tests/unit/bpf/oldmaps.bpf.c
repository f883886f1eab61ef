// SPDX-License-Identifier: BSD-2-Clause
/* The maps of usdt.bpf.h before capacity on demand (layout 2): plain
 * arrays, under the layout LAYOUT says. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "usdt_spec.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, int);
	__type(value, struct usdt_spec);
} usdt__specs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, long);
	__type(value, struct usdt_ip_val);
} usdt__ip2spec SEC(".maps");

const volatile __u32 usdt__layout = LAYOUT;

char LICENSE[] SEC("license") = "GPL";
