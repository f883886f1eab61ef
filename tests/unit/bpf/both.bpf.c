// SPDX-License-Identifier: BSD-2-Clause
/* Including libbpf's header and ours together must not compile. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>
#include "usdt.bpf.h"

char LICENSE[] SEC("license") = "GPL";
