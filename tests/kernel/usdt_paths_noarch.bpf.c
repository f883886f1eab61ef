// SPDX-License-Identifier: BSD-2-Clause
/* usdt_paths.bpf.c built as if the target arch were unknown. */
#undef __TARGET_ARCH_x86
#undef __TARGET_ARCH_arm64
#undef __TARGET_ARCH_s390
#undef __TARGET_ARCH_riscv
#include "usdt_paths.bpf.c"
