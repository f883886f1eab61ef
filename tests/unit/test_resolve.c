// SPDX-License-Identifier: BSD-2-Clause
/* Resolution cases that cross the parsers and the symbol table. */
#include <elf.h>

#include "test_util.h"
#include "base/internal.h"
#include "reader/arch_ops.h"
#include "reader/symtab.h"

static void parse(const struct usdt__site_ctx *site, const char *s,
		  struct usdt__arg *arg)
{
	usdt__arg_parse_one(site, s, 0, strlen(s), arg);
}

/* s390x passes a 16-byte value in a register pair rN:rN+1, high half
 * first: the low 8 bytes that a 16-byte argument reads are in rN+1. */
static void test_s390x_register_pair(void **state)
{
	struct usdt__site_ctx site = { .arch = &usdt__arch_s390x,
				       .big_endian = true };
	struct usdt__arg arg;
	int r5 = usdt__arch_s390x.reg_off("r5", 2, NULL);

	assert_true(r5 > 0);
	parse(&site, "-16@%r4", &arg);
	assert_int_equal(arg.kind, USDT_ARG_REG);
	assert_int_equal(arg.spec.base_off, r5);
	assert_true(arg.spec.flags & USDT_SPEC_F_TRUNC);
	assert_true(arg.spec.flags & USDT_SPEC_F_SIGNED);
	assert_int_equal(arg.spec.size, 8);

	/* r15 has no successor. */
	parse(&site, "16@%r15", &arg);
	assert_int_equal(arg.kind, USDT_ARG_UNSUPPORTED);

	/* 8-byte values and little-endian pairs are not moved. */
	parse(&site, "8@%r4", &arg);
	assert_int_equal(arg.spec.base_off, r5 - 8);
	site.big_endian = false;
	parse(&site, "16@%r4", &arg);
	assert_int_equal(arg.spec.base_off, r5 - 8);
}

/* The fast code of an operand (usdt__arg_fast()), parsed as the manager
 * writes it: a whole register kept to size bytes, nothing else. */
static uint8_t fast_of(const struct usdt__site_ctx *site, const char *s)
{
	struct usdt__arg arg;

	parse(site, s, &arg);
	return usdt__arg_fast(&arg.spec);
}

static void test_arg_fast(void **state)
{
	struct usdt__site_ctx x86 = { .arch = &usdt__arch_x86_64 };
	struct usdt__site_ctx arm64 = { .arch = &usdt__arch_arm64 };
	struct usdt__site_ctx s390x = { .arch = &usdt__arch_s390x,
					.big_endian = true };
	struct usdt__arg arg;

	assert_int_equal(fast_of(&x86, "8@%rdi"), USDT_FAST_REG);
	assert_int_equal(fast_of(&x86, "-8@%r8"), USDT_FAST_REG | USDT_FAST_SIGNED);
	assert_int_equal(fast_of(&x86, "-4@%edx"),
			 USDT_FAST_REG | USDT_FAST_SIGNED | 32);
	assert_int_equal(fast_of(&x86, "4@%ecx"), USDT_FAST_REG | 32);
	assert_int_equal(fast_of(&x86, "2@%si"), USDT_FAST_REG | 48);
	assert_int_equal(fast_of(&x86, "-1@%dil"),
			 USDT_FAST_REG | USDT_FAST_SIGNED | 56);
	/* The register's word, at its offset. */
	parse(&x86, "1@%r8b", &arg);
	assert_int_equal(arg.spec.base_off % 8, 0);
	assert_int_equal(usdt__arg_fast(&arg.spec), USDT_FAST_REG | 56);
	/* A byte inside a word, memory, constants, indexed or IP-relative
	 * operands: the general reader, which keeps the size the same way. */
	assert_int_equal(fast_of(&x86, "1@%ah"), 56);
	assert_int_equal(fast_of(&x86, "-4@8(%r9)"), USDT_FAST_SIGNED | 32);
	assert_int_equal(fast_of(&x86, "-8@(%r9)"), USDT_FAST_SIGNED);
	assert_int_equal(fast_of(&x86, "2@$7"), 48);
	assert_int_equal(fast_of(&x86, "-8@(%rax,%r10,8)"), USDT_FAST_SIGNED);
	parse(&x86, "-4@g_val(%rip)", &arg);
	arg.spec.kind = USDT_SPEC_MEM;	/* as with a symbol table */
	arg.spec.flags |= USDT_SPEC_F_IPREL;
	assert_int_equal(usdt__arg_fast(&arg.spec), USDT_FAST_SIGNED | 32);
	/* Unsupported: nothing to read. */
	assert_int_equal(fast_of(&x86, "8f@%xmm0"), 0);
	assert_int_equal(fast_of(&arm64, "-4@x3"),
			 USDT_FAST_REG | USDT_FAST_SIGNED | 32);
	assert_int_equal(fast_of(&arm64, "8@[sp, 16]"), 0);
	assert_int_equal(fast_of(&arm64, "-2@[sp, 16]"), USDT_FAST_SIGNED | 48);
	/* s390x: a 16-byte argument's low half, the next register; the
	 * checked read returns it with -E2BIG (the low bits). */
	assert_int_equal(fast_of(&s390x, "-16@%r4"),
			 USDT_FAST_REG | USDT_FAST_SIGNED | E2BIG);
	assert_int_equal(fast_of(&x86, "16@(%rdi)"), E2BIG);
	assert_int_equal(fast_of(&s390x, "4@%r2"), USDT_FAST_REG | 32);
	/* Specs of other shapes than the parsers write. */
	memset(&arg.spec, 0, sizeof(arg.spec));
	arg.spec.kind = USDT_SPEC_VALUE;
	arg.spec.idx_off = USDT_REG_NONE;
	arg.spec.size = 3;
	assert_int_equal(usdt__arg_fast(&arg.spec), 0);
	arg.spec.size = 8;
	assert_int_equal(usdt__arg_fast(&arg.spec), USDT_FAST_REG);
	arg.spec.val_off = 1;
	assert_int_equal(usdt__arg_fast(&arg.spec), 0);
	arg.spec.kind = USDT_SPEC_UNSUPPORTED;
	arg.spec.val_off = 0;
	assert_int_equal(usdt__arg_fast(&arg.spec), 0);
}

/* sym@GOTPCREL(%rip) reads the GOT slot whenever the file has one, even
 * for a symbol it defines: the executable may have copy-relocated it. */
/* A spec for the x86-64 argument string args, as the manager builds one
 * (usdt__spec_windows() on the parsed arguments). */
static void win_spec(const char *args, struct usdt_spec *spec)
{
	struct usdt__site_ctx x86 = { .arch = &usdt__arch_x86_64 };
	struct usdt__arg *a;
	const char *why;
	int i, cnt;

	memset(spec, 0, sizeof(*spec));
	assert_int_equal(usdt__args_parse(&x86, args, &a, &cnt, &why), 0);
	spec->arg_cnt = (uint16_t)cnt;
	for (i = 0; i < cnt; i++)
		spec->args[i] = a[i].spec;
	free(a);
	usdt__spec_windows(spec);
}

/* Which arguments the window holds (window 1: arg_win's number), and the
 * offset of each inside it, for a few argument strings. */
static void test_spec_windows(void **state)
{
	static const struct {
		const char *args;
		int win_cnt;
		int win[5];	/* 1: in the window, 0: read alone */
		int pos[5];
	} cases[] = {
		/* Four stack slots within 22 bytes of %rsp, a register, a
		 * constant: one window of 22 bytes from 8(%rsp). */
		{ "8@16(%rsp) -4@8(%rsp) 8@%rdi -2@24(%rsp) 1@29(%rsp) 4@$5",
		  1, { 1, 1, 0, 1, 1 }, { 8, 0, 0, 16, 21 } },
		/* Two bases: the one with more arguments. */
		{ "8@-16(%rbp) 8@16(%rsp) -4@-8(%rbp) 8@24(%rsp) 1@-1(%rbp)",
		  1, { 1, 0, 1, 0, 1 }, { 0, 0, 8, 0, 15 } },
		/* Exactly 32 bytes fit; 33 do not. */
		{ "8@0(%rsp) 8@24(%rsp)", 1, { 1, 1 }, { 0, 24 } },
		{ "8@0(%rsp) 8@25(%rsp)", 0, { 0, 0 }, { 0, 0 } },
		/* An index register, a register value, %rip: read alone. */
		{ "8@8(%rsp,%rax,8) 8@16(%rsp) 8@%rsp 4@g(%rip)", 0,
		  { 0, 0, 0, 0 }, { 0 } },
		/* A lone operand per base: no window. */
		{ "8@8(%rsp) 8@8(%rbp) 8@8(%rdi)", 0, { 0, 0, 0 }, { 0 } },
		/* An offset below the first argument's widens the window;
		 * a span too wide starts a candidate of its own, and the
		 * one with the most arguments wins. */
		{ "4@20(%rdi) 8@100(%rdi) 8@0(%rdi) 2@30(%rdi) 8@90(%rdi)",
		  1, { 1, 0, 1, 1, 0 }, { 20, 0, 0, 30, 0 } },
	};
	struct usdt_spec spec;
	size_t c;
	int i;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		win_spec(cases[c].args, &spec);
		print_message("%s\n", cases[c].args);
		assert_int_equal(spec.win_cnt, cases[c].win_cnt);
		for (i = 0; i < spec.arg_cnt && i < 5; i++) {
			int aw = spec.arg_win[i];

			assert_int_equal(aw >> USDT_WIN_SHIFT, cases[c].win[i]);
			if (aw)
				assert_int_equal(aw & USDT_WIN_POS_MASK,
						 cases[c].pos[i]);
		}
		if (!spec.win_cnt)
			assert_int_equal(spec.wins[0].len, 0);
		else
			assert_true(spec.wins[0].len >= 2 &&
				    spec.wins[0].len <= USDT_WIN_MAX);
	}
	/* The first case's window: 8(%rsp) to 30(%rsp), 22 bytes. */
	win_spec(cases[0].args, &spec);
	assert_int_equal(spec.wins[0].off, 8);
	assert_int_equal(spec.wins[0].len, 22);
	assert_int_equal(spec.wins[0].base_off, spec.args[0].base_off);
	/* Negative offsets: the window starts at -16(%rbp). */
	win_spec(cases[1].args, &spec);
	assert_int_equal(spec.wins[0].off, -16);
	assert_int_equal(spec.wins[0].len, 16);
	assert_int_equal(spec.wins[0].base_off, spec.args[0].base_off);
}

/* On a tie the first candidate wins; the others' arguments are read alone. */
static void test_spec_windows_tie(void **state)
{
	struct usdt_spec spec;

	win_spec("8@0(%rax) 8@0(%rbx) 8@8(%rbx) 8@8(%rax)", &spec);
	assert_int_equal(spec.win_cnt, 1);
	assert_int_equal(spec.arg_win[0] >> USDT_WIN_SHIFT, 1);
	assert_int_equal(spec.arg_win[3], 1 << USDT_WIN_SHIFT | 8);
	assert_int_equal(spec.arg_win[1], 0);
	assert_int_equal(spec.arg_win[2], 0);
}

static void test_gotpcrel_prefers_slot(void **state)
{
	struct usdt__symtab *st = usdt__symtab_new();
	struct usdt__site_ctx site = { .arch = &usdt__arch_x86_64,
				       .symtab = st, .vaddr = 0x1000,
				       .is_dyn = true };
	struct usdt__arg arg;

	assert_non_null(st);
	assert_int_equal(usdt__symtab_add(st, "both", 0x4000, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "both", 0, 0x3ff0), 0);
	assert_int_equal(usdt__symtab_add(st, "defonly", 0x5000, 0), 0);

	parse(&site, "8@both@GOTPCREL(%rip)", &arg);
	assert_int_equal(arg.kind, USDT_ARG_PCREL);
	assert_int_equal(arg.offset, 0x3ff0 - 0x1000);
	assert_int_equal(arg.spec.kind, USDT_SPEC_MEM);
	assert_true(arg.spec.flags & USDT_SPEC_F_IPREL);

	parse(&site, "8@defonly@GOTPCREL(%rip)", &arg);
	assert_int_equal(arg.kind, USDT_ARG_PCADDR);
	assert_int_equal(arg.offset, 0x5000 - 0x1000);
	assert_int_equal(arg.spec.kind, USDT_SPEC_VALUE);
	usdt__symtab_free(st);
}

/* "[x0, #:lo12:sym]": x0 holds the symbol's page (adrp), the operand its
 * low 12 bits; that holds at any load bias, so no IP is involved. */
static void test_arm64_lo12(void **state)
{
	struct usdt__symtab *st = usdt__symtab_new();
	struct usdt__site_ctx site = { .arch = &usdt__arch_arm64,
				       .symtab = st, .vaddr = 0x700,
				       .is_dyn = true };
	struct usdt__arg arg;

	assert_int_equal(usdt__symtab_add(st, "counter", 0x411238, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "ext", 0, 0x10fe8), 0);
	parse(&site, "8@[x0, #:lo12:counter]", &arg);
	assert_int_equal(arg.kind, USDT_ARG_DEREF);
	assert_string_equal(arg.base, "x0");
	assert_int_equal(arg.offset, 0x238);
	assert_int_equal(arg.spec.val_off, 0x238);
	assert_int_equal(arg.spec.base_off, 0);
	assert_false(arg.spec.flags & USDT_SPEC_F_IPREL);
	parse(&site, "-4@[x2, :lo12:counter+12]", &arg);
	assert_int_equal(arg.kind, USDT_ARG_DEREF);
	assert_int_equal(arg.offset, 0x244);
	/* The GOT slot's low bits; reading it gives the symbol's address. */
	parse(&site, "8@[x1, #:got_lo12:ext]", &arg);
	assert_int_equal(arg.kind, USDT_ARG_DEREF);
	assert_int_equal(arg.offset, 0xfe8);
	assert_int_equal(arg.spec.base_off, 8);
	parse(&site, "8@[x1, #:got_lo12:counter]", &arg);
	assert_int_equal(arg.kind, USDT_ARG_UNSUPPORTED);
	assert_non_null(strstr(arg.reason, "no GOT slot"));
	parse(&site, "8@[x1, #:lo12:nosuch]", &arg);
	assert_int_equal(arg.kind, USDT_ARG_UNSUPPORTED);
	usdt__symtab_free(st);
}

/* "%lo(gv)(a4)" after "lui a4, %hi(gv)": read at gv itself, not at a4
 * plus the low bits, because the linker may have relaxed the lui away
 * (gp-relative loads) and a4 then holds anything; in a PIE the address
 * follows the load bias. */
static void test_riscv_lo(void **state)
{
	struct usdt__symtab *st = usdt__symtab_new();
	struct usdt__site_ctx site = { .arch = &usdt__arch_riscv64,
				       .symtab = st, .vaddr = 0x10500 };
	struct usdt__arg arg;
	uint64_t gv = 0x12834;

	(void)state;
	assert_int_equal(usdt__symtab_add(st, "gv", gv, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "low", 0x12400, 0), 0);
	parse(&site, "-4@%lo(gv)(a4)", &arg);
	assert_int_equal(arg.kind, USDT_ARG_ABS);
	assert_string_equal(arg.base, "a4");	/* as written */
	assert_int_equal(arg.offset, gv);
	assert_int_equal(arg.spec.base_off, USDT_REG_NONE);
	assert_int_equal(arg.spec.val_off, gv);
	parse(&site, "8@%lo(low+8)(a5)", &arg);
	assert_int_equal(arg.kind, USDT_ARG_ABS);
	assert_int_equal(arg.offset, 0x12408);
	site.is_dyn = true;
	parse(&site, "-4@%lo(gv)(a4)", &arg);
	assert_int_equal(arg.kind, USDT_ARG_PCREL);
	assert_int_equal(arg.offset, gv - 0x10500);
	assert_int_equal(arg.spec.flags & USDT_SPEC_F_IPREL, USDT_SPEC_F_IPREL);
	usdt__symtab_free(st);
}

/* s390x symbol forms: the address as a value, or a symbolic displacement. */
static void test_s390x_symbols(void **state)
{
	struct usdt__symtab *st = usdt__symtab_new();
	struct usdt__site_ctx site = { .arch = &usdt__arch_s390x,
				       .symtab = st, .vaddr = 0x1000,
				       .big_endian = true };
	struct usdt__arg arg;

	assert_int_equal(usdt__symtab_add(st, "tbl", 0x2000, 0), 0);
	parse(&site, "8@tbl", &arg);
	assert_int_equal(arg.kind, USDT_ARG_CONST);
	assert_int_equal(arg.value, 0x2000);
	parse(&site, "8@tbl+16", &arg);
	assert_int_equal(arg.kind, USDT_ARG_CONST);
	assert_int_equal(arg.value, 0x2010);
	parse(&site, "-4@tbl+4(%r1)", &arg);
	assert_int_equal(arg.kind, USDT_ARG_DEREF);
	assert_int_equal(arg.offset, 0x2004);
	/* In a shared object both move with the load bias. */
	site.is_dyn = true;
	parse(&site, "8@tbl+16", &arg);
	assert_int_equal(arg.kind, USDT_ARG_PCADDR);
	assert_int_equal(arg.offset, 0x1010);
	parse(&site, "-4@tbl+4(%r1)", &arg);
	assert_int_equal(arg.kind, USDT_ARG_DEREF);
	assert_true(arg.spec.flags & USDT_SPEC_F_IPREL);
	assert_int_equal(arg.spec.val_off, 0x1004);
	usdt__symtab_free(st);
}

/*
 * s390x with STAP_SDT_ARG_CONSTRAINT=g: a bare "sym" is the value at sym
 * (a PC-relative memory operand) or its address (an immediate), written
 * alike. The rule of bare_symbol() in src/reader/arch/s390x.c, case by case
 * (gcc -O2 -fno-section-anchors prints all of these for tests/fixtures/
 * shapes.c).
 */
static void test_s390x_bare_symbol_rule(void **state)
{
	static const struct {
		const char *str;
		enum usdt_arg_kind kind;
		uint64_t where;	/* ABS: the address read; CONST: the value */
	} cases[] = {
		/* Not 8 bytes, a float, or signed: never an address. */
		{ "-4@g_int", USDT_ARG_ABS, 0x2000 },
		{ "-2@g_int+2", USDT_ARG_ABS, 0x2002 },
		{ "1@g_str", USDT_ARG_ABS, 0x2020 },
		{ "4f@g_float", USDT_ARG_ABS, 0x2030 },
		{ "8f@g_double", USDT_ARG_ABS, 0x2038 },
		{ "-8@g_long", USDT_ARG_ABS, 0x2008 },
		/* Unsigned 8 bytes: an 8-byte object's value ... */
		{ "8@g_ulong", USDT_ARG_ABS, 0x2010 },
		/* ... else an address: of a smaller or larger object, a
		 * function, or a place inside an object. */
		{ "8@g_int", USDT_ARG_CONST, 0x2000 },
		{ "8@g_str", USDT_ARG_CONST, 0x2020 },
		{ "8@func", USDT_ARG_CONST, 0x1100 },
		{ "8@g_ulong+8", USDT_ARG_CONST, 0x2018 },
		/* A symbolic displacement is memory, as before. */
		{ "8@g_ulong(%r1)", USDT_ARG_DEREF, 0x2010 },
	};
	struct usdt__symtab *st = usdt__symtab_new();
	struct usdt__site_ctx site = { .arch = &usdt__arch_s390x,
				       .symtab = st, .vaddr = 0x1000,
				       .big_endian = true };
	static const struct {
		const char *name;
		uint64_t addr, size;	/* size 0: a function */
	} syms[] = {
		{ "g_int", 0x2000, 4 }, { "g_long", 0x2008, 8 },
		{ "g_ulong", 0x2010, 8 }, { "g_str", 0x2020, 16 },
		{ "g_float", 0x2030, 4 }, { "g_double", 0x2038, 8 },
		{ "func", 0x1100, 0 },
	};
	struct usdt__arg arg;
	size_t i;

	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		assert_int_equal(usdt__symtab_add(st, syms[i].name,
						  syms[i].addr, 0), 0);
		if (syms[i].size)
			usdt__symtab_set_obj_size(st, syms[i].name,
						  syms[i].size);
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t got;

		parse(&site, cases[i].str, &arg);
		got = arg.kind == USDT_ARG_CONST ? arg.value :
						   (uint64_t)arg.offset;
		if (arg.kind != cases[i].kind || got != cases[i].where)
			fail_msg("'%s': %s %#llx, want %s %#llx (%s)",
				 cases[i].str, usdt_arg_kind_str(arg.kind),
				 (unsigned long long)got,
				 usdt_arg_kind_str(cases[i].kind),
				 (unsigned long long)cases[i].where,
				 arg.reason);
	}
	/* Two objects of one name with different sizes: size unknown, so
	 * the address. */
	usdt__symtab_set_obj_size(st, "g_ulong", 4);
	parse(&site, "8@g_ulong", &arg);
	assert_int_equal(arg.kind, USDT_ARG_CONST);
	usdt__symtab_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_s390x_register_pair),
		cmocka_unit_test(test_arg_fast),
		cmocka_unit_test(test_spec_windows),
		cmocka_unit_test(test_spec_windows_tie),
		cmocka_unit_test(test_gotpcrel_prefers_slot),
		cmocka_unit_test(test_arm64_lo12),
		cmocka_unit_test(test_riscv_lo),
		cmocka_unit_test(test_s390x_symbols),
		cmocka_unit_test(test_s390x_bare_symbol_rule),
	};

	return cmocka_run_group_tests_name("resolve", tests, NULL, NULL);
}
