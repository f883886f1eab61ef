// SPDX-License-Identifier: BSD-2-Clause
/*
 * BPF_USDT() and checked bpf_usdt_arg() calls read registers two ways (a
 * copy of the context made once per hit, and words of the context itself):
 * on every kind of operand the compiler emits, with a cookie and with the
 * IP map, built with and without __TARGET_ARCH_xxx, both read the values
 * the program passed.
 */
#include <string.h>
#include <sys/sdt.h>

#include "test_util.h"
#include "usdt.h"
#include "usdt_paths.skel.h"
#include "usdt_paths_noarch.skel.h"

struct pair {
	long lo;
	int mid;
};

volatile int g_val = -98765;
volatile long g_tab[4] = { 100, 101, 102, 103 };

/* Registers, sign and zero extensions, memory through a pointer, a
 * global (%rip-relative on x86), an indexed array element, a constant. */
__attribute__((noinline)) void fire_paths(signed char a, unsigned short b,
					  int c, unsigned int d, long e,
					  struct pair *p, int idx)
{
	STAP_PROBE12(paths, all, a, b, c, d, e, p->lo, p->mid, g_val,
		     g_tab[idx], -7, (short)c, (unsigned char)e);
}

static const long want[12] = {
	-100, 65000, -2000000, 4000000000L, -9000000000L, 1L << 40, -3,
	-98765, 102, -7, (short)-2000000, (unsigned char)-9000000000L,
};

static void fire(void)
{
	struct pair p = { .lo = 1L << 40, .mid = -3 };

	fire_paths(-100, 65000, -2000000, 4000000000U, -9000000000L, &p, 2);
}

struct paths {
	struct bpf_object *obj;
	struct bpf_program *macro, *calls;
	long *by_macro, *by_call;
	int *rc, *macro_hits, *call_hits;
};

/* Attach prog alone (the IP map takes one link per call site), fire. */
static void fire_with(struct usdt_manager *man, struct bpf_program *prog,
		      bool ip)
{
	USDT_OPTS(usdt_attach_opts, o, .force_ip_map = ip);
	struct usdt_link *l;

	/* The IP map needs the address the file is mapped at: pid 0. */
	l = usdt_manager__attach(man, prog, ip ? 0 : -1, "/proc/self/exe",
				 "paths", "all", &o);
	assert_non_null(l);
	fire();
	assert_int_equal(usdt_link__destroy(l), 0);
}

static void check(const struct paths *s, struct usdt_manager *man, bool ip)
{
	int i;

	*s->macro_hits = *s->call_hits = 0;
	memset(s->by_macro, 0, 12 * sizeof(long));
	memset(s->by_call, 0, 12 * sizeof(long));
	fire_with(man, s->macro, ip);
	fire_with(man, s->calls, ip);
	assert_int_equal(*s->macro_hits, 1);
	assert_int_equal(*s->call_hits, 1);
	for (i = 0; i < 12; i++) {
		print_message("%s, arg %d: want %ld, BPF_USDT %ld, call %ld (%d)\n",
			      ip ? "IP map" : "cookie", i, want[i],
			      s->by_macro[i], s->by_call[i], s->rc[i]);
		assert_int_equal(s->rc[i], 0);
		assert_int_equal(s->by_call[i], want[i]);
		assert_int_equal(s->by_macro[i], want[i]);
	}
}

static void run(struct paths *s, struct usdt_manager *man)
{
	check(s, man, false);
	check(s, man, true);
	usdt_manager__free(man);
}

static void test_target_arch(void **state)
{
	struct usdt_paths *skel = usdt_paths__open();
	USDT_OPTS(usdt_manager_opts, mo, .keep_ip_map = true);
	struct usdt_manager *man;
	struct paths s;

	assert_non_null(skel);
	/* A manager first: it prepares the object for load (with the
	 * IP-map path: run() attaches both ways). */
	man = usdt_manager__new(skel->obj, &mo);
	assert_non_null(man);
	assert_int_equal(usdt_paths__load(skel), 0);
	s = (struct paths){ skel->obj, skel->progs.read_macro,
			    skel->progs.read_calls, skel->bss->by_macro,
			    skel->bss->by_call, skel->bss->rc,
			    &skel->bss->macro_hits, &skel->bss->call_hits };
	run(&s, man);
	usdt_paths__destroy(skel);
}

static void test_no_target_arch(void **state)
{
	struct usdt_paths_noarch *skel = usdt_paths_noarch__open();
	USDT_OPTS(usdt_manager_opts, mo, .keep_ip_map = true);
	struct usdt_manager *man;
	struct paths s;

	assert_non_null(skel);
	man = usdt_manager__new(skel->obj, &mo);
	assert_non_null(man);
	assert_int_equal(usdt_paths_noarch__load(skel), 0);
	s = (struct paths){ skel->obj, skel->progs.read_macro,
			    skel->progs.read_calls, skel->bss->by_macro,
			    skel->bss->by_call, skel->bss->rc,
			    &skel->bss->macro_hits, &skel->bss->call_hits };
	run(&s, man);
	/* The manager told the program how big the context is. */
	assert_true(skel->rodata->usdt__ctx_sz >= 152);
	usdt_paths_noarch__destroy(skel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_arch),
		cmocka_unit_test(test_no_target_arch),
	};

	usdt_test_require_kernel("kernel/test_bpf_usdt");
	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("bpf_usdt", tests, NULL, NULL);
}
