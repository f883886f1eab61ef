// SPDX-License-Identifier: BSD-2-Clause
/*
 * arm64 operands: argument string -> parsed and resolved argument. The
 * forms are those GCC and clang print for sys/sdt.h at -O0/-O2, with and
 * without -fPIC.
 */
#include <elf.h>

#include "arch_test.h"

static const struct usdt__site_ctx sites[] = {
	{ .arch = &usdt__arch_arm64, .vaddr = 0x400800 },
};

#define NEG(x) ((uint64_t)-(int64_t)(x))

static const struct arg_case cases[] = {
	/* str, site, kind, offset, value, base, index, scale, sym,
	 * spec kind, size, flags, base_off, idx_off, val_off */
	{ "-4@1", 0, K_CONST, 0, 1, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 1 },
	{ "-4@5", 0, K_CONST, 0, 5, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 5 },
	{ "-4@-536", 0, K_CONST, 0, 0xfffffde8, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 0xfffffde8 },
	{ "2@-536", 0, K_CONST, 0, 65000, NULL, NULL, 0, NULL, SV, 2, 0, NONE, NONE, 65000 },
	{ "8@-1", 0, K_CONST, 0, UINT64_MAX, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, UINT64_MAX },
	{ "-4@#5", 0, K_CONST, 0, 5, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 5 },
	{ "-4@#-8", 0, K_CONST, 0, 0xfffffff8, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 0xfffffff8 },
	{ "8@0x10", 0, K_CONST, 0, 16, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, 16 },
	{ "8@18446744073709551615", 0, K_CONST, 0, UINT64_MAX, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, UINT64_MAX },
	/* The zero registers read as 0. */
	{ "8@xzr", 0, K_CONST, 0, 0, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, 0 },
	{ "-4@wzr", 0, K_CONST, 0, 0, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 0 },
	/* Registers: xN at N * 8, wN its low half, sp at 248. */
	{ "8@x0", 0, K_REG, 0, 0, "x0", NULL, 0, NULL, SV, 8, 0, 0, NONE, 0 },
	{ "-8@x2", 0, K_REG, 0, 0, "x2", NULL, 0, NULL, SV, 8, F_S, 16, NONE, 0 },
	{ "-4@x3", 0, K_REG, 0, 0, "x3", NULL, 0, NULL, SV, 4, F_S, 24, NONE, 0 },
	{ "1@x4", 0, K_REG, 0, 0, "x4", NULL, 0, NULL, SV, 1, 0, 32, NONE, 0 },
	{ "8@x30", 0, K_REG, 0, 0, "x30", NULL, 0, NULL, SV, 8, 0, 240, NONE, 0 },
	{ "-4@w1", 0, K_REG, 0, 0, "w1", NULL, 0, NULL, SV, 4, F_S, 8, NONE, 0 },
	{ "8@w30", 0, K_REG, 0, 0, "w30", NULL, 0, NULL, SV, 8, 0, 240, NONE, 0 },
	{ "8@sp", 0, K_REG, 0, 0, "sp", NULL, 0, NULL, SV, 8, 0, 248, NONE, 0 },
	{ "8@fp", 0, K_REG, 0, 0, "fp", NULL, 0, NULL, SV, 8, 0, 232, NONE, 0 },
	{ "8@lr", 0, K_REG, 0, 0, "lr", NULL, 0, NULL, SV, 8, 0, 240, NONE, 0 },
	{ "8f@x1", 0, K_REG, 0, 0, "x1", NULL, 0, NULL, SV, 8, F_FL, 8, NONE, 0 },
	/* No size written (assembler probes): a register at its name's
	 * width, unsigned; anything else 8 bytes. */
	{ "w0", 0, K_REG, 0, 0, "w0", NULL, 0, NULL, SV, 4, 0, 0, NONE, 0 },
	{ "w30", 0, K_REG, 0, 0, "w30", NULL, 0, NULL, SV, 4, 0, 240, NONE, 0 },
	{ "wsp", 0, K_REG, 0, 0, "wsp", NULL, 0, NULL, SV, 4, 0, 248, NONE, 0 },
	{ "x1", 0, K_REG, 0, 0, "x1", NULL, 0, NULL, SV, 8, 0, 8, NONE, 0 },
	{ "sp", 0, K_REG, 0, 0, "sp", NULL, 0, NULL, SV, 8, 0, 248, NONE, 0 },
	{ "[x2, 8]", 0, K_DEREF, 8, 0, "x2", NULL, 0, NULL, SM, 8, 0, 16, NONE, 8 },
	/* Memory at a base plus an offset. */
	{ "8@[x2]", 0, K_DEREF, 0, 0, "x2", NULL, 0, NULL, SM, 8, 0, 16, NONE, 0 },
	{ "-8@[sp]", 0, K_DEREF, 0, 0, "sp", NULL, 0, NULL, SM, 8, F_S, 248, NONE, 0 },
	{ "-4@[sp, 44]", 0, K_DEREF, 44, 0, "sp", NULL, 0, NULL, SM, 4, F_S, 248, NONE, 44 },
	{ "1@[sp, 15]", 0, K_DEREF, 15, 0, "sp", NULL, 0, NULL, SM, 1, 0, 248, NONE, 15 },
	{ "-4@[x4, 8]", 0, K_DEREF, 8, 0, "x4", NULL, 0, NULL, SM, 4, F_S, 32, NONE, 8 },
	{ "8@[x29, -8]", 0, K_DEREF, -8, 0, "x29", NULL, 0, NULL, SM, 8, 0, 232, NONE, NEG(8) },
	{ "8@[x0, #8]", 0, K_DEREF, 8, 0, "x0", NULL, 0, NULL, SM, 8, 0, 0, NONE, 8 },
	{ "8@[x0, #-8]", 0, K_DEREF, -8, 0, "x0", NULL, 0, NULL, SM, 8, 0, 0, NONE, NEG(8) },
	{ "8@[x0,#0x10]", 0, K_DEREF, 16, 0, "x0", NULL, 0, NULL, SM, 8, 0, 0, NONE, 16 },
	{ "8@[ x7 , 80 ]", 0, K_DEREF, 80, 0, "x7", NULL, 0, NULL, SM, 8, 0, 56, NONE, 80 },
	{ "8f@[x7, 80]", 0, K_DEREF, 80, 0, "x7", NULL, 0, NULL, SM, 8, F_FL, 56, NONE, 80 },
	{ "8@[fp, 16]", 0, K_DEREF, 16, 0, "fp", NULL, 0, NULL, SM, 8, 0, 232, NONE, 16 },
	/* Register-indexed. */
	{ "1@[x3, x1]", 0, K_INDEX, 0, 0, "x3", "x1", 1, NULL, SM, 1, 0, 24, 8, 0 },
	{ "8@[x3, x1, lsl 3]", 0, K_INDEX, 0, 0, "x3", "x1", 8, NULL, SM, 8, F_SC(3), 24, 8, 0 },
	{ "-4@[x3, x1, lsl 2]", 0, K_INDEX, 0, 0, "x3", "x1", 4, NULL, SM, 4, F_S | F_SC(2), 24, 8, 0 },
	{ "2@[x3,x1,lsl #1]", 0, K_INDEX, 0, 0, "x3", "x1", 2, NULL, SM, 2, F_SC(1), 24, 8, 0 },
	{ "8@[sp, x5, lsl 0]", 0, K_INDEX, 0, 0, "sp", "x5", 1, NULL, SM, 8, 0, 248, 40, 0 },
	{ "8@[x3, x1, sxtx]", 0, K_INDEX, 0, 0, "x3", "x1", 1, NULL, SM, 8, 0, 24, 8, 0 },
	{ "8@[x3, x1, sxtx 3]", 0, K_INDEX, 0, 0, "x3", "x1", 8, NULL, SM, 8, F_SC(3), 24, 8, 0 },
	/* A 32-bit index, extended (gcc -O2 for an array indexed by int). */
	{ "1@[x3, w0, sxtw]", 0, K_INDEX, 0, 0, "x3", "w0", 1, NULL, SM, 1, USDT_SPEC_F_IDX_S32, 24, 0, 0 },
	{ "-4@[x3, w1, sxtw 2]", 0, K_INDEX, 0, 0, "x3", "w1", 4, NULL, SM, 4, F_S | F_SC(2) | USDT_SPEC_F_IDX_S32, 24, 8, 0 },
	{ "4@[x3, w0, uxtw #2]", 0, K_INDEX, 0, 0, "x3", "w0", 4, NULL, SM, 4, F_SC(2) | USDT_SPEC_F_IDX_U32, 24, 0, 0 },
	/* 16 bytes: the low 8 (arm64 Linux is little-endian). */
	{ "-16@[sp, 32]", 0, K_DEREF, 32, 0, "sp", NULL, 0, NULL, SM, 8, F_S | F_TR, 248, NONE, 32 },
};

static const struct bad_case bad_cases[] = {
	/* Read with a symbol table (test_resolve); without one, the symbol
	 * is what is missing. */
	{ "8@[x0, #:lo12:sym]", "symbol 'sym' not in the symbol table" },
	/* gcc -O2's section anchor: one reason on every arch. */
	{ "-4@[x1, #:lo12:.LANCHOR0]", "section anchor .LANCHOR0: the code before the site cannot be read" },
	{ "8@[x0, :got_lo12:sym]", "not in the symbol table" },
	{ "8@[x0, #:abs_g0:sym]", "relocation operand :abs_g0:" },
	{ "8@[x0, #:lo12]", "relocation operand :lo12:" },
	{ "8@:lo12:sym", ":lo12:" },
	{ "8@#:lo12:sym", ":lo12:" },
	{ "8@v0", "floating-point/vector register v0: not readable by BPF" },
	{ "8f@d0", "floating-point/vector register d0: not readable by BPF" },
	{ "4f@s0", "floating-point/vector register s0: not readable by BPF" },
	{ "16@q0", "floating-point/vector register q0: not readable by BPF" },
	{ "2@h31", "floating-point/vector register h31: not readable by BPF" },
	{ "8@z0", "floating-point/vector register" },
	{ "8@p1", "floating-point/vector register" },
	{ "1@[x3, x0, sxtw]", "sxtw needs a w register index" },
	{ "8@[x3, w0]", "needs sxtw or uxtw" },
	{ "8@[x0, x1, lsl 4]", "0 to 3" },
	{ "8@[x0, x1, lsl]", "lsl without" },
	{ "8@[x0, x1, ror 2]", "unknown index shift" },
	{ "8@[x0, x1, uxtx]", "unknown index shift" },
	{ "8@[x0, x1,]", "unknown index shift" },
	{ "8@[x0, sp]", "sp cannot be an index" },
	{ "8@[x0, q1]", "floating-point/vector register q1" },
	{ "8@[w0]", "cannot be a base" },
	{ "8@[xzr]", "unknown register xzr" },
	{ "8@[x0", "expected ']'" },
	{ "8@[x0, 8", "expected ']'" },
	{ "8@[x0, 8]!", "garbage after a memory operand" },
	{ "8@[x0], 8", "garbage after a memory operand" },
	{ "8@[x0,]", "expected an offset or an index" },
	{ "8@[x0, #]", "expected a number" },
	{ "8@[]", "expected a base register" },
	{ "8@[", "expected a base register" },
	{ "8@[x0 8]", "expected ']'" },
	{ "8@x31", "unknown register x31" },
	{ "8@x01", "unknown register x01" },
	{ "8@x", "symbol 'x' not in the symbol table" },
	/* A bare symbol: an address (STAP_SDT_ARG_CONSTRAINT=g). */
	{ "8@foo", "symbol 'foo' not in the symbol table" },
	{ "8@x0,", "garbage after a register" },
	{ "8@x0 ", "garbage after a register" },
	{ "8@#", "expected a number" },
	{ "8@0x", "expected a number" },
	{ "8@5x", "garbage after a number" },
	{ "8@5)", "garbage after a constant" },
	{ "8@010", "leading zero" },
	{ "8@%x0", "expected a register or a constant" },
	{ "8@(%rax", "expected a register or a constant" },
	{ "8@xaveryveryverylongregistername", "not in the symbol table" },
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

/* x0..x30 and w0..w30, each at N * 8. */
static void test_all_names(void **state)
{
	const struct usdt__arch_ops *ops = &usdt__arch_arm64;
	int n, w;

	for (n = 0; n <= 30; n++) {
		char x[8], wn[8];

		snprintf(x, sizeof(x), "x%d", n);
		snprintf(wn, sizeof(wn), "w%d", n);
		assert_int_equal(ops->reg_off(x, strlen(x), &w), n * 8);
		assert_int_equal(w, 8);
		assert_int_equal(ops->reg_off(wn, strlen(wn), &w), n * 8);
		assert_int_equal(w, 4);
	}
	assert_int_equal(ops->reg_off("sp", 2, &w), 248);
	assert_int_equal(w, 8);
	assert_int_equal(ops->reg_off("wsp", 3, &w), 248);
	assert_int_equal(w, 4);
	assert_int_equal(ops->reg_off("x31", 3, NULL), -ENOENT);
	assert_int_equal(ops->reg_off("xzr", 3, NULL), -ENOENT);
	assert_int_equal(ops->reg_off("pc", 2, NULL), -ENOENT);
	/* Not NUL-terminated at len: "x10" read as "x1". */
	assert_int_equal(ops->reg_off("x10", 2, NULL), 8);
}

static void test_ops(void **state)
{
	const struct usdt__arch_ops *ops = &usdt__arch_arm64;

	assert_ptr_equal(usdt__arch_find(EM_AARCH64), ops);
	assert_string_equal(ops->name, "aarch64");
	assert_int_equal(ops->pt_regs_size, 264);
	assert_int_equal(ops->ip_off, 256);
}

/* Whole strings as GCC -O2 emits them: the space in "[sp, 8]" and the
 * comma list of "[x3, w0, sxtw]" stay inside one argument. */
static void test_split_real(void **state)
{
	static const char *str = "-8@[x2] -4@[x4, 8] 1@[x3, w0, sxtw] 1@[x3, x1] -8@[sp, 8]";
	static const enum usdt_arg_kind kinds[] = {
		K_DEREF, K_DEREF, K_INDEX, K_INDEX, K_DEREF,
	};
	struct usdt__arg *args;
	const char *why;
	int cnt, i;

	assert_int_equal(usdt__args_parse(&sites[0], str, &args, &cnt, &why), 0);
	assert_int_equal(cnt, 5);
	for (i = 0; i < cnt; i++)
		assert_int_equal(args[i].kind, kinds[i]);
	assert_int_equal(args[4].spec.base_off, 248);
	assert_int_equal(args[4].spec.val_off, 8);
	free(args);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_all_names),
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_split_real),
	};

	return cmocka_run_group_tests_name("arch_arm64", tests, NULL, NULL);
}
