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
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "usdt_spec.h"
#include "kernel/kfeatures.h"

/*
 * Before Linux 6.8 every lookup of an array of maps from user space waits
 * for an RCU grace period (maybe_wait_bpf_programs() at the end of
 * bpf_map_copy_value()): about 10 ms each, on the host as in the guests of
 * `make vm-check`. So the helpers here look up as few outer entries as
 * they can: the library fills the chunks of an array of maps densely,
 * from entry 0 on (src/store/chunks.c), so the first empty entry ends them.
 */

/* A descriptor of entry k of an array of maps (close it), or -1 if the
 * entry is empty; -2 if it holds a map that cannot be opened. */
static inline int inner_fd(int outer, uint32_t k)
{
	uint32_t id;
	int fd;

	if (bpf_map_lookup_elem(outer, &k, &id))
		return -1;
	fd = bpf_map_get_fd_by_id(id);
	return fd < 0 ? -2 : fd;
}

/* How many chunks the array of maps holds: entries 0, 1, ... up to the
 * first empty one. */
static inline uint32_t inner_cnt(int outer)
{
	uint32_t k, id;

	for (k = 0; !bpf_map_lookup_elem(outer, &k, &id); k++)
		;
	return k;
}

/* The specs the head holds: its entries less the token's. */
static inline uint32_t head_cnt(int head)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(head, &info, &len) || !info.max_entries)
		return 0;
	return info.max_entries - 1;
}

/*
 * The specs a manager leaves in the spec head of obj, built with a head
 * of n: n, or none where this kernel verifies the BPF header's readers at
 * every call (no kernel BTF: Debian's s390x 6.1), where the manager, made
 * for obj, has made them static in its BTF, gives the head up before load
 * and the outer array takes its specs (src/libbpf/object.c).
 */
static inline uint32_t head_kept(const struct bpf_object *obj, uint32_t n)
{
	const struct btf *btf = bpf_object__btf(obj);
	int id = btf__find_by_name_kind(btf, "usdt__arg", BTF_KIND_FUNC);

	if (!usdt__ctx_funcs_fit(btf, usdt__features()) ||
	    (id > 0 && btf_vlen(btf__type_by_id(btf, id)) == BTF_FUNC_STATIC))
		return 0;
	return n;
}

/* The outer spec array a manager sizes for a cap of cap specs and an
 * object's head of n specs, kept (head_kept()) or given up (kept 0). */
static inline uint32_t outer_for(uint32_t cap, uint32_t n, uint32_t kept)
{
	uint32_t outer = cap > n ? (cap - n - 1) / USDT_SPEC_CHUNK + 1 : 1;

	return kept ? outer : outer + (n + USDT_SPEC_CHUNK - 1) /
						   USDT_SPEC_CHUNK;
}

/* Where spec id of the head head and the spec map outer is: a descriptor
 * (close it), or -1 if its chunk is not there, -2 if it cannot be opened;
 * its key in *idx. */
static inline int spec_fd(int head, int outer, uint32_t id, uint32_t *idx)
{
	uint32_t h = head_cnt(head);

	if (id < h) {
		*idx = id;
		return dup(head);
	}
	*idx = (id - h) % USDT_SPEC_CHUNK;
	return inner_fd(outer, (id - h) / USDT_SPEC_CHUNK);
}

/* Spec id of the head head and spec map outer into *spec; zero if its
 * chunk is not there. Returns 0, or the lookup's -errno. */
static inline int spec_read(int head, int outer, uint32_t id,
			    struct usdt_spec *spec)
{
	uint32_t idx;
	int fd = spec_fd(head, outer, id, &idx), err = 0;

	memset(spec, 0, sizeof(*spec));
	if (fd < 0)
		return fd == -1 ? 0 : -ENOENT;
	if (bpf_map_lookup_elem(fd, &idx, spec))
		err = -errno;
	close(fd);
	return err;
}

/* Overwrite spec id (its chunk must exist). */
static inline int spec_write(int head, int outer, uint32_t id,
			     const struct usdt_spec *spec)
{
	uint32_t idx;
	int fd = spec_fd(head, outer, id, &idx), err = 0;

	if (fd < 0)
		return -ENOENT;
	if (bpf_map_update_elem(fd, &idx, spec, BPF_ANY))
		err = -errno;
	close(fd);
	return err;
}

/* Every spec slot of the head head and the chunks of outer, each map
 * opened once: how many hold a nonzero spec, and the lowest ID that is
 * zero (or the slots' count). UINT32_MAX if a map cannot be read. */
static inline uint32_t specs_used(int head, int outer, uint32_t *first_zero)
{
	static const struct usdt_spec zero;
	uint32_t k, idx, per, n = 0, used = 0;
	struct usdt_spec spec;
	int fd, err = 0;

	*first_zero = UINT32_MAX;
	for (k = 0; !err && (fd = k ? inner_fd(outer, k - 1) : dup(head)) >= 0;
	     k++) {
		per = k ? USDT_SPEC_CHUNK : head_cnt(head);
		for (idx = 0; idx < per; idx++, n++) {
			err = bpf_map_lookup_elem(fd, &idx, &spec);
			if (err)
				break;
			if (memcmp(&spec, &zero, sizeof(spec)))
				used++;
			else if (*first_zero == UINT32_MAX)
				*first_zero = n;
		}
		close(fd);
	}
	if (err || fd == -2)
		return UINT32_MAX;
	if (*first_zero == UINT32_MAX)
		*first_zero = n;
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
