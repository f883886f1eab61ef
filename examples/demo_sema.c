// SPDX-License-Identifier: BSD-2-Clause
/*
 * The demo's probe with a semaphore. <sys/sdt.h> gives every probe of a
 * file a semaphore once _SDT_HAS_SEMAPHORES is defined, so this probe has
 * a file of its own. The semaphore is non-zero only while a tracer is
 * attached: the costly argument below is computed only then.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

unsigned short demo_expensive_semaphore __attribute__((section(".probes")));

static long costly(int round)
{
	long sum = 0;
	int i;

	for (i = 0; i <= round; i++)
		sum += (long)i * i;
	return sum;
}

void demo_sema_fire(int round);

void demo_sema_fire(int round)
{
	if (demo_expensive_semaphore)
		STAP_PROBE2(demo, expensive, round, costly(round));
}
