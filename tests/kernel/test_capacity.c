// SPDX-License-Identifier: BSD-2-Clause
/*
 * Capacity on demand against the running kernel: 65536 distinct specs
 * (and as many storage slots) attached without any option, in 1024 chunks
 * created as needed; E2BIG past that hard limit with nothing left; IDs
 * recycled after destroy; a few probes cost one chunk and no IP map; the
 * IP map created at the first IP-map attach and grown, hits going on
 * through the swap; a second manager on the same maps refused with EBUSY;
 * the chunks for a whole file made at its first attach (Linux 6.8 on),
 * one RCU grace period for that attach and none for the file's next; a
 * manager's free waits for none, and the next manager of the object puts
 * its chunks over what is left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/sdt.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "test_util.h"
#include "chunk_util.h"
#include "attach/attach.h"
#include "reader/args.h"
#include "capacity_test.skel.h"

/* tests/kernel/cap_sites.S */
void cap_fire_big(void);
void cap_fire_more(void);

static volatile long g_zero;

/* Three sites, three specs (the constants differ). */
__attribute__((noinline)) void fire_few(void)
{
	STAP_PROBE1(cap, few, 1);
	STAP_PROBE1(cap, few, 2);
	STAP_PROBE1(cap, few, 3 + g_zero);
}

struct fix {
	struct capacity_test *skel;
	struct usdt_manager *man;
};

static void open_loaded(struct fix *f)
{
	USDT_OPTS(usdt_manager_opts, mo, .keep_ip_map = true);

	f->skel = capacity_test__open();
	assert_non_null(f->skel);
	f->man = usdt_manager__new(f->skel->obj, &mo);
	assert_non_null(f->man);
	assert_int_equal(capacity_test__load(f->skel), 0);
}

static void close_fix(struct fix *f)
{
	usdt_manager__free(f->man);
	capacity_test__destroy(f->skel);
}

static struct usdt_link *attach(struct fix *f, pid_t pid, const char *name,
				const struct usdt_attach_opts *o)
{
	struct usdt_link *l = usdt_manager__attach(f->man, f->skel->progs.on_site,
						   pid, "/proc/self/exe", "cap",
						   name, o);

	if (!l)
		fail_msg("attach cap:%s: %s", name, strerror(errno));
	return l;
}

static void reset(struct fix *f)
{
	f->skel->bss->hit_cnt = f->skel->bss->arg_sum = 0;
	f->skel->bss->err_cnt = f->skel->bss->stored_cnt = 0;
}

static int specs_fd(const struct fix *f)
{
	return bpf_map__fd(f->skel->maps.usdt__specs);
}

static int head_fd(const struct fix *f)
{
	return bpf_map__fd(f->skel->maps.usdt__spec_head);
}

static void fire_checked(struct fix *f, void (*fire)(void), __u64 cnt,
			 __u64 sum)
{
	reset(f);
	fire();
	assert_int_equal(f->skel->bss->hit_cnt, cnt);
	assert_int_equal(f->skel->bss->err_cnt, 0);
	assert_int_equal(f->skel->bss->arg_sum, sum);
}

/*
 * Updates and deletes of an array of maps, each of which waits for an RCU
 * grace period (a batch waits once): counted while count_waits is set
 * (-Wl,--wrap, tests/kernel/kernel.mk).
 */
static bool count_waits;
static int outer_waits;

int __real_bpf_map_delete_elem(int fd, const void *key);
int __real_bpf_map_update_elem(int fd, const void *key, const void *value,
			       __u64 flags);
int __real_bpf_map_update_batch(int fd, const void *keys, const void *values,
				__u32 *count,
				const struct bpf_map_batch_opts *opts);

static void note_wait(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (count_waits && !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	    info.type == BPF_MAP_TYPE_ARRAY_OF_MAPS)
		outer_waits++;
}

int __wrap_bpf_map_delete_elem(int fd, const void *key)
{
	note_wait(fd);
	return __real_bpf_map_delete_elem(fd, key);
}

int __wrap_bpf_map_update_elem(int fd, const void *key, const void *value,
			       __u64 flags)
{
	note_wait(fd);
	return __real_bpf_map_update_elem(fd, key, value, flags);
}

int __wrap_bpf_map_update_batch(int fd, const void *keys, const void *values,
				__u32 *count,
				const struct bpf_map_batch_opts *opts)
{
	note_wait(fd);
	return __real_bpf_map_update_batch(fd, keys, values, count, opts);
}

/*
 * 65536 distinct specs, one storage slot each, no option: every hit
 * reads its own spec and value. The 65537th spec is past the hard limit.
 */
static void test_64k_specs_no_option(void **state)
{
	uint64_t init = 0;
	USDT_OPTS(usdt_attach_opts, o, .storage = &init,
		  .storage_sz = sizeof(init), .storage_per_site = true);
	const uint64_t n = 65536, sum = n * (n - 1) / 2;
	struct fix f;
	struct usdt_link *big, *more;
	uint32_t first_zero, kept;
	size_t i;

	if (!usdt__features()->uprobe_multi) {
		/* 65536 perf uprobes would take many minutes to attach and
		 * close (an RCU grace period each): a kernel without
		 * uprobe_multi (before 6.6) cannot run this case. A skip,
		 * which CI=true counts as a failure; the guests, which run
		 * such kernels, leave the case out by name (main()). */
		print_message("SKIP: no uprobe_multi: not attaching 65536 sites\n");
		skip();
	}
	open_loaded(&f);
	count_waits = true, outer_waits = 0;
	big = attach(&f, -1, "big", &o);
	count_waits = false;
	/* Past the head: its chunks go into the outer map in one batch,
	 * which from Linux 6.8 waits once (the storage's in another). */
	if (usdt__features()->outer_batch_one_wait)
		assert_int_equal(outer_waits, 2);
	assert_int_equal(usdt_link__spec_cnt(big), n);
	assert_int_equal(f.man->store->specs.live_cnt, n);
	/* The head's 1024 specs (the default), then chunks. */
	kept = head_kept(f.skel->obj, 1024);
	assert_int_equal(head_cnt(head_fd(&f)), kept);
	assert_int_equal(inner_cnt(specs_fd(&f)), (n - kept) / USDT_SPEC_CHUNK);
	/* __u64 values: 512 a chunk. */
	assert_int_equal(inner_cnt(bpf_map__fd(f.skel->maps.usdt__storage)),
			 n / 512);
	fire_checked(&f, cap_fire_big, n, sum);
	assert_int_equal(f.skel->bss->stored_cnt, n);
	for (i = 0; i < n; i++)
		if (*(uint64_t *)usdt_link__storage(big, i) != 1)
			fail_msg("site %zu: %llu hits", i,
				 (unsigned long long)*(uint64_t *)
					 usdt_link__storage(big, i));

	/* Past the hard limit: E2BIG, nothing of cap:more taken. */
	errno = 0;
	assert_null(usdt_manager__attach(f.man, f.skel->progs.on_site, -1,
					 "/proc/self/exe", "cap", "more", NULL));
	assert_int_equal(errno, E2BIG);
	assert_int_equal(f.man->store->specs.live_cnt, n);
	fire_checked(&f, cap_fire_more, 0, 0);

	/* Destroyed, every spec is zero; the IDs come back lowest first. */
	assert_int_equal(usdt_link__destroy(big), 0);
	assert_int_equal(f.man->store->specs.live_cnt, 0);
	assert_int_equal(f.man->store->storage.slots.live_cnt, 0);
	assert_int_equal(specs_used(head_fd(&f), specs_fd(&f), &first_zero), 0);
	more = attach(&f, -1, "more", NULL);
	assert_int_equal(specs_used(head_fd(&f), specs_fd(&f), &first_zero), 64);
	assert_int_equal(first_zero, 64);
	assert_int_equal(f.man->store->specs.next, n);
	fire_checked(&f, cap_fire_more, 64, 64 * 100000 + 63 * 64 / 2);
	usdt_link__destroy(more);
	close_fix(&f);
}

/* The kernel ID of the map in entry k of outer, or 0. */
static __u32 inner_id(int outer, __u32 k)
{
	__u32 id = 0;

	return bpf_map_lookup_elem(outer, &k, &id) ? 0 : id;
}

/* A store's claim on the spec map (0: none; src/store/chunks.c): the
 * token in the spec head's last entry, or where the head was given up
 * (readers verified per call) the kernel ID of chunk 0. */
static uint64_t spec_claim(const struct fix *f)
{
	char val[sizeof(struct usdt_spec)];
	uint32_t k = head_cnt(head_fd(f));
	uint64_t tok = 0;

	if (!k)
		return inner_id(specs_fd(f), 0);
	if (!bpf_map_lookup_elem(head_fd(f), &k, val))
		memcpy(&tok, val, sizeof(tok));
	return tok;
}

/*
 * The chunks the first attach in this file makes where the head is given
 * up (call it once the chunks are open): one for its specs; from Linux
 * 6.8, where a batch into the outer map waits once, room for every site
 * of the file (up to the cap) at once.
 */
static uint32_t file_chunks(const struct fix *f)
{
	struct usdt_file *file;
	uint64_t sites;

	if (!usdt__features()->outer_batch_one_wait)
		return 1;
	file = usdt_file__open("/proc/self/exe", NULL);
	assert_non_null(file);
	sites = usdt_file__probe_cnt(file);
	usdt_file__close(file);
	if (sites > f->man->store->specs.cap) /* 65536 */
		sites = f->man->store->specs.cap;
	return (uint32_t)((sites + USDT_SPEC_CHUNK - 1) / USDT_SPEC_CHUNK);
}

/*
 * A few probes: no IP map, no storage chunk, no chunk of specs: the head
 * holds them, and attaching waits for no RCU grace period. 67 specs more
 * still fit the head: no wait either. Where the head is given up (readers
 * verified per call), the first attach makes chunks in one batch, one
 * wait (file_chunks() says how many), and the second fits them.
 */
static void test_few_probes_no_wait(void **state)
{
	struct usdt_link *l, *more;
	unsigned long outer, head, ips;
	uint32_t kept, chunks;
	struct fix f;

	(void)state;
	open_loaded(&f);
	kept = head_kept(f.skel->obj, 1024);
	assert_int_equal(inner_cnt(specs_fd(&f)), 0);
	count_waits = true, outer_waits = 0;
	l = attach(&f, -1, "few", NULL);
	count_waits = false;
	chunks = kept ? 0 : file_chunks(&f);
	assert_int_equal(outer_waits, kept ? 0 : 1);
	assert_int_equal(usdt_link__spec_cnt(l), 3);
	assert_int_equal(inner_cnt(specs_fd(&f)), chunks);
	assert_int_equal(inner_cnt(bpf_map__fd(f.skel->maps.usdt__ip2spec)), 0);
	assert_int_equal(inner_cnt(bpf_map__fd(f.skel->maps.usdt__storage)), 0);
	fire_checked(&f, fire_few, 3, 6);

	count_waits = true, outer_waits = 0;
	more = attach(&f, -1, "more", NULL);
	count_waits = false;
	assert_int_equal(outer_waits, 0);
	assert_int_equal(inner_cnt(specs_fd(&f)), chunks);
	fire_checked(&f, cap_fire_more, 64, 64 * 100000 + 63 * 64 / 2);

	outer = map_memlock(specs_fd(&f));
	head = map_memlock(head_fd(&f));
	ips = map_memlock(bpf_map__fd(f.skel->maps.usdt__ip2spec));
	print_message("kernel memory: spec head %lu B, spec array of maps %lu B, IP array of maps %lu B\n",
		      head, outer, ips);
	/* The head is 1025 specs of 224 bytes, page-rounded, plus a
	 * header (6.18: 229,912 bytes; 6.1 counts 241,664), or its token's
	 * alone where given up; the outer array 252 pointers, or 256. */
	assert_true(head > 0 && head <= (kept ? 245760 : 8192));
	assert_true(outer > 0 && outer <= 8192);
	usdt_link__destroy(more);
	usdt_link__destroy(l);
	close_fix(&f);
}

/* The IP map appears at the first IP-map attach and grows; hits of the
 * sites already in it go on being found. */
static void test_ip_map_grows(void **state)
{
	USDT_OPTS(usdt_attach_opts, o, .force_ip_map = true);
	struct fix f;
	struct usdt_link *few, *more;
	int ips;

	open_loaded(&f);
	ips = bpf_map__fd(f.skel->maps.usdt__ip2spec);
	few = attach(&f, getpid(), "few", &o);
	assert_int_equal(inner_cnt(ips), 1);
	assert_int_equal(ip_cnt(ips), 3);
	assert_int_equal(f.man->store->ips.size, 64);
	more = attach(&f, getpid(), "more", &o);
	assert_int_equal(ip_cnt(ips), 67);
	assert_int_equal(f.man->store->ips.size, 128);
	fire_checked(&f, fire_few, 3, 6);
	fire_checked(&f, cap_fire_more, 64, 64 * 100000 + 63 * 64 / 2);
	usdt_link__destroy(few);
	fire_checked(&f, fire_few, 0, 0);
	fire_checked(&f, cap_fire_more, 64, 64 * 100000 + 63 * 64 / 2);
	usdt_link__destroy(more);
	assert_int_equal(ip_cnt(ips), 0);
	close_fix(&f);
}

/*
 * One object, two managers: the second would hand out the IDs the first
 * holds (the head's token is the first's), so it is refused (EBUSY) with
 * nothing left; once the first is freed, its head and chunks, left in the
 * maps, are the second's to claim and replace.
 */
static void test_second_manager_busy(void **state)
{
	USDT_OPTS(usdt_attach_opts, o, .force_ip_map = true);
	struct usdt_manager *man2;
	struct usdt_link *l, *l2;
	uint64_t left;
	struct fix f;

	open_loaded(&f);
	l = attach(&f, getpid(), "few", &o);
	man2 = usdt_manager__new(f.skel->obj, NULL);
	assert_non_null(man2);
	errno = 0;
	assert_null(usdt_manager__attach(man2, f.skel->progs.on_site, -1,
					 "/proc/self/exe", "cap", "more", NULL));
	assert_int_equal(errno, EBUSY);
	errno = 0;
	assert_null(usdt_manager__attach(man2, f.skel->progs.on_site, getpid(),
					 "/proc/self/exe", "cap", "few", &o));
	assert_int_equal(errno, EBUSY);
	assert_int_equal(man2->store->specs.live_cnt, 0);
	fire_checked(&f, fire_few, 3, 6);
	fire_checked(&f, cap_fire_more, 0, 0);

	usdt_link__destroy(l);
	left = spec_claim(&f);
	assert_int_not_equal(left, 0);
	usdt_manager__free(f.man);
	assert_int_equal(spec_claim(&f), left);
	l2 = usdt_manager__attach(man2, f.skel->progs.on_site, -1,
				  "/proc/self/exe", "cap", "more", NULL);
	assert_non_null(l2);
	assert_int_not_equal(spec_claim(&f), left);
	fire_checked(&f, cap_fire_more, 64, 64 * 100000 + 63 * 64 / 2);
	l = usdt_manager__attach(man2, f.skel->progs.on_site, getpid(),
				 "/proc/self/exe", "cap", "few", &o);
	assert_non_null(l);
	fire_checked(&f, fire_few, 3, 6);
	usdt_link__destroy(l);
	usdt_link__destroy(l2);
	usdt_manager__free(man2);
	capacity_test__destroy(f.skel);
}


/*
 * A manager's free waits for no RCU grace period: its head and chunks stay
 * in the maps, and the next manager of the object, told by the first that
 * they are free (src/store/chunks.c), claims the head, puts its chunks in
 * their place, and its hits read its specs. Storage too.
 */
static void test_free_no_wait(void **state)
{
	uint64_t init = 5;
	USDT_OPTS(usdt_attach_opts, so, .storage = &init,
		  .storage_sz = sizeof(init));
	struct usdt_link *few, *more;
	struct usdt_manager *man2;
	__u32 left_st;
	uint64_t left;
	struct fix f;

	(void)state;
	open_loaded(&f);
	few = attach(&f, -1, "few", &so);
	more = attach(&f, -1, "more", NULL);
	fire_checked(&f, cap_fire_more, 64, 64 * 100000 + 63 * 64 / 2);
	usdt_link__destroy(few);
	usdt_link__destroy(more);
	left = spec_claim(&f);
	left_st = inner_id(bpf_map__fd(f.skel->maps.usdt__storage), 0);
	assert_int_not_equal(left, 0);
	assert_int_not_equal(left_st, 0);

	count_waits = true, outer_waits = 0;
	usdt_manager__free(f.man);
	count_waits = false;
	assert_int_equal(outer_waits, 0);
	assert_int_equal(spec_claim(&f), left);

	man2 = usdt_manager__new(f.skel->obj, NULL);
	assert_non_null(man2);
	f.man = man2;
	more = attach(&f, -1, "more", NULL);
	few = attach(&f, -1, "few", &so);
	assert_int_not_equal(spec_claim(&f), left);
	assert_int_not_equal(inner_id(bpf_map__fd(f.skel->maps.usdt__storage),
				      0), left_st);
	fire_checked(&f, fire_few, 3, 6);
	assert_int_equal(f.skel->bss->stored_cnt, 3);
	assert_int_equal(*(uint64_t *)usdt_link__storage(few, 0), 5 + 3);
	fire_checked(&f, cap_fire_more, 64, 64 * 100000 + 63 * 64 / 2);
	usdt_link__destroy(few);
	usdt_link__destroy(more);
	count_waits = true, outer_waits = 0;
	close_fix(&f);
	count_waits = false;
	assert_int_equal(outer_waits, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_few_probes_no_wait),
		cmocka_unit_test(test_ip_map_grows),
		cmocka_unit_test(test_second_manager_busy),
		cmocka_unit_test(test_free_no_wait),
		cmocka_unit_test(test_64k_specs_no_option),
	};

	struct rlimit rl;

	usdt_test_require_kernel("kernel/test_capacity");
	/* 65536 specs are 1024 chunks of the spec map, a descriptor each:
	 * past the usual soft RLIMIT_NOFILE of 1024, which libusdt leaves
	 * to its program, as a program that attaches so many raises it. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* In a QEMU guest (lab/vm/run.sh sets USDT_TEST_GUEST), 65536
	 * sites take minutes under TCG: that case runs on the host only,
	 * and the console says so. */
	if (getenv("USDT_TEST_GUEST")) {
		printf("test_capacity: test_64k_specs_no_option NOT RUN in this guest (65536 sites: minutes under TCG; it runs on the host)\n");
		cmocka_set_skip_filter("test_64k_specs_no_option");
	}
	return cmocka_run_group_tests_name("capacity", tests, NULL, NULL);
}
