// SPDX-License-Identifier: BSD-2-Clause
/*
 * Compiler-local labels in ":lo12:" and "%lo()" operands ("[x1,
 * #:lo12:.LANCHOR0]", "%lo(.LANCHOR0)(a5)"): the arm64 and riscv64 walks
 * over the instructions before a site (src/reader/arch/arm64_code.c,
 * riscv64_code.c), on hand-encoded code, each way they succeed or refuse; and resolution around it (src/reader/args.c): the reason for each
 * cause, the same on every arch, and the check that the address found is
 * inside the file. tests/unit/test_fixtures.c checks real gcc output.
 */
#include "test_util.h"
#include "base/internal.h"
#include "reader/arch_ops.h"
#include "reader/arch/arch.h"
#include "reader/arch/code.h"

/* Encoders for the few instructions the cases use (constant
 * expressions, for the table). */
#define adrp(rd, pages) \
	(0x90000000u | (((uint32_t)(pages) & 3) << 29) | \
	 ((((uint32_t)(pages) & 0x1fffff) >> 2) << 5) | (rd))
#define ldst(op, rt, rn, imm) \
	((uint32_t)(op) | (uint32_t)(imm) << 10 | (rn) << 5 | (rt))
#define ldr_w(rt, rn, off) ldst(0xb9400000u, rt, rn, (off) / 4)
#define str_w(rt, rn, off) ldst(0xb9000000u, rt, rn, (off) / 4)
#define ldr_x(rt, rn, off) ldst(0xf9400000u, rt, rn, (off) / 8)
#define ldrb(rt, rn, off) ldst(0x39400000u, rt, rn, off)
#define ldr_q(rt, rn, off) ldst(0x3dc00000u, rt, rn, (off) / 16)
#define add_imm(rd, rn, imm) ldst(0x91000000u, rd, rn, imm)

#define NOP 0xd503201f
#define BL 0x94000010		/* bl .+64 */
#define RET 0xd65f03c0
#define B_NE 0x54000041		/* b.ne .+8 */
#define MOV_X1_X2 0xaa0203e1	/* orr x1, xzr, x2 */
#define ADD_W3 0x0b000063	/* add w3, w3, w0 */
#define CCMP 0x7a401824		/* ccmp w1, w0, #4, ne */
#define LDP_X1 0xa9410be1	/* ldp x1, x2, [sp, #16] */
#define LDR_POST_X1 0xb8404420	/* ldr w0, [x1], #4 */
#define PACIASP 0xd503233f
#define UDF 0x00000000

#define CODE_START 0x1000

struct lo_case {
	const char *what;
	uint32_t insn[8];
	size_t cnt;
	int base;		/* register number */
	int64_t lo;		/* -1: refused */
	uint64_t page;
	const char *why;
};

static const struct lo_case lo_cases[] = {
	{ "gcc's ldr/add/str of a static", { adrp(1, 0x1f), ldr_w(3, 1, 24),
	  ADD_W3, str_w(3, 1, 24) }, 4, 1, 24, 0x20000, NULL },
	{ "add of the anchor's address", { adrp(3, 0x1f), add_imm(4, 3, 0x60) },
	  2, 3, 0x60, 0x20000, NULL },
	{ "byte and q-register loads agree", { adrp(2, -1), ldrb(0, 2, 0x840),
	  ldr_q(1, 2, 0x840), ldr_x(5, 2, 0x840) }, 4, 2, 0x840, 0, NULL },
	/* ccmp's "Rd" field is its flags (#4 here): x4 is not written. */
	{ "conditional branch, nop and ccmp on the way", { adrp(4, 2),
	  ldr_w(0, 4, 8), B_NE, NOP, CCMP }, 5, 4, 8, 0x3000, NULL },
	{ "other registers written and read", { adrp(1, 1), ldr_w(0, 1, 4),
	  MOV_X1_X2 & ~31u, ldr_w(2, 0, 16) }, 4, 1, 4, 0x2000, NULL },
	{ "only the adrp", { adrp(1, 1) }, 1, 1, -1, 0,
	  USDT__WHY_NO_USER },
	{ "a call between", { adrp(19, 1), ldr_w(0, 19, 4), BL }, 3, 19, -1, 0,
	  USDT__WHY_NO_PAGE_INSN },
	{ "a return between", { adrp(1, 1), ldr_w(0, 1, 4), RET, NOP }, 4, 1,
	  -1, 0,
	  USDT__WHY_NO_PAGE_INSN },
	{ "an undecoded instruction", { adrp(1, 1), ldr_w(0, 1, 4), UDF }, 3,
	  1, -1, 0,
	  USDT__WHY_NO_PAGE_INSN },
	{ "no adrp at all", { ldr_w(0, 1, 4) }, 1, 1, -1, 0,
	  USDT__WHY_NO_PAGE_INSN },
	{ "users disagree", { adrp(1, 1), ldr_w(0, 1, 4), ldr_w(2, 1, 8) }, 3,
	  1, -1, 0, USDT__WHY_USERS_DIFFER },
	{ "a user beyond 12 bits", { adrp(1, 1), ldr_x(0, 1, 0x7ff8) }, 2, 1,
	  -1, 0, USDT__WHY_USERS_DIFFER },
	{ "mov to the register", { adrp(1, 1), ldr_w(0, 1, 4), MOV_X1_X2 }, 3,
	  1, -1, 0, USDT__WHY_OTHER_WRITER },
	{ "load into the register", { adrp(1, 1), ldr_x(1, 1, 8) }, 2, 1, -1,
	  0, USDT__WHY_OTHER_WRITER },
	{ "ldp into the register", { adrp(1, 1), ldr_w(0, 1, 4), LDP_X1 }, 3,
	  1, -1, 0, USDT__WHY_OTHER_WRITER },
	{ "post-index writeback", { adrp(1, 1), ldr_w(0, 1, 4), LDR_POST_X1 },
	  3, 1, -1, 0, USDT__WHY_OTHER_WRITER },
	{ "paciasp and x30", { adrp(30, 1), ldr_w(0, 30, 4), PACIASP }, 3, 30,
	  -1, 0, USDT__WHY_OTHER_WRITER },
	/* casp x0, x1, x2, x3, [x4] writes x0 and x1. */
	{ "casp writes Rs+1", { adrp(1, 1), ldr_w(5, 1, 4), 0x48207c82 }, 3,
	  1, -1, 0, USDT__WHY_OTHER_WRITER },
	{ "add to the register", { adrp(1, 1), add_imm(1, 1, 4) }, 2, 1, -1, 0,
	  USDT__WHY_OTHER_WRITER },
};

static void test_arm64_walk(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < USDT__ARRAY_SIZE(lo_cases); i++) {
		const struct lo_case *c = &lo_cases[i];
		uint8_t buf[8 * 4];
		struct usdt__code code = { .bytes = buf, .start = CODE_START,
					   .len = c->cnt * 4 };
		const char *why = NULL;
		uint64_t page = 0;
		int64_t lo = -1;
		int err;

		for (j = 0; j < c->cnt; j++) {	/* little-endian */
			buf[4 * j] = c->insn[j] & 0xff;
			buf[4 * j + 1] = c->insn[j] >> 8 & 0xff;
			buf[4 * j + 2] = c->insn[j] >> 16 & 0xff;
			buf[4 * j + 3] = c->insn[j] >> 24;
		}
		err = usdt__arch_arm64.label_lo(&code, c->base * 8, &lo, &page,
						&why);
		if (c->lo >= 0 && (err || lo != c->lo || page != c->page))
			fail_msg("%s: err %d lo %lld page 0x%llx (%s)", c->what,
				 err, (long long)lo, (unsigned long long)page,
				 why ? why : "");
		if (c->lo < 0 && (!err || !why || strcmp(why, c->why)))
			fail_msg("%s: err %d, reason '%s'", c->what, err,
				 why ? why : "(none)");
	}
}

/* Odd lengths and bad registers never read out of bounds (ASan). */
static void test_arm64_bounds(void **state)
{
	uint8_t *buf = malloc(7);
	struct usdt__code code = { .bytes = buf, .start = CODE_START };
	const char *why = NULL;
	uint64_t page;
	int64_t lo;
	size_t n;

	(void)state;
	assert_non_null(buf);
	memset(buf, 0x90, 7);	/* adrp-like bytes everywhere */
	for (n = 0; n <= 7; n++) {
		code.len = n;
		why = NULL;
		assert_int_equal(usdt__arch_arm64.label_lo(&code, 8, &lo, &page,
							   &why), -ENOENT);
		assert_non_null(why);
	}
	code.len = 4;
	assert_int_equal(usdt__arch_arm64.label_lo(&code, 31 * 8, &lo, &page,
						   &why), -ENOENT);
	assert_string_equal(why, "its base register is not x0-x30");
	free(buf);
}

/* riscv64 encoders: 32-bit (I, S, U types) and the few 16-bit forms. */
#define rv_i(op, f3, rd, rs1, imm) \
	((uint32_t)(imm) << 20 | (rs1) << 15 | (f3) << 12 | (rd) << 7 | (op))
#define rv_s(f3, rs2, rs1, imm) \
	(((uint32_t)(imm) >> 5 & 0x7f) << 25 | (rs2) << 20 | (rs1) << 15 | \
	 (f3) << 12 | ((uint32_t)(imm) & 31) << 7 | 0x23)
#define LUI(rd, imm20) ((uint32_t)(imm20) << 12 | (rd) << 7 | 0x37)
#define LBU(rd, rs1, imm) rv_i(0x03, 4, rd, rs1, (imm) & 0xfff)
#define LW(rd, rs1, imm) rv_i(0x03, 2, rd, rs1, (imm) & 0xfff)
#define ADDI(rd, rs1, imm) rv_i(0x13, 0, rd, rs1, (imm) & 0xfff)
#define XORI(rd, rs1, imm) rv_i(0x13, 4, rd, rs1, (imm) & 0xfff)
#define SW(rs2, rs1, imm) rv_s(2, rs2, rs1, imm)
#define JAL_RA 0x008000efu		/* jal ra, .+8 */
#define C_LUI_A5_0X12 0x67c9		/* c.lui a5, 0x12 */
#define C_MV_A5_A0 0x87aa		/* c.mv a5, a0 */
#define C_ADDI_A4 0x0705		/* c.addi a4, 1 */
#define C_J 0xa009			/* c.j .+2 */
#define C_BEQZ_A0 0xc101		/* c.beqz a0, .+0 */
#define C_NOP 0x0001
#define A4 14
#define A5 15

/* One riscv64 instruction: its bits and length. */
struct rv_insn {
	uint32_t w;
	unsigned int len;
};

#define R4(w) { (w), 4 }
#define R2(w) { (w), 2 }

struct rv_case {
	const char *what;
	struct rv_insn insn[6];
	size_t cnt;
	int64_t lo;		/* -1: refused */
	uint64_t page;
	const char *why;
};

static const struct rv_case rv_cases[] = {
	{ "lui and a load", { R4(LUI(A5, 0x12)), R4(LBU(A4, A5, 80)) }, 2, 80,
	  0x12000, NULL },
	{ "c.lui and a store, negative low bits", { R2(C_LUI_A5_0X12),
	  R4(SW(10, A5, -2000)), R2(C_ADDI_A4), R2(C_BEQZ_A0), R2(C_NOP) }, 5,
	  -2000, 0x12000, NULL },
	{ "addi and load agree", { R4(LUI(A5, 0x12)), R4(ADDI(A4, A5, 16)),
	  R4(LW(13, A5, 16)), R4(XORI(A5 - 1, A5, 16)) }, 4, 16, 0x12000,
	  NULL },
	{ "a negative page", { R4(LUI(A5, 0xfffff)), R4(LW(13, A5, 8)) }, 2, 8,
	  (uint64_t)-4096, NULL },
	{ "only the lui", { R4(LUI(A5, 0x12)) }, 1, -1, 0, USDT__WHY_NO_USER },
	{ "users disagree", { R4(LUI(A5, 0x12)), R4(LW(13, A5, 8)),
	  R4(LW(13, A5, 12)) }, 3, -1, 0, USDT__WHY_USERS_DIFFER },
	{ "c.mv over it", { R4(LUI(A5, 0x12)), R4(LW(13, A5, 8)),
	  R2(C_MV_A5_A0) }, 3, -1, 0, USDT__WHY_OTHER_WRITER },
	{ "a load into it", { R4(LUI(A5, 0x12)), R4(LW(A5, A5, 8)) }, 2, -1, 0,
	  USDT__WHY_OTHER_WRITER },
	{ "relaxed away: no lui", { R4(LW(13, 3, 8)), R2(C_NOP) }, 2, -1, 0,
	  USDT__WHY_NO_PAGE_INSN },
	{ "a call between", { R4(LUI(A5, 0x12)), R4(LW(13, A5, 8)),
	  R4(JAL_RA) }, 3, -1, 0, USDT__WHY_NO_PAGE_INSN },
	{ "a jump between", { R4(LUI(A5, 0x12)), R4(LW(13, A5, 8)), R2(C_J) },
	  3, -1, 0, USDT__WHY_NO_PAGE_INSN },
	/* vle32.v v1, (a5): its upper bits are no immediate. */
	{ "a vector load is no user", { R4(LUI(A5, 0x12)),
	  R4(rv_i(0x07, 6, 1, A5, 0x020)) }, 2, -1, 0, USDT__WHY_NO_USER },
	{ "a 48-bit instruction", { R4(LUI(A5, 0x12)), R4(LW(13, A5, 8)),
	  R2(0x001f), R4(0) }, 4, -1, 0, USDT__WHY_NO_PAGE_INSN },
};

static size_t rv_encode(const struct rv_insn *insn, size_t cnt, uint8_t *buf)
{
	size_t i, n = 0, k;

	for (i = 0; i < cnt; i++)
		for (k = 0; k < insn[i].len; k++)
			buf[n++] = insn[i].w >> (8 * k) & 0xff;
	return n;
}

static void test_riscv64_walk(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < USDT__ARRAY_SIZE(rv_cases); i++) {
		const struct rv_case *c = &rv_cases[i];
		uint8_t buf[6 * 4];
		struct usdt__code code = { .bytes = buf, .start = CODE_START,
					   .at_func_start = true };
		const char *why = NULL;
		uint64_t page = 0;
		int64_t lo = -1;
		int err;

		code.len = rv_encode(c->insn, c->cnt, buf);
		err = usdt__arch_riscv64.label_lo(&code, A5 * 8, &lo, &page,
						  &why);
		if (c->why == NULL && (err || lo != c->lo || page != c->page))
			fail_msg("%s: err %d lo %lld page 0x%llx (%s)", c->what,
				 err, (long long)lo, (unsigned long long)page,
				 why ? why : "");
		if (c->why && (!err || !why || strcmp(why, c->why)))
			fail_msg("%s: err %d, reason '%s'", c->what, err,
				 why ? why : "(none)");
	}
}

/* Odd lengths, cut instructions, and a function that starts before the
 * bytes given. */
static void test_riscv64_bounds(void **state)
{
	uint8_t *buf = malloc(7);
	struct usdt__code code = { .bytes = buf, .start = CODE_START,
				   .at_func_start = true };
	const char *why;
	uint64_t page;
	int64_t lo;
	size_t n;

	(void)state;
	assert_non_null(buf);
	memset(buf, 0xb7, 7);	/* lui-like bytes everywhere */
	for (n = 0; n <= 7; n++) {
		code.len = n;
		why = NULL;
		assert_int_equal(usdt__arch_riscv64.label_lo(&code, A5 * 8, &lo,
							     &page, &why),
				 -ENOENT);
		assert_non_null(why);
	}
	code.at_func_start = false;
	assert_int_equal(usdt__arch_riscv64.label_lo(&code, A5 * 8, &lo, &page,
						     &why), -ENOENT);
	assert_string_equal(why, "its function is too long to decode up to the site");
	free(buf);
}

/* A fake file for resolution: code before the site, and what is mapped. */
struct fake_file {
	uint8_t code[16];
	size_t len;
	bool mapped;
	int load_err;
	int load_calls;
};

static int fake_load_code(void *arg, uint64_t vaddr, size_t max_back,
			  struct usdt__code *code, const char **why)
{
	struct fake_file *f = arg;

	f->load_calls++;
	assert_true(max_back >= 4096);
	if (f->load_err) {
		*why = "no function symbol holds the site";
		return f->load_err;
	}
	code->bytes = f->code;
	code->len = f->len;
	code->start = vaddr - f->len;
	code->at_func_start = true;
	return 0;
}

static bool fake_mapped(void *arg, uint64_t vaddr)
{
	(void)vaddr;
	return ((struct fake_file *)arg)->mapped;
}

static void put32(uint8_t *p, uint32_t w)
{
	p[0] = w & 0xff;
	p[1] = w >> 8 & 0xff;
	p[2] = w >> 16 & 0xff;
	p[3] = w >> 24;
}

static void parse(const struct usdt__arch_ops *arch, struct fake_file *f,
		  const char *s, struct usdt__arg *arg)
{
	struct usdt__site_ctx site = {
		.arch = arch, .load_code = fake_load_code,
		.mapped = fake_mapped, .load_arg = f, .vaddr = 0x400010,
	};

	usdt__arg_parse_one(&site, s, 0, strlen(s), arg);
}

static void test_resolve(void **state)
{
	struct fake_file f = { .len = 8, .mapped = true };
	struct usdt__arg arg;

	(void)state;
	put32(f.code, adrp(1u, 0x20));
	put32(f.code + 4, ldr_w(3, 1, 24));
	/* The bits found replace the operand's addend: the instructions
	 * carry the low bits of ".LANCHOR0+8" itself. */
	parse(&usdt__arch_arm64, &f, "-4@[x1, #:lo12:.LANCHOR0+8]", &arg);
	assert_int_equal(arg.kind, USDT_ARG_DEREF);
	assert_int_equal(arg.offset, 24);
	assert_string_equal(arg.base, "x1");
	assert_int_equal(arg.spec.kind, USDT_SPEC_MEM);
	assert_int_equal(arg.spec.base_off, 8);
	assert_int_equal(arg.spec.val_off, 24);
	assert_int_equal(arg.spec.flags & USDT_SPEC_F_IPREL, 0);

	/* Page plus bits outside the file: refused. */
	f.mapped = false;
	parse(&usdt__arch_arm64, &f, "-4@[x1, #:lo12:.LANCHOR0]", &arg);
	assert_int_equal(arg.kind, USDT_ARG_UNSUPPORTED);
	assert_string_equal(arg.reason, "section anchor .LANCHOR0: the instructions before the site point outside the file");

	/* Another register than the one the instructions pair with. */
	f.mapped = true;
	parse(&usdt__arch_arm64, &f, "-4@[x2, #:lo12:.LANCHOR0]", &arg);
	assert_string_equal(arg.reason, "section anchor .LANCHOR0: " USDT__WHY_NO_PAGE_INSN);

	/* No code: the reader's reason. A constant's label says so. */
	f.load_err = -ENOENT;
	parse(&usdt__arch_arm64, &f, "8f@[x0, #:lo12:.LC0]", &arg);
	assert_string_equal(arg.reason, "compiler-local label .LC0: no function symbol holds the site");
	/* :got_lo12: of a label means nothing: not even looked at. */
	f.load_calls = 0;
	parse(&usdt__arch_arm64, &f, "8@[x0, #:got_lo12:.LC0]", &arg);
	assert_string_equal(arg.reason, "compiler-local label .LC0: its address is not in the file");
	assert_int_equal(f.load_calls, 0);
}

/* The same unreadable operand, the same reason, on every arch. */
static void test_same_reason(void **state)
{
	static const struct {
		const struct usdt__arch_ops *arch;
		const char *str;
		const char *why;
	} cases[] = {
		{ &usdt__arch_s390x, "8@.LANCHOR0+32", "section anchor .LANCHOR0: its address is not in the file" },
		{ &usdt__arch_riscv64, "8@.LANCHOR0", "section anchor .LANCHOR0: its address is not in the file" },
		{ &usdt__arch_arm64, "8@.LANCHOR0", "section anchor .LANCHOR0: its address is not in the file" },
		{ &usdt__arch_x86_64, "8@.LANCHOR0(%rip)", "section anchor .LANCHOR0: its address is not in the file" },
		{ &usdt__arch_s390x, "8@.LC0", "compiler-local label .LC0: its address is not in the file" },
		{ &usdt__arch_riscv64, "8@.LC0", "compiler-local label .LC0: its address is not in the file" },
		{ &usdt__arch_x86_64, "8@$.LC0", "compiler-local label .LC0: its address is not in the file" },
		/* The same cause on arm64 and riscv64. */
		{ &usdt__arch_riscv64, "-4@%lo(.LANCHOR0)(a5)", "section anchor .LANCHOR0: " USDT__WHY_NO_USER },
		{ &usdt__arch_arm64, "-4@[x5, #:lo12:.LANCHOR0]", "section anchor .LANCHOR0: " USDT__WHY_NO_USER },
	};
	struct fake_file f = { .load_err = -ENOENT };
	struct usdt__arg arg;
	size_t i;

	(void)state;
	for (i = 0; i < USDT__ARRAY_SIZE(cases); i++) {
		if (cases[i].arch == &usdt__arch_riscv64) {
			f.load_err = 0;
			f.len = 4;
			put32(f.code, LUI(A5, 0x12));
		} else if (cases[i].arch == &usdt__arch_arm64) {
			f.load_err = 0;
			f.len = 4;
			put32(f.code, adrp(5u, 1));
		} else {
			f.load_err = -ENOENT;
		}
		parse(cases[i].arch, &f, cases[i].str, &arg);
		assert_int_equal(arg.kind, USDT_ARG_UNSUPPORTED);
		if (strcmp(arg.reason, cases[i].why))
			fail_msg("%s: '%s'", cases[i].str, arg.reason);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arm64_walk),
		cmocka_unit_test(test_arm64_bounds),
		cmocka_unit_test(test_riscv64_walk),
		cmocka_unit_test(test_riscv64_bounds),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_same_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
