// SPDX-License-Identifier: BSD-2-Clause
/*
 * Compiler-local labels in ":lo12:" operands ("[x1, #:lo12:.LANCHOR0]"):
 * the arm64 walk over the instructions before a site
 * (src/arch/arm64_code.c), on hand-encoded code, each way it may succeed
 * or refuse; and resolution around it (src/args.c): the reason for each
 * cause, the same on every arch, and the check that the address found is
 * inside the file. tests/unit/test_fixtures.c checks real gcc output.
 */
#include "test_util.h"
#include "internal.h"

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
	  "no instruction before the site gives its low 12 bits" },
	{ "a call between", { adrp(19, 1), ldr_w(0, 19, 4), BL }, 3, 19, -1, 0,
	  "no adrp sets its base register in straight-line code before the site" },
	{ "a return between", { adrp(1, 1), ldr_w(0, 1, 4), RET, NOP }, 4, 1,
	  -1, 0,
	  "no adrp sets its base register in straight-line code before the site" },
	{ "an undecoded instruction", { adrp(1, 1), ldr_w(0, 1, 4), UDF }, 3,
	  1, -1, 0,
	  "no adrp sets its base register in straight-line code before the site" },
	{ "no adrp at all", { ldr_w(0, 1, 4) }, 1, 1, -1, 0,
	  "no adrp sets its base register in straight-line code before the site" },
	{ "users disagree", { adrp(1, 1), ldr_w(0, 1, 4), ldr_w(2, 1, 8) }, 3,
	  1, -1, 0, "instructions before the site give different low 12 bits" },
	{ "a user beyond 12 bits", { adrp(1, 1), ldr_x(0, 1, 0x7ff8) }, 2, 1,
	  -1, 0, "instructions before the site give different low 12 bits" },
	{ "mov to the register", { adrp(1, 1), ldr_w(0, 1, 4), MOV_X1_X2 }, 3,
	  1, -1, 0, "its base register is set by something other than adrp" },
	{ "load into the register", { adrp(1, 1), ldr_x(1, 1, 8) }, 2, 1, -1,
	  0, "its base register is set by something other than adrp" },
	{ "ldp into the register", { adrp(1, 1), ldr_w(0, 1, 4), LDP_X1 }, 3,
	  1, -1, 0, "its base register is set by something other than adrp" },
	{ "post-index writeback", { adrp(1, 1), ldr_w(0, 1, 4), LDR_POST_X1 },
	  3, 1, -1, 0, "its base register is set by something other than adrp" },
	{ "paciasp and x30", { adrp(30, 1), ldr_w(0, 30, 4), PACIASP }, 3, 30,
	  -1, 0, "its base register is set by something other than adrp" },
	{ "add to the register", { adrp(1, 1), add_imm(1, 1, 4) }, 2, 1, -1, 0,
	  "its base register is set by something other than adrp" },
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
	assert_string_equal(arg.reason, "section anchor .LANCHOR0: no adrp sets its base register in straight-line code before the site");

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
		/* Low bits of a label: read from instructions on arm64. */
		{ &usdt__arch_riscv64, "-4@%lo(.LANCHOR0)(a5)", "section anchor .LANCHOR0: its low bits are read from instructions on arm64 only" },
	};
	struct fake_file f = { .load_err = -ENOENT };
	struct usdt__arg arg;
	size_t i;

	(void)state;
	for (i = 0; i < USDT__ARRAY_SIZE(cases); i++) {
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
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_same_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
