/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The libbpf layer's contract: a user's bpf_object set up for a manager,
 * and the section handler and implicit stores.
 * What a higher layer includes of this one (tests/layers.sh).
 */
#ifndef __LIBUSDT_LIBBPF_LIBBPF_H_CONTRACT
#define __LIBUSDT_LIBBPF_LIBBPF_H_CONTRACT

#include "libbpf/object.h"
#include "libbpf/progh.h"

#endif /* __LIBUSDT_LIBBPF_LIBBPF_H_CONTRACT */
