// SPDX-License-Identifier: BSD-2-Clause
/* Ours, then libbpf's header: must not compile either. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "usdt.bpf.h"
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "GPL";
