/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading the BPF header's arrays of maps from a test: the chunks of the
 * spec and storage maps, the hash of the IP map (bpf/usdt_spec.h).
 */
#ifndef __LIBUSDT_CHUNK_UTIL_H
#define __LIBUSDT_CHUNK_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "usdt_spec.h"

/* A descriptor of entry k of an array of maps (close it), or -1. */
static inline int inner_fd(int outer, uint32_t k)
{
	uint32_t id;

	if (bpf_map_lookup_elem(outer, &k, &id))
		return -1;
	return bpf_map_get_fd_by_id(id);
}

/* How many entries of the array of maps hold a map. */
static inline uint32_t inner_cnt(int outer)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info), k, id, n = 0;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(outer, &info, &len))
		return 0;
	for (k = 0; k < info.max_entries; k++)
		n += !bpf_map_lookup_elem(outer, &k, &id);
	return n;
}

/* Spec id of the spec map outer into *spec; zero if its chunk is not
 * there. Returns 0, or the lookup's -errno. */
static inline int spec_read(int outer, uint32_t id, struct usdt_spec *spec)
{
	uint32_t idx = id % USDT_SPEC_CHUNK;
	int fd = inner_fd(outer, id / USDT_SPEC_CHUNK), err = 0;

	memset(spec, 0, sizeof(*spec));
	if (fd < 0)
		return 0;
	if (bpf_map_lookup_elem(fd, &idx, spec))
		err = -errno;
	close(fd);
	return err;
}

/* Overwrite spec id of the spec map outer (its chunk must exist). */
static inline int spec_write(int outer, uint32_t id,
			     const struct usdt_spec *spec)
{
	uint32_t idx = id % USDT_SPEC_CHUNK;
	int fd = inner_fd(outer, id / USDT_SPEC_CHUNK), err = 0;

	if (fd < 0)
		return -ENOENT;
	if (bpf_map_update_elem(fd, &idx, spec, BPF_ANY))
		err = -errno;
	close(fd);
	return err;
}

/* Every chunk's spec slots: how many hold a nonzero spec, and the lowest
 * index that is zero (or chunks * USDT_SPEC_CHUNK). */
static inline uint32_t specs_used(int outer, uint32_t *first_zero)
{
	static const struct usdt_spec zero;
	uint32_t n = inner_cnt(outer) * USDT_SPEC_CHUNK, id, used = 0;
	struct usdt_spec spec;

	*first_zero = n;
	for (id = 0; id < n; id++) {
		if (spec_read(outer, id, &spec))
			return UINT32_MAX;
		if (memcmp(&spec, &zero, sizeof(spec)))
			used++;
		else if (*first_zero == n)
			*first_zero = id;
	}
	return used;
}

/* Entries of the IP map outer (its hash in entry 0). */
static inline int ip_cnt(int outer)
{
	int fd = inner_fd(outer, 0), n = 0;
	long key, next;

	if (fd < 0)
		return 0;
	while (!bpf_map_get_next_key(fd, n ? &key : NULL, &next)) {
		key = next;
		n++;
	}
	close(fd);
	return n;
}

/* The kernel memory a map is charged ("memlock" of its fdinfo), or 0. */
static inline unsigned long map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lu", &v) == 1)
			break;
	fclose(f);
	return v;
}

#endif /* __LIBUSDT_CHUNK_UTIL_H */
