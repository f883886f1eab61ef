// SPDX-License-Identifier: BSD-2-Clause
/* Splitting argument strings and reading the "[-]SIZE[f]@" prefix. */
#include <elf.h>

#include "test_util.h"
#include "base/internal.h"
#include "reader/arch_ops.h"

struct split_case {
	const char *str;
	int cnt;
	const char *args[USDT_MAX_ARG_CNT];
	int sizes[USDT_MAX_ARG_CNT]; /* negative: signed */
};

static const struct split_case split_cases[] = {
	{ "", 0, {}, {} },
	{ "   ", 0, {}, {} },
	{ "-4@%edi", 1, { "-4@%edi" }, { -4 } },
	{ "-4@%edi 8@-16(%rbp) -2@(%rdx,%rax,2)", 3,
	  { "-4@%edi", "8@-16(%rbp)", "-2@(%rdx,%rax,2)" }, { -4, 8, -2 } },
	{ "-4@[sp, 132] 8@x0", 2, { "-4@[sp, 132]", "8@x0" }, { -4, 8 } },
	{ "  1@$1   2@$2  ", 2, { "1@$1", "2@$2" }, { 1, 2 } },
	{ "8f@%xmm0 -16@-32(%rbp) 4f@-4(%rbp)", 3,
	  { "8f@%xmm0", "-16@-32(%rbp)", "4f@-4(%rbp)" }, { 8, -16, 4 } },
	/* A space inside an operand that is not before an argument. */
	{ "-4@[x0, #:lo12:sym] 8@[x1, x2, lsl 3]", 2,
	  { "-4@[x0, #:lo12:sym]", "8@[x1, x2, lsl 3]" }, { -4, 8 } },
	{ "1@a 1@b 1@c 1@d 1@e 1@f 1@g 1@h 1@i 1@j 1@k 1@l", 12,
	  { "1@a", "1@b", "1@c", "1@d", "1@e", "1@f", "1@g", "1@h", "1@i",
	    "1@j", "1@k", "1@l" },
	  { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 } },
	/* Without sizes (old notes, assembler probes): one operand a word,
	 * a register as wide as its name, anything else a long. */
	{ "%eax %bx -8(%rbp)", 3, { "%eax", "%bx", "-8(%rbp)" }, { 4, 2, 8 } },
};

static void test_split_table(void **state)
{
	struct usdt__site_ctx site = { .arch = &usdt__arch_x86_64 };
	size_t i;
	int j;

	for (i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++) {
		const struct split_case *c = &split_cases[i];
		struct usdt__arg *args;
		const char *why;
		int cnt;

		assert_int_equal(usdt__args_parse(&site, c->str, &args, &cnt,
						  &why), 0);
		assert_int_equal(cnt, c->cnt);
		for (j = 0; j < cnt; j++) {
			size_t len = strlen(c->args[j]);
			int sz = c->sizes[j];

			if (len != args[j].str_len ||
			    memcmp(c->str + args[j].str_pos, c->args[j], len))
				fail_msg("case %zu arg %d: got '%.*s', want '%s'",
					 i, j, args[j].str_len,
					 c->str + args[j].str_pos, c->args[j]);
			assert_int_equal(args[j].size, sz < 0 ? -sz : sz);
			assert_int_equal(args[j].is_signed, sz < 0);
		}
		free(args);
	}
}

static void test_split_too_many(void **state)
{
	struct usdt__site_ctx site = { .arch = &usdt__arch_x86_64 };
	struct usdt__arg *args = (void *)1;
	const char *why = NULL;
	int cnt = 5;

	assert_int_equal(usdt__args_parse(&site,
		"1@a 1@b 1@c 1@d 1@e 1@f 1@g 1@h 1@i 1@j 1@k 1@l 1@m",
		&args, &cnt, &why), -E2BIG);
	assert_null(args);
	assert_int_equal(cnt, 0);
	assert_non_null(why);
}

static void test_bad_sizes(void **state)
{
	static const char *const bad[] = { "3@%eax", "0@%eax", "32@%eax",
					   "99999999999@%eax", "-@%eax" };
	struct usdt__site_ctx site = { .arch = &usdt__arch_x86_64 };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct usdt__arg arg;

		usdt__arg_parse_one(&site, bad[i], 0, strlen(bad[i]), &arg);
		assert_int_equal(arg.kind, USDT_ARG_UNSUPPORTED);
		assert_int_equal(arg.spec.kind, USDT_SPEC_UNSUPPORTED);
		assert_true(arg.reason[0] != '\0');
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_table),
		cmocka_unit_test(test_split_too_many),
		cmocka_unit_test(test_bad_sizes),
	};

	return cmocka_run_group_tests_name("split", tests, NULL, NULL);
}
