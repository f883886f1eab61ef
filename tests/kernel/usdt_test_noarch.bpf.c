// SPDX-License-Identifier: BSD-2-Clause
/*
 * usdt_test.bpf.c built as if the target arch were unknown: registers and
 * the PC are then read with bpf_probe_read_kernel(), the PC's offset coming
 * from the usdt__ip_off global the manager fills in before load.
 */
#undef __TARGET_ARCH_x86
#undef __TARGET_ARCH_arm64
#undef __TARGET_ARCH_s390
#undef __TARGET_ARCH_riscv
#include "usdt_test.bpf.c"
