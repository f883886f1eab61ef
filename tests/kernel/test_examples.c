// SPDX-License-Identifier: BSD-2-Clause
/*
 * The examples run as a user would run them: each traces its target and
 * prints the target's three greetings with their arguments (hello), or
 * its per-attach counters (counters).
 */
#include "test_util.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const char *const greetings[] = {
	"greeted #1: \"world\"", "greeted #2: \"bpf\"",
	"greeted #3: \"usdt\"",
};

/* Run examples/name; its output must have the lines want[0..n), in order. */
static void run_want(const char *name, const char *const *want, size_t n)
{
	char cmd[512], line[512];
	size_t i, found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/examples/%s 2>&1", USDT_OBJDIR, name);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		printf("%s", line);
		for (i = found; i < n; i++) {
			if (strstr(line, want[i])) {
				assert_int_equal(i, found);
				found++;
				break;
			}
		}
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(found, n);
}

static void run_example(const char *name)
{
	run_want(name, greetings, N_OF(greetings));
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

/* Per-attach storage: one program on two probes, each with its own
 * threshold; a counter for the link, and one per call site. */
static void test_counters(void **state)
{
	static const char *const want[] = {
		"hello:greet site 0: 3 hits, 2 counted (first argument >= 2)",
		"hello:farewell site 0: 2 hits, 1 counted (first argument >= 1)",
		"hello:farewell site 1: 1 hits, 1 counted (first argument >= 1)",
	};

	run_want("counters", want, N_OF(want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_hello_skel),
		cmocka_unit_test(test_counters),
	};

	usdt_test_require_kernel("test_examples");
	/* hello_skel's skeleton link, with libbpf 1.1, needs a bpffs. */
	usdt_test_need_bpffs("test_examples");
	return cmocka_run_group_tests_name("examples", tests, NULL, NULL);
}
