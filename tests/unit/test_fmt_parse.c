// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace`'s per-probe formats without a kernel: what fmt_parse()
 * makes of printf's conversions (and refuses), which arguments the BPF
 * side is told to read as strings and how, and how a conversion prints
 * an event's values; str(argN, argM) in formats and the filter. The
 * tool's sources are compiled in, for their static functions.
 */
#include "test_util.h"

#include "../../tools/common.c"
#include "../../tools/trace_fmt.c"
#include "../../tools/trace_filter.c"
#include "../../tools/trace_stack.c"
#include "../../tools/trace_peek.c"
#include "../../tools/trace_time.c"

/* trace_sum.c's, which on_hit() hands --slower-than's records to. */
int sum_print_slow(const struct sum_state *s, const struct trace_slow *e,
		   int64_t wall_off)
{
	(void)s;
	(void)e;
	(void)wall_off;
	return 0;
}

static void parse_ok(const char *s, struct probe_fmt *f)
{
	char why[256] = "";

	if (fmt_parse(s, f, why, sizeof(why)))
		fail_msg("'%s': %s", s, why);
}

/* Conversions, their parts and the text between them. */
static void test_parse_parts(void **state)
{
	struct probe_fmt f;
	const struct conv *c;

	parse_ok("100%% %s called with %-08.3hd!", &f);
	assert_int_equal(f.conv_cnt, 2);
	assert_int_equal(f.arg_need, 2);
	assert_int_equal(f.convs[0].lit_len, strlen("100%% "));
	c = &f.convs[1];
	assert_int_equal(c->c, 'd');
	assert_string_equal(c->flags, "-0");
	assert_int_equal(c->width, 8);
	assert_int_equal(c->prec, 3);
	assert_int_equal(c->size, 2);
	assert_int_equal(c->arg, 1);
	assert_string_equal(f.tail, "!");

	/* '*': the width and the precision come first, as in printf. */
	parse_ok("%*.*x %.d %i %X %o", &f);
	c = &f.convs[0];
	assert_int_equal(c->width_arg, 0);
	assert_int_equal(c->prec_arg, 1);
	assert_int_equal(c->arg, 2);
	assert_int_equal(f.convs[1].prec, 0);
	assert_int_equal(f.convs[1].arg, 3);
	assert_int_equal(f.arg_need, 7);

	/* Numbered: in any order, more than once. */
	parse_ok("%3$d %1$*2$s %3$lx", &f);
	assert_int_equal(f.conv_cnt, 3);
	assert_int_equal(f.convs[0].arg, 2);
	assert_int_equal(f.convs[1].arg, 0);
	assert_int_equal(f.convs[1].width_arg, 1);
	assert_int_equal(f.convs[2].arg, 2);
	assert_int_equal(f.arg_need, 3);
}

static void test_parse_lengths(void **state)
{
	static const struct {
		const char *s;
		int size;
	} cases[] = {
		{ "%d", 0 }, { "%hhu", 1 }, { "%hd", 2 }, { "%li", 8 },
		{ "%llx", 8 }, { "%zu", 8 }, { "%jd", 8 }, { "%tX", 8 },
		{ "%ho", 2 }, { "%lf", 8 },
	};
	struct probe_fmt f;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parse_ok(cases[i].s, &f);
		assert_int_equal(f.convs[0].size, cases[i].size);
	}
}

/* What the BPF side is told to read. */
static void test_parse_strings(void **state)
{
	struct probe_fmt f;
	const struct trace_probe_cfg *c = &f.str_cfg;

	parse_ok("%.5s %s %d %p", &f);
	assert_int_equal(c->str_mask, 0x3);
	assert_int_equal(c->fixed_mask, 0);
	assert_int_equal(c->str_max[0], 6);
	assert_int_equal(c->str_max[1], 0);

	/* The longest precision wins; none at all means -s. */
	parse_ok("%1$.3s %1$.9s %2$.2s %2$s", &f);
	assert_int_equal(c->str_mask, 0x3);
	assert_int_equal(c->str_max[0], 10);
	assert_int_equal(c->str_max[1], 0);
	parse_ok("%.4000s", &f);
	assert_int_equal(c->str_max[0], TRACE_STR_MAX);

	/* %.*s: exactly the count its length argument gives. */
	parse_ok("%d %.*s", &f);
	assert_int_equal(c->str_mask, 0x4);
	assert_int_equal(c->fixed_mask, 0x4);
	assert_int_equal(c->len_arg[2], 1);
	parse_ok("%2$.*1$s %2$.*1$s %3$s", &f);
	assert_int_equal(c->str_mask, 0x6);
	assert_int_equal(c->fixed_mask, 0x2);
	assert_int_equal(c->len_arg[1], 0);
	assert_int_equal(f.arg_need, 3);
}

static void test_parse_errors(void **state)
{
	static const struct {
		const char *s, *why;
	} cases[] = {
		{ "%q", "'%q': unknown conversion '%q' (use %s %d %i %u %x %X %o %p %c %f)" },
		{ "%", "'%': the format ends inside a conversion" },
		{ "ab %-08", "'%-08': the format ends inside a conversion" },
		{ "%1$d %d", "'%d': numbered (%N$) and unnumbered conversions or '*' do not mix: number all or none" },
		{ "%*1$d", "'%*1$d': numbered (%N$) and unnumbered conversions or '*' do not mix: number all or none" },
		{ "%13$d", "'%13$d': no such argument (a probe has at most 12, from %1$)" },
		{ "%99999999999$d", "'%99999999999$d': no such argument" },
		{ "%0$d", "'%0$': arguments are numbered from 1 (%1$)" },
		{ "%d%d%d%d%d%d%d%d%d%d%d%d%d", "'%d': more than 12 arguments" },
		{ "%Lf", "'%L': length modifier 'L' is not supported (use hh h l ll z j t)" },
		{ "%ls", "'%ls': %s takes no length modifier (wide characters are not supported)" },
		{ "%hc", "'%hc': %c takes no length modifier (wide characters are not supported)" },
		{ "%llf", "'%llf': %f takes no length modifier" },
		{ "%hhp", "'%hhp': %p takes no length modifier" },
		{ "%+u", "'%+u': flag '+' does not go with %u" },
		{ "%#i", "'%#i': flag '#' does not go with %i" },
		{ "%05s", "'%05s': flag '0' does not go with %s" },
		{ "%-#p", "'%-#p': flag '#' does not go with %p" },
		{ "%'d", "'%'': flag ''' (locale digits) is not supported" },
		{ "%Id", "'%I': flag 'I' (locale digits) is not supported" },
		{ "%.1p", "'%.1p': %p takes no precision" },
		{ "%.*c", "'%.*c': %c takes no precision" },
		{ "%4097d", "'%4097': the width is more than 4096" },
		{ "%.4097f", "'%.4097': the precision is more than 4096" },
		{ "%1$.*2$s %1$s", "argument 0 (%1$) is a string both with a length argument (%.*s) and without" },
		{ "%1$s %1$.*2$s", "argument 0 (%1$) is a string both with a length argument (%.*s) and without" },
		{ "%2$.*1$s %2$.*3$s", "argument 1 (%2$) is a string with two length arguments" },
	};
	struct probe_fmt f;
	char why[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why[0] = '\0';
		if (fmt_parse(cases[i].s, &f, why, sizeof(why)) != -EINVAL)
			fail_msg("'%s' parsed", cases[i].s);
		if (!strstr(why, cases[i].why))
			fail_msg("'%s': '%s', not '%s'", cases[i].s, why,
				 cases[i].why);
	}

	/* 24 conversions at most (an argument may be shown twice). */
	{
		char s[26 * 4 + 1] = "";

		for (i = 0; i < 25; i++)
			strcat(s, "%1$d");
		assert_int_equal(fmt_parse(s, &f, why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, "more than 24 conversions"));
		s[24 * 4] = '\0';
		parse_ok(s, &f);
	}
}

/* Conversion 0 of fmt on an event whose arguments are args: as text, or
 * as JSON. */
static void expect_print(const char *fmt, const uint64_t *args, int cnt,
			 const char *str, bool json, const char *want)
{
	static const struct arg_fmt type = { .is_signed = true, .size = 8 };
	struct usdt_hit e = { .arg_cnt = cnt };
	struct probe_fmt f;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	parse_ok(fmt, &f);
	memcpy(e.args, args, (size_t)cnt * sizeof(args[0]));
	out = open_memstream(&buf, &len);
	assert_non_null(out);
	print_conv(out, &f.convs[0], &e, &type, str, json);
	fclose(out);
	if (strcmp(buf, want))
		fail_msg("'%s': '%s', not '%s'", fmt, buf, want);
	free(buf);
}

static void test_print(void **state)
{
	const uint64_t v[] = { 0x1ff, 0x18000, (uint64_t)-3, 1ull << 40, 0 };

	expect_print("%hhu", v, 1, NULL, false, "255");
	expect_print("%2$hd", v, 2, NULL, false, "-32768");
	expect_print("%2$hu", v, 2, NULL, true, "32768");
	expect_print("%#06x", v, 1, NULL, false, "0x01ff");
	expect_print("%3$+d", v, 3, NULL, false, "-3");
	expect_print("%3$hhx", v, 3, NULL, false, "fd");
	expect_print("%3$u", v, 3, NULL, false, "18446744073709551613");
	/* '*': a negative width is '-'; a huge one is clamped. */
	expect_print("%*d", (const uint64_t[]){ (uint64_t)-4, 7 }, 2, NULL,
		     false, "7   ");
	expect_print("%*d", (const uint64_t[]){ 1ull << 40, 7 }, 2, NULL,
		     true, "7");
	expect_print("%5$p", v, 5, NULL, false, "(nil)");
	expect_print("%5$6p", v, 5, NULL, false, " (nil)");
	expect_print("%-7p", v, 1, NULL, false, "0x1ff  ");
	expect_print("%5$s", v, 5, NULL, false, "(null)");
	expect_print("%5$8s", v, 5, NULL, false, "  (null)");
	expect_print("%5$s", v, 5, NULL, true, "null");
	/* Precision from an argument: negative is 0 (nothing read), huge
	 * prints what was read. */
	expect_print("%3$.*1$s", v, 3, "a\tb", false, "a\\tb");
	expect_print("%.*s", (const uint64_t[]){ (uint64_t)-3, 1 }, 2, "abc",
		     false, "");
	expect_print("%.*s", (const uint64_t[]){ 1ull << 40, 1 }, 2, "abc",
		     false, "abc");
	/* Widths count what is shown, escapes included. */
	expect_print("%-8.3s", v, 1, "a\033bcd", false, "a\\x1bb  ");
	expect_print("%8.3s", v, 1, "a\033bcd", false, "  a\\x1bb");
	expect_print("%.2s", v, 1, "a\033bcd", true, "\"a\\u001b\"");
	expect_print("%3c", (const uint64_t[]){ '\n' }, 1, NULL, false,
		     " \\n");
	expect_print("%-3c", (const uint64_t[]){ 'x' }, 1, NULL, false,
		     "x  ");
}

/* '"FMT", EXPR, ...': each conversion takes its EXPR, an argument or a
 * typed load (values TRACE_MAX_ARGS + k). */
static void test_parse_loads(void **state)
{
	char why[256] = "";
	struct probe_fmt f;
	const struct trace_load *l;

	if (fmt_parse_word("\"a=%d b=%u c=%s d=%x\", *(int32 *)(arg2 + 16), "
			   "*(unsigned char *)arg3, arg1, *(u64*)(arg0 - 0x8)",
			   &f, why, sizeof(why)))
		fail_msg("%s", why);
	assert_int_equal(f.conv_cnt, 4);
	assert_int_equal(f.convs[0].arg, TRACE_MAX_ARGS);
	assert_int_equal(f.convs[1].arg, TRACE_MAX_ARGS + 1);
	assert_int_equal(f.convs[2].arg, 1);
	assert_int_equal(f.convs[3].arg, TRACE_MAX_ARGS + 2);
	assert_int_equal(f.str_cfg.load_cnt, 3);
	l = f.str_cfg.loads;
	assert_int_equal(l[0].arg, 2);
	assert_int_equal(l[0].size, 4);
	assert_int_equal(l[0].is_signed, 1);
	assert_int_equal(l[0].off, 16);
	assert_int_equal(l[1].arg, 3);
	assert_int_equal(l[1].size, 1);
	assert_int_equal(l[1].is_signed, 0);
	assert_int_equal(l[1].off, 0);
	assert_int_equal(l[2].size, 8);
	assert_int_equal(l[2].off, -8);
	/* The string is arg1's, and the probe needs four arguments. */
	assert_int_equal(f.str_cfg.str_mask, 1u << 1);
	assert_int_equal(f.arg_need, 4);
	assert_string_equal(f.text, "a=%d b=%u c=%s d=%x");
	free(f.text);

	/* A quoted format with \" inside, %N$ over the values. */
	if (fmt_parse_word("\"\\\"%2$d\\\" %1$d\", arg0, *(short *)arg5",
			   &f, why, sizeof(why)))
		fail_msg("%s", why);
	assert_int_equal(f.convs[0].arg, TRACE_MAX_ARGS);
	assert_int_equal(f.convs[1].arg, 0);
	assert_int_equal(f.arg_need, 6);
	assert_int_equal(f.str_cfg.loads[0].size, 2);
	free(f.text);

	/* %s of a pointer load, and str() of one: value TRACE_MAX_ARGS + k
	 * is a string; eight loads fit. */
	if (fmt_parse_word("\"%s %.5s %d %d %d %d %d %d\", *(uint64 *)(arg1 + 8), "
			   "str(*(u64 *)arg0), *(int *)arg0, *(int *)arg0, "
			   "*(int *)arg0, *(int *)arg0, *(int *)arg0, *(int *)arg0",
			   &f, why, sizeof(why)))
		fail_msg("%s", why);
	assert_int_equal(f.str_cfg.load_cnt, 8);
	assert_int_equal(f.str_cfg.str_mask, 3u << TRACE_MAX_ARGS);
	assert_int_equal(f.str_cfg.str_max[TRACE_MAX_ARGS], 0);
	assert_int_equal(f.str_cfg.str_max[TRACE_MAX_ARGS + 1], 6);
	assert_int_equal(f.str_cfg.loads[0].off, 8);
	assert_int_equal(f.str_cfg.loads[1].arg, 0);
	assert_int_equal(f.arg_need, 2);
	free(f.text);
}

static void test_parse_load_errors(void **state)
{
	static const char *const bad[] = {
		"\"%d", "\"%d\", arg12", "\"%d\", *(float *)arg0",
		"\"%d\", *(int *)(arg0 * 2)", "\"%d %d\", arg0",
		"\"%s\", *(int *)arg0", "\"%d\" arg0",
		"\"%d\", *(int *)(arg0 + 99999999999)",
		/* A ninth load: at most eight. */
		"\"%d%d%d%d%d%d%d%d%d\", *(int *)arg0, *(int *)arg0, *(int *)arg0, *(int *)arg0, *(int *)arg0, *(int *)arg0, *(int *)arg0, *(int *)arg0, *(int *)arg0",
		/* %s of a load narrower than a pointer; str() of one. */
		"\"%s\", *(uint32 *)arg0", "\"%s\", str(*(int16 *)arg0)",
		"\"%s\", str(*(uint64 *)arg0", "\"%d\", str(*(uint64 *)arg0)",
	};
	char why[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct probe_fmt f;

		why[0] = '\0';
		if (fmt_parse_word(bad[i], &f, why, sizeof(why)) != -EINVAL)
			fail_msg("'%s' was taken", bad[i]);
		if (!why[0])
			fail_msg("'%s': no reason", bad[i]);
	}
}

/* str(argN) and str(argN, argM), as --by, formats and the filter take
 * them: what is consumed, and what is refused (nothing consumed). */
static void test_str_expr(void **state)
{
	static const struct {
		const char *s;
		int err, arg, len, used;
	} cases[] = {
		{ "str(arg0)", 0, 0, -1, 9 },
		{ "str(arg3, arg4) == \"x\"", 0, 3, 4, 15 },
		{ "str( arg11 ,arg0 )", 0, 11, 0, 18 },
		{ "str(arg1, arg1)", -EINVAL, 0, 0, 0 },
		{ "str(arg12)", -ERANGE, 0, 0, 0 },
		{ "str(arg1, arg99)", -ERANGE, 0, 0, 0 },
		{ "str(arg1", -EINVAL, 0, 0, 0 },
		{ "str(arg1,)", -EINVAL, 0, 0, 0 },
		{ "str(arg1x)", -EINVAL, 0, 0, 0 },
		{ "str(pid)", -EINVAL, 0, 0, 0 },
		{ "arg0", -EINVAL, 0, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = cases[i].s;
		int a = -5, n = -5, err = trace_str_expr(&p, &a, &n);

		if (err != cases[i].err)
			fail_msg("'%s': %d, want %d", cases[i].s, err,
				 cases[i].err);
		assert_int_equal(p - cases[i].s, cases[i].used);
		if (err)
			continue;
		assert_int_equal(a, cases[i].arg);
		assert_int_equal(n, cases[i].len);
	}
}

/* A quoted format's str(argN, argM) is %.*s of argN with argM's length;
 * str(argN) a plain %s; the filter's compares argM's count of bytes. */
static void test_parse_str_values(void **state)
{
	static const char *const bad[] = {
		"\"%d\", str(arg0)", "\"%.3s\", str(arg0, arg1)",
		"\"%.*s\", arg1, str(arg0, arg1)", "\"%*s\", str(arg2), arg0",
		"\"%s\", str(arg0, arg0)",
	};
	struct trace_filter flt;
	char why[256] = "";
	struct probe_fmt f;
	size_t i;

	if (fmt_parse_word("\"%s.%-9s %s\", str(arg1, arg2), str(arg3,arg4), "
			   "str(arg7)", &f, why, sizeof(why)))
		fail_msg("%s", why);
	assert_int_equal(f.conv_cnt, 3);
	assert_int_equal(f.convs[0].arg, 1);
	assert_int_equal(f.convs[0].prec_arg, 2);
	assert_int_equal(f.convs[1].arg, 3);
	assert_int_equal(f.convs[1].prec_arg, 4);
	assert_int_equal(f.convs[1].width, 9);
	assert_int_equal(f.convs[2].arg, 7);
	assert_int_equal(f.convs[2].prec_arg, -1);
	assert_int_equal(f.str_cfg.str_mask, (1u << 1) | (1u << 3) | (1u << 7));
	assert_int_equal(f.str_cfg.fixed_mask, (1u << 1) | (1u << 3));
	assert_int_equal(f.str_cfg.len_arg[1], 2);
	assert_int_equal(f.str_cfg.len_arg[3], 4);
	assert_int_equal(f.arg_need, 8);
	free(f.text);
	/* The length argument is needed too, past the string's. */
	if (fmt_parse_word("\"%s\", str(arg0, arg5)", &f, why, sizeof(why)))
		fail_msg("%s", why);
	assert_int_equal(f.arg_need, 6);
	free(f.text);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (fmt_parse_word(bad[i], &f, why, sizeof(why)) != -EINVAL)
			fail_msg("'%s' was taken", bad[i]);
		if (!why[0])
			fail_msg("'%s': no reason", bad[i]);
	}

	if (filter_parse("str(arg2, arg5) == \"GET\" || str(arg1) != \"x\"",
			 &flt, why, sizeof(why)))
		fail_msg("%s", why);
	assert_int_equal(flt.term_cnt, 2);
	assert_int_equal(flt.terms[0].operand, 2);
	assert_int_equal(flt.terms[0].len_arg, 6);
	assert_int_equal(flt.terms[0].op, TRACE_SEQ);
	assert_int_equal(flt.terms[0].value, 3);
	assert_string_equal(flt.strs[0], "GET");
	assert_int_equal(flt.terms[1].operand, 1);
	assert_int_equal(flt.terms[1].len_arg, 0);
	assert_int_equal(flt.terms[1].op, TRACE_SNE);
	assert_int_equal(filter_parse("str(arg0, arg1) == 3", &flt, why,
				      sizeof(why)), -EINVAL);
	assert_int_equal(filter_parse("str(arg0) < \"a\"", &flt, why,
				      sizeof(why)), -EINVAL);
}

/* sym_name() of a copy of name: what --ustack prints for it (free()). */
static char *printed_name(const char *name)
{
	struct stack_sym sym = { .name = strdup(name) };
	const char *got;

	assert_non_null(sym.name);
	got = sym_name(&sym);
	assert_ptr_equal(got, sym.name);
	assert_true(sym.demangled);
	return sym.name;
}

/* "_ZN" and n identifiers of len bytes each (a, b, c...), "Ev": the
 * method a::b::...() of the mangling g++ uses. */
static char *nested_name(int n, int len)
{
	char *s = malloc(4 + (size_t)n * ((size_t)len + 8) + 3), *p = s;
	int i;

	assert_non_null(s);
	p += sprintf(p, "_ZN");
	for (i = 0; i < n; i++) {
		p += sprintf(p, "%d", len);
		memset(p, 'a' + i, (size_t)len);
		p += len;
	}
	strcpy(p, "Ev");
	return s;
}

/*
 * --ustack's C++ names: demangled by the system's libstdc++ where it has
 * one (Debian always has: apt needs it), cut to STACK_NAME_MAX bytes;
 * left as they are without it, for C names, for what does not demangle
 * and past STACK_DEMANGLE_IN bytes.
 */
static void test_demangle(void **state)
{
	bool have = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD) ||
		    dlopen("libstdc++.so.6", RTLD_LAZY);
	char *n, *in;

	(void)state;
	n = printed_name("_ZN2tf6object4fireEi");
	assert_string_equal(n, have ? "tf::object::fire(int)" :
				      "_ZN2tf6object4fireEi");
	free(n);
	n = printed_name("main");
	assert_string_equal(n, "main");
	free(n);
	n = printed_name("_Zgarbage");
	assert_string_equal(n, "_Zgarbage");
	free(n);
	/* 3 * 200 bytes and "::" twice and "()": cut, with "...". */
	in = nested_name(3, 200);
	assert_true(strlen(in) <= STACK_DEMANGLE_IN);
	n = printed_name(in);
	if (have) {
		assert_int_equal(strlen(n), STACK_NAME_MAX - 1);
		assert_int_equal(strspn(n, "a"), 200);
		assert_int_equal(strncmp(n + 200, "::bb", 4), 0);
		assert_string_equal(n + STACK_NAME_MAX - 4, "...");
	} else {
		assert_string_equal(n, in);
	}
	free(n);
	free(in);
	/* Too long to demangle at all. */
	in = nested_name(5, 250);
	assert_true(strlen(in) > STACK_DEMANGLE_IN);
	n = printed_name(in);
	assert_string_equal(n, in);
	free(n);
	free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_parts),
		cmocka_unit_test(test_parse_lengths),
		cmocka_unit_test(test_parse_strings),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_parse_loads),
		cmocka_unit_test(test_parse_load_errors),
		cmocka_unit_test(test_str_expr),
		cmocka_unit_test(test_parse_str_values),
		cmocka_unit_test(test_demangle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
