// SPDX-License-Identifier: BSD-2-Clause
/*
 * The BPF side loads: a program that includes bpf/usdt.bpf.h passes this
 * kernel's verifier, and the manager finds, sizes and prepares its maps.
 */
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "test_util.h"
#include "chunk_util.h"
#include "kernel/kfeatures.h"
#include "attach/attach.h"
#include "usdt_test.h"
#include "usdt_test.skel.h"
#include "skel_fixture.h"
#include "no_usdt.skel.h"

static void test_load_and_verify(void **state)
{
	struct usdt_test *skel = usdt_test__open();
	struct usdt_manager *man;
	uint32_t kept;

	assert_non_null(skel);
	man = usdt_manager__new(skel->obj, NULL);
	assert_non_null(man);
	assert_int_equal(usdt_test__load(skel), 0);
	assert_true(bpf_program__fd(skel->progs.on_usdt) >= 0);
	assert_true(bpf_program__fd(skel->progs.on_usdt3) >= 0);
	/* The hard limits: a head of 64 specs (this object's; none where
	 * the readers are verified per call), chunks of 256 for the rest,
	 * 4 IPs a spec; no chunk and no IP hash before the first attach. */
	kept = head_kept(skel->obj, 64);
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__spec_head),
			 kept + 1);
	assert_int_equal(skel->rodata->usdt__spec_head_cnt, kept);
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__specs),
			 outer_for(65536, 64, kept));
	assert_int_equal(bpf_map__type(skel->maps.usdt__specs),
			 BPF_MAP_TYPE_ARRAY_OF_MAPS);
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__ip2spec), 1);
	assert_int_equal(man->store->max_specs, 65536);
	assert_int_equal(man->store->ips.cap, 4 * 65536);
	assert_int_equal(inner_cnt(bpf_map__fd(skel->maps.usdt__specs)), 0);
	assert_int_equal(inner_cnt(bpf_map__fd(skel->maps.usdt__ip2spec)), 0);
	if (usdt__features()->uprobe_multi)
		assert_int_equal(bpf_program__expected_attach_type(
					 skel->progs.on_usdt),
				 USDT__TRACE_UPROBE_MULTI);
	usdt_manager__free(man);
	usdt_test__destroy(skel);
}

static void test_sizes_before_load(void **state)
{
	USDT_OPTS(usdt_manager_opts, o, .max_specs = 1000, .max_ips = 5000,
		  .no_uprobe_multi = true);
	struct usdt_test *skel = usdt_test__open();
	struct usdt_manager *man;
	uint32_t kept;

	assert_non_null(skel);
	man = usdt_manager__new(skel->obj, &o);
	assert_non_null(man);
	assert_int_equal(usdt_test__load(skel), 0);
	/* Caps: the head's 64 and chunks for 936 specs (4 of 256), or
	 * one chunk more where the head is given up; 1000 and 5000
	 * exactly. */
	kept = head_kept(skel->obj, 64);
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__spec_head),
			 kept + 1);
	assert_int_equal(bpf_map__max_entries(skel->maps.usdt__specs),
			 outer_for(1000, 64, kept));
	assert_int_equal(man->store->max_specs, 1000);
	assert_int_equal(man->store->ips.cap, 5000);
	/* no_uprobe_multi leaves the programs for perf uprobes. */
	assert_int_not_equal(bpf_program__expected_attach_type(
				     skel->progs.on_usdt),
			     USDT__TRACE_UPROBE_MULTI);
	usdt_manager__free(man);

	/* After load, sizes are refused and nothing is created; but a
	 * plain manager works after load. */
	usdt_manager__free(manager_refused(skel->obj, &o));
	usdt_test__destroy(skel);
}

static void test_no_maps(void **state)
{
	struct no_usdt *skel = no_usdt__open();

	assert_non_null(skel);
	errno = 0;
	assert_null(usdt_manager__new(skel->obj, NULL));
	assert_int_equal(errno, ESRCH);
	no_usdt__destroy(skel);
}

static void test_bad_opts(void **state)
{
	struct usdt_test *skel = usdt_test__open();
	struct {
		struct usdt_manager_opts o;
		char extra[8];
	} big = { .o.sz = sizeof(big) };

	assert_non_null(skel);
	/* Unknown trailing bytes must be zero. */
	big.extra[3] = 1;
	errno = 0;
	assert_null(usdt_manager__new(skel->obj, &big.o));
	assert_int_equal(errno, EINVAL);
	big.extra[3] = 0;
	struct usdt_manager *man = usdt_manager__new(skel->obj, &big.o);
	assert_non_null(man);

	/* A byte in the struct's own padding past its last field (where a
	 * later version may add one), as libbpf refuses it: the manager's
	 * opts, then an attach's, which takes nothing. */
	struct usdt_manager_opts mo = { .sz = sizeof(mo) };
	size_t end = offsetof(struct usdt_manager_opts, keep_ip_map) +
		     sizeof(mo.keep_ip_map);

	assert_true(end < sizeof(mo));
	((char *)&mo)[end] = 1;
	errno = 0;
	assert_null(usdt_manager__new(skel->obj, &mo));
	assert_int_equal(errno, EINVAL);

	struct usdt_attach_opts ao = { .sz = sizeof(ao) };

	end = offsetof(struct usdt_attach_opts, allow_red_zone_writes) +
	      sizeof(ao.allow_red_zone_writes);
	assert_true(end < sizeof(ao));
	((char *)&ao)[end] = 1;
	errno = 0;
	assert_null(usdt_manager__attach(man, skel->progs.on_usdt, -1,
					 "/proc/self/exe", "*", "*", &ao));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(usdt_manager__attach_all(man, -1, &ao), -EINVAL);
	assert_int_equal(errno, EINVAL);
	usdt_manager__free(man);
	errno = 0;
	assert_null(usdt_manager__new(NULL, NULL));
	assert_int_equal(errno, EINVAL);
	usdt_test__destroy(skel);
}

/* Is the running kernel version maj.min or newer? */
static bool kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	assert_int_equal(uname(&u), 0);
	assert_int_equal(sscanf(u.release, "%d.%d", &a, &b), 2);
	return a > maj || (a == maj && b >= min);
}

/*
 * The facts test_features checks the library's probes against, each found
 * here another way than src/kernel/kfeatures.c finds it: by doing the thing
 * (loading the helper, making the link, counting the semaphore) or by the
 * kernel's own tables (kallsyms, BTF through libbpf).
 */

static int bpf_sys(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* A kprobe-type program of insns, with an expected attach type. */
static int load_kprobe(const struct bpf_insn *insns, size_t cnt,
		       uint32_t attach_type)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)cnt;
	attr.license = (uintptr_t)"GPL";
	attr.expected_attach_type = attach_type;
	return bpf_sys(BPF_PROG_LOAD, &attr);
}

static const struct bpf_insn ret0[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

/* bpf_cookie: a kprobe program that calls bpf_get_attach_cookie(ctx)
 * (helper 174) loads. */
static bool has_cookie_helper(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = 174 },
		ret0[0], ret0[1],
	};
	int fd = load_kprobe(insns, 3, 0);

	if (fd < 0)
		assert_int_equal(errno, EINVAL);
	else
		close(fd);
	return fd >= 0;
}

static volatile unsigned short feature_sema = 100;	/* in .data */

__attribute__((noinline)) void feature_target(void)
{
	__asm__ __volatile__("" ::: "memory");
}

/* The offset in this binary of what is mapped at addr (/proc/self/maps). */
static uint64_t self_offset(const volatile void *addr)
{
	unsigned long long start, end, off;
	uintptr_t a = (uintptr_t)addr;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx-%llx %*s %llx", &start, &end,
			       &off) == 3 && a >= start && a < end;
	fclose(f);
	assert_true(found);
	return a - start + off;
}

/* uprobe_multi: the kernel makes such a link on feature_target(), and
 * says its type is uprobe_multi (12). */
static bool makes_uprobe_multi(void)
{
	uint64_t off = self_offset((const void *)feature_target);
	struct bpf_link_info info;
	union bpf_attr attr;
	__u32 len = sizeof(info);
	char *lc = (char *)&attr.link_create;
	int prog, link;

	prog = load_kprobe(ret0, 2, 48 /* BPF_TRACE_UPROBE_MULTI */);
	if (prog < 0)
		return false;
	/* link_create's uprobe_multi (6.6 uapi, newer than Debian 12's):
	 * path, offsets, ref_ctr_offsets, cookies, then cnt. */
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = (uint32_t)prog;
	attr.link_create.attach_type = 48;
	*(uint64_t *)(lc + 16) = (uintptr_t)"/proc/self/exe";
	*(uint64_t *)(lc + 24) = (uintptr_t)&off;
	*(uint32_t *)(lc + 48) = 1;
	link = bpf_sys(BPF_LINK_CREATE, &attr);
	close(prog);
	if (link < 0)
		return false;
	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_obj_get_info_by_fd(link, &info, &len), 0);
	close(link);
	assert_int_equal(info.type, 12 /* BPF_LINK_TYPE_UPROBE_MULTI */);
	return true;
}

/* ref_ctr_offset: a perf uprobe on feature_target() given feature_sema's
 * offset counts it up while it exists, in this process's memory. */
static bool counts_semaphore(void)
{
	struct perf_event_attr pa = { .size = sizeof(pa) };
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	unsigned short before = feature_sema, during;
	int type = -1, fd;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &type), 1);
	fclose(f);
	pa.type = (uint32_t)type;
	pa.config = self_offset(&feature_sema) << 32;
	pa.config1 = (uintptr_t)"/proc/self/exe";
	pa.config2 = self_offset((const void *)feature_target);
	fd = (int)syscall(__NR_perf_event_open, &pa, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	assert_true(fd >= 0);
	during = feature_sema;
	close(fd);
	assert_int_equal(feature_sema, before);
	assert_true(during == before || during == before + 1);
	return during == before + 1;
}

/* What the kernel's BTF, read by libbpf, says bpf_user_pt_regs_t is:
 * the struct's name into buf, or false without BTF. */
static bool btf_ctx_name(char *buf, size_t size)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	const struct btf_type *t;
	int id;

	if (!vmlinux)
		return false;
	id = btf__find_by_name_kind(vmlinux, "bpf_user_pt_regs_t",
				    BTF_KIND_TYPEDEF);
	assert_true(id > 0);
	t = btf__type_by_id(vmlinux, (__u32)id);
	while (btf_is_typedef(t) || btf_is_mod(t))
		t = btf__type_by_id(vmlinux, t->type);
	assert_true(btf_is_struct(t) || btf_is_union(t));
	snprintf(buf, size, "%s", btf__name_by_offset(vmlinux, t->name_off));
	btf__free(vmlinux);
	return true;
}

/*
 * Each feature is what the kernel does when asked directly, and, as
 * Debian's kernels build in everything the probes need, what its version
 * says (the commits: bpf_cookie 5.15, uprobe_multi 6.6, ref_ctr_offset
 * 4.20, the bpf_user_pt_regs_t context 6.8).
 */
static void test_features(void **state)
{
	const struct usdt__features *f = usdt__features();
	char ctx[64] = "";
	bool btf;

	print_message("features: bpf_cookie=%d uprobe_multi=%d ref_ctr=%d ctx=%s\n",
		      f->bpf_cookie, f->uprobe_multi, f->ref_ctr,
		      f->ctx_known ? f->ctx_name : "?");
	assert_int_equal(f->bpf_cookie, has_cookie_helper());
	assert_int_equal(f->bpf_cookie, kernel_at_least(5, 15));
	assert_int_equal(f->uprobe_multi, makes_uprobe_multi());
	assert_int_equal(f->uprobe_multi, kernel_at_least(6, 6));
	assert_int_equal(f->ref_ctr, counts_semaphore());
	assert_int_equal(f->ref_ctr, kernel_at_least(4, 20));
	btf = btf_ctx_name(ctx, sizeof(ctx));
	assert_int_equal(f->ctx_known, btf);
	assert_int_equal(btf, !access("/sys/kernel/btf/vmlinux", R_OK));
	if (btf)
		assert_string_equal(f->ctx_name, ctx);
#if defined(__x86_64__)
	if (btf)
		assert_string_equal(ctx, "pt_regs");
#endif
	assert_int_equal(f->ctx_typedef_ok, kernel_at_least(6, 8));
	assert_ptr_equal(usdt__features(), f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_load_and_verify),
		cmocka_unit_test(test_sizes_before_load),
		cmocka_unit_test(test_no_maps),
		cmocka_unit_test(test_bad_opts),
	};

	usdt_test_require_kernel("kernel/test_load");
	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("load", tests, NULL, NULL);
}
