// SPDX-License-Identifier: BSD-2-Clause
/* A probe with a semaphore; its own file, since _SDT_HAS_SEMAPHORES
 * applies to every probe of a translation unit. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

__extension__ unsigned short test_sema_semaphore
	__attribute__((unused)) __attribute__((section(".probes")));

unsigned short sema_value(void)
{
	return *(volatile unsigned short *)&test_sema_semaphore;
}

/* Returns whether the probe was enabled, as a program would check. */
__attribute__((noinline)) int fire_sema(long v)
{
	if (sema_value()) {
		STAP_PROBE1(test, sema, v);
		return 1;
	}
	return 0;
}
