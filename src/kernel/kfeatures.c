// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the running kernel can do, probed once per process: bpf_cookie,
 * uprobe_multi links, ref_ctr_offset, and what a
 * kprobe program's context is to it, which decides whether it takes the
 * BPF header's global functions for what they are (the section handler,
 * src/libbpf/progh.c, loads them without function info where it would not).
 * Nothing here forks, starts a thread, writes anything of libbpf's or
 * calls a syscall the kernel may not have (a seccomp filter may kill the
 * process for one it does not list).
 */
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>
#include <linux/bpf.h>

#include "kernel/kfeatures.h"
#include "base/base.h"

static struct usdt__features features;
static pthread_once_t features_once = PTHREAD_ONCE_INIT;

#if LIBBPF_MAJOR_VERSION > 1 || LIBBPF_MINOR_VERSION >= 3
/* libbpf 1.3+ has uprobe_multi in bpf_link_create()'s options. */
int usdt__uprobe_multi_create(int prog_fd, pid_t pid, const char *path,
			      const uint64_t *offs, const uint64_t *ref_ctrs,
			      const uint64_t *cookies, size_t cnt)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .uprobe_multi.path = path,
		    .uprobe_multi.offsets = (const unsigned long *)offs,
		    .uprobe_multi.ref_ctr_offsets =
			    (const unsigned long *)ref_ctrs,
		    .uprobe_multi.cookies = (const __u64 *)cookies,
		    .uprobe_multi.cnt = (__u32)cnt,
		    .uprobe_multi.pid = pid < 0 ? 0 : (__u32)pid);

	_Static_assert(sizeof(unsigned long) == sizeof(uint64_t),
		       "uprobe_multi offsets are unsigned longs");
	return bpf_link_create(prog_fd, 0,
			       (enum bpf_attach_type)USDT__TRACE_UPROBE_MULTI,
			       &lo);
}
#else
/* Older libbpf: the bpf() syscall itself. */
int usdt__uprobe_multi_create(int prog_fd, pid_t pid, const char *path,
			      const uint64_t *offs, const uint64_t *ref_ctrs,
			      const uint64_t *cookies, size_t cnt)
{
	union bpf_attr attr;
	char *lc;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = prog_fd;
	attr.link_create.attach_type = USDT__TRACE_UPROBE_MULTI;
	/*
	 * link_create.uprobe_multi (6.6+; Debian 12's uapi headers predate
	 * it): path, offsets, ref_ctr_offsets, cookies (u64s at 16..47),
	 * then cnt, flags, pid (u32s at 48..59).
	 */
	lc = (char *)&attr.link_create;
	*(uint64_t *)(lc + 16) = (uintptr_t)path;
	*(uint64_t *)(lc + 24) = (uintptr_t)offs;
	*(uint64_t *)(lc + 32) = (uintptr_t)ref_ctrs;
	*(uint64_t *)(lc + 40) = (uintptr_t)cookies;
	*(uint32_t *)(lc + 48) = (uint32_t)cnt;
	*(uint32_t *)(lc + 56) = pid < 0 ? 0 : (uint32_t)pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}
#endif

/*
 * uprobe_multi links arrived in 6.6 (commit 89ae89f53d20, "bpf: Add
 * multi uprobe link"). A kernel that has them resolves the path before
 * anything else, and "/" is not a regular file: -EBADF. Older kernels
 * reject the attach type: -EINVAL.
 */
static bool probe_uprobe_multi(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, popts,
		    .expected_attach_type = USDT__TRACE_UPROBE_MULTI);
	uint64_t offset = 0;
	int prog_fd, link_fd, err;

	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns,
				USDT__ARRAY_SIZE(insns), &popts);
	if (prog_fd < 0)
		return false;
	link_fd = usdt__uprobe_multi_create(prog_fd, -1, "/", &offset, NULL,
					    NULL, 1);
	err = link_fd < 0 ? link_fd : 0;
	if (link_fd >= 0)
		close(link_fd);
	close(prog_fd);
	return link_fd >= 0 || err == -EBADF;
}

/* The struct (or union) type id leads to through typedefs and
 * qualifiers: its name, "" when anonymous; NULL if it leads elsewhere. */
static const char *struct_name(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_typedef(t) || btf_is_mod(t)))
		t = btf__type_by_id(btf, t->type);
	if (!t || !(btf_is_struct(t) || btf_is_union(t)))
		return NULL;
	return btf__name_by_offset(btf, t->name_off);
}

/* Is type id the typedef bpf_user_pt_regs_t (under qualifiers)? */
static bool is_user_regs_typedef(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && btf_is_mod(t))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_typedef(t) &&
	       !strcmp(btf__name_by_offset(btf, t->name_off),
		       "bpf_user_pt_regs_t");
}

/*
 * What a kprobe program's context is to this kernel. Since 6.8 (the
 * "arg:ctx" series, commit "bpf: handle bpf_user_pt_regs_t typedef
 * explicitly for PTR_TO_CTX global arg"), a global function's argument
 * typed bpf_user_pt_regs_t is the context whatever it stands for.
 */
static void probe_ctx_name(void)
{
	struct btf *vmlinux;
	const char *name = NULL;
	int id, err;

	/* Read without loading the kernel's BTF (src/kernel/kbtf.c); libbpf's
	 * loader only where that reader cannot tell. */
	err = usdt__btf_ctx_name("/sys/kernel/btf/vmlinux", features.ctx_name,
				 sizeof(features.ctx_name));
	if (!err || err == -ESRCH || err == -E2BIG) {
		features.ctx_known = !err;
		return;
	}
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return;
	id = btf__find_by_name_kind(vmlinux, "bpf_user_pt_regs_t",
				    BTF_KIND_TYPEDEF);
	if (id > 0)
		name = struct_name(vmlinux, id);
	if (name && strlen(name) < sizeof(features.ctx_name)) {
		strcpy(features.ctx_name, name);
		features.ctx_known = true;
	}
	btf__free(vmlinux);
}

/*
 * What the kernel's version alone tells, 6.8 for both: the context typedef
 * (above), and one RCU grace period per batch of updates of an array of
 * maps (commit "bpf: Call maybe_wait_bpf_programs() only once for
 * generic_map_update_batch()"; before, one per entry).
 */
static void probe_version(void)
{
	int major = 0, minor = 0;
	struct utsname u;
	bool v6_8;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return;
	v6_8 = major > 6 || (major == 6 && minor >= 8);
	features.ctx_typedef_ok = v6_8;
	features.outer_batch_one_wait = v6_8;
}

static void probe_features(void)
{
	features.bpf_cookie =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
					BPF_FUNC_get_attach_cookie, NULL) == 1;
	features.uprobe_multi = probe_uprobe_multi();
	/* ref_ctr_offset: 4.20 (commit 1cc33161a83d, "uprobes: Support SDT
	 * markers having reference count (semaphore)"); the PMU advertises
	 * it. test_load checks each feature against the kernel doing it. */
	features.ref_ctr =
		!access("/sys/bus/event_source/devices/uprobe/format/ref_ctr_offset",
			F_OK);
	probe_version();
	probe_ctx_name();
	pr_debug("kernel features: bpf_cookie %d, uprobe_multi %d, ref_ctr_offset %d\n",
		 features.bpf_cookie, features.uprobe_multi, features.ref_ctr);
}

const struct usdt__features *usdt__features(void)
{
	pthread_once(&features_once, probe_features);
	return &features;
}

/*
 * The BPF header's global functions that take the program's context. A
 * kernel takes such an argument for the context when the struct it points
 * to has the name of the kernel's own (from 6.8 also when it is the
 * bpf_user_pt_regs_t typedef, whatever that stands for), which it finds in
 * its own BTF. An object built with the vmlinux.h of another arch points
 * elsewhere and would not load, and on a kernel without BTF (Debian's
 * s390x 6.1) no argument is the context: there these functions are made
 * static (usdt__ctx_funcs_make_static()), by the manager in the object's
 * BTF or by the section handler (src/libbpf/progh.c) in a copy the
 * program loads with, and the kernel verifies them at each call, as
 * libbpf's.
 */
const char *const usdt__ctx_funcs[] = {
	"usdt__arg",	"usdt__arg_cnt", "usdt__arg_size",
	"usdt__cookie", "usdt__args",	 "usdt__args4",
	"usdt__read",	"usdt__slot",	 "usdt__ctx_word",
	NULL,
};

/* Type id through typedefs and qualifiers. */
static __u32 resolved(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	return id;
}

/* Would feat's kernel not take the pointer of type id for the context?
 * Not a pointer: no. */
static bool unfit_ctx_ptr(const struct btf *btf, __u32 id,
			  const struct usdt__features *feat)
{
	const struct btf_type *ptr = btf__type_by_id(btf, id);
	const char *name;

	if (!ptr || !btf_is_ptr(ptr))
		return false;
	name = struct_name(btf, ptr->type);
	return !feat->ctx_known || !((name && !strcmp(name, feat->ctx_name)) ||
				     (feat->ctx_typedef_ok &&
				      is_user_regs_typedef(btf, ptr->type)));
}

/* The global FUNC of btf named usdt__ctx_funcs[i] if its first argument is
 * a pointer that feat's kernel would not take for the context; else NULL. */
static const struct btf_type *unfit_func(const struct btf *btf, size_t i,
					 const struct usdt__features *feat)
{
	const struct btf_type *fn, *proto;
	int id;

	id = btf__find_by_name_kind(btf, usdt__ctx_funcs[i], BTF_KIND_FUNC);
	if (id <= 0)
		return NULL;
	fn = btf__type_by_id(btf, id);
	proto = btf__type_by_id(btf, fn->type);
	/* A FUNC's vlen is its linkage. */
	if (btf_vlen(fn) != BTF_FUNC_GLOBAL || !proto ||
	    !btf_is_func_proto(proto) || !btf_vlen(proto) ||
	    !unfit_ctx_ptr(btf, btf_params(proto)->type, feat))
		return NULL;
	if (feat->ctx_known)
		pr_debug("%s() takes a context the kernel does not call '%s': verified per call\n",
			 usdt__ctx_funcs[i], feat->ctx_name);
	else
		pr_debug("%s() takes a context, and the kernel has no BTF to know it by: verified per call\n",
			 usdt__ctx_funcs[i]);
	return fn;
}

bool usdt__ctx_funcs_fit(const struct btf *btf,
			 const struct usdt__features *feat)
{
	size_t i;

	for (i = 0; btf && usdt__ctx_funcs[i]; i++)
		if (unfit_func(btf, i, feat))
			return false;
	return true;
}

/* What fn's first argument, a pointer (unfit_func()), points to,
 * resolved. */
static __u32 first_pointee(const struct btf *btf, const struct btf_type *fn)
{
	const struct btf_type *proto = btf__type_by_id(btf, fn->type);
	const struct btf_type *ptr =
		btf__type_by_id(btf, btf_params(proto)->type);

	return resolved(btf, ptr->type);
}

/*
 * Does the global FUNC fn take a pointer, which feat's kernel would not
 * take for the context, to one of the types ctx[0..1] (resolved): the
 * header's context type, and struct pt_regs, which SEC("usdt") programs
 * and BPF_USDT() name theirs?
 */
static bool takes_unfit_ctx(const struct btf *btf, const struct btf_type *fn,
			    const __u32 ctx[2],
			    const struct usdt__features *feat)
{
	const struct btf_type *proto = btf__type_by_id(btf, fn->type);
	const struct btf_type *ptr;
	const struct btf_param *p;
	__u32 k, to;

	if (btf_vlen(fn) != BTF_FUNC_GLOBAL || !proto ||
	    !btf_is_func_proto(proto))
		return false;
	p = btf_params(proto);
	for (k = 0; k < btf_vlen(proto); k++, p++) {
		ptr = btf__type_by_id(btf, p->type);
		if (!ptr || !btf_is_ptr(ptr))
			continue;
		to = resolved(btf, ptr->type);
		if ((to == ctx[0] || (ctx[1] && to == ctx[1])) &&
		    unfit_ctx_ptr(btf, p->type, feat))
			return true;
	}
	return false;
}

int usdt__ctx_funcs_make_static(struct btf *btf,
				const struct usdt__features *feat)
{
	const struct btf_type *fn = NULL;
	struct btf_type *t;
	__u32 ctx[2], i, cnt;
	int id, n = 0;

	for (i = 0; btf && usdt__ctx_funcs[i] && !fn; i++)
		fn = unfit_func(btf, i, feat);
	if (!fn)
		return 0;
	/* The context type the header's functions take, and pt_regs: every
	 * global function of the object that takes either where the kernel
	 * would not (the user's own too) becomes static, as libbpf makes a
	 * hidden one, in place: libbpf's BTF is the object's to change
	 * before load. The programs' own functions are among them: the
	 * kernel verifies a program's entry as such whatever its linkage
	 * (the same counts either way, test_frames). */
	ctx[0] = first_pointee(btf, fn);
	id = btf__find_by_name_kind(btf, "pt_regs", BTF_KIND_STRUCT);
	ctx[1] = id > 0 ? (__u32)id : 0;
	cnt = btf__type_cnt(btf);
	for (i = 1; i < cnt; i++) {
		t = (struct btf_type *)btf__type_by_id(btf, i);
		if (!btf_is_func(t) || !takes_unfit_ctx(btf, t, ctx, feat))
			continue;
		t->info = (__u32)BTF_KIND_FUNC << 24 | BTF_FUNC_STATIC;
		n++;
	}
	return n;
}
