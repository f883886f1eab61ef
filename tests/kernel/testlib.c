// SPDX-License-Identifier: BSD-2-Clause
/* A shared library with probes, for attaching by path, by bare name, for
 * one pid and for every process. */
#include <sys/sdt.h>

static volatile int lib_hidden = 1000;	/* reached through %rip */
volatile long lib_visible = -77;	/* default visibility: through the GOT */

__attribute__((noinline)) void lib_fire(int x)
{
	lib_hidden++;
	STAP_PROBE3(testlib, fire, x, lib_hidden, lib_visible);
}
