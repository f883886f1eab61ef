/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The manager's compact read of a file (an index by name; each attach
 * reads and parses the sites it matches, usdt__file_pick()) against the
 * full read of the same file: the same sites in the same order, with the
 * same addresses, offsets, statuses, errors and specs. Include after
 * test_util.h.
 */
#ifndef USDT_COMPACT_CHECK_H
#define USDT_COMPACT_CHECK_H

#include "file.h"
#include "note.h"
#include "noteidx.h"

struct compact_sites {
	const struct usdt_probe **v;
	size_t n, cap;
};

static int compact_collect(const struct usdt_probe *p, void *ctx)
{
	struct compact_sites *s = ctx;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		assert_non_null(s->v);
	}
	s->v[s->n++] = p;
	return 0;
}

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
	assert_int_equal(a->arg_cnt, b->arg_cnt);
	for (i = 0; i < a->arg_cnt; i++)
		assert_memory_equal(usdt__probe_spec(a, i),
				    usdt__probe_spec(b, i),
				    sizeof(struct usdt_arg_spec));
}

/* One pattern: the full file's matches against the compact file's. */
static void compact_pick_eq(const struct usdt_file *full,
			    const struct usdt_file *c, const char *provider,
			    const char *name)
{
	struct compact_sites s = { 0 };
	struct usdt_probe *picked;
	size_t cnt, i;

	assert_true(usdt__file_match(full, provider, name, compact_collect,
				     &s) >= 0);
	assert_int_equal(usdt__file_pick(c, provider, name, &picked, &cnt), 0);
	assert_int_equal(cnt, s.n);
	for (i = 0; i < cnt; i++)
		compact_probe_eq(s.v[i], &picked[i]);
	usdt__probes_free(picked, cnt);
	free(s.v);
}

/*
 * Read path compact and compare with full, its full read (NULL: that read
 * failed with errno err). Every site at once, and the first 64 names one
 * at a time.
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
	e = usdt__file_open_fd(fd, path, true, &c);
	if (!full && e == 0) {
		/* Only the bound on all arguments is met later: at a pick. */
		assert_int_equal(err, E2BIG);
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
			compact_pick_eq(full, c, full->probes[i].provider,
					full->probes[i].name);
		compact_pick_eq(full, c, "no", "such");
	}
	usdt_file__close(c);
	usdt_set_print(old);
}

#endif /* USDT_COMPACT_CHECK_H */
