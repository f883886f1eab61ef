/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Out-of-memory tests: link with -Wl,--wrap=malloc,--wrap=calloc,
 * --wrap=realloc and include this once. While fail_at >= 0, the library's
 * allocation number fail_at (counting from 0 in alloc_cnt) returns NULL.
 * Shared libraries (libelf, libbpf) are not wrapped.
 */
#ifndef __LIBUSDT_OOM_WRAP_H
#define __LIBUSDT_OOM_WRAP_H

#include <stdbool.h>
#include <stddef.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t nmemb, size_t size);
void *__real_realloc(void *ptr, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t nmemb, size_t size);
void *__wrap_realloc(void *ptr, size_t size);

static long fail_at = -1;	/* -1: never fail */
static long alloc_cnt;

static bool should_fail(void)
{
	return fail_at >= 0 && alloc_cnt++ == fail_at;
}

void *__wrap_malloc(size_t size)
{
	return should_fail() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t nmemb, size_t size)
{
	return should_fail() ? NULL : __real_calloc(nmemb, size);
}

void *__wrap_realloc(void *ptr, size_t size)
{
	return should_fail() ? NULL : __real_realloc(ptr, size);
}

#endif
