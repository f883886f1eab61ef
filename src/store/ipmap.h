/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef __LIBUSDT_IPMAP_H
#define __LIBUSDT_IPMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "../../bpf/usdt_spec.h"

/* The IP map (src/store/ipmap.c): the hash in entry 0 of usdt__ip2spec. */
struct usdt__ipmap {
	int outer_fd;		    /* dup()ed at the first entry; -1 */
	int fd;			    /* the current hash; -1 */
	uint32_t size;		    /* its entries */
	uint32_t cnt;		    /* entries in it */
	uint32_t cap;		    /* most entries */
	uint32_t outer_id, hash_id; /* kernel IDs, for usdt__claim_free() */
};

/* Room for n more IP-map entries, in the hash that entry 0 of the outer
 * array outer (borrowed; dup()ed at the first entry) holds: -E2BIG past
 * the cap, -EBUSY if another manager's hash is there, or the error of
 * growing the map. */
int usdt__ipmap_reserve(struct usdt__ipmap *m, int outer, uint32_t n);
/* Add an entry (-EEXIST if the key is there); delete one. */
int usdt__ipmap_add(struct usdt__ipmap *m, int outer, long key,
		    const struct usdt_ip_val *val);
int usdt__ipmap_del(struct usdt__ipmap *m, long key);
/* Close; the hash stays in the outer map (see src/store/chunks.c), for the
 * next store to replace if reusable. */
void usdt__ipmap_close(struct usdt__ipmap *m, bool reusable);

#endif
