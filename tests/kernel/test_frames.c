// SPDX-License-Identifier: BSD-2-Clause
/*
 * The frames of `usdt trace`'s program, as the verifier counts them.
 *
 * A uprobe program runs with migration disabled, not preemption, and with
 * no guard against a second run of it on the same CPU. Where the JIT gives
 * a function a per-CPU private stack (x86_64 from 6.13, arm64 from 6.17:
 * every function whose frame, rounded up to 16 bytes, is 64 bytes or
 * more), a preemptible kernel (PREEMPT_LAZY, as Debian sid's; full) lets a
 * second task's run write over a preempted run's frame, the pointers it
 * spilled there too (docs/library.md, "Preemptible kernels"), and a
 * --fault-in run that sleeps in a fault lets any task do so. So every
 * function of the tool's program keeps to 48 bytes of stack and runs on
 * its task's own kernel stack. Dead code differs per mode, so the program
 * is loaded in each, with every option that adds code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/btf.h>

#include "test_util.h"
#include "usdt.h"
#include "trace_event.h"
#include "usdt_trace.skel.h"

/* The largest frame that the JIT keeps on the task's stack. */
#define FRAME_MAX 48

static char log_buf[1 << 16];

/* An empty BTF in a memfd, for a kernel that has none (as the tool does:
 * tools/trace_load.c), so that libbpf leaves the CO-RE relocations of the
 * VMA lookup for the verifier never to reach. */
static int empty_btf_fd(void)
{
	struct btf *btf = btf__new_empty();
	const void *raw;
	__u32 size = 0;
	int fd;

	assert_non_null(btf);
	raw = btf__raw_data(btf, &size);
	assert_non_null(raw);
	fd = memfd_create("test-frames-btf", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, raw, size), (ssize_t)size);
	btf__free(btf);
	return fd;
}

static bool kernel_has_btf(void)
{
	struct btf *btf = btf__load_vmlinux_btf();

	btf__free(btf);
	return btf != NULL;
}

struct config {
	const char *what;
	enum trace_mode mode;
	bool sleepable; /* fault_in */
	bool sites;	/* use_sites: the VMA lookup */
};

/* Every option of a mode that adds code to it. */
static void configure(struct usdt_trace *skel, const struct config *c)
{
	struct trace_filter f = { .term_cnt = 3 };
	struct trace_by_part by[TRACE_BY_PARTS] = {
		{ .arg = 0 },
		{ .arg = 1, .str = 1 },
		{ .arg = 2, .str = 2, .len_arg = 4 },
		{ .arg = 4 },
	};

	f.terms[0] = (struct trace_term){ .operand = 1, .op = TRACE_SEQ };
	f.terms[1] = (struct trace_term){ .operand = 2,
					  .op = TRACE_SNE,
					  .len_arg = 4,
					  .value = 3,
					  .group_end = 1 };
	f.terms[2] = (struct trace_term){ .operand = TRACE_OPD_PID,
					  .op = TRACE_GT,
					  .group_end = 1 };
	memcpy((void *)&skel->rodata->filter, &f, sizeof(f));
	skel->rodata->mode = c->mode;
	skel->rodata->ustack = 1;
	skel->rodata->use_sites = c->sites;
	skel->rodata->fault_in = c->sleepable;
	skel->rodata->target_tgid = 1;
	skel->rodata->pidns_ino = 1;
	skel->rodata->by_pid = 1;
	skel->rodata->keep_sum = 1;
	skel->rodata->slower_ns = 1;
	skel->rodata->lat_unit = 1000;
	skel->rodata->sum_arg = 3;
	skel->rodata->by_cnt = c->mode == TRACE_HIST ? 0 : TRACE_BY_PARTS;
	/* Every argument read before the filter and after it (the tool
	 * names only those its options use). */
	skel->rodata->args_first = (1u << TRACE_MAX_ARGS) - 1;
	skel->rodata->args_then = (1u << TRACE_MAX_ARGS) - 1;
	memcpy((void *)skel->rodata->by_parts, by, sizeof(by));
}

/* Load the program so; the verifier's stack depth line into log_buf.
 * 0, or the load's error. */
static int load(const struct config *c, int btf_fd)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct usdt_manager *man;
	struct usdt_trace *skel;
	struct bpf_program *prog;
	char path[64];
	int err;

	if (btf_fd >= 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", btf_fd);
		oo.btf_custom_path = path;
	}
	skel = usdt_trace__open_opts(&oo);
	assert_non_null(skel);
	configure(skel, c);
	prog = skel->progs.usdt_trace;
	if (c->sleepable)
		assert_int_equal(bpf_program__set_flags(prog,
							bpf_program__flags(
								prog) |
								BPF_F_SLEEPABLE),
				 0);
	log_buf[0] = '\0';
	assert_int_equal(bpf_program__set_log_buf(prog, log_buf,
						  sizeof(log_buf)),
			 0);
	assert_int_equal(bpf_program__set_log_level(prog, 4), 0);
	man = usdt_manager__new(skel->obj, NULL);
	assert_non_null(man);
	err = usdt_trace__load(skel);
	usdt_manager__free(man);
	usdt_trace__destroy(skel);
	return err;
}

/* The largest function's depth from "stack depth A+B+...", each one over
 * FRAME_MAX said. */
static int largest_frame(const char *what)
{
	const char *p = strstr(log_buf, "stack depth ");
	int n = 0, worst = 0;
	long d;
	char *end;

	assert_non_null(p);
	p += strlen("stack depth ");
	do {
		d = strtol(p, &end, 10);
		assert_true(end != p);
		if (d > FRAME_MAX)
			fprintf(stderr,
				"%s: function %d has a frame of %ld bytes\n",
				what, n, d);
		worst = d > worst ? (int)d : worst;
		n++;
		p = end + 1;
	} while (*end == '+');
	p = strstr(log_buf, "processed ");
	printf("frames: %s: %d functions, the largest %d bytes, %ld insns "
	       "verified\n",
	       what, n, worst, p ? strtol(p + strlen("processed "), NULL, 10) : -1L);
	return worst;
}

static void test_every_frame_is_small(void **state)
{
	static const struct config configs[] = {
		{ "events", TRACE_EVENTS, false, true },
		{ "events --fault-in", TRACE_EVENTS, true, false },
		{ "count --by", TRACE_COUNT, false, false },
		{ "hist", TRACE_HIST, false, false },
		{ "latency --by", TRACE_LATENCY, false, false },
	};
	bool btf = kernel_has_btf();
	int btf_fd = btf ? -1 : empty_btf_fd();
	int err, worst = 0, d;
	struct config c;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		c = configs[i];
		c.sites = c.sites && btf;
		err = load(&c, btf_fd);
		/* As the tool does: a kernel with no JIT takes no callback
		 * (the VMA lookup), and one older than 6.0 no sleepable
		 * uprobe program. */
		if (err && c.sites) {
			printf("frames: %s: no VMA lookup here (%d)\n", c.what,
			       err);
			c.sites = false;
			err = load(&c, btf_fd);
		}
		if (err && c.sleepable) {
			printf("frames: %s: not loadable here (%d)\n", c.what,
			       err);
			continue;
		}
		if (err)
			fprintf(stderr, "frames: %s: the verifier said:\n%s\n",
				c.what,
				log_buf + (strlen(log_buf) > 4000 ?
						   strlen(log_buf) - 4000 :
						   0));
		assert_int_equal(err, 0);
		d = largest_frame(c.what);
		worst = d > worst ? d : worst;
	}
	if (btf_fd >= 0)
		close(btf_fd);
	assert_true(worst <= FRAME_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_frame_is_small),
	};

	usdt_test_require_kernel("test_frames");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
