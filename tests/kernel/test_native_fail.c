// SPDX-License-Identifier: BSD-2-Clause
/*
 * libbpf's own flow (src/libbpf/progh.c) when a system call fails: the library's
 * calls of the kernel (through libbpf), and its readlink(), mmap() and
 * fcntl(), are wrapped (-Wl,--wrap, tests/kernel/kernel.mk) so that the
 * Nth one fails with ENOMEM, EIO or EINTR, for N from 0 until a call
 * takes no failure: usdt_program__attach() and a skeleton's __attach()
 * (the implicit spec store's lookup, its release of closed objects'
 * stores, the attach itself, the sweep of links' records), and the
 * section handler at load. Each attempt must fail with that
 * error or succeed, and change nothing else: a link attached before goes
 * on reading its arguments and cookie on real hits, and the next attach
 * works (a store freed while its object lives leaves its chunks in the
 * maps, where a new store finds them taken: EBUSY for good).
 * libbpf's own calls are not wrapped: it is a shared library. Nor are
 * the reader's (open(), stat(), pread() of the target file): a search for
 * a library by name goes past a candidate it cannot read, and ends in
 * ENOENT, as the loader's does.
 */
#include <sys/mman.h>
#include <sys/sdt.h>

#include <bpf/bpf.h>
#include <bpf/libbpf_version.h>

#include "test_util.h"
#include "kernel/kfeatures.h"
#include "usdt.h"
#include "native.skel.h"

#ifndef KTEST_LIB_DIR
#define KTEST_LIB_DIR "build/tests/kernel"
#endif

void lib_fire(int x);

/* While fail_at >= 0, wrapped call number fail_at (from 0, in call_cnt)
 * fails with fail_err. */
static long fail_at = -1, call_cnt;
static int fail_err;
static const char *failed;	/* the function that failed, for messages */

static bool inject(const char *fn)
{
	if (fail_at < 0 || call_cnt++ != fail_at)
		return false;
	errno = fail_err;
	failed = fn;
	return true;
}

/* A wrapper of a function that returns 0 or -errno (libbpf's) or -1 and
 * errno (libc's): ret is what it returns on failure. */
#define WRAP(ret, type, name, params, args)                                \
	type __real_##name params;                                         \
	type __wrap_##name params;                                         \
	type __wrap_##name params                                          \
	{                                                                  \
		return inject(#name) ? (ret) : __real_##name args;         \
	}

WRAP(-fail_err, int, bpf_obj_get_info_by_fd,
     (int fd, void *info, __u32 *len), (fd, info, len))
WRAP(-fail_err, int, bpf_map_lookup_elem,
     (int fd, const void *key, void *value), (fd, key, value))
WRAP(-fail_err, int, bpf_map_update_elem,
     (int fd, const void *key, const void *value, __u64 flags),
     (fd, key, value, flags))
WRAP(-fail_err, int, bpf_map_update_batch,
     (int fd, const void *keys, const void *values, __u32 *count,
      const struct bpf_map_batch_opts *opts),
     (fd, keys, values, count, opts))
WRAP(-fail_err, int, bpf_map_delete_elem, (int fd, const void *key),
     (fd, key))
WRAP(-fail_err, int, bpf_map_get_next_key,
     (int fd, const void *key, void *next_key), (fd, key, next_key))
WRAP(-fail_err, int, bpf_map_create,
     (enum bpf_map_type type, const char *name, __u32 key_sz, __u32 value_sz,
      __u32 max, const struct bpf_map_create_opts *opts),
     (type, name, key_sz, value_sz, max, opts))
WRAP(-fail_err, int, bpf_link_create,
     (int prog_fd, int target_fd, enum bpf_attach_type type,
      const struct bpf_link_create_opts *opts),
     (prog_fd, target_fd, type, opts))
WRAP(-fail_err, int, bpf_link_get_fd_by_id, (__u32 id), (id))
WRAP(-fail_err, int, bpf_obj_pin, (int fd, const char *path), (fd, path))
WRAP(NULL, struct bpf_link *, bpf_link__open, (const char *path), (path))
WRAP(NULL, struct bpf_link *, bpf_program__attach_uprobe_opts,
     (const struct bpf_program *prog, pid_t pid, const char *path,
      size_t off, const struct bpf_uprobe_opts *opts),
     (prog, pid, path, off, opts))
#if LIBBPF_MAJOR_VERSION > 1 || LIBBPF_MINOR_VERSION >= 3
WRAP(NULL, struct bpf_link *, bpf_program__attach_uprobe_multi,
     (const struct bpf_program *prog, pid_t pid, const char *path,
      const char *pattern, const struct bpf_uprobe_multi_opts *opts),
     (prog, pid, path, pattern, opts))
#endif
WRAP(-1, ssize_t, readlink, (const char *path, char *buf, size_t size),
     (path, buf, size))
WRAP(MAP_FAILED, void *, mmap,
     (void *addr, size_t len, int prot, int flags, int fd, off_t off),
     (addr, len, prot, flags, fd, off))

int __real_fcntl(int fd, int cmd, ...);
int __wrap_fcntl(int fd, int cmd, ...);
int __wrap_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);	/* F_DUPFD_CLOEXEC, all the library uses */
	va_end(ap);
	return inject("fcntl") ? -1 : __real_fcntl(fd, cmd, arg);
}

static volatile long g_b = 1000;

/* sf:two, in this program: on_args reads it. */
__attribute__((noinline)) void fire_two(int a)
{
	STAP_PROBE2(sf, two, a, g_b + a);
}

static __attribute__((always_inline)) inline void pair_site(int a)
{
	STAP_PROBE2(sf, pair, a, g_b + a);
}

/* sf:pair's two sites: several sites take one uprobe_multi link, which
 * only a program loaded for one takes. */
__attribute__((noinline)) void fire_pair(int a)
{
	pair_site(a);
	pair_site(a + 1);
}

#define LIVE_COOKIE 0x11	/* the live link's, on sf:two */
#define TRY_COOKIE 0x22		/* the attempts' */
#define NEXT_COOKIE 0x33	/* an attach after each attempt */

/* The live link on_args -> sf:two reads both arguments and its cookie. */
static void check_live(struct native *skel, int a)
{
	__u32 hits = skel->bss->args_hits;

	fire_two(a);
	assert_int_equal(skel->bss->args_hits, hits + 1);
	assert_int_equal(skel->bss->args_cnt, 2);
	assert_int_equal(skel->bss->args_cookie, LIVE_COOKIE);
	assert_int_equal(skel->bss->args_err[0], 0);
	assert_int_equal(skel->bss->args_err[1], 0);
	assert_int_equal(skel->bss->args_val[0], a);
	assert_int_equal(skel->bss->args_val[1], 1000 + a);
}

/* The one link of on_lib_fire (on testlib:fire) reads x and cookie. */
static void check_fire(struct native *skel, int x, long cookie)
{
	__u32 hits = skel->bss->lib_hits;

	lib_fire(x);
	assert_int_equal(skel->bss->lib_hits, hits + 1);
	assert_int_equal(skel->bss->lib_x, x);
	assert_int_equal(skel->bss->lib_cookie, cookie);
}

static struct bpf_link *attach_fire(struct native *skel, long cookie)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = cookie);

	return usdt_program__attach(skel->progs.on_lib_fire, -1,
				    "libusdttest.so", "testlib", "fire", &uo);
}

/* After an attempt: the live link reads right, and an attach works. */
static void check_after(struct native *skel, long n)
{
	struct bpf_link *l;

	check_live(skel, (int)n);
	l = attach_fire(skel, NEXT_COOKIE);
	if (!l)
		fail_msg("attach after failure %ld (of %s): %s", n, failed,
			 strerror(errno));
	check_fire(skel, (int)n, NEXT_COOKIE);
	assert_int_equal(bpf_link__destroy(l), 0);
}

/* Arm failure n of err. */
static void arm(long n, int err)
{
	call_cnt = 0;
	fail_err = err;
	fail_at = n;
}

/* Disarm: true when the attempt's calls took no failure (the last N). */
static bool disarm(long n)
{
	fail_at = -1;
	return call_cnt <= n;
}

/* A skeleton loaded, and its live link: on_args on sf:two. */
static struct native *setup(struct bpf_link **live)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = LIVE_COOKIE);
	struct native *skel = native__open_and_load();

	assert_non_null(skel);
	*live = usdt_program__attach(skel->progs.on_args, -1, "/proc/self/exe",
				     "sf", "two", &uo);
	assert_non_null(*live);
	check_live(skel, 1);
	return skel;
}

/* What an attempt gave: the error injected, or success. */
static void check_result(bool ok, long n, int err, int got)
{
	if (!ok && got != err)
		fail_msg("failure %ld (%s of %s): the call failed with %s", n,
			 strerror(err), failed, strerror(got));
}

/* usdt_program__attach() with each of its calls failing in turn. */
static long attach_loop(int err)
{
	struct bpf_link *live, *l;
	struct native *skel = setup(&live);
	bool done;
	long n;

	for (n = 0;; n++) {
		arm(n, err);
		l = attach_fire(skel, TRY_COOKIE);
		done = disarm(n);
		check_result(l, n, err, errno);
		if (l) {
			check_fire(skel, (int)n, TRY_COOKIE);
			assert_int_equal(bpf_link__destroy(l), 0);
		}
		check_after(skel, n);
		if (done)
			break;
	}
	assert_int_equal(bpf_link__destroy(live), 0);
	native__destroy(skel);
	return n;
}

/* A skeleton's __attach() (the section handler) the same way. */
static long skel_loop(int err)
{
	struct bpf_link *live;
	struct native *skel = setup(&live);
	bool done;
	long n;
	int rc;

	for (n = 0;; n++) {
		arm(n, err);
		rc = native__attach(skel);
		done = disarm(n);
		check_result(!rc, n, err, -rc);
		if (!rc)
			check_fire(skel, (int)n, 0);
		native__detach(skel);
		check_after(skel, n);
		if (done)
			break;
	}
	assert_int_equal(bpf_link__destroy(live), 0);
	native__destroy(skel);
	return n;
}

/* on_args of a skeleton just loaded attaches to sf:pair and reads both
 * sites' arguments and its cookie; without uprobe_multi (Linux before
 * 6.6: no one bpf_link over two perf uprobes), on_lib_fire, on one site,
 * reads its argument and cookie. */
static void check_loaded(struct native *skel)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = TRY_COOKIE);
	struct bpf_link *l;

	if (!usdt__features()->uprobe_multi) {
		l = attach_fire(skel, TRY_COOKIE);
		if (!l)
			fail_msg("attach after a load: %s", strerror(errno));
		check_fire(skel, 9, TRY_COOKIE);
		assert_int_equal(bpf_link__destroy(l), 0);
		return;
	}
	l = usdt_program__attach(skel->progs.on_args, -1, "/proc/self/exe",
				 "sf", "pair", &uo);
	if (!l)
		fail_msg("attach after a load: %s", strerror(errno));
	fire_pair(7);
	assert_int_equal(skel->bss->args_hits, 2);
	assert_int_equal(skel->bss->args_cookie, TRY_COOKIE);
	assert_int_equal(skel->bss->args_err[1], 0);
	assert_int_equal(skel->bss->args_val[0], 8);	/* the last hit's */
	assert_int_equal(skel->bss->args_val[1], 1008);
	assert_int_equal(bpf_link__destroy(l), 0);
}

/*
 * The load the same way: the handler reads the maps each program names,
 * which tell the programs of usdt.bpf.h, loaded for uprobe_multi links,
 * from libbpf's header's. A program it loaded attaches and reads right.
 */
static long load_loop(int err)
{
	struct native *skel;
	bool done;
	long n;
	int rc;

	for (n = 0;; n++) {
		skel = native__open();
		assert_non_null(skel);
		arm(n, err);
		rc = native__load(skel);
		done = disarm(n);
		check_result(!rc, n, err, -rc);
		if (!rc)
			check_loaded(skel);
		native__destroy(skel);
		if (done)
			break;
	}
	return n;
}

static const int errs[] = { ENOMEM, EIO, EINTR };

static void test_attach(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		print_message("usdt_program__attach(), %s: %ld calls\n",
			      strerror(errs[i]), attach_loop(errs[i]));
}

static void test_skel_attach(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		print_message("__attach(), %s: %ld calls\n", strerror(errs[i]),
			      skel_loop(errs[i]));
}

static void test_load(void **state)
{
	(void)state;
	/* One error: each attempt loads the object again (the verifier's
	 * time), and the handler's calls do not tell errors apart. */
	print_message("__load(), %s: %ld calls\n", strerror(ENOMEM),
		      load_loop(ENOMEM));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach),
		cmocka_unit_test(test_skel_attach),
		cmocka_unit_test(test_load),
	};

	usdt_test_require_kernel("test_native_fail");
	/* Where a loader finds libusdttest.so (see test_native). */
	setenv("LD_LIBRARY_PATH", KTEST_LIB_DIR, 1);
	usdt_test_need_bpffs("test_native_fail");
	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("native_fail", tests, NULL, NULL);
}
