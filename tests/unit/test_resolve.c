// SPDX-License-Identifier: BSD-2-Clause
/* Resolution cases that cross the parsers and the symbol table. */
#include <elf.h>

#include "test_util.h"
#include "internal.h"

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

/* sym@GOTPCREL(%rip) reads the GOT slot whenever the file has one, even
 * for a symbol it defines: the executable may have copy-relocated it. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_s390x_register_pair),
		cmocka_unit_test(test_gotpcrel_prefers_slot),
	};

	return cmocka_run_group_tests_name("resolve", tests, NULL, NULL);
}
