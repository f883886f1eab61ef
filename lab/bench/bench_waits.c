// SPDX-License-Identifier: BSD-2-Clause
/*
 * Counting the map calls that wait for an RCU grace period: the --wrap
 * side of bench_waits.h. Whether a descriptor is an outer map is asked of
 * the kernel once per descriptor and remembered until the descriptor is
 * closed or replaced (close, dup2 and dup3 are wrapped for that), so the
 * count costs one system call per map, not one per update: libbpf writes
 * its specs one update each, and a query per update would slow it down
 * more than us.
 */
#include <stddef.h>
#include <stdio.h>
#include <sys/utsname.h>

#include <bpf/bpf.h>

#include "bench_waits.h"

int __real_bpf_map_update_elem(int fd, const void *key, const void *value,
			       __u64 flags);
int __real_bpf_map_update_batch(int fd, const void *keys, const void *values,
				__u32 *count,
				const struct bpf_map_batch_opts *opts);
int __real_bpf_map_delete_elem(int fd, const void *key);
int __real_bpf_map_delete_batch(int fd, const void *keys, __u32 *count,
				const struct bpf_map_batch_opts *opts);
int __real_close(int fd);
int __real_dup2(int fd, int fd2);
int __real_dup3(int fd, int fd2, int flags);

static struct bench_waits counts;

/* Per descriptor: 0 not asked yet, 1 an outer map, 2 anything else. */
#define KIND_FDS (1 << 20)
static unsigned char kind[KIND_FDS];

static int ask_outer(int fd)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.type == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
	       info.type == BPF_MAP_TYPE_HASH_OF_MAPS;
}

static int is_outer(int fd)
{
	if (fd < 0 || fd >= KIND_FDS)
		return fd >= 0 && ask_outer(fd);
	if (!kind[fd])
		kind[fd] = ask_outer(fd) ? 1 : 2;
	return kind[fd] == 1;
}

static void forget(int fd)
{
	if (fd >= 0 && fd < KIND_FDS)
		kind[fd] = 0;
}

int bench_waits_batch_once(void)
{
	static int once = -1;
	struct utsname u;
	int major = 0, minor = 0;

	if (once < 0) {
		if (!uname(&u))
			sscanf(u.release, "%d.%d", &major, &minor);
		once = major > 6 || (major == 6 && minor >= 8);
	}
	return once;
}

void bench_waits_now(struct bench_waits *w)
{
	w->map_calls = __atomic_load_n(&counts.map_calls, __ATOMIC_RELAXED);
	w->outer_calls = __atomic_load_n(&counts.outer_calls, __ATOMIC_RELAXED);
	w->waits = __atomic_load_n(&counts.waits, __ATOMIC_RELAXED);
	w->closes = __atomic_load_n(&counts.closes, __ATOMIC_RELAXED);
}

#define ADD(field, n) __atomic_fetch_add(&counts.field, (n), __ATOMIC_RELAXED)

/* One call on fd, of n entries (a batch's, as processed); atomic, since
 * usdt_links__destroy() destroys links from many threads. */
static void count(int fd, int batch, __u32 n)
{
	ADD(map_calls, 1);
	if (!is_outer(fd))
		return;
	ADD(outer_calls, 1);
	ADD(waits, batch && !bench_waits_batch_once() ? n : 1);
}

int __wrap_bpf_map_update_elem(int fd, const void *key, const void *value,
			       __u64 flags)
{
	count(fd, 0, 1);
	return __real_bpf_map_update_elem(fd, key, value, flags);
}

int __wrap_bpf_map_update_batch(int fd, const void *keys, const void *values,
				__u32 *count_p,
				const struct bpf_map_batch_opts *opts)
{
	int err = __real_bpf_map_update_batch(fd, keys, values, count_p, opts);

	count(fd, 1, count_p ? *count_p : 0);
	return err;
}

int __wrap_bpf_map_delete_elem(int fd, const void *key)
{
	count(fd, 0, 1);
	return __real_bpf_map_delete_elem(fd, key);
}

int __wrap_bpf_map_delete_batch(int fd, const void *keys, __u32 *count_p,
				const struct bpf_map_batch_opts *opts)
{
	int err = __real_bpf_map_delete_batch(fd, keys, count_p, opts);

	count(fd, 1, count_p ? *count_p : 0);
	return err;
}

int __wrap_close(int fd)
{
	ADD(closes, 1);
	forget(fd);
	return __real_close(fd);
}

int __wrap_dup2(int fd, int fd2)
{
	forget(fd2);
	return __real_dup2(fd, fd2);
}

int __wrap_dup3(int fd, int fd2, int flags)
{
	forget(fd2);
	return __real_dup3(fd, fd2, flags);
}
