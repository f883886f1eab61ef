// SPDX-License-Identifier: BSD-2-Clause
/*
 * libusdt in libbpf's own flow, with no usdt_manager: the skeleton's
 * __attach() fills skel->links, bpf_link__destroy() and
 * usdt_program__attach() (libbpf's arguments and opts) re-attach with a
 * new cookie, and what destroyed links held in the spec map comes back.
 */
#include <sched.h>
#include <sys/mount.h>

#include <bpf/bpf.h>

#include "test_util.h"
#include "manager.h"
#include "native.skel.h"

#ifndef KTEST_LIB_DIR
#define KTEST_LIB_DIR "build/tests/kernel"
#endif
#define LINK_TYPE_PERF_EVENT 7		/* enum bpf_link_type */
#define LINK_TYPE_UPROBE_MULTI 12

void lib_fire(int x);
void cap_fire_more(void);

static __u32 link_type(const struct bpf_link *l)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_obj_get_info_by_fd(bpf_link__fd(l), &info, &len),
			 0);
	return info.type;
}

static void test_skeleton(void **state)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = 0x1234);
	struct native *skel = native__open_and_load();

	(void)state;
	assert_non_null(skel);
	assert_int_equal(native__attach(skel), 0);
	assert_non_null(skel->links.on_lib_fire);
	assert_null(skel->links.on_cap);	/* a bare SEC("usdt") */
	assert_int_equal(link_type(skel->links.on_lib_fire),
			 usdt__features()->uprobe_multi ?
				 LINK_TYPE_UPROBE_MULTI : LINK_TYPE_PERF_EVENT);
	lib_fire(3);
	assert_int_equal(skel->bss->lib_hits, 1);
	assert_int_equal(skel->bss->lib_x, 3);
	assert_int_equal(skel->bss->lib_cookie, 0);

	/* libbpf's selftest flow: destroy the link, attach again. */
	assert_int_equal(bpf_link__destroy(skel->links.on_lib_fire), 0);
	skel->links.on_lib_fire = usdt_program__attach(
		skel->progs.on_lib_fire, -1, "libusdttest.so", "testlib",
		"fire", &uo);
	assert_non_null(skel->links.on_lib_fire);
	lib_fire(4);
	assert_int_equal(skel->bss->lib_hits, 2);	/* once, not twice */
	assert_int_equal(skel->bss->lib_x, 4);
	assert_int_equal(skel->bss->lib_cookie, 0x1234);

	/* A probe that is not there; a program that is not loaded. */
	errno = 0;
	assert_null(usdt_program__attach(skel->progs.on_lib_fire, -1,
					 "libusdttest.so", "testlib", "nope",
					 NULL));
	assert_int_equal(errno, ENOENT);
	assert_null(usdt_program__attach(NULL, -1, "x", "y", "z", NULL));
	assert_int_equal(errno, EINVAL);
	native__destroy(skel);
}

/* cap:more's 64 sites, each a spec of its own, with this cookie. */
static struct bpf_link *attach_more(struct native *skel, long cookie)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = cookie);

	return usdt_program__attach(skel->progs.on_cap, -1, "/proc/self/exe",
				    "cap", "more", &uo);
}

static void fire_more(struct native *skel, __u64 hits, __u64 sum)
{
	skel->bss->cap_hits = skel->bss->cap_sum = 0;
	cap_fire_more();
	assert_int_equal(skel->bss->cap_errs, 0);
	assert_int_equal(skel->bss->cap_hits, hits);
	assert_int_equal(skel->bss->cap_sum, sum);
}

/* The sum of cap:more's arguments plus a cookie per hit. */
#define MORE_SUM(cookie) (64 * 100000 + 63 * 64 / 2 + 64 * (cookie))

static void test_reclaim(void **state)
{
	struct native *skel = native__open_and_load();
	struct bpf_link *l[4];
	int i;

	(void)state;
	assert_non_null(skel);
	if (!usdt__features()->uprobe_multi) {
		/* 64 sites need a uprobe_multi link: no one bpf_link. */
		assert_null(attach_more(skel, 1));
		assert_int_equal(errno, EOPNOTSUPP);
		native__destroy(skel);
		return;
	}
	/* 4 x 64 distinct specs fill the 256: one more does not fit. */
	for (i = 0; i < 4; i++) {
		l[i] = attach_more(skel, i + 1);
		assert_non_null(l[i]);
	}
	fire_more(skel, 4 * 64, MORE_SUM(1) + MORE_SUM(2) + MORE_SUM(3) +
					MORE_SUM(4));
	errno = 0;
	assert_null(attach_more(skel, 5));
	assert_int_equal(errno, E2BIG);
	fire_more(skel, 4 * 64, MORE_SUM(1) + MORE_SUM(2) + MORE_SUM(3) +
					MORE_SUM(4));
	/* Destroyed through libbpf: their specs come back, again and
	 * again, and the live link's stay as they are. */
	for (i = 1; i < 4; i++)
		assert_int_equal(bpf_link__destroy(l[i]), 0);
	for (i = 0; i < 12; i++) {
		struct bpf_link *n = attach_more(skel, 10 + i);

		assert_non_null(n);
		fire_more(skel, 2 * 64, MORE_SUM(1) + MORE_SUM(10 + i));
		assert_int_equal(bpf_link__destroy(n), 0);
	}
	fire_more(skel, 64, MORE_SUM(1));
	assert_int_equal(bpf_link__destroy(l[0]), 0);
	native__destroy(skel);
}

/*
 * With libbpf before 1.3 a uprobe_multi link reaches libbpf through a BPF
 * file system, as systemd mounts at /sys/fs/bpf; where none is (the VM
 * guests), one of our own, in a mount namespace of our own.
 */
static void need_bpffs(void)
{
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f = fopen("/proc/self/mounts", "re");

	assert_non_null(f);
	while (!found && getline(&line, &cap, f) > 0)
		found = strstr(line, " bpf ") != NULL;
	free(line);
	fclose(f);
	if (found)
		return;
	printf("no BPF file system mounted: one at /sys/fs/bpf, in a mount namespace of our own\n");
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL)) {
		perror("test_native: bpffs");
		exit(1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skeleton),
		cmocka_unit_test(test_reclaim),
	};

	usdt_test_require_kernel("test_native");
	/* Where a loader finds libusdttest.so: pid -1 resolves a bare
	 * library name as libbpf does, not through our own maps. */
	setenv("LD_LIBRARY_PATH", KTEST_LIB_DIR, 1);
	need_bpffs();
	return cmocka_run_group_tests_name("native", tests, NULL, NULL);
}
