// SPDX-License-Identifier: BSD-2-Clause
/*
 * Per-attach storage against the running kernel: values isolated between
 * links and between sites, the initial value seen by the first hit, slots
 * reused from a new initial value after destroy, E2BIG with nothing left,
 * in every mode (uprobe_multi and perf uprobes; cookie with pid -1 and
 * pid > 0, IP map); and an object that declares storage costs a program
 * that does not use it nothing.
 */
#include <sys/sdt.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "test_util.h"
#include "chunk_util.h"
#include "attach/attach.h"
#include "shapes.h"
#include "storage_test.h"
#include "storage_test.skel.h"
#include "usdt_test.h"
#include "usdt_test.skel.h"
#include "skel_fixture.h"

static volatile long g_zero;

static __attribute__((always_inline)) inline void site_a(long v)
{
	STAP_PROBE1(st, a, v + g_zero);
}

/* Two sites of st:a (arguments 1 and 2), one of st:b (argument 3), and
 * st:never (argument 4), which no attach in this process ever succeeds on:
 * see e2big(). */
__attribute__((noinline)) void fire_a1(void)
{
	site_a(1);
}

__attribute__((noinline)) void fire_a2(void)
{
	site_a(2);
}

__attribute__((noinline)) void fire_b(void)
{
	STAP_PROBE1(st, b, 3 + g_zero);
}

__attribute__((noinline)) void fire_never(void)
{
	STAP_PROBE1(st, never, 4 + g_zero);
}

struct mode {
	const char *name;
	bool perf, ip;
	pid_t pid;
};

static const struct mode modes[] = {
	{ "uprobe_multi, cookie, pid -1", false, false, -1 },
	{ "uprobe_multi, cookie, pid > 0", false, false, 1 },
	{ "uprobe_multi, IP map, pid > 0", false, true, 1 },
	{ "perf, cookie, pid -1", true, false, -1 },
	{ "perf, cookie, pid > 0", true, false, 1 },
	{ "perf, IP map, pid > 0", true, true, 1 },
};

static void each_mode(void (*fn)(const struct mode *m))
{
	size_t i;

	for (i = 0; i < USDT__ARRAY_SIZE(modes); i++) {
		print_message("%s\n", modes[i].name);
		fn(&modes[i]);
	}
}

struct fixture {
	struct storage_test *skel;
	struct usdt_manager *man;
	const struct mode *m;
};

static void setup(struct fixture *f, const struct mode *m, uint32_t max)
{
	USDT_OPTS(usdt_manager_opts, mo, .no_uprobe_multi = m->perf,
		  .max_storage = max, .keep_ip_map = true);

	f->m = m;
	f->skel = storage_test__open();
	assert_non_null(f->skel);
	f->man = manage_and_load(f->skel->skeleton, &mo);
}

static void teardown(struct fixture *f)
{
	usdt_manager__free(f->man);
	storage_test__destroy(f->skel);
}

static struct usdt_link *attach(struct fixture *f, const char *name,
				const struct storage_test_val *init,
				bool per_site)
{
	USDT_OPTS(usdt_attach_opts, ao, .force_ip_map = f->m->ip,
		  .storage = init, .storage_sz = init ? sizeof(*init) : 0,
		  .storage_per_site = per_site);
	pid_t pid = f->m->pid > 0 ? getpid() : f->m->pid;

	return usdt_manager__attach(f->man, f->skel->progs.on_hit, pid,
				    "/proc/self/exe", "st", name, &ao);
}

static const struct storage_test_val *val(struct usdt_link *l, size_t i)
{
	const struct storage_test_val *v = usdt_link__storage(l, i);

	assert_non_null(v);
	return v;
}

/* Site i of link l saw its own hits only, and its initial value. */
static void check_val(const struct storage_test_val *v, uint64_t init,
		      uint32_t tag, uint64_t hits, long arg)
{
	assert_int_equal(v->init, init);
	assert_int_equal(v->tag, tag);
	assert_int_equal(v->hits, hits);
	assert_int_equal(v->seen_init, hits ? init : 0);
	assert_int_equal(v->last_arg, hits ? arg : 0);
}

/* Links A (st:a, a value per site) and B (st:b, one value): each sees its
 * own hits, from its own initial value, from the first hit on. */
static void isolation(const struct mode *m)
{
	struct storage_test_val ia = { .init = 100, .tag = 7 },
				ib = { .init = 200, .tag = 8 };
	const struct storage_test_val *v0, *v1;
	struct fixture f;
	struct usdt_link *a, *b;

	setup(&f, m, 0);
	/* The object's USDT_MAX_STORAGE_CNT, exactly (chunks hold more). */
	assert_int_equal(f.man->store->storage.cap, 64);
	a = attach(&f, "a", &ia, true);
	b = attach(&f, "b", &ib, false);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(usdt_link__site_cnt(a), 2);
	v0 = val(a, 0);
	v1 = val(a, 1);
	assert_ptr_not_equal(v0, v1);
	check_val(v0, 100, 7, 0, 0);
	fire_a1();
	fire_a2();
	fire_a2();
	fire_b();
	fire_b();
	fire_b();
	/* Which site is which depends on the file: site i fired i+1 times
	 * with argument i+1, or the other way round. */
	if (v0->last_arg == 2) {
		const struct storage_test_val *t = v0;

		v0 = v1;
		v1 = t;
	}
	check_val(v0, 100, 7, 1, 1);
	check_val(v1, 100, 7, 2, 2);
	check_val(val(b, 0), 200, 8, 3, 3);
	assert_int_equal(f.skel->bss->none_cnt, 0);
	assert_int_equal(f.skel->bss->all_cnt, 6);
	/* User space writes in place; the next hit reads it. */
	((struct storage_test_val *)val(b, 0))->init = 201;
	((struct storage_test_val *)val(b, 0))->hits = 0;
	fire_b();
	check_val(val(b, 0), 201, 8, 1, 3);
	assert_int_equal(f.man->store->storage.slots.live_cnt, 3);
	usdt_link__destroy(a);
	usdt_link__destroy(b);
	assert_int_equal(f.man->store->storage.slots.live_cnt, 0);
	teardown(&f);
}

static void test_isolation(void **state)
{
	each_mode(isolation);
}

/* A destroyed link's slot is zeroed, and the next attach reuses it from
 * its own initial value. An attach without storage gets NULL. */
static void reuse(const struct mode *m)
{
	struct storage_test_val i1 = { .init = 5, .tag = 1 },
				i2 = { .init = 9, .tag = 2 };
	const struct storage_test_val *v;
	struct fixture f;
	struct usdt_link *l;

	setup(&f, m, 0);
	l = attach(&f, "b", &i1, false);
	assert_non_null(l);
	v = val(l, 0);
	fire_b();
	check_val(v, 5, 1, 1, 3);
	assert_int_equal(usdt_link__destroy(l), 0);
	/* Still mapped by the manager: the slot is free and zero. */
	check_val(v, 0, 0, 0, 0);
	assert_int_equal(f.man->store->storage.slots.free_cnt, 1);

	l = attach(&f, "b", &i2, false);
	assert_non_null(l);
	assert_ptr_equal(val(l, 0), v);
	check_val(v, 9, 2, 0, 0);
	fire_b();
	check_val(v, 9, 2, 1, 3);
	usdt_link__destroy(l);

	/* No storage: NULL on both sides. */
	l = attach(&f, "b", NULL, false);
	assert_non_null(l);
	errno = 0;
	assert_null(usdt_link__storage(l, 0));
	assert_int_equal(errno, ENOENT);
	fire_b();
	assert_int_equal(f.skel->bss->none_cnt, 1);
	check_val(v, 0, 0, 0, 0);
	usdt_link__destroy(l);
	teardown(&f);
}

static void test_reuse(void **state)
{
	each_mode(reuse);
}

/* Two slots: st:a per site takes both; st:never then fails with E2BIG and
 * leaves nothing (no spec, no slot, no IP-map entry, no uprobe: firing it
 * runs nothing), and once st:a is gone st:b gets a slot.
 *
 * The site fired to show that no uprobe is left is one that never had a
 * uprobe in this process. On s390x under QEMU's TCG (Debian's 7.2, make
 * vm-check) a site that once ran with a uprobe's breakpoint can run that
 * breakpoint again after it is removed: each uprobe change maps a new copy
 * of the text page, the kernel fills the copy with MVCL, and QEMU drops
 * only the translations that cover the copy's first byte; when the page
 * allocator hands back a frame that held this text page before, the site
 * runs its old translation, traps on a breakpoint that memory no longer
 * holds, and the kernel, reading the nop there, sends SIGILL. Real
 * hardware is not affected; a site with a breakpoint is always right (the
 * kernel's two-byte write of the breakpoint drops the translation). */
static void e2big(const struct mode *m)
{
	struct storage_test_val init = { .init = 1 };
	struct fixture f;
	struct usdt_link *a, *b;
	uint32_t specs;

	setup(&f, m, 2);
	a = attach(&f, "a", &init, true);
	assert_non_null(a);
	specs = f.man->store->specs.live_cnt;
	errno = 0;
	b = attach(&f, "never", &init, false);
	assert_null(b);
	assert_int_equal(errno, E2BIG);
	assert_int_equal(f.man->store->specs.live_cnt, specs);
	assert_int_equal(f.man->store->storage.slots.live_cnt, 2);
	fire_never();
	assert_int_equal(f.skel->bss->all_cnt, 0);

	usdt_link__destroy(a);
	assert_int_equal(f.man->store->specs.live_cnt, 0);
	assert_int_equal(ip_cnt(bpf_map__fd(f.skel->maps.usdt__ip2spec)), 0);
	b = attach(&f, "b", &init, false);
	assert_non_null(b);
	fire_b();
	check_val(val(b, 0), 1, 0, 1, 3);
	usdt_link__destroy(b);
	teardown(&f);
}

static void test_e2big(void **state)
{
	each_mode(e2big);
}

static void expect_einval(struct fixture *f, const void *init, size_t sz,
			  bool per_site)
{
	USDT_OPTS(usdt_attach_opts, ao, .storage = init, .storage_sz = sz,
		  .storage_per_site = per_site);

	errno = 0;
	assert_null(usdt_manager__attach(f->man, f->skel->progs.on_hit, 0,
					 "/proc/self/exe", "st", "b", &ao));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(f->man->store->specs.live_cnt, 0);
}

/* Sizes other than the BPF type's, per_site or a size without a value, a
 * value for an object without USDT_STORAGE_TYPE: EINVAL. */
static void test_errors(void **state)
{
	USDT_OPTS(usdt_manager_opts, mo, .max_storage = 4);
	USDT_OPTS(usdt_attach_opts, ao, .storage = &ao,
		  .storage_sz = sizeof(struct storage_test_val));
	struct storage_test_val init = {};
	struct usdt_test *plain;
	struct usdt_manager *man;
	struct fixture f;

	setup(&f, &modes[1], 0);
	expect_einval(&f, &init, sizeof(init) - 4, false);
	expect_einval(&f, &init, sizeof(init) + 4, false);
	expect_einval(&f, NULL, sizeof(init), false);
	expect_einval(&f, NULL, 0, true);
	errno = 0;
	assert_null(usdt_link__storage(NULL, 0));
	assert_int_equal(errno, EINVAL);
	teardown(&f);

	plain = usdt_test__open();
	assert_non_null(plain);
	man = manager_refused(plain->obj, &mo);
	assert_int_equal(usdt_test__load(plain), 0);
	errno = 0;
	assert_null(usdt_manager__attach(man, plain->progs.on_usdt, 0,
					 "/proc/self/exe", "st", "b", &ao));
	assert_int_equal(errno, EINVAL);
	usdt_manager__free(man);
	usdt_test__destroy(plain);
}

/* Per-site index past the last site: ENOENT. */
static void test_index(void **state)
{
	struct storage_test_val init = { .init = 3 };
	struct fixture f;
	struct usdt_link *l;

	setup(&f, &modes[1], 0);
	l = attach(&f, "a", &init, false);
	assert_non_null(l);
	/* One value for the link: every site gives it. */
	assert_ptr_equal(val(l, 0), val(l, 1));
	errno = 0;
	assert_null(usdt_link__storage(l, 2));
	assert_int_equal(errno, ENOENT);
	usdt_link__destroy(l);
	teardown(&f);
}

/* The values outlive the manager's user and the object: the link keeps
 * the mapping, BPF goes on counting, user space goes on reading. */
static void test_outlives_object(void **state)
{
	struct storage_test_val init = { .init = 4 };
	const struct storage_test_val *v;
	struct fixture f;
	struct usdt_link *l;

	setup(&f, &modes[0], 0);
	l = attach(&f, "b", &init, false);
	assert_non_null(l);
	teardown(&f);
	v = usdt_link__storage(l, 0);
	assert_non_null(v);
	fire_b();
	fire_b();
	check_val(v, 4, 0, 2, 3);
	assert_int_equal(usdt_link__destroy(l), 0);
}

static struct bpf_object *load_shapes(const char *variant,
				      struct usdt_manager **man)
{
	struct bpf_object *obj = shapes_open(variant, man);

	assert_int_equal(bpf_object__load(obj), 0);
	return obj;
}

static void prog_cost(const struct bpf_program *p, __u32 *xlated,
		      __u32 *verified)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(p), &info,
						&len), 0);
	*xlated = info.xlated_prog_len / 8;
	*verified = info.verified_insns;
}

/*
 * The shapes (bpf_usdt_arg(), BPF_USDT(), ...) built with and without
 * USDT_STORAGE_TYPE: the same instructions, verified and run, in each
 * program; only the object with it has the storage map.
 */
static void test_no_cost(void **state)
{
	struct usdt_manager *man_p, *man_s;
	struct bpf_object *plain = load_shapes("v3", &man_p);
	struct bpf_object *stor = load_shapes("storage", &man_s);
	struct bpf_program *p, *q;
	__u32 xp, vp, xs, vs;
	int n = 0;

	bpf_object__for_each_program(p, plain) {
		q = bpf_object__find_program_by_name(stor,
						     bpf_program__name(p));
		assert_non_null(q);
		if (!bpf_program__autoload(p))	/* see shapes_open() */
			continue;
		prog_cost(p, &xp, &vp);
		prog_cost(q, &xs, &vs);
		print_message("%-10s xlated %u / %u, verified %u / %u (without / with storage)\n",
			      bpf_program__name(p), xp, xs, vp, vs);
		assert_int_equal(xp, xs);
		assert_int_equal(vp, vs);
		n++;
	}
	assert_true(n >= 4);
	/* What bpf_usdt_storage() and one increment cost the verifier. */
	prog_cost(bpf_object__find_program_by_name(stor, "storage"), &xs, &vs);
	print_message("storage    xlated %u, verified %u\n", xs, vs);
	assert_true(vs < 200);
	assert_null(bpf_object__find_map_by_name(plain, "usdt__storage"));
	assert_non_null(bpf_object__find_map_by_name(stor, "usdt__storage"));
	usdt_manager__free(man_p);
	usdt_manager__free(man_s);
	bpf_object__close(plain);
	bpf_object__close(stor);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_isolation),
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_e2big),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_outlives_object),
		cmocka_unit_test(test_no_cost),
	};

	usdt_test_require_kernel("kernel/test_storage");
	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("storage", tests, NULL, NULL);
}
