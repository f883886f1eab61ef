// SPDX-License-Identifier: BSD-2-Clause
/*
 * usdt_links__destroy(): many links, of every kind and of two managers,
 * one of them already freed, destroyed in one call: every kernel link is
 * closed (no descriptor left, no hit counted), every spec ID and IP-map
 * entry given back, every entry set to NULL.
 */
#include <sys/sdt.h>
#include <time.h>

#include <bpf/bpf.h>

#include "test_util.h"
#include "chunk_util.h"
#include "usdt.h"
#include "usdt_spec.h"
#include "usdt_test.h"
#include "usdt_test.skel.h"

#ifndef NLINKS
#define NLINKS 200
#endif

__attribute__((noinline)) void fire_many(long v)
{
	STAP_PROBE1(links, many, v);
}

/* Every spec of the object is zero: every ID was given back. */
static void assert_specs_zero(struct usdt_test *skel)
{
	uint32_t zero;

	assert_int_equal(specs_used(bpf_map__fd(skel->maps.usdt__spec_head),
				    bpf_map__fd(skel->maps.usdt__specs), &zero),
			 0);
}

static int ip_entries(struct usdt_test *skel)
{
	return ip_cnt(bpf_map__fd(skel->maps.usdt__ip2spec));
}

static struct usdt_test *load(struct usdt_manager **man, bool perf)
{
	USDT_OPTS(usdt_manager_opts, o, .no_uprobe_multi = perf,
		  .max_specs = 2 * NLINKS, .keep_ip_map = true);
	struct usdt_test *skel = usdt_test__open();

	assert_non_null(skel);
	*man = usdt_manager__new(skel->obj, &o);
	assert_non_null(*man);
	assert_int_equal(usdt_test__load(skel), 0);
	return skel;
}

static void test_many_links(void **state)
{
	struct usdt_manager *man, *perf_man;
	struct usdt_test *skel = load(&man, false);
	struct usdt_test *perf_skel = load(&perf_man, true);
	struct usdt_link *links[NLINKS + 3] = { NULL };
	int fds = usdt_test_count_fds(), i, n = 0;
	struct timespec t0, t1;

	/* Each with its own cookie: each its own spec ID. */
	for (i = 0; i < NLINKS; i++) {
		USDT_OPTS(usdt_attach_opts, o, .usdt_cookie = i + 1);

		links[n++] = usdt_manager__attach(man, skel->progs.on_usdt, -1,
						  "/proc/self/exe", "links",
						  "many", &o);
		assert_non_null(links[n - 1]);
	}
	{
		USDT_OPTS(usdt_attach_opts, ip, .force_ip_map = true);

		links[n++] = usdt_manager__attach(perf_man,
						  perf_skel->progs.on_usdt, 0,
						  "/proc/self/exe", "links",
						  "many", &ip);
		assert_non_null(links[n - 1]);
	}
	links[n++] = NULL;	/* skipped */
	links[n++] = usdt_manager__attach(perf_man, perf_skel->progs.on_usdt3,
					  -1, "/proc/self/exe", "links", "many",
					  NULL);
	assert_non_null(links[n - 1]);
	assert_true(usdt_test_count_fds() > fds);
	assert_int_equal(ip_entries(perf_skel), 1);
	fire_many(1);
	assert_int_equal(skel->bss->hit_cnt, NLINKS);
	assert_int_equal(perf_skel->bss->hit_cnt, 2);

	/* Links outlive their manager. */
	usdt_manager__free(perf_man);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(usdt_links__destroy(links, n), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message("%d links destroyed in %.3f s\n", n - 1,
		      (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (i = 0; i < n; i++)
		assert_null(links[i]);
	skel->bss->hit_cnt = perf_skel->bss->hit_cnt = 0;
	fire_many(2);
	assert_int_equal(skel->bss->hit_cnt, 0);
	assert_int_equal(perf_skel->bss->hit_cnt, 0);
	assert_specs_zero(skel);
	assert_specs_zero(perf_skel);
	assert_int_equal(ip_entries(perf_skel), 0);

	/* The manager still makes links: its IDs came back. */
	links[0] = usdt_manager__attach(man, skel->progs.on_usdt, -1,
					"/proc/self/exe", "links", "many",
					NULL);
	assert_non_null(links[0]);
	assert_int_equal(usdt_links__destroy(links, 1), 0);
	usdt_manager__free(man);
	/* Nothing of the links or the managers stays open. */
	assert_int_equal(usdt_test_count_fds(), fds);
	usdt_test__destroy(skel);
	usdt_test__destroy(perf_skel);
}

static void test_nothing(void **state)
{
	struct usdt_link *none[2] = { NULL, NULL };

	assert_int_equal(usdt_links__destroy(NULL, 0), 0);
	assert_int_equal(usdt_links__destroy(none, 2), 0);
	errno = 0;
	assert_int_equal(usdt_links__destroy(NULL, 1), -EINVAL);
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing),
		cmocka_unit_test(test_many_links),
	};

	usdt_test_require_kernel("kernel/test_links_destroy");
	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("links_destroy", tests, NULL, NULL);
}
