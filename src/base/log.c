// SPDX-License-Identifier: BSD-2-Clause
/* Logging callback, error strings, and opts checking. */
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>

#include "base/internal.h"

static int default_print(enum usdt_print_level level, const char *fmt,
			 va_list ap)
{
	static int threshold = -1;
	const char *env;

	/* A benign race: every thread computes the same value. */
	if (threshold < 0) {
		env = getenv("USDT_LOG_LEVEL");
		if (env && !strcasecmp(env, "debug"))
			threshold = USDT_DEBUG;
		else if (env && !strcasecmp(env, "info"))
			threshold = USDT_INFO;
		else
			threshold = USDT_WARN;
	}
	if ((int)level > threshold)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static usdt_print_fn_t print_fn = default_print;

usdt_print_fn_t usdt_set_print(usdt_print_fn_t fn)
{
	return __atomic_exchange_n(&print_fn, fn, __ATOMIC_RELAXED);
}

void usdt__pr(enum usdt_print_level level, const char *fmt, ...)
{
	usdt_print_fn_t fn = __atomic_load_n(&print_fn, __ATOMIC_RELAXED);
	int saved = errno;
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
	errno = saved;
}

const char *usdt_strerror(int err, char *buf, size_t size)
{
	if (!buf || !size)
		return buf;
	if (err < 0)
		err = -err;
	/* The kernel's internal ENOTSUPP leaks out of BPF and uprobe calls
	 * (an unsupported helper, link type or instruction); userspace's
	 * <errno.h> has no such number, so libc says "Unknown error 524". */
	if (err == 524) {
		snprintf(buf, size,
			 "operation not supported by the kernel (ENOTSUPP)");
		return buf;
	}
	/* GNU strerror_r may return a static string instead of filling buf. */
	const char *s = strerror_r(err, buf, size);
	if (s != buf)
		snprintf(buf, size, "%s", s);
	return buf;
}

const char *usdt__errstr(int err)
{
	static __thread char buf[64];

	return usdt_strerror(err, buf, sizeof(buf));
}

bool usdt__opts_tail_zero(const void *opts, size_t our_sz, size_t user_sz)
{
	const unsigned char *p = opts;
	size_t i;

	for (i = our_sz; i < user_sz; i++) {
		if (p[i]) {
			pr_warn("opts has non-zero bytes past the %zu this library knows\n",
				our_sz);
			return false;
		}
	}
	return true;
}
