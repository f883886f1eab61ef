// SPDX-License-Identifier: BSD-2-Clause
/*
 * Preempted uprobe programs (docs/library.md, "Preemptible kernels").
 * Three processes on one CPU fire a 6-, a 4- and a 1-argument probe in
 * turn for 2 s, each attached by pid, once through a uprobe_multi link
 * where the kernel has them and once through perf uprobes. The kernel
 * runs uprobe programs with migration, not preemption, disabled: where it
 * preempts (PREEMPT_LAZY, as Debian sid's 7.x kernels), another task can
 * run the same program on that CPU before the first resumes, and where
 * the JIT gives a frame of 64 bytes or more (rounded up to 16) a per-CPU
 * private stack (x86_64 6.13, arm64 6.17), both runs use it. The programs
 * whose frames keep to 48 bytes (bpf_usdt_arg() of 1, BPF_USDT() of 4)
 * read every hit's arguments right, however often they are preempted,
 * and every program counts every hit. What BPF_USDT() of 6 read is
 * printed, not asserted: its values take 96 bytes of the program's frame,
 * which the kernel's hazard reaches (docs/library.md).
 *
 * `usdt trace --count --by arg0,arg5` of the 6-argument probe, filtered
 * to the children's pids, while they fire it: every key it counts is one
 * child's pid twice (a key built by two runs at once would mix them), and
 * the hits it counted and those it said it skipped add up to the hits the
 * children fired (or more, where another run of this test skips too).
 */
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <sys/sdt.h>
#include <sys/wait.h>

#include "test_util.h"
#include "trace_test.h"
#include "usdt.h"
#include "kernel/kfeatures.h"
#include "preempt.skel.h"

#define NCHILD 3
#define SECS 2

/* Wait for the go on fd, then fire both probes for SECS seconds; the
 * rounds fired, written to out when it is not -1. */
static void child(int fd, int out)
{
	long pid = (long)getpid();
	unsigned long long n = 0;
	time_t end;
	char go;

	if (read(fd, &go, 1) != 1)
		_exit(1);
	end = time(NULL) + SECS;
	while (time(NULL) < end) {
		STAP_PROBE6(pre, big, pid, pid, pid, pid, pid, pid);
		STAP_PROBE4(pre, four, pid, pid, pid, pid);
		STAP_PROBE1(pre, small, pid);
		n++;
	}
	if (out >= 0 && write(out, &n, sizeof(n)) != sizeof(n))
		_exit(1);
	_exit(0);
}

/* The first CPU this process may run on. */
static int first_cpu(void)
{
	cpu_set_t set;
	int cpu = 0;

	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &set))
		cpu++;
	return cpu;
}

/* NCHILD children on one CPU, waiting for the go on *go; each writes
 * the rounds it fired to out (or not: -1). */
static void spawn_children(pid_t *kids, int *go, int out)
{
	int p[2], i, cpu = first_cpu();
	cpu_set_t set;

	assert_int_equal(pipe(p), 0);
	for (i = 0; i < NCHILD; i++) {
		kids[i] = fork();
		assert_true(kids[i] >= 0);
		if (!kids[i]) {
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				_exit(1);
			close(p[1]);
			child(p[0], out);
		}
	}
	close(p[0]);
	*go = p[1];
}

/* NCHILD children on one CPU, both programs attached to each by pid
 * before it starts. */
static void fire_all(struct preempt *skel, struct usdt_manager *man)
{
	static const char *const probes[] = { "big", "four", "small" };
	struct usdt_link *links[3 * NCHILD];
	struct bpf_program *progs[3] = { skel->progs.big, skel->progs.four,
					 skel->progs.small };
	pid_t kids[NCHILD];
	int go, i, st;

	spawn_children(kids, &go, -1);
	for (i = 0; i < 3 * NCHILD; i++) {
		links[i] = usdt_manager__attach(man, progs[i % 3], kids[i / 3],
						"/proc/self/exe", "pre",
						probes[i % 3], NULL);
		assert_non_null(links[i]);
	}
	assert_int_equal(write(go, "gggggggg", NCHILD), NCHILD);
	close(go);
	for (i = 0; i < NCHILD; i++) {
		assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
		assert_int_equal(st, 0);
	}
	for (i = 0; i < 3 * NCHILD; i++)
		assert_int_equal(usdt_link__destroy(links[i]), 0);
}

static void run(bool perf)
{
	USDT_OPTS(usdt_manager_opts, mo, .no_uprobe_multi = perf);
	struct preempt *skel = preempt__open();
	struct usdt_manager *man;

	assert_non_null(skel);
	man = usdt_manager__new(skel->obj, &mo);
	assert_non_null(man);
	assert_int_equal(preempt__load(skel), 0);
	fire_all(skel, man);
	printf("preempt: %s, %d processes on one CPU for %d s, hits / preempted / read wrong: bpf_usdt_arg() of 1 %llu / %llu / %llu; BPF_USDT() of 4 %llu / %llu / %llu; BPF_USDT() of 6 %llu / %llu / %llu\n",
	       perf ? "perf uprobes" : "uprobe_multi", NCHILD, SECS,
	       (unsigned long long)skel->bss->small_hits,
	       (unsigned long long)skel->bss->small_preempted,
	       (unsigned long long)skel->bss->small_args_bad,
	       (unsigned long long)skel->bss->four_hits,
	       (unsigned long long)skel->bss->four_preempted,
	       (unsigned long long)skel->bss->four_args_bad,
	       (unsigned long long)skel->bss->big_hits,
	       (unsigned long long)skel->bss->big_preempted,
	       (unsigned long long)skel->bss->big_args_bad);
	assert_true(skel->bss->small_hits > 0);
	assert_int_equal(skel->bss->big_hits, skel->bss->small_hits);
	assert_int_equal(skel->bss->four_hits, skel->bss->small_hits);
	assert_int_equal(skel->bss->small_args_bad, 0);
	assert_int_equal(skel->bss->four_args_bad, 0);
	usdt_manager__free(man);
	preempt__destroy(skel);
}

/* The tool's stderr into its stdout's pipe. */
static void stderr_to_stdout(void *arg)
{
	(void)arg;
	dup2(1, 2);
}

/* What fd has within ms, appended to buf (len of cap bytes used); false
 * at its end. */
static bool read_more(int fd, char *buf, size_t *len, size_t cap, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, ms) <= 0)
		return true;
	n = read(fd, buf + *len, cap - 1 - *len);
	if (n <= 0)
		return n < 0 && errno == EINTR;
	*len += (size_t)n;
	buf[*len] = '\0';
	return true;
}

/* Each key of the tool's table (its lines " COUNT pre:big ARG0 ARG5") is
 * one child's pid twice: the hits counted. */
static unsigned long long keys_whole(const char *out, const pid_t *kids)
{
	unsigned long long n, all = 0;
	const char *line = out;
	long a, b;
	int i, whole;

	while ((line = strstr(line, " pre:big "))) {
		while (line > out && line[-1] != '\n')
			line--;
		if (sscanf(line, "%llu pre:big %ld %ld", &n, &a, &b) != 3)
			fail_msg("a line the test cannot read in:\n%s", out);
		for (i = 0, whole = 0; i < NCHILD; i++)
			whole |= a == kids[i] && b == kids[i];
		if (!whole)
			fail_msg("a key of two runs' values in:\n%s", out);
		all += n;
		line = strchr(line, '\n') ? strchr(line, '\n') : line + 1;
	}
	return all;
}

/* The hits the tool said it skipped. */
static unsigned long long hits_skipped(const char *out)
{
	const char *p = strstr(out, " hits skipped (");
	unsigned long long n = 0;

	if (!p)
		return 0;
	while (p > out && p[-1] != ' ')
		p--;
	assert_int_equal(sscanf(p, "%llu", &n), 1);
	return n;
}

/* The children's rounds, each child's from res. */
static unsigned long long rounds_fired(const pid_t *kids, int res)
{
	unsigned long long n, all = 0;
	int i, st;

	for (i = 0; i < NCHILD; i++) {
		assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
		assert_int_equal(st, 0);
		assert_int_equal(read(res, &n, sizeof(n)), sizeof(n));
		all += n;
	}
	return all;
}

static void test_tool_keys_whole(void **state)
{
	char exe[PATH_MAX], *buf;
	char filter[96];
	const char *argv[] = { USDT_BIN,    "trace",	"--count", "--by",
			       "arg0,arg5", "--filter", filter,	   exe,
			       "pre:big",   NULL };
	size_t len = 0, cap = 1 << 16;
	pid_t tool, kids[NCHILD];
	int fd, go, res[2], st;
	unsigned long long fired, counted, skipped;
	ssize_t k;
	double end;

	(void)state;
	k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(k > 0);
	exe[k] = '\0';
	buf = calloc(1, cap);
	assert_non_null(buf);
	assert_int_equal(pipe(res), 0);
	spawn_children(kids, &go, res[1]);
	close(res[1]);
	/* Our children only: another run of this test may fire too. */
	snprintf(filter, sizeof(filter), "pid == %d || pid == %d || pid == %d",
		 (int)kids[0], (int)kids[1], (int)kids[2]);
	tool = spawn_out_setup(argv, &fd, stderr_to_stdout, NULL);
	end = now_s() + 120;
	while (!strstr(buf, "usdt: tracing") && now_s() < end &&
	       read_more(fd, buf, &len, cap, 1000))
		;
	if (!strstr(buf, "usdt: tracing"))
		fail_msg("the tool did not start:\n%s", buf);
	assert_int_equal(write(go, "gggggggg", NCHILD), NCHILD);
	close(go);
	fired = rounds_fired(kids, res[0]);
	close(res[0]);
	kill(tool, SIGINT);
	while (read_more(fd, buf, &len, cap, 1000))
		;
	close(fd);
	assert_int_equal(waitpid(tool, &st, 0), tool);
	if (st)
		fail_msg("status %d:\n%s", st, buf);
	counted = keys_whole(buf, kids);
	skipped = hits_skipped(buf);
	printf("preempt: usdt trace --count --by arg0,arg5, %d processes on one CPU for %d s: %llu hits fired, %llu counted, %llu skipped\n",
	       NCHILD, SECS, fired, counted, skipped);
	/* Skips are counted before the filter: another run of this test
	 * on the machine may add its own. */
	assert_true(counted <= fired);
	assert_true(counted + skipped >= fired);
	free(buf);
}

static void test_small_frames_read_right(void **state)
{
	(void)state;
	if (usdt__features()->uprobe_multi)
		run(false);
	else
		printf("preempt: no uprobe_multi links in this kernel: perf uprobes only\n");
	run(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_frames_read_right),
		cmocka_unit_test(test_tool_keys_whole),
	};

	usdt_test_require_kernel("kernel/test_preempt");
	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("preempt", tests, NULL, NULL);
}
