// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace` on a program of the system: Debian's /usr/bin/python3 has
 * probes with strings and semaphores. Needs root, BPF and python3 with its
 * function__entry and line probes (Python 3.11; 3.12 dropped them): the
 * guests of `make vm-check` get bookworm's (scripts/vm/fetch.sh), but for
 * riscv64, whose userland is trixie's, and .ci/run leaves it out there.
 */
#include "trace_test.h"

/* A run of a script, traced with strings, a filter in BPF and --count. */
static void test_python(void **state)
{
	static const char py[] = "/usr/bin/python3";
	char dir[] = "/tmp/usdt_py_XXXXXX", script[64], cmd[128];
	struct run_result r;
	FILE *f;

	run_tool(&r, "list", py, "python:function__entry");
	if (r.status || !strstr(r.out, "function__entry")) {
		run_result_free(&r);
		printf("SKIP: %s has no python:function__entry probe\n", py);
		skip();
	}
	run_result_free(&r);
	assert_non_null(mkdtemp(dir));
	snprintf(script, sizeof(script), "%s/probe_me.py", dir);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs("def visit_me():\n    return 1\nvisit_me()\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -S %s", py, script);
	/* With python:line on, Python 3.11 reports every function entry.
	 * The filter (in BPF) keeps the start-up's thousands of lines out. */
	run_ok(&r, "trace", "--filter", "arg2 <= 2", "-c", cmd, py,
	       "python:function__entry", "%s %s %d", "python:line",
	       "%s %s %d");
	expect_in(r.out, " python:function__entry ");
	expect_in(r.out, "probe_me.py visit_me 1\n");
	expect_in(r.out, " python:line ");
	run_result_free(&r);

	run_ok(&r, "trace", "--count", "-c", cmd, py, "python:function__*");
	expect_in(r.out, " python:function__entry\n");
	run_result_free(&r);
	unlink(script);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python),
	};

	usdt_test_require_kernel("test_trace_python");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
