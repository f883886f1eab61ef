// SPDX-License-Identifier: BSD-2-Clause
/*
 * The program examples/hello and examples/counters trace: it greets a few
 * names, and each greeting is a USDT probe with two arguments, a count and
 * a string; each is followed by a hello:farewell probe, at one of two call
 * sites. With -w it first says it runs, with a byte on fd 3 if that is
 * open, and waits for a line on stdin (hello_skel attaches to it by pid in
 * between: only the target itself can tell that exec has mapped it).
 */
#include <stdio.h>
#include <string.h>
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

int main(int argc, char **argv)
{
	static const char *const names[] = { "world", "bpf", "usdt" };
	char line[16];
	int i;

	if (argc > 1 && !strcmp(argv[1], "-w")) {
		if (write(3, "r", 1) == 1)
			close(3);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
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
