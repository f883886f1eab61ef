// SPDX-License-Identifier: BSD-2-Clause
/*
 * The one BPF program behind `usdt trace`. User space attaches it to every
 * probe that matches, each probe with its own cookie (an index into the
 * tool's table of probes), and this program reads whatever arguments the
 * call site that fired has and sends them, with who and when, through a
 * ring buffer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "usdt.bpf.h"
#include "../tools/trace_event.h"

char LICENSE[] SEC("license") = "GPL";

/* Set before load: 0 traces every process, else only this tgid. The
 * attach already filters by pid; this makes "only that process" hold even
 * where a kernel's uprobe filter lets other processes of the same file
 * through. */
const volatile __u32 target_tgid = 0;

/* Events dropped because the ring buffer was full. */
__u64 lost_events = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

SEC("usdt")
int usdt_trace(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct usdt_hit *e;
	long val;
	int i, cnt, err, sz;

	if (target_tgid && (__u32)(id >> 32) != target_tgid)
		return 0;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost_events, 1);
		return 0;
	}
	e->ts = bpf_ktime_get_ns();
	e->cookie = bpf_usdt_cookie(ctx);
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->err_mask = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));

	cnt = bpf_usdt_arg_cnt(ctx);
	e->arg_cnt = cnt;
	for (i = 0; i < TRACE_MAX_ARGS; i++) {
		e->args[i] = 0;
		e->errs[i] = 0;
		e->sizes[i] = 0;
		if (i >= cnt)
			continue;
		val = 0;
		err = bpf_usdt_arg(ctx, i, &val);
		if (err) {
			e->err_mask |= 1u << i;
			e->errs[i] = err < 0 ? -err : err;
		}
		e->args[i] = val;
		sz = bpf_usdt_arg_size(ctx, i);
		e->sizes[i] = sz > 0 ? sz : 0;
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}
