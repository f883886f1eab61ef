// SPDX-License-Identifier: BSD-2-Clause
/*
 * s390x operands: argument string -> parsed and resolved argument, on a
 * big-endian call site. The forms are those GCC and clang print for
 * sys/sdt.h at -O0/-O2, with and without -fPIC.
 */
#include <elf.h>

#include "arch_test.h"

static const struct usdt__site_ctx sites[] = {
	{ .arch = &usdt__arch_s390x, .vaddr = 0x1000620, .big_endian = true },
	/* The same on a (hypothetical) little-endian site: 16-byte args. */
	{ .arch = &usdt__arch_s390x, .vaddr = 0x1000620 },
};

#define NEG(x) ((uint64_t)-(int64_t)(x))
/* gprs[N] of user_pt_regs. */
#define GPR(n) (24 + 8 * (n))

static const struct arg_case cases[] = {
	/* str, site, kind, offset, value, base, index, scale, sym,
	 * spec kind, size, flags, base_off, idx_off, val_off */
	{ "-4@5", 0, K_CONST, 0, 5, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 5 },
	{ "-4@-536", 0, K_CONST, 0, 0xfffffde8, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 0xfffffde8 },
	{ "8@-1", 0, K_CONST, 0, UINT64_MAX, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, UINT64_MAX },
	{ "2@0xffff", 0, K_CONST, 0, 0xffff, NULL, NULL, 0, NULL, SV, 2, 0, NONE, NONE, 0xffff },
	{ "-4@%r2", 0, K_REG, 0, 0, "r2", NULL, 0, NULL, SV, 4, F_S, GPR(2), NONE, 0 },
	{ "8@%r0", 0, K_REG, 0, 0, "r0", NULL, 0, NULL, SV, 8, 0, GPR(0), NONE, 0 },
	{ "1@%r11", 0, K_REG, 0, 0, "r11", NULL, 0, NULL, SV, 1, 0, GPR(11), NONE, 0 },
	{ "8@%r15", 0, K_REG, 0, 0, "r15", NULL, 0, NULL, SV, 8, 0, 144, NONE, 0 },
	/* No size written: s390x names no register narrower than 8 bytes. */
	{ "%r2", 0, K_REG, 0, 0, "r2", NULL, 0, NULL, SV, 8, 0, GPR(2), NONE, 0 },
	{ "8f@%r1", 0, K_REG, 0, 0, "r1", NULL, 0, NULL, SV, 8, F_FL, GPR(1), NONE, 0 },
	{ "-8@160(%r15)", 0, K_DEREF, 160, 0, "r15", NULL, 0, NULL, SM, 8, F_S, GPR(15), NONE, 160 },
	{ "-4@188(%r11)", 0, K_DEREF, 188, 0, "r11", NULL, 0, NULL, SM, 4, F_S, GPR(11), NONE, 188 },
	{ "-8@0(%r4)", 0, K_DEREF, 0, 0, "r4", NULL, 0, NULL, SM, 8, F_S, GPR(4), NONE, 0 },
	{ "8@(%r2)", 0, K_DEREF, 0, 0, "r2", NULL, 0, NULL, SM, 8, 0, GPR(2), NONE, 0 },
	{ "8@-8(%r1)", 0, K_DEREF, -8, 0, "r1", NULL, 0, NULL, SM, 8, 0, GPR(1), NONE, NEG(8) },
	/* D(X,B): the index first, then the base. */
	{ "-4@0(%r3,%r4)", 0, K_INDEX, 0, 0, "r4", "r3", 1, NULL, SM, 4, F_S, GPR(4), GPR(3), 0 },
	{ "1@8(%r6,%r1)", 0, K_INDEX, 8, 0, "r1", "r6", 1, NULL, SM, 1, 0, GPR(1), GPR(6), 8 },
	{ "-8@88(%r3,%r1)", 0, K_INDEX, 88, 0, "r1", "r3", 1, NULL, SM, 8, F_S, GPR(1), GPR(3), 88 },
	{ "8@( %r3 , %r4 )", 0, K_INDEX, 0, 0, "r4", "r3", 1, NULL, SM, 8, 0, GPR(4), GPR(3), 0 },
	{ "8@16(,%r2)", 0, K_DEREF, 16, 0, "r2", NULL, 0, NULL, SM, 8, 0, GPR(2), NONE, 16 },
	/* %r0 in an address is "no register". */
	{ "8@8(%r0,%r2)", 0, K_DEREF, 8, 0, "r2", NULL, 0, NULL, SM, 8, 0, GPR(2), NONE, 8 },
	{ "8@8(%r2,%r0)", 0, K_INDEX, 8, 0, NULL, "r2", 1, NULL, SM, 8, 0, NONE, GPR(2), 8 },
	{ "8@100(%r0)", 0, K_ABS, 100, 0, NULL, NULL, 0, NULL, SM, 8, 0, NONE, NONE, 100 },
	/* 16 bytes on big-endian: the low half is 8 bytes further on. */
	{ "-16@-32(%r11)", 0, K_DEREF, -24, 0, "r11", NULL, 0, NULL, SM, 8, F_S | F_TR, GPR(11), NONE, NEG(24) },
	{ "16@0(%r3,%r4)", 0, K_INDEX, 8, 0, "r4", "r3", 1, NULL, SM, 8, F_TR, GPR(4), GPR(3), 8 },
	/* ... wrapping like the CPU's address arithmetic (found by fuzzing:
	 * this was a signed overflow in resolve()). */
	{ "16@9223372036854775807(%r2)", 0, K_DEREF, INT64_MIN + 7, 0, "r2", NULL, 0, NULL, SM, 8, F_TR, GPR(2), NONE, 0x8000000000000007ULL },
	{ "-16@-32(%r11)", 1, K_DEREF, -32, 0, "r11", NULL, 0, NULL, SM, 8, F_S | F_TR, GPR(11), NONE, NEG(32) },
	/* A 16-byte register value is its low 8 bytes either way. */
	/* A 16-byte value is in the pair r2:r3, its low half in r3. */
	{ "16@%r2", 0, K_REG, 0, 0, "r2", NULL, 0, NULL, SV, 8, F_TR, GPR(3), NONE, 0 },
};

static const struct bad_case bad_cases[] = {
	{ "8f@%f0", "floating-point/vector register %f0: not readable by BPF" },
	{ "4f@%f15", "floating-point/vector register %f15: not readable by BPF" },
	{ "8@%v1", "floating-point/vector register %v1: not readable by BPF" },
	{ "8@%a0", "access register %a0" },
	{ "8@%c0", "control register %c0" },
	{ "8@%r16", "unknown register %r16" },
	{ "8@%r01", "unknown register %r01" },
	{ "8@%r", "unknown register %r" },
	{ "8@%", "expected a register after %" },
	/* Symbols resolve through the symbol table (test_resolve). */
	{ "8@r2", "symbol 'r2' not in the symbol table" },
	{ "8@sym", "not in the symbol table" },
	/* Compiler-local labels: one reason on every arch. */
	{ "8@.LC0", "compiler-local label .LC0: its address is not in the file" },
	{ "8@.LANCHOR0+32", "section anchor .LANCHOR0: its address is not in the file" },
	{ "8@0(%r1", "expected ')'" },
	{ "8@0(%r1,", "expected a register" },
	{ "8@0(%r1,%r2", "expected ')'" },
	{ "8@(%r1,%r2,%r3)", "expected ')'" },
	{ "8@0(1)", "expected a register %rN" },
	{ "8@0(%f0)", "floating-point/vector register" },
	{ "8@()", "expected a register" },
	{ "8@(,)", "expected a register" },
	{ "8@%r1)", "garbage after a register" },
	{ "8@0(%r1)x", "garbage after a memory operand" },
	{ "8@0x", "expected a number" },
	{ "8@5x", "garbage after a number" },
	{ "8@5 ", "expected '(' or the end" },
	{ "8@$5", "expected a number" },
	{ "8@[x0", "expected a number" },
	{ "8@%raveryveryverylongregistername", "unknown register" },
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

static void test_all_names(void **state)
{
	const struct usdt__arch_ops *ops = &usdt__arch_s390x;
	int n, w;

	for (n = 0; n <= 15; n++) {
		char r[8];

		snprintf(r, sizeof(r), "r%d", n);
		assert_int_equal(ops->reg_off(r, strlen(r), &w), GPR(n));
		assert_int_equal(w, 8);
	}
	assert_int_equal(ops->reg_off("r16", 3, NULL), -ENOENT);
	assert_int_equal(ops->reg_off("f0", 2, NULL), -ENOENT);
}

static void test_ops(void **state)
{
	const struct usdt__arch_ops *ops = &usdt__arch_s390x;

	assert_ptr_equal(usdt__arch_find(EM_S390), ops);
	assert_string_equal(ops->name, "s390x");
	assert_int_equal(ops->pt_regs_size, 152);
	assert_int_equal(ops->ip_off, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_all_names),
		cmocka_unit_test(test_ops),
	};

	return cmocka_run_group_tests_name("arch_s390x", tests, NULL, NULL);
}
