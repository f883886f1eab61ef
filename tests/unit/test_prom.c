// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace --listen` without a kernel: the Prometheus text the tool
 * builds (label values escaped, log2 histograms as cumulative le buckets
 * with _sum and _count) and the [ADDR:]PORT words it takes. The tool's
 * sources are compiled in, for their static functions.
 */
#include "test_util.h"

#include "../../tools/common.c"
#include "../../tools/trace_prom.c"
#include "../../tools/trace_http.c"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void expect_in(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("missing '%s' in:\n%s", needle, hay);
}

/* Backslash, double quote and newline escaped; bytes that are not UTF-8
 * replaced; nothing else touched. */
static void test_escape(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "", "" },
		{ "plain", "plain" },
		{ "a\"b", "a\\\"b" },
		{ "back\\slash", "back\\\\slash" },
		{ "two\nlines", "two\\nlines" },
		{ "\\\"\n", "\\\\\\\"\\n" },
		{ "tab\there\r", "tab\there\r" },
		{ "\"\"", "\\\"\\\"" },
		{ "caf\xc3\xa9 {x=1}", "caf\xc3\xa9 {x=1}" },
		/* UTF-8 kept: 3 and 4 bytes, the edges of the ranges. */
		{ "\xe2\x82\xac \xf0\x9f\x98\x80", "\xe2\x82\xac \xf0\x9f\x98\x80" },
		{ "\xed\x9f\xbf\xf4\x8f\xbf\xbf", "\xed\x9f\xbf\xf4\x8f\xbf\xbf" },
		/* Not UTF-8: each bad byte U+FFFD, the rest kept. */
		{ "a\xff" "b", "a\xef\xbf\xbd" "b" },
		{ "\xc3", "\xef\xbf\xbd" },			/* cut short */
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },	/* overlong */
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* surrogate */
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xe2\x82\"", "\xef\xbf\xbd\xef\xbf\xbd\\\"" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct prom_buf b = { 0 };

		prom_escape(&b, cases[i].in, strlen(cases[i].in));
		assert_false(b.oom);
		assert_string_equal(b.p ? b.p : "", cases[i].out);
		free(b.p);
	}
}

/* Labels join with commas inside the braces, their values escaped and
 * cut at the length given. */
static void test_labels(void **state)
{
	struct prom_buf b = { 0 };

	(void)state;
	prom_printf(&b, "m{");
	prom_label(&b, "provider", "p\"q", 3);
	prom_label(&b, "probe", "name-and-more", 4);
	prom_label(&b, "pid", "12", 2);
	prom_put(&b, "} 1\n", 4);
	assert_string_equal(b.p, "m{provider=\"p\\\"q\",probe=\"name\",pid=\"12\"} 1\n");
	free(b.p);
	b = (struct prom_buf){ 0 };
	prom_label(&b, "a", "x", 1);
	assert_string_equal(b.p, "a=\"x\"");
	free(b.p);
}

/* Cumulative buckets from the negatives (when signed) to +Inf; a
 * negative of an unsigned argument counts in +Inf only. */
static void test_hist(void **state)
{
	uint64_t slots[TRACE_SLOTS] = { 0 };
	struct prom_hist h = { .name = "h", .labels = "a=\"1\"",
			       .slots = slots, .neg = true, .sum = -5,
			       .scale = 1 };
	struct prom_buf b = { 0 };

	(void)state;
	slots[TRACE_SLOT_NEG] = 2;
	slots[0] = 1;
	slots[1] = 3;
	slots[3] = 1;
	slots[64] = 4;
	prom_hist(&b, &h);
	expect_in(b.p, "h_bucket{a=\"1\",le=\"-1\"} 2\n");
	expect_in(b.p, "h_bucket{a=\"1\",le=\"0\"} 3\n");
	expect_in(b.p, "h_bucket{a=\"1\",le=\"1\"} 6\n");
	expect_in(b.p, "h_bucket{a=\"1\",le=\"3\"} 6\n");
	expect_in(b.p, "h_bucket{a=\"1\",le=\"7\"} 7\n");
	expect_in(b.p, "h_bucket{a=\"1\",le=\"9223372036854775807\"} 7\n");
	expect_in(b.p, "h_bucket{a=\"1\",le=\"+Inf\"} 11\n");
	expect_in(b.p, "\nh_sum{a=\"1\"} -5\nh_count{a=\"1\"} 11\n");
	free(b.p);

	b = (struct prom_buf){ 0 };
	h.neg = false;
	h.labels = "";
	h.sum = 10;
	prom_hist(&b, &h);
	assert_null(strstr(b.p, "le=\"-1\""));
	expect_in(b.p, "h_bucket{le=\"0\"} 1\n");
	expect_in(b.p, "h_bucket{le=\"+Inf\"} 11\n");
	expect_in(b.p, "\nh_sum{} 10\nh_count{} 11\n");
	free(b.p);
}

/* Nanoseconds to seconds: the bounds and the sum divided. */
static void test_hist_seconds(void **state)
{
	uint64_t slots[TRACE_SLOTS] = { 0 };
	struct prom_hist h = { .name = "t_seconds", .labels = "",
			       .slots = slots, .sum = 1500, .scale = 1e9 };
	struct prom_buf b = { 0 };

	(void)state;
	slots[10] = 2;
	prom_hist(&b, &h);
	expect_in(b.p, "t_seconds_bucket{le=\"0\"} 0\n");
	expect_in(b.p, "t_seconds_bucket{le=\"1e-09\"} 0\n");
	expect_in(b.p, "t_seconds_bucket{le=\"5.11e-07\"} 0\n");
	expect_in(b.p, "t_seconds_bucket{le=\"1.023e-06\"} 2\n");
	expect_in(b.p, "t_seconds_sum{} 1.5e-06\n");
	free(b.p);
}

/* The buffer grows; a failed growth is remembered, the text kept. */
static void test_grow(void **state)
{
	struct prom_buf b = { 0 };
	char chunk[1000];
	int i;

	(void)state;
	memset(chunk, 'x', sizeof(chunk));
	for (i = 0; i < 100; i++)
		prom_put(&b, chunk, sizeof(chunk));
	prom_printf(&b, "%d", 42);
	assert_false(b.oom);
	assert_int_equal(b.len, 100002);
	assert_int_equal(strlen(b.p), 100002);
	b.len = SIZE_MAX - 8;	/* no room left to grow */
	prom_put(&b, chunk, sizeof(chunk));
	assert_true(b.oom);
	free(b.p);
}

/* --listen's words: a port alone is 127.0.0.1's. */
static void test_where(void **state)
{
	static const struct { const char *in, *host, *port; } cases[] = {
		{ "9100", "127.0.0.1", "9100" },
		{ "0.0.0.0:80", "0.0.0.0", "80" },
		{ "localhost:65535", "localhost", "65535" },
		{ "[::1]:9100", "::1", "9100" },
		{ "[::]:1", "::", "1" },
		{ "", NULL, NULL },
		{ "0", NULL, NULL },
		{ "65536", NULL, NULL },
		{ "http", NULL, NULL },
		{ ":80", NULL, NULL },
		{ "1.2.3.4:", NULL, NULL },
		{ "[::1]", NULL, NULL },
		{ "80x", NULL, NULL },
		{ "-80", NULL, NULL },
	};
	char host[256], port[8];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int err = split_where(cases[i].in, host, sizeof(host), port,
				      sizeof(port));

		if (!cases[i].host) {
			if (err != -EINVAL)
				fail_msg("'%s' taken", cases[i].in);
			continue;
		}
		if (err)
			fail_msg("'%s' refused", cases[i].in);
		assert_string_equal(host, cases[i].host);
		assert_string_equal(port, cases[i].port);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_hist_seconds),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_where),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
