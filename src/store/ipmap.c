// SPDX-License-Identifier: BSD-2-Clause
/*
 * The IP map, for attaches without cookies: run-time address of a call
 * site -> struct usdt_ip_val. bpf/usdt.bpf.h declares it as an array of
 * one map; entry 0 is a preallocated hash created here at the first
 * IP-map attach, and replaced by one twice as big (up to the cap) when an
 * attach needs more room: the new hash gets every entry of the old before
 * it takes the old one's place, so a hit reads one or the other, complete.
 *
 * Why not one run-time allocated hash (BPF_F_NO_PREALLOC) of the largest
 * size: tracing programs may use such maps without complaint only from 6.1
 * (the BPF memory allocator; before, the verifier warns with a kernel
 * WARN and PREEMPT_RT kernels refuse), and its buckets alone would cost
 * 16 bytes per entry of the cap. A preallocated hash costs its entries up
 * front: sized on demand, an object that never uses the IP map pays for an
 * outer array of one entry.
 */
#include <fcntl.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "base/base.h"
#include "store/chunks.h"
#include "store/ipmap.h"

#define IPMAP_MIN 64

/* A hash of size entries holding every entry of the current one (*cnt of
 * them), or the error: an entry left out would be a live link's. */
static int ipmap_copy(const struct usdt__ipmap *m, uint32_t size, uint32_t *cnt)
{
	struct usdt_ip_val val;
	long key, *prev = NULL;
	int fd, err;

	*cnt = 0;
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "usdt__ips", sizeof(long),
			    sizeof(val), size, NULL);
	if (fd < 0)
		return -errno;
	while (m->fd >= 0) {
		err = bpf_map_get_next_key(m->fd, prev, &key);
		if (err == -ENOENT)
			break; /* the last one */
		prev = &key;
		if (!err)
			err = bpf_map_lookup_elem(m->fd, &key, &val);
		if (!err)
			err = bpf_map_update_elem(fd, &key, &val, BPF_NOEXIST);
		if (err)
			goto err_out;
		++*cnt;
	}
	return fd;

err_out:
	close(fd);
	return err;
}

/* Room for n more entries, or -E2BIG past the cap. */
int usdt__ipmap_reserve(struct usdt__ipmap *m, int outer, uint32_t n)
{
	uint32_t want = m->cnt + n, size, zero = 0, id, cnt;
	int fd, err;

	if (n > m->cap || want > m->cap)
		return -E2BIG;
	if (m->fd >= 0 && want <= m->size)
		return 0;
	if (m->outer_fd < 0) {
		m->outer_fd = fcntl(outer, F_DUPFD_CLOEXEC, 3);
		if (m->outer_fd < 0)
			return -errno;
		m->outer_id = usdt__obj_id(m->outer_fd);
		/* Only ENOENT says the slot is free (see chunk_add()). */
		err = bpf_map_lookup_elem(m->outer_fd, &zero, &id);
		if (!err && usdt__claim_is_free(m->outer_id, id))
			err = -ENOENT;
		if (err != -ENOENT) {
			if (!err)
				pr_warn("usdt__ip2spec already holds a map: is it shared with another manager (reused or pinned)?\n");
			else
				pr_warn("cannot read usdt__ip2spec: %s\n",
					usdt__errstr(err));
			close(m->outer_fd);
			m->outer_fd = -1;
			return err ? err : -EBUSY;
		}
	}
	size = m->size ? m->size : IPMAP_MIN;
	if (size > m->cap)
		size = m->cap;
	while (size < want)
		size = size > m->cap / 2 ? m->cap : size * 2;
	fd = ipmap_copy(m, size, &cnt);
	if (fd >= 0 && bpf_map_update_elem(m->outer_fd, &zero, &fd, BPF_ANY)) {
		err = -errno;
		close(fd);
		fd = err;
	}
	if (fd < 0) {
		pr_warn("cannot make the IP map %u entries big: %s\n", size,
			usdt__errstr(fd));
		return fd;
	}
	if (m->fd >= 0)
		close(m->fd);
	m->fd = fd;
	m->hash_id = usdt__obj_id(fd);
	m->size = size;
	m->cnt = cnt;
	return 0;
}

int usdt__ipmap_add(struct usdt__ipmap *m, int outer, long key,
		    const struct usdt_ip_val *val)
{
	int err = usdt__ipmap_reserve(m, outer, 1);

	if (err)
		return err;
	if (bpf_map_update_elem(m->fd, &key, val, BPF_NOEXIST))
		return -errno;
	m->cnt++;
	return 0;
}

int usdt__ipmap_del(struct usdt__ipmap *m, long key)
{
	if (m->fd < 0 || bpf_map_delete_elem(m->fd, &key))
		return m->fd < 0 ? -ENOENT : -errno;
	m->cnt--;
	return 0;
}

void usdt__ipmap_close(struct usdt__ipmap *m, bool reusable)
{
	if (m->outer_fd >= 0) {
		if (reusable && m->fd >= 0)
			usdt__claim_free(m->outer_id, m->hash_id);
		close(m->outer_fd);
	}
	if (m->fd >= 0)
		close(m->fd);
	m->outer_fd = m->fd = -1;
	m->size = m->cnt = 0;
}
