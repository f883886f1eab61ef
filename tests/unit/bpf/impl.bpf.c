// SPDX-License-Identifier: BSD-2-Clause
/* The machinery header on its own: refused, with what to include. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "usdt_impl.bpf.h"
