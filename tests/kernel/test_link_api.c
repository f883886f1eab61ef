// SPDX-License-Identifier: BSD-2-Clause
/*
 * The libbpf-like parts of the link API against the real kernel: the
 * usdt_cookie option (and its old name), usdt_link__fd() and
 * usdt_link__pin().
 */
#include <sched.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "test_util.h"
#include "attach/attach.h"
#include "usdt_skel.skel.h"

#define LINK_TYPE_UPROBE_MULTI 12	/* enum bpf_link_type, 6.6 */

void lib_fire(int x);

struct fix {
	struct usdt_skel *skel;
	struct usdt_manager *man;
};

static int setup(void **state, bool per_site)
{
	USDT_OPTS(usdt_manager_opts, mo, .no_uprobe_multi = per_site,
		  .keep_ip_map = true);
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->skel = usdt_skel__open();
	assert_non_null(f->skel);
	bpf_program__set_autoload(f->skel->progs.on_missing, false);
	bpf_program__set_autoload(f->skel->progs.on_malformed, false);
	f->man = usdt_manager__new(f->skel->obj, &mo);
	assert_non_null(f->man);
	assert_int_equal(usdt_skel__load(f->skel), 0);
	*state = f;
	return 0;
}

static int setup_multi(void **state)
{
	return setup(state, false);
}

static int setup_per_site(void **state)
{
	return setup(state, true);
}

static int teardown(void **state)
{
	struct fix *f = *state;

	usdt_manager__free(f->man);
	usdt_skel__destroy(f->skel);
	free(f);
	return 0;
}

static struct usdt_link *attach_lib(struct fix *f,
				    const struct usdt_attach_opts *opts)
{
	struct usdt_link *l = usdt_manager__attach(f->man,
						   f->skel->progs.on_lib_fire,
						   0, "libusdttest.so",
						   "testlib", "fire", opts);

	if (!l)
		fail_msg("attach testlib:fire: %s", strerror(errno));
	return l;
}

static bool need_multi(void)
{
	if (usdt__features()->uprobe_multi)
		return true;
	printf("kernel without uprobe_multi: nothing to check\n");
	return false;
}

/* usdt_cookie (libbpf's name) reaches bpf_usdt_cookie(), per attach. */
static void test_cookie(void **state)
{
	static const uint64_t cookies[] = { 0x1111, 0x2222 };
	struct fix *f = *state;
	struct usdt_link *l;
	size_t i;

	for (i = 0; i < sizeof(cookies) / sizeof(cookies[0]); i++) {
		USDT_OPTS(usdt_attach_opts, ao, .usdt_cookie = cookies[i]);

		l = attach_lib(f, &ao);
		lib_fire((int)i + 1);
		assert_int_equal(f->skel->bss->lib_cookie, cookies[i]);
		usdt_link__destroy(l);
	}
}

static void test_cookie_multi(void **state)
{
	test_cookie(state);
}

static void test_cookie_per_site(void **state)
{
	test_cookie(state);
}

static void test_fd_multi(void **state)
{
	struct fix *f = *state;
	struct bpf_link_info info = {};
	struct bpf_prog_info pinfo = {};
	__u32 len = sizeof(info), plen = sizeof(pinfo);
	struct usdt_link *l;
	int fd;

	if (!need_multi())
		return;
	l = attach_lib(f, NULL);
	fd = usdt_link__fd(l);
	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	assert_int_equal(info.type, LINK_TYPE_UPROBE_MULTI);
	assert_int_equal(bpf_obj_get_info_by_fd(
				 bpf_program__fd(f->skel->progs.on_lib_fire),
				 &pinfo, &plen), 0);
	assert_int_equal(info.prog_id, pinfo.id);
	usdt_link__destroy(l);
	assert_int_equal(usdt_link__fd(NULL), -EINVAL);
}

static void test_fd_pin_per_site(void **state)
{
	struct fix *f = *state;
	struct usdt_link *l = attach_lib(f, NULL);

	assert_false(usdt_link__is_multi(l));
	errno = 0;
	assert_int_equal(usdt_link__fd(l), -EOPNOTSUPP);
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(usdt_link__pin(l, "/sys/fs/bpf/unused"), -EOPNOTSUPP);
	usdt_link__destroy(l);
}

/* A BPF filesystem of our own, in a mount namespace of our own. */
static void private_bpffs(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/usdt-bpffs-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(unshare(CLONE_NEWNS), 0);
	assert_int_equal(usdt_test_private_mount(dir), 0);
	assert_int_equal(mount("bpf", dir, "bpf", 0, NULL), 0);
}

/* Fire until hits stop coming (a link's release may lag its unpin). */
static bool fires(struct fix *f)
{
	__u32 before = f->skel->bss->lib_hits;

	lib_fire(9);
	return f->skel->bss->lib_hits != before;
}

static void test_pin(void **state)
{
	USDT_OPTS(usdt_attach_opts, ao, .usdt_cookie = 0x77);
	struct fix *f = *state;
	char dir[64], pin[96], other[96];
	struct usdt_link *l;
	int i;

	if (!need_multi())
		return;
	private_bpffs(dir, sizeof(dir));
	snprintf(pin, sizeof(pin), "%s/link", dir);
	snprintf(other, sizeof(other), "/tmp/usdt-not-bpffs-%d", getpid());

	l = attach_lib(f, &ao);
	assert_int_equal(usdt_link__pin(l, other), -EPERM);
	assert_int_equal(usdt_link__pin(l, pin), 0);
	assert_int_equal(usdt_link__pin(l, pin), -EEXIST);
	assert_int_equal(usdt_link__pin(NULL, pin), -EINVAL);
	usdt_link__destroy(l);

	/* Still attached through the pin, its spec intact and kept. */
	lib_fire(42);
	assert_int_equal(f->skel->bss->lib_x, 42);
	assert_int_equal(f->skel->bss->lib_cookie, 0x77);
	assert_int_equal(f->man->store->specs.live_cnt, 1);
	/* A new attach does not take the pinned link's spec ID. */
	{
		USDT_OPTS(usdt_attach_opts, ao2, .usdt_cookie = 0x88);
		struct usdt_link *l2 = attach_lib(f, &ao2);

		assert_int_equal(f->man->store->specs.live_cnt, 2);
		usdt_link__destroy(l2);
	}
	lib_fire(43);
	assert_int_equal(f->skel->bss->lib_x, 43);
	assert_int_equal(f->skel->bss->lib_cookie, 0x77);

	/* Unpinned: gone. */
	assert_int_equal(unlink(pin), 0);
	for (i = 0; i < 100 && fires(f); i++)
		usleep(10000);
	assert_false(fires(f));
	assert_int_equal(umount(dir), 0);
	rmdir(dir);
}

/*
 * A child that destroys its copies of a link and of the manager leaves the
 * parent's link working: its spec, cookie and IP-map entry; and the child
 * can attach nothing through the parent's manager.
 */
static void fork_destroys(struct fix *f, bool ip)
{
	USDT_OPTS(usdt_attach_opts, ao, .usdt_cookie = 0x55,
		  .force_ip_map = ip);
	struct usdt_link *l = attach_lib(f, &ao);
	__u32 hits;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct usdt_link *l2;
		int bad = 0;

		bad |= usdt_link__destroy(l) != 0;
		l2 = usdt_manager__attach(f->man, f->skel->progs.on_lib_fire,
					  0, "libusdttest.so", "testlib",
					  "fire", NULL);
		bad |= (l2 || errno != EBUSY) << 1;
		usdt_manager__free(f->man);
		_exit(bad);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	hits = f->skel->bss->lib_hits;
	lib_fire(5);
	assert_int_equal(f->skel->bss->lib_hits, hits + 1);
	assert_int_equal(f->skel->bss->lib_x, 5);
	assert_int_equal(f->skel->bss->lib_cookie, 0x55);
	assert_int_equal(f->man->store->specs.live_cnt, 1);
	assert_int_equal(f->man->store->ips.cnt, ip ? 1 : 0);
	assert_int_equal(usdt_link__destroy(l), 0);
	assert_int_equal(f->man->store->specs.live_cnt, 0);
	assert_int_equal(f->man->store->ips.cnt, 0);
	hits = f->skel->bss->lib_hits;
	lib_fire(6);
	assert_int_equal(f->skel->bss->lib_hits, hits);
}

static void test_fork(void **state)
{
	fork_destroys(*state, false);
	fork_destroys(*state, true);
}

/*
 * usdt_program__attach() of a managed program uses the manager's store:
 * its specs beside the manager's own links, and kept for the live
 * bpf_link after usdt_manager__free().
 */
static void test_program_attach(void **state)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = 0x99);
	USDT_OPTS(usdt_attach_opts, ao, .usdt_cookie = 0x11);
	struct fix *f = *state;
	struct usdt_link *ml;
	struct bpf_link *bl;
	__u32 hits;

	bl = usdt_program__attach(f->skel->progs.on_lib_fire, 0,
				  "libusdttest.so", "testlib", "fire", &uo);
	if (!bl)
		fail_msg("usdt_program__attach: %s", strerror(errno));
	hits = f->skel->bss->lib_hits;
	lib_fire(1);
	assert_int_equal(f->skel->bss->lib_hits, hits + 1);
	assert_int_equal(f->skel->bss->lib_cookie, 0x99);
	assert_int_equal(f->man->store->specs.live_cnt, 1);

	ml = attach_lib(f, &ao);
	assert_int_equal(f->man->store->specs.live_cnt, 2);
	lib_fire(2);
	assert_int_equal(f->skel->bss->lib_hits, hits + 3);
	assert_int_equal(usdt_link__destroy(ml), 0);

	usdt_manager__free(f->man);
	f->man = NULL;
	lib_fire(3);
	assert_int_equal(f->skel->bss->lib_hits, hits + 4);
	assert_int_equal(f->skel->bss->lib_x, 3);
	assert_int_equal(f->skel->bss->lib_cookie, 0x99);
	assert_int_equal(bpf_link__destroy(bl), 0);
	lib_fire(4);
	assert_int_equal(f->skel->bss->lib_hits, hits + 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cookie_multi,
						setup_multi, teardown),
		cmocka_unit_test_setup_teardown(test_cookie_per_site,
						setup_per_site, teardown),
		cmocka_unit_test_setup_teardown(test_fd_multi, setup_multi,
						teardown),
		cmocka_unit_test_setup_teardown(test_fd_pin_per_site,
						setup_per_site, teardown),
		cmocka_unit_test_setup_teardown(test_fork, setup_multi,
						teardown),
		cmocka_unit_test_setup_teardown(test_fork, setup_per_site,
						teardown),
		cmocka_unit_test_setup_teardown(test_program_attach,
						setup_multi, teardown),
		cmocka_unit_test_setup_teardown(test_program_attach,
						setup_per_site, teardown),
		cmocka_unit_test_setup_teardown(test_pin, setup_multi,
						teardown),
	};

	usdt_test_require_kernel("test_link_api");
	usdt_test_need_bpffs("test_link_api");
	return cmocka_run_group_tests_name("link_api", tests, NULL, NULL);
}
