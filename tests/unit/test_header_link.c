// SPDX-License-Identifier: BSD-2-Clause
/*
 * include/usdt.h in two files of one statically linked program (this one
 * and header_second.c) that calls no libusdt function: one
 * usdt__handler_ref between them, not one each, and through it the
 * section handler linked in and registered with libbpf at start.
 */
#include <stdbool.h>

#include "test_util.h"
#include "usdt.h"

int **header_second_ref(void);
extern bool usdt__handler_active;	/* src/libbpf/object.h */

static void test_one_anchor(void **state)
{
	(void)state;
	assert_ptr_equal(header_second_ref(), &usdt__handler_ref);
	assert_ptr_equal(usdt__handler_ref, &usdt__handler_anchor);
	assert_true(usdt__handler_active);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_anchor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
