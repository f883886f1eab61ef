// SPDX-License-Identifier: BSD-2-Clause
/*
 * Per-attach storage: slots of the object's usdt__storage array map
 * (defined by bpf/usdt.bpf.h when the object sets USDT_STORAGE_TYPE).
 *
 * A link that asks for storage takes one slot, or one per call site, and
 * the BPF side finds it from the cookie's high 32 bits or the IP map's
 * value (bpf/usdt_spec.h). The slots are chunks of about a page, mmapable
 * arrays created and mapped into this process as slots are taken
 * (chunks.c): the initial value is written, the user reads counters and
 * the slot is zeroed on release, all in place, without a syscall. Giving a
 * slot back cannot fail; a free slot is always zero, and a taken one holds
 * its initial value before any uprobe can reach it.
 */
#include <linux/bpf.h>

#include "base/base.h"
#include "store/storage.h"

int usdt__storage_check(const struct usdt__storage *st, const char *obj_name,
			const void *init, size_t sz, bool per_site)
{
	if (!init)
		return sz || per_site ? -EINVAL : 0;
	if (!st->declared) {
		pr_warn("storage given, but BPF object '%s' has no usdt__storage map: define USDT_STORAGE_TYPE before including usdt.bpf.h\n",
			obj_name);
		return -EINVAL;
	}
	if (!st->value_sz || sz != st->value_sz) {
		pr_warn("storage of %zu bytes given, USDT_STORAGE_TYPE of BPF object '%s' has %u\n",
			sz, obj_name, st->value_sz);
		return -EINVAL;
	}
	return 0;
}

int usdt__storage_get(struct usdt__storage *st, const void *init,
		      uint32_t *slot)
{
	int err;

	if (!st->slots.mem) {
		err = usdt__chunks_open(&st->slots, &st->outer, st->value_sz,
					st->per, st->cap, true);
		if (err)
			return err;
	}
	err = usdt__chunks_take(&st->slots, slot);
	if (err)
		return err;
	memcpy(usdt__chunks_at(&st->slots, *slot), init, st->value_sz);
	return 0;
}

void usdt__storage_put(struct usdt__storage *st, uint32_t slot)
{
	if (st->slots.mem)
		usdt__chunks_give(&st->slots, slot);
}

void *usdt__storage_at(const struct usdt__storage *st, uint32_t slot)
{
	return usdt__chunks_at(&st->slots, slot);
}

void usdt__storage_release(struct usdt__storage *st, bool reusable)
{
	usdt__chunks_close(&st->slots, reusable);
}
