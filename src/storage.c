// SPDX-License-Identifier: BSD-2-Clause
/*
 * Per-attach storage: slots of the object's usdt__storage array map
 * (defined by bpf/usdt.bpf.h when the object sets USDT_STORAGE_TYPE).
 *
 * A link that asks for storage takes one slot, or one per call site, and
 * the BPF side finds it from the cookie's high 32 bits or the IP map's
 * value (bpf/usdt_spec.h). The array is BPF_F_MMAPABLE and mapped into
 * this process once, at the first attach with storage: the initial value
 * is written, the user reads counters and the slot is zeroed on release,
 * all in place, without a syscall. Free slots are a stack, preallocated
 * to the map's size, so giving a slot back cannot fail; a free slot is
 * always zero, and a taken one holds its initial value before any uprobe
 * can reach it.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "manager.h"

void usdt__storage_find(struct usdt_manager *man)
{
	struct usdt__storage *st = &man->storage;

	st->map = bpf_object__find_map_by_name(man->obj, "usdt__storage");
	st->fd = -1;
}

/* The value size the object's BPF type has, through BTF; 0 if unknown. */
static uint32_t btf_value_size(const struct bpf_map *map,
			       const struct bpf_object *obj)
{
	struct btf *btf = bpf_object__btf(obj);
	__s64 sz;

	if (!btf || !bpf_map__btf_value_type_id(map))
		return 0;
	sz = btf__resolve_size(btf, bpf_map__btf_value_type_id(map));
	return sz > 0 && sz <= UINT32_MAX ? (uint32_t)sz : 0;
}

int usdt__storage_check(const struct usdt_manager *man, const void *init,
			size_t sz, bool per_site)
{
	const struct usdt__storage *st = &man->storage;
	uint32_t want;

	if (!init)
		return sz || per_site ? -EINVAL : 0;
	if (!st->map) {
		pr_warn("storage given, but BPF object '%s' has no usdt__storage map: define USDT_STORAGE_TYPE before including usdt.bpf.h\n",
			bpf_object__name(man->obj));
		return -EINVAL;
	}
	want = btf_value_size(st->map, man->obj);
	if (!want || want != bpf_map__value_size(st->map) || sz != want) {
		pr_warn("storage of %zu bytes given, USDT_STORAGE_TYPE of BPF object '%s' has %u\n",
			sz, bpf_object__name(man->obj), want);
		return -EINVAL;
	}
	return 0;
}

/* Map the array and size the free stack, at the first slot taken. */
static int storage_init(struct usdt__storage *st)
{
	long page = sysconf(_SC_PAGESIZE);
	int err;

	st->max = bpf_map__max_entries(st->map);
	st->value_sz = bpf_map__value_size(st->map);
	/* The kernel lays the array's values out 8-byte aligned. */
	st->stride = (st->value_sz + 7) & ~7U;
	st->mem_sz = ((size_t)st->stride * st->max + page - 1) & ~(size_t)(page - 1);
	st->fd = fcntl(bpf_map__fd(st->map), F_DUPFD_CLOEXEC, 3);
	st->free = calloc(st->max ? st->max : 1, sizeof(*st->free));
	if (st->fd < 0 || !st->free) {
		err = st->fd < 0 ? -errno : -ENOMEM;
		goto err_out;
	}
	st->mem = mmap(NULL, st->mem_sz, PROT_READ | PROT_WRITE, MAP_SHARED,
		       st->fd, 0);
	if (st->mem == MAP_FAILED) {
		err = -errno;
		st->mem = NULL;
		pr_warn("cannot map usdt__storage: %s\n", usdt__errstr(err));
		goto err_out;
	}
	return 0;

err_out:
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
	free(st->free);
	st->free = NULL;
	return err;
}

int usdt__storage_get(struct usdt_manager *man, const void *init,
		      uint32_t *slot)
{
	struct usdt__storage *st = &man->storage;
	int err;

	if (!st->mem && (err = storage_init(st)))
		return err;
	if (st->free_cnt)
		*slot = st->free[--st->free_cnt];
	else if (st->next < st->max)
		*slot = st->next++;
	else
		return -E2BIG;
	memcpy(usdt__storage_at(st, *slot), init, st->value_sz);
	st->live_cnt++;
	return 0;
}

void usdt__storage_put(struct usdt_manager *man, uint32_t slot)
{
	struct usdt__storage *st = &man->storage;

	if (!st->mem || slot >= st->next)
		return;
	memset(usdt__storage_at(st, slot), 0, st->value_sz);
	st->free[st->free_cnt++] = slot;
	st->live_cnt--;
}

void *usdt__storage_at(const struct usdt__storage *st, uint32_t slot)
{
	return (char *)st->mem + (size_t)slot * st->stride;
}

void usdt__storage_release(struct usdt__storage *st)
{
	if (st->mem)
		munmap(st->mem, st->mem_sz);
	if (st->fd >= 0)
		close(st->fd);
	free(st->free);
	memset(st, 0, sizeof(*st));
	st->fd = -1;
}
