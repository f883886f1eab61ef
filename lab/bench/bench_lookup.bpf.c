// SPDX-License-Identifier: BSD-2-Clause
/*
 * The spec lookup alone, per hit: the header's (a chunk of the array of
 * maps, then the spec in it) against the one flat array lookup of layout 2
 * (before capacity on demand), same cookie, same spec read.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "usdt.bpf.h"

/* Layout 2's spec map: one array, as big as the old default. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, int);
	__type(value, struct usdt_spec);
} flat_specs SEC(".maps");

long sink;

/* Layout 2's __usdt_spec(): cookie, then one array lookup. */
static __always_inline const struct usdt_spec *flat_spec(struct pt_regs *ctx)
{
	int id = -1;

	if (LINUX_HAS_BPF_COOKIE)
		id = (int)bpf_get_attach_cookie(ctx) - 1;
	if (id < 0)
		return 0;
	return bpf_map_lookup_elem(&flat_specs, &id);
}

SEC("usdt")
int spec_flat(struct pt_regs *ctx)
{
	const struct usdt_spec *s = flat_spec(ctx);

	sink += s ? s->arg_cnt : -1;
	return 0;
}

SEC("usdt")
int spec_chunked(struct pt_regs *ctx)
{
	const struct usdt_spec *s = __usdt_spec((void *)ctx);

	sink += s ? s->arg_cnt : -1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
