/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The process layer's contract: /proc/PID/maps, and finding the file a
 * user named as the loader would.
 * What a higher layer includes of this one (tests/layers.sh).
 */
#ifndef __LIBUSDT_PROC_PROC_H_CONTRACT
#define __LIBUSDT_PROC_PROC_H_CONTRACT

#include "proc/procmap.h"
#include "proc/resolve.h"

#endif /* __LIBUSDT_PROC_PROC_H_CONTRACT */
