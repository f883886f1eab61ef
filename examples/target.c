// SPDX-License-Identifier: BSD-2-Clause
/*
 * The program examples/hello and examples/counters trace: it greets a few
 * names, and each greeting is a USDT probe with two arguments, a count and
 * a string; each is followed by a hello:farewell probe, at one of two call
 * sites.
 */
#include <stdio.h>
#include <sys/sdt.h>
#include <unistd.h>

/* Two call sites of hello:farewell, one per way out. */
static __attribute__((noinline)) void farewell_early(int i)
{
	STAP_PROBE1(hello, farewell, i);
}

static __attribute__((noinline)) void farewell_late(int i)
{
	STAP_PROBE1(hello, farewell, i * 100);
}

int main(void)
{
	static const char *const names[] = { "world", "bpf", "usdt" };
	int i;

	for (i = 0; i < 3; i++) {
		/* Printing first also brings the string's page in: a BPF
		 * program cannot fault a page in to read it. */
		printf("target: hello, %s\n", names[i]);
		fflush(stdout);
		STAP_PROBE2(hello, greet, i + 1, names[i]);
		usleep(10000);
		if (i < 2)
			farewell_early(i);
		else
			farewell_late(i);
	}
	return 0;
}
