// SPDX-License-Identifier: BSD-2-Clause
/*
 * Preempted uprobe programs (docs/library.md, "Preemptible kernels").
 * Three processes on one CPU fire a 6-argument probe and a 1-argument
 * probe in turn for 2 s, each attached by pid, once through a uprobe_multi
 * link where the kernel has them and once through perf uprobes. The kernel
 * runs uprobe programs with migration, not preemption, disabled: where it
 * preempts (PREEMPT_LAZY, as Debian sid's 7.x kernels), another task can
 * run the same program on that CPU before the first resumes, and where
 * the JIT gives a frame of 64 bytes or more a per-CPU private stack
 * (x86_64 6.13, arm64 6.17), both runs use it. The program whose frames
 * stay under 64 bytes reads every hit's argument right, however often it
 * is preempted, and both programs count every hit. What BPF_USDT() read is
 * printed, not asserted: its values (in the program's frame) and its
 * copy of the context (in usdt__args()'s) are in frames over 64 bytes,
 * which the kernel's hazard reaches (docs/library.md).
 */
#include <sched.h>
#include <time.h>
#include <sys/sdt.h>
#include <sys/wait.h>

#include "test_util.h"
#include "usdt.h"
#include "kernel/kfeatures.h"
#include "preempt.skel.h"

#define NCHILD 3
#define SECS 2

/* Wait for the go on fd, then fire both probes for SECS seconds. */
static void child(int fd)
{
	long pid = (long)getpid();
	time_t end;
	char go;

	if (read(fd, &go, 1) != 1)
		_exit(1);
	end = time(NULL) + SECS;
	while (time(NULL) < end) {
		STAP_PROBE6(pre, big, pid, pid, pid, pid, pid, pid);
		STAP_PROBE1(pre, small, pid);
	}
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

/* NCHILD children on one CPU, both programs attached to each by pid
 * before it starts. */
static void fire_all(struct preempt *skel, struct usdt_manager *man)
{
	struct usdt_link *links[2 * NCHILD];
	int p[2], i, st, cpu = first_cpu();
	pid_t kids[NCHILD];
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
			child(p[0]);
		}
	}
	close(p[0]);
	for (i = 0; i < NCHILD; i++) {
		links[2 * i] = usdt_manager__attach(man, skel->progs.big,
						    kids[i], "/proc/self/exe",
						    "pre", "big", NULL);
		links[2 * i + 1] = usdt_manager__attach(
			man, skel->progs.small, kids[i], "/proc/self/exe",
			"pre", "small", NULL);
		assert_non_null(links[2 * i]);
		assert_non_null(links[2 * i + 1]);
	}
	assert_int_equal(write(p[1], "gggggggg", NCHILD), NCHILD);
	close(p[1]);
	for (i = 0; i < NCHILD; i++) {
		assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
		assert_int_equal(st, 0);
	}
	for (i = 0; i < 2 * NCHILD; i++)
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
	printf("preempt: %s, %d processes on one CPU for %d s: 1 argument, frames under 64 bytes: %llu hits, %llu preempted, %llu read wrong; BPF_USDT() of 6: %llu hits, %llu preempted, %llu read wrong\n",
	       perf ? "perf uprobes" : "uprobe_multi", NCHILD, SECS,
	       (unsigned long long)skel->bss->small_hits,
	       (unsigned long long)skel->bss->small_preempted,
	       (unsigned long long)skel->bss->small_args_bad,
	       (unsigned long long)skel->bss->big_hits,
	       (unsigned long long)skel->bss->big_preempted,
	       (unsigned long long)skel->bss->big_args_bad);
	assert_true(skel->bss->small_hits > 0);
	assert_int_equal(skel->bss->big_hits, skel->bss->small_hits);
	assert_int_equal(skel->bss->small_args_bad, 0);
	usdt_manager__free(man);
	preempt__destroy(skel);
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
	};

	usdt_test_require_kernel("kernel/test_preempt");
	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("preempt", tests, NULL, NULL);
}
