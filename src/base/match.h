/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Matching call sites by provider and name (src/base/match.c), over the
 * index's sorted groups (usdt__file_pick(), src/reader/noteidx.c).
 */
#ifndef __LIBUSDT_MATCH_H
#define __LIBUSDT_MATCH_H

#include <stdbool.h>
#include <stddef.h>

/* A provider:name pattern of two shell globs; exact when neither has a
 * glob character, and then compared with strcmp(), not fnmatch(). */
struct usdt__pat {
	const char *provider, *name;
	bool exact;
};

void usdt__pat_init(struct usdt__pat *pat, const char *provider,
		    const char *name);

/*
 * Does provider:name match? 1 or 0; for an exact pattern, -1 when it does
 * not: in a sequence sorted by provider, then name (strcmp()), read from
 * usdt__pat_first() on, nothing later matches either.
 */
int usdt__pat_test(const struct usdt__pat *pat, const char *provider,
		   const char *name);

/* The provider and name of entry i of a sorted sequence. */
typedef void (*usdt__pair_at_fn)(const void *seq, size_t i,
				 const char **provider, const char **name);

/*
 * Where in the sequence seq of n entries, sorted by provider, then name,
 * the matches of pat can start: for an exact pattern the first entry not
 * below its pair (a binary search), else 0.
 */
size_t usdt__pat_first(const struct usdt__pat *pat, const void *seq, size_t n,
		       usdt__pair_at_fn at);

#endif /* __LIBUSDT_MATCH_H */
