// SPDX-License-Identifier: BSD-2-Clause
/*
 * The BPF side loads: a program that includes bpf/usdt.bpf.h passes this
 * kernel's verifier, and the manager finds, sizes and prepares its maps.
 */
#include <linux/bpf.h>
#include <stdbool.h>
#include <sys/utsname.h>

#include "test_util.h"
#include "chunk_util.h"
#include "manager.h"
#include "usdt_test.h"
#include "usdt_test.skel.h"
#include "skel_fixture.h"
#include "no_usdt.skel.h"

static void test_load_and_verify(void **state)
{
	struct usdt_test *skel = usdt_test__open();
	struct usdt_manager *man;

	assert_non_null(skel);
	man = usdt_manager__new(skel->obj, NULL);
	assert_non_null(man);
	assert_int_equal(usdt_test__load(skel), 0);
	assert_true(bpf_program__fd(skel->progs.on_usdt) >= 0);
	assert_true(bpf_program__fd(skel->progs.on_usdt3) >= 0);
	/* The hard limits: 1024 chunks of 64 specs, 4 IPs a spec; no chunk
	 * and no IP hash before the first attach. */
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__specs), 1024);
	assert_int_equal(bpf_map__type(skel->maps.usdt__specs),
			 BPF_MAP_TYPE_ARRAY_OF_MAPS);
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__ip2spec), 1);
	assert_int_equal(man->max_specs, 65536);
	assert_int_equal(man->ips.cap, 4 * 65536);
	assert_int_equal(inner_cnt(bpf_map__fd(skel->maps.usdt__specs)), 0);
	assert_int_equal(inner_cnt(bpf_map__fd(skel->maps.usdt__ip2spec)), 0);
	if (usdt__features()->uprobe_multi)
		assert_int_equal(bpf_program__expected_attach_type(
					 skel->progs.on_usdt),
				 USDT__TRACE_UPROBE_MULTI);
	usdt_manager__free(man);
	usdt_test__destroy(skel);
}

static void test_sizes_before_load(void **state)
{
	USDT_OPTS(usdt_manager_opts, o, .max_specs = 1000, .max_ips = 5000,
		  .no_uprobe_multi = true);
	struct usdt_test *skel = usdt_test__open();
	struct usdt_manager *man;

	assert_non_null(skel);
	man = usdt_manager__new(skel->obj, &o);
	assert_non_null(man);
	assert_int_equal(usdt_test__load(skel), 0);
	/* Caps: chunks for 1000 specs (16 of 64), 1000 and 5000 exactly. */
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__specs), 16);
	assert_int_equal(man->max_specs, 1000);
	assert_int_equal(man->ips.cap, 5000);
	/* no_uprobe_multi leaves the programs for perf uprobes. */
	assert_int_not_equal(bpf_program__expected_attach_type(
				     skel->progs.on_usdt),
			     USDT__TRACE_UPROBE_MULTI);
	usdt_manager__free(man);

	/* After load, sizes are refused and nothing is created; but a
	 * plain manager works after load. */
	usdt_manager__free(manager_refused(skel->obj, &o));
	usdt_test__destroy(skel);
}

static void test_no_maps(void **state)
{
	struct no_usdt *skel = no_usdt__open();

	assert_non_null(skel);
	errno = 0;
	assert_null(usdt_manager__new(skel->obj, NULL));
	assert_int_equal(errno, ESRCH);
	no_usdt__destroy(skel);
}

static void test_bad_opts(void **state)
{
	struct usdt_test *skel = usdt_test__open();
	struct {
		struct usdt_manager_opts o;
		char extra[8];
	} big = { .o.sz = sizeof(big) };

	assert_non_null(skel);
	/* Unknown trailing bytes must be zero. */
	big.extra[3] = 1;
	errno = 0;
	assert_null(usdt_manager__new(skel->obj, &big.o));
	assert_int_equal(errno, EINVAL);
	big.extra[3] = 0;
	struct usdt_manager *man = usdt_manager__new(skel->obj, &big.o);
	assert_non_null(man);

	/* A byte in the struct's own padding past its last field (where a
	 * later version may add one), as libbpf refuses it: the manager's
	 * opts, then an attach's, which takes nothing. */
	struct usdt_manager_opts mo = { .sz = sizeof(mo) };
	size_t end = offsetof(struct usdt_manager_opts, keep_ip_map) +
		     sizeof(mo.keep_ip_map);

	assert_true(end < sizeof(mo));
	((char *)&mo)[end] = 1;
	errno = 0;
	assert_null(usdt_manager__new(skel->obj, &mo));
	assert_int_equal(errno, EINVAL);

	struct usdt_attach_opts ao = { .sz = sizeof(ao) };

	end = offsetof(struct usdt_attach_opts, storage_per_site) +
	      sizeof(ao.storage_per_site);
	assert_true(end < sizeof(ao));
	((char *)&ao)[end] = 1;
	errno = 0;
	assert_null(usdt_manager__attach(man, skel->progs.on_usdt, -1,
					 "/proc/self/exe", "*", "*", &ao));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(usdt_manager__attach_all(man, -1, &ao), -EINVAL);
	assert_int_equal(errno, EINVAL);
	usdt_manager__free(man);
	errno = 0;
	assert_null(usdt_manager__new(NULL, NULL));
	assert_int_equal(errno, EINVAL);
	usdt_test__destroy(skel);
}

/* Is the running kernel version maj.min or newer? */
static bool kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	assert_int_equal(uname(&u), 0);
	assert_int_equal(sscanf(u.release, "%d.%d", &a, &b), 2);
	return a > maj || (a == maj && b >= min);
}

/* Each feature is found exactly on the kernels that have it: Debian's
 * kernels build in everything the probes need, so the version decides. */
static void test_features(void **state)
{
	const struct usdt__features *f = usdt__features();

	printf("features: bpf_cookie=%d uprobe_multi=%d ref_ctr=%d uprobe_syscall=%d\n",
	       f->bpf_cookie, f->uprobe_multi, f->ref_ctr, f->uprobe_syscall);
	assert_int_equal(f->ref_ctr, kernel_at_least(4, 20));
	assert_int_equal(f->bpf_cookie, kernel_at_least(5, 15));
	assert_int_equal(f->uprobe_multi, kernel_at_least(6, 6));
#if defined(__x86_64__)
	/* The uprobe() syscall of x86's optimized uprobes: 6.18. */
	assert_int_equal(f->uprobe_syscall, kernel_at_least(6, 18));
#else
	assert_false(f->uprobe_syscall);
#endif
	assert_ptr_equal(usdt__features(), f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_load_and_verify),
		cmocka_unit_test(test_sizes_before_load),
		cmocka_unit_test(test_no_maps),
		cmocka_unit_test(test_bad_opts),
	};

	usdt_test_require_kernel("kernel/test_load");
	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("load", tests, NULL, NULL);
}
