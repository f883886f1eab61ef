/* SPDX-License-Identifier: BSD-2-Clause */
/* Per-attach storage slots (src/store/storage.c). */
#ifndef __LIBUSDT_STORAGE_H
#define __LIBUSDT_STORAGE_H

#include "store/chunks.h"

/*
 * Storage slots (src/store/storage.c): the object's usdt__storage array of maps,
 * its chunks mapped into this process as slots are taken.
 */
struct usdt__storage {
	bool declared; /* the object has a usdt__storage map */
	/* That array of maps, once the object is loaded
	 * (usdt__manager_store()). */
	struct usdt__outer outer;
	uint32_t value_sz, per; /* from the object's BTF; 0: unknown */
	uint32_t cap;		/* the cap (opts or the object's), or 0 */
	struct usdt__chunks slots;
};

/* Check an attach's storage options against the storage of the object
 * named obj_name: 0 or -EINVAL (logged). No storage (init NULL) is fine. */
int usdt__storage_check(const struct usdt__storage *st, const char *obj_name,
			const void *init, size_t sz, bool per_site);
/* Take a slot and write init (value_sz bytes) into it. -E2BIG when none is
 * left, or the error of creating a chunk. */
int usdt__storage_get(struct usdt__storage *st, const void *init,
		      uint32_t *slot);
/* Zero the slot and free it. */
void usdt__storage_put(struct usdt__storage *st, uint32_t slot);
void *usdt__storage_at(const struct usdt__storage *st, uint32_t slot);
void usdt__storage_release(struct usdt__storage *st, bool reusable);

#endif
