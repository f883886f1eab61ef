// SPDX-License-Identifier: BSD-2-Clause
/* A second file of test_header_link's program that includes usdt.h. */
#include "usdt.h"

int **header_second_ref(void);

int **header_second_ref(void)
{
	return &usdt__handler_ref;
}
