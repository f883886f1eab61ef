/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The IDs of the machine's live BPF links (src/kernel/linkids.c), through a BPF
 * iterator: CAP_BPF and CAP_PERFMON, Linux 6.0 and kernel BTF.
 */
#ifndef __LIBUSDT_LINKIDS_H
#define __LIBUSDT_LINKIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Invariant: ids[0..cnt) sorted ascending. */
struct usdt__link_ids {
	__u32 *ids;
	size_t cnt;
};

/* 0 with every live link's ID in *out, or a negative errno (no iterator
 * here, or no privilege for it) with *out empty. */
int usdt__link_ids_get(struct usdt__link_ids *out);
bool usdt__link_ids_has(const struct usdt__link_ids *ids, __u32 id);
void usdt__link_ids_free(struct usdt__link_ids *ids);

#endif
