// SPDX-License-Identifier: BSD-2-Clause
/*
 * The BPF half of hello_skel: hello.bpf.c's program, in a section that
 * names its probe, as libbpf's SEC("usdt/...") does:
 * usdt/PATH:PROVIDER:NAME, PATH here the target next to hello_skel,
 * which works in its own directory. It reads
 *
 *	SEC("usdt/./target:hello:greet")
 *	int BPF_USDT(on_greet, int count, const char *name)
 */
#define HELLO_SEC "usdt/./target:hello:greet"
#include "hello.bpf.c"
