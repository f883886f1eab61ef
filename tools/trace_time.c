// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace`'s clocks and times as they print, which the event lines
 * (trace_fmt.c), the summaries (trace_sum.c) and the run (trace_cmd.c)
 * share; and the signal that stops the run, which the run sets and the
 * attach (trace_load.c) and the reads from user space (trace_peek.c)
 * look at. Here, below them all, so that no two of them need each other.
 */
#include <inttypes.h>
#include <time.h>

#include "trace.h"

volatile sig_atomic_t trace_stop_signal;

const char *time_unit_name(int digits)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };

	return digits >= 0 && digits <= 9 ? units[digits / 3] : "ns";
}

uint64_t time_unit_ns(int digits)
{
	uint64_t div = 1;
	int i;

	for (i = 0; i < digits && i < 9; i++)
		div *= 10;
	return div;
}

int64_t wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t wall_offset(void)
{
	struct timespec m;
	int64_t w = wall_now();

	clock_gettime(CLOCK_MONOTONIC, &m);
	return w - ((int64_t)m.tv_sec * 1000000000 + m.tv_nsec);
}

char *time_text(char buf[TIME_TEXT_LEN], uint64_t ns, int digits)
{
	uint64_t div = time_unit_ns(digits);
	int d = digits < 9 ? digits : 9; /* what time_unit_ns() took */

	if (div == 1)
		snprintf(buf, TIME_TEXT_LEN, "%" PRIu64, ns);
	else
		snprintf(buf, TIME_TEXT_LEN, "%" PRIu64 ".%0*" PRIu64, ns / div,
			 d, ns % div);
	return buf;
}

void print_time(FILE *f, uint64_t ns, int digits)
{
	char buf[TIME_TEXT_LEN];

	fputs(time_text(buf, ns, digits), f);
}

void print_wall(FILE *f, int64_t ns)
{
	time_t s = (time_t)(ns / 1000000000);
	long frac = (long)(ns % 1000000000);
	char buf[32];
	struct tm tm;

	if (frac < 0) {
		frac += 1000000000;
		s--;
	}
	if (!gmtime_r(&s, &tm) ||
	    !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm)) {
		fputs("null", f);
		return;
	}
	fprintf(f, "\"%s.%09ldZ\"", buf, frac);
}
