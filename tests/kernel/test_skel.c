// SPDX-License-Identifier: BSD-2-Clause
/*
 * A real bpftool skeleton whose programs name their probes in the section
 * (SEC("usdt/PATH:PROVIDER:NAME")): the skeleton's __attach() succeeds,
 * usdt_manager__attach_all() attaches them, they fire with the right
 * arguments and cookie, and usdt_manager__free() leaves no kernel link,
 * with uprobe_multi links and with per-site uprobes, under every libbpf.
 */
#include <sys/sdt.h>

#include <bpf/bpf.h>

#include "test_util.h"
#include "attach/attach.h"
#include "usdt_skel.skel.h"

void lib_fire(int x);

__attribute__((noinline)) void fire_self(long v)
{
	STAP_PROBE1(skel, one, v);
}

static int prog_link_cnt(const struct bpf_program *prog)
{
	return usdt_test_prog_links(prog, NULL);
}

static void fire_all(void)
{
	lib_fire(41);
	fire_self(-7);
}

static struct usdt_skel *open_skel(struct usdt_manager **man, bool per_site,
				   bool missing, bool malformed)
{
	USDT_OPTS(usdt_manager_opts, mo, .no_uprobe_multi = per_site);
	struct usdt_skel *skel = usdt_skel__open();

	assert_non_null(skel);
	bpf_program__set_autoload(skel->progs.on_missing, missing);
	bpf_program__set_autoload(skel->progs.on_malformed, malformed);
	*man = usdt_manager__new(skel->obj, &mo);
	assert_non_null(*man);
	assert_int_equal(usdt_skel__load(skel), 0);
	/* libbpf's own auto-attach skips what the manager attaches. */
	assert_int_equal(usdt_skel__attach(skel), 0);
	return skel;
}

static void run(bool per_site)
{
	USDT_OPTS(usdt_attach_opts, ao, .usdt_cookie = 0x5eed);
	bool multi = !per_site && usdt__features()->uprobe_multi;
	struct usdt_manager *man;
	struct usdt_skel *skel = open_skel(&man, per_site, false, false);

	/* The program is loaded for the link it will take, whatever libbpf
	 * (1.3+ would force uprobe_multi for a per-site manager). */
	assert_int_equal(bpf_program__expected_attach_type(skel->progs.on_self),
			 multi ? USDT__TRACE_UPROBE_MULTI : 0);
	assert_int_equal(usdt_manager__attach_all(man, 0, &ao), 2);
	fire_all();
	assert_int_equal(skel->bss->lib_hits, 1);
	assert_int_equal(skel->bss->lib_x, 41);
	assert_int_equal(skel->bss->lib_cookie, 0x5eed);
	assert_int_equal(skel->bss->self_hits, 1);
	assert_int_equal(skel->bss->self_v, -7);
	assert_int_equal(skel->bss->bare_hits, 0);
	/* One uprobe_multi link, or one perf link for its one site. */
	assert_int_equal(prog_link_cnt(skel->progs.on_lib_fire), 1);
	assert_int_equal(man->owned_cnt, 2);
	assert_int_equal(man->store->specs.live_cnt, 2);

	/* Freeing the manager detaches everything it attached. */
	usdt_manager__free(man);
	fire_all();
	assert_int_equal(skel->bss->lib_hits, 1);
	assert_int_equal(skel->bss->self_hits, 1);
	assert_int_equal(prog_link_cnt(skel->progs.on_lib_fire), 0);
	assert_int_equal(prog_link_cnt(skel->progs.on_self), 0);
	usdt_skel__destroy(skel);
}

static void test_multi(void **state)
{
	run(false);
}

static void test_per_site(void **state)
{
	run(true);
}

/* One program fails: none stays attached, no spec ID stays taken. */
static void test_all_or_nothing(void **state)
{
	struct usdt_manager *man;
	struct usdt_skel *skel = open_skel(&man, false, true, false);

	assert_int_equal(usdt_manager__attach_all(man, 0, NULL), -ENOENT);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(man->owned_cnt, 0);
	assert_int_equal(man->store->specs.live_cnt, 0);
	assert_int_equal(man->store->refcnt, 1);	/* the manager's own */
	fire_all();
	assert_int_equal(skel->bss->lib_hits, 0);
	assert_int_equal(skel->bss->self_hits, 0);
	assert_int_equal(prog_link_cnt(skel->progs.on_lib_fire), 0);
	usdt_manager__free(man);
	usdt_skel__destroy(skel);
}

static void test_malformed(void **state)
{
	struct usdt_manager *man;
	struct usdt_skel *skel = open_skel(&man, false, false, true);

	assert_int_equal(usdt_manager__attach_all(man, 0, NULL), -EINVAL);
	assert_int_equal(man->owned_cnt, 0);
	assert_int_equal(man->store->specs.live_cnt, 0);
	usdt_manager__free(man);
	usdt_skel__destroy(skel);
}

static void test_bad_args(void **state)
{
	struct usdt_manager *man;
	struct usdt_skel *skel = open_skel(&man, false, false, false);

	assert_int_equal(usdt_manager__attach_all(NULL, 0, NULL), -EINVAL);
	assert_int_equal(usdt_manager__attach_all(man, -2, NULL), -EINVAL);
	assert_int_equal(man->owned_cnt, 0);
	usdt_manager__free(man);
	usdt_skel__destroy(skel);
}

/*
 * A second call is refused (-EALREADY) and changes nothing: attaching
 * every program again would make each probe run it twice per hit.
 */
static void attach_twice(bool per_site)
{
	struct usdt_manager *man;
	struct usdt_skel *skel = open_skel(&man, per_site, false, false);

	assert_int_equal(usdt_manager__attach_all(man, 0, NULL), 2);
	errno = 0;
	assert_int_equal(usdt_manager__attach_all(man, 0, NULL), -EALREADY);
	assert_int_equal(errno, EALREADY);
	/* Another pid is no different: the programs are attached. */
	assert_int_equal(usdt_manager__attach_all(man, -1, NULL), -EALREADY);
	assert_int_equal(man->owned_cnt, 2);
	assert_int_equal(prog_link_cnt(skel->progs.on_lib_fire), 1);
	assert_int_equal(prog_link_cnt(skel->progs.on_self), 1);
	/* Two rounds of hits: each program ran once per hit. */
	fire_all();
	fire_all();
	assert_int_equal(skel->bss->lib_hits, 2);
	assert_int_equal(skel->bss->self_hits, 2);
	usdt_manager__free(man);
	fire_all();
	assert_int_equal(skel->bss->lib_hits, 2);
	assert_int_equal(skel->bss->self_hits, 2);
	usdt_skel__destroy(skel);
}

/* With uprobe_multi links and with per-site perf uprobes. */
static void test_attach_twice(void **state)
{
	attach_twice(false);
	attach_twice(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multi),
		cmocka_unit_test(test_per_site),
		cmocka_unit_test(test_all_or_nothing),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_attach_twice),
	};

	usdt_test_require_kernel("test_skel");
	return cmocka_run_group_tests_name("skel", tests, NULL, NULL);
}
