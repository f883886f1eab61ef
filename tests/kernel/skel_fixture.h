/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The group fixture of test_attach and test_file: the usdt_test skeleton
 * loaded twice, with a manager made before load (uprobe_multi where the
 * kernel has it) and with one that makes per-site perf uprobes; and the
 * hits a skeleton recorded. And for any skeleton: a manager made and the
 * skeleton loaded, or a manager's options refused. Include after
 * test_util.h.
 */
#ifndef __LIBUSDT_TEST_SKEL_FIXTURE_H
#define __LIBUSDT_TEST_SKEL_FIXTURE_H

#include "usdt.h"
#include "usdt_test.h"
#include "usdt_test.skel.h"

struct fix {
	struct usdt_test *skel;
	struct usdt_manager *man;	/* uprobe_multi where the kernel has it */
	struct usdt_test *perf_skel;
	struct usdt_manager *perf_man;	/* perf uprobes */
};

/* A manager made with opts for the opened skeleton s, then s loaded (its
 * <name>__load()). */
static inline struct usdt_manager *
manage_and_load(struct bpf_object_skeleton *s,
		const struct usdt_manager_opts *opts)
{
	struct usdt_manager *man = usdt_manager__new(*s->obj, opts);

	assert_non_null(man);
	assert_int_equal(bpf_object__load_skeleton(s), 0);
	return man;
}

/* A manager with opts refused for obj (EINVAL), and one without options
 * made instead: returns that one. */
static inline struct usdt_manager *
manager_refused(struct bpf_object *obj, const struct usdt_manager_opts *opts)
{
	struct usdt_manager *man;

	errno = 0;
	assert_null(usdt_manager__new(obj, opts));
	assert_int_equal(errno, EINVAL);
	man = usdt_manager__new(obj, NULL);
	assert_non_null(man);
	return man;
}

/* usdt_test opened, given a manager made with opts (*man), and loaded. */
static inline struct usdt_test *open_loaded(struct usdt_manager **man,
					    const struct usdt_manager_opts *opts)
{
	struct usdt_test *skel = usdt_test__open();

	assert_non_null(skel);
	*man = manage_and_load(skel->skeleton, opts);
	return skel;
}

/* The group's setup and teardown: *state is the struct fix. */
static inline int fix_setup(void **state)
{
	/* Both keep the IP-map path: the tests attach in both modes. */
	USDT_OPTS(usdt_manager_opts, opts, .keep_ip_map = true);
	USDT_OPTS(usdt_manager_opts, perf_opts, .no_uprobe_multi = true,
		  .keep_ip_map = true);
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->skel = open_loaded(&f->man, &opts);
	f->perf_skel = open_loaded(&f->perf_man, &perf_opts);
	*state = f;
	return 0;
}

static inline int fix_teardown(void **state)
{
	struct fix *f = *state;

	usdt_manager__free(f->man);
	usdt_manager__free(f->perf_man);
	usdt_test__destroy(f->skel);
	usdt_test__destroy(f->perf_skel);
	free(f);
	return 0;
}

/* Forget the hits skel recorded. */
static inline void reset(struct usdt_test *skel)
{
	memset(skel->bss->hits, 0, sizeof(skel->bss->hits));
	__atomic_store_n(&skel->bss->hit_cnt, 0, __ATOMIC_SEQ_CST);
}

/* How many hits skel recorded (more than it keeps, USDT_TEST_MAX_HITS). */
static inline unsigned int hits(struct usdt_test *skel)
{
	return __atomic_load_n(&skel->bss->hit_cnt, __ATOMIC_SEQ_CST);
}

#endif
