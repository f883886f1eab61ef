// SPDX-License-Identifier: BSD-2-Clause
/*
 * Matching call sites by provider and name, for both readers: shell globs
 * (fnmatch() without flags), or, for a pattern without glob characters, a
 * binary search over the sorted names and a strcmp() per entry, so that
 * attaching one name costs its own sites, not the file's.
 */
#include <fnmatch.h>
#include <string.h>

#include "base/match.h"

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[\\") != NULL;
}

void usdt__pat_init(struct usdt__pat *pat, const char *provider,
		    const char *name)
{
	pat->provider = provider;
	pat->name = name;
	pat->exact = !is_glob(provider) && !is_glob(name);
}

int usdt__pat_test(const struct usdt__pat *pat, const char *provider,
		   const char *name)
{
	if (pat->exact)
		return !strcmp(provider, pat->provider) &&
				       !strcmp(name, pat->name) ?
			       1 :
			       -1;
	return !fnmatch(pat->provider, provider, 0) &&
	       !fnmatch(pat->name, name, 0);
}

size_t usdt__pat_first(const struct usdt__pat *pat, const void *seq, size_t n,
		       usdt__pair_at_fn at)
{
	size_t lo = 0, hi = n, mid;
	const char *p, *q;
	int c;

	if (!pat->exact)
		return 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		at(seq, mid, &p, &q);
		c = strcmp(p, pat->provider);
		if (!c)
			c = strcmp(q, pat->name);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
