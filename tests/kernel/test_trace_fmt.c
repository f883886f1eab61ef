// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace` beyond plain events, run as a user would run it against
 * tests/fixtures/trace_fmt_target: formats with strings, per-site types,
 * every integer width read from memory, escaping, --count,
 * --hist, --latency, --filter, and how the tool behaves with signals,
 * closed pipes, full disks, zombies, broken notes and capabilities.
 * Needs root and BPF.
 */
#include <bpf/bpf.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "trace_test.h"

#define TF FIXTURE_DIR "/trace_fmt_target"
#define MANY FIXTURE_DIR "/many_probes"

static bool process_exists(pid_t pid)
{
	return !kill(pid, 0) || errno != ESRCH;
}

/* Does the JSON object at json have a "wall" time, UTC, from t0 to t1
 * (whole seconds)? */
static bool wall_within(const char *json, time_t t0, time_t t1)
{
	const char *w = strstr(json, "\"wall\": \"");
	struct tm tm = { 0 };
	const char *rest;
	time_t t;

	if (!w || w > strchr(json, '\n'))
		return false;
	rest = strptime(w + 9, "%Y-%m-%dT%H:%M:%S.", &tm);
	if (!rest || strspn(rest, "0123456789") != 9 || rest[9] != 'Z')
		return false;
	t = timegm(&tm);
	return t >= t0 && t <= t1;
}

/* ---------------------------------------------------------------------- */
/* Values                                                                 */

/* %s reads the strings in BPF; text escapes them, JSON is exact. */
static void test_format_strings(void **state)
{
	static const struct {
		const char *fmt, *want;
	} cases[] = {
		{ "<%s> %s #%d%%", " tf:str <hello\\tworld\\x1b[31m> round #2%\n" },
		{ "%s %s %x", " round 2\n" },
		{ "%s %s %c", " round \\x02\n" },
		{ "%s %s %u", " round 2\n" },
		{ "%s %s %f", " round 2\n" },
		{ "%p %s %d", " tf:str 0x" },
	};
	struct run_result r;
	time_t t0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		run_ok(&r, "trace", "-c", TF " 2", TF, "tf:str",
			 cases[i].fmt);
		expect_in(r.out, cases[i].want);
		assert_null(strchr(r.out, '\033'));
		run_result_free(&r);
	}

	t0 = time(NULL);
	run_ok(&r, "trace", "--json", "-c", TF " 1", TF, "tf:str",
		 "%s %s %d");
	assert_true(wall_within(strchr(r.out, '{'), t0, time(NULL)));
	expect_in(r.out, "\"args\": [\"hello\\tworld\\u001b[31m\", \"round\", 1]}");
	/* And the line's text as it prints without --json, escapes and
	 * all. */
	expect_in(r.out, ", \"text\": \"hello\\\\tworld\\\\x1b[31m round 1\", \"args\": [");
	run_result_free(&r);

	/* A bounded length: -s 4 keeps three bytes and the NUL. */
	run_ok(&r, "trace", "-s", "4", "-c", TF " 1", TF, "tf:str", "%s %s");
	expect_in(r.out, " tf:str hel rou\n");
	run_result_free(&r);
}

static void test_format_errors(void **state)
{
	static const struct {
		const char *pattern, *fmt, *message;
	} cases[] = {
		{ "tf:str", "%s %q", "unknown conversion '%q'" },
		{ "tf:val", "%d %d", "tf:val: has 1 arguments; its format wants 2" },
		{ NULL, "%d", "follows no pattern" },
		{ "tf:fmt", "%11$d", "tf:fmt: has 10 arguments; its format wants 11" },
		{ "tf:fmt", "%d %d %d %d %d %d %d %d %d %*d", "tf:fmt: has 10 arguments; its format wants 11" },
		{ "tf:fmt", "%1$d %d", "format '%1$d %d': '%d': numbered (%N$) and unnumbered conversions or '*' do not mix: number all or none" },
		{ "tf:fmt", "%d %2$d", "'%2$d': numbered (%N$) and unnumbered" },
		{ "tf:fmt", "%1$*d", "'%1$*d': numbered (%N$) and unnumbered" },
		{ "tf:fmt", "%13$d", "'%13$d': no such argument (a probe has at most 12, from %1$)" },
		{ "tf:fmt", "%0$d", "'%0$': arguments are numbered from 1 (%1$)" },
		{ "tf:fmt", "%ls", "'%ls': %s takes no length modifier (wide characters are not supported)" },
		{ "tf:fmt", "%lc", "'%lc': %c takes no length modifier (wide characters are not supported)" },
		{ "tf:fmt", "%hp", "'%hp': %p takes no length modifier" },
		{ "tf:fmt", "%hhf", "'%hhf': %f takes no length modifier" },
		{ "tf:fmt", "%Lf", "'%L': length modifier 'L' is not supported (use hh h l ll z j t)" },
		{ "tf:fmt", "%+s", "'%+s': flag '+' does not go with %s" },
		{ "tf:fmt", "%#d", "'%#d': flag '#' does not go with %d" },
		{ "tf:fmt", "%0p", "'%0p': flag '0' does not go with %p" },
		{ "tf:fmt", "% u", "'% u': flag ' ' does not go with %u" },
		{ "tf:fmt", "%.3c", "'%.3c': %c takes no precision" },
		{ "tf:fmt", "%.2p", "'%.2p': %p takes no precision" },
		{ "tf:fmt", "%99999d", "'%99999': the width is more than 4096" },
		{ "tf:fmt", "%.5000s", "'%.5000': the precision is more than 4096" },
		{ "tf:fmt", "%n", "'%n': unknown conversion '%n' (use %s %d %i %u %x %X %o %p %c %f)" },
		{ "tf:fmt", "%e", "unknown conversion '%e'" },
		{ "tf:fmt", "x %5", "'%5': the format ends inside a conversion" },
		{ "tf:fmt", "%1$.*2$s %1$s", "argument 0 (%1$) is a string both with a length argument (%.*s) and without" },
		{ "tf:fmt", "%1$.*2$s %1$.*4$s", "argument 0 (%1$) is a string with two length arguments" },
		{ "tf:fmt", "\"%d\", str(arg0)", "value 1 is str(): a string, for %s only" },
		{ "tf:fmt", "\"%.3s\", str(arg0, arg1)", "value 1 is str(argN, argM), which gives its length: %s takes no precision then" },
		{ "tf:fmt", "\"%s\", str(arg0, arg0)", "cannot parse value 1 at 'str(arg0, arg0)'" },
		{ "tf:val", "\"%s\", str(arg0, arg1)", "; its format wants 2" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct run_result r;

		if (cases[i].pattern)
			run_fails(&r, cases[i].message, "trace", TF,
				  cases[i].pattern, cases[i].fmt);
		else
			run_fails(&r, cases[i].message, "trace", TF,
				  cases[i].fmt);
	}
}

/* Run one round of the target and expect " PROBE WANT\n" in the text
 * output (or, json, "\"args\": [WANT]}" in the JSON). */
static void expect_format(const char *probe, const char *fmt,
			  const char *size, bool json, const char *want)
{
	char line[512];
	struct run_result r;

	if (json)
		run_ok(&r, "trace", "-j", "-s", size, "-c", TF " 1", TF, probe,
		       fmt);
	else
		run_ok(&r, "trace", "-s", size, "-c", TF " 1", TF, probe, fmt);
	if (json)
		snprintf(line, sizeof(line), "\"args\": [%s]}\n", want);
	else
		snprintf(line, sizeof(line), " %s %s\n", probe, want);
	expect_in(r.out, line);
	assert_null(strchr(r.out, '\033'));
	run_result_free(&r);
}

/* printf's flags, widths and precisions, and %i %X %o; the width counts
 * what is shown, escapes included. */
static void test_format_printf(void **state)
{
	expect_format("tf:str",
		      "[%1$-8.5s] [%2$8s] [%1$-14.7s] [%3$5d|%3$-5d|%3$05d|%3$+d|%3$ d|%3$#x|%3$#o|%3$X|%3$i|%3$.3u]",
		      "64", false,
		      "[hello   ] [   round] [hello\\tw      ] [    1|1    |00001|+1| 1|0x1|01|1|1|001]");
	/* Width and precision from arguments: tf:fmt's 6 and -3 (a
	 * negative width is '-', a negative precision none). */
	expect_format("tf:fmt", "[%10$*2$d] [%10$*5$d] [%10$.*5$d]", "64",
		      false, "[     1] [1  ] [1]");
	/* A double: %f alone is the shortest decimal that reads back. */
	expect_format("tf:fmt", "%9$.3f|%9$8.2f|%9$-8.1f|%9$f|%9$+.0f|%9$08.3f",
		      "64", false, "3.142|    3.14|3.1     |3.14159|+3|0003.142");
	/* JSON: the values, not the padding. */
	expect_format("tf:fmt", "%10$05d %9$8.2f %1$-9.*2$s", "64", true,
		      "1, 3.14159, \"method\"");
}

/* Length modifiers take the argument at their width. */
static void test_format_length(void **state)
{
	/* tf:fmt's 0x1ff and 0x18000. */
	expect_format("tf:fmt",
		      "%7$hhu %8$hd %7$hhx %7$hX %8$hu %8$hhd %7$lo %8$zu %8$ji %8$td %7$llx %8$hi",
		      "64", false,
		      "255 -32768 ff 1FF 32768 0 777 98304 98304 98304 1ff -32768");
	expect_format("tf:fmt", "%7$hhu %8$hd %8$hu", "64", true,
		      "255, -32768, 32768");
	/* Every width of tf:mem, taken narrower still. */
	expect_format("tf:mem", "%hhi %08hhx %#hhx %#o %X %5.3hd %-7hu| %lli",
		      "64", false,
		      "-2 000000fe 0xcc 0177334 FFFFFFFFEDCBA988 -17768 12817  | -81985529216486896");
}

/*
 * Bounded strings. tf:fmt's "method" is 6 bytes at the end of a page, no
 * NUL, an unmapped page after it: %s faults there, %.*s and %.6s read
 * only its 6 bytes. A length longer than -s is clamped to -s - 1 bytes;
 * a negative one is 0, never "read to the NUL".
 */
static void test_format_bounded(void **state)
{
	static const char digits[] = "0123456789012345678901234567890123456789"
		"01234567890123456789012";	/* 63 */
	struct run_result r;
	char want[128];

	expect_format("tf:fmt", "%1$.*2$s|[%1$-9.*2$s]|%3$.4s|%3$.0s|%3$.s|",
		      "64", false, "method|[method   ]|0123|||");
	expect_format("tf:fmt", "%1$.6s|%1$.3s", "64", false, "method|met");
	/* 2^40 bytes: the tool's 63; -3: none. */
	snprintf(want, sizeof(want), "%s|", digits);
	expect_format("tf:fmt", "%3$.*4$s|", "64", false, want);
	expect_format("tf:fmt", "[%3$.*5$s]", "64", false, "[]");
	expect_format("tf:fmt", "%3$.*4$s|%1$.*4$s", "4", false, "012|met");
	expect_format("tf:fmt", "%3$.70s", "8", false, "0123456");
	expect_format("tf:fmt", "%1$.*4$s %3$.*5$s", "4", true,
		      "\"met\", \"\"");

	/* What %s does to it: the read faults, said once. */
	run_ok(&r, "trace", "-q", "-c", TF " 2", TF, "tf:fmt", "%s");
	assert_int_equal(count_str(r.out, " tf:fmt ?\n"), 2);
	expect_in(r.err, "usdt: trace: tf:fmt: argument 0 cannot be read: Bad address\n");
	assert_int_equal(count_lines(r.err), 1);
	run_result_free(&r);
}

/*
 * str(argN, argM): a string of argM's count of bytes, no NUL needed, as
 * hotspot passes its names. tf:fmt's "method" (6 bytes at a page's end,
 * arg1 = 6) in a format, as a --by key and in the filter; a length past
 * the limits is clamped (-s - 1 bytes, --by's 63), a negative one is 0.
 */
static void test_str_counted(void **state)
{
	static const char digits[] = "0123456789012345678901234567890123456789"
		"01234567890123456789012";	/* 63 */
	static const struct {
		const char *expr;
		int hits;	/* of tf:fmt in 3 rounds */
	} filters[] = {
		{ "str(arg0, arg1) == \"method\"", 3 },
		{ "str(arg0, arg1) == \"metho\"", 0 },
		{ "str(arg0, arg1) == \"methods\"", 0 },
		{ "str(arg0, arg1) != \"metho\"", 3 },
		{ "str(arg2, arg1) == \"012345\" && arg9 == 2", 1 },
		{ "str(arg2, arg4) == \"\"", 3 },
	};
	struct run_result r;
	char want[128];
	size_t i;

	expect_format("tf:fmt", "\"%s|%-8s|%s|\", str(arg0, arg1), "
		      "str(arg0, arg1), str(arg2, arg4)", "64", false,
		      "method|method  ||");
	expect_format("tf:fmt", "\"%s\", str(arg2, arg3)", "8", false,
		      "0123456");
	expect_format("tf:fmt", "\"%s %d\", str(arg0, arg1), arg9", "64",
		      true, "\"method\", 1");
	run_ok(&r, "trace", "-q", "--count", "--by", "str(arg0, arg1)", "-c",
	       TF " 3", TF, "tf:fmt");
	expect_in(r.out, "\n           3 tf:fmt method\n");
	run_result_free(&r);
	snprintf(want, sizeof(want), "\n           2 tf:fmt %s\n", digits);
	run_ok(&r, "trace", "-q", "--count", "--by", "str(arg2,arg3)", "-c",
	       TF " 2", TF, "tf:fmt");
	expect_in(r.out, want);
	run_result_free(&r);
	for (i = 0; i < ARRAY_SIZE(filters); i++) {
		run_ok(&r, "trace", "-q", "--filter", filters[i].expr, "-c",
		       TF " 3", TF, "tf:fmt", "%10$d");
		if (count_str(r.out, " tf:fmt ") != filters[i].hits)
			fail_msg("'%s': %d hits, want %d:\n%s", filters[i].expr,
				 count_str(r.out, " tf:fmt "), filters[i].hits,
				 r.out);
		run_result_free(&r);
	}
	run_fails(&r, "usdt: trace: no matching probe has argument 3, which --by reads",
		  "trace", "--count", "--by", "str(arg0, arg3)", TF, "tf:val");
	run_fails(&r, "usdt: trace: no matching probe has argument 4, which the filter reads",
		  "trace", "--filter", "str(arg0, arg4) == \"x\"", TF, "tf:val");
}

/*
 * --by with a key of several parts: each a column in the order given
 * (JSON: "values"), the counts per whole key. A second --by, an argument
 * in two parts, and too many parts or strings are errors.
 */
static void test_by_parts(void **state)
{
	struct run_result r;

	run_ok(&r, "trace", "-q", "--count", "--by",
	       "str(arg0, arg1), arg9,str(arg2,arg1)", "-c", TF " 3", TF,
	       "tf:fmt");
	expect_in(r.out, "\n           1 tf:fmt method 1 012345\n"
		  "           1 tf:fmt method 2 012345\n"
		  "           1 tf:fmt method 3 012345\n");
	run_result_free(&r);
	/* One key, all hits: tf:str's second string and its 6 bytes. */
	run_ok(&r, "trace", "-q", "--count", "--by", "arg1,str(arg0, arg1)",
	       "-c", TF " 3", TF, "tf:fmt");
	expect_in(r.out, "\n           3 tf:fmt 6 method\n");
	run_result_free(&r);
	run_ok(&r, "trace", "-q", "-j", "--count", "--by", "str(arg0,arg1),arg9",
	       "-c", TF " 2", TF, "tf:fmt");
	expect_in(r.out, "\"counts\": [{\"probe\": \"tf:fmt\", \"values\": [\"method\", 1], \"count\": 1}, {\"probe\": \"tf:fmt\", \"values\": [\"method\", 2], \"count\": 1}]}\n");
	run_result_free(&r);
	run_fails(&r, "usdt: trace: --by given twice ('arg0', then 'arg1'): give one --by, its parts joined by commas, as in --by 'arg0,arg1'\n",
		  "trace", "--count", "--by", "arg0", "--by", "arg1", TF);
	run_fails(&r, "usdt: trace: --by 'arg0,str(arg0)': arg0 is in two parts\n",
		  "trace", "--count", "--by", "arg0,str(arg0)", TF);
	run_fails(&r, "usdt: trace: --by 'arg0,arg1,arg2,arg3,arg4': more than 4 parts\n",
		  "trace", "--count", "--by", "arg0,arg1,arg2,arg3,arg4", TF);
	run_fails(&r, "usdt: trace: --by 'str(arg0),str(arg1),str(arg2)': more than 2 strings\n",
		  "trace", "--count", "--by", "str(arg0),str(arg1),str(arg2)",
		  TF);
	run_fails(&r, "usdt: trace: bad --by 'arg0,'", "trace", "--count",
		  "--by", "arg0,", TF);
}

/*
 * --count --sum ARGN: a column of the argument's sum after each count, per
 * probe, per pid and per --by key; signed as the probe types it (tf:mixed's
 * -1s, its first site an int64); JSON "sum". Without --count, an error.
 */
static void test_count_sum(void **state)
{
	struct run_result r;
	char want[256];

	/* tf:val is r - 1: 0 + 1 + 2 + 3. */
	run_ok(&r, "trace", "-q", "--count", "--sum", "arg0", "-c", TF " 4",
	       TF, "tf:val", "tf:mixed");
	expect_in(r.out, "\n           4              6 tf:val\n"
		  "           8             -8 tf:mixed\n");
	run_result_free(&r);
	run_ok(&r, "trace", "-q", "--count", "--by", "str(arg0, arg1)",
	       "--sum", "9", "-c", TF " 4", TF, "tf:fmt");
	expect_in(r.out, "\n           4             10 tf:fmt method\n");
	run_result_free(&r);
	run_ok(&r, "trace", "-q", "-j", "--count", "--by-pid", "--sum", "arg0",
	       "-c", TF " 3", TF, "tf:val");
	snprintf(want, sizeof(want), "\"counts\": [{\"probe\": \"tf:val\", \"pid\": %d, \"count\": 3, \"sum\": 3}]}\n",
		 atoi(strstr(r.out, "pid ") + 4));
	expect_in(r.out, want);
	run_result_free(&r);
	run_fails(&r, "usdt: trace: --sum goes with --count\n", "trace",
		  "--sum", "arg0", TF);
	run_fails(&r, "usdt: trace: bad argument number for --sum (0 to 11)\n",
		  "trace", "--count", "--sum", "arg12", TF);
}

/*
 * --latency --slower-than: a line per pair at least that slow, as its END
 * hits (tf:start, 20 ms, tf:done: every round's at 10ms, none at 1.5s),
 * and the summary. A time needs its unit; it goes with --latency.
 */
static void test_latency_slow(void **state)
{
	struct run_result r;
	const char *p;
	unsigned long long ns;
	int n = 0;

	run_ok(&r, "trace", "-q", "--latency", "tf:start", "tf:done",
	       "--slower-than", "10ms", "-c", TF " 3 20", TF);
	/* Not the summary's "latency tf:start -> tf:done (ns)". */
	for (p = r.out; (p = strstr(p, "name tf:start -> tf:done ")); n++) {
		assert_int_equal(sscanf(p, "name tf:start -> tf:done %llu ns\n",
					&ns), 1);
		assert_true(ns >= 20000000ull && ns < 2000000000ull);
		p++;
	}
	assert_int_equal(n, 3);
	run_result_free(&r);
	run_ok(&r, "trace", "-q", "--latency", "tf:start", "tf:done",
	       "--slower-than", "1.5s", "-c", TF " 2 20", TF);
	assert_null(strstr(r.out, "name tf:start -> tf:done "));
	run_result_free(&r);
	run_fails(&r, "usdt: trace: bad --slower-than '10' (a time above 0 with its unit: 500us, 10ms, 1.5s, 200ns)\n",
		  "trace", "--latency", "tf:start", "tf:done", "--slower-than",
		  "10", TF);
	run_fails(&r, "usdt: trace: --slower-than goes with --latency\n",
		  "trace", "--count", "--slower-than", "1ms", TF);
}

/* A file with no USDT note at all is said so, with or without patterns:
 * "no probes matching x:y" sent users looking for the wrong name. */
static void test_no_notes(void **state)
{
	struct run_result r;

	run_fails(&r, "usdt: trace: '/bin/true' has no USDT probes (no .note.stapsdt section)\n",
		  "trace", "/bin/true");
	run_fails(&r, "usdt: trace: '/bin/true' has no USDT probes (no .note.stapsdt section)\n",
		  "trace", "/bin/true", "x:y", "%d");
	/* A file that has notes, none matching: the pattern is what is
	 * wrong. */
	run_fails(&r, "no probes matching nosuch:probe", "trace", TF,
		  "nosuch:probe");
}

/* --text-only: each line is the FORMAT's text alone (or the arguments),
 * as a script would read the program's own output. */
static void test_text_only(void **state)
{
	struct run_result r;

	run_ok(&r, "trace", "-q", "--text-only", "-c", TF " 2", TF, "tf:str",
	       "[%2$s %3$d]", "tf:fmt", "\"%s.%d\", str(arg0, arg1), arg9",
	       "tf:val");
	expect_in(r.out, "\n[round 1]\n0\nmethod.1\n[round 2]\n1\nmethod.2\n");
	run_result_free(&r);
	run_fails(&r, "usdt: trace: --text-only goes with events' text, not with --json, --count, --hist or --latency\n",
		  "trace", "--text-only", "-j", TF);
	run_fails(&r, "usdt: trace: --text-only goes with events' text",
		  "trace", "--text-only", "--count", TF);
}

/* A %.*s whose arguments come as (pointer, length), as tf:fmt's "method"
 * and 6 do: the string's argument is no pointer (signed), the length's
 * looks like one; the warning says how to write it. Not for the right
 * order. */
static void test_swapped_hint(void **state)
{
	struct run_result r;

	run_ok(&r, "trace", "-q", "-c", TF " 1", TF, "tf:fmt", "%.*s");
	expect_in(r.err, "usdt: trace: tf:fmt: warning: %.*s takes the length (argument 0 here) before the string (argument 1: signed, 8 bytes, no pointer); for a (pointer, length) pair write %1$.*2$s, or '\"%s\", str(arg0, arg1)'\n");
	run_result_free(&r);
	run_ok(&r, "trace", "-q", "-c", TF " 1", TF, "tf:fmt", "%1$.*2$s");
	assert_null(strstr(r.err, "warning"));
	expect_in(r.out, " tf:fmt method\n");
	run_result_free(&r);
}

/* --time-unit: the TIME column with 3 (us), 6 (ms) or 9 (s) decimals,
 * and --slower-than's durations in the unit, said after them. */
static void test_time_unit(void **state)
{
	struct run_result r;
	const char *p, *line;
	unsigned long long ms, frac;
	int pid;

	run_ok(&r, "trace", "-q", "--time-unit", "us", "-c", TF " 1", TF,
	       "tf:val");
	pid = atoi(strstr(r.out, "pid ") + 4);
	p = strstr(r.out, " tf:val 0\n");
	assert_non_null(p);
	for (line = p; line > r.out && line[-1] != '\n'; line--)
		;
	/* digits '.' 3 digits ' ' PID */
	assert_true(strspn(line, "0123456789") > 0);
	p = line + strspn(line, "0123456789");
	assert_int_equal(*p, '.');
	assert_int_equal(strspn(p + 1, "0123456789"), 3);
	assert_int_equal(atoi(p + 5), pid);
	run_result_free(&r);
	run_ok(&r, "trace", "-q", "--time-unit", "ms", "--latency", "tf:start",
	       "tf:done", "--slower-than", "10ms", "-c", TF " 1 20", TF);
	p = strstr(r.out, "name tf:start -> tf:done ");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "name tf:start -> tf:done %llu.%llu ms\n",
				&ms, &frac), 2);
	assert_true(ms >= 20 && ms < 2000);
	assert_int_equal(strspn(strchr(p + 25, '.') + 1, "0123456789"), 6);
	run_result_free(&r);
	run_fails(&r, "usdt: trace: bad --time-unit 'h' (ns, us, ms or s)\n",
		  "trace", "--time-unit", "h", TF);
}

/*
 * --time-unit and --latency: the histogram's buckets are powers of two of
 * the unit (20 ms pairs in [16, 32) ms), and --by's total and mean
 * columns are in the unit, with its decimals (tf:str to tf:done: one
 * pair a round, 20 ms apart, under str(arg1), "round").
 */
static void test_time_unit_latency(void **state)
{
	unsigned long long cnt, tot, tot_f, mean, mean_f;
	struct run_result r;
	const char *p;

	run_ok(&r, "trace", "-q", "--time-unit", "ms", "--latency", "tf:start",
	       "tf:done", "-c", TF " 3 20", TF);
	expect_in(r.out, "latency tf:start -> tf:done (ms)\n");
	/* Three pairs of 20 ms and a bit: [16, 32) ms, or above on a
	 * loaded machine; never below. */
	p = strstr(r.out, "(ms)\n  [");
	assert_non_null(p);
	assert_true(atoi(p + 8) >= 16);
	expect_in(r.out, "unmatched starts: 1, unmatched ends: 0\n");
	run_result_free(&r);

	run_ok(&r, "trace", "-q", "-j", "--time-unit", "us", "--latency",
	       "tf:start", "tf:done", "-c", TF " 2 20", TF);
	expect_in(r.out, "\"unit\": \"us\", \"buckets\": [{\"low\": ");
	p = strstr(r.out, "{\"low\": ");
	/* 20 ms is in [16384, 32768) us. */
	assert_true(strtoull(p + 8, NULL, 10) >= 16384);
	run_result_free(&r);

	run_ok(&r, "trace", "-q", "--time-unit", "ms", "--latency", "tf:str",
	       "tf:done", "--by", "str(arg1)", "-c", TF " 3 20", TF);
	expect_in(r.out, "latency tf:str -> tf:done (ms): count, total, mean, key\n");
	p = strstr(r.out, "key\n");
	assert_int_equal(sscanf(p + 4, "%llu %llu.%llu %llu.%llu round\n", &cnt,
				&tot, &tot_f, &mean, &mean_f), 5);
	assert_int_equal(cnt, 3);
	assert_true(tot >= 60 && mean >= 20 && mean < 2000);
	assert_int_equal(strspn(strchr(p + 4, '.') + 1, "0123456789"), 6);
	run_result_free(&r);

	run_ok(&r, "trace", "-q", "-j", "--time-unit", "s", "--latency",
	       "tf:str", "tf:done", "--by", "str(arg1)", "-c", TF " 1 20", TF);
	expect_in(r.out, "\"unit\": \"s\", \"keys\": [{\"count\": 1, \"value\": \"round\", \"total\": 0.0");
	run_result_free(&r);
}

/* Numbered arguments, in any order and more than once. */
static void test_format_numbered(void **state)
{
	expect_format("tf:fmt", "%10$d %9$.2f %1$.*2$s %10$d %2$*10$d", "64",
		      false, "1 3.14 method 1 6");
	expect_format("tf:fmt", "%10$d %1$.*2$s %10$x", "64", true,
		      "1, \"method\", 1");
}

/* NULL pointers: %p (nil) and %s (null) as glibc prints them; null in
 * JSON for the string, 0 for the pointer. */
static void test_format_null(void **state)
{
	struct run_result r;

	expect_format("tf:fmt", "%6$p|%6$s|%6$8p|%6$-8s|%6$.3s|%6$-7p|", "64",
		      false, "(nil)|(null)|   (nil)|(null)  |(null)|(nil)  |");
	expect_format("tf:fmt", "%6$p %6$s", "64", true, "0, null");
	run_ok(&r, "trace", "-q", "-c", TF " 1", TF, "tf:fmt", "%6$s");
	assert_string_equal(r.err, "");
	run_result_free(&r);
}

/* Every integer width, signed and unsigned, from memory (a stack slot):
 * each value comes from its own bytes, on big-endian s390x too. */
static void test_memory_widths(void **state)
{
	static const char want[] = " tf:mem -2 254 -4660 65244 -305419896 "
		"4275878552 -81985529216486895 18364758544493064720\n";
	struct run_result r;

	run_ok(&r, "trace", "-c", TF " 2", TF, "tf:mem");
	assert_int_equal(count_str(r.out, want), 2);
	assert_int_equal(count_lines(r.out), 3);
	run_result_free(&r);

	run_ok(&r, "trace", "--json", "-c", TF " 1", TF, "tf:mem");
	expect_in(r.out, "\"args\": [-2, 254, -4660, 65244, -305419896, "
		  "4275878552, -81985529216486895, 18364758544493064720]}\n");
	run_result_free(&r);
}

/* Two call sites of tf:mixed, int64 then uint64, same bits: each prints
 * with its own type (the old tool printed both as the first). */
static void test_types_per_site(void **state)
{
	struct run_result r;

	run_ok(&r, "trace", "-c", TF " 2", TF, "tf:mixed");
	assert_int_equal(count_str(r.out, " tf:mixed -1\n"), 2);
	assert_int_equal(count_str(r.out, " tf:mixed 18446744073709551615\n"),
			 2);
	run_result_free(&r);
}

/* Control bytes of notes and process names never reach the terminal. */
static void test_escaping(void **state)
{
	struct run_result r;

	run_ok(&r, "trace", "-c", TF " 1", TF, "tf:evil*");
	expect_in(r.out, " tf\\x1bname tf:evil\\x1b[2J 1\n");
	assert_null(strchr(r.out, '\033'));
	run_result_free(&r);

	run_ok(&r, "trace", "-j", "-c", TF " 1", TF, "tf:evil*");
	expect_in(r.out, "\"comm\": \"tf\\u001bname\", \"provider\": \"tf\", \"name\": \"evil\\u001b[2J\", \"args\": [1]}");
	run_result_free(&r);
}

/* A malformed note is skipped with a warning; the rest is traced. */
static void test_broken_note(void **state)
{
	struct run_result r;

	run_ok(&r, "trace", "-c", TF " 2", TF);
	expect_in(r.err, "warning: skipping the call site of tf:broken at 0x");
	expect_in(r.err, "more than 12 arguments");
	assert_int_equal(count_str(r.out, " tf:val "), 2);
	assert_int_equal(count_str(r.out, " tf:start\n"), 3);
	assert_null(strstr(r.out, "tf:broken"));
	run_result_free(&r);

	/* Only the broken probe: nothing to trace, said clearly. */
	run_fails(&r, "no probes matching tf", "trace", TF, "tf:broken");
}

/* ---------------------------------------------------------------------- */
/* Summaries                                                              */

static void test_count(void **state)
{
	struct run_result r;
	char want[128];
	int pid;

	run_ok(&r, "trace", "--count", "-c", TF " 3", TF, "tf:*");
	expect_in(r.out, "           3 tf:str\n");
	expect_in(r.out, "           6 tf:mixed\n");
	expect_in(r.out, "           4 tf:start\n");
	expect_in(r.out, "           3 tf:done\n");
	/* Nothing of the events goes out. */
	assert_int_equal(count_str(r.out, "tf:str"), 1);
	assert_int_equal(count_str(r.out, "@ "), 1);
	expect_in(r.out, " s (end)\n");
	run_result_free(&r);

	run_ok(&r, "trace", "--count", "--by-pid", "--json", "-c", TF " 2",
		 TF, "tf:val");
	pid = atoi(strstr(r.out, "pid ") + 4);
	snprintf(want, sizeof(want),
		 "\"final\": true, \"lost\": 0, \"counts\": [{\"probe\": \"tf:val\", \"pid\": %d, \"count\": 2}]}\n",
		 pid);
	expect_in(r.out, want);
	run_result_free(&r);
}

/* -i: one document per interval, each with the hits since the last one;
 * together they add up. */
static void test_interval(void **state)
{
	struct run_result r;
	const char *p;
	int docs = 0, total = 0;
	time_t t0, t1;

	t0 = time(NULL);
	run_ok(&r, "trace", "--count", "-i", "0.2", "--json", "-c",
		 TF " 12 100", TF, "tf:val");
	t1 = time(NULL);
	for (p = r.out; (p = strstr(p, "{\"time\": ")); p++) {
		const char *c = strstr(p, "\"count\": ");
		const char *end = strchr(p, '\n');

		assert_true(wall_within(p, t0, t1));
		docs++;
		if (c && c < end)
			total += atoi(c + 9);
	}
	assert_true(docs >= 3);
	assert_int_equal(total, 12);
	assert_int_equal(count_str(r.out, "\"final\": true"), 1);
	run_result_free(&r);
}

/*
 * Intervals before any hit: nothing has been read from the map yet (no
 * buffer at all), and each prints its header with no counts. Under
 * SANITIZE=1 this was qsort(NULL, 0, ...), which UBSan stops at.
 */
static void test_interval_no_hits(void **state)
{
	struct run_result r;
	const char *p, *nl;
	int docs = 0;

	run_ok(&r, "trace", "-q", "--count", "-i", "0.1", "-c", "sleep 0.35", TF,
	       "tf:val");
	/* Only "@ TIME s" headers, each with its blank line. */
	for (p = r.out; *p; p = nl + 2) {
		nl = strchr(p, '\n');
		if (strncmp(p, "@ ", 2) || !nl || nl[1] != '\n')
			fail_msg("not an empty interval at '%s'", p);
		docs++;
	}
	assert_true(docs >= 3);
	assert_int_equal(count_str(r.out, " s (end)\n\n"), 1);
	assert_string_equal(r.err, "");
	run_result_free(&r);

	run_ok(&r, "trace", "--count", "-i", "0.1", "--json", "-c",
	       "sleep 0.35", TF, "tf:val");
	docs = count_lines(r.out);
	assert_true(docs >= 3);
	assert_int_equal(count_str(r.out, ", \"lost\": 0, \"counts\": []}\n"),
			 docs);
	assert_int_equal(count_str(r.out, "\"final\": true"), 1);
	run_result_free(&r);
}

/* tf:val is 0, 1, ..., 8: slots [0], [1,2), [2,4) x2, [4,8) x4, [8,16). */
static void test_hist(void **state)
{
	struct run_result r;

	run_ok(&r, "trace", "--hist", "arg0", "-c", TF " 9", TF, "tf:val");
	expect_in(r.out, "tf:val arg0\n");
	expect_in(r.out, "  [0]                             1 |");
	expect_in(r.out, "  [1, 2)                          1 |");
	expect_in(r.out, "  [2, 4)                          2 |");
	expect_in(r.out, "  [4, 8)                          4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|");
	expect_in(r.out, "  [8, 16)                         1 |");
	run_result_free(&r);

	run_ok(&r, "trace", "--hist", "0", "--json", "-c", TF " 3", TF,
		 "tf:val");
	expect_in(r.out, "\"hists\": [{\"probe\": \"tf:val\", \"arg\": 0, \"buckets\": [{\"low\": 0, \"high\": 1, \"count\": 1}, {\"low\": 1, \"high\": 2, \"count\": 1}, {\"low\": 2, \"high\": 4, \"count\": 1}]}]}\n");
	run_result_free(&r);

	/* Negative values (as signed 64-bit) have a bucket of their own. */
	run_ok(&r, "trace", "--hist", "0", "-c", TF " 2", TF, "tf:mixed");
	expect_in(r.out, "tf:mixed arg0\n  (< 0)                           4 |@@@@");
	run_result_free(&r);
	run_ok(&r, "trace", "--hist", "0", "-j", "-c", TF " 2", TF, "tf:mixed");
	expect_in(r.out, "\"buckets\": [{\"negative\": true, \"count\": 4}]");
	run_result_free(&r);

	run_fails(&r, "no matching probe has argument 3", "trace", "--hist",
		  "3", TF, "tf:val");
}

/* tf:start, 20 ms, tf:done, five times; then one tf:start left open. */
static void test_latency(void **state)
{
	struct run_result r;
	const char *b;
	int sum = 0;

	run_ok(&r, "trace", "--json", "--latency", "tf:start", "tf:done",
		 "-c", TF " 5 20", TF);
	expect_in(r.out, "\"latency\": {\"start\": \"tf:start\", \"end\": \"tf:done\", \"unit\": \"ns\", \"buckets\": [");
	expect_in(r.out, "\"unmatched_starts\": 1, \"unmatched_ends\": 0}}\n");
	/* 20 ms is in [16M, 32M) ns, or above on a slow machine. */
	for (b = r.out; (b = strstr(b, "{\"low\": ")); b++) {
		assert_true(strtoull(b + 8, NULL, 10) >= (1ull << 24));
		sum += atoi(strstr(b, "\"count\": ") + 9);
	}
	assert_int_equal(sum, 5);
	run_result_free(&r);

	run_ok(&r, "trace", "--latency", "tf:start", "tf:done", "-c",
		 TF " 2 1", TF);
	expect_in(r.out, "latency tf:start -> tf:done (ns)\n");
	expect_in(r.out, "unmatched starts: 1, unmatched ends: 0\n");
	run_result_free(&r);
}

/* The filter runs in BPF: exactly the hits it admits arrive. */
/*
 * Typed loads, '"FMT", EXPR, ...': bytes through tf:str's string pointers
 * ("hello\t..." and "round"), read in the kernel at the offsets given;
 * one through a non-pointer fails and says so.
 */
static void test_format_loads(void **state)
{
	char want[128];
	struct run_result r;
	uint16_t ro;

	memcpy(&ro, "ro", 2);	/* this host's byte order: the target's */
	snprintf(want, sizeof(want), " tf:str 104 o %u e round\n", ro);
	run_ok(&r, "trace", "-q", "-c", TF " 2", TF, "tf:str",
	       "\"%d %c %u %c %s\", *(uint8 *)arg0, *(char *)(arg1 + 1), "
	       "*(uint16 *)arg1, *(unsigned char *)(arg0 + 0x1), arg1");
	assert_int_equal(count_str(r.out, want), 2);
	run_result_free(&r);

	run_ok(&r, "trace", "-j", "-q", "-c", TF " 1", TF, "tf:str",
	       "\"%d\", *(int8 *)(arg1 - 0)");
	expect_in(r.out, "\"args\": [114]}");
	run_result_free(&r);

	/* arg2 is the round, 1: not a pointer. */
	run_ok(&r, "trace", "-c", TF " 1", TF, "tf:str",
	       "\"%d %d\", arg2, *(int64 *)arg2");
	expect_in(r.out, " tf:str 1 ?\n");
	expect_in(r.err, "tf:str: typed load 0 cannot be read: Bad address\n");
	run_result_free(&r);
}

/*
 * %s of a pointer loaded from memory, *(uint64 *)(arg0 + K): tf:obj's
 * struct fields, read in the kernel with -s's bound; "cold" is in a page
 * the process never touched (read again from user space), and NULL
 * prints as such. str() of a load is the same string.
 */
static void test_format_load_strings(void **state)
{
	struct run_result r;

	/* 300 ms after each hit for the read again (fire_obj()). */
	run_ok(&r, "trace", "-q", "-c", TF " 2 300", TF, "tf:obj",
	       "\"%s|%s|%s|%.3s|%d\", *(uint64 *)arg0, *(uint64 *)(arg0 + 8), "
	       "*(uint64 *)(arg0 + 16), str(*(u64 *)arg0), arg1");
	assert_int_equal(count_str(r.out, " tf:obj objname|cold|(null)|obj|1\n"), 1);
	assert_int_equal(count_str(r.out, " tf:obj objname|cold|(null)|obj|2\n"), 1);
	assert_string_equal(r.err, "");
	run_result_free(&r);

	run_ok(&r, "trace", "-q", "-s", "4", "-j", "-c", TF " 1", TF, "tf:obj",
	       "\"%s %s\", *(uint64 *)arg0, str(*(uint64 *)(arg0 + 16))");
	expect_in(r.out, "\"text\": \"obj (null)\", \"args\": [\"obj\", null]}\n");
	run_result_free(&r);

	/* Fields 24 to 31 (-7, -300, 5) are no pointer: the string cannot
	 * be read; nor a load through arg1, the round (1, 2). Each said
	 * once. */
	run_ok(&r, "trace", "-q", "-c", TF " 2", TF, "tf:obj",
	       "\"%s|%s|%d\", *(uint64 *)(arg0 + 24), "
	       "*(uint64 *)(arg1 + 8), arg1");
	assert_int_equal(count_str(r.out, " tf:obj ?|?|1\n"), 1);
	assert_int_equal(count_str(r.out, " tf:obj ?|?|2\n"), 1);
	assert_string_equal(r.err, "usdt: trace: tf:obj: typed load 0's string cannot be read: Bad address\n"
				   "usdt: trace: tf:obj: typed load 1 cannot be read: Bad address\n");
	run_result_free(&r);

	run_fails(&r, "%s of a typed load takes a pointer: an 8-byte load",
		  "trace", TF, "tf:obj", "\"%s\", *(int32 *)(arg0 + 24)");
	run_fails(&r, "value 1 is str(): a string, for %s only", "trace", TF,
		  "tf:obj", "\"%d\", str(*(uint64 *)arg0)");
}

/*
 * Eight typed loads in one format (libbpf's usdt selftest structs_by_ref
 * takes seven): every field of tf:obj; a ninth is refused.
 */
static void test_format_eight_loads(void **state)
{
	struct run_result r;

	run_ok(&r, "trace", "-q", "-c", TF " 1 300", TF, "tf:obj",
	       "\"%s %s %s %d %d %d %d %u\", *(uint64 *)arg0, "
	       "*(uint64 *)(arg0 + 8), *(uint64 *)(arg0 + 16), "
	       "*(int32 *)(arg0 + 24), *(int16 *)(arg0 + 28), "
	       "*(int8 *)(arg0 + 30), *(int64 *)(arg0 + 32), "
	       "*(uint64 *)(arg0 + 40)");
	expect_in(r.out, " tf:obj objname cold (null) -7 -300 5 -1099511627776 9223372036854775809\n");
	run_result_free(&r);

	run_fails(&r, "*(int *)arg0': value 9: more than 8 typed loads in one format\n",
		  "trace", TF, "tf:obj",
		  "\"%d%d%d%d%d%d%d%d%d\", *(int *)arg0, *(int *)arg0, "
		  "*(int *)arg0, *(int *)arg0, *(int *)arg0, *(int *)arg0, "
		  "*(int *)arg0, *(int *)arg0, *(int *)arg0");
}

/*
 * --ustack of a C++ method: tf:obj fires in tf::object::fire(int) (its
 * symbol g++'s _ZN2tf6object4fireEi), which prints demangled with the
 * system's libstdc++; mangled where there is none (the QEMU guests'
 * busybox userland). The target waits 300 ms after the hit, so that its
 * maps can still be read.
 */
static void test_ustack_demangled(void **state)
{
	bool have = dlopen("libstdc++.so.6", RTLD_LAZY);
	const char *want = have ? "\n    tf::object::fire(int)+0x" :
				  "\n    _ZN2tf6object4fireEi+0x";
	struct run_result r;

	run_ok(&r, "trace", "-q", "--ustack", "-c", TF " 2 300", TF, "tf:obj");
	if (strstr(r.err, "warning: the kernel gives no user stack")) {
#if !defined(__s390x__)
		fail_msg("no user stack here:\n%s", r.err);
#endif
		assert_int_equal(count_str(r.out, "\n    "), 0);
	} else {
		assert_int_equal(count_str(r.out, want), 2);
		assert_true(count_str(r.out, "/trace_fmt_target)\n") >= 2);
	}
	run_result_free(&r);
}

/* String equality: the string an argument points to, == or != a
 * constant; a longer string does not match its prefix. */
static void test_filter_strings(void **state)
{
	static const struct {
		const char *expr;
		int hits;	/* of tf:str in 3 rounds */
	} cases[] = {
		{ "arg1 == \"round\"", 3 },
		{ "arg1 == \"roun\"", 0 },
		{ "arg1 == \"rounds\"", 0 },
		{ "arg1 != \"round\"", 0 },
		{ "arg1 != \"x\" && arg2 == 2", 1 },
		{ "arg0 == \"hello\\tworld\\x1b[31m\" || arg1 == \"\"", 0 },
		{ "arg1 == \"\\\"\" || arg2 == 3", 1 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct run_result r;

		run_ok(&r, "trace", "-q", "--filter", cases[i].expr, "-c",
		       TF " 3", TF, "tf:str");
		if (count_str(r.out, " tf:str ") != cases[i].hits)
			fail_msg("'%s': %d hits, want %d:\n%s", cases[i].expr,
				 count_str(r.out, " tf:str "), cases[i].hits,
				 r.out);
		run_result_free(&r);
	}
}

static void test_filter(void **state)
{
	static const struct {
		const char *expr;
		const char *want;	/* the values of tf:val that pass */
	} cases[] = {
		{ "arg0 > 5 && arg0 <= 7 || arg0 == 1", "1 6 7" },
		{ "arg0 != 0 && arg0 < 3", "1 2" },
		{ "arg0 >= 0x8", "8" },
		/* Decimal even with a leading 0, as the man page says: octal
		 * would make 010 eight and refuse 08. */
		{ "arg0 == 010 || arg0 == 07", "7" },
		{ "arg0 == 08 || arg0 == -01", "8" },
		{ "arg0 == 0X7 || arg0 == 0x06", "6 7" },
		/* The ends of the signed 64-bit range are constants too. */
		{ "arg0 < 9223372036854775807 && arg0 > -9223372036854775808 && arg0 < 0x7fffffffffffffff && arg0 > -0x8000000000000000 && arg0 > 5",
		  "6 7 8" },
		{ "arg0 < -1 || arg0 == 0", "0" },
		{ "pid == 1", "" },
		{ "tid > 0 && arg0 == 2", "2" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct run_result r;
		char got[256] = "";
		const char *p;

		run_ok(&r, "trace", "--filter", cases[i].expr, "-c", TF " 9",
			 TF, "tf:val");
		for (p = r.out; (p = strstr(p, " tf:val ")); p += 8) {
			size_t n = strlen(got);

			snprintf(got + n, sizeof(got) - n, "%s%d", n ? " " : "",
				 atoi(p + 8));
		}
		if (strcmp(got, cases[i].want))
			fail_msg("filter '%s': got '%s', want '%s'",
				 cases[i].expr, got, cases[i].want);
		run_result_free(&r);
	}
}

static void test_filter_errors(void **state)
{
	static const char *const bad[] = {
		"arg0 >", "arg12 == 1", "foo == 1", "arg0 == 1 &&",
		"(arg0 == 1)", "arg0 = 1", "arg0 == 1x",
		/* Strings: for argN == and != only, closed, at most 62. */
		"pid == \"x\"", "arg0 < \"a\"", "arg0 == \"abc",
		"arg0 == \"abc\"x", "str(arg0, arg1) > 3", "str(arg0, arg0) == \"a\"",
		"str(arg0 == \"a\"",
		"arg0 == \"0123456789012345678901234567890123456789012345678901234567890123\"",
	};
	struct run_result r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		run_fails(&r, "usdt: trace: filter '", "trace", "--filter",
			  bad[i], TF, "tf:val");
	/* An argument no probe has is an error, said with how arguments
	 * count (from arg0: bcc's users write arg1 for the first). */
	run_fails(&r, "usdt: trace: no matching probe has argument 5, which the filter reads (arguments count from arg0, as in bpftrace; bcc's arg1 is arg0 here)\n",
		  "trace", "--filter", "tid > 0 && arg5 == 0", TF, "tf:val");
	/* One some probe has: said for the others, where its terms never
	 * hold (a missing argument is no 0). */
	run_ok(&r, "trace", "--filter", "arg0 == 3 || arg7 == 12345", "-c",
	       TF " 9", TF, "tf:val", "tf:mem");
	expect_in(r.err, "usdt: trace: tf:val: warning: has 1 argument: the filter's terms on arg7 never hold for it\n");
	expect_in(r.out, " tf:val 3\n");
	assert_null(strstr(r.out, " tf:val 2\n"));
	run_result_free(&r);
}

/* Constants the signed 64-bit comparison cannot hold are refused: taken
 * modulo 2^64 (or clamped), "arg0 < 2^64 - 1" would be "arg0 < -1". */
static void test_filter_range(void **state)
{
	static const struct {
		const char *expr, *constant;
	} bad[] = {
		{ "arg0 < 18446744073709551615", "18446744073709551615" },
		{ "arg0 > 9223372036854775808", "9223372036854775808" },
		{ "arg0 > -9223372036854775809", "-9223372036854775809" },
		{ "arg0 == 1 || arg1 != 99999999999999999999999",
		  "99999999999999999999999" },
		{ "arg0 <= 0x8000000000000000", "0x8000000000000000" },
		{ "arg0 <= 0xffffffffffffffff", "0xffffffffffffffff" },
		{ "arg0 >= -0x8000000000000001", "-0x8000000000000001" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct run_result r;
		char want[256];

		snprintf(want, sizeof(want),
			 "usdt: trace: filter '%s': constant '%s' out of range (signed 64-bit: -9223372036854775808 to 9223372036854775807)\n",
			 bad[i].expr, bad[i].constant);
		/* -c: accepted, the trace would end. */
		run_fails(&r, want, "trace", "--filter", bad[i].expr, "-c",
			  TF " 1", TF, "tf:val");
	}
}

/*
 * 300 probes are attached a pattern at a time (one kernel link each, not
 * one per probe) and told apart in BPF by call site: every probe is still
 * counted and printed as itself, exactly once.
 */
static void test_many_probes(void **state)
{
	struct run_result r;
	char want[64];
	int i;

	run_ok(&r, "trace", "--count", "-c", MANY " a", MANY);
	for (i = 0; i < 300; i++) {
		snprintf(want, sizeof(want), "           1 gen:p%d\n", i);
		expect_in(r.out, want);
	}
	assert_int_equal(count_lines(r.out), 300 + 2);
	run_result_free(&r);

	/* Events carry their own probe too; argc is 2. */
	run_ok(&r, "trace", "-c", MANY " a", MANY, "gen:p1*");
	assert_int_equal(count_lines(r.out), 111);
	expect_in(r.out, " gen:p1 2\n");
	expect_in(r.out, " gen:p199 2\n");
	run_result_free(&r);
}

/* run_argv_setup()'s setup: a soft RLIMIT_NOFILE of 32 (the hard one as
 * it is), for the tool and what it starts. */
static void soft_nofile_32(void *arg)
{
	struct rlimit rl;

	(void)arg;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		_exit(126);
	rl.rlim_cur = 32;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		_exit(126);
}

/*
 * 10 per-site perf uprobes (20 descriptors) under a soft RLIMIT_NOFILE
 * of 32, which the tool's own (about 26: its maps, program, ring buffer)
 * leave no room for: libusdt never raises its host's limit, the tool
 * raises its own, so every probe is counted. The command -c starts keeps
 * the limit it was given: /proc/PID/limits of a cat started so says 32.
 * (Perf uprobes take a while each to take down: 10 of them.)
 */
static void test_perf_low_nofile(void **state)
{
	const char *many[] = { USDT_BIN, "trace", "-m", "perf", "--count",
			       "-c", MANY " a", MANY, "gen:p2?", NULL };
	const char *cat[] = { USDT_BIN, "trace", "-m", "perf", "-c",
			      "cat /proc/self/limits", MANY, "gen:p0", NULL };
	struct run_result r;
	char want[64];
	int i;

	run_argv_setup(many, &r, soft_nofile_32, NULL);
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	for (i = 20; i < 30; i++) {
		snprintf(want, sizeof(want), "           1 gen:p%d\n", i);
		expect_in(r.out, want);
	}
	run_result_free(&r);

	run_argv_setup(cat, &r, soft_nofile_32, NULL);
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	if (!strstr(r.out, "Max open files            32 "))
		fail_msg("the command's limits:\n%s", r.out);
	run_result_free(&r);
}

/* Start prog (a copy of trace_fmt_target) running rounds every 5 ms;
 * its pid. Its stdout is *fd, non-blocking, not read. */
static pid_t start_long(const char *prog, int *fd)
{
	const char *argv[] = { prog, "100000", "5", NULL };
	char buf[64] = { 0 };
	pid_t pid = spawn_out(argv, fd);

	assert_true(read(*fd, buf, sizeof(buf) - 1) > 4);
	fcntl(*fd, F_SETFL, O_NONBLOCK);
	return pid;
}

/*
 * -p PID without a file: every file the process maps that has probes,
 * even a binary replaced on disk since it started (the old one, through
 * /proc/PID/map_files).
 */
static void test_whole_process(void **state)
{
	char dir[] = "/tmp/usdt_whole_XXXXXX", prog[64], cmd[512], pid_s[16];
	struct run_result r;
	int fd, i;
	pid_t pid;

	assert_non_null(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/tf", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", TF, prog);
	assert_int_equal(system(cmd), 0);
	pid = start_long(prog, &fd);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	for (i = 0; i < 2; i++) {
		if (i) {
			/* An upgrade: a new file takes the old one's name. */
			snprintf(cmd, sizeof(cmd), "cp %s %s.new && mv %s.new %s",
				 TF, prog, prog, prog);
			assert_int_equal(system(cmd), 0);
		}
		run_tool(&r, "trace", "-p", pid_s, "-n", "4", "tf:val");
		if (r.status)
			fail_msg("round %d: status %d, stderr:\n%s", i,
				 r.status, r.err);
		assert_int_equal(count_str(r.out, " tf:val "), 4);
		run_result_free(&r);
		/* By its path: the file the process runs, not the new one. */
		run_ok(&r, "trace", "-p", pid_s, "-n", "2", prog, "tf:val");
		assert_int_equal(count_str(r.out, " tf:val "), 2);
		run_result_free(&r);
	}
	/* Alone, with a summary: the probes of every mapped file. */
	run_ok(&r, "trace", "-p", pid_s, "--count", "-d", "0.3");
	expect_in(r.out, " tf:val\n");
	expect_in(r.out, " tf:str\n");
	run_result_free(&r);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
	unlink(prog);
	rmdir(dir);
}

/* ---------------------------------------------------------------------- */
/* Behaviour                                                              */

/*
 * `usdt trace ... | head -1`: the reader goes after one line. The tool
 * ends by itself with status 0, not killed by SIGPIPE, and the command it
 * ran is gone too.
 */
static void test_closed_pipe(void **state)
{
	const char *argv[] = { USDT_BIN, "trace", "-c", TF " 100000 5", TF,
			       "tf:val", NULL };
	int out, status;
	char buf[4096];
	pid_t tool, target = 0;
	ssize_t n;
	FILE *f;

	tool = spawn_out(argv, &out);
	f = fdopen(out, "r");
	assert_non_null(f);
	while (fgets(buf, sizeof(buf), f)) {
		if (!strncmp(buf, "pid ", 4))
			target = atoi(buf + 4);
		else if (strstr(buf, " tf:val "))
			break;
	}
	assert_true(target > 0);
	fclose(f);		/* like head -1 */
	n = waitpid(tool, &status, 0);
	assert_int_equal(n, tool);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_false(process_exists(target));
}

/* Is pid running (not gone, not a zombie)? */
static bool running(pid_t pid)
{
	char path[64], buf[256], *rp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

/* The tool killed outright (SIGKILL: no cleanup of its own) takes the
 * command of -c with it: it must not run on untraced. */
static void test_tool_killed(void **state)
{
	const char *argv[] = { USDT_BIN, "trace", "--count", "-c",
			       TF " 100000 5", TF, "tf:val", NULL };
	char buf[64] = { 0 };
	int out, i;
	pid_t tool, target;

	tool = spawn_out(argv, &out);
	assert_true(read(out, buf, sizeof(buf) - 1) > 4);
	target = atoi(buf + 4);
	assert_true(target > 0);
	assert_true(running(target));
	kill(tool, SIGKILL);
	waitpid(tool, NULL, 0);
	for (i = 0; i < 200 && running(target); i++)
		usleep(10000);
	assert_false(running(target));
	close(out);
}

/* Output nobody can take is an error: exit 1 with a message. */
static void test_write_error(void **state)
{
	const char *argv[] = { "/bin/sh", "-c",
		USDT_BIN " trace -c '" TF " 3' " TF " tf:val > /dev/full",
		NULL };
	struct run_result r;

	run_argv(argv, &r);
	assert_int_equal(r.status, 1);
	expect_in(r.err, "usdt: trace: writing the output: No space left on device");
	run_result_free(&r);

	argv[2] = USDT_BIN " trace --count -c '" TF " 3' " TF " tf:val > /dev/full";
	run_argv(argv, &r);
	assert_int_equal(r.status, 1);
	expect_in(r.err, "writing the output");
	run_result_free(&r);

	argv[2] = USDT_BIN " trace -c '" TF " 3' " TF " tf:val >&-";
	run_argv(argv, &r);
	assert_int_equal(r.status, 1);
	expect_in(r.err, "standard output is closed");
	run_result_free(&r);
}

/* Has pid a handler for SIGTERM yet? (/proc/PID/status, SigCgt.) */
static bool catches_sigterm(pid_t pid)
{
	unsigned long long mask = 0;
	char line[256];
	FILE *f;

	snprintf(line, sizeof(line), "/proc/%d/status", (int)pid);
	f = fopen(line, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigCgt:", 7))
			mask = strtoull(line + 7, NULL, 16);
	fclose(f);
	return mask & (1ull << (SIGTERM - 1));
}

/* Wait for the moment of round i: a fixed delay, or (HANDLED) until the
 * tool catches SIGTERM, or (TRACING) until the command it holds runs
 * (its "pid N" line: the probes are attached). */
#define HANDLED -1
#define TRACING -2
static void wait_moment(int delay_us, pid_t tool, int out)
{
	char buf[4096];
	int i;

	if (delay_us >= 0) {
		usleep(delay_us);
	} else if (delay_us == HANDLED) {
		for (i = 0; i < 10000 && !catches_sigterm(tool); i++)
			usleep(1000);
	} else {
		FILE *f = fdopen(dup(out), "r");

		assert_non_null(f);
		while (fgets(buf, sizeof(buf), f) && strncmp(buf, "pid ", 4))
			;
		fclose(f);
	}
}

/*
 * SIGTERM at any moment ends the tool at once: before tracing ran with
 * 128 + 15, after with 0 (the command's own status is not reached: it is
 * ended). The held command never outlives it. Fixed delays hit moments
 * that depend on the machine's speed; as soon as the handlers are set is
 * before tracing and after the command runs is tracing, on any machine.
 */
static void test_signal_any_time(void **state)
{
	static const int delays_us[] = { 10000, 50000, 150000, HANDLED,
					  TRACING };
	const char *argv[] = { USDT_BIN, "trace", "-c", TF " 100000 5", TF,
			       NULL };
	bool early = false, late = false;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(delays_us); i++) {
		int out, status;
		pid_t tool = spawn_out(argv, &out);

		wait_moment(delays_us[i], tool, out);
		fcntl(out, F_SETFL, O_NONBLOCK);
		kill(tool, SIGTERM);
		assert_int_equal(waitpid(tool, &status, 0), tool);
		close(out);
		/* Killed before main() set its handlers: nothing ran. */
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
			continue;
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status) == 128 + SIGTERM)
			early = true;
		else if (WEXITSTATUS(status) == 0)
			late = true;
		else
			fail_msg("moment %d: status %d", delays_us[i],
				 WEXITSTATUS(status));
	}
	assert_true(early);
	assert_true(late);
}

/*
 * -p ends when the process ends even if its parent never reaps it: the
 * target's parent here forks it and then only sleeps. The target runs
 * until the trace has shown an event, then is killed (on a slow machine a
 * target that ends by itself may end before the tool has attached).
 */
static void test_zombie_pid(void **state)
{
	char buf[4096] = { 0 }, pid_s[16];
	const char *argv[] = { USDT_BIN, "trace", "-p", pid_s, "-d", "60", TF,
			       "tf:val", NULL };
	int fds[2], out, status;
	pid_t parent, tool;
	bool traced = false;
	pid_t target;
	double t0;
	FILE *f;

	assert_int_equal(pipe(fds), 0);
	parent = fork();
	assert_true(parent >= 0);
	if (!parent) {
		if (!fork()) {
			dup2(fds[1], 1);
			execl(TF, TF, "100000", "5", (char *)NULL);
			_exit(127);
		}
		close(fds[1]);
		for (;;)
			pause();
	}
	close(fds[1]);
	assert_true(read(fds[0], buf, 64) > 4);
	target = atoi(buf + 4);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)target);
	tool = spawn_out(argv, &out);
	f = fdopen(out, "r");
	assert_non_null(f);
	while (!traced && fgets(buf, sizeof(buf), f))
		traced = strstr(buf, " tf:val ") != NULL;
	assert_true(traced);
	t0 = now_s();
	kill(target, SIGKILL);	/* a zombie: its parent never reaps it */
	while (fgets(buf, sizeof(buf), f))
		;
	fclose(f);
	assert_int_equal(waitpid(tool, &status, 0), tool);
	/* Not a timing claim: only that -d 60 was not what ended it. */
	assert_true(now_s() - t0 < 50);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	kill(parent, SIGKILL);
	waitpid(parent, NULL, 0);
	close(fds[0]);
}

/* -c splits words without a shell: no variables, globs or tilde. */
static void test_command_words(void **state)
{
	struct run_result r;

	run_tool(&r, "trace", "-c",
		 "/bin/echo $HOME '*' \"a  b\" ~ a\\ b \"q\\\"q\"", TF,
		 "tf:val");
	assert_int_equal(r.status, 0);
	expect_in(r.out, "$HOME * a  b ~ a b q\"q\n");
	run_result_free(&r);

	run_fails(&r, "bad command line", "trace", "-c", "/bin/echo 'open", TF,
		  "tf:val");
}

/* Options after the target as well as before it. */
static void test_options_after_target(void **state)
{
	struct run_result r;

	run_tool(&r, "trace", TF, "tf:val", "-n", "2", "-c", TF " 5", "-j");
	assert_int_equal(r.status, 0);
	assert_int_equal(count_str(r.out, "\"name\": \"val\""), 2);
	run_result_free(&r);
}

#define CAP(c) (1ull << (c))
#define BPF_PERFMON (CAP(CAP_BPF) | CAP(CAP_PERFMON))

/* As `setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=...
 * --ambient-caps=...` would, in C (the guests of `make vm-check` have no
 * setpriv): in the child, just before exec, become nobody, keeping the
 * capabilities of the mask *arg across the exec (as ambient ones). */
static void become_nobody(void *arg)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = { { 0 } };
	uint64_t caps = *(uint64_t *)arg;
	int c;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) ||
	    setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		_exit(126);
	for (c = 0; c < 64; c++) {
		if (!(caps & CAP(c)))
			continue;
		d[c / 32].effective |= 1u << (c % 32);
		d[c / 32].permitted |= 1u << (c % 32);
		d[c / 32].inheritable |= 1u << (c % 32);
	}
	if (syscall(SYS_capset, &h, d))
		_exit(126);
	for (c = 0; c < 64; c++)
		if ((caps & CAP(c)) &&
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0))
			_exit(126);
}

/* Run `TOOL trace [-m MODE] -c "TF 2" TF tf:val` as nobody with caps. */
static void trace_as_nobody(const char *tool, const char *tf,
			    const char *mode, uint64_t caps,
			    struct run_result *r)
{
	char cmd[128];
	const char *argv[] = { tool, "trace", "-m", mode, "-c", cmd, tf,
			       "tf:val", NULL };

	snprintf(cmd, sizeof(cmd), "%s 2", tf);
	run_argv_setup(argv, r, become_nobody, &caps);
}

/*
 * Not root: CAP_BPF and CAP_PERFMON, as the man page says, where the
 * kernel has uprobe_multi links (Linux 6.6). Perf uprobes (-m perf, and
 * every attach before 6.6) need CAP_SYS_ADMIN too: Linux took them back
 * from CAP_PERFMON (ba677dbe77af "perf: Revert to requiring CAP_SYS_ADMIN
 * for uprobes", 6.16, also in its stable kernels); without it the tool
 * says so. A refusal names the capability the tool lacks.
 */
static void test_capabilities(void **state)
{
	char dir[] = "/tmp/usdt_caps_XXXXXX", tool[64], tf[64], cmd[512];
	struct run_result r;
	bool multi;

	/* Copies nobody can run, wherever the tree is (/root: 0700). */
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(tool, sizeof(tool), "%s/usdt", dir);
	snprintf(tf, sizeof(tf), "%s/tf", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s && cp %s %s && chmod 755 %s %s",
		 USDT_BIN, tool, TF, tf, tool, tf);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s 1", TF);
	multi = !run_tool(&r, "trace", "-m", "multi", "-c", cmd, TF, "tf:val");
	run_result_free(&r);

	trace_as_nobody(tool, tf, "auto", BPF_PERFMON, &r);
	if (multi && r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	if (multi)
		assert_int_equal(count_str(r.out, " tf:val "), 2);
	else
		expect_in(r.err, "CAP_SYS_ADMIN");
	run_result_free(&r);

	/* Perf uprobes: refused with the reason (a kernel from before the
	 * change still takes them), or taken with CAP_SYS_ADMIN. */
	trace_as_nobody(tool, tf, "perf", BPF_PERFMON, &r);
	if (r.status)
		expect_in(r.err, "perf uprobes need CAP_SYS_ADMIN, which this process lacks");
	run_result_free(&r);
	trace_as_nobody(tool, tf, "perf", BPF_PERFMON | CAP(CAP_SYS_ADMIN),
			&r);
	if (r.status)
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(count_str(r.out, " tf:val "), 2);
	run_result_free(&r);

	/* Without them: a refusal that names what is missing. */
	trace_as_nobody(tool, tf, "auto", 0, &r);
	assert_int_equal(r.status, 1);
	expect_in(r.err, "permission denied: needs root, or CAP_BPF and CAP_PERFMON, and this process lacks CAP_BPF and CAP_PERFMON");
	run_result_free(&r);
	trace_as_nobody(tool, tf, "auto", CAP(CAP_BPF), &r);
	assert_int_equal(r.status, 1);
	expect_in(r.err, "this process lacks CAP_PERFMON\n");
	run_result_free(&r);
	unlink(tool);
	unlink(tf);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_strings),
		cmocka_unit_test(test_format_errors),
		cmocka_unit_test(test_format_printf),
		cmocka_unit_test(test_format_length),
		cmocka_unit_test(test_format_bounded),
		cmocka_unit_test(test_format_numbered),
		cmocka_unit_test(test_str_counted),
		cmocka_unit_test(test_by_parts),
		cmocka_unit_test(test_count_sum),
		cmocka_unit_test(test_latency_slow),
		cmocka_unit_test(test_no_notes),
		cmocka_unit_test(test_text_only),
		cmocka_unit_test(test_swapped_hint),
		cmocka_unit_test(test_time_unit),
		cmocka_unit_test(test_time_unit_latency),
		cmocka_unit_test(test_format_null),
		cmocka_unit_test(test_memory_widths),
		cmocka_unit_test(test_types_per_site),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_broken_note),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_interval_no_hits),
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_latency),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_filter_strings),
		cmocka_unit_test(test_format_loads),
		cmocka_unit_test(test_format_load_strings),
		cmocka_unit_test(test_format_eight_loads),
		cmocka_unit_test(test_ustack_demangled),
		cmocka_unit_test(test_filter_errors),
		cmocka_unit_test(test_filter_range),
		cmocka_unit_test(test_many_probes),
		cmocka_unit_test(test_perf_low_nofile),
		cmocka_unit_test(test_whole_process),
		cmocka_unit_test(test_closed_pipe),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_tool_killed),
		cmocka_unit_test(test_signal_any_time),
		cmocka_unit_test(test_zombie_pid),
		cmocka_unit_test(test_command_words),
		cmocka_unit_test(test_options_after_target),
		cmocka_unit_test(test_capabilities),
	};

	usdt_test_require_kernel("test_trace_fmt");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
