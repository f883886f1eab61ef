// SPDX-License-Identifier: BSD-2-Clause
/*
 * The examples run as a user would run them: each traces its target and
 * prints the target's three greetings with their arguments.
 */
#include "test_util.h"

static void run_example(const char *name)
{
	static const char *const want[] = {
		"greeted #1: \"world\"", "greeted #2: \"bpf\"",
		"greeted #3: \"usdt\"",
	};
	char cmd[512], line[512];
	size_t i, found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/examples/%s 2>&1", USDT_OBJDIR, name);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		printf("%s", line);
		for (i = found; i < (sizeof(want) / sizeof(want[0])); i++) {
			if (strstr(line, want[i])) {
				assert_int_equal(i, found);
				found++;
				break;
			}
		}
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(found, (sizeof(want) / sizeof(want[0])));
}

/* usdt_manager__attach() by path and probe name. */
static void test_hello(void **state)
{
	run_example("hello");
}

/* SEC("usdt/target:hello:greet"), usdt_manager__attach_all() by pid. */
static void test_hello_skel(void **state)
{
	run_example("hello_skel");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_hello_skel),
	};

	usdt_test_require_kernel("test_examples");
	return cmocka_run_group_tests_name("examples", tests, NULL, NULL);
}
