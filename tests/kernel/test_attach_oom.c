// SPDX-License-Identifier: BSD-2-Clause
/*
 * The attach path out of memory: the library's allocations are wrapped
 * (-Wl,--wrap, tests/kernel/kernel.mk) so that the Nth one fails, for N
 * from 0 until usdt_manager__attach() succeeds, in each mode. Every
 * failure must be ENOMEM and leave nothing: no spec ID, no IP-map entry,
 * no uprobe (firing the probe records nothing), no descriptor. libbpf's
 * own allocations are not wrapped: it is a shared library.
 *
 * The manager keeps the files it parsed, so one manager allocates less
 * from its second attempt on. Each mode therefore runs twice: cold, with
 * a new manager for every attempt (the parse's allocations, and the first
 * attach's, are each failed in turn), and warm, with the file already
 * kept (each allocation of the attach itself is failed in turn).
 */
#include <dirent.h>
#include <sys/mman.h>
#include <sys/sdt.h>

#include <bpf/bpf.h>

#include "test_util.h"
#include "oom_wrap.h"
#include "chunk_util.h"
#include "kernel/kfeatures.h"
#include "attach/attach.h"
#include "usdt_test.h"
#include "usdt_test.skel.h"
#include "storage_test.h"
#include "storage_test.skel.h"
#include "skel_fixture.h"

/* The storage array's mapping counts as an allocation too. */
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	if (should_fail()) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return __real_mmap(addr, len, prot, flags, fd, off);
}

/* So does a map the manager creates: a chunk of specs or of storage, or
 * the IP map's hash (the kernel's memory). */
int __real_bpf_map_create(enum bpf_map_type type, const char *name,
			  __u32 key_sz, __u32 value_sz, __u32 max,
			  const struct bpf_map_create_opts *opts);
int __wrap_bpf_map_create(enum bpf_map_type type, const char *name,
			  __u32 key_sz, __u32 value_sz, __u32 max,
			  const struct bpf_map_create_opts *opts);

int __wrap_bpf_map_create(enum bpf_map_type type, const char *name,
			  __u32 key_sz, __u32 value_sz, __u32 max,
			  const struct bpf_map_create_opts *opts)
{
	if (should_fail()) {
		errno = ENOMEM;
		return -ENOMEM;
	}
	return __real_bpf_map_create(type, name, key_sz, value_sz, max, opts);
}

static volatile long g_val = 31;

static __attribute__((always_inline)) inline void site(long v)
{
	STAP_PROBE2(oom, two, v, g_val);
}

/* Two sites of one probe, with distinct specs (different constants). */
__attribute__((noinline)) void fire_two(void)
{
	site(1);
	site(2);
}

/*
 * Fire both sites with nothing attached: the hits counted in cnt must
 * be 0. Seen under load (perf mode: once with SANITIZE=1, twice in the
 * storage loop, in CI's trixie chroot and beside another make check): a
 * hit right after the teardown. A uprobe left attached fires again after
 * a pause too; one the kernel was still taking down does not. Said, so
 * that it shows.
 */
#define fire_none(cnt)                                                      \
	do {                                                                \
		(cnt) = 0;                                                  \
		fire_two();                                                 \
		if (cnt) {                                                  \
			print_message("a hit right after the teardown: firing again after 200 ms\n"); \
			usleep(200000);                                     \
			(cnt) = 0;                                          \
			fire_two();                                         \
		}                                                           \
		assert_int_equal((cnt), 0);                                 \
	} while (0)

static void check_nothing_left(struct usdt_test *skel, struct usdt_manager *man)
{
	uint32_t zero;

	assert_int_equal(man->store->specs.live_cnt, 0);
	assert_int_equal(specs_used(bpf_map__fd(skel->maps.usdt__spec_head),
				    bpf_map__fd(skel->maps.usdt__specs), &zero),
			 0);
	assert_int_equal(ip_cnt(bpf_map__fd(skel->maps.usdt__ip2spec)), 0);
	fire_none(skel->bss->hit_cnt);
}

/* Attached: both sites fire, with their own values and the cookie. */
static void check_attached(struct usdt_test *skel)
{
	skel->bss->hit_cnt = 0;
	fire_two();
	assert_int_equal(skel->bss->hit_cnt, 2);
	assert_int_equal(skel->bss->hits[0].args[0], 1);
	assert_int_equal(skel->bss->hits[1].args[1], 31);
	assert_int_equal(skel->bss->hits[1].cookie, 3);
}

/* The BPF links of program prog_id among this process's descriptors, by
 * type, and its perf events. */
struct fd_kinds {
	int perf_links, multi_links, perf_events;
};

static struct fd_kinds count_fds(__u32 prog_id)
{
	struct fd_kinds k = { 0 };
	char path[300], what[64];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	ssize_t n;

	assert_non_null(dir);
	while ((d = readdir(dir))) {
		struct bpf_link_info info;
		__u32 len = sizeof(info);

		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		n = readlink(path, what, sizeof(what) - 1);
		if (n <= 0)
			continue;
		what[n] = '\0';
		if (!strcmp(what, "anon_inode:[perf_event]"))
			k.perf_events++;
		if (strcmp(what, "anon_inode:bpf_link"))
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(atoi(d->d_name), &info, &len) ||
		    info.prog_id != prog_id)
			continue;
		/* BPF_LINK_TYPE_PERF_EVENT, BPF_LINK_TYPE_UPROBE_MULTI */
		k.perf_links += info.type == 7;
		k.multi_links += info.type == 12;
	}
	closedir(dir);
	return k;
}

/*
 * The link l of prog on oom:two's two sites is of the mode asked, as the
 * kernel sees it: per-site perf uprobes are a perf event each (behind a
 * BPF perf_event link each, where the kernel has bpf_cookie, which only
 * such links carry) and no uprobe_multi link; otherwise one uprobe_multi
 * link, the one usdt_link__fd() gives, and no perf event. A kernel without
 * uprobe_multi (before 6.6) gets per-site uprobes whatever was asked.
 */
static void check_mode(const struct usdt_link *l,
		       const struct bpf_program *prog, bool perf)
{
	struct bpf_prog_info pinfo;
	struct bpf_link_info info;
	__u32 plen = sizeof(pinfo), len = sizeof(info);
	struct fd_kinds k;

	memset(&pinfo, 0, sizeof(pinfo));
	assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(prog), &pinfo,
						&plen), 0);
	k = count_fds(pinfo.id);
	perf = perf || !usdt__features()->uprobe_multi;
	assert_int_equal(usdt_link__site_cnt(l), 2);
	assert_int_equal(usdt_link__is_multi(l), !perf);
	if (perf) {
		assert_int_equal(k.perf_events, 2);
		assert_int_equal(k.perf_links,
				 usdt__features()->bpf_cookie ? 2 : 0);
		assert_int_equal(k.multi_links, 0);
		assert_int_equal(usdt_link__fd(l), -EOPNOTSUPP);
		return;
	}
	assert_int_equal(k.perf_events, 0);
	assert_int_equal(k.perf_links, 0);
	assert_int_equal(k.multi_links, 1);
	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_obj_get_info_by_fd(usdt_link__fd(l), &info, &len),
			 0);
	assert_int_equal(info.type, 12);
	assert_int_equal(info.prog_id, pinfo.id);
}

/* The mode an attach asked for perf (or not) gets on this kernel. */
static const char *mode_name(bool perf)
{
	return perf || !usdt__features()->uprobe_multi ? "perf" :
							 "uprobe_multi";
}

/*
 * Attach oom:two with allocation N failing, for N = 0, 1, ... until the
 * attach succeeds; after each failure (ENOMEM), left(arg) checks that
 * nothing is left. Returns the link; *n, the allocations it took.
 */
static struct usdt_link *attach_oom(struct usdt_manager *man,
				    const struct bpf_program *prog,
				    const struct usdt_attach_opts *ao,
				    void (*left)(void *arg), void *arg,
				    long *n)
{
	struct usdt_link *l = NULL;

	for (*n = 0; *n < 10000; ++*n) {
		alloc_cnt = 0;
		fail_at = *n;
		errno = 0;
		l = usdt_manager__attach(man, prog, 0, "/proc/self/exe", "oom",
					 "two", ao);
		fail_at = -1;
		if (l)
			return l;
		if (errno != ENOMEM)
			fail_msg("allocation %ld: errno %d, want ENOMEM", *n,
				 errno);
		left(arg);
	}
	fail_msg("no success in %ld allocations", *n);
	return NULL;
}

/*
 * The manager of the opened skeleton s (perf: per-site uprobes), s loaded,
 * and prog attached to oom:two once with ao and detached: the file is read
 * and kept and the spec IDs sized, so that every allocation a later loop
 * fails is the attach's own (later attempts would otherwise find the file
 * kept and allocate less).
 */
static struct usdt_manager *warm_manager(struct bpf_object_skeleton *s,
					 bool perf,
					 const struct bpf_program *prog,
					 const struct usdt_attach_opts *ao)
{
	USDT_OPTS(usdt_manager_opts, mo, .no_uprobe_multi = perf,
		  .keep_ip_map = true);
	struct usdt_manager *man = manage_and_load(s, &mo);
	struct usdt_link *l;

	l = usdt_manager__attach(man, prog, 0, "/proc/self/exe", "oom", "two",
				 ao);
	assert_non_null(l);
	usdt_link__destroy(l);
	return man;
}

struct test_ctx {
	struct usdt_test *skel;
	struct usdt_manager *man;
	int fds;		/* open descriptors before the attempts */
};

static void test_nothing_left(void *arg)
{
	struct test_ctx *t = arg;

	check_nothing_left(t->skel, t->man);
	assert_int_equal(usdt_test_count_fds(), t->fds);
}

/*
 * Cold: a new skeleton and manager for each attempt, so that allocation N
 * is the Nth of a first attach, parse included. Returns the allocations
 * the attach took.
 */
static long oom_cold(bool perf, bool ip)
{
	USDT_OPTS(usdt_manager_opts, mo, .no_uprobe_multi = perf,
		  .keep_ip_map = true);
	USDT_OPTS(usdt_attach_opts, ao, .force_ip_map = ip, .usdt_cookie = 3);
	int fds = usdt_test_count_fds();
	struct usdt_manager *man;
	struct usdt_test *skel;
	struct usdt_link *l;
	bool ok;
	long n;

	for (n = 0; n < 10000; n++) {
		skel = usdt_test__open();
		assert_non_null(skel);
		man = manage_and_load(skel->skeleton, &mo);
		alloc_cnt = 0;
		fail_at = n;
		errno = 0;
		l = usdt_manager__attach(man, skel->progs.on_usdt, 0,
					 "/proc/self/exe", "oom", "two", &ao);
		fail_at = -1;
		ok = l;
		if (ok) {
			check_attached(skel);
			check_mode(l, skel->progs.on_usdt, perf);
			usdt_link__destroy(l);
		} else if (errno != ENOMEM) {
			fail_msg("allocation %ld: errno %d, want ENOMEM", n,
				 errno);
		}
		check_nothing_left(skel, man);
		usdt_manager__free(man);
		usdt_test__destroy(skel);
		assert_int_equal(usdt_test_count_fds(), fds);
		if (ok)
			return n;
	}
	fail_msg("no success in %ld allocations", n);
	return n;
}

/* Warm: one manager that has read the file and attached once before.
 * Returns the allocations the attach took. */
static long oom_warm(bool perf, bool ip)
{
	USDT_OPTS(usdt_attach_opts, ao, .force_ip_map = ip, .usdt_cookie = 3);
	struct usdt_test *skel = usdt_test__open();
	struct usdt_manager *man;
	struct test_ctx t;
	struct usdt_link *l;
	long n;

	assert_non_null(skel);
	man = warm_manager(skel->skeleton, perf, skel->progs.on_usdt, &ao);
	t.skel = skel;
	t.man = man;
	t.fds = usdt_test_count_fds();
	l = attach_oom(man, skel->progs.on_usdt, &ao, test_nothing_left, &t,
		       &n);
	check_attached(skel);
	check_mode(l, skel->progs.on_usdt, perf);
	usdt_link__destroy(l);
	check_nothing_left(skel, man);
	usdt_manager__free(man);
	usdt_test__destroy(skel);
	return n;
}

static void oom_loop(bool perf, bool ip)
{
	long cold = oom_cold(perf, ip), warm = oom_warm(perf, ip);

	print_message("%s%s: %ld allocations cold, %ld warm, each failure clean\n",
		      mode_name(perf), ip ? " + IP map" : "",
		      cold, warm);
	/* The matching sites, the link (its arrays in the same block),
	 * the spec-ID references and the cookies: each one failed once. */
	assert_true(warm >= 4);
	/* Cold, the file's parse and the first attach's setup come first. */
	assert_true(cold > warm);
}

struct storage_ctx {
	struct storage_test *skel;
	struct usdt_manager *man;
};

static void storage_nothing_left(void *arg)
{
	struct storage_ctx *t = arg;

	assert_int_equal(t->man->store->specs.live_cnt, 0);
	assert_int_equal(t->man->store->storage.slots.live_cnt, 0);
	fire_none(t->skel->bss->all_cnt);
}

/* The same with storage, a value per site: each failure also leaves no
 * slot taken, and the first success starts from the initial values. */
static void oom_storage(bool perf, bool ip)
{
	struct storage_test_val init = { .init = 11 };
	USDT_OPTS(usdt_attach_opts, ao, .force_ip_map = ip, .storage = &init,
		  .storage_sz = sizeof(init), .storage_per_site = true);
	struct storage_test *skel = storage_test__open();
	const struct storage_test_val *v;
	struct usdt_manager *man;
	struct storage_ctx t;
	struct usdt_link *l;
	long n;

	assert_non_null(skel);
	/* Warmed up without storage: every allocation the loop fails is
	 * the link's or the storage's. */
	man = warm_manager(skel->skeleton, perf, skel->progs.on_hit, NULL);
	t.skel = skel;
	t.man = man;
	l = attach_oom(man, skel->progs.on_hit, &ao, storage_nothing_left, &t,
		       &n);
	assert_non_null(man->store->storage.slots.mem);
	check_mode(l, skel->progs.on_hit, perf);
	print_message("storage, %s%s: %ld allocations, each failure clean\n",
		      mode_name(perf), ip ? " + IP map" : "", n);
	fire_two();
	v = usdt_link__storage(l, 0);
	assert_non_null(v);
	assert_int_equal(v->hits, 1);
	assert_int_equal(v->seen_init, 11);
	assert_int_equal(((const struct storage_test_val *)
				  usdt_link__storage(l, 1))->hits, 1);
	usdt_link__destroy(l);
	assert_int_equal(man->store->storage.slots.live_cnt, 0);
	usdt_manager__free(man);
	storage_test__destroy(skel);
}

/*
 * usdt_manager__new() before load, out of memory at each of its
 * allocations in turn (.rodata's copy among them), with a max_specs that
 * shrinks the spec head: ENOMEM, no descriptor left, and the object fit
 * for another manager, whose load and attach read every spec right (the
 * head and .rodata agree).
 */
static void test_oom_manager_new(void **state)
{
	USDT_OPTS(usdt_manager_opts, mo, .max_specs = 40);
	USDT_OPTS(usdt_attach_opts, ao, .usdt_cookie = 3);
	int fds = usdt_test_count_fds();
	struct usdt_manager *man;
	struct usdt_test *skel;
	struct usdt_link *l;
	int opened;
	long n;

	(void)state;
	for (n = 0; n < 1000; n++) {
		skel = usdt_test__open();
		assert_non_null(skel);
		/* Some libbpf versions hold descriptors of an opened object
		 * (trixie's 1.5 eight, in the riscv64 guest). */
		opened = usdt_test_count_fds();
		alloc_cnt = 0;
		fail_at = n;
		errno = 0;
		man = usdt_manager__new(skel->obj, &mo);
		fail_at = -1;
		if (!man) {
			if (errno != ENOMEM)
				fail_msg("allocation %ld: errno %d, want ENOMEM",
					 n, errno);
			assert_int_equal(usdt_test_count_fds(), opened);
			man = usdt_manager__new(skel->obj, &mo);
			assert_non_null(man);
		}
		assert_int_equal(usdt_test__load(skel), 0);
		assert_int_equal(bpf_map__max_entries(
					 skel->maps.usdt__spec_head),
				 skel->rodata->usdt__spec_head_cnt + 1);
		l = usdt_manager__attach(man, skel->progs.on_usdt, 0,
					 "/proc/self/exe", "oom", "two", &ao);
		assert_non_null(l);
		check_attached(skel);
		usdt_link__destroy(l);
		usdt_manager__free(man);
		usdt_test__destroy(skel);
		assert_int_equal(usdt_test_count_fds(), fds);
		if (alloc_cnt <= n) {
			print_message("usdt_manager__new: %ld allocations, each failure clean\n",
				      n);
			return;
		}
	}
	fail_msg("no success in %ld allocations", n);
}

static void test_oom_storage(void **state)
{
	oom_storage(false, false);
	oom_storage(false, true);
	oom_storage(true, false);
}

static void test_oom_multi(void **state)
{
	oom_loop(false, false);
}

static void test_oom_multi_ip(void **state)
{
	oom_loop(false, true);
}

static void test_oom_perf(void **state)
{
	oom_loop(true, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom_multi),
		cmocka_unit_test(test_oom_multi_ip),
		cmocka_unit_test(test_oom_perf),
		cmocka_unit_test(test_oom_storage),
		cmocka_unit_test(test_oom_manager_new),
	};

	usdt_test_require_kernel("kernel/test_attach_oom");
	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("attach_oom", tests, NULL, NULL);
}
