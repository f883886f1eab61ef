// SPDX-License-Identifier: BSD-2-Clause
/*
 * libsemabss.so: probes whose semaphores are plain variables, as a
 * program written without dtrace -G declares them: one in .data, one
 * first in .bss (past the data segment's file image, in the page the
 * file is mapped on: the library is small), and one in .bss behind
 * 16 KiB, in the anonymous pages the loader maps past the file, where the
 * kernel cannot count it. Neither gcc nor clang keeps globals in the
 * order written, so the pad and the far one are in .bss sections of their
 * own, which the link sorts by name (--sort-section=name).
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

unsigned short test_data_sema_semaphore __attribute__((section(".data")));
unsigned short test_bss_sema_semaphore;
char sema_bss_pad[16384] __attribute__((section(".bss.sema_1pad")));
unsigned short test_far_sema_semaphore
	__attribute__((section(".bss.sema_2far")));

unsigned short bss_sema_value(void)
{
	return *(volatile unsigned short *)&test_bss_sema_semaphore;
}

unsigned short data_sema_value(void)
{
	return *(volatile unsigned short *)&test_data_sema_semaphore;
}

/* Return whether the probe was enabled, as a program would check. */
__attribute__((noinline)) int fire_bss_sema(long v)
{
	if (bss_sema_value()) {
		STAP_PROBE1(test, bss_sema, v);
		return 1;
	}
	return 0;
}

__attribute__((noinline)) int fire_data_sema(long v)
{
	if (data_sema_value()) {
		STAP_PROBE1(test, data_sema, v);
		return 1;
	}
	return 0;
}

__attribute__((noinline)) int fire_far_sema(long v)
{
	if (*(volatile unsigned short *)&test_far_sema_semaphore) {
		STAP_PROBE1(test, far_sema, v);
		return 1;
	}
	return 0;
}
