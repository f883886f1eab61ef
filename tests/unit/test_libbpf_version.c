// SPDX-License-Identifier: BSD-2-Clause
/*
 * The libbpf a test program runs with is the one it was built against:
 * `make LIBBPF=1.7` must not compile against one libbpf and run another.
 */
#include "test_util.h"

#include <bpf/libbpf_version.h>

static void test_runtime_is_build_time(void **state)
{
	char want[32];

	assert_int_equal(libbpf_major_version(), LIBBPF_MAJOR_VERSION);
	assert_int_equal(libbpf_minor_version(), LIBBPF_MINOR_VERSION);
	snprintf(want, sizeof(want), "v%d.%d", LIBBPF_MAJOR_VERSION,
		 LIBBPF_MINOR_VERSION);
	assert_string_equal(libbpf_version_string(), want);
}

/* USDT_LIBBPF is make's LIBBPF=..., empty for the system's libbpf. */
static void test_requested_version(void **state)
{
	char want[32];

	if (!USDT_LIBBPF[0]) {
		printf("system libbpf %s\n", libbpf_version_string());
		return;
	}
	snprintf(want, sizeof(want), "v%s", USDT_LIBBPF);
	assert_string_equal(libbpf_version_string(), want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtime_is_build_time),
		cmocka_unit_test(test_requested_version),
	};

	return cmocka_run_group_tests_name("libbpf_version", tests, NULL, NULL);
}
