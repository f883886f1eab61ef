// SPDX-License-Identifier: BSD-2-Clause
/*
 * The BPF half of the example: runs at each hit of hello:greet, reads the
 * probe's two arguments (BPF_USDT() names and types them), copies the
 * string they point to, and sends the lot to user space.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <usdt/usdt.bpf.h>

#include "hello.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} greetings SEC(".maps");

/* hello_skel.bpf.c names the probe here instead, libbpf's way. */
#ifndef HELLO_SEC
#define HELLO_SEC "usdt"
#endif

SEC(HELLO_SEC)
int BPF_USDT(on_greet, int count, const char *name)
{
	struct greeting *g;

	g = bpf_ringbuf_reserve(&greetings, sizeof(*g), 0);
	if (!g)
		return 0;
	g->pid = bpf_get_current_pid_tgid() >> 32;
	g->count = count;
	if (bpf_probe_read_user_str(g->name, sizeof(g->name), name) < 0)
		g->name[0] = '\0';
	bpf_ringbuf_submit(g, 0);
	return 0;
}
