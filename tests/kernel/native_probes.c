// SPDX-License-Identifier: BSD-2-Clause
/*
 * Probes for test_native, built twice (-O0 and -O2, provider NPROV) as
 * libbpf's USDT selftest builds its: none, three and twelve arguments of
 * every kind an operand takes (constants, registers, locals on the stack,
 * globals, an array element by index), and one whose semaphore it checks
 * (_SDT_HAS_SEMAPHORES gives every probe of the file one), and one with
 * 400 call sites of one spec, as libbpf's selftest has.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define SEMA CAT(NPROV, _p1_semaphore)

#define SEMA_OF(name)                                                       \
	__extension__ unsigned short CAT(NPROV, _##name##_semaphore)        \
		__attribute__((section(".probes")))
SEMA_OF(p0);
SEMA_OF(p3);
SEMA_OF(p12);
SEMA_OF(p1);
SEMA_OF(p400);

/* Named per build: two static symbols of one name make an operand that
 * names one ambiguous (the argument is then unsupported, and says why). */
#define glob_long CAT(NPROV, _glob_long)
#define glob_arr CAT(NPROV, _glob_arr)
static volatile long glob_long = 0x1122334455667788L;
static volatile int glob_arr[4] = { 10, 20, 30, 40 };
volatile int CAT(NPROV, _idx) = 2;

#define FN(name) CAT(NPROV, _##name)

__attribute__((noinline)) void FN(fire0)(void)
{
	STAP_PROBE(NPROV, p0);
}

__attribute__((noinline)) void FN(fire3)(int a, long b, const void *c)
{
	STAP_PROBE3(NPROV, p3, a, b, c);
}

__attribute__((noinline)) void FN(fire12)(signed char c, short s, int i)
{
	unsigned char uc = (unsigned char)(c + 1);
	unsigned short us = (unsigned short)(s + 1);
	unsigned int ui = (unsigned int)i * 2;
	long l = -(long)i;
	int idx = CAT(NPROV, _idx);

	STAP_PROBE12(NPROV, p12, c, uc, s, us, i, ui, l, glob_long,
		     glob_arr[idx], 42, -1, &glob_arr[1]);
}

unsigned short FN(sema)(void)
{
	return *(volatile unsigned short *)&SEMA;
}

__attribute__((noinline)) int FN(fire_sema)(long v)
{
	if (FN(sema)()) {
		STAP_PROBE1(NPROV, p1, v);
		return 1;
	}
	return 0;
}

const volatile int *FN(arr1)(void)
{
	return &glob_arr[1];
}

#define R4(x) x x x x
#define R10(x) x x x x x x x x x x

/* 400 call sites of p400, every one's argument the constant 400. */
__attribute__((noinline)) void FN(fire400)(void)
{
	R4(R10(R10(STAP_PROBE1(NPROV, p400, 400);)))
}
