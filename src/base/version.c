// SPDX-License-Identifier: BSD-2-Clause
/* The version of the running library (include/usdt_version.h). */
#include "base/internal.h"

#define USDT__STR(x) #x
#define USDT__XSTR(x) USDT__STR(x)

int usdt_major_version(void)
{
	return USDT_MAJOR_VERSION;
}

int usdt_minor_version(void)
{
	return USDT_MINOR_VERSION;
}

const char *usdt_version_string(void)
{
	return "v" USDT__XSTR(USDT_MAJOR_VERSION) "." USDT__XSTR(
		USDT_MINOR_VERSION);
}
