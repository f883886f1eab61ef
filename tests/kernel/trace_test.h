/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared by the tests of `usdt trace` (test_trace.c, test_trace_fmt.c,
 * test_trace_python.c): running the tool (tests/tool_run.h) and checking
 * what it printed, with cmocka's assertions.
 */
#ifndef __LIBUSDT_TRACE_TEST_H
#define __LIBUSDT_TRACE_TEST_H

#include <time.h>

#include "test_util.h"
#include "tool_run.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* How many times needle occurs in s, not overlapping. */
static inline int count_str(const char *s, const char *needle)
{
	int n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

static inline void expect_in(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("missing '%s' in:\n%s", needle, hay);
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run the tool; it must succeed. */
#define run_ok(r, ...)                                                      \
	do {                                                                \
		if (run_tool(r, __VA_ARGS__))                               \
			fail_msg("status %d, stderr:\n%s", (r)->status,      \
				 (r)->err);                                 \
	} while (0)

/* Run the tool; it must fail (status 1) saying message on stderr. */
#define run_fails(r, message, ...)                                          \
	do {                                                                \
		run_tool(r, __VA_ARGS__);                                   \
		assert_int_equal((r)->status, 1);                           \
		expect_in((r)->err, message);                               \
		run_result_free(r);                                         \
	} while (0)

#endif /* __LIBUSDT_TRACE_TEST_H */
