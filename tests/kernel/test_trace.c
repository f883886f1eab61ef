// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace`, run as a user would run it, against
 * tests/fixtures/trace_target: the target prints, for each probe hit, the
 * line the tool must print after its TIME PID TID COMM columns, and the
 * two sets of lines must be equal. Needs root and BPF.
 */
#include <bpf/bpf.h>
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "trace_test.h"
#include "unit/elf_builder.h"

#define TT FIXTURE_DIR "/trace_target"
#define PT FIXTURE_DIR "/pattern_target"
#define TRACELIB FIXTURE_DIR "/libtracelib.so"
#define BT FIXTURE_DIR "/bss_sema_target"

struct lines {
	char **v;
	int cnt;
};

static void lines_add(struct lines *l, const char *s, size_t n)
{
	l->v = realloc(l->v, (size_t)(l->cnt + 1) * sizeof(*l->v));
	assert_non_null(l->v);
	l->v[l->cnt] = strndup(s, n);
	assert_non_null(l->v[l->cnt]);
	l->cnt++;
}

static void lines_free(struct lines *l)
{
	int i;

	for (i = 0; i < l->cnt; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Split a run's stdout: the tool's lines ("TS PID TID COMM REST", kept as
 * REST, with PID and TID checked against want_pid when it is > 0), the
 * target's "expect REST" lines whose REST starts with prefix, and the
 * target's "pid N".
 */
struct split {
	struct lines got, want;
	int target_pid;
	int other_pids;		/* tool lines whose pid is not target_pid */
	int other_tids;		/* tool lines whose tid is not their pid */
};

static void split_output(const char *out, const char *prefix,
			 struct split *s)
{
	const char *line = out;
	int pid_seen = 0;

	memset(s, 0, sizeof(*s));
	/* The "pid" line comes first from the target, but our lines may
	 * interleave with it: find it first. */
	for (line = out; *line;) {
		const char *nl = strchr(line, '\n');

		if (!nl)
			break;
		if (!strncmp(line, "pid ", 4))
			s->target_pid = atoi(line + 4);
		line = nl + 1;
	}
	for (line = out; *line;) {
		const char *nl = strchr(line, '\n');
		unsigned long long ts;
		int pid, tid, n = 0;
		char comm[32];

		if (!nl)
			break;
		if (!strncmp(line, "expect ", 7)) {
			if (!strncmp(line + 7, prefix, strlen(prefix)))
				lines_add(&s->want, line + 7,
					  (size_t)(nl - line - 7));
		} else if (line[0] >= '0' && line[0] <= '9') {
			assert_int_equal(sscanf(line, "%llu %d %d %31s %n", &ts,
						&pid, &tid, comm, &n), 4);
			assert_true(n > 0);
			assert_string_equal(comm, "trace_target");
			if (pid != s->target_pid)
				s->other_pids++;
			if (tid != pid)
				s->other_tids++;
			lines_add(&s->got, line + n, (size_t)(nl - line - n));
		} else if (!strncmp(line, "pid ", 4)) {
			pid_seen++;
		}
		line = nl + 1;
	}
	assert_int_equal(pid_seen, 1);
	qsort(s->got.v, (size_t)s->got.cnt, sizeof(char *), cmp_str);
	qsort(s->want.v, (size_t)s->want.cnt, sizeof(char *), cmp_str);
}

static void assert_same_lines(const struct split *s, const char *out)
{
	int i;

	if (s->got.cnt != s->want.cnt)
		fail_msg("%d lines traced, %d expected; output:\n%s",
			 s->got.cnt, s->want.cnt, out);
	for (i = 0; i < s->got.cnt; i++)
		if (strcmp(s->got.v[i], s->want.v[i]))
			fail_msg("traced '%s', expected '%s'", s->got.v[i],
				 s->want.v[i]);
}

static void split_free(struct split *s)
{
	lines_free(&s->got);
	lines_free(&s->want);
}

/*
 * What the tool leaves in the kernel after it exits, counted so that
 * another `usdt trace` (or a second make check) running on the machine at
 * the same time never counts: a program named usdt_trace is ours only if
 * it was not there when this test started (prior[]) and no live process
 * holds it (a descriptor of it, or of a link to it, names its prog_id in
 * /proc/PID/fdinfo). Once our tool has exited, nothing may hold ours.
 */
#define PRIOR_MAX 256
static __u32 prior[PRIOR_MAX];
static int prior_cnt;

/* Does a descriptor of any process name prog_id id? */
static bool prog_is_held(__u32 id)
{
	char want[32], path[600], line[128];
	struct dirent *p, *f;
	DIR *proc = opendir("/proc"), *fds;
	bool held = false;

	assert_non_null(proc);
	snprintf(want, sizeof(want), "prog_id:\t%u\n", id);
	while (!held && (p = readdir(proc))) {
		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;	/* gone, or a kernel thread */
		while (!held && (f = readdir(fds))) {
			FILE *in;

			if (f->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s",
				 p->d_name, f->d_name);
			in = fopen(path, "r");
			if (!in)
				continue;
			while (!held && fgets(line, sizeof(line), in))
				held = !strcmp(line, want);
			fclose(in);
		}
		closedir(fds);
	}
	closedir(proc);
	return held;
}

/* fn(id) for each program named usdt_trace loaded now; how many it
 * accepted. */
static int each_trace_prog(bool (*fn)(__u32 id))
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		bool named;

		if (fd < 0)
			continue;
		named = !bpf_obj_get_info_by_fd(fd, &info, &len) &&
			!strcmp(info.name, "usdt_trace");
		close(fd);	/* before fn, which looks for holders */
		if (named && fn(id))
			n++;
	}
	return n;
}

static bool note_prior(__u32 id)
{
	if (prior_cnt < PRIOR_MAX)
		prior[prior_cnt++] = id;
	return true;
}

static bool is_ours_left(__u32 id)
{
	int i;

	for (i = 0; i < prior_cnt; i++)
		if (prior[i] == id)
			return false;
	return !prog_is_held(id);
}

/* The programs is_ours_left() accepts now, into left[] (at most max). */
static __u32 *left_ids;
static int left_cnt, left_max;

static bool note_left(__u32 id)
{
	if (!is_ours_left(id))
		return false;
	if (left_cnt < left_max)
		left_ids[left_cnt++] = id;
	return true;
}

static int trace_progs_left(__u32 *ids, int max)
{
	left_ids = ids;
	left_cnt = 0;
	left_max = max;
	each_trace_prog(note_left);
	return left_cnt;
}

/*
 * After the tool exits, nothing of it stays in the kernel. Programs are
 * freed a little after their last reference goes (RCU), and another
 * `usdt trace` that just exited leaves one for a moment too: a program
 * is left only if it stays, unheld, through every look for 2 s.
 */
static void assert_nothing_left(void)
{
	__u32 first[PRIOR_MAX], now[PRIOR_MAX];
	int n = trace_progs_left(first, PRIOR_MAX), i, j, k, m;

	for (i = 0; i < 200 && n; i++) {
		usleep(10000);
		m = trace_progs_left(now, PRIOR_MAX);
		for (j = k = 0; j < n; j++) {
			int x;

			for (x = 0; x < m && now[x] != first[j]; x++)
				;
			if (x < m)
				first[k++] = first[j];
		}
		n = k;
	}
	if (n)
		fail_msg("usdt trace left program %u loaded", first[0]);
}

/* ---------------------------------------------------------------------- */

struct shape_case {
	const char *mode;
	const char *pattern;
};

/* 1, 2, 6, 7 and 12 arguments, every integer width, floats, a semaphore,
 * and an argument BPF cannot read, in both attach modes; the exit status
 * is the command's. setup runs in the tool's process before exec. */
static void probes_of_binary(void (*setup)(void *arg))
{
	static const struct shape_case cases[] = {
		{ "auto", "tt:*" },
		{ "perf", "tt" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *argv[] = { USDT_BIN, "trace", "-m", cases[i].mode,
				       "-c", TT " 3 0 3", TT, cases[i].pattern,
				       NULL };
		struct run_result r;
		struct split s;

		run_argv_setup(argv, &r, setup, NULL);
		if (r.status != 3)
			fail_msg("mode %s: status %d, stderr:\n%s",
				 cases[i].mode, r.status, r.err);
		split_output(r.out, "tt:", &s);
		assert_same_lines(&s, r.out);
		assert_int_equal(s.got.cnt, 3 * 8);
		assert_int_equal(s.other_pids, 0);
		assert_int_equal(s.other_tids, 0);
		/* The semaphore was set while we were attached. */
		assert_int_equal(count_str(r.out, "expect tt:gated"), 3);
		/* The unreadable argument is explained once, not per hit. */
		assert_int_equal(count_str(r.err, "tt:unreadable: argument 0"),
				 1);
		/* And the line that says tracing runs. */
		assert_int_equal(count_str(r.err, "usdt: tracing 8 probes (8 call sites) in 1 file; Ctrl-C to stop\n"), 1);
		assert_int_equal(count_lines(r.err), 2);
		split_free(&s);
		run_result_free(&r);
		assert_nothing_left();
	}
}

static void test_probes_of_binary(void **state)
{
	probes_of_binary(NULL);
}

/* The kernel's BTF out of libbpf's sight, as on a kernel built without it
 * (Debian's 6.1 for s390x): a tmpfs over /sys/kernel/btf in a mount
 * namespace of the tool's own. libbpf looks in /boot and /lib/modules
 * next, where this test's machines have no vmlinux. */
static void hide_kernel_btf(void *arg)
{
	(void)arg;
	if (access("/sys/kernel/btf", F_OK))
		return;		/* a kernel without BTF */
	if (unshare(CLONE_NEWNS) || usdt_test_private_mount("/sys/kernel/btf") ||
	    mount("tmpfs", "/sys/kernel/btf", "tmpfs", 0, NULL)) {
		fprintf(stderr, "hiding /sys/kernel/btf: %s\n",
			strerror(errno));
		_exit(126);
	}
}

/* Without kernel BTF libbpf refused the whole program (ESRCH) for its
 * CO-RE relocations; the tool now gives it an empty BTF and loads the
 * program without the VMA lookup, and every value still comes out. */
static void test_without_kernel_btf(void **state)
{
	probes_of_binary(hide_kernel_btf);
}

/* PATH with dir (made absolute) first, or, with NULL, PATH as it was. */
static void path_first(const char *dir)
{
	static char *saved;
	char abs[4096], *buf;

	if (!dir) {
		usdt_test_env_restore("PATH", saved);
		saved = NULL;
		return;
	}
	saved = usdt_test_env_save("PATH");
	assert_non_null(realpath(dir, abs));
	buf = malloc(strlen(abs) + strlen(saved ? saved : "") + 2);
	assert_non_null(buf);
	sprintf(buf, "%s:%s", abs, saved ? saved : "");
	setenv("PATH", buf, 1);
	free(buf);
}

static void test_probe_of_library(void **state)
{
	struct run_result r;
	struct split s;

	run_tool(&r, "trace", "-c", TT " 4 0 0", TRACELIB, "tracelib:*");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	split_output(r.out, "tracelib:", &s);
	assert_same_lines(&s, r.out);
	assert_int_equal(s.got.cnt, 4);
	assert_int_equal(s.other_pids, 0);
	split_free(&s);
	run_result_free(&r);

	/* By bare name, found as the dynamic loader would. */
	setenv("LD_LIBRARY_PATH", FIXTURE_DIR, 1);
	run_tool(&r, "trace", "-c", TT " 2 0 0", "libtracelib.so", "tracelib");
	unsetenv("LD_LIBRARY_PATH");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	split_output(r.out, "tracelib:", &s);
	assert_same_lines(&s, r.out);
	assert_int_equal(s.got.cnt, 2);
	split_free(&s);
	run_result_free(&r);

	/* A program by bare name, through PATH as a shell (and libbpf)
	 * would find it: list and trace alike. */
	path_first(FIXTURE_DIR);
	run_tool(&r, "list", "trace_target", "tt:one");
	if (r.status)
		fail_msg("list: status %d, stderr:\n%s", r.status, r.err);
	expect_in(r.out, "tt:one ");
	run_result_free(&r);
	run_tool(&r, "trace", "-c", TT " 2 0 0", "trace_target", "tt:one");
	path_first(NULL);
	if (r.status)
		fail_msg("trace: status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(count_str(r.out, " trace_target tt:one "), 2);
	run_result_free(&r);
	assert_nothing_left();
}

static void test_json(void **state)
{
	static const char *const want[] = {
		"\"provider\": \"tt\", \"name\": \"two\", \"args\": [1, -1]}",
		"\"provider\": \"tt\", \"name\": \"two\", \"args\": [2, -2]}",
		"\"provider\": \"tt\", \"name\": \"floats\", \"args\": [1.5, -0.25]}",
		"\"provider\": \"tt\", \"name\": \"floats\", \"args\": [2.5, -0.5]}",
		"\"provider\": \"tt\", \"name\": \"unreadable\", \"args\": [null, 1]}",
		("\"provider\": \"tt\", \"name\": \"seven\", \"args\": "
		 "[-8999999999999999999, 18446744073709551611, -1, 251, 1, 2, 3]}"),
	};
	struct run_result r;
	char head[128];
	int pid = 0, json_lines = 0;
	const char *line;
	size_t i;

	run_tool(&r, "trace", "--json", "-c", TT " 2 0 0", TT, "tt:two",
		 "tt:floats", "tt:unreadable", "tt:seven");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	line = strstr(r.out, "pid ");
	assert_non_null(line);
	pid = atoi(line + 4);
	for (i = 0; i < ARRAY_SIZE(want); i++)
		if (!strstr(r.out, want[i]))
			fail_msg("missing '%s' in:\n%s", want[i], r.out);
	/* Every object is one line with the same head. */
	snprintf(head, sizeof(head), ", \"pid\": %d, \"tid\": %d, "
		 "\"comm\": \"trace_target\", \"provider\": ", pid, pid);
	for (line = r.out; *line;) {
		const char *nl = strchr(line, '\n');
		char *one = strndup(line, (size_t)(nl - line));

		if (line[0] == '{') {
			json_lines++;
			assert_true(!strncmp(one, "{\"ts\": ", 7));
			assert_non_null(strstr(one, head));
			assert_int_equal(one[strlen(one) - 1], '}');
		}
		free(one);
		line = nl + 1;
	}
	assert_int_equal(json_lines, 2 * 4);
	run_result_free(&r);
	assert_nothing_left();
}

/* -n 5 stops after five lines, and ends the command it started. */
static void test_count(void **state)
{
	struct run_result r;
	struct split s;
	double t0 = now_s();

	run_tool(&r, "trace", "-n", "5", "-c", TT " 100000 1 0", TT, "tt:one");
	assert_int_equal(r.status, 0);
	split_output(r.out, "tt:one", &s);
	assert_int_equal(s.got.cnt, 5);
	assert_int_equal(s.other_pids, 0);
	assert_true(now_s() - t0 < 20);
	split_free(&s);
	run_result_free(&r);
	assert_nothing_left();
}

/* -d ends a trace after that many seconds. */
static void test_duration(void **state)
{
	struct run_result r;
	struct split s;
	double t0 = now_s(), t;

	run_tool(&r, "trace", "-d", "0.5", "-c", TT " 100000 10 0", TT,
		 "tt:two");
	t = now_s() - t0;
	assert_int_equal(r.status, 0);
	split_output(r.out, "tt:two", &s);
	assert_true(s.got.cnt > 0);
	assert_true(t >= 0.5 && t < 10);
	split_free(&s);
	run_result_free(&r);
	assert_nothing_left();
}

/* A trace_target that runs until killed, and the process that reads its
 * output. */
struct target {
	pid_t pid, drain;
};

/*
 * Start a trace_target that runs until killed. Its output is read and
 * thrown away by a child of ours until it ends: a pipe nobody reads fills
 * up (64 KiB, about a second of rounds) and the target then blocks in
 * write() and fires no probe again, so a trace started any later (the
 * tool loads its BPF program slowly on an emulated CPU) saw nothing.
 */
static void start_target(struct target *t)
{
	const char *argv[] = { TT, "100000", "5", "0", NULL };
	char buf[4096] = { 0 };
	int fd;
	ssize_t n;

	t->pid = spawn_out(argv, &fd);
	/* Wait until it runs its own image, not our copy. */
	n = read(fd, buf, 64);
	assert_true(n > 4);
	assert_true(!strncmp(buf, "pid ", 4));
	t->drain = fork();
	assert_true(t->drain >= 0);
	if (!t->drain) {
		for (;;) {
			n = read(fd, buf, sizeof(buf));
			if (n == 0 || (n < 0 && errno != EINTR))
				_exit(0);
		}
	}
	close(fd);
}

/* The drain ends at the end of the target's output. */
static void stop_target(const struct target *t)
{
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	waitpid(t->drain, NULL, 0);
}

/* -p traces that process and no other running the same binary; a file
 * it does not map is traced with a note. */
static void test_pid(void **state)
{
	struct target a, b;
	struct run_result r, r2, r3;
	char pid[16];
	const char *line;
	int lines = 0;

	start_target(&a);
	start_target(&b);
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	run_tool(&r, "trace", "-p", pid, "-n", "5", TT, "tt:one");
	/* A library by the bare name of a file the process has mapped. */
	run_tool(&r2, "trace", "-p", pid, "-n", "3", "libtracelib.so",
		 "tracelib:hit");
	/* A file the process does not map: traced, and a note says so. */
	run_tool(&r3, "trace", "-p", pid, "-d", "0.1", PT, "pt:stop");
	stop_target(&a);
	stop_target(&b);
	if (r.status || r2.status || r3.status)
		fail_msg("status %d/%d/%d, stderr:\n%s%s%s", r.status,
			 r2.status, r3.status, r.err, r2.err, r3.err);
	assert_null(strstr(r.err, "does not map"));
	assert_null(strstr(r2.err, "does not map"));
	expect_in(r3.err, "usdt: trace: note: process ");
	expect_in(r3.err, " does not map " PT
			  " now: its hits come once it does (an exec or dlopen())\n");
	for (line = r.out; *line;) {
		const char *nl = strchr(line, '\n');
		unsigned long long ts;
		int p, t;

		assert_int_equal(sscanf(line, "%llu %d %d", &ts, &p, &t), 3);
		assert_int_equal(p, a.pid);
		lines++;
		line = nl ? nl + 1 : line + strlen(line);
	}
	assert_int_equal(lines, 5);
	assert_int_equal(count_lines(r2.out), 3);
	assert_int_equal(count_str(r2.out, " tracelib:hit "), 3);
	run_result_free(&r);
	run_result_free(&r2);
	run_result_free(&r3);
	assert_nothing_left();
}

/* Every traced line's PID and TID columns are pid (a single-threaded
 * target); returns the number of those lines. The target's own output,
 * which a -c command shares, starts with a letter. */
static int lines_of_pid(const char *out, int pid)
{
	const char *line;
	int lines = 0;

	for (line = out; *line;) {
		const char *nl = strchr(line, '\n');
		unsigned long long ts;
		int p, t;

		if (!isdigit((unsigned char)*line)) {
			line = nl ? nl + 1 : line + strlen(line);
			continue;
		}
		assert_int_equal(sscanf(line, "%llu %d %d", &ts, &p, &t), 3);
		if (p != pid || t != pid)
			fail_msg("pid %d tid %d, want %d: %s", p, t, pid, out);
		lines++;
		line = nl ? nl + 1 : line + strlen(line);
	}
	return lines;
}

/*
 * run_argv_setup()'s setup: what `unshare --pid --fork --mount-proc` does,
 * without it (busybox, in the guests of make vm-check, may lack it): a
 * new pid and mount namespace, whose first process (pid 1) goes on to
 * exec with that namespace's /proc, while this one waits for it.
 */
static void into_pid_ns(void *arg)
{
	int status;
	pid_t pid;

	(void)arg;
	if (unshare(CLONE_NEWPID | CLONE_NEWNS) ||
	    usdt_test_private_mount("/proc"))
		_exit(126);
	pid = fork();
	if (pid < 0)
		_exit(126);
	if (pid) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 125);
	}
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL))
		_exit(126);
}

#define run_in_pid_ns(r, ...)                                               \
	run_argv_setup((const char *const[]){ __VA_ARGS__, NULL }, (r),     \
		       into_pid_ns, NULL)

/*
 * In a pid namespace of its own with its /proc (a container's view), the
 * tool is pid 1 there, a -c command pid 2, and a process started before
 * it by a shell (pid 1) pid 2 too: those are the ids it prints, and that
 * -p and --filter take.
 */
static void test_pid_namespace(void **state)
{
	char cmd[1024], out[] = "/tmp/usdt-test-pidns-XXXXXX";
	struct run_result r;
	int fd;

	/* -c: the command is pid 2; --filter compares that pid. */
	run_in_pid_ns(&r, USDT_BIN, "trace", "--filter", "pid == 2", "-c",
		      TT " 3 0 0", TT, "tt:one");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(lines_of_pid(r.out, 2), 3);
	run_result_free(&r);

	run_in_pid_ns(&r, USDT_BIN, "trace", "--filter", "pid != 2", "-c",
		      TT " 3 0 0", TT, "tt:one");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(lines_of_pid(r.out, 2), 0);
	expect_in(r.out, "expect tt:one 3\n");	/* it ran */
	run_result_free(&r);

	/* -p: a running process, by the pid it has in the namespace, once
	 * it runs the target (it says "pid N" then: before, under a slow
	 * emulator, it may still be the shell that forked it). It runs for
	 * as long as the tool needs to start (seconds on s390x without a
	 * JIT): the tool is the namespace's init, whose end kills it. */
	fd = mkstemp(out);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "%s 1000 100 0 >%s & until grep -q '^pid' %s; do sleep 1; done; exec %s trace -p $! -n 3 %s tt:one",
		 TT, out, out, USDT_BIN, TT);
	run_in_pid_ns(&r, "sh", "-c", cmd);
	unlink(out);
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(lines_of_pid(r.out, 2), 3);
	run_result_free(&r);
	assert_nothing_left();
}

/* Copy file src to dir/src (making its directories). */
static void copy_under(const char *dir, const char *src)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd),
		 "d='%s%s'; mkdir -p \"${d%%/*}\" && cp -L '%s' \"$d\"",
		 dir, src, src);
	assert_int_equal(system(cmd), 0);
}

/* The program interpreter (PT_INTERP) of the ELF file at path, into out. */
static void elf_interp(const char *path, char *out, size_t size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	FILE *f = fopen(path, "re");
	int i;

	assert_non_null(f);
	assert_int_equal(fread(&eh, sizeof(eh), 1, f), 1);
	for (i = 0; i < eh.e_phnum; i++) {
		assert_int_equal(fseek(f, (long)(eh.e_phoff + (Elf64_Off)i *
						 eh.e_phentsize), SEEK_SET), 0);
		assert_int_equal(fread(&ph, sizeof(ph), 1, f), 1);
		if (ph.p_type != PT_INTERP)
			continue;
		assert_true(ph.p_filesz > 1 && ph.p_filesz <= size);
		assert_int_equal(fseek(f, (long)ph.p_offset, SEEK_SET), 0);
		assert_int_equal(fread(out, ph.p_filesz, 1, f), 1);
		out[ph.p_filesz - 1] = '\0';
		fclose(f);
		return;
	}
	fail_msg("%s has no PT_INTERP", path);
}

/* A root for a chroot at dir: the fixture at /tf, and every file this
 * process maps at its path (its C library and loader among them, which
 * the fixture needs too), whatever the arch calls them. */
static void make_root(const char *dir)
{
	struct usdt_maps_line { char *line; size_t cap; } m = { NULL, 0 };
	FILE *f = fopen("/proc/self/maps", "re");
	char last[4096] = "", cmd[4200];

	assert_non_null(f);
	while (getline(&m.line, &m.cap, f) > 0) {
		char *path = strchr(m.line, '/'), *nl;

		if (!path)
			continue;
		nl = strchr(path, '\n');
		if (nl)
			*nl = '\0';
		if (!strcmp(path, last) || strstr(path, " (deleted)") ||
		    access(path, R_OK))
			continue;
		snprintf(last, sizeof(last), "%s", path);
		copy_under(dir, path);
	}
	free(m.line);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/tf'", FIXTURE_DIR "/trace_fmt_target", dir);
	assert_int_equal(system(cmd), 0);
	/* The loader by the name the fixture asks for, which maps shows
	 * resolved (/lib64/ld-linux-x86-64.so.2 is a link). */
	elf_interp(FIXTURE_DIR "/trace_fmt_target", last, sizeof(last));
	copy_under(dir, last);
}

static void into_root(void *dir)
{
	if (chroot(dir) || chdir("/"))
		_exit(126);
}

/*
 * A process chrooted in our mount namespace (chroot, unshare --root): its
 * maps show its files by our paths, which /proc/PID/root/ does not reach.
 * `usdt list -p`, `usdt trace -p` and `usdt trace -a` still find and trace
 * them.
 */
static void test_chrooted_process(void **state)
{
	char dir[] = "/tmp/usdt_root_XXXXXX", pid_s[16], buf[64] = { 0 };
	char filter[32], attached[96];
	struct run_result r, r2, r3;
	const char *argv[] = { "/tf", "100000", "20", NULL };
	int fd;
	pid_t pid;

	assert_non_null(mkdtemp(dir));
	make_root(dir);
	pid = spawn_out_setup(argv, &fd, into_root, dir);
	assert_true(read(fd, buf, sizeof(buf) - 1) > 4);	/* "pid N" */
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);

	/* Both runs first: the target goes before any assertion. */
	run_tool(&r, "list", "-p", pid_s);
	run_tool(&r2, "trace", "-p", pid_s, "-n", "2", "tf:val");
	/* Other runs' trace_fmt_target have tf:val too. */
	snprintf(filter, sizeof(filter), "pid == %d", (int)pid);
	run_tool(&r3, "trace", "-a", "-n", "2", "-f", filter, "tf:val");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
	if (r.status || r2.status || r3.status)
		fail_msg("list status %d, trace -p status %d, trace -a status %d, stderr:\n%s%s%s",
			 r.status, r2.status, r3.status, r.err, r2.err,
			 r3.err);
	expect_in(r.out, "tf:val");
	assert_int_equal(count_str(r2.out, " tf:val "), 2);
	assert_int_equal(count_str(r3.out, " tf:val "), 2);
	snprintf(attached, sizeof(attached), "in %s/tf, mapped by pid %d\n",
		 dir, (int)pid);
	expect_in(r3.err, attached);
	run_result_free(&r);
	run_result_free(&r2);
	run_result_free(&r3);
	snprintf(buf, sizeof(buf), "rm -rf '%s'", dir);
	assert_int_equal(system(buf), 0);
	assert_nothing_left();
}

/* The line on stderr once everything is attached; -q leaves it out. */
static void test_attached_line(void **state)
{
	struct run_result r;

	run_tool(&r, "trace", "-c", PT " 2", PT, "pt:start", "pt:stop");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_string_equal(r.err, "usdt: tracing 2 probes (2 call sites) in 1 file; Ctrl-C to stop\n");
	assert_int_equal(count_str(r.out, " pt:start "), 2);
	run_result_free(&r);
	run_tool(&r, "trace", "-q", "-c", PT " 2", PT, "pt:stop");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_int_equal(count_str(r.out, " pt:stop 2\n"), 1);
	run_result_free(&r);
	assert_nothing_left();
}

/*
 * A bare word is a provider; where no provider has that name, it is the
 * probe name in every provider (with a note when there are several). A
 * pattern that matches nothing, and a format that loses to an earlier
 * pattern, are warned about.
 */
static void test_pattern_words(void **state)
{
	struct run_result r;

	run_tool(&r, "trace", "-q", "-c", PT " 3", PT, "start");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(count_str(r.out, " pt:start "), 3);
	assert_int_equal(count_str(r.out, " other:start "), 3);
	assert_int_equal(count_str(r.out, " pt:stop "), 0);
	assert_string_equal(r.err, "usdt: trace: note: no provider is named 'start'; tracing the probes of that name in every provider (pt and others)\n");
	run_result_free(&r);

	/* One provider has it: no note. A provider's name wins. */
	run_tool(&r, "trace", "-q", "-c", PT " 2", PT, "stop", "other");
	assert_int_equal(r.status, 0);
	assert_int_equal(count_str(r.out, " pt:stop "), 2);
	assert_int_equal(count_str(r.out, " other:start "), 2);
	assert_int_equal(count_str(r.out, " pt:start "), 0);
	assert_string_equal(r.err, "");
	run_result_free(&r);

	run_tool(&r, "trace", "-q", "-c", PT " 1", PT, "nosuch:probe",
		 "nosuch");
	assert_int_equal(r.status, 1);
	expect_in(r.err, "no probes matching nosuch:probe ...");
	run_result_free(&r);
	run_tool(&r, "trace", "-q", "-c", PT " 1", PT, "pt:start",
		 "nosuch:probe", "nosuch");
	assert_int_equal(r.status, 0);
	assert_int_equal(count_str(r.out, " pt:start 1\n"), 1);
	assert_string_equal(r.err,
		"usdt: trace: warning: no probe matches nosuch:probe\n"
		"usdt: trace: warning: no probe matches nosuch:*\n");
	run_result_free(&r);
	assert_nothing_left();
}

/*
 * Every pattern with a FORMAT that matches a probe prints its own line per
 * hit; a pattern without one prints the default line only for probes no
 * FORMAT's pattern matches.
 */
static void test_several_formats(void **state)
{
	struct run_result r;

	run_tool(&r, "trace", "-q", "-c", PT " 2", PT, "pt:*", "pt:stop",
		 "a=%d", "*:stop", "b=%x");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(count_str(r.out, " pt:start 1\n"), 1);
	assert_int_equal(count_str(r.out, " pt:start 2\n"), 1);
	assert_int_equal(count_str(r.out, " pt:stop a=2\n"), 1);
	assert_int_equal(count_str(r.out, " pt:stop b=2\n"), 1);
	assert_int_equal(count_str(r.out, " pt:stop 2\n"), 0);
	assert_int_equal(count_str(r.out, " pt:stop "), 4);
	assert_string_equal(r.err, "");
	run_result_free(&r);
	/* -n counts hits, not lines. */
	run_tool(&r, "trace", "-q", "-n", "1", "-c", PT " 3", PT, "pt:stop",
		 "a=%d", "pt:stop", "b=%d");
	assert_int_equal(count_str(r.out, " pt:stop a=1\n"), 1);
	assert_int_equal(count_str(r.out, " pt:stop b=1\n"), 1);
	assert_int_equal(count_str(r.out, " pt:stop "), 2);
	run_result_free(&r);
	/* One string argument read two ways cannot be. */
	run_tool(&r, "trace", TT, "tt:two", "%d %s", "tt:two", "%.*s");
	assert_int_equal(r.status, 1);
	expect_in(r.err, "two formats read one argument as a string in two ways");
	run_result_free(&r);
	assert_nothing_left();
}

/* Several TARGETs, each with its own patterns; a glob TARGET. */
static void test_several_targets(void **state)
{
	struct run_result r;
	char self[16];

	/* pattern_target execs trace_target: one process, both files. */
	run_tool(&r, "trace", "-c", PT " 2 " TT " 1 0 0", PT, "pt:stop", TT,
		 "tt:one", "tt:two");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	/* The tool's lines, by COMM (trace_target prints "expect ..."). */
	assert_int_equal(count_str(r.out, " pattern_target pt:stop "), 2);
	assert_int_equal(count_str(r.out, " pt:start "), 0);
	assert_int_equal(count_str(r.out, " trace_target tt:one 1\n"), 1);
	assert_int_equal(count_str(r.out, " trace_target tt:two 1 -1\n"), 1);
	assert_int_equal(count_str(r.out, " trace_target tt:six "), 0);
	assert_string_equal(r.err, "usdt: tracing 3 probes (3 call sites) in 2 files; Ctrl-C to stop\n");
	run_result_free(&r);

	run_tool(&r, "trace", "-q", "-c", PT " 1", PT, "pt:nosuch", "pt:stop",
		 TT, "tt:nosuch", "tt:one");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err,
		"usdt: trace: warning: no probe matches pt:nosuch in " PT "\n"
		"usdt: trace: warning: no probe matches tt:nosuch in " TT "\n");
	run_result_free(&r);

	/* A glob: each file it matches; one that matches nothing. */
	run_tool(&r, "trace", "-c", PT " 1", FIXTURE_DIR "/*_targe[t]",
		 "pt:stop");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(count_str(r.out, " pt:stop 1\n"), 1);
	assert_string_equal(r.err, "usdt: tracing 1 probe (1 call site) in 1 file; Ctrl-C to stop\n");
	run_result_free(&r);
	run_tool(&r, "trace", FIXTURE_DIR "/nosuch*", "pt:stop");
	assert_int_equal(r.status, 1);
	expect_in(r.err, "/nosuch*: no such file\n");
	run_result_free(&r);

	/* With -p PID and patterns first, no TARGET may follow. */
	snprintf(self, sizeof(self), "%d", (int)getpid());
	run_tool(&r, "trace", "-p", self, "pt:stop", PT);
	assert_int_equal(r.status, 1);
	expect_in(r.err, "a TARGET comes first");
	run_result_free(&r);
	assert_nothing_left();
}

#define DLT FIXTURE_DIR "/dlopen_target"

/* Start argv with stdin from *in_w's pipe, stdout to a pipe (*out_r) and
 * stderr to another (*err_r, or merged into stdout if err_r is NULL). */
static pid_t spawn_piped(const char *const argv[], int *in_w, int *out_r,
			 int *err_r)
{
	int in[2], out[2], err[2] = { -1, -1 };
	pid_t pid;

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	if (err_r)
		assert_int_equal(pipe(err), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err_r ? err[1] : out[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*in_w = in[1];
	*out_r = out[0];
	if (err_r) {
		close(err[1]);
		*err_r = err[0];
	}
	return pid;
}

/* Read fd into buf until it holds needle (or EOF); buf is NUL-ended. */
static void read_until(int fd, char *buf, size_t size, const char *needle)
{
	size_t len = 0;
	ssize_t n;

	buf[0] = '\0';
	while (!strstr(buf, needle) && len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
	}
}

/*
 * -p PID alone also traces a library the process maps after the start
 * (dlopen()): the tool finds it in the process's maps and attaches.
 */
static void test_dlopen_later(void **state)
{
	char lib[PATH_MAX], pid[16], out[4096], err[4096], *p;
	int t_in, t_out, u_in, u_out, u_err, st;
	pid_t target, tool;

	assert_non_null(realpath(FIXTURE_DIR "/libtracelib.so", lib));
	target = spawn_piped((const char *const[]){ DLT, lib, "100000", NULL },
			     &t_in, &t_out, NULL);
	read_until(t_out, out, sizeof(out), "\n");
	assert_int_equal(sscanf(out, "pid %15s", pid), 1);
	tool = spawn_piped((const char *const[]){ USDT_BIN, "trace", "-p",
						  pid, "-n", "3",
						  "tracelib:hit", NULL },
			   &u_in, &u_out, &u_err);
	read_until(u_err, err, sizeof(err), "Ctrl-C to stop\n");
	expect_in(err, "no matching probes yet; waiting for the files it maps\n");
	/* Traced from now on: let it map the library. */
	assert_int_equal(write(t_in, "g", 1), 1);
	read_until(u_out, out, sizeof(out), "-");
	p = out + strlen(out);
	while (count_lines(out) < 3 && p < out + sizeof(out) - 1) {
		ssize_t n = read(u_out, p, (size_t)(out + sizeof(out) - 1 - p));

		if (n <= 0)
			break;
		p += n;
		*p = '\0';
	}
	assert_int_equal(waitpid(tool, &st, 0), tool);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	p = err + strlen(err);
	while (read(u_err, p, 1) == 1 && p < err + sizeof(err) - 2)
		*++p = '\0';
	expect_in(err, "usdt: tracing 1 more probe (1 call site) in ");
	expect_in(err, "libtracelib.so, mapped since\n");
	assert_int_equal(count_str(out, " dlopen_target tracelib:hit "), 3);
	kill(target, SIGKILL);
	assert_int_equal(waitpid(target, NULL, 0), target);
	close(t_in);
	close(t_out);
	close(u_in);
	close(u_out);
	close(u_err);
	assert_nothing_left();
}

/* Run dir/tt (a trace_target) for rounds rounds; its exit status. */
static int run_copy(const char *dir, int rounds)
{
	char cmd[PATH_MAX + 128];

	snprintf(cmd, sizeof(cmd),
		 "LD_LIBRARY_PATH='%s' '%s/tt' %d 0 0 >/dev/null",
		 FIXTURE_DIR, dir, rounds);
	return system(cmd);
}

/*
 * A traced file replaced on disk, as a package upgrade does it (a new file
 * renamed over the path): processes started afterwards run the new file,
 * and the tool follows the path and traces them too, and says so. Before,
 * they were silently not traced (10 of 20 hits).
 */
static void test_file_replaced(void **state)
{
	char dir[] = "/tmp/usdt-replaced-XXXXXX", path[PATH_MAX];
	char cmd[2 * PATH_MAX], out[65536], err[4096], *p;
	int u_in, u_out, u_err, st;
	pid_t tool;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/tt'", TT, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/tt", dir);
	tool = spawn_piped((const char *const[]){ USDT_BIN, "trace", path,
						  "tt:one", NULL },
			   &u_in, &u_out, &u_err);
	read_until(u_err, err, sizeof(err), "Ctrl-C to stop\n");
	assert_int_equal(run_copy(dir, 10), 0);
	/* The upgrade: a new file (another inode), renamed over the old. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/tt.new' && mv '%s/tt.new' '%s'",
		 TT, dir, dir, path);
	assert_int_equal(system(cmd), 0);
	p = err + strlen(err);
	read_until(u_err, p, sizeof(err) - (size_t)(p - err),
		   "replaced on disk since\n");
	expect_in(err, "usdt: tracing 1 more probe (1 call site) in ");
	assert_int_equal(run_copy(dir, 10), 0);
	usleep(300 * 1000);	/* the last hits' lines */
	kill(tool, SIGINT);
	p = out;
	while (p < out + sizeof(out) - 1) {
		ssize_t n = read(u_out, p, (size_t)(out + sizeof(out) - 1 - p));

		if (n <= 0)
			break;
		p += n;
	}
	*p = '\0';
	assert_int_equal(waitpid(tool, &st, 0), tool);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(count_str(out, " tt tt:one "), 20);
	close(u_in);
	close(u_out);
	close(u_err);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	assert_nothing_left();
}

/*
 * -p PID alone holds only what the process maps now, and the files with
 * probes: a process that maps files without probes and unmaps them, a
 * batch at a time, leaves the tool holding none of them (each file the
 * tool holds is an open descriptor; it used to hold every file it had
 * ever seen, to the end). Each batch also maps a copy of libtracelib.so,
 * whose "mapped since" line says the tool has looked at the batch.
 */
#define WATCH_BATCHES 3
#define WATCH_FILES 40

static int tool_fd_cnt(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The process the tool watches: on each byte from cmd, maps batch k's
 * files (then says so on ack), on the next unmaps them (and says so). */
static void watch_child(const char *dir, int cmd, int ack)
{
	void *maps[WATCH_FILES + 1];
	char path[PATH_MAX], c;
	int k, i, fd;

	for (k = 0; k < WATCH_BATCHES; k++) {
		if (read(cmd, &c, 1) != 1)
			_exit(1);
		for (i = 0; i <= WATCH_FILES; i++) {
			if (i < WATCH_FILES)
				snprintf(path, sizeof(path), "%s/f%d_%d", dir,
					 k, i);
			else
				snprintf(path, sizeof(path), "%s/probes%d.so",
					 dir, k);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			maps[i] = fd < 0 ? MAP_FAILED :
					   mmap(NULL, 4096, PROT_READ,
						MAP_PRIVATE, fd, 0);
			if (maps[i] == MAP_FAILED)
				_exit(1);
			close(fd);
		}
		if (write(ack, "m", 1) != 1 || read(cmd, &c, 1) != 1)
			_exit(1);
		for (i = 0; i <= WATCH_FILES; i++)
			munmap(maps[i], 4096);
		if (write(ack, "u", 1) != 1)
			_exit(1);
	}
	while (read(cmd, &c, 1) > 0)
		;
	_exit(0);
}

/* dir (made) with the probe-less files of every batch (links to one copy
 * of the tool, which has no probes) and a copy of libtracelib.so each. */
static void watch_files(char *dir)
{
	char cmd[PATH_MAX + 256], base[PATH_MAX], path[PATH_MAX];
	int k, i;

	assert_non_null(mkdtemp(dir));
	snprintf(base, sizeof(base), "%s/base", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", USDT_BIN, base);
	assert_int_equal(system(cmd), 0);
	for (k = 0; k < WATCH_BATCHES; k++) {
		for (i = 0; i < WATCH_FILES; i++) {
			snprintf(path, sizeof(path), "%s/f%d_%d", dir, k, i);
			assert_int_equal(link(base, path), 0);
		}
		snprintf(cmd, sizeof(cmd), "cp %s %s/probes%d.so", TRACELIB,
			 dir, k);
		assert_int_equal(system(cmd), 0);
	}
}

static void test_watch_forgets(void **state)
{
	char dir[] = "/tmp/usdt-watch-XXXXXX", pid[16], err[4096];
	char needle[64], cmd[PATH_MAX];
	int to_child[2], from_child[2], u_in, u_out, u_err, fds, k, st;
	pid_t child, tool;
	char c;

	watch_files(dir);
	assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
	assert_int_equal(pipe2(from_child, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		close(to_child[1]);
		close(from_child[0]);
		watch_child(dir, to_child[0], from_child[1]);
	}
	snprintf(pid, sizeof(pid), "%d", (int)child);
	tool = spawn_piped((const char *const[]){ USDT_BIN, "trace", "-p",
						  pid, NULL },
			   &u_in, &u_out, &u_err);
	/* The child (a fork of this test) may map a library with probes of
	 * its own from the start: libstdc++'s three, under ASan. */
	read_until(u_err, err, sizeof(err), "Ctrl-C to stop\n");
	expect_in(err, "Ctrl-C to stop\n");
	fds = tool_fd_cnt(tool);
	for (k = 0; k < WATCH_BATCHES; k++) {
		assert_int_equal(write(to_child[1], "m", 1), 1);
		assert_int_equal(read(from_child[0], &c, 1), 1);
		snprintf(needle, sizeof(needle), "/probes%d.so, mapped since\n",
			 k);
		read_until(u_err, err, sizeof(err), needle);
		expect_in(err, needle);
		assert_int_equal(write(to_child[1], "u", 1), 1);
		assert_int_equal(read(from_child[0], &c, 1), 1);
	}
	/* What each libtracelib.so adds (the file, its links) is a few. */
	if (tool_fd_cnt(tool) - fds >= WATCH_FILES)
		fail_msg("usdt trace -p holds %d more descriptors after %d batches of %d files mapped and unmapped",
			 tool_fd_cnt(tool) - fds, WATCH_BATCHES, WATCH_FILES);
	kill(tool, SIGINT);
	assert_int_equal(waitpid(tool, &st, 0), tool);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(to_child[1]);
	assert_int_equal(waitpid(child, &st, 0), child);
	close(to_child[0]);
	close(from_child[0]);
	close(from_child[1]);
	close(u_in);
	close(u_out);
	close(u_err);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	assert_nothing_left();
}

/* Read fd on after what buf holds until it holds needle (or EOF). */
static void read_on(int fd, char *buf, size_t size, const char *needle)
{
	size_t len = strlen(buf);
	ssize_t n;

	while (!strstr(buf, needle) && len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
	}
}

/* The count --count --by-pid printed for pid's probe, or -1. */
static long pid_count(const char *out, const char *pid, const char *probe)
{
	char p[16], name[64];
	const char *line;
	long n;

	for (line = out; line && *line; line = strchr(line, '\n'),
	     line = line ? line + 1 : NULL)
		if (sscanf(line, "%ld %15s %63s", &n, p, name) == 3 &&
		    !strcmp(p, pid) && !strcmp(name, probe))
			return n;
	return -1;
}

/* pid's count of tracelib:hit is want; else a failure that shows what the
 * tool printed (out) and said (err). */
static void expect_pid_count(const char *out, const char *err,
			     const char *pid, long want)
{
	long got = pid_count(out, pid, "tracelib:hit");

	if (got != want)
		fail_msg("pid %s: %ld hits of tracelib:hit counted, not %ld; the tool printed:\n%s\nand said:\n%s",
			 pid, got, want, out, err);
}

/* Start dlopen_target LIB ROUNDS hold: its pid into pid, once it maps
 * LIB and waits for the byte that starts its rounds. */
static pid_t start_held_dlopen(const char *lib, const char *rounds,
			       char pid[16], int *in, int *out)
{
	char buf[256];
	pid_t p = spawn_piped((const char *const[]){ DLT, lib, rounds, "hold",
						     NULL },
			      in, out, NULL);

	read_until(*out, buf, sizeof(buf), "\n");
	assert_int_equal(sscanf(buf, "pid %15s", pid), 1);
	assert_int_equal(write(*in, "g", 1), 1);
	read_until(*out, buf, sizeof(buf), "mapped\n");
	expect_in(buf, "mapped\n");
	return p;
}

/* Let a process of start_held_dlopen() run its rounds, to its exit. */
static void run_held(pid_t p, int in)
{
	int st;

	assert_int_equal(write(in, "g", 1), 1);
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/*
 * -a: every process, by probe name. A copy of libtracelib.so mapped by a
 * process started before the tool, another copy mapped by one started
 * after, and a hard link to the first copy (the same file by another
 * path) mapped by a third: each file is attached once, and every hit of
 * each process counted, exactly; a process of another binary with
 * probes of another provider (cold_target's ct:cold) is not attached;
 * as the processes exit, each file is detached, and the tool says so.
 */
static void test_all_processes(void **state)
{
	char dir[] = "/tmp/usdt-all-XXXXXX", lib1[64], lib2[64], link1[64];
	char cmd[512], buf[256], err[16384], out[8192], needle[160];
	char pa[16], pb[16], pc[16], pd[16];
	int a_in, a_out, b_in, b_out, c_in, c_out, d_in, d_out;
	int u_in, u_out, u_err, st;
	pid_t a, b, c, d, tool;

	assert_non_null(mkdtemp(dir));
	snprintf(lib1, sizeof(lib1), "%s/lib1.so", dir);
	snprintf(lib2, sizeof(lib2), "%s/lib2.so", dir);
	snprintf(link1, sizeof(link1), "%s/link1.so", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s && cp %s %s && ln %s %s",
		 TRACELIB, lib1, TRACELIB, lib2, lib1, link1);
	assert_int_equal(system(cmd), 0);
	c = spawn_piped((const char *const[]){ FIXTURE_DIR "/cold_target",
					       "100000", NULL },
			&c_in, &c_out, NULL);
	read_until(c_out, buf, sizeof(buf), "\n");
	assert_int_equal(sscanf(buf, "pid %15s", pc), 1);
	a = start_held_dlopen(lib1, "3", pa, &a_in, &a_out);
	tool = spawn_piped((const char *const[]){ USDT_BIN, "trace", "-a",
						  "--count", "--by-pid",
						  "tracelib:hit", NULL },
			   &u_in, &u_out, &u_err);
	err[0] = '\0';
	read_on(u_err, err, sizeof(err), "Ctrl-C to stop\n");
	snprintf(needle, sizeof(needle), "(1 call site) in %s, mapped by pid %s\n",
		 lib1, pa);
	expect_in(err, needle);
	/* Started after the tool: found by a later look at /proc. */
	b = start_held_dlopen(lib2, "5", pb, &b_in, &b_out);
	snprintf(needle, sizeof(needle), "(1 call site) in %s, mapped by pid %s\n",
		 lib2, pb);
	read_on(u_err, err, sizeof(err), needle);
	expect_in(err, needle);
	/* lib1 again, by another path: attached already. */
	d = start_held_dlopen(link1, "2", pd, &d_in, &d_out);
	/* One after the other: this test is about which files -a
	 * attaches and when. Processes hitting at once on one CPU of a
	 * kernel that preempts uprobe programs are test_preempt's. */
	run_held(a, a_in);
	run_held(b, b_in);
	run_held(d, d_in);
	/* Nothing maps the copies any more: both let go of. */
	snprintf(needle, sizeof(needle), "no process maps %s any more: detached its 1 probe\n",
		 lib1);
	read_on(u_err, err, sizeof(err), needle);
	expect_in(err, needle);
	snprintf(needle, sizeof(needle), "no process maps %s any more: detached its 1 probe\n",
		 lib2);
	read_on(u_err, err, sizeof(err), needle);
	expect_in(err, needle);
	kill(tool, SIGINT);
	out[0] = '\0';
	read_on(u_out, out, sizeof(out), "\x01");	/* to EOF */
	assert_int_equal(waitpid(tool, &st, 0), tool);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	expect_pid_count(out, err, pa, 3);
	expect_pid_count(out, err, pb, 5);
	expect_pid_count(out, err, pd, 2);
	snprintf(needle, sizeof(needle), " %s ", pc);
	if (strstr(out, needle))
		fail_msg("cold_target (pid %s) counted:\n%s", pc, out);
	/* Each copy attached once; the link and cold_target never. */
	snprintf(needle, sizeof(needle), "in %s, mapped by", lib1);
	assert_int_equal(count_str(err, needle), 1);
	snprintf(needle, sizeof(needle), "in %s, mapped by", lib2);
	assert_int_equal(count_str(err, needle), 1);
	if (strstr(err, "link1.so") || strstr(err, "cold_target"))
		fail_msg("attached more than the two copies:\n%s", err);
	kill(c, SIGKILL);
	assert_int_equal(waitpid(c, NULL, 0), c);
	close(a_in);
	close(a_out);
	close(b_in);
	close(b_out);
	close(c_in);
	close(c_out);
	close(d_in);
	close(d_out);
	close(u_in);
	close(u_out);
	close(u_err);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	assert_nothing_left();
}

/*
 * Two copies of libtracelib.so, by a glob TARGET (every process), hit by
 * a process each: 3 and 5 times, arg0 1..3 and 1..5. The tool, with opts
 * (NULL-ended) before the TARGET, runs until both processes ended; its
 * stdout into out, its stderr into err.
 */
static void run_two_copies(const char *dir, const char *const *opts,
			   char *out, size_t out_size, char *err,
			   size_t err_size)
{
	const char *argv[16] = { USDT_BIN, "trace" };
	char glob[64], lib[64], buf[256];
	static const char *const rounds[] = { "3", "5" };
	int u_in, u_out, u_err, t_in, t_out, st, n = 2, i;
	pid_t tool, t;

	while (*opts && n < 13)
		argv[n++] = *opts++;
	snprintf(glob, sizeof(glob), "%s/lib*.so", dir);
	argv[n++] = glob;
	argv[n++] = "tracelib:hit";
	tool = spawn_piped(argv, &u_in, &u_out, &u_err);
	read_until(u_err, err, err_size, "Ctrl-C to stop\n");
	expect_in(err, "usdt: tracing 2 probes (2 call sites) in 2 files");
	for (i = 0; i < 2; i++) {
		snprintf(lib, sizeof(lib), "%s/lib%d.so", dir, i + 1);
		t = spawn_piped((const char *const[]){ DLT, lib, rounds[i],
						       NULL },
				&t_in, &t_out, NULL);
		assert_int_equal(write(t_in, "g", 1), 1);
		while (read(t_out, buf, sizeof(buf)) > 0)
			;
		assert_int_equal(waitpid(t, &st, 0), t);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		close(t_in);
		close(t_out);
	}
	kill(tool, SIGINT);
	read_until(u_out, out, out_size, "\x01");	/* to EOF */
	assert_int_equal(waitpid(tool, &st, 0), tool);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(u_in);
	close(u_out);
	close(u_err);
}

/*
 * The summaries are per probe name: the same probe in two files (two
 * copies of a library, as -a, -p PID or a glob finds them) is one row of
 * --count, its counts added up (and per --by key), and one histogram of
 * --hist, its buckets added up. Before, each file had its own row, two
 * lines "tracelib:hit" that looked alike.
 */
static void test_rows_per_name(void **state)
{
	static const char *const by_lines[] = {
		"           2             -2 tracelib:hit 1\n",
		"           2             -4 tracelib:hit 2\n",
		"           2             -6 tracelib:hit 3\n",
		"           1             -4 tracelib:hit 4\n",
		"           1             -5 tracelib:hit 5\n",
	};
	char dir[] = "/tmp/usdt-rows-XXXXXX", cmd[256];
	char out[8192], err[4096];
	size_t i;

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp %s %s/lib1.so && cp %s %s/lib2.so",
		 TRACELIB, dir, TRACELIB, dir);
	assert_int_equal(system(cmd), 0);

	run_two_copies(dir, (const char *const[]){ "--count", NULL }, out,
		       sizeof(out), err, sizeof(err));
	expect_in(out, "\n           8 tracelib:hit\n");
	assert_int_equal(count_str(out, "tracelib:hit"), 1);

	run_two_copies(dir, (const char *const[]){ "-j", "--count", NULL },
		       out, sizeof(out), err, sizeof(err));
	expect_in(out, "\"counts\": [{\"probe\": \"tracelib:hit\", \"count\": 8}]}\n");
	assert_int_equal(count_str(out, "tracelib:hit"), 1);

	/* Per key, with --sum of arg1 (-arg0). */
	run_two_copies(dir, (const char *const[]){ "--count", "--by", "arg0",
						   "--sum", "1", NULL },
		       out, sizeof(out), err, sizeof(err));
	for (i = 0; i < ARRAY_SIZE(by_lines); i++)
		expect_in(out, by_lines[i]);
	assert_int_equal(count_str(out, "tracelib:hit"), 5);

	/* 1, 2 and 3 twice, 4 and 5 once. */
	run_two_copies(dir, (const char *const[]){ "-j", "--hist", "0", NULL },
		       out, sizeof(out), err, sizeof(err));
	expect_in(out, "\"hists\": [{\"probe\": \"tracelib:hit\", \"arg\": 0, \"buckets\": [{\"low\": 1, \"high\": 2, \"count\": 2}, {\"low\": 2, \"high\": 4, \"count\": 4}, {\"low\": 4, \"high\": 8, \"count\": 2}]}]}\n");
	assert_int_equal(count_str(out, "tracelib:hit"), 1);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	assert_nothing_left();
}

/* --count --by: counts per argument value (most first), or per string. */
/*
 * --latency START END --by KEY: a line per key of START's arguments (tt:one's
 * round) with the pairs, their total and mean ns; JSON "keys". The times
 * vary; the counts, keys and mean (total / count) do not.
 */
static void test_latency_by(void **state)
{
	unsigned long long total, mean;
	struct run_result r;
	const char *p;
	int key, cnt, got;

	run_ok(&r, "trace", "-q", "--latency", "tt:one", "tt:two", "--by",
	       "arg0", "-c", TT " 3 0 0", TT);
	p = strstr(r.out, "latency tt:one -> tt:two (ns): count, total, mean, key\n");
	assert_non_null(p);
	p = strchr(p, '\n') + 1;
	for (key = 1; key <= 3; key++) {
		assert_int_equal(sscanf(p, "%d %llu %llu %d", &cnt, &total,
					&mean, &got), 4);
		assert_int_equal(got, key);
		assert_int_equal(cnt, 1);
		assert_true(total > 0 && mean == total);
		p = strchr(p, '\n') + 1;
	}
	assert_true(!strncmp(p, "unmatched starts: 0, unmatched ends: 0\n",
			     39));
	run_result_free(&r);
	run_ok(&r, "trace", "-q", "-j", "--latency", "tt:one", "tt:two",
	       "--by", "arg0", "-c", TT " 1 0 0", TT);
	expect_in(r.out, "\"unit\": \"ns\", \"keys\": [{\"count\": 1, \"value\": 1, \"total\": ");
	expect_in(r.out, "}], \"unmatched_starts\": 0, \"unmatched_ends\": 0}}\n");
	run_result_free(&r);
	/* --slower-than with the key START's arguments gave. */
	run_ok(&r, "trace", "-q", "-j", "--latency", "tt:one", "tt:two",
	       "--by", "arg0", "--slower-than", "1ns", "-c", TT " 2 0 0", TT);
	expect_in(r.out, "\"comm\": \"trace_target\", \"start\": \"tt:one\", \"end\": \"tt:two\", \"ns\": ");
	assert_int_equal(count_str(r.out, "\"start\": \"tt:one\", \"end\": \"tt:two\", \"ns\": "), 2);
	assert_int_equal(count_str(r.out, ", \"value\": 1}\n"), 1);
	assert_int_equal(count_str(r.out, ", \"value\": 2}\n"), 1);
	run_result_free(&r);
}

static void test_count_by(void **state)
{
	static const char *const bad[][3] = {
		{ "--by", "arg0", NULL },	/* without --count */
		{ "--count", "--by", "str(arg0" },
		{ "--count", "--by", "arg12" },
		{ "--count", "--by", "x" },
	};
	char pid[16], line[64];
	struct run_result r;
	size_t i;

	run_tool(&r, "trace", "-q", "--count", "--by", "arg0", "-c", PT " 3",
		 PT, "pt:stop");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	for (i = 1; i <= 3; i++) {
		snprintf(line, sizeof(line), "           1 pt:stop %zu\n", i);
		expect_in(r.out, line);
	}
	run_result_free(&r);

	/* pattern_target execs trace_target: tt:two's arg0 is the round. */
	run_tool(&r, "trace", "-q", "--count", "--by-pid", "--by", "arg1",
		 "-c", PT " 1 " TT " 3 0 0", TT, "tt:two");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(sscanf(r.out, "pid %15s", pid), 1);
	for (i = 1; i <= 3; i++) {
		snprintf(line, sizeof(line), "%8s tt:two -%zu\n", pid, i);
		expect_in(r.out, line);
	}
	run_result_free(&r);

	run_tool(&r, "trace", "-q", "--json", "--count", "--by", "arg0", "-c",
		 PT " 2", PT, "pt:start");
	expect_in(r.out, "{\"probe\": \"pt:start\", \"value\": 2, \"count\": 1}");
	run_result_free(&r);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *argv[8] = { USDT_BIN, "trace", bad[i][0], bad[i][1],
					bad[i][2], PT, NULL };

		if (!bad[i][2]) {
			argv[4] = PT;
			argv[5] = NULL;
		}
		run_argv(argv, &r);
		assert_int_equal(r.status, 1);
		if (!strstr(r.err, "--by"))
			fail_msg("%s %s: %s", bad[i][0], bad[i][1], r.err);
		run_result_free(&r);
	}
	run_tool(&r, "trace", "--count", "--by", "arg3", PT, "pt:stop");
	assert_int_equal(r.status, 1);
	expect_in(r.err, "no matching probe has argument 3");
	run_result_free(&r);
	assert_nothing_left();
}

/*
 * --ustack: a frame a line under each hit, symbolized from the file's
 * symbols (the first frame is the call site's function, fire(); more need
 * frame pointers, which x86's build of the fixture has not). The target
 * lives on between hits, so its maps can still be read.
 */
static void test_ustack(void **state)
{
	bool nostack = false;
	struct run_result r;

	run_tool(&r, "trace", "-q", "--ustack", "-c", TT " 2 300 0", TT,
		 "tt:one");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(count_str(r.out, " trace_target tt:one "), 2);
	/* s390x's kernels before 6.12 (or so) unwind no user stack: said
	 * once, and no frame printed. */
	if (strstr(r.err, "warning: the kernel gives no user stack")) {
#if !defined(__s390x__)
		fail_msg("no user stack here:\n%s", r.err);
#endif
		nostack = true;
		assert_int_equal(count_str(r.out, "\n    "), 0);
	} else {
		/* Each hit's first frame; more follow where the code keeps
		 * frame pointers (arm64's does). */
		assert_int_equal(count_str(r.out, " tt:one 1\n    fire+0x"), 1);
		assert_int_equal(count_str(r.out, " tt:one 2\n    fire+0x"), 1);
		assert_true(count_str(r.out, "/trace_target)\n") >= 2);
	}
	run_result_free(&r);
	run_tool(&r, "trace", "-q", "-j", "--ustack", "-c", TT " 1 300 0", TT,
		 "tt:one");
	assert_int_equal(r.status, 0);
	if (nostack)
		expect_in(r.out, "\"args\": [1], \"ustack\": []}");
	else
		expect_in(r.out, "\"args\": [1], \"ustack\": [\"fire+0x");
	run_result_free(&r);
	run_tool(&r, "trace", "--ustack", "--count", TT, "tt:one");
	assert_int_equal(r.status, 1);
	expect_in(r.err, "--ustack goes with events");
	run_result_free(&r);
	assert_nothing_left();
}

/*
 * --ustack of a process whose file was deleted since it mapped it (an
 * upgrade): the frames name it as maps does, "PATH (deleted)", and are
 * symbolized from the mapped file (through /proc/PID/map_files/), not
 * from whatever PATH names now.
 */
static void test_ustack_deleted(void **state)
{
	char dir[] = "/tmp/usdt-del-XXXXXX", tf[64], pid_s[16], want[96];
	char buf[64] = { 0 }, cmd[256];
	struct run_result r;
	int fd;
	pid_t pid;

	assert_non_null(mkdtemp(dir));
	snprintf(tf, sizeof(tf), "%s/tf", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'",
		 FIXTURE_DIR "/trace_fmt_target", tf);
	assert_int_equal(system(cmd), 0);
	pid = spawn_out((const char *const[]){ tf, "100000", "20", NULL },
			&fd);
	assert_true(read(fd, buf, sizeof(buf) - 1) > 4);	/* "pid N" */
	assert_int_equal(unlink(tf), 0);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	run_tool(&r, "trace", "-q", "--ustack", "-p", pid_s, "-n", "2",
		 "tf:val");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
	rmdir(dir);
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(count_str(r.out, " tf:val "), 2);
	if (!strstr(r.err, "warning: the kernel gives no user stack")) {
		snprintf(want, sizeof(want), " (%s (deleted))\n", tf);
		assert_int_equal(count_str(r.out, "\n    fire+0x"), 2);
		assert_true(count_str(r.out, want) >= 2);
	}
	run_result_free(&r);
	assert_nothing_left();
}

#define CT FIXTURE_DIR "/cold_target"

/*
 * A string in a page the process has not touched: the BPF side's read of
 * it fails (no fault in a uprobe), and the tool reads it again from the
 * process's memory as it prints (it printed "?" and "Bad address").
 */
static void test_cold_string(void **state)
{
	struct run_result r;

	run_tool(&r, "trace", "-q", "-c", CT " 2", CT, "ct:cold", "%s #%d");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(count_str(r.out, " ct:cold cold page #1\n"), 1);
	assert_int_equal(count_str(r.out, " ct:cold cold page #2\n"), 1);
	assert_string_equal(r.err, "");
	run_result_free(&r);
	/* Bounded and counted reads are read again too. */
	run_tool(&r, "trace", "-q", "-c", CT " 1", CT, "ct:cold", "%.4s|");
	assert_int_equal(r.status, 0);
	expect_in(r.out, " ct:cold cold|\n");
	run_result_free(&r);
	run_tool(&r, "trace", "-q", "-c", CT " 2", CT, "ct:cold",
		 "\"<%.*s>\", arg1, arg0");
	assert_int_equal(r.status, 0);
	expect_in(r.out, " ct:cold <c>\n");
	expect_in(r.out, " ct:cold <co>\n");
	run_result_free(&r);
	/* And so are typed loads through the pointer. */
	run_tool(&r, "trace", "-q", "-c", CT " 1", CT, "ct:cold",
		 "\"%c%c%d\", *(char *)arg0, *(uint8 *)(arg0 + 1), "
		 "*(int16 *)(arg0 + 9)");
	assert_int_equal(r.status, 0);
	expect_in(r.out, " ct:cold co0\n");
	assert_string_equal(r.err, "");
	run_result_free(&r);
	assert_nothing_left();
}

/*
 * A string in a page the process has no page-table entry for, unmapped
 * right after the hit ("unmap"), so that user space cannot read it again:
 * with --fault-in (only: see test_trace_hold.c) the program loads
 * sleepable and faults it in at the hit (Linux 6.0+), for %s, typed
 * loads, the filter's strings and --by str().
 */
static void test_fault_in(void **state)
{
	struct run_result r;
	char line[40];
	int i;

	run_tool(&r, "trace", "-q", "--fault-in", "-c", CT " 3 unmap", CT,
		 "ct:cold", "%s #%d");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	for (i = 1; i <= 3; i++) {
		snprintf(line, sizeof(line), " ct:cold gone %d #%d\n", i, i);
		assert_int_equal(count_str(r.out, line), 1);
	}
	assert_string_equal(r.err, "");
	run_result_free(&r);
	run_tool(&r, "trace", "-q", "--fault-in", "-c", CT " 2 unmap", CT,
		 "ct:cold",
		 "\"%c%c\", *(char *)(arg0 + 1), *(uint8 *)(arg0 + 5)");
	assert_int_equal(r.status, 0);
	assert_int_equal(count_str(r.out, " ct:cold o1\n"), 1);
	assert_int_equal(count_str(r.out, " ct:cold o2\n"), 1);
	run_result_free(&r);
	run_tool(&r, "trace", "-q", "--fault-in", "-f", "arg0 == \"gone 2\"",
		 "-c", CT " 3 unmap", CT, "ct:cold", "%s #%d");
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines(r.out), 2);	/* and "pid N" */
	assert_int_equal(count_str(r.out, " ct:cold gone 2 #2\n"), 1);
	run_result_free(&r);
	/* Without the flag nothing faults: the filter (which nothing reads
	 * again) sees no string equal to it. */
	run_tool(&r, "trace", "-q", "-f", "arg0 == \"gone 2\"", "-c",
		 CT " 3 unmap", CT, "ct:cold", "%s #%d");
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines(r.out), 1);	/* "pid N" */
	run_result_free(&r);
	run_tool(&r, "trace", "-q", "--fault-in", "--count", "--by",
		 "str(arg0)", "-c", CT " 2 unmap", CT, "ct:cold");
	assert_int_equal(r.status, 0);
	expect_in(r.out, "1 ct:cold gone 1\n");
	expect_in(r.out, "1 ct:cold gone 2\n");
	run_result_free(&r);
	assert_nothing_left();
}

static void as_nobody(void *arg)
{
	(void)arg;
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		_exit(126);
}

/* Chrooted to dir (a setup function), as nobody: a user the tracer is
 * not, inside a root that user may fill. */
static void into_root_as_nobody(void *dir)
{
	into_root(dir);
	as_nobody(NULL);
}

#ifndef SYS_openat2
#define SYS_openat2 437		/* glibc before 2.32 */
#endif

/*
 * Without openat2() (a setup function): as under a seccomp filter that
 * refuses it, as some container runtimes' did, or before Linux 5.6.
 */
static void without_openat2(void *arg)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]),
				  .filter = f };

	(void)arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		_exit(126);
}

/*
 * Without the capabilities that /proc/PID/map_files/ needs (a setup
 * function; root's other capabilities, CAP_SYS_PTRACE among them, stay).
 */
static void without_map_files(void *arg)
{
	(void)arg;
	if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) ||
	    prctl(PR_CAPBSET_DROP, CAP_CHECKPOINT_RESTORE, 0, 0, 0))
		_exit(126);
}

/*
 * A chrooted process's user plants symlinks to a host file in its root:
 * at the path its maps show for its program (our path DIR/tf, which
 * /proc/PID/root/DIR/tf reaches as DIR/DIR/tf) and at a path the tracer
 * names.
 * Followed from /proc/PID/root/, an absolute link leaves that root, and
 * root's tracer opened the host file the user chose (/etc/shadow, or a
 * FUSE file that never answers). The links resolve inside the root now:
 * `usdt list -p` and `usdt trace -p` still read the mapped program and
 * never open the host file (inotify counts its opens); the named path is
 * "no such file" there, and a link inside the root is followed. Root
 * reads the mapped files through /proc/PID/map_files/; without that, by
 * their paths inside the root (our path DIR/tf is a link there; /tf, with
 * DIR taken off, is the file). Without openat2() nothing is looked up in
 * the root: the mapped program is still read through map_files/, and a
 * path the tracer names is refused, said why, never opened another way.
 */
static void test_chrooted_links_stay_inside(void **state)
{
	char dir[] = "/tmp/usdt_root_XXXXXX", host[] = "/tmp/usdt_host_XXXXXX";
	char pid_s[16], buf[64] = { 0 }, cmd[256];
	const char *argv[] = { "/tf", "100000", "20", NULL };
	struct run_result r[7];
	int fd, in, opens, i;
	pid_t pid;

	(void)state;
	fd = mkstemp(host);
	assert_true(fd >= 0);
	close(fd);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	make_root(dir);
	/* DIR/tf as the process sees it is DIR/DIR/tf; /evil is the other. */
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s%s' && ln -s '%s' '%s%s/tf'"
		 " && ln -s '%s' '%s/evil' && ln -s /tf '%s/good'", dir, dir,
		 host, dir, dir, host, dir, dir);
	assert_int_equal(system(cmd), 0);
	in = opens_watch(host);
	assert_true(in >= 0);

	pid = spawn_out_setup(argv, &fd, into_root_as_nobody, dir);
	assert_true(read(fd, buf, sizeof(buf) - 1) > 4);	/* "pid N" */
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	/* Every run first: the target goes before any assertion. */
	run_tool(&r[0], "list", "-p", pid_s);
	run_tool(&r[1], "trace", "-p", pid_s, "-n", "2", "tf:val");
	run_tool(&r[2], "list", "-p", pid_s, "/evil");
	run_tool(&r[3], "list", "-p", pid_s, "/good");
	run_argv_setup((const char *const[]){ USDT_BIN, "list", "-p", pid_s,
					       NULL }, &r[4], without_openat2,
		       NULL);
	run_argv_setup((const char *const[]){ USDT_BIN, "list", "-p", pid_s,
					       "/tf", NULL }, &r[5],
		       without_openat2, NULL);
	run_argv_setup((const char *const[]){ USDT_BIN, "list", "-p", pid_s,
					       NULL }, &r[6], without_map_files,
		       NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
	opens = opens_seen(in);
	close(in);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", dir, host);
	assert_int_equal(system(cmd), 0);

	if (opens)
		fail_msg("the host file was opened %d times", opens);
	for (i = 0; i < 7; i++)
		if (i != 5 && r[i].status != (i == 2))
			fail_msg("run %d: status %d, stderr:\n%s", i,
				 r[i].status, r[i].err);
	expect_in(r[0].out, "tf:val");
	assert_int_equal(count_str(r[1].out, " tf:val "), 2);
	expect_in(r[2].err, "/evil: no such file");
	expect_in(r[3].out, "tf:val");
	expect_in(r[4].out, "tf:val");
	assert_int_equal(r[5].status, 1);
	expect_in(r[5].err, "/tf: cannot look inside the process's root: openat2() is missing");
	expect_in(r[6].out, "tf:val");
	for (i = 0; i < 7; i++)
		run_result_free(&r[i]);
	assert_nothing_left();
}

/*
 * A copy of the program src that nobody may run, as dir/base(src) in a
 * fresh directory dir (a "/tmp/usdt-nobody-XXXXXX" buffer): the tree's
 * build/ may be a directory only root may enter (a clone made under umask
 * 077, as CI's was). The caller unlinks bin and removes dir.
 */
static void nobody_copy(const char *src, char *dir, char *bin, size_t n)
{
	const char *base = strrchr(src, '/');
	char cmd[512];

	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(bin, n, "%s/%s", dir, base ? base + 1 : src);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 755 %s", src, bin, bin);
	assert_int_equal(system(cmd), 0);
}

/* On CPU *arg only (a setup function). */
static void on_cpu(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(*(int *)arg, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(126);
}

/* On CPU *arg, real-time (nothing else there runs until it sleeps), as
 * nobody. */
static void rt_nobody(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };

	on_cpu(arg);
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		_exit(126);
	as_nobody(NULL);
}

/*
 * Even with --fault-in, only the tracer's own user's processes fault: a
 * fault may wait as long as the file's server (a FUSE daemon) likes, and
 * a sleeping uprobe program holds up every uprobe's removal. Another
 * user's string that is not present reads as without the flag: "?", Bad
 * address. The tool and the target share one CPU, the target real-time:
 * the tool cannot run (and re-read the string from user space) between
 * the hit and the string's unmap, as it did in a one-CPU guest when its
 * wakeup preempted the target.
 */
static void test_fault_in_own_user_only(void **state)
{
	char dir[] = "/tmp/usdt-nobody-XXXXXX", bin[64];
	const char *argv[] = { bin, "400", "unmap", NULL };
	struct run_result r;
	char buf[64] = { 0 }, pid[16];
	int fd, got, cpu = 0;
	cpu_set_t set;
	pid_t child;

	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &set))
		cpu++;
	nobody_copy(CT, dir, bin, sizeof(bin));
	child = spawn_out_setup(argv, &fd, rt_nobody, &cpu);
	got = (int)read(fd, buf, sizeof(buf) - 1);
	if (got > 4 && !strncmp(buf, "pid ", 4)) {
		snprintf(pid, sizeof(pid), "%d", (int)child);
		run_argv_setup((const char *const[]){ USDT_BIN, "trace", "-q",
						       "--fault-in", "-n", "2",
						       "-p", pid,
						       bin, "ct:cold",
						       "%s #%d", NULL },
			       &r, on_cpu, &cpu);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(fd);
	unlink(bin);
	rmdir(dir);
	if (got <= 4 || strncmp(buf, "pid ", 4))
		fail_msg("%s as nobody did not start (read %d)", bin, got);
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	if (count_str(r.out, " ct:cold ? #") != 2)
		fail_msg("want 2 unread strings; stdout:\n%s\nstderr:\n%s",
			 r.out, r.err);
	expect_in(r.err, "argument 0 cannot be read: Bad address");
	run_result_free(&r);
	assert_nothing_left();
}

/* -b sizes the ring buffer: rounded up to a power of two, bounded. */
static void test_buffer_size(void **state)
{
	static const char *const bad[] = { "0", "2G", "5x", "-1", "1025M" };
	struct run_result r;
	size_t i;

	run_tool(&r, "trace", "-q", "-b", "100k", "-c", PT " 2", PT,
		 "pt:stop");
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(count_str(r.out, " pt:stop "), 2);
	run_result_free(&r);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		run_tool(&r, "trace", "-b", bad[i], PT);
		assert_int_equal(r.status, 1);
		if (!strstr(r.err, "bad buffer size"))
			fail_msg("-b %s: %s", bad[i], r.err);
		run_result_free(&r);
	}
	assert_nothing_left();
}

/* The state letter of process pid ("R", "S", "Z", ...; "" if gone). */
static const char *proc_state(pid_t pid)
{
	static char st[2];
	char path[64], buf[512], *rp;
	FILE *f;
	size_t n;

	st[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return st;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	if (rp && rp[1] == ' ')
		st[0] = rp[2];
	return st;
}

static pid_t thread_tid;
/* Two pipes: the thread says it runs on up[], waits on down[] (one pipe
 * both ways would let it read back its own byte). */
static int thread_up[2], thread_down[2];

static void *thread_main(void *arg)
{
	char c;

	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	if (write(thread_up[1], "t", 1) != 1 ||
	    read(thread_down[0], &c, 1) != 1)
		return NULL;
	return NULL;
}

/* -p of a process of the tool's own user that is not dumpable (a process
 * that changed its user and ran nothing since is not): not said to be
 * another user's. */
static void not_dumpable(const char *bin)
{
	char pid[16], expect[192], c;
	struct run_result r;
	int ready[2];
	pid_t child;

	/* The tool runs once the child is nobody's and not dumpable (it
	 * ran before that under load, and saw root's process). */
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		as_nobody(NULL);
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	snprintf(expect, sizeof(expect),
		 "pid %d: cannot read /proc/%d/maps: Permission denied (the user may, but the process is not dumpable",
		 (int)child, (int)child);
	run_argv_setup((const char *const[]){ bin, "list", "-p", pid, NULL },
		       &r, as_nobody, NULL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(r.status, 1);
	expect_in(r.err, expect);
	run_result_free(&r);
}

/* -p of another user's process, by a user who may not read its maps.
 * The tool runs from a copy nobody can reach (nobody_copy()). */
static void test_pid_not_ours(void **state)
{
	char pid[16], expect[160], dir[] = "/tmp/usdt-nobody-XXXXXX";
	char bin[64];
	struct run_result r;

	nobody_copy(USDT_BIN, dir, bin, sizeof(bin));
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(expect, sizeof(expect),
		 "pid %d: cannot read /proc/%d/maps: Permission denied (another user's process",
		 (int)getpid(), (int)getpid());
	run_argv_setup((const char *const[]){ bin, "list", "-p", pid, NULL },
		       &r, as_nobody, NULL);
	assert_int_equal(r.status, 1);
	expect_in(r.err, expect);
	run_result_free(&r);
	run_argv_setup((const char *const[]){ bin, "trace", "-p", pid, NULL },
		       &r, as_nobody, NULL);
	assert_int_equal(r.status, 1);
	expect_in(r.err, expect);
	run_result_free(&r);
	not_dumpable(bin);
	unlink(bin);
	rmdir(dir);
}

/* -p of a thread that is not its process's leader, and of a zombie: each
 * said for what it is (both read as "no USDT probes" or "no such
 * process" before). */
static void test_pid_errors(void **state)
{
	char tid[16], zpid[16], c, expect[128];
	struct run_result r;
	pthread_t t;
	pid_t z;

	assert_int_equal(pipe(thread_up), 0);
	assert_int_equal(pipe(thread_down), 0);
	assert_int_equal(pthread_create(&t, NULL, thread_main, NULL), 0);
	assert_int_equal(read(thread_up[0], &c, 1), 1);
	snprintf(tid, sizeof(tid), "%d", (int)thread_tid);
	snprintf(expect, sizeof(expect),
		 "usdt: trace: %d is a thread of process %d: give -p %d\n",
		 (int)thread_tid, (int)getpid(), (int)getpid());
	run_tool(&r, "trace", "-p", tid, "-n", "1");
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, expect);
	run_result_free(&r);
	run_tool(&r, "list", "-p", tid);
	assert_int_equal(r.status, 1);
	expect_in(r.err, "is a thread of process");
	run_result_free(&r);
	assert_int_equal(write(thread_down[1], "g", 1), 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	close(thread_up[0]);
	close(thread_up[1]);
	close(thread_down[0]);
	close(thread_down[1]);

	z = fork();
	assert_true(z >= 0);
	if (!z)
		_exit(0);
	/* Not reaped until the tool has run: a zombie. */
	while (!strstr(proc_state(z), "Z"))
		usleep(1000);
	snprintf(zpid, sizeof(zpid), "%d", (int)z);
	run_tool(&r, "trace", "-p", zpid, TT, "tt:one");
	assert_int_equal(r.status, 1);
	expect_in(r.err, "has exited (a zombie its parent has not reaped)\n");
	run_result_free(&r);
	assert_int_equal(waitpid(z, NULL, 0), z);
	assert_nothing_left();
}

/*
 * A perf uprobe of our own on tt:gated's site with another semaphore
 * offset (what another tracer may hold there): the kernel refuses the
 * tool's uprobe with EINVAL, and the tool says why.
 */
static int clash_blocker(const char *path, uint64_t off, uint64_t ref)
{
	struct perf_event_attr a;
	char buf[16] = "";
	int fd, type;
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	type = atoi(buf);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)type;
	a.config = ref << 32;	/* format/ref_ctr_offset: config:32-63 */
	a.config1 = (uint64_t)(uintptr_t)path;
	a.config2 = off;
	fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1,
			  PERF_FLAG_FD_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

/* A hex field of `usdt list -j`'s output: "key": "0x...". */
static unsigned long long json_hex_field(const char *out, const char *key)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), "\"%s\": \"0x", key);
	p = strstr(out, want);
	if (!p)
		fail_msg("no %s in %s", key, out);
	return strtoull(p + strlen(want), NULL, 16);
}

/* On a copy of the target (an inode of this test's own, so that another
 * run's uprobes on the fixture are not disturbed); it is never run. */
static void test_semaphore_clash(void **state)
{
	char dir[] = "/tmp/usdt-clash-XXXXXX", path[64], cmd[256];
	unsigned long long off, sema;
	struct run_result r;
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/trace_target", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", TT, path);
	assert_int_equal(system(cmd), 0);
	run_tool(&r, "list", "-j", path, "tt:gated");
	assert_int_equal(r.status, 0);
	off = json_hex_field(r.out, "file_offset");
	sema = json_hex_field(r.out, "semaphore_offset");
	run_result_free(&r);
	fd = clash_blocker(path, off, sema + 2);
	run_tool(&r, "trace", "-n", "1", path, "tt:gated");
	close(fd);
	unlink(path);
	rmdir(dir);
	assert_int_equal(r.status, 1);
	expect_in(r.err, "tt:gated: warning: skipped: invalid argument: the kernel refuses a site with a semaphore");
	expect_in(r.err, "ref_ctr_offset mismatch");
	run_result_free(&r);
	assert_nothing_left();
}

/*
 * A probe whose only semaphore is at an odd address (a synthetic file of
 * this host's machine): the reader refuses it, and the tool says the
 * reader's reason, not a clash with another tracer's uprobe.
 */
static void test_semaphore_odd(void **state)
{
	char path[] = "/tmp/usdt-odd-XXXXXX";
	struct elfb_notes n = {
		.be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
	};
	struct run_result r;
	struct elfb e;
	Elf64_Ehdr eh;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	close(fd);
	elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, ELFB_PROBES_VA + 1, "p",
		   "odd", "");
	elfb_build(&e, n.be, eh.e_machine, ET_DYN, &n);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, e.buf, e.len), (ssize_t)e.len);
	close(fd);
	run_tool(&r, "trace", "-n", "1", path, "p:odd");
	unlink(path);
	assert_int_equal(r.status, 1);
	expect_in(r.err, "usdt: trace: warning: skipping the call site of p:odd at 0x400100: semaphore at an odd file offset: the kernel counts only a 2-byte aligned one (ref_ctr_offset)\n");
	expect_in(r.err, "no probes matching p:odd");
	assert_null(strstr(r.err, "another tracer"));
	assert_null(strstr(r.err, "ref_ctr_offset mismatch"));
	run_result_free(&r);
	assert_nothing_left();
}

/* The end of the file image of path's writable PT_LOAD (p_vaddr +
 * p_filesz), a 64-bit file of this host's byte order. */
static uint64_t data_file_end(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC), i;
	uint64_t end = 0;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	for (i = 0; i < eh.e_phnum; i++) {
		assert_int_equal(pread(fd, &ph, sizeof(ph),
				       (off_t)(eh.e_phoff +
					       (uint64_t)i * eh.e_phentsize)),
				 sizeof(ph));
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W))
			end = ph.p_vaddr + ph.p_filesz;
	}
	close(fd);
	assert_true(end != 0);
	return end;
}

#define CLEARED_WHY "its semaphore is in .bss, in the page that holds its segment's last file byte, which the loader clears after the kernel has counted the semaphore there: "

/*
 * bss_sema_target: bss:tail's semaphore is in .bss in the page that holds
 * the data segment's last file byte (checked here on the file), bss:data's
 * in .data. -c's command maps the file after the attach: the kernel
 * counts bss:tail's semaphore at that mmap, the loader then clears it,
 * and the probe would fire 0 times of 3 with no word said. The tool skips
 * it saying why, and traces bss:data's 3; bss:tail alone is no probe
 * (exit 1). With pid -1 it is attached, with a warning for processes
 * started from then on.
 */
static void test_semaphore_cleared(void **state)
{
	uint64_t end = data_file_end(BT), tail, data;
	struct run_result r;

	run_tool(&r, "list", "-j", BT, "bss:tail");
	assert_int_equal(r.status, 0);
	tail = json_hex_field(r.out, "semaphore");
	run_result_free(&r);
	run_tool(&r, "list", "-j", BT, "bss:data");
	assert_int_equal(r.status, 0);
	data = json_hex_field(r.out, "semaphore");
	run_result_free(&r);
	if (!(end % 4096) && tail >= end && data && data + 2 <= end) {
		/* s390x's linker ends the file image on a page (6.1 guest:
		 * 0x5000): bss:tail's semaphore is then in the zero-filled
		 * pages, which the reader refuses, and nothing is cleared. */
		run_tool(&r, "list", BT, "bss:tail");
		expect_in(r.out, "error: semaphore in the zero-filled pages");
		run_result_free(&r);
		run_tool(&r, "trace", "-c", BT " 3", BT, "bss:data");
		assert_int_equal(r.status, 0);
		assert_int_equal(count_str(r.out, " bss:data "), 3);
		run_result_free(&r);
		assert_nothing_left();
		return;
	}
	if (!(end % 4096 && tail >= end && tail < (end | 4095) && data &&
	      data + 2 <= end))
		fail_msg("layout: file image ends at 0x%llx, bss:tail's semaphore at 0x%llx, bss:data's at 0x%llx",
			 (unsigned long long)end, (unsigned long long)tail,
			 (unsigned long long)data);

	run_tool(&r, "trace", "-c", BT " 3", BT, "bss:tail", "bss:data");
	assert_int_equal(r.status, 0);
	expect_in(r.err, "usdt: trace: bss:tail: warning: skipped: " CLEARED_WHY "the command of -c maps the file after the attach and would never see the probe enabled (start it, then trace it with -p)\n");
	assert_int_equal(count_str(r.out, " bss:data "), 3);
	assert_int_equal(count_str(r.out, " bss:tail "), 0);
	expect_in(r.out, "tail 0 data 3\n");
	run_result_free(&r);

	run_tool(&r, "trace", "-c", BT " 3", BT, "bss:tail");
	assert_int_equal(r.status, 1);
	expect_in(r.err, "bss:tail: warning: skipped: " CLEARED_WHY);
	expect_in(r.err, BT ": no probe could be attached");
	run_result_free(&r);

	run_tool(&r, "trace", "-d", "0.1", BT, "bss:tail");
	assert_int_equal(r.status, 0);
	expect_in(r.err, "usdt: trace: bss:tail: warning: " CLEARED_WHY "processes started from now on will never see the probe enabled; running ones do\n");
	run_result_free(&r);
	assert_nothing_left();
}

/* A copy of the target whose header names another architecture: each
 * probe is skipped, saying which, and nothing is traced. */
static void test_other_arch(void **state)
{
	char dir[] = "/tmp/usdt-arch-XXXXXX", path[64], cmd[256];
	struct run_result r;
	Elf64_Ehdr eh;
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/trace_target", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", TT, path);
	assert_int_equal(system(cmd), 0);
	fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	eh.e_machine = eh.e_machine == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	close(fd);
	run_tool(&r, "trace", "-n", "1", path, "tt:one");
	unlink(path);
	rmdir(dir);
	assert_int_equal(r.status, 1);
	expect_in(r.err, eh.e_machine == EM_AARCH64 ?
		  "tt:one: warning: skipped: the file is for aarch64, not for this host's architecture" :
		  "tt:one: warning: skipped: the file is for x86_64, not for this host's architecture");
	expect_in(r.err, "no probe could be attached");
	run_result_free(&r);
	assert_nothing_left();
}

struct error_case {
	const char *args[6];
	const char *message;
};

static void test_errors(void **state)
{
	static const struct error_case cases[] = {
		{ { "trace", "/nonexistent/file", "a:b" },
		  "/nonexistent/file: no such file" },
		{ { "trace", TT, "nosuch:probe" }, "no probes matching" },
		{ { "trace", "-p", "999999999", TT }, "no such process" },
		{ { "trace", "-c", "/nonexistent/cmd", TT, "tt:one" },
		  "cannot run /nonexistent/cmd" },
		{ { "trace", "-n", "0", TT }, "bad count" },
		{ { "trace", "-a" }, "-a needs a pattern that names a provider" },
		{ { "trace", "-a", "*:hit" }, "'*:hit' names no provider" },
		{ { "trace", "-a", "-e", "*", "tt:one" },
		  "'*:*' names no provider" },
		{ { "trace", "-a", TT, "tt:one" }, "-a takes patterns, no TARGET" },
		{ { "trace", "-a", "-p", "1", "tt:one" },
		  "-a traces every process: it goes with neither -p nor -c" },
		{ { "trace", "-a", "--latency", "tt:one", "tt:two" },
		  "-a does not go with --latency" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *argv[8] = { USDT_BIN };
		struct run_result r;
		int k;

		for (k = 0; k < 6 && cases[i].args[k]; k++)
			argv[k + 1] = cases[i].args[k];
		run_argv(argv, &r);
		assert_int_not_equal(r.status, 0);
		if (!strstr(r.err, cases[i].message))
			fail_msg("'%s' lacks '%s'", r.err, cases[i].message);
		run_result_free(&r);
	}
	assert_nothing_left();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probes_of_binary),
		cmocka_unit_test(test_without_kernel_btf),
		cmocka_unit_test(test_probe_of_library),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_pid),
		cmocka_unit_test(test_pid_namespace),
		cmocka_unit_test(test_chrooted_process),
		cmocka_unit_test(test_chrooted_links_stay_inside),
		cmocka_unit_test(test_attached_line),
		cmocka_unit_test(test_pattern_words),
		cmocka_unit_test(test_several_formats),
		cmocka_unit_test(test_several_targets),
		cmocka_unit_test(test_dlopen_later),
		cmocka_unit_test(test_file_replaced),
		cmocka_unit_test(test_watch_forgets),
		cmocka_unit_test(test_all_processes),
		cmocka_unit_test(test_rows_per_name),
		cmocka_unit_test(test_count_by),
		cmocka_unit_test(test_latency_by),
		cmocka_unit_test(test_ustack),
		cmocka_unit_test(test_ustack_deleted),
		cmocka_unit_test(test_cold_string),
		cmocka_unit_test(test_fault_in),
		cmocka_unit_test(test_fault_in_own_user_only),
		cmocka_unit_test(test_buffer_size),
		cmocka_unit_test(test_pid_errors),
		cmocka_unit_test(test_pid_not_ours),
		cmocka_unit_test(test_semaphore_clash),
		cmocka_unit_test(test_semaphore_odd),
		cmocka_unit_test(test_semaphore_cleared),
		cmocka_unit_test(test_other_arch),
		cmocka_unit_test(test_errors),
	};

	usdt_test_require_kernel("test_trace");
	each_trace_prog(note_prior);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
