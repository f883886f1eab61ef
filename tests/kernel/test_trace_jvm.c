// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace` on a real JVM (HotSpot's libjvm.so from /usr/lib/jvm), on
 * its own so that a machine without one leaves only this program out:
 * the Makefile builds and runs it only where a JVM is installed, and says
 * so where none is (`apt-get install default-jre-headless`).
 */
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>

#include "trace_test.h"

/*
 * A real program whose strings have no NUL: HotSpot's method__entry gives
 * class, method and signature each as a pointer and a length. With %.*s
 * every line is a clean method; %s of the class name reads on into the
 * bytes after it (seen with Debian 12's OpenJDK 17). Skipped without a
 * JVM (and so not built: see the Makefile).
 */
/* A JVM's libjvm.so into lib, and its java command with method probes
 * on into java; a skip without one. */
static void find_jvm(char *lib, size_t lib_size, char *java, size_t size)
{
	glob_t g;
	char *p;

	if (glob("/usr/lib/jvm/*/lib/server/libjvm.so", 0, NULL, &g) ||
	    !g.gl_pathc) {
		globfree(&g);
		printf("no JVM in /usr/lib/jvm: skipped\n");
		skip();
	}
	snprintf(lib, lib_size, "%s", g.gl_pathv[0]);
	snprintf(java, size, "%s", g.gl_pathv[0]);
	globfree(&g);
	p = strstr(java, "/lib/server/libjvm.so");
	snprintf(p, size - (size_t)(p - java),
		 "/bin/java -XX:+UnlockDiagnosticVMOptions -XX:+DTraceMethodProbes -version");
}

static void test_format_hotspot(void **state)
{
	char java[PATH_MAX + 64], lib[PATH_MAX];
	struct run_result r;

	(void)state;
	find_jvm(lib, sizeof(lib), java, sizeof(java));
	run_ok(&r, "trace", "-n", "200", "-c", java, lib,
	       "hotspot:method__entry", "%2$.*3$s.%4$.*5$s%6$.*7$s");
	assert_int_equal(count_str(r.out, " hotspot:method__entry "), 200);
	expect_in(r.out, " hotspot:method__entry java/lang/Object.<init>()V\n");
	/* Nothing escaped: no byte from beyond a name. */
	assert_null(strchr(r.out, '\\'));
	run_result_free(&r);
}

/* Does process pid hold a BPF link (anon_inode:bpf_link in its fds)? */
static bool holds_bpf_link(pid_t pid)
{
	char dir[64], path[320], what[64];
	struct dirent *e;
	bool found = false;
	ssize_t n;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	while (d && !found && (e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		n = readlink(path, what, sizeof(what) - 1);
		found = n > 0 && (what[n] = '\0', !strcmp(what, "anon_inode:bpf_link"));
	}
	if (d)
		closedir(d);
	return found;
}

/* The usdt tool among the children of process parent, or 0. */
static pid_t tool_child(pid_t parent)
{
	char path[64], line[256];
	pid_t found = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");
	FILE *f;
	int ppid;

	while (d && !found && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%.16s/stat", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) && strstr(line, "(usdt) ") &&
		    sscanf(strrchr(line, ')') + 2, "%*c %d", &ppid) == 1 &&
		    ppid == (int)parent)
			found = (pid_t)atoi(e->d_name);
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * A child that lets the JVM, paused at startup (-XX:+PauseAtStartup)
 * with libjvm.so mapped, go on once the tool holds a BPF link: the
 * tool has then attached, and every method after the pause is traced.
 * A hand-shake, where a busy machine used to let a short JVM run end
 * before the tool's look at its maps (0 of 50 seen once).
 */
static pid_t release_after_attach(const char *pause)
{
	pid_t test = getpid(), pid = fork(), tool = 0;
	int i;

	assert_true(pid >= 0);
	if (pid)
		return pid;
	for (i = 0; i < 60000 && !(tool && holds_bpf_link(tool)); i++) {
		usleep(1000);
		if (!tool)
			tool = tool_child(test);
	}
	unlink(pause);
	_exit(0);
}

/*
 * -c 'java ...' libjvm.so: the JVM's library is in a directory of its own,
 * which the loader's search does not reach, and java maps it only once
 * it runs: the tool waits for the command to map a file of that name,
 * and traces it then (before: "libjvm.so: no such file").
 */
static void test_bare_libjvm(void **state)
{
	char java[PATH_MAX + 256], lib[PATH_MAX], pause[64], *p;
	struct run_result r;
	pid_t rel;
	int fd;

	(void)state;
	find_jvm(lib, sizeof(lib), java, sizeof(java));
	snprintf(pause, sizeof(pause), "/tmp/usdt-jvm-pause.XXXXXX");
	fd = mkstemp(pause);
	assert_true(fd >= 0);
	close(fd);
	p = strstr(java, " -version");
	snprintf(p, sizeof(java) - (size_t)(p - java),
		 " -XX:+PauseAtStartup -XX:PauseAtStartupFile=%s -Xshare:off -version",
		 pause);
	rel = release_after_attach(pause);
	run_ok(&r, "trace", "-n", "50", "-c", java, "libjvm.so",
	       "hotspot:method__entry", "%2$.*3$s.%4$.*5$s");
	assert_int_equal(waitpid(rel, NULL, 0), rel);
	unlink(pause);
	assert_int_equal(count_str(r.out, " hotspot:method__entry "), 50);
	expect_in(r.err, "libjvm.so: not mapped yet; waiting for the command to map it\n");
	expect_in(r.err, "/lib/server/libjvm.so, mapped since\n");
	run_result_free(&r);
}

/*
 * The same names as str(argN, argM): a format's values with --text-only
 * (each line the method alone), and --by's two string parts, class and
 * method, each exactly its length (the count says how many calls).
 */
static void test_str_hotspot(void **state)
{
	char java[PATH_MAX + 64], lib[PATH_MAX];
	struct run_result r;

	(void)state;
	find_jvm(lib, sizeof(lib), java, sizeof(java));
	run_ok(&r, "trace", "-q", "--text-only", "-n", "200", "-c", java,
	       lib, "hotspot:method__entry",
	       "\"%s.%s%s\", str(arg1, arg2), str(arg3, arg4), str(arg5, arg6)");
	expect_in(r.out, "\njava/lang/Object.<init>()V\n");
	assert_null(strchr(r.out, '\\'));
	assert_null(strstr(r.out, "hotspot:"));
	run_result_free(&r);
	run_ok(&r, "trace", "-q", "--count", "--by",
	       "str(arg1, arg2),str(arg3, arg4)", "-c", java, lib,
	       "hotspot:method__entry");
	expect_in(r.out, " hotspot:method__entry java/lang/Object <init>\n");
	assert_null(strchr(r.out, '\\'));
	run_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_hotspot),
		cmocka_unit_test(test_bare_libjvm),
		cmocka_unit_test(test_str_hotspot),
	};

	usdt_test_require_kernel("test_trace_jvm");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
