// SPDX-License-Identifier: BSD-2-Clause
/*
 * libusdt in libbpf's own flow, with no usdt_manager: the skeleton's
 * __attach() fills skel->links, bpf_link__destroy() and
 * usdt_program__attach() (libbpf's arguments and opts) re-attach with a
 * new cookie, and what destroyed links held in the spec map comes back.
 */
#include <sched.h>
#include <sys/sdt.h>
#include <sys/mount.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <bpf/bpf.h>

#include "test_util.h"
#include "kernel/linkids.h"
#include "attach/attach.h"
#include "native.skel.h"
#include "sleepable.skel.h"
#include "nospec.skel.h"

#ifndef KTEST_LIB_DIR
#define KTEST_LIB_DIR "build/tests/kernel"
#endif
#define LINK_TYPE_PERF_EVENT 7		/* enum bpf_link_type */
#define LINK_TYPE_UPROBE_MULTI 12

void lib_fire(int x);
void cap_fire_more(void);
unsigned short bss_sema_value(void);
int fire_bss_sema(long v);

/* native_probes.c at -O0 (provider n0) and -O2 (n2). */
#define NPROBES(p)                                                          \
	void p##_fire0(void);                                               \
	void p##_fire3(int a, long b, const void *c);                       \
	void p##_fire12(signed char c, short s, int i);                     \
	int p##_fire_sema(long v);                                          \
	unsigned short p##_sema(void);                                      \
	const volatile int *p##_arr1(void);                                 \
	void p##_fire400(void);
NPROBES(n0)
NPROBES(n2)

struct nprobes {
	const char *prov;
	void (*fire0)(void);
	void (*fire3)(int a, long b, const void *c);
	void (*fire12)(signed char c, short s, int i);
	int (*fire_sema)(long v);
	unsigned short (*sema)(void);
	const volatile int *(*arr1)(void);
	void (*fire400)(void);
};

#define NP(p) { #p, p##_fire0, p##_fire3, p##_fire12, p##_fire_sema,        \
		p##_sema, p##_arr1, p##_fire400 }

static __u32 link_type(const struct bpf_link *l)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_obj_get_info_by_fd(bpf_link__fd(l), &info, &len),
			 0);
	return info.type;
}

/*
 * on_args keeps its function info, and the user's global function that
 * takes the context stays global, unless the kernel would not take the
 * header's context argument: then both it and the header's readers were
 * made static in the BTF it loaded with.
 */
static void check_user_ctx_func(const struct native *skel)
{
	const struct bpf_program *p = skel->progs.on_args;
	__u32 funcs, header_funcs;
	int user, header;

	user = usdt_test_func_linkage(p, "native_arg_cnt", &funcs);
	header = usdt_test_func_linkage(p, "usdt__arg", &header_funcs);
	print_message("native_arg_cnt: %s, usdt__arg: %s, %u function info records\n",
		      user == BTF_FUNC_STATIC ? "static" : "global",
		      header == BTF_FUNC_STATIC ? "static" : "global", funcs);
	assert_true(funcs > 2);
	assert_int_equal(user, header);
}

static void test_skeleton(void **state)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = 0x1234);
	struct native *skel = native__open_and_load();

	(void)state;
	assert_non_null(skel);
	assert_int_equal(native__attach(skel), 0);
	assert_non_null(skel->links.on_lib_fire);
	assert_null(skel->links.on_cap);	/* a bare SEC("usdt") */
	check_user_ctx_func(skel);
	assert_int_equal(link_type(skel->links.on_lib_fire),
			 usdt__features()->uprobe_multi ?
				 LINK_TYPE_UPROBE_MULTI : LINK_TYPE_PERF_EVENT);
	lib_fire(3);
	assert_int_equal(skel->bss->lib_hits, 1);
	assert_int_equal(skel->bss->lib_x, 3);
	assert_int_equal(skel->bss->lib_cookie, 0);

	/* libbpf's selftest flow: destroy the link, attach again. */
	assert_int_equal(bpf_link__destroy(skel->links.on_lib_fire), 0);
	skel->links.on_lib_fire = usdt_program__attach(
		skel->progs.on_lib_fire, -1, "libusdttest.so", "testlib",
		"fire", &uo);
	assert_non_null(skel->links.on_lib_fire);
	lib_fire(4);
	assert_int_equal(skel->bss->lib_hits, 2);	/* once, not twice */
	assert_int_equal(skel->bss->lib_x, 4);
	assert_int_equal(skel->bss->lib_cookie, 0x1234);

	/* A probe that is not there; a program that is not loaded. */
	errno = 0;
	assert_null(usdt_program__attach(skel->progs.on_lib_fire, -1,
					 "libusdttest.so", "testlib", "nope",
					 NULL));
	assert_int_equal(errno, ENOENT);
	assert_null(usdt_program__attach(NULL, -1, "x", "y", "z", NULL));
	assert_int_equal(errno, EINVAL);
	native__destroy(skel);
}

/*
 * A manager made for a loaded object whose programs __attach() attached
 * (an implicit store) takes that store over: no EBUSY, one set of spec
 * IDs, and the records of libbpf's links the user holds come along. Freed
 * while only such links live, it gives the store back.
 */
static void test_manager_adopts(void **state)
{
	USDT_OPTS(usdt_attach_opts, ao, .usdt_cookie = 0x77);
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = 0x66);
	LIBBPF_OPTS(bpf_usdt_opts, uo2, .usdt_cookie = 0x55);
	struct native *skel = native__open_and_load();
	struct usdt_manager *man;
	struct usdt_link *ml;
	struct bpf_link *l2;

	(void)state;
	assert_non_null(skel);
	assert_int_equal(native__attach(skel), 0);
	lib_fire(3);
	assert_int_equal(skel->bss->lib_hits, 1);

	man = usdt_manager__new(skel->obj, NULL);
	if (!man)
		fail_msg("usdt_manager__new: %s", strerror(errno));
	assert_int_equal(man->store->specs.live_cnt, 1);	/* __attach()'s */
	ml = usdt_manager__attach(man, skel->progs.on_lib_fire, -1,
				  "libusdttest.so", "testlib", "fire", &ao);
	assert_non_null(ml);
	assert_int_equal(man->store->specs.live_cnt, 2);
	lib_fire(4);
	assert_int_equal(skel->bss->lib_hits, 3);	/* both links */

	/* The adopted record goes with its link, at the manager's sweep. */
	assert_int_equal(bpf_link__destroy(skel->links.on_lib_fire), 0);
	usdt__ext_sweep(man->store);
	assert_int_equal(man->store->specs.live_cnt, 1);
	lib_fire(5);
	assert_int_equal(skel->bss->lib_hits, 4);
	assert_int_equal(skel->bss->lib_cookie, 0x77);

	/* usdt_program__attach() of its program now uses the manager. */
	skel->links.on_lib_fire = usdt_program__attach(
		skel->progs.on_lib_fire, -1, "libusdttest.so", "testlib",
		"fire", &uo);
	assert_non_null(skel->links.on_lib_fire);
	assert_int_equal(man->store->specs.live_cnt, 2);
	assert_int_equal(usdt_link__destroy(ml), 0);
	assert_int_equal(man->store->specs.live_cnt, 1);
	lib_fire(6);
	assert_int_equal(skel->bss->lib_hits, 5);
	assert_int_equal(skel->bss->lib_cookie, 0x66);
	usdt_manager__free(man);
	lib_fire(7);			/* the user's link outlives it */
	assert_int_equal(skel->bss->lib_hits, 6);

	/* The store went back to the object: attaching again works (the
	 * kept chunks gave EBUSY), beside the link that outlived it. */
	l2 = usdt_program__attach(skel->progs.on_lib_fire, -1,
				  "libusdttest.so", "testlib", "fire", &uo2);
	if (!l2)
		fail_msg("usdt_program__attach after the free: %s",
			 strerror(errno));
	lib_fire(8);
	assert_int_equal(skel->bss->lib_hits, 8);
	assert_int_equal(bpf_link__destroy(skel->links.on_lib_fire), 0);
	skel->links.on_lib_fire = l2;
	lib_fire(9);
	assert_int_equal(skel->bss->lib_hits, 9);
	assert_int_equal(skel->bss->lib_cookie, 0x55);
	native__destroy(skel);
}

/* In a mount namespace of this process's own, no BPF file system is
 * mounted anywhere: 0, or -1. */
static int unmount_every_bpffs(void)
{
	char *line = NULL, mnt[4096], type[32];
	size_t cap = 0;
	int err = 0;
	FILE *f;

	if (unshare(CLONE_NEWNS) || usdt_test_private_mount("/"))
		return -1;
	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0)
		if (sscanf(line, "%*s %4095s %31s", mnt, type) == 2 &&
		    !strcmp(type, "bpf") && umount2(mnt, MNT_DETACH))
			err = -1;
	free(line);
	fclose(f);
	return err;
}

/*
 * libbpf's flow with no BPF file system mounted (as on a machine without
 * systemd's /sys/fs/bpf): __attach() and usdt_program__attach() work with
 * every libbpf (before 1.3 the uprobe_multi link reaches libbpf through a
 * BPF file system of the library's own that no mount namespace sees), and
 * nothing is mounted where this process looks afterwards.
 */
static int no_bpffs_child(void *arg)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = 0x77);
	struct native *skel;
	int mounted;

	(void)arg;
	if (unmount_every_bpffs())
		return 100;
	skel = native__open_and_load();
	if (!skel || native__attach(skel))
		return 101;
	lib_fire(5);
	if (skel->bss->lib_hits != 1 || skel->bss->lib_x != 5)
		return 102;
	bpf_link__destroy(skel->links.on_lib_fire);
	skel->links.on_lib_fire = usdt_program__attach(
		skel->progs.on_lib_fire, -1, "libusdttest.so", "testlib",
		"fire", &uo);
	lib_fire(6);
	if (!skel->links.on_lib_fire || skel->bss->lib_hits != 2 ||
	    skel->bss->lib_cookie != 0x77)
		return 103;
	mounted = system("grep -q ' bpf ' /proc/self/mounts");
	native__destroy(skel);
	return WIFEXITED(mounted) && WEXITSTATUS(mounted) == 1 ? 0 : 104;
}

static void test_no_bpffs(void **state)
{
	(void)state;
	usdt_test_in_child(no_bpffs_child, NULL, "(none expected)");
}

/* From here on, a clone, clone3, fork or vfork kills this process. */
static void forbid_new_tasks(void)
{
#define NR_KILL(nr)                                                         \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                    \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		NR_KILL(__NR_clone),
		NR_KILL(__NR_clone3),
#ifdef __NR_fork
		NR_KILL(__NR_fork),
#endif
#ifdef __NR_vfork
		NR_KILL(__NR_vfork),
#endif
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
#undef NR_KILL
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]),
				   .filter = insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		_exit(100);
}

/*
 * No thread and no process the caller did not ask for: a skeleton's open,
 * load, __attach(), usdt_program__attach(), its links' destroy and a
 * manager's new and free run in a child that any clone() kills.
 */
static int no_new_tasks_child(void *arg)
{
	struct native *skel, *other;
	struct usdt_manager *man;
	struct bpf_link *l;

	(void)arg;
	forbid_new_tasks();
	skel = native__open_and_load();
	if (!skel || native__attach(skel))
		return 101;
	lib_fire(5);
	l = usdt_program__attach(skel->progs.on_lib_fire, -1,
				 "libusdttest.so", "testlib", "fire", NULL);
	if (!l || skel->bss->lib_hits != 1)
		return 102;
	bpf_link__destroy(l);
	native__destroy(skel);
	other = native__open();
	man = other ? usdt_manager__new(other->obj, NULL) : NULL;
	if (!man || native__load(other))
		return 103;
	usdt_manager__free(man);
	native__destroy(other);
	return 0;
}

static void test_no_new_tasks(void **state)
{
	(void)state;
	usdt_test_in_child(no_new_tasks_child, NULL, "a clone()");
}

/* Attach on_args to PROV:NAME in path with this cookie. */
static struct bpf_link *attach_args(struct native *skel, const char *path,
				    const char *prov, const char *name,
				    long cookie)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = cookie);
	struct bpf_link *l = usdt_program__attach(skel->progs.on_args, -1,
						  path, prov, name, &uo);

	if (!l)
		fail_msg("attach %s:%s: %s", prov, name, strerror(errno));
	return l;
}

/* What on_args read at the last hit, against want[0..n) and sizes. */
static void check_args(const struct native *skel, long cookie,
		       const long *want, const long *size, int n)
{
	int i;

	assert_int_equal(skel->bss->args_cnt, n);
	assert_int_equal(skel->bss->args_cookie, cookie);
	for (i = 0; i < n; i++) {
		if (skel->bss->args_err[i] ||
		    skel->bss->args_val[i] != want[i] ||
		    skel->bss->args_size[i] != size[i])
			fail_msg("argument %d: err %ld, value %#lx (want %#lx), size %ld (want %ld)",
				 i, skel->bss->args_err[i],
				 skel->bss->args_val[i], want[i],
				 skel->bss->args_size[i], size[i]);
	}
	assert_int_equal(skel->bss->arg_past_err, -ENOENT);
}

/* libbpf's basic USDT selftest, in our own words: 0, 3 and 12 arguments. */
static void args_of(struct native *skel, const struct nprobes *np)
{
	static const long size3[] = { 4, 8, 8 };
	static const long size12[] = { 1, 1, 2, 2, 4, 4, 8, 8, 4, 4, 4, 8 };
	long want3[] = { -5, 0x123456789L, (long)0xdeadbeefUL };
	long want12[] = { -3, 254, 1000, 1001, 77, 154, -77,
			  0x1122334455667788L, 30, 42, -1, 0 };
	struct bpf_link *l;

	l = attach_args(skel, "/proc/self/exe", np->prov, "p0", 0xa0);
	np->fire0();
	assert_int_equal(skel->bss->args_hits, 1);
	check_args(skel, 0xa0, NULL, NULL, 0);
	assert_int_equal(bpf_link__destroy(l), 0);

	l = attach_args(skel, "/proc/self/exe", np->prov, "p3", 0xa3);
	np->fire3(-5, 0x123456789L, (const void *)0xdeadbeefUL);
	assert_int_equal(skel->bss->args_hits, 2);
	check_args(skel, 0xa3, want3, size3, 3);
	assert_int_equal(bpf_link__destroy(l), 0);

	want12[11] = (long)np->arr1();
	l = attach_args(skel, "/proc/self/exe", np->prov, "p12", 0xa12);
	np->fire12(-3, 1000, 77);
	assert_int_equal(skel->bss->args_hits, 3);
	check_args(skel, 0xa12, want12, size12, 12);
	assert_int_equal(bpf_link__destroy(l), 0);
	np->fire12(-3, 1000, 77);
	assert_int_equal(skel->bss->args_hits, 3);
}

/* Wait (a link's release may lag its close) until sema() reads 0. */
static void sema_drops(unsigned short (*sema)(void))
{
	int i;

	for (i = 0; i < 200 && sema(); i++)
		usleep(5000);
	assert_int_equal(sema(), 0);
}

/* A semaphore in the executable, and one in a library's .bss. */
static void semaphores(struct native *skel, const struct nprobes *np)
{
	static const long one[] = { 8 };
	__u32 hits = skel->bss->args_hits;
	struct bpf_link *l;

	assert_int_equal(np->sema(), 0);
	assert_int_equal(np->fire_sema(9), 0);
	l = attach_args(skel, "/proc/self/exe", np->prov, "p1", 0xa1);
	assert_true(np->sema() > 0);
	assert_int_equal(np->fire_sema(9), 1);
	assert_int_equal(skel->bss->args_hits, hits + 1);
	assert_int_equal(skel->bss->args_val[0], 9);
	check_args(skel, 0xa1, (const long[]){ 9 }, one, 1);
	assert_int_equal(bpf_link__destroy(l), 0);
	sema_drops(np->sema);

	assert_int_equal(bss_sema_value(), 0);
	l = attach_args(skel, "libsemabss.so", "test", "bss_sema", 0xb1);
	assert_true(bss_sema_value() > 0);
	assert_int_equal(fire_bss_sema(5), 1);
	check_args(skel, 0xb1, (const long[]){ 5 }, one, 1);
	assert_int_equal(bpf_link__destroy(l), 0);
	sema_drops(bss_sema_value);
}

/*
 * 400 call sites of one spec: one spec ID for them all, in a store of
 * 256 (an ID per site would not fit). One bpf_link needs uprobe_multi.
 */
static void one_spec(struct native *skel, const struct nprobes *np)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = 7);
	struct bpf_link *l;

	l = usdt_program__attach(skel->progs.on_cap, -1, "/proc/self/exe",
				 np->prov, "p400", &uo);
	if (!usdt__features()->uprobe_multi) {
		assert_null(l);
		assert_int_equal(errno, EOPNOTSUPP);
		return;
	}
	assert_non_null(l);
	skel->bss->cap_hits = skel->bss->cap_sum = 0;
	np->fire400();
	assert_int_equal(skel->bss->cap_errs, 0);
	assert_int_equal(skel->bss->cap_hits, 400);
	assert_int_equal(skel->bss->cap_sum, 400 * (400 + 7));
	assert_int_equal(bpf_link__destroy(l), 0);
	np->fire400();
	assert_int_equal(skel->bss->cap_hits, 400);
}

/*
 * A program by bare name, as libbpf finds one: through PATH, in the
 * library's usdt_program__attach() as in bpf_program__attach_usdt()
 * (Cloudflare's ebpf_exporter names "python3" so).
 */
static void test_bare_program_name(void **state)
{
	struct native *skel = native__open_and_load();
	char *old = usdt_test_env_save("PATH"), self[4096], *slash;
	struct bpf_link *l;
	ssize_t n;

	(void)state;
	assert_non_null(skel);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	slash = strrchr(self, '/');
	assert_non_null(slash);
	*slash = '\0';
	setenv("PATH", self, 1);
	l = attach_args(skel, slash + 1, "n2", "p0", 0xb0);
	usdt_test_env_restore("PATH", old);
	n2_fire0();
	assert_int_equal(skel->bss->args_hits, 1);
	assert_int_equal(skel->bss->args_cookie, 0xb0);
	assert_int_equal(bpf_link__destroy(l), 0);
	native__destroy(skel);
}

/*
 * Programs that name no spec map (nospec.bpf.c): a hit counter, through
 * __attach(), libbpf's destroy-and-attach-again flow and cap:more's 64
 * sites where the kernel has uprobe_multi; one that reads only its
 * storage, with no manager (no storage: NULL) and with one (its value).
 * Before, both failed with ESRCH: they were taken for libbpf's.
 */
static void test_reads_nothing(void **state)
{
	static const __u64 init = 40;
	USDT_OPTS(usdt_attach_opts, ao, .storage = &init,
		  .storage_sz = sizeof(init));
	struct nospec *skel = nospec__open_and_load();
	struct usdt_manager *man;
	struct usdt_link *ml;
	struct bpf_link *l;

	(void)state;
	assert_non_null(skel);
	assert_int_equal(nospec__attach(skel), 0);
	assert_non_null(skel->links.count_fire);
	assert_int_equal(link_type(skel->links.count_fire),
			 usdt__features()->uprobe_multi ?
				 LINK_TYPE_UPROBE_MULTI : LINK_TYPE_PERF_EVENT);
	lib_fire(3);
	lib_fire(4);
	assert_int_equal(skel->bss->hits, 2);
	assert_int_equal(bpf_link__destroy(skel->links.count_fire), 0);
	lib_fire(5);
	assert_int_equal(skel->bss->hits, 2);
	skel->links.count_fire = usdt_program__attach(
		skel->progs.count_fire, -1, "libusdttest.so", "testlib", "fire",
		NULL);
	assert_non_null(skel->links.count_fire);
	lib_fire(6);
	assert_int_equal(skel->bss->hits, 3);
	if (usdt__features()->uprobe_multi) {
		l = usdt_program__attach(skel->progs.count_fire, -1,
					 "/proc/self/exe", "cap", "more", NULL);
		assert_non_null(l);
		cap_fire_more();
		assert_int_equal(skel->bss->hits, 3 + 64);
		assert_int_equal(bpf_link__destroy(l), 0);
	}

	l = usdt_program__attach(skel->progs.storage_fire, -1,
				 "libusdttest.so", "testlib", "fire", NULL);
	assert_non_null(l);
	lib_fire(7);
	assert_int_equal(skel->bss->store_hits, 1);
	assert_int_equal(skel->bss->store_null, 1);
	assert_int_equal(bpf_link__destroy(l), 0);

	/* A manager's attach gives it storage. */
	man = usdt_manager__new(skel->obj, NULL);
	assert_non_null(man);
	ml = usdt_manager__attach(man, skel->progs.storage_fire, -1,
				  "libusdttest.so", "testlib", "fire", &ao);
	assert_non_null(ml);
	lib_fire(8);
	lib_fire(9);
	assert_int_equal(skel->bss->store_hits, 3);
	assert_int_equal(skel->bss->store_null, 1);
	assert_int_equal(*(__u64 *)usdt_link__storage(ml, 0), 42);
	assert_int_equal(usdt_link__destroy(ml), 0);
	usdt_manager__free(man);
	nospec__destroy(skel);
}

static void test_selftests_flow(void **state)
{
	static const struct nprobes nps[] = { NP(n0), NP(n2) };
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		struct native *skel = native__open_and_load();

		assert_non_null(skel);
		printf("%s (-O%c)\n", nps[i].prov, nps[i].prov[1]);
		args_of(skel, &nps[i]);
		semaphores(skel, &nps[i]);
		one_spec(skel, &nps[i]);
		native__destroy(skel);
	}
}

/* cap:more's 64 sites, each a spec of its own, with this cookie. */
static struct bpf_link *attach_more(struct native *skel, long cookie)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = cookie);

	return usdt_program__attach(skel->progs.on_cap, -1, "/proc/self/exe",
				    "cap", "more", &uo);
}

static void fire_more(struct native *skel, __u64 hits, __u64 sum)
{
	skel->bss->cap_hits = skel->bss->cap_sum = 0;
	cap_fire_more();
	assert_int_equal(skel->bss->cap_errs, 0);
	assert_int_equal(skel->bss->cap_hits, hits);
	assert_int_equal(skel->bss->cap_sum, sum);
}

/* The sum of cap:more's arguments plus a cookie per hit. */
#define MORE_SUM(cookie) (64 * 100000 + 63 * 64 / 2 + 64 * (cookie))

static void test_reclaim(void **state)
{
	struct native *skel = native__open_and_load();
	struct bpf_link *l[4];
	int i;

	(void)state;
	assert_non_null(skel);
	if (!usdt__features()->uprobe_multi) {
		/* 64 sites need a uprobe_multi link: no one bpf_link. */
		assert_null(attach_more(skel, 1));
		assert_int_equal(errno, EOPNOTSUPP);
		native__destroy(skel);
		return;
	}
	/* 4 x 64 distinct specs fill the 256: one more does not fit. */
	for (i = 0; i < 4; i++) {
		l[i] = attach_more(skel, i + 1);
		assert_non_null(l[i]);
	}
	fire_more(skel, 4 * 64, MORE_SUM(1) + MORE_SUM(2) + MORE_SUM(3) +
					MORE_SUM(4));
	errno = 0;
	assert_null(attach_more(skel, 5));
	assert_int_equal(errno, E2BIG);
	fire_more(skel, 4 * 64, MORE_SUM(1) + MORE_SUM(2) + MORE_SUM(3) +
					MORE_SUM(4));
	/* Destroyed through libbpf: their specs come back, again and
	 * again, and the live link's stay as they are. */
	for (i = 1; i < 4; i++)
		assert_int_equal(bpf_link__destroy(l[i]), 0);
	for (i = 0; i < 12; i++) {
		struct bpf_link *n = attach_more(skel, 10 + i);

		assert_non_null(n);
		fire_more(skel, 2 * 64, MORE_SUM(1) + MORE_SUM(10 + i));
		assert_int_equal(bpf_link__destroy(n), 0);
	}
	fire_more(skel, 64, MORE_SUM(1));
	assert_int_equal(bpf_link__destroy(l[0]), 0);
	native__destroy(skel);
}

static __u32 link_id(const struct bpf_link *l)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_obj_get_info_by_fd(bpf_link__fd(l), &info, &len),
			 0);
	return info.id;
}

/* CAP_SYS_ADMIN in this process's effective set, or out of it (the
 * permitted set keeps it, to take it back). */
static void sys_admin(bool on)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	__u32 bit = 1u << (CAP_SYS_ADMIN % 32);

	assert_int_equal(syscall(SYS_capget, &h, d), 0);
	if (on)
		d[CAP_SYS_ADMIN / 32].effective |= bit;
	else
		d[CAP_SYS_ADMIN / 32].effective &= ~bit;
	assert_int_equal(syscall(SYS_capset, &h, d), 0);
}

/*
 * fire_more(), once a firing of cap:more counts hits (tried for 5 s at
 * most; then fire_more() fails on the count): the kernel releases
 * a link after the unlink of its last pin from a work queue, and it drops
 * the link's ID (what the iterator and the library see) before it
 * unregisters the link's uprobes, which fire until then.
 */
static void fire_more_settled(struct native *skel, __u64 hits, __u64 sum)
{
	int i;

	for (i = 0; i < 100; i++) {
		skel->bss->cap_hits = 0;
		cap_fire_more();
		if (skel->bss->cap_hits == hits)
			break;
		usleep(50000);
	}
	fire_more(skel, hits, sum);
}

/* Teardown: CAP_SYS_ADMIN back, whatever a failed test left. */
static int sys_admin_back(void **state)
{
	(void)state;
	sys_admin(true);
	return 0;
}

/* Attach cap:more with cookie, again until it fits or 5 s have gone: a
 * link's release may lag the unlink of its last pin. */
static struct bpf_link *attach_more_soon(struct native *skel, long cookie)
{
	struct bpf_link *l = NULL;
	int i;

	for (i = 0; i < 100 && !l; i++) {
		l = attach_more(skel, cookie);
		if (!l) {
			assert_int_equal(errno, E2BIG);
			usleep(50000);
		}
	}
	return l;
}

/*
 * Without CAP_SYS_ADMIN a link cannot be looked up by ID: the store asks
 * the kernel's BPF link iterator (Linux 6.0, kernel BTF) which links
 * still run. A link pinned, then destroyed by the app, still runs: its
 * specs stay until its pin goes. Where the iterator cannot be had (no
 * kernel BTF: Debian's s390x 6.1), the specs of links the library cannot
 * see end are kept, never taken from a link that may run.
 */
static void test_reclaim_caps(void **state)
{
	struct native *skel = native__open_and_load();
	struct usdt__link_ids ids;
	struct bpf_link *l[4], *n[2];
	char pin[64];
	bool listed;
	int i;

	(void)state;
	assert_non_null(skel);
	if (!usdt__features()->uprobe_multi) {
		printf("no uprobe_multi: 64 sites are no one bpf_link (test_reclaim)\n");
		native__destroy(skel);
		return;
	}
	for (i = 0; i < 4; i++) {
		l[i] = attach_more(skel, i + 1);
		assert_non_null(l[i]);
	}
	sys_admin(false);
	assert_true(bpf_link_get_fd_by_id(link_id(l[0])) < 0);
	assert_int_equal(errno, EPERM);
	listed = !usdt__link_ids_get(&ids);
	printf("the BPF link iterator %s\n",
	       listed ? "lists the live links" : "cannot be had here");
	if (listed) {
		assert_true(usdt__link_ids_has(&ids, link_id(l[0])));
		assert_true(usdt__link_ids_has(&ids, link_id(l[3])));
		usdt__link_ids_free(&ids);
	}
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/usdt_reclaim_%d", (int)getpid());
	assert_int_equal(bpf_link__pin(l[1], pin), 0);
	for (i = 1; i < 4; i++)
		assert_int_equal(bpf_link__destroy(l[i]), 0);
	fire_more(skel, 2 * 64, MORE_SUM(1) + MORE_SUM(2));
	n[0] = attach_more(skel, 10);
	if (!listed) {
		assert_null(n[0]);
		assert_int_equal(errno, E2BIG);
		assert_int_equal(unlink(pin), 0);
	} else {
		/* The two destroyed links' chunks, not the pinned one's. */
		assert_non_null(n[0]);
		n[1] = attach_more(skel, 11);
		assert_non_null(n[1]);
		errno = 0;
		assert_null(attach_more(skel, 12));
		assert_int_equal(errno, E2BIG);
		fire_more(skel, 4 * 64, MORE_SUM(1) + MORE_SUM(2) +
						MORE_SUM(10) + MORE_SUM(11));
		assert_int_equal(bpf_link__destroy(n[1]), 0);
		assert_int_equal(unlink(pin), 0);
		fire_more_settled(skel, 2 * 64, MORE_SUM(1) + MORE_SUM(10));
		/* Room for two: the unpinned link's specs are back too. */
		n[1] = attach_more_soon(skel, 13);
		assert_non_null(n[1]);
		l[1] = attach_more_soon(skel, 14);
		assert_non_null(l[1]);
		fire_more(skel, 4 * 64, MORE_SUM(1) + MORE_SUM(10) +
						MORE_SUM(13) + MORE_SUM(14));
		for (i = 0; i < 2; i++)
			assert_int_equal(bpf_link__destroy(n[i]), 0);
		assert_int_equal(bpf_link__destroy(l[1]), 0);
	}
	sys_admin(true);
	assert_int_equal(bpf_link__destroy(l[0]), 0);
	native__destroy(skel);
}

/*
 * Sleepable programs, SEC("usdt.s/..."), as libbpf 1.3+ takes them: the
 * skeleton's __attach(), usdt_program__attach(), a manager made after
 * load and one made before it (uprobe_multi, and per-site uprobes), each
 * reading a string in a page nothing has touched (bpf_copy_from_user()
 * faults it in). Eight 64 KiB blocks: fault-around maps no more than the
 * block of a faulting page, so each round's page is a cold one.
 */
#define COLD_PAGE 4096
__attribute__((aligned(65536))) static const char
	cold_pages[8 * 16 * COLD_PAGE] = {
	[1 * 16 * COLD_PAGE + 1 * COLD_PAGE] = 'c', 'o', 'l', 'd', ' ', '1',
	[2 * 16 * COLD_PAGE + 1 * COLD_PAGE] = 'c', 'o', 'l', 'd', ' ', '2',
	[3 * 16 * COLD_PAGE + 1 * COLD_PAGE] = 'c', 'o', 'l', 'd', ' ', '3',
	[4 * 16 * COLD_PAGE + 1 * COLD_PAGE] = 'c', 'o', 'l', 'd', ' ', '4',
	[5 * 16 * COLD_PAGE + 1 * COLD_PAGE] = 'c', 'o', 'l', 'd', ' ', '5',
};

__attribute__((noinline)) void fire_cold(const char *s)
{
	STAP_PROBE1(sleepy, cold, s);
}

/* Round r (1-5) fires once; the program read "cold R" with cookie. */
static void cold_round(struct sleepable *skel, int r, long cookie)
{
	char want[8];
	__u32 hits = skel->bss->cold_hits;

	snprintf(want, sizeof(want), "cold %d", r);
	fire_cold(&cold_pages[r * 16 * COLD_PAGE + COLD_PAGE]);
	assert_int_equal(skel->bss->cold_hits, hits + 1);
	assert_int_equal(skel->data->cold_err, 0);
	assert_string_equal(skel->bss->cold_got, want);
	assert_int_equal(skel->bss->cold_cookie, cookie);
}

/* The type of a kernel link that runs prog (none: 0). */
static __u32 prog_link_type(const struct bpf_program *prog)
{
	__u32 type;

	usdt_test_prog_links(prog, &type);
	return type;
}

/* A manager made before load (per_site or not) attaches it, with the
 * links it was asked for. */
static void cold_managed_before(bool per_site, int r)
{
	USDT_OPTS(usdt_manager_opts, mo, .no_uprobe_multi = per_site);
	struct sleepable *skel = sleepable__open();
	struct usdt_manager *man;

	assert_non_null(skel);
	man = usdt_manager__new(skel->obj, &mo);
	assert_non_null(man);
	assert_int_equal(sleepable__load(skel), 0);
	assert_int_equal(usdt_manager__attach_all(man, 0, NULL), 1);
	assert_int_equal(prog_link_type(skel->progs.on_cold),
			 !per_site && usdt__features()->uprobe_multi ?
				 LINK_TYPE_UPROBE_MULTI : LINK_TYPE_PERF_EVENT);
	cold_round(skel, r, 0);
	usdt_manager__free(man);
	fire_cold(&cold_pages[r * 16 * COLD_PAGE + COLD_PAGE]);
	assert_int_equal(skel->bss->cold_hits, 1);
	sleepable__destroy(skel);
}

static void test_sleepable(void **state)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = 0x51);
	struct sleepable *skel = sleepable__open_and_load();
	struct usdt_manager *man;

	(void)state;
	assert_non_null(skel);
	assert_int_equal(sleepable__attach(skel), 0);
	assert_non_null(skel->links.on_cold);
	cold_round(skel, 1, 0);

	assert_int_equal(bpf_link__destroy(skel->links.on_cold), 0);
	skel->links.on_cold = usdt_program__attach(skel->progs.on_cold, -1,
						   "/proc/self/exe", "sleepy",
						   "cold", &uo);
	assert_non_null(skel->links.on_cold);
	cold_round(skel, 2, 0x51);
	assert_int_equal(bpf_link__destroy(skel->links.on_cold), 0);
	skel->links.on_cold = NULL;

	/* A manager made after load attaches it too. */
	man = usdt_manager__new(skel->obj, NULL);
	assert_non_null(man);
	assert_int_equal(usdt_manager__attach_all(man, 0, NULL), 1);
	cold_round(skel, 3, 0);
	usdt_manager__free(man);
	sleepable__destroy(skel);

	cold_managed_before(false, 4);
	cold_managed_before(true, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skeleton),
		cmocka_unit_test(test_no_bpffs),
		cmocka_unit_test(test_bare_program_name),
		cmocka_unit_test(test_manager_adopts),
		cmocka_unit_test(test_no_new_tasks),
		cmocka_unit_test(test_reclaim),
		cmocka_unit_test_teardown(test_reclaim_caps, sys_admin_back),
		cmocka_unit_test(test_selftests_flow),
		cmocka_unit_test(test_reads_nothing),
		cmocka_unit_test(test_sleepable),
	};

	usdt_test_require_kernel("test_native");
	/* Where a loader finds libusdttest.so: pid -1 resolves a bare
	 * library name as libbpf does, not through our own maps. */
	setenv("LD_LIBRARY_PATH", KTEST_LIB_DIR, 1);
	usdt_test_need_bpffs("test_native");
	return cmocka_run_group_tests_name("native", tests, NULL, NULL);
}
