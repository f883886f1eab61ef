// SPDX-License-Identifier: BSD-2-Clause
/* The version calls, the header's macros and the pkg-config file agree. */
#include "test_util.h"
#include "usdt.h"

static void test_calls_match_header(void **state)
{
	char want[32];

	assert_int_equal(usdt_major_version(), USDT_MAJOR_VERSION);
	assert_int_equal(usdt_minor_version(), USDT_MINOR_VERSION);
	snprintf(want, sizeof(want), "v%d.%d", USDT_MAJOR_VERSION,
		 USDT_MINOR_VERSION);
	assert_string_equal(usdt_version_string(), want);
}

/* libusdt.pc: this version, and the oldest libbpf libusdt works with. */
static void test_pkg_config(void **state)
{
	char path[512], line[256], want[64];
	bool version = false, requires = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/libusdt.pc", USDT_OBJDIR);
	f = fopen(path, "r");
	assert_non_null(f);
	snprintf(want, sizeof(want), "Version: %d.%d.", USDT_MAJOR_VERSION,
		 USDT_MINOR_VERSION);
	while (fgets(line, sizeof(line), f)) {
		version |= !strncmp(line, want, strlen(want));
		requires |= !strcmp(line, "Requires: libbpf >= 1.1\n");
	}
	fclose(f);
	assert_true(version);
	assert_true(requires);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calls_match_header),
		cmocka_unit_test(test_pkg_config),
	};

	return cmocka_run_group_tests_name("version", tests, NULL, NULL);
}
