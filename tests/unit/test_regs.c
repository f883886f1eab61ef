// SPDX-License-Identifier: BSD-2-Clause
/*
 * The parsers' register tables are constants that do not depend on the
 * host. Where the host is the architecture itself, check them against the
 * host's own headers: every general-purpose register's offset, the PC's,
 * and the size of the BPF context. Elsewhere the test only checks that
 * each table is self-consistent with the arch's ops.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#if defined(__x86_64__)
#include <asm/ptrace.h>		/* struct pt_regs, the BPF context */
#include <sys/user.h>		/* struct user_regs_struct */
#elif defined(__aarch64__) || defined(__s390x__) || \
	(defined(__riscv) && __riscv_xlen == 64)
#include <asm/ptrace.h>
#include <asm/bpf_perf_event.h>	/* bpf_user_pt_regs_t */
#endif

#include "base/internal.h"
#include "reader/arch_ops.h"

struct host_reg {
	const char *name;
	size_t off;
	size_t width;
};

#define R(name, type, field, width) { name, offsetof(type, field), width }

/* Not every host uses each of these helpers, and some hosts none. */
__attribute__((unused))
static void check_reg(const struct usdt__arch_ops *ops, const char *name,
		      size_t want_off, size_t want_width)
{
	int w = 0, off;

	off = ops->reg_off(name, strlen(name), &w);
	if (off < 0 || (size_t)off != want_off || (size_t)w != want_width)
		fail_msg("%s: %s at %d (width %d), host says %zu (%zu)",
			 ops->name, name, off, w, want_off, want_width);
}

__attribute__((unused))
static void check_host_regs(const struct usdt__arch_ops *ops,
			    const struct host_reg *regs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		check_reg(ops, regs[i].name, regs[i].off, regs[i].width);
}

/*
 * Every numbered register prefix0..prefix<n-1> against the host's array
 * of them, which starts at array_off with elements of elem bytes.
 */
__attribute__((unused))
static void check_numbered(const struct usdt__arch_ops *ops,
			   const char *prefix, int n, size_t array_off,
			   size_t elem, size_t width)
{
	char name[16];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		check_reg(ops, name, array_off + (size_t)i * elem, width);
	}
}

#if defined(__x86_64__)
#define PR(name, field, width) R(name, struct pt_regs, field, width)
#define GPR4(q, d, w, b, field)                                             \
	PR(q, field, 8), PR(d, field, 4), PR(w, field, 2), PR(b, field, 1)

static const struct host_reg host_regs[] = {
	GPR4("rax", "eax", "ax", "al", rax),
	GPR4("rbx", "ebx", "bx", "bl", rbx),
	GPR4("rcx", "ecx", "cx", "cl", rcx),
	GPR4("rdx", "edx", "dx", "dl", rdx),
	GPR4("rsi", "esi", "si", "sil", rsi),
	GPR4("rdi", "edi", "di", "dil", rdi),
	GPR4("rbp", "ebp", "bp", "bpl", rbp),
	GPR4("rsp", "esp", "sp", "spl", rsp),
	GPR4("r8", "r8d", "r8w", "r8b", r8),
	GPR4("r9", "r9d", "r9w", "r9b", r9),
	GPR4("r10", "r10d", "r10w", "r10b", r10),
	GPR4("r11", "r11d", "r11w", "r11b", r11),
	GPR4("r12", "r12d", "r12w", "r12b", r12),
	GPR4("r13", "r13d", "r13w", "r13b", r13),
	GPR4("r14", "r14d", "r14w", "r14b", r14),
	GPR4("r15", "r15d", "r15w", "r15b", r15),
	PR("rip", rip, 8),
};

/* uapi struct pt_regs is the BPF context (src/reader/arch/x86_64.c checks the
 * table and usdt_spec.h against it); user_regs_struct (ptrace) has the
 * same layout for the part we use. */
_Static_assert(offsetof(struct user_regs_struct, rip) ==
		       offsetof(struct pt_regs, rip),
	       "user_regs_struct starts like pt_regs");
_Static_assert(offsetof(struct user_regs_struct, rax) ==
		       offsetof(struct pt_regs, rax),
	       "user_regs_struct starts like pt_regs");

static void test_host(void **state)
{
	const struct usdt__arch_ops *ops = &usdt__arch_x86_64;
	size_t i;

	assert_ptr_equal(usdt__arch_host(), ops);
	check_host_regs(ops, host_regs, sizeof(host_regs) / sizeof(host_regs[0]));
	assert_int_equal(ops->ip_off, offsetof(struct pt_regs, rip));
	/* All but ss, the last word, which no operand names. */
	assert_int_equal(ops->pt_regs_size, offsetof(struct pt_regs, ss));
	assert_int_equal(sizeof(struct pt_regs), ops->pt_regs_size + 8);
	/* %ah..%dh: the second byte of rax..rdx (x86 is little-endian). */
	for (i = 0; i < 4; i++) {
		static const char *const hi[] = { "ah", "bh", "ch", "dh" };
		static const size_t lo[] = { offsetof(struct pt_regs, rax),
					     offsetof(struct pt_regs, rbx),
					     offsetof(struct pt_regs, rcx),
					     offsetof(struct pt_regs, rdx) };
		int w;

		assert_int_equal(ops->reg_off(hi[i], 2, &w), lo[i] + 1);
		assert_int_equal(w, 1);
	}
}

#elif defined(__aarch64__)
#define UR(name, field, width) R(name, struct user_pt_regs, field, width)

static const struct host_reg host_regs[] = {
	UR("fp", regs[29], 8), UR("lr", regs[30], 8), UR("sp", sp, 8),
	UR("wsp", sp, 4),
};

static void test_host(void **state)
{
	const struct usdt__arch_ops *ops = &usdt__arch_arm64;
	size_t regs = offsetof(struct user_pt_regs, regs);

	assert_ptr_equal(usdt__arch_host(), ops);
	check_host_regs(ops, host_regs, sizeof(host_regs) / sizeof(host_regs[0]));
	/* x0..x30, and their low halves w0..w30 (arm64 is little-endian). */
	assert_int_equal(sizeof(((struct user_pt_regs *)0)->regs) / 8, 31);
	check_numbered(ops, "x", 31, regs, 8, 8);
	check_numbered(ops, "w", 31, regs, 8, 4);
	assert_int_equal(ops->ip_off, offsetof(struct user_pt_regs, pc));
	/* All but pstate, the last word, which no operand names. */
	assert_int_equal(ops->pt_regs_size,
			 offsetof(struct user_pt_regs, pstate));
	assert_int_equal(sizeof(bpf_user_pt_regs_t), ops->pt_regs_size + 8);
}

#elif defined(__s390x__)
static void test_host(void **state)
{
	const struct usdt__arch_ops *ops = &usdt__arch_s390x;

	assert_ptr_equal(usdt__arch_host(), ops);
	/* r0..r15, each a whole 64-bit gprs[] slot. */
	assert_int_equal(sizeof(((user_pt_regs *)0)->gprs) / 8, 16);
	check_numbered(ops, "r", 16, offsetof(user_pt_regs, gprs), 8, 8);
	assert_int_equal(ops->ip_off, offsetof(user_pt_regs, psw.addr));
	assert_int_equal(ops->pt_regs_size, sizeof(bpf_user_pt_regs_t));
}

#elif defined(__riscv) && __riscv_xlen == 64
#define UR(name, field) R(name, struct user_regs_struct, field, 8)

static const struct host_reg host_regs[] = {
	UR("ra", ra), UR("sp", sp), UR("gp", gp), UR("tp", tp),
	UR("t0", t0), UR("t1", t1), UR("t2", t2), UR("s0", s0),
	UR("fp", s0), UR("s1", s1), UR("a0", a0), UR("a1", a1),
	UR("a2", a2), UR("a3", a3), UR("a4", a4), UR("a5", a5),
	UR("a6", a6), UR("a7", a7), UR("s2", s2), UR("s3", s3),
	UR("s4", s4), UR("s5", s5), UR("s6", s6), UR("s7", s7),
	UR("s8", s8), UR("s9", s9), UR("s10", s10), UR("s11", s11),
	UR("t3", t3), UR("t4", t4), UR("t5", t5), UR("t6", t6),
	UR("x1", ra), UR("x10", a0), UR("x31", t6),
};

static void test_host(void **state)
{
	const struct usdt__arch_ops *ops = &usdt__arch_riscv64;

	assert_ptr_equal(usdt__arch_host(), ops);
	check_host_regs(ops, host_regs, sizeof(host_regs) / sizeof(host_regs[0]));
	assert_int_equal(ops->ip_off, offsetof(struct user_regs_struct, pc));
	assert_int_equal(ops->pt_regs_size, sizeof(bpf_user_pt_regs_t));
}

#else
static void test_host(void **state)
{
	skip();
}
#endif

/*
 * On every host: each arch's table agrees with its ops. Every register
 * offset lies inside the context and is 8-byte aligned (except x86's
 * high-byte registers), and the PC is where the arch says.
 */
static void test_tables(void **state)
{
	static const struct {
		const struct usdt__arch_ops *ops;
		uint16_t e_machine;
		const char *names[8];
	} arches[] = {
		{ &usdt__arch_x86_64, EM_X86_64,
		  { "rax", "r15", "rsp", "rip", "edi", "r8b" } },
		{ &usdt__arch_arm64, EM_AARCH64,
		  { "x0", "x30", "sp", "w7", "fp", "lr" } },
		{ &usdt__arch_s390x, EM_S390, { "r0", "r15", "r7" } },
		{ &usdt__arch_riscv64, EM_RISCV,
		  { "ra", "t6", "a0", "x31", "fp", "s11" } },
	};
	size_t i, j;

	for (i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
		const struct usdt__arch_ops *ops = arches[i].ops;

		assert_int_equal(ops->e_machine, arches[i].e_machine);
		assert_ptr_equal(usdt__arch_find(ops->e_machine), ops);
		assert_true(ops->ip_off + 8 <= ops->pt_regs_size);
		assert_int_equal(ops->ip_off % 8, 0);
		for (j = 0; j < 8 && arches[i].names[j]; j++) {
			const char *n = arches[i].names[j];
			int w = 0, off = ops->reg_off(n, strlen(n), &w);

			assert_true(off >= 0);
			assert_int_equal(off % 8, 0);
			assert_true(off + 8 <= ops->pt_regs_size);
			assert_true(w == 1 || w == 2 || w == 4 || w == 8);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_tables),
	};

	return cmocka_run_group_tests_name("regs", tests, NULL, NULL);
}
