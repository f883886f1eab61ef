// SPDX-License-Identifier: BSD-2-Clause
/*
 * usdt_strerror(), the one place libusdt and the usdt tool turn an errno
 * into text: as strerror() for what libc knows, and a message for 524,
 * the kernel's internal ENOTSUPP that BPF and uprobe calls return but
 * <errno.h> lacks (strerror() says "Unknown error 524").
 */
#include "test_util.h"
#include "usdt.h"

#define ENOTSUPP_MSG "operation not supported by the kernel (ENOTSUPP)"

static void test_enotsupp(void **state)
{
	char buf[128];

	assert_ptr_equal(usdt_strerror(-524, buf, sizeof(buf)), buf);
	assert_string_equal(buf, ENOTSUPP_MSG);
	assert_string_equal(usdt_strerror(524, buf, sizeof(buf)),
			    ENOTSUPP_MSG);
}

static void test_libc_errnos(void **state)
{
	static const int errs[] = { ENOENT, EPERM, EOPNOTSUPP, EINVAL, E2BIG };
	char buf[128];
	size_t i;

	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		assert_string_equal(usdt_strerror(-errs[i], buf, sizeof(buf)),
				    strerror(errs[i]));
		assert_string_equal(usdt_strerror(errs[i], buf, sizeof(buf)),
				    strerror(errs[i]));
	}
	/* Other numbers libc does not know stay as libc says them. */
	assert_string_equal(usdt_strerror(-525, buf, sizeof(buf)),
			    "Unknown error 525");
}

/* Cut to the buffer, always terminated, like strerror_r(). */
static void test_small_buffer(void **state)
{
	char buf[8];

	memset(buf, 'x', sizeof(buf));
	assert_string_equal(usdt_strerror(-524, buf, sizeof(buf)), "operati");
	assert_string_equal(usdt_strerror(-ENOENT, buf, sizeof(buf)),
			    "No such");
	assert_null(usdt_strerror(-524, NULL, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enotsupp),
		cmocka_unit_test(test_libc_errnos),
		cmocka_unit_test(test_small_buffer),
	};

	return cmocka_run_group_tests_name("strerror", tests, NULL, NULL);
}
