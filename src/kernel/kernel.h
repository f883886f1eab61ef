/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel layer's contract: what the running kernel can do, and which
 * BPF links it runs.
 * What a higher layer includes of this one (tests/layers.sh).
 */
#ifndef __LIBUSDT_KERNEL_KERNEL_H_CONTRACT
#define __LIBUSDT_KERNEL_KERNEL_H_CONTRACT

#include "kernel/kfeatures.h"
#include "kernel/linkids.h"

#endif /* __LIBUSDT_KERNEL_KERNEL_H_CONTRACT */
