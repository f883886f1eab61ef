// SPDX-License-Identifier: BSD-2-Clause
/*
 * The USDT manager: one per bpf_object.
 *
 * Theory of operation
 * -------------------
 * A USDT probe is a nop in the program plus a note in .note.stapsdt that
 * gives the nop's address, an optional semaphore (a counter the program
 * tests before computing expensive arguments; the kernel raises it for us
 * through the uprobe's ref_ctr_offset), and where each argument lives at
 * the nop: "-4@%edi 8@-16(%rbp)". The note reader (note.c) and the arch
 * parsers (arch/) turn that into one struct usdt_spec per call site: the
 * BPF side (bpf/usdt.bpf.h) can read every argument from it and the
 * program's registers.
 *
 * Specs live in an array map indexed by spec ID. Many call sites share
 * one spec (an inlined probe often compiles to the same operands at each
 * site), so IDs are deduplicated by content, including the user's cookie:
 * identical specs share one ID, counted by reference across every link of
 * this manager. A hash of the content finds an existing ID in O(1). When
 * the last reference goes, the map entry is zeroed (a stale cookie then
 * reads as "no spec") and the ID is pushed on a free list, which is popped
 * before any never-used ID, so live IDs stay packed at the bottom of the
 * map. The free list is preallocated to the map's size, so giving an ID
 * back cannot fail; if zeroing the entry fails, the ID is freed anyway:
 * nothing can reach it, and its next user overwrites it.
 *
 * How the BPF side finds a call site's spec ID: where the kernel gives
 * uprobes a bpf_cookie (5.15), the cookie is ID + 1. Without cookies, or
 * when asked to, the cookie is 0 and an IP map gives the ID from the
 * call site's run-time address; that needs the address the file is mapped
 * at, hence a pid for PIEs and shared libraries.
 *
 * Kernel links: one uprobe_multi link (6.6) per attach when the program
 * was loaded for it, one perf uprobe per call site otherwise. A
 * uprobe_multi program cannot be attached as a perf uprobe, so a manager
 * created before load decides, for all the object's "usdt" programs.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "manager.h"

/* ---------------------------------------------------------------------- */
/* Kernel features                                                        */

static struct usdt__features features;
static pthread_once_t features_once = PTHREAD_ONCE_INIT;

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
	union bpf_attr attr;
	unsigned long offset = 0;
	int prog_fd, link_fd, err;

	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns,
				USDT__ARRAY_SIZE(insns), &popts);
	if (prog_fd < 0)
		return false;
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = prog_fd;
	attr.link_create.attach_type = USDT__TRACE_UPROBE_MULTI;
	/* uprobe_multi: path at 16, offsets at 24, cnt at 48 in link_create */
	*(uint64_t *)((char *)&attr.link_create + 16) = (uintptr_t)"/";
	*(uint64_t *)((char *)&attr.link_create + 24) = (uintptr_t)&offset;
	*(uint32_t *)((char *)&attr.link_create + 48) = 1;
	link_fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	err = link_fd < 0 ? -errno : 0;
	if (link_fd >= 0)
		close(link_fd);
	close(prog_fd);
	return link_fd >= 0 || err == -EBADF;
}

/*
 * x86 optimized uprobes (6.18, "uprobes/x86: Add uprobe syscall to speed
 * up uprobe") add a uprobe() syscall that only a uprobe trampoline may
 * call; anyone else gets SIGILL. So ask in a child: ENOSYS means absent.
 */
static bool probe_uprobe_syscall(void)
{
#if defined(__x86_64__)
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (pid == 0) {
		long r = syscall(336 /* __NR_uprobe */);

		_exit(r < 0 && errno == ENOSYS ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return false;
	return !(WIFEXITED(status) && WEXITSTATUS(status) == 1);
#else
	return false;
#endif
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
	struct utsname u;
	int major = 0, minor = 0;
	struct btf *vmlinux;
	const char *name = NULL;
	int id, err;

	if (!uname(&u) && sscanf(u.release, "%d.%d", &major, &minor) == 2)
		features.ctx_typedef_ok = major > 6 || (major == 6 && minor >= 8);
	/* Read without loading the kernel's BTF (src/kbtf.c); libbpf's
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

static void probe_features(void)
{
	features.bpf_cookie = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
						      BPF_FUNC_get_attach_cookie,
						      NULL) == 1;
	features.uprobe_multi = probe_uprobe_multi();
	/* ref_ctr_offset: 5.5 (commit 1cc33161a83d, "uprobe: Additional
	 * argument arch_uprobe_enable()"); the PMU advertises it. */
	features.ref_ctr = !access(
		"/sys/bus/event_source/devices/uprobe/format/ref_ctr_offset",
		F_OK);
	features.uprobe_syscall = probe_uprobe_syscall();
	probe_ctx_name();
	pr_debug("kernel features: bpf_cookie %d, uprobe_multi %d, ref_ctr_offset %d, uprobe syscall %d\n",
		 features.bpf_cookie, features.uprobe_multi, features.ref_ctr,
		 features.uprobe_syscall);
}

const struct usdt__features *usdt__features(void)
{
	pthread_once(&features_once, probe_features);
	return &features;
}

/* ---------------------------------------------------------------------- */
/* Spec IDs                                                               */

static uint32_t spec_hash(const struct usdt_spec *spec)
{
	const unsigned char *p = (const unsigned char *)spec;
	uint32_t h = 2166136261u;	/* FNV-1a */
	size_t i;

	for (i = 0; i < sizeof(*spec); i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int slots_init(struct usdt_manager *man)
{
	uint32_t n = bpf_map__max_entries(man->specs_map), b = 1, i;
	int err;

	if (!n)
		return -EINVAL;
	while (b < n * 2)
		b <<= 1;
	/* Our own descriptors of the maps: links may outlive the manager's
	 * user and the bpf_object (see usdt_manager__free()). */
	man->specs_fd = fcntl(bpf_map__fd(man->specs_map), F_DUPFD_CLOEXEC, 3);
	man->ip_fd = fcntl(bpf_map__fd(man->ip_map), F_DUPFD_CLOEXEC, 3);
	man->slots = calloc(n, sizeof(*man->slots));
	man->free_ids = calloc(n, sizeof(*man->free_ids));
	man->buckets = malloc(b * sizeof(*man->buckets));
	if (man->specs_fd < 0 || man->ip_fd < 0 || !man->slots ||
	    !man->free_ids || !man->buckets) {
		err = man->specs_fd < 0 || man->ip_fd < 0 ? -errno : -ENOMEM;
		usdt__manager_close_maps(man);
		free(man->slots);
		free(man->free_ids);
		free(man->buckets);
		man->slots = NULL;
		man->free_ids = NULL;
		man->buckets = NULL;
		return err;
	}
	for (i = 0; i < b; i++)
		man->buckets[i] = -1;
	man->bucket_cnt = b;
	man->max_specs = n;
	return 0;
}

int usdt__spec_get(struct usdt_manager *man, const struct usdt_spec *spec)
{
	uint32_t h, id;
	int32_t cur;
	int err;

	if (!man->slots) {
		err = slots_init(man);
		if (err)
			return err;
	}
	h = spec_hash(spec) & (man->bucket_cnt - 1);
	for (cur = man->buckets[h]; cur >= 0; cur = man->slots[cur].next) {
		if (!memcmp(&man->slots[cur].spec, spec, sizeof(*spec))) {
			man->slots[cur].refcnt++;
			return cur;
		}
	}

	if (man->free_cnt)
		id = man->free_ids[man->free_cnt - 1];
	else if (man->next_id < man->max_specs)
		id = man->next_id;
	else
		return -E2BIG;

	err = bpf_map_update_elem(man->specs_fd, &id, spec, BPF_ANY);
	if (err) {
		err = -errno;
		pr_warn("cannot write spec %u: %s\n", id, usdt__errstr(err));
		return err;
	}
	if (man->free_cnt)
		man->free_cnt--;
	else
		man->next_id++;
	man->slots[id].spec = *spec;
	man->slots[id].refcnt = 1;
	man->slots[id].next = man->buckets[h];
	man->buckets[h] = (int32_t)id;
	man->live_cnt++;
	return (int)id;
}

int usdt__spec_put(struct usdt_manager *man, int id)
{
	static const struct usdt_spec zero;
	struct usdt__slot *slot;
	int32_t *link;
	uint32_t h;
	int err = 0;

	if (id < 0 || (uint32_t)id >= man->next_id || !man->slots[id].refcnt)
		return 0;
	slot = &man->slots[id];
	if (--slot->refcnt)
		return 0;

	h = spec_hash(&slot->spec) & (man->bucket_cnt - 1);
	for (link = &man->buckets[h]; *link >= 0; link = &man->slots[*link].next) {
		if (*link == id) {
			*link = slot->next;
			break;
		}
	}
	if (bpf_map_update_elem(man->specs_fd, &id, &zero, BPF_ANY)) {
		err = -errno;
		pr_warn("cannot zero spec %d: %s; it is freed anyway\n", id,
			usdt__errstr(err));
	}
	memset(slot, 0, sizeof(*slot));
	slot->next = -1;
	man->free_ids[man->free_cnt++] = (uint32_t)id;
	man->live_cnt--;
	return err;
}

/* ---------------------------------------------------------------------- */
/* The manager                                                            */

static bool is_usdt_prog(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);

	return bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE && sec &&
	       (!strcmp(sec, "usdt") || !strncmp(sec, "usdt/", 5));
}

/*
 * Where the BPF header's .rodata variable `name` is: its map, and its
 * offset in that map's initial image (read-only after load). -ENOENT when
 * the object has no such 4-byte variable.
 */
static int rodata_var(struct bpf_object *obj, const char *name,
		      struct bpf_map **mapp, size_t *offp)
{
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec, *var;
	struct bpf_map *map;
	unsigned int i, vlen;
	struct btf *btf;
	size_t size;
	int id;

	btf = bpf_object__btf(obj);
	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id < 0)
		return -ENOENT;
	sec = btf__type_by_id(btf, id);
	bpf_object__for_each_map(map, obj) {
		const char *mname = bpf_map__name(map);
		size_t len = strlen(mname);

		if (len >= 7 && !strcmp(mname + len - 7, ".rodata"))
			break;
	}
	if (!map || !bpf_map__initial_value(map, &size))
		return -ENOENT;
	vs = btf_var_secinfos(sec);
	/* btf_vlen() is __u16 up to libbpf 1.7 and __u32 after. */
	vlen = btf_vlen(sec);
	for (i = 0; i < vlen; i++, vs++) {
		var = btf__type_by_id(btf, vs->type);
		if (strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		if (vs->size != sizeof(uint32_t) || vs->offset + 4 > size)
			return -ENOENT;
		*mapp = map;
		*offp = vs->offset;
		return 0;
	}
	return -ENOENT;
}

/*
 * The object must read specs the way this library writes them: its
 * usdt.bpf.h wrote its layout version into usdt__layout.
 */
static int check_layout(struct usdt_manager *man)
{
	struct bpf_map *map;
	uint32_t layout;
	size_t off, size;

	if (rodata_var(man->obj, "usdt__layout", &map, &off)) {
		pr_warn("BPF object '%s' has no usdt__layout: built with another libusdt's usdt.bpf.h? Rebuild it with this one's\n",
			bpf_object__name(man->obj));
		return -EPROTO;
	}
	memcpy(&layout, (const char *)bpf_map__initial_value(map, &size) + off,
	       sizeof(layout));
	if (layout != USDT_SPEC_LAYOUT) {
		pr_warn("BPF object '%s' reads spec layout %u, this libusdt writes layout %u: rebuild it with this libusdt's usdt.bpf.h\n",
			bpf_object__name(man->obj), layout, USDT_SPEC_LAYOUT);
		return -EPROTO;
	}
	return 0;
}

/*
 * Without __TARGET_ARCH_xxx the BPF side learns where the PC is and how
 * big the context is from the usdt__ip_off and usdt__ctx_sz globals:
 * write them into .rodata's initial image.
 */
static void set_arch_vars(struct usdt_manager *man)
{
	const struct usdt__arch_ops *arch = usdt__arch_host();
	const struct {
		const char *name;
		uint32_t val;
	} vars[] = {
		{ "usdt__ip_off", arch ? arch->ip_off : 0 },
		{ "usdt__ctx_sz", arch ? arch->pt_regs_size : 0 },
	};
	struct bpf_map *map = NULL;
	size_t off, size, i;
	const void *init;
	char *data;

	if (!arch || rodata_var(man->obj, vars[0].name, &map, &off))
		return;
	init = bpf_map__initial_value(map, &size);
	/* libbpf hands out the image read-only: write a copy back. */
	data = malloc(size);
	if (!data)
		return;
	memcpy(data, init, size);
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (!rodata_var(man->obj, vars[i].name, &map, &off))
			memcpy(data + off, &vars[i].val, sizeof(vars[i].val));
	if (bpf_map__set_initial_value(map, data, size))
		pr_warn("cannot set usdt__ip_off and usdt__ctx_sz in .rodata\n");
	free(data);
}

/*
 * Does this libbpf load every SEC("usdt") program for uprobe_multi links
 * when the kernel has them, whatever its expected attach type says? From
 * 1.3 on it does (libbpf commit "libbpf: Add uprobe multi link support to
 * bpf_program__attach_usdt").
 */
static bool libbpf_forces_multi(void)
{
	return libbpf_major_version() > 1 || libbpf_minor_version() >= 3;
}

/*
 * Before load, choose for each SEC("usdt") program the kind of link it
 * will take: its expected attach type says it at attach time.
 *
 * For per-site uprobes on a kernel with uprobe_multi, a libbpf that
 * forces uprobe_multi at load (1.3+) must lose the section handler that
 * does it. Changing a program's type drops its handler (libbpf 1.2+), so
 * the type goes to another and back: the program then loads as a plain
 * kprobe-type program with no expected attach type, as libbpf 1.1 loads
 * it. What the handler did besides that is auto-attach (which the manager
 * does instead) and BPF_F_SLEEPABLE for "usdt.s" (which only uprobe_multi
 * programs may have).
 */
static int prepare_progs(struct bpf_object *obj, bool want_multi)
{
	bool multi = want_multi && usdt__features()->uprobe_multi;
	bool drop_handler = !multi && usdt__features()->uprobe_multi &&
			    libbpf_forces_multi();
	struct bpf_program *prog;
	int err;

	bpf_object__for_each_program(prog, obj) {
		if (!is_usdt_prog(prog))
			continue;
		if (multi) {
			err = bpf_program__set_expected_attach_type(
				prog, USDT__TRACE_UPROBE_MULTI);
		} else if (drop_handler) {
			err = bpf_program__set_type(prog,
						    BPF_PROG_TYPE_TRACEPOINT);
			if (!err)
				err = bpf_program__set_type(prog,
							    BPF_PROG_TYPE_KPROBE);
		} else {
			err = 0;
		}
		if (err)
			return err;
	}
	return 0;
}

/*
 * The BPF header's global functions that take the program's context. A
 * kernel takes such an argument for the context when the struct it points
 * to has the name of the kernel's own (from 6.8 also when it is the
 * bpf_user_pt_regs_t typedef, whatever that stands for). An object built
 * with the vmlinux.h of another arch points elsewhere and would not load:
 * such functions become static in the object's BTF, and the kernel then
 * verifies them at each call, as libbpf's, and loads them.
 */
static void fit_ctx_funcs(struct usdt_manager *man)
{
	static const char *const funcs[] = {
		"usdt__arg", "usdt__arg_cnt", "usdt__arg_size", "usdt__cookie",
		"usdt__args", "usdt__slot",
	};
	const struct usdt__features *feat = usdt__features();
	struct btf *btf = bpf_object__btf(man->obj);
	const struct btf_param *param;
	const struct btf_type *fn, *proto, *ptr;
	const char *name;
	size_t i;
	int id;

	if (!btf || !feat->ctx_known)
		return;
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		id = btf__find_by_name_kind(btf, funcs[i], BTF_KIND_FUNC);
		if (id <= 0)
			continue;
		fn = btf__type_by_id(btf, id);
		proto = btf__type_by_id(btf, fn->type);
		/* A FUNC's vlen is its linkage. */
		if (btf_vlen(fn) != BTF_FUNC_GLOBAL || !proto ||
		    !btf_is_func_proto(proto) || !btf_vlen(proto))
			continue;
		param = btf_params(proto);
		ptr = btf__type_by_id(btf, param->type);
		if (!ptr || !btf_is_ptr(ptr))
			continue;
		name = struct_name(btf, ptr->type);
		if ((name && !strcmp(name, feat->ctx_name)) ||
		    (feat->ctx_typedef_ok && is_user_regs_typedef(btf, ptr->type)))
			continue;
		pr_debug("%s() takes a context the kernel calls '%s', not '%s': verified per call\n",
			 funcs[i], name ? name : "?", feat->ctx_name);
		/* libbpf does the same to hidden global functions. */
		((struct btf_type *)fn)->info =
			((__u32)BTF_KIND_FUNC << 24) | BTF_FUNC_STATIC;
	}
}

struct usdt_manager *usdt_manager__new(struct bpf_object *obj,
				       const struct usdt_manager_opts *opts)
{
	uint32_t max_specs, max_ips, max_storage;
	struct usdt_manager *man;
	bool loaded;
	int err;

	if (!obj || !OPTS_VALID(opts))
		return usdt__err_ptr(-EINVAL);
	max_specs = OPTS_GET(opts, max_specs, 0);
	max_ips = OPTS_GET(opts, max_ips, 0);
	max_storage = OPTS_GET(opts, max_storage, 0);

	man = calloc(1, sizeof(*man));
	if (!man)
		return usdt__err_ptr(-ENOMEM);
	man->obj = obj;
	man->specs_fd = man->ip_fd = -1;
	man->specs_map = bpf_object__find_map_by_name(obj, "usdt__specs");
	man->ip_map = bpf_object__find_map_by_name(obj, "usdt__ip2spec");
	if (!man->specs_map || !man->ip_map) {
		pr_warn("BPF object '%s' has no usdt__specs/usdt__ip2spec maps: does it include usdt.bpf.h and call bpf_usdt_arg()?\n",
			bpf_object__name(obj));
		err = -ESRCH;
		goto err_out;
	}
	err = check_layout(man);
	if (err)
		goto err_out;
	usdt__storage_find(man);
	if (max_storage && !man->storage.map) {
		pr_warn("max_storage set, but BPF object '%s' has no usdt__storage map (USDT_STORAGE_TYPE)\n",
			bpf_object__name(obj));
		err = -EINVAL;
		goto err_out;
	}

	loaded = bpf_map__fd(man->specs_map) >= 0;
	if (loaded && (max_specs || max_ips || max_storage)) {
		pr_warn("map sizes can only be set before bpf_object__load()\n");
		err = -EINVAL;
		goto err_out;
	}
	if (!loaded) {
		if (max_specs &&
		    (err = bpf_map__set_max_entries(man->specs_map, max_specs)))
			goto err_out;
		if (max_ips &&
		    (err = bpf_map__set_max_entries(man->ip_map, max_ips)))
			goto err_out;
		if (max_storage &&
		    (err = bpf_map__set_max_entries(man->storage.map,
						    max_storage)))
			goto err_out;
		set_arch_vars(man);
		fit_ctx_funcs(man);
		err = prepare_progs(obj, !OPTS_GET(opts, no_uprobe_multi,
						   false));
		if (err)
			goto err_out;
	}
	usdt__skel_prepare(obj);
	return man;

err_out:
	free(man);
	return usdt__err_ptr(err);
}

void usdt__manager_close_maps(struct usdt_manager *man)
{
	if (man->specs_fd >= 0)
		close(man->specs_fd);
	if (man->ip_fd >= 0)
		close(man->ip_fd);
	man->specs_fd = man->ip_fd = -1;
}

void usdt__manager_release(struct usdt_manager *man)
{
	usdt__manager_close_maps(man);
	usdt__storage_release(&man->storage);
	free(man->slots);
	free(man->free_ids);
	free(man->buckets);
	free(man);
}

/*
 * The links of usdt_manager__attach_all() go first. Links the user still
 * holds keep the bookkeeping they need, and the manager's own map
 * descriptors: the last one frees it. Neither touches the bpf_object
 * again, which the user may close at once.
 */
void usdt_manager__free(struct usdt_manager *man)
{
	if (!man)
		return;
	usdt__skel_release(man);
	usdt__file_cache_clear(man);
	man->freed = true;
	man->obj = NULL;
	man->specs_map = man->ip_map = man->storage.map = NULL;
	if (!man->link_cnt)
		usdt__manager_release(man);
}
