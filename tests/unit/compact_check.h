/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The manager's read of a file (an index by name; each attach reads and
 * parses the sites it matches, usdt__file_pick()) against the public
 * getters' probes of the same file (usdt_file__probe(), all of them in
 * note order): the same sites, grouped by name, in note order within a
 * name, with the same addresses, offsets, statuses, errors and specs.
 * Include after test_util.h.
 */
#ifndef USDT_COMPACT_CHECK_H
#define USDT_COMPACT_CHECK_H

#include "reader/file.h"
#include "base/match.h"
#include "reader/noteidx.h"

static void compact_probe_eq(const struct usdt_probe *a,
			     const struct usdt_probe *b)
{
	int i;

	assert_string_equal(a->provider, b->provider);
	assert_string_equal(a->name, b->name);
	assert_int_equal(a->status, b->status);
	if (a->status) {
		assert_string_equal(a->error, b->error);
		return;
	}
	assert_int_equal(a->vaddr, b->vaddr);
	assert_int_equal(a->file_off, b->file_off);
	assert_int_equal(a->sema_vaddr, b->sema_vaddr);
	assert_int_equal(a->sema_off, b->sema_off);
	assert_int_equal(a->sema_cleared, b->sema_cleared);
	assert_int_equal(a->arg_cnt, b->arg_cnt);
	for (i = 0; i < a->arg_cnt; i++)
		assert_memory_equal(usdt__probe_spec(a, i),
				    usdt__probe_spec(b, i),
				    sizeof(struct usdt_arg_spec));
}

static const struct usdt_file *compact_sort_file;

/* By provider, then name, then note order: usdt__file_pick()'s order. */
static int compact_cmp(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct usdt_probe *p = usdt_file__probe(compact_sort_file, i);
	const struct usdt_probe *q = usdt_file__probe(compact_sort_file, j);
	int c = strcmp(p->provider, q->provider);

	if (!c)
		c = strcmp(p->name, q->name);
	return c ? c : (i > j) - (i < j);
}

/* One pattern: the public probes that match against the picked ones. */
static void compact_pick_eq(const struct usdt_file *full,
			    const struct usdt_file *c, const char *provider,
			    const char *name)
{
	size_t cnt, i, n = 0, *v = calloc(full->probe_cnt + 1, sizeof(*v));
	struct usdt_probe *picked;
	const struct usdt_probe *p;
	struct usdt__pat pat;

	assert_non_null(v);
	usdt__pat_init(&pat, provider, name);
	for (i = 0; i < full->probe_cnt; i++) {
		p = usdt_file__probe(full, i);
		if (usdt__pat_test(&pat, p->provider, p->name) > 0)
			v[n++] = i;
	}
	compact_sort_file = full;
	qsort(v, n, sizeof(*v), compact_cmp);
	assert_int_equal(usdt__file_pick(c, provider, name, &picked, &cnt), 0);
	assert_int_equal(cnt, n);
	for (i = 0; i < cnt; i++)
		compact_probe_eq(usdt_file__probe(full, v[i]), &picked[i]);
	usdt__probes_free(picked, cnt);
	free(v);
}

/*
 * Read path as the manager does and compare with full, its public read
 * (NULL: that open failed with errno err). Every site at once, and the
 * names of the first 64 sites one at a time.
 */
static void compact_check(const char *path, const struct usdt_file *full,
			  int err)
{
	usdt_print_fn_t old = usdt_set_print(NULL);
	int fd = usdt__open_regular(path), e;
	struct usdt_file *c = NULL;
	struct usdt_probe *picked;
	size_t i, cnt;

	if (fd < 0) {		/* not a regular file: never read */
		assert_null(full);
		usdt_set_print(old);
		return;
	}
	e = usdt__file_open_fd(fd, path, &c);
	if (full && full->probe_cnt && !usdt_file__probe(full, 0)) {
		/* Only the bound on all arguments is met later: when the
		 * probes are built, at a pick as at usdt_file__probe(). */
		assert_int_equal(errno, E2BIG);
		assert_int_equal(e, 0);
		assert_int_equal(usdt__file_pick(c, "*", "*", &picked, &cnt),
				 -E2BIG);
		assert_null(picked);
	} else if (!full) {
		assert_int_equal(e, -err);
	} else {
		assert_int_equal(e, 0);
		assert_int_equal(c->probe_cnt, full->probe_cnt);
		compact_pick_eq(full, c, "*", "*");
		for (i = 0; i < full->probe_cnt && i < 64; i++)
			compact_pick_eq(full, c,
					usdt_file__probe(full, i)->provider,
					usdt_file__probe(full, i)->name);
		compact_pick_eq(full, c, "no", "such");
	}
	usdt_file__close(c);
	usdt_set_print(old);
}

#endif /* USDT_COMPACT_CHECK_H */
