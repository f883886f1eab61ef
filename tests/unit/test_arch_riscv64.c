// SPDX-License-Identifier: BSD-2-Clause
/*
 * riscv64 operands: argument string -> parsed and resolved argument. The
 * forms are those GCC prints for sys/sdt.h at -O0/-O2, with and without
 * -fPIC and -static (clang 14 cannot compile sys/sdt.h's "nor" operands
 * for riscv64).
 */
#include <elf.h>

#include "arch_test.h"

static const struct usdt__site_ctx sites[] = {
	{ .arch = &usdt__arch_riscv64, .vaddr = 0x10500 },
};

#define NEG(x) ((uint64_t)-(int64_t)(x))

static const struct arg_case cases[] = {
	/* str, site, kind, offset, value, base, index, scale, sym,
	 * spec kind, size, flags, base_off, idx_off, val_off */
	{ "-4@5", 0, K_CONST, 0, 5, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 5 },
	{ "-4@-536", 0, K_CONST, 0, 0xfffffde8, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 0xfffffde8 },
	{ "8@-1", 0, K_CONST, 0, UINT64_MAX, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, UINT64_MAX },
	{ "1@0x80", 0, K_CONST, 0, 0x80, NULL, NULL, 0, NULL, SV, 1, 0, NONE, NONE, 0x80 },
	/* x0 reads as 0. */
	{ "8@zero", 0, K_CONST, 0, 0, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, 0 },
	{ "-4@x0", 0, K_CONST, 0, 0, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 0 },
	{ "-4@a0", 0, K_REG, 0, 0, "a0", NULL, 0, NULL, SV, 4, F_S, 80, NONE, 0 },
	/* No size written: riscv64 names no register narrower than 8 bytes. */
	{ "a0", 0, K_REG, 0, 0, "a0", NULL, 0, NULL, SV, 8, 0, 80, NONE, 0 },
	{ "-8@a1", 0, K_REG, 0, 0, "a1", NULL, 0, NULL, SV, 8, F_S, 88, NONE, 0 },
	{ "8@a7", 0, K_REG, 0, 0, "a7", NULL, 0, NULL, SV, 8, 0, 136, NONE, 0 },
	{ "1@a5", 0, K_REG, 0, 0, "a5", NULL, 0, NULL, SV, 1, 0, 120, NONE, 0 },
	{ "8@fp", 0, K_REG, 0, 0, "fp", NULL, 0, NULL, SV, 8, 0, 64, NONE, 0 },
	{ "8@s0", 0, K_REG, 0, 0, "s0", NULL, 0, NULL, SV, 8, 0, 64, NONE, 0 },
	{ "8@s11", 0, K_REG, 0, 0, "s11", NULL, 0, NULL, SV, 8, 0, 216, NONE, 0 },
	{ "8@ra", 0, K_REG, 0, 0, "ra", NULL, 0, NULL, SV, 8, 0, 8, NONE, 0 },
	{ "8@x10", 0, K_REG, 0, 0, "x10", NULL, 0, NULL, SV, 8, 0, 80, NONE, 0 },
	{ "8@x31", 0, K_REG, 0, 0, "x31", NULL, 0, NULL, SV, 8, 0, 248, NONE, 0 },
	{ "8f@a4", 0, K_REG, 0, 0, "a4", NULL, 0, NULL, SV, 8, F_FL, 112, NONE, 0 },
	{ "-4@-52(s0)", 0, K_DEREF, -52, 0, "s0", NULL, 0, NULL, SM, 4, F_S, 64, NONE, NEG(52) },
	{ "1@-81(s0)", 0, K_DEREF, -81, 0, "s0", NULL, 0, NULL, SM, 1, 0, 64, NONE, NEG(81) },
	{ "-8@8(sp)", 0, K_DEREF, 8, 0, "sp", NULL, 0, NULL, SM, 8, F_S, 16, NONE, 8 },
	{ "-8@0(a2)", 0, K_DEREF, 0, 0, "a2", NULL, 0, NULL, SM, 8, F_S, 96, NONE, 0 },
	{ "8f@72(a7)", 0, K_DEREF, 72, 0, "a7", NULL, 0, NULL, SM, 8, F_FL, 136, NONE, 72 },
	{ "8@(a0)", 0, K_DEREF, 0, 0, "a0", NULL, 0, NULL, SM, 8, 0, 80, NONE, 0 },
	{ "8@( a0 )", 0, K_DEREF, 0, 0, "a0", NULL, 0, NULL, SM, 8, 0, 80, NONE, 0 },
	{ "8@0x10(x8)", 0, K_DEREF, 16, 0, "x8", NULL, 0, NULL, SM, 8, 0, 64, NONE, 16 },
	{ "8@-16(fp)", 0, K_DEREF, -16, 0, "fp", NULL, 0, NULL, SM, 8, 0, 64, NONE, NEG(16) },
	/* A zero base leaves an absolute address. */
	{ "8@16(zero)", 0, K_ABS, 16, 0, NULL, NULL, 0, NULL, SM, 8, 0, NONE, NONE, 16 },
	{ "-16@-32(s0)", 0, K_DEREF, -32, 0, "s0", NULL, 0, NULL, SM, 8, F_S | F_TR, 64, NONE, NEG(32) },
};

static const struct bad_case bad_cases[] = {
	/* Read with a symbol table (test_resolve). */
	{ "-4@%lo(gv)(a4)", "symbol 'gv' not in the symbol table" },
	/* gcc -O2's section anchor: one reason on every arch. */
	{ "-4@%lo(.LANCHOR0)(a5)", "section anchor .LANCHOR0: the code before the site cannot be read" },
	{ "-4@%pcrel_lo(.L1)(a4)", "relocation operand %pcrel_lo() not supported" },
	{ "-4@%lo(5)(a4)", "expected %lo(symbol)" },
	{ "-4@%lo(gv)", "expected a base register" },
	{ "8@%pcrel_lo(.L1)(a0)", "relocation operand %pcrel" },
	{ "8f@fa0", "floating-point/vector register fa0: not readable by BPF" },
	{ "8f@ft0", "floating-point/vector register ft0: not readable by BPF" },
	{ "4f@fs1", "floating-point/vector register fs1: not readable by BPF" },
	{ "8f@f10", "floating-point/vector register f10: not readable by BPF" },
	{ "8@v0", "floating-point/vector register v0: not readable by BPF" },
	{ "8@x32", "unknown register x32" },
	{ "8@s12", "unknown register s12" },
	/* A bare symbol: an address (STAP_SDT_ARG_CONSTRAINT=g). */
	{ "8@foo", "symbol 'foo' not in the symbol table" },
	{ "8@a0,", "garbage after a register" },
	{ "8@-52(s0", "expected ')'" },
	{ "8@(a0)x", "garbage after a memory operand" },
	{ "8@(zero", "expected ')'" },
	{ "8@(f0)", "floating-point/vector register" },
	{ "8@()", "expected a base register" },
	{ "8@(a0 a1)", "expected ')'" },
	{ "8@0(%r1)", "expected a base register" },
	{ "8@0x", "expected a number" },
	{ "8@5 ", "expected '(' or the end" },
	{ "8@$5", "expected a number" },
	{ "8@[x0", "expected a number" },
	{ "8@aaveryveryverylongregistername", "not in the symbol table" },
	{ "8@", "empty operand" },
};

static void test_cases(void **state)
{
	CHECK_ARG_CASES(sites, cases);
}

static void test_bad(void **state)
{
	CHECK_BAD_CASES(&sites[0], bad_cases);
}

/*
 * Every ABI name, and xN, against struct user_regs_struct (pc, ra, sp, gp,
 * tp, t0-t2, s0, s1, a0-a7, s2-s11, t3-t6), written out independently of
 * src/reader/arch/riscv64.c.
 */
static void test_all_names(void **state)
{
	static const char *const abi[32] = {
		NULL, "ra", "sp", "gp", "tp", "t0", "t1", "t2",
		"s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
		"a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7",
		"s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
	};
	const struct usdt__arch_ops *ops = &usdt__arch_riscv64;
	int n, w;

	for (n = 1; n < 32; n++) {
		char x[8];

		snprintf(x, sizeof(x), "x%d", n);
		assert_int_equal(ops->reg_off(x, strlen(x), &w), n * 8);
		assert_int_equal(w, 8);
		assert_int_equal(ops->reg_off(abi[n], strlen(abi[n]), &w), n * 8);
		assert_int_equal(w, 8);
	}
	assert_int_equal(ops->reg_off("fp", 2, NULL), 64);
	assert_int_equal(ops->reg_off("zero", 4, NULL), -ENOENT);
	assert_int_equal(ops->reg_off("x0", 2, NULL), -ENOENT);
	assert_int_equal(ops->reg_off("pc", 2, NULL), -ENOENT);
}

static void test_ops(void **state)
{
	const struct usdt__arch_ops *ops = &usdt__arch_riscv64;

	assert_ptr_equal(usdt__arch_find(EM_RISCV), ops);
	assert_string_equal(ops->name, "riscv64");
	assert_int_equal(ops->pt_regs_size, 256);
	assert_int_equal(ops->ip_off, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_all_names),
		cmocka_unit_test(test_ops),
	};

	return cmocka_run_group_tests_name("arch_riscv64", tests, NULL, NULL);
}
