/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every source file of the library uses: logging, error conversion,
 * opts handling and an overflow-checked realloc. Each layer has a folder
 * of src/ and headers of its own for the rest (docs/library.md, Layout;
 * tests/layers.sh keeps the order).
 */
#ifndef __LIBUSDT_INTERNAL_H
#define __LIBUSDT_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "usdt.h"

#define USDT__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------------- */
/* Logging (src/base/log.c). Messages start with "usdt: ".                     */

__attribute__((format(printf, 2, 3))) void usdt__pr(enum usdt_print_level level,
						    const char *fmt, ...);

#define pr_warn(fmt, ...) usdt__pr(USDT_WARN, "usdt: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) usdt__pr(USDT_INFO, "usdt: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) usdt__pr(USDT_DEBUG, "usdt: " fmt, ##__VA_ARGS__)

/* strerror() of a negative or positive errno, in a static per-thread buffer. */
const char *usdt__errstr(int err);

/* ---------------------------------------------------------------------- */
/* Errors: pass negative errnos inside, convert once at the exported call. */

static inline int usdt__err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

static inline void *usdt__err_ptr(int err)
{
	errno = err < 0 ? -err : err;
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Opts (the user's struct may be older or newer than ours).              */

/* True if every byte of opts from our_sz to user_sz is zero. */
bool usdt__opts_tail_zero(const void *opts, size_t our_sz, size_t user_sz);

/*
 * Valid opts of struct TYPE: sz covers at least sz itself, and every byte
 * the user passed past TYPE##__last_field's end is zero: the struct's own
 * padding before its `size_t :0` (a field a later version may add there)
 * as well as a newer, longer struct's tail. As libbpf's OPTS_VALID.
 */
#define USDT__OFFSETOFEND(type, field) \
	(offsetof(struct type, field) + sizeof(((struct type *)0)->field))
#define OPTS_VALID(opts, type)                                              \
	(!(opts) ||                                                         \
	 ((opts)->sz >= USDT__OFFSETOFEND(type, sz) &&                      \
	  usdt__opts_tail_zero((opts),                                      \
			       USDT__OFFSETOFEND(type, type##__last_field), \
			       (opts)->sz)))
#define OPTS_HAS(opts, field)                                       \
	((opts) && (opts)->sz >= offsetof(typeof(*(opts)), field) + \
					 sizeof((opts)->field))
#define OPTS_GET(opts, field, fallback) \
	(OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/* calloc-style overflow check for realloc. */
static inline void *usdt__reallocarray(void *ptr, size_t nmemb, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(nmemb, size, &total))
		return NULL;
	return realloc(ptr, total ? total : 1);
}

#endif /* __LIBUSDT_INTERNAL_H */
