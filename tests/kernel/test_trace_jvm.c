// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace` on a real JVM (HotSpot's libjvm.so from /usr/lib/jvm), on
 * its own so that a machine without one leaves only this program out:
 * the Makefile builds and runs it only where a JVM is installed, and says
 * so where none is (`apt-get install default-jre-headless`).
 */
#include <glob.h>
#include <limits.h>

#include "trace_test.h"

/*
 * A real program whose strings have no NUL: HotSpot's method__entry gives
 * class, method and signature each as a pointer and a length. With %.*s
 * every line is a clean method; %s of the class name reads on into the
 * bytes after it (seen with Debian 12's OpenJDK 17). Skipped without a
 * JVM (and so not built: see the Makefile).
 */
static void test_format_hotspot(void **state)
{
	char java[PATH_MAX + 64], *p;
	struct run_result r;
	glob_t g;

	if (glob("/usr/lib/jvm/*/lib/server/libjvm.so", 0, NULL, &g) ||
	    !g.gl_pathc) {
		globfree(&g);
		printf("no JVM in /usr/lib/jvm: skipped\n");
		skip();
	}
	snprintf(java, sizeof(java), "%s", g.gl_pathv[0]);
	p = strstr(java, "/lib/server/libjvm.so");
	snprintf(p, sizeof(java) - (size_t)(p - java),
		 "/bin/java -XX:+UnlockDiagnosticVMOptions -XX:+DTraceMethodProbes -version");
	run_ok(&r, "trace", "-n", "200", "-c", java, g.gl_pathv[0],
	       "hotspot:method__entry", "%2$.*3$s.%4$.*5$s%6$.*7$s");
	globfree(&g);
	assert_int_equal(count_str(r.out, " hotspot:method__entry "), 200);
	expect_in(r.out, " hotspot:method__entry java/lang/Object.<init>()V\n");
	/* Nothing escaped: no byte from beyond a name. */
	assert_null(strchr(r.out, '\\'));
	run_result_free(&r);
}

/*
 * The same names as str(argN, argM): a format's values with --text-only
 * (each line the method alone), and --by's two string parts, class and
 * method, each exactly its length (the count says how many calls).
 */
static void test_str_hotspot(void **state)
{
	char java[PATH_MAX + 64], *p;
	struct run_result r;
	glob_t g;

	if (glob("/usr/lib/jvm/*/lib/server/libjvm.so", 0, NULL, &g) ||
	    !g.gl_pathc) {
		globfree(&g);
		printf("no JVM in /usr/lib/jvm: skipped\n");
		skip();
	}
	snprintf(java, sizeof(java), "%s", g.gl_pathv[0]);
	p = strstr(java, "/lib/server/libjvm.so");
	snprintf(p, sizeof(java) - (size_t)(p - java),
		 "/bin/java -XX:+UnlockDiagnosticVMOptions -XX:+DTraceMethodProbes -version");
	run_ok(&r, "trace", "-q", "--text-only", "-n", "200", "-c", java,
	       g.gl_pathv[0], "hotspot:method__entry",
	       "\"%s.%s%s\", str(arg1, arg2), str(arg3, arg4), str(arg5, arg6)");
	expect_in(r.out, "\njava/lang/Object.<init>()V\n");
	assert_null(strchr(r.out, '\\'));
	assert_null(strstr(r.out, "hotspot:"));
	run_result_free(&r);
	run_ok(&r, "trace", "-q", "--count", "--by",
	       "str(arg1, arg2),str(arg3, arg4)", "-c", java, g.gl_pathv[0],
	       "hotspot:method__entry");
	globfree(&g);
	expect_in(r.out, " hotspot:method__entry java/lang/Object <init>\n");
	assert_null(strchr(r.out, '\\'));
	run_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_hotspot),
		cmocka_unit_test(test_str_hotspot),
	};

	usdt_test_require_kernel("test_trace_jvm");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
