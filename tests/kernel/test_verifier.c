// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the BPF side costs the verifier. Every program shape of
 * tests/kernel/shapes.bpf.c, built at -mcpu=v1, v2 and v3 (and v4 where
 * the BPF compiler has it, and without __TARGET_ARCH_xxx), by clang or
 * by GCC's BPF backend (make BPF_CC=bpf-gcc), loads on this kernel within a fixed budget of
 * verified instructions. Loading is correctness: a reader whose cost
 * multiplies with the caller's branches reaches the kernel's 1M limit and
 * the user's program does not load at all. Each function of the header in
 * a shape's chain keeps to 48 bytes of stack, from the same load's
 * statistics: a bigger one gets a per-CPU private stack on some kernels,
 * which a preempted run shares (docs/library.md).
 *
 * The budgets were half of what libbpf 1.7's header costs for the same
 * shape at -mcpu=v1 on this kernel (make bench measures both side by
 * side) until the spec head (layout 7): a spec comes from the head or
 * from a chunk, two maps, and the verifier walks what follows the lookup
 * once for each (checked3 376 to 521 at v1, usdt12 764 to 1,250: 0.67x
 * and 0.53x libbpf's; GCC's BPF backend: checked3 540-562). Moving that
 * behind a global function's pointer argument, verified once, took the
 * cost back down on 6.18, but on 6.1 the extra frame put BPF_USDT()'s
 * stack past 512 bytes (arm64) and the argument needed initialised memory
 * (x86_64). BPF_USDT() then stopped copying the context (a frame of 216
 * bytes on x86_64, which a preempted run shares where the JIT gives it a
 * private stack: docs/library.md) and reads each register from the
 * context itself: usdt12 1,465 at v1, 0.62x libbpf's; then 1,071 (0.45x)
 * once the spec lookup moved into the static function with the loop,
 * built by clang 14 (bpf-gcc 16: 1,052; clang 21: 1,523, 0.64x).
 * Twelve checked calls get
 * 30,000 at every -mcpu (libbpf 1.7:
 * 38,794 at v1, past 1M at v3). That one guards bpf_usdt_arg()'s branch
 * hint: without it, clang turns the twelve checks into selects that test
 * each return code twice, and at -mcpu=v1/v2 the verifier tells every
 * combination of failures apart in the caller (~36,900). The counts are
 * printed.
 */
#include <stdio.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "test_util.h"
#include "shapes.h"
#include "usdt.h"

#define OBJ_DIR USDT_OBJDIR "/tests/kernel/"

static const struct {
	const char *prog;
	unsigned int budget;
} shapes[] = {
	/* libbpf 1.7 at v1 / v3 in the comments. */
	{ "checked3", 640 },		/* 777 / 609 */
	{ "checked12", 30000 },		/* 38,794 / >1M */
	{ "usdt12", 1650 },		/* 2,376 / 2,223 */
	{ "loop", 2500 },		/* 4,946 / 4,541 */
};

/* With the reader verified per call (libbpf's way), each shape still
 * loads well under the 1M limit. BPF_USDT() of twelve arguments costs
 * the most: each argument's window and general paths are walked at every
 * call (24,431 before windows; with them 29,388 built by clang 14 and
 * 32,238 by clang 21 on 6.18). The spec head (layout 7) would double
 * what follows the spec lookup (57,047 by clang 14): a manager gives the
 * head up where the reader is verified per call. */
#define PER_CALL_BUDGET 50000

static unsigned int verified_insns(const struct bpf_program *p,
				   unsigned int *xlated)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(p), &info,
						&len), 0);
	*xlated = info.xlated_prog_len / 8;
	return info.verified_insns;
}

/*
 * The budgets were measured with 6.12 and 6.18 verifiers. Older ones
 * explore these shapes differently (6.1 on x86_64: the loop shape costs
 * 14,049 at v1 and 60,356 at v3, while twelve checks cost 858; arm64
 * 6.1 verifying the reader per call: 204,591 for the loop, before the
 * spec head doubled what follows the spec lookup), so there the
 * test only guards against the 1M limit, with room to spare.
 */
#define OLD_KERNEL_BUDGET 800000

static bool kernel_before_6_12(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return false;
	return major < 6 || (major == 6 && minor < 12);
}

/* The largest frame the JIT keeps on the task's stack: from 64 bytes
 * (rounded up to 16) a function gets a per-CPU private stack, which a
 * preempted run shares (docs/library.md, "Preemptible kernels"). */
#define FRAME_MAX 48

static char logs[sizeof(shapes) / sizeof(shapes[0])][16384];

/* The header's functions in prog's chain, from the verifier's "stack depth
 * MAIN+F1+F2...", each at most FRAME_MAX (the program's own frame is the
 * shape's); the largest. */
static int header_frames(const char *log, const char *variant,
			 const char *prog)
{
	const char *p = strstr(log, "stack depth ");
	long d, worst = 0;
	char *end;

	if (!p)
		fail_msg("%s %s: no stack depth in the verifier's log", variant,
			 prog);
	p = strchr(p, '+'); /* past the program's own */
	while (p && *p == '+') {
		d = strtol(p + 1, &end, 10);
		if (d > FRAME_MAX)
			fail_msg("%s %s: a function of the header has a frame of %ld bytes",
				 variant, prog, d);
		worst = d > worst ? d : worst;
		p = end;
	}
	return (int)worst;
}

/* Load one build of the shapes, with a manager as a user would, and check
 * each program against its budget, and the header's frames. */
static void check_build(const char *variant)
{
	struct usdt_manager *man;
	struct bpf_object *obj = shapes_open(variant, &man);
	unsigned int n, xlated, budget;
	/* Verified per call, the reader costs what libbpf's does, in every
	 * shape: one budget for all. */
	bool per_call;
	size_t i;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct bpf_program *p =
			bpf_object__find_program_by_name(obj, shapes[i].prog);

		assert_non_null(p);
		logs[i][0] = '\0';
		assert_int_equal(bpf_program__set_log_buf(p, logs[i],
							  sizeof(logs[i])),
				 0);
		assert_int_equal(bpf_program__set_log_level(p, 4), 0);
	}
	assert_int_equal(bpf_object__load(obj), 0);
	per_call = shapes_per_call(obj);
	if (per_call) {
		printf("%s: the reader is verified per call here (the kernel does not take this build's context type, or has no BTF)\n",
		       variant);
		/* The manager gave the spec head up (src/libbpf/object.c). */
		assert_int_equal(bpf_map__max_entries(bpf_object__find_map_by_name(
					 obj, "usdt__spec_head")),
				 1);
	}
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct bpf_program *p =
			bpf_object__find_program_by_name(obj, shapes[i].prog);

		assert_non_null(p);
		n = verified_insns(p, &xlated);
		budget = per_call ? PER_CALL_BUDGET : shapes[i].budget;
#ifndef __x86_64__
		/* The budgets are x86_64's. The reader's register switch
		 * has a case per pt_regs register: arm64 and riscv64 have
		 * about twice x86_64's, s390x 16 plus the PSW. */
		budget += budget / 4;
#endif
		if (kernel_before_6_12())
			budget = OLD_KERNEL_BUDGET;
		printf("%-8s %-10s %7u verified insns (budget %u), %u xlated, header frames %d bytes at most\n",
		       variant, shapes[i].prog, n, budget, xlated,
		       header_frames(logs[i], variant, shapes[i].prog));
		/* 0: a kernel before 5.16 does not count. */
		if (n && n > budget)
			fail_msg("%s %s: %u verified instructions, budget %u",
				 variant, shapes[i].prog, n, budget);
	}
	usdt_manager__free(man);
	bpf_object__close(obj);
}

static void test_v1(void **state)
{
	check_build("v1");
}

static void test_v2(void **state)
{
	check_build("v2");
}

static void test_v3(void **state)
{
	check_build("v3");
}

#ifdef USDT_SHAPES_V4
/* v4's instructions (sign-extending loads and moves, 32-bit jumps, bswap)
 * came with Linux 6.6. */
static void test_v4(void **state)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	assert_int_equal(uname(&u), 0);
	sscanf(u.release, "%u.%u", &major, &minor);
	if (major < 6 || (major == 6 && minor < 6)) {
		printf("SKIP: -mcpu=v4 needs Linux 6.6, this is %s\n", u.release);
		skip();
	}
	check_build("v4");
}
#endif

static void test_no_target_arch(void **state)
{
	check_build("noarch");
}

/* The function info records of obj's first program, loaded. */
static __u32 func_info_cnt(struct bpf_object *obj)
{
	__u32 n;

	(void)usdt_test_func_linkage(bpf_object__next_program(obj, NULL),
				     "usdt__arg", &n);
	return n;
}

/*
 * Built with a context type the kernel does not take for a global
 * function's (what a vmlinux.h of another arch gives): alone, it loads
 * with a copy of its BTF in which the reader is static, made by libusdt's
 * section handler; with a manager, the reader is made static in the
 * object's BTF. Either way it is verified per call, the program keeps its
 * function info, and every shape loads, the twelve checks too (libbpf's
 * header: past 1M). The copy is closed once its object is.
 */
static void test_foreign_ctx_type(void **state)
{
	const char *path = OBJ_DIR "shapes-wrongctx.bpf.o";
	libbpf_print_fn_t old_print;
	struct usdt_manager *man;
	struct bpf_object *obj;
	int fds = 0, round;

	/* Without the handler the kernel refuses it. */
	for (round = 0; round < 3; round++) {
		obj = bpf_object__open_file(path, NULL);
		assert_non_null(obj);
		old_print = libbpf_set_print(NULL);
		assert_int_equal(bpf_object__load(obj), 0);
		libbpf_set_print(old_print);
		assert_true(shapes_per_call(obj));
		assert_true(func_info_cnt(obj) > 1);
		bpf_object__close(obj);
		/* The last object's copy may stay open until the next load;
		 * more would be a leak. */
		if (round == 1)
			fds = usdt_test_count_fds();
		else if (round == 2)
			assert_int_equal(usdt_test_count_fds(), fds);
	}

	obj = bpf_object__open_file(path, NULL);
	assert_non_null(obj);
	man = usdt_manager__new(obj, NULL);
	assert_non_null(man);
	assert_int_equal(bpf_object__load(obj), 0);
	assert_true(shapes_per_call(obj));
	{
		const struct btf *btf = bpf_object__btf(obj);
		int id = btf__find_by_name_kind(btf, "usdt__arg",
						BTF_KIND_FUNC);

		assert_true(id > 0);
		assert_int_equal(btf_vlen(btf__type_by_id(btf, id)),
				 BTF_FUNC_STATIC);
	}
	assert_true(func_info_cnt(obj) > 1);
	usdt_manager__free(man);
	bpf_object__close(obj);
	check_build("wrongctx");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_v3),
#ifdef USDT_SHAPES_V4
		cmocka_unit_test(test_v4),
#endif
		cmocka_unit_test(test_no_target_arch),
		cmocka_unit_test(test_foreign_ctx_type),
	};

	usdt_test_require_kernel("kernel/test_verifier");
	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("verifier", tests, NULL, NULL);
}
