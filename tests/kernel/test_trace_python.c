// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace` on a program of the system: Debian's /usr/bin/python3 has
 * probes with strings and semaphores. Needs root, BPF and python3: with
 * its function__entry and line probes (Python 3.11, Debian 12; the guests
 * of `make vm-check` get bookworm's, lab/vm/fetch.sh), or else with
 * its import and gc probes (3.12 dropped the others; Debian sid's 3.14).
 */
#include <fcntl.h>
#include <unistd.h>

#include "trace_test.h"

static const char py[] = "/usr/bin/python3";

/* Does `usdt list` find probe in python3? */
static bool has_probe(const char *probe)
{
	struct run_result r;
	bool found;

	run_tool(&r, "list", py, probe);
	found = !r.status && strstr(r.out, probe + strlen("python:"));
	run_result_free(&r);
	return found;
}

/* A script in a new directory: its path into script (dir made in dir). */
static void write_script(char *dir, char *script, size_t size,
			 const char *text)
{
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(script, size, "%s/probe_me.py", dir);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Python 3.11: function entries with strings, a filter in BPF and
 * --count. */
static void trace_functions(void)
{
	char dir[] = "/tmp/usdt_py_XXXXXX", script[64], cmd[128];
	struct run_result r;

	write_script(dir, script, sizeof(script),
		     "def visit_me():\n    return 1\nvisit_me()\n");
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
	/* Few of them without python:line: the run says so. */
	expect_in(r.err, "unless python:line is enabled too: add -e python:line\n");
	run_result_free(&r);

	/* -e: python:line's semaphore set, its hits neither printed nor
	 * counted; the script's own function is reported. */
	run_ok(&r, "trace", "-e", "python:line", "-c", cmd, py,
	       "python:function__entry", "%s %s %d");
	expect_in(r.out, "probe_me.py visit_me 1\n");
	if (strstr(r.out, " python:line "))
		fail_msg("-e python:line printed its hits:\n%s", r.out);
	if (strstr(r.err, "add -e python:line"))
		fail_msg("the python:line note with -e python:line:\n%s",
			 r.err);
	run_result_free(&r);
	run_ok(&r, "trace", "--count", "-e", "python:line", "-c", cmd, py,
	       "python:function__entry");
	expect_in(r.out, " python:function__entry\n");
	if (strstr(r.out, "python:line"))
		fail_msg("-e python:line counted its hits:\n%s", r.out);
	run_result_free(&r);
	/* --latency with python:line enabled (-e): function times. */
	run_ok(&r, "trace", "--latency", "python:function__entry",
	       "python:function__return", "-e", "python:line", "-c", cmd, py);
	expect_in(r.out, "latency python:function__entry -> python:function__return (ns)\n  [");
	run_result_free(&r);
	/* Calls per function name, as bcc's ucalls counts them. */
	run_ok(&r, "trace", "--count", "--by", "str(arg1)", "-e",
	       "python:line", "-c", cmd, py, "python:function__entry");
	expect_in(r.out, "           1 python:function__entry visit_me\n");
	run_result_free(&r);
	unlink(script);
	rmdir(dir);
}

/* Python 3.12 and later, which dropped the function and line probes (sid
 * has 3.14): a module's import by name (a string), a collection's
 * generation (an int read from the stack) behind their semaphores, and
 * --count. */
static void trace_imports(void)
{
	char dir[] = "/tmp/usdt_py_XXXXXX", script[64], cmd[128];
	struct run_result r;

	write_script(dir, script, sizeof(script),
		     "import gc\nimport probe_me_mod\ngc.collect(1)\n");
	snprintf(script, sizeof(script), "%s/probe_me_mod.py", dir);
	assert_int_equal(close(creat(script, 0644)), 0);
	snprintf(cmd, sizeof(cmd), "%s -S %s/probe_me.py", py, dir);
	run_ok(&r, "trace", "-c", cmd, py, "python:import__find__load__start",
	       "%s", "python:gc__start", "gen %d");
	expect_in(r.out, " python:import__find__load__start probe_me_mod\n");
	expect_in(r.out, " python:gc__start gen 1\n");
	run_result_free(&r);

	/* Imports per module name. */
	run_ok(&r, "trace", "--count", "--by", "str(arg0)", "-c", cmd, py,
	       "python:import__find__load__start");
	expect_in(r.out, "           1 python:import__find__load__start probe_me_mod\n");
	run_result_free(&r);

	run_ok(&r, "trace", "--count", "-c", cmd, py, "python:gc__*");
	expect_in(r.out, " python:gc__start\n");
	expect_in(r.out, " python:gc__done\n");
	run_result_free(&r);
	unlink(script);
	snprintf(script, sizeof(script), "%s/probe_me.py", dir);
	unlink(script);
	rmdir(dir);
}

/* A real program of the system, traced as its users trace it. */
static void test_python(void **state)
{
	if (has_probe("python:function__entry"))
		trace_functions();
	else if (has_probe("python:import__find__load__start") &&
		 has_probe("python:gc__start"))
		trace_imports();
	else {
		printf("SKIP: %s has neither python:function__entry nor "
		       "python:import__find__load__start\n", py);
		skip();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python),
	};

	usdt_test_require_kernel("test_trace_python");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
