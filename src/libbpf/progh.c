// SPDX-License-Identifier: BSD-2-Clause
/*
 * libusdt inside libbpf's own flow, through its public extension point.
 *
 * A section handler for SEC("usdt...") programs, registered with
 * libbpf_register_prog_handler() when libusdt is loaded (before any
 * bpf_object__open(): libbpf picks a program's handler at open), so that a
 * skeleton's __attach() attaches SEC("usdt/PATH:PROVIDER:NAME") programs
 * into skel->links, and usdt_program__attach(), which is
 * bpf_program__attach_usdt() with the same arguments for programs built on
 * bpf/usdt.bpf.h. Both return libbpf's own struct bpf_link.
 *
 * What a program needs shows in the maps its loaded instructions name
 * (ld_imm64 of a map fd). One that names libbpf's (__bpf_usdt_*) was built
 * on libbpf's header and gets libbpf's behaviour: the expected attach type
 * libbpf's own handler gives it at load, and bpf_program__attach_usdt().
 * One that names our spec map reads specs from its object's store. One
 * that names no spec map (it counts hits, or reads only its storage,
 * which only a manager gives) reads nothing a store holds, whichever
 * header it was built on: it is attached by the store of no maps
 * (usdt__store_specless()), cookies 0, no IP-map entry. No guess at a
 * header is made: what the program reads decides, and every program gets
 * uprobe_multi links where the kernel has them, unless it is libbpf's.
 *
 * An object with no usdt_manager gets an implicit one (a spec store made
 * from its maps' fds, src/store/store.c), found by its spec map's kernel ID
 * and freed once the object's fd definitely no longer names that map
 * (stores_gc(): not on an error that says nothing). Its records of
 * the links the user holds are swept as src/attach/ext.c says. A program a
 * manager prepared, or one of a loaded object that has a manager, uses
 * that manager's store (a manager's programs are not auto-attached: it
 * attaches them). A manager made for a loaded object adopts the object's
 * implicit store, records and all (usdt__store_take()), and gives it back
 * when it is freed with only such links alive (usdt__store_give()).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "attach/attach.h"
#include "libbpf/object.h"
#include "libbpf/progh.h"

/* The maps a program's instructions name, and so what it reads. */
struct prog_maps {
	struct usdt__outer specs, ips;
	int head_fd; /* the spec head's, or -1 */
	uint32_t head_cnt;
	uint32_t specs_id;
	bool libbpf_hdr;
};

/* The store of programs that name no spec map, made at the first such
 * attach (under stores_lock). */
static struct usdt__store *specless;

/* 0, or the kernel's error: a map unread could be one of ours. */
static int note_map(struct prog_maps *pm, int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	int err;

	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (err)
		return err;
	if (!strcmp(info.name, "usdt__specs") &&
	    info.type == BPF_MAP_TYPE_ARRAY_OF_MAPS) {
		pm->specs = (struct usdt__outer){ fd, info.max_entries,
						  "usdt__specs" };
		pm->specs_id = info.id;
	} else if (!strcmp(info.name, "usdt__spec_head") &&
		   info.type == BPF_MAP_TYPE_ARRAY && info.max_entries) {
		pm->head_fd = fd;
		pm->head_cnt = info.max_entries - 1;
	} else if (!strcmp(info.name, "usdt__ip2spec") &&
		   info.type == BPF_MAP_TYPE_ARRAY_OF_MAPS) {
		pm->ips = (struct usdt__outer){ fd, info.max_entries,
						"usdt__ip2spec" };
	} else if (!strncmp(info.name, "__bpf_usdt_", 11)) {
		pm->libbpf_hdr = true;
	}
	return 0;
}

/*
 * After relocation (at load and later): the maps prog names. 0, or the
 * error of reading one: a program whose maps are not all known is not
 * told apart from another header's.
 */
static int prog_maps(const struct bpf_program *prog, struct prog_maps *pm)
{
	const struct bpf_insn *insn = bpf_program__insns(prog);
	size_t i, n = bpf_program__insn_cnt(prog);
	int last = -1, err;

	memset(pm, 0, sizeof(*pm));
	pm->specs.fd = pm->ips.fd = pm->head_fd = -1;
	for (i = 0; insn && i + 1 < n; i++) {
		if (insn[i].code != (BPF_LD | BPF_DW | BPF_IMM))
			continue;
		if ((insn[i].src_reg == BPF_PSEUDO_MAP_FD ||
		     insn[i].src_reg == BPF_PSEUDO_MAP_VALUE) &&
		    insn[i].imm != last) {
			last = insn[i].imm;
			err = note_map(pm, last);
			if (err)
				return err;
		}
		i++; /* its second half */
	}
	if (pm->specs.fd >= 0 && pm->head_fd >= 0) {
		pm->specs.head_fd = pm->head_fd;
		pm->specs.head_cnt = pm->head_cnt;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Implicit managers                                                      */

static pthread_mutex_t stores_lock = PTHREAD_MUTEX_INITIALIZER;
static struct usdt__store **stores;
static size_t store_cnt, store_cap;

/*
 * Free the stores of closed objects (their live links keep the maps):
 * those whose object's fd definitely no longer is the spec map of that ID
 * (usdt__fd_is_bpf()), and a parent's after fork(). Where the kernel gives
 * no answer (ENOMEM, ...), the store stays as it is: freeing the store of
 * a live object would leave its chunks in the maps for a new store to
 * find taken (EBUSY), and the next call asks again.
 */
static void stores_gc(void)
{
	size_t i, n = 0;
	int is;

	for (i = 0; i < store_cnt; i++) {
		struct usdt__store *m = stores[i];

		is = usdt__fd_is_bpf(m->specs_outer.fd, USDT__BPF_MAP,
				     m->specs_id);
		if (is < 0)
			pr_debug("cannot tell whether the object of spec map %u is closed: %s\n",
				 m->specs_id, usdt__errstr(is));
		if (is != 0 && !usdt__store_forked(m)) {
			stores[n++] = m;
			continue;
		}
		usdt__ext_drop(m);
		usdt__file_cache_clear(m);
		usdt__store_put(m); /* the list's */
	}
	store_cnt = n;
}

/* Room for one more store in the list. 0, or -ENOMEM. */
static int stores_room(void)
{
	struct usdt__store **v;
	size_t cap = store_cap ? store_cap * 2 : 4;

	if (store_cnt < store_cap)
		return 0;
	v = usdt__reallocarray(stores, cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	stores = v;
	store_cap = cap;
	return 0;
}

/* The store of no maps, made if none (again in a child of its maker,
 * whose records are the parent's); NULL and errno. */
static struct usdt__store *specless_store(void)
{
	if (specless && usdt__store_forked(specless)) {
		usdt__ext_drop(specless);
		usdt__store_put(specless);
		specless = NULL;
	}
	if (!specless)
		specless = usdt__store_specless();
	return specless ? specless : usdt__err_ptr(-ENOMEM);
}

/* The implicit store of pm's maps, made if none; NULL and errno. */
static struct usdt__store *store_of(const struct prog_maps *pm)
{
	struct usdt__store *m;
	size_t i;

	if (pm->specs.fd < 0)
		return specless_store();
	stores_gc();
	for (i = 0; i < store_cnt; i++)
		if (stores[i]->specs_id == pm->specs_id)
			return stores[i];
	if (stores_room())
		return usdt__err_ptr(-ENOMEM);
	m = usdt__store_implicit(&pm->specs, &pm->ips, pm->specs_id);
	if (!m)
		return usdt__err_ptr(-ENOMEM);
	stores[store_cnt++] = m;
	return m;
}

int usdt__store_give(struct usdt__store *imp)
{
	int err;

	pthread_mutex_lock(&stores_lock);
	stores_gc();
	err = stores_room();
	if (!err)
		stores[store_cnt++] = imp;
	pthread_mutex_unlock(&stores_lock);
	return err;
}

struct usdt__store *usdt__store_take(uint32_t specs_id)
{
	struct usdt__store *m = NULL;
	size_t i;

	pthread_mutex_lock(&stores_lock);
	stores_gc();
	for (i = 0; i < store_cnt && !m; i++) {
		if (stores[i]->specs_id != specs_id)
			continue;
		m = stores[i];
		stores[i] = stores[--store_cnt];
	}
	pthread_mutex_unlock(&stores_lock);
	return m;
}

struct bpf_link *usdt_program__attach(const struct bpf_program *prog, pid_t pid,
				      const char *binary_path,
				      const char *usdt_provider,
				      const char *usdt_name,
				      const struct bpf_usdt_opts *opts)
{
	const struct bpf_object *obj = NULL;
	struct usdt_manager *man;
	struct usdt__store *st;
	struct prog_maps pm;
	struct bpf_link *l;
	int err;

	if (!prog || !binary_path || !usdt_provider || !usdt_name || pid < -1 ||
	    !OPTS_VALID(opts, bpf_usdt_opts))
		return usdt__err_ptr(-EINVAL);
	if (bpf_program__fd(prog) < 0) {
		pr_warn("%s:%s: program '%s' is not loaded\n", usdt_provider,
			usdt_name, bpf_program__name(prog));
		return usdt__err_ptr(-EINVAL);
	}
	err = prog_maps(prog, &pm);
	if (err) {
		pr_warn("%s:%s: cannot read the maps of program '%s': %s\n",
			usdt_provider, usdt_name, bpf_program__name(prog),
			usdt__errstr(err));
		return usdt__err_ptr(err);
	}
	if (pm.libbpf_hdr)
		return bpf_program__attach_usdt(prog, pid, binary_path,
						usdt_provider, usdt_name, opts);
	if (pm.specs.fd >= 0 && pm.ips.fd < 0) {
		pr_warn("%s:%s: program '%s' names usdt__specs and not usdt__ip2spec: is it built on bpf/usdt.bpf.h?\n",
			usdt_provider, usdt_name, bpf_program__name(prog));
		return usdt__err_ptr(-EINVAL);
	}
	pthread_mutex_lock(&stores_lock);
	/* A manager's programs use its store. */
	man = usdt__prog_manager(prog);
	if (man)
		obj = man->obj;
	st = man ? usdt__manager_store(man) : store_of(&pm);
	l = st ? usdt__attach_ext(st, obj, prog, pid, binary_path,
				  usdt_provider, usdt_name,
				  OPTS_GET(opts, usdt_cookie, 0)) :
		 NULL;
	err = l ? 0 : -errno;
	pthread_mutex_unlock(&stores_lock);
	return l ? l : usdt__err_ptr(err);
}

/* ---------------------------------------------------------------------- */
/* The section handler                                                    */

/* From libbpf's own rule (1.3+): a SEC("usdt") program loads for
 * uprobe_multi links where the kernel has them. */
static bool libbpf_uses_multi(void)
{
	return (libbpf_major_version() > 1 || libbpf_minor_version() >= 3) &&
	       usdt__features()->uprobe_multi;
}

static int handler_setup(struct bpf_program *prog, long cookie)
{
	/* "usdt.s": sleepable, as libbpf's own handler makes it. */
	if (cookie)
		return bpf_program__set_flags(prog, bpf_program__flags(prog) |
							    BPF_F_SLEEPABLE);
	return 0;
}

/*
 * The header's global functions that take the context, where the kernel
 * would not take it (no kernel BTF, or an object built for another arch's
 * context type: usdt__ctx_funcs_fit()), and no manager made them static
 * in the object's BTF before load (per_call_prepare() in
 * src/libbpf/object.c: a program loaded before any manager was made for
 * its object, a skeleton's with none). Such a program loads with a copy
 * of its object's BTF in which those functions are static, with the
 * object's own that take the context (usdt__ctx_funcs_make_static()):
 * verified per call, while the program keeps its function and line info
 * and the object's other global functions are verified once.
 *
 * One record per BTF loaded for an object (fits[]): its kernel ID, the
 * object's fd of it, and the copy's fd, or -1 where the BTF fits as it is.
 * The copy is made at the first program's load; the object's next
 * programs take it too. A loaded program holds its own reference, so the
 * copy is closed once the object's fd no longer names that BTF (the
 * object is closed), at the next load that comes here, as stores_gc()
 * does for stores.
 *
 * Only the program's BTF is the copy: its maps keep the object's. A
 * program that stores an object of bpf_obj_new() into a map's kptr field
 * needs both to be one BTF; such a program has kernel BTF (kfuncs need
 * it), so only an object built for another arch's context type, before
 * 6.8, could meet that, and a manager made before load avoids it.
 */
struct btf_fit {
	__u32 id;
	int obj_fd;
	int fd;
};

static pthread_mutex_t fits_lock = PTHREAD_MUTEX_INITIALIZER;
static struct btf_fit *fits;
static size_t fit_cnt, fit_cap;

/* Close the copies of BTFs whose objects are closed (under fits_lock).
 * Where the kernel gives no answer the record stays: the next call asks
 * again. */
static void fits_gc(void)
{
	size_t i, n = 0;

	for (i = 0; i < fit_cnt; i++) {
		if (usdt__fd_is_bpf(fits[i].obj_fd, USDT__BPF_BTF,
				    fits[i].id) != 0) {
			fits[n++] = fits[i];
			continue;
		}
		if (fits[i].fd >= 0)
			close(fits[i].fd);
	}
	fit_cnt = n;
}

/* The loaded BTF btf_fd, read through the fd (no privilege needed), with
 * its kernel ID in *id; NULL and errno. */
static struct btf *btf_of_fd(int btf_fd, __u32 *id)
{
	struct bpf_btf_info info;
	__u32 len = sizeof(info), size;
	struct btf *btf = NULL;
	void *data;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(btf_fd, &info, &len))
		return NULL;
	size = info.btf_size;
	data = size ? malloc(size) : NULL;
	if (!data)
		return usdt__err_ptr(size ? -ENOMEM : -ENODATA);
	memset(&info, 0, sizeof(info));
	info.btf = (__u64)(uintptr_t)data;
	info.btf_size = size;
	len = sizeof(info);
	if (!bpf_obj_get_info_by_fd(btf_fd, &info, &len) &&
	    info.btf_size == size) {
		btf = btf__new(data, size);
		if (libbpf_get_error(btf))
			btf = NULL;
		*id = info.id;
	}
	free(data);
	return btf ? btf : usdt__err_ptr(-EINVAL);
}

/* btf's copy with the functions the kernel would not take static,
 * loaded: its fd (close-on-exec), -1 where btf fits as it is, or a
 * negative errno. */
static int btf_fit_copy(struct btf *btf)
{
	const struct usdt__features *feat = usdt__features();
	int err, fd;

	if (usdt__ctx_funcs_fit(btf, feat))
		return -1;
	if (usdt__ctx_funcs_make_static(btf, feat) <= 0)
		return -EINVAL;
	err = btf__load_into_kernel(btf);
	if (err)
		return err < 0 ? err : -EINVAL;
	fd = fcntl(btf__fd(btf), F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? -errno : fd;
}

/* A record for the object's BTF btf_fd, read and copied where it does not
 * fit (under fits_lock): its copy's fd, -1 where it fits, or a negative
 * errno (no record). */
static int fit_add(int btf_fd)
{
	size_t cap = fit_cap ? fit_cap * 2 : 4;
	struct btf_fit *v;
	struct btf *btf;
	__u32 id = 0;
	int fd;

	if (fit_cnt == fit_cap) {
		v = usdt__reallocarray(fits, cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		fits = v;
		fit_cap = cap;
	}
	btf = btf_of_fd(btf_fd, &id);
	if (!btf)
		return errno ? -errno : -EINVAL;
	fd = btf_fit_copy(btf);
	btf__free(btf);
	if (fd >= -1)
		fits[fit_cnt++] = (struct btf_fit){ id, btf_fd, fd };
	return fd;
}

/* The BTF fd a program of the object's BTF btf_fd loads with: a copy's,
 * btf_fd itself where it fits, or a negative errno. */
static int btf_fit(int btf_fd)
{
	struct btf_fit *f = NULL;
	size_t i;
	int fd;

	pthread_mutex_lock(&fits_lock);
	fits_gc();
	for (i = 0; i < fit_cnt && !f; i++)
		if (fits[i].obj_fd == btf_fd &&
		    usdt__fd_is_bpf(btf_fd, USDT__BPF_BTF, fits[i].id) > 0)
			f = &fits[i];
	fd = f ? f->fd : fit_add(btf_fd);
	pthread_mutex_unlock(&fits_lock);
	return fd == -1 ? btf_fd : fd;
}

/*
 * Load the program with the BTF btf_fit() gives. Where that fails (out
 * of memory, a kernel that refuses the copy), without the BTF's function
 * and line info, so that every function is verified per call, which every
 * kernel takes (the kernel takes line info only with function info).
 */
static void fit_load(const struct bpf_program *prog,
		     struct bpf_prog_load_opts *opts)
{
	int fd;

	if (opts->prog_btf_fd <= 0 || !opts->func_info_cnt)
		return;
	fd = btf_fit(opts->prog_btf_fd);
	if (fd >= 0) {
		if (fd != (int)opts->prog_btf_fd)
			pr_debug("program '%s': loaded with a copy of its BTF in which usdt.bpf.h's functions are static (the kernel would not take their context argument)\n",
				 bpf_program__name(prog));
		opts->prog_btf_fd = fd;
		return;
	}
	pr_warn("program '%s': loaded without its BTF function and line info, so that the kernel verifies usdt.bpf.h's functions per call (it would not take their context argument, and its BTF with them static could not be made: %s)\n",
		bpf_program__name(prog), usdt__errstr(fd));
	opts->func_info = NULL;
	opts->func_info_cnt = opts->func_info_rec_size = 0;
	opts->line_info = NULL;
	opts->line_info_cnt = opts->line_info_rec_size = 0;
}

/*
 * At load: the link kind the program will take. A program that a manager
 * prepared before load (src/store/store.c) keeps the type the manager set.
 * Every program of ours loads with the function info the kernel takes.
 */
static int handler_prepare(struct bpf_program *prog,
			   struct bpf_prog_load_opts *opts, long cookie)
{
	enum bpf_attach_type multi =
		(enum bpf_attach_type)USDT__TRACE_UPROBE_MULTI;
	struct prog_maps pm;
	bool want;
	int err;

	(void)cookie;
	err = prog_maps(prog, &pm);
	if (err) {
		pr_warn("program '%s': cannot read its maps: %s\n",
			bpf_program__name(prog), usdt__errstr(err));
		return err;
	}
	/* Any program of our header's, whichever of its maps it names (one
	 * may read its storage only): fit_load() looks for the functions. */
	if (!pm.libbpf_hdr)
		fit_load(prog, opts);
	if (usdt__prog_manager(prog))
		return 0;
	want = pm.libbpf_hdr ? libbpf_uses_multi() :
			       usdt__features()->uprobe_multi;
	if (want) {
		opts->expected_attach_type = multi;
		return bpf_program__set_expected_attach_type(prog, multi);
	}
	return 0;
}

/*
 * Split "PATH:PROVIDER:NAME" into buf (PATH may hold ':'; the provider and
 * the name may not, as in sys/sdt.h). 0, or -EINVAL.
 */
int usdt__split_target(const char *target, char *buf, size_t size,
		       const char **path, const char **provider,
		       const char **name)
{
	char *c1, *c2;

	if ((size_t)snprintf(buf, size, "%s", target) >= size)
		return -EINVAL;
	c2 = strrchr(buf, ':');
	if (!c2)
		return -EINVAL;
	*c2 = '\0';
	c1 = strrchr(buf, ':');
	if (!c1)
		return -EINVAL;
	*c1 = '\0';
	*path = buf;
	*provider = c1 + 1;
	*name = c2 + 1;
	return **path && **provider && **name ? 0 : -EINVAL;
}

/* Auto-attach: SEC("usdt/PATH:PROVIDER:NAME"); a bare SEC("usdt") is
 * attached by the program's code, as with libbpf. */
static int handler_attach(const struct bpf_program *prog, long cookie,
			  struct bpf_link **link)
{
	const char *sec = bpf_program__section_name(prog);
	const char *target = strchr(sec, '/');
	const char *path, *provider, *name;
	char buf[4096 + 512];

	(void)cookie;
	*link = NULL;
	if (!target)
		return 0;
	if (usdt__split_target(target + 1, buf, sizeof(buf), &path, &provider,
			       &name)) {
		pr_warn("program '%s': section '%s' is not usdt/PATH:PROVIDER:NAME\n",
			bpf_program__name(prog), sec);
		return -EINVAL;
	}
	*link = usdt_program__attach(prog, -1, path, provider, name, NULL);
	return *link ? 0 : -errno;
}

static int handler_ids[2];

__attribute__((constructor)) static void handler_register(void)
{
	static const char *const secs[2] = { "usdt+", "usdt.s+" };
	int i;

	for (i = 0; i < 2; i++) {
		LIBBPF_OPTS(libbpf_prog_handler_opts, ho, .cookie = i,
			    .prog_setup_fn = handler_setup,
			    .prog_prepare_load_fn = handler_prepare,
			    .prog_attach_fn = handler_attach);

		handler_ids[i] =
			libbpf_register_prog_handler(secs[i],
						     BPF_PROG_TYPE_KPROBE, 0,
						     &ho);
	}
	usdt__handler_active = handler_ids[0] > 0 && handler_ids[1] > 0;
}

__attribute__((destructor)) static void handler_unregister(void)
{
	int i;

	for (i = 0; i < 2; i++)
		if (handler_ids[i] > 0)
			libbpf_unregister_prog_handler(handler_ids[i]);
}

/* Referenced by include/usdt.h, so that a static link keeps this file. */
int usdt__handler_anchor;
