// SPDX-License-Identifier: BSD-2-Clause
/*
 * The object side of a manager: what libusdt checks in, reads from and
 * sets in a user's bpf_object. Before load, the maps' sizes, the BPF
 * header's .rodata variables and each SEC("usdt") program's link kind;
 * after load, the spec map's ID and which programs are the manager's. The
 * store (src/store/store.c) is handed what it needs from here, its caps
 * and whether the IP-map path was kept, and reads no object itself.
 */
#include <pthread.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "reader/reader.h"
#include "libbpf/object.h"

/* SEC("usdt"), SEC("usdt/..."), and the same sleepable: "usdt.s". */
static bool is_usdt_prog(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);

	if (bpf_program__type(prog) != BPF_PROG_TYPE_KPROBE || !sec ||
	    strncmp(sec, "usdt", 4))
		return false;
	sec += 4;
	if (!strncmp(sec, ".s", 2))
		sec += 2;
	return !*sec || *sec == '/';
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

/* The value of the BPF header's .rodata variable name. */
static int rodata_u32(struct bpf_object *obj, const char *name, uint32_t *v)
{
	struct bpf_map *map;
	size_t off, size;

	if (rodata_var(obj, name, &map, &off))
		return -ENOENT;
	memcpy(v, (const char *)bpf_map__initial_value(map, &size) + off,
	       sizeof(*v));
	return 0;
}

/*
 * The maps must be those of this layout: a head of specs, one entry more
 * than usdt__spec_head_cnt says, and arrays of maps, chunks of
 * USDT_SPEC_CHUNK specs (an object whose header was edited, or a
 * hand-written one, could say layout 7 and have other maps).
 */
static int check_maps(struct usdt_manager *man)
{
	struct btf *btf = bpf_object__btf(man->obj);
	uint32_t per = 0, sz = 0, ip_per, ip_sz, head_cnt = 0;

	if (!man->spec_head ||
	    bpf_map__type(man->spec_head) != BPF_MAP_TYPE_ARRAY ||
	    bpf_map__value_size(man->spec_head) != sizeof(struct usdt_spec) ||
	    rodata_u32(man->obj, "usdt__spec_head_cnt", &head_cnt) ||
	    bpf_map__max_entries(man->spec_head) != head_cnt + 1 ||
	    bpf_map__type(man->specs_map) != BPF_MAP_TYPE_ARRAY_OF_MAPS ||
	    bpf_map__type(man->ip_map) != BPF_MAP_TYPE_ARRAY_OF_MAPS ||
	    usdt__inner_def(btf, "usdt__specs", &per, &sz) ||
	    usdt__inner_def(btf, "usdt__ip2spec", &ip_per, &ip_sz) ||
	    per != USDT_SPEC_CHUNK || sz != sizeof(struct usdt_spec) ||
	    ip_sz != sizeof(struct usdt_ip_val)) {
		pr_warn("BPF object '%s': usdt__spec_head/usdt__specs/usdt__ip2spec are not the maps of this libusdt's usdt.bpf.h: rebuild it with that header\n",
			bpf_object__name(man->obj));
		return -EPROTO;
	}
	return 0;
}

/*
 * The object must read specs the way this library writes them: its
 * usdt.bpf.h wrote its layout version into usdt__layout.
 */
static int check_layout(struct usdt_manager *man)
{
	uint32_t layout;

	if (rodata_u32(man->obj, "usdt__layout", &layout)) {
		pr_warn("BPF object '%s' has no usdt__layout: built with another libusdt's usdt.bpf.h? Rebuild it with this one's\n",
			bpf_object__name(man->obj));
		return -EPROTO;
	}
	if (layout != USDT_SPEC_LAYOUT) {
		pr_warn("BPF object '%s' reads spec layout %u, this libusdt writes layout %u: rebuild it with this libusdt's usdt.bpf.h\n",
			bpf_object__name(man->obj), layout, USDT_SPEC_LAYOUT);
		return -EPROTO;
	}
	return check_maps(man);
}

/* A 4-byte .rodata variable of the BPF header and the value to load. */
struct rodata_val {
	const char *name;
	uint32_t val;
};

/*
 * Write the values into .rodata's initial image; variables the object
 * lacks are passed over. 0, or -errno with nothing written.
 */
static int rodata_set(struct usdt_manager *man, const struct rodata_val *vals,
		      size_t n)
{
	struct bpf_map *map = NULL;
	size_t off, size, i;
	const void *init;
	char *data;
	int err;

	for (i = 0; i < n && !map; i++)
		if (rodata_var(man->obj, vals[i].name, &map, &off))
			map = NULL;
	if (!map)
		return 0;
	init = bpf_map__initial_value(map, &size);
	/* libbpf hands out the image read-only: write a copy back. */
	data = malloc(size);
	if (!data)
		return -ENOMEM;
	memcpy(data, init, size);
	for (i = 0; i < n; i++)
		if (!rodata_var(man->obj, vals[i].name, &map, &off))
			memcpy(data + off, &vals[i].val, sizeof(vals[i].val));
	err = bpf_map__set_initial_value(map, data, size);
	if (err)
		pr_warn("cannot set the usdt__ variables in .rodata: %s\n",
			usdt__errstr(err));
	free(data);
	return err;
}

/*
 * Before load: without __TARGET_ARCH_xxx the BPF side learns where the PC
 * is and how big the context is from usdt__ip_off and usdt__ctx_sz. With
 * bpf_cookie and keep_ip_map unset, usdt__ip_map = 0 lets the verifier
 * drop the IP-map path of every program.
 */
static int set_load_vars(struct usdt_manager *man, bool keep_ip_map)
{
	const struct usdt__arch_ops *arch = usdt__arch_host();
	struct rodata_val vals[3];
	size_t n = 0;

	if (arch) {
		vals[n++] = (struct rodata_val){ "usdt__ip_off", arch->ip_off };
		vals[n++] = (struct rodata_val){ "usdt__ctx_sz",
						 arch->pt_regs_size };
	}
	if (usdt__features()->bpf_cookie && !keep_ip_map)
		vals[n++] = (struct rodata_val){ "usdt__ip_map", 0 };
	return rodata_set(man, vals, n);
}

/* Can the object's programs find specs through the IP map? Not when the
 * manager loaded them without (usdt__ip_map = 0 in .rodata): objects
 * without the variable always can, as can those no manager set up. */
static bool ip_map_kept(struct bpf_object *obj)
{
	uint32_t v;

	return rodata_u32(obj, "usdt__ip_map", &v) || v;
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
 * The programs managers prepared, for the section handler (src/libbpf/progh.c),
 * which leaves them as they are at load.
 */
static pthread_mutex_t managed_lock = PTHREAD_MUTEX_INITIALIZER;
static struct managed_prog {
	const struct bpf_program *prog;
	const struct usdt_manager *man;
} * managed;
static size_t managed_cnt, managed_cap;

static int managed_add(const struct usdt_manager *man,
		       const struct bpf_program *prog)
{
	struct managed_prog *v;
	int err = 0;

	pthread_mutex_lock(&managed_lock);
	if (managed_cnt == managed_cap) {
		size_t cap = managed_cap ? managed_cap * 2 : 16;

		v = usdt__reallocarray(managed, cap, sizeof(*v));
		if (v) {
			managed = v;
			managed_cap = cap;
		} else {
			err = -ENOMEM;
		}
	}
	if (!err)
		managed[managed_cnt++] = (struct managed_prog){ prog, man };
	pthread_mutex_unlock(&managed_lock);
	return err;
}

static void managed_drop(const struct usdt_manager *man)
{
	size_t i, n = 0;

	pthread_mutex_lock(&managed_lock);
	for (i = 0; i < managed_cnt; i++)
		if (managed[i].man != man)
			managed[n++] = managed[i];
	managed_cnt = n;
	pthread_mutex_unlock(&managed_lock);
}

struct usdt_manager *usdt__prog_manager(const struct bpf_program *prog)
{
	const struct usdt_manager *man = NULL;
	size_t i;

	pthread_mutex_lock(&managed_lock);
	for (i = 0; i < managed_cnt && !man; i++)
		if (managed[i].prog == prog)
			man = managed[i].man;
	pthread_mutex_unlock(&managed_lock);
	return (struct usdt_manager *)man;
}

bool usdt__handler_active;

/*
 * Before load, choose for each SEC("usdt") program the kind of link it
 * will take: its expected attach type says it at attach time.
 *
 * Each is recorded as managed: libusdt's own section handler (src/libbpf/progh.c)
 * then keeps that type at load. Where that handler is not the program's
 * (another registered "usdt+" first), libbpf's own is, and from 1.3 on it
 * loads every program for uprobe_multi where the kernel has it: per-site
 * uprobes cannot be had then, and are refused here rather than at attach.
 */
static int prepare_progs(struct usdt_manager *man, bool want_multi)
{
	bool multi = want_multi && usdt__features()->uprobe_multi;
	struct bpf_program *prog;
	int err;

	if (!usdt__handler_active && !multi && usdt__features()->uprobe_multi &&
	    libbpf_forces_multi()) {
		pr_warn("per-site uprobes: libbpf %d.%d loads SEC(\"usdt\") programs for uprobe_multi, and libusdt's section handler is not registered\n",
			(int)libbpf_major_version(),
			(int)libbpf_minor_version());
		return -EOPNOTSUPP;
	}
	bpf_object__for_each_program(prog, man->obj) {
		if (!is_usdt_prog(prog))
			continue;
		err = managed_add(man, prog);
		if (!err && multi)
			err = bpf_program__set_expected_attach_type(prog,
								    USDT__TRACE_UPROBE_MULTI);
		if (err)
			return err;
	}
	return 0;
}

/* What the user set, else the object's exact limit (its USDT_MAX_xxx in
 * .rodata), else 0: as many as the outer array holds. */
static uint32_t cap_of(struct usdt_manager *man, uint32_t opt, const char *var)
{
	uint32_t v = opt;

	if (!v && (!man->obj || rodata_u32(man->obj, var, &v)))
		v = 0;
	return v;
}

/* The store's caps (usdt__store_caps()): what the user set, else the
 * object's. */
static void set_caps(struct usdt_manager *man, uint32_t max_specs,
		     uint32_t max_ips, uint32_t max_storage)
{
	usdt__store_caps(man->store, cap_of(man, max_specs, "usdt__max_specs"),
			 cap_of(man, max_ips, "usdt__max_ips"),
			 cap_of(man, max_storage, "usdt__max_storage"));
}

/*
 * Before load: the spec head and the outer arrays just big enough for the
 * caps the user set. A cap below the head shrinks it, and the BPF side's
 * usdt__spec_head_cnt with it; the outer array keeps one chunk (an array
 * has an entry), which the cap leaves unused.
 */
static int size_specs(struct usdt_manager *man, uint32_t max_specs)
{
	uint32_t head = bpf_map__max_entries(man->spec_head) - 1;
	struct rodata_val v = { "usdt__spec_head_cnt", max_specs };
	int err;

	if (!max_specs)
		return 0;
	if (max_specs < head) {
		/* .rodata first: a head smaller than it says is refused by
		 * the next manager (check_maps()), never read wrong. */
		err = rodata_set(man, &v, 1);
		if (!err)
			err = bpf_map__set_max_entries(man->spec_head,
						       max_specs + 1);
		if (err)
			return err;
		head = max_specs;
	}
	return bpf_map__set_max_entries(man->specs_map,
					max_specs > head ?
						(max_specs - head -
						 1) / USDT_SPEC_CHUNK +
							1 :
						1);
}

/*
 * Before load, where this kernel will not take the context argument of
 * the BPF header's functions (no kernel BTF, or another arch's vmlinux.h):
 * those functions, and the object's own that take the context, are made
 * static in the object's BTF (usdt__ctx_funcs_make_static()), so that the
 * kernel verifies them at every call, while the object's other global
 * functions stay global (verified once) and its function and line info
 * stay for verifier messages and `bpftool prog dump`. Per call, the
 * kernel walks what follows the spec lookup once for each map a spec can
 * come from. There the head is given up: it keeps its token entry alone,
 * usdt__spec_head_cnt is 0 (the verifier drops the head's branch, and the
 * work is what it was before the head), and the outer array takes the
 * head's specs back, at the cost of a grace period at the first attach.
 */
static int per_call_prepare(struct usdt_manager *man)
{
	uint32_t head = bpf_map__max_entries(man->spec_head) - 1;
	uint32_t outer = bpf_map__max_entries(man->specs_map);
	struct rodata_val v = { "usdt__spec_head_cnt", 0 };
	int err;

	if (usdt__ctx_funcs_fit(bpf_object__btf(man->obj), usdt__features()))
		return 0;
	usdt__ctx_funcs_make_static(bpf_object__btf(man->obj),
				    usdt__features());
	if (!head)
		return 0;
	err = rodata_set(man, &v, 1);
	if (!err)
		err = bpf_map__set_max_entries(man->spec_head, 1);
	if (!err)
		err = bpf_map__set_max_entries(man->specs_map,
					       outer + (head + USDT_SPEC_CHUNK -
							1) / USDT_SPEC_CHUNK);
	return err;
}

/* Before load: outer arrays just big enough for the caps the user set. */
static int size_maps(struct usdt_manager *man, uint32_t max_specs,
		     uint32_t max_storage)
{
	const struct usdt__storage *st = &man->store->storage;
	int err;

	if ((err = size_specs(man, max_specs)))
		return err;
	if (max_storage && st->per &&
	    (err = bpf_map__set_max_entries(man->storage_map,
					    (max_storage - 1) / st->per + 1)))
		return err;
	return 0;
}

/* A loaded object's programs are the manager's too: usdt_program__attach()
 * of one uses its store (src/libbpf/progh.c). */
static int manage_loaded(struct usdt_manager *man)
{
	struct bpf_program *prog;
	int err;

	bpf_object__for_each_program(prog, man->obj)
		if (is_usdt_prog(prog) && (err = managed_add(man, prog)))
			return err;
	return 0;
}

/* The spec ID of a loaded object's spec map, for usdt__store_take(). */
static int specs_id_of(struct usdt_manager *man)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_map__fd(man->specs_map), &info, &len))
		return -errno;
	man->store->specs_id = info.id;
	return 0;
}

/* obj's storage map (or none), and its chunks' layout for the store. */
static void storage_find(struct usdt_manager *man, struct bpf_object *obj)
{
	struct usdt__storage *st = &man->store->storage;
	struct bpf_map *map =
		bpf_object__find_map_by_name(obj, "usdt__storage");

	man->storage_map = map;
	st->declared = map;
	if (map && (bpf_map__type(map) != BPF_MAP_TYPE_ARRAY_OF_MAPS ||
		    usdt__inner_def(bpf_object__btf(obj), "usdt__storage",
				    &st->per, &st->value_sz)))
		st->per = st->value_sz = 0;
}

struct usdt_manager *usdt__manager_new(struct bpf_object *obj,
				       const struct usdt_manager_opts *opts)
{
	uint32_t max_specs, max_ips, max_storage;
	struct usdt_manager *man;
	bool loaded;
	int err;

	if (!obj || !OPTS_VALID(opts, usdt_manager_opts))
		return usdt__err_ptr(-EINVAL);
	max_specs = OPTS_GET(opts, max_specs, 0);
	max_ips = OPTS_GET(opts, max_ips, 0);
	max_storage = OPTS_GET(opts, max_storage, 0);

	man = calloc(1, sizeof(*man));
	if (man)
		man->store = usdt__store_new();
	if (!man || !man->store) {
		free(man);
		return usdt__err_ptr(-ENOMEM);
	}
	man->obj = obj;
	man->specs_map = bpf_object__find_map_by_name(obj, "usdt__specs");
	man->spec_head = bpf_object__find_map_by_name(obj, "usdt__spec_head");
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
	storage_find(man, obj);
	if (max_storage && !man->storage_map) {
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
	set_caps(man, max_specs, max_ips, max_storage);
	if (loaded) {
		err = manage_loaded(man);
		if (!err)
			err = specs_id_of(man);
		if (err)
			goto err_out;
	} else {
		err = size_maps(man, max_specs, max_storage);
		if (err)
			goto err_out;
		err = set_load_vars(man, OPTS_GET(opts, keep_ip_map, false));
		if (!err)
			err = per_call_prepare(man);
		if (!err)
			err = prepare_progs(man,
					    !OPTS_GET(opts, no_uprobe_multi,
						      false));
		if (err)
			goto err_out;
	}
	man->store->ip_map_kept = ip_map_kept(obj);
	return man;

err_out:
	managed_drop(man);
	usdt__store_put(man->store);
	free(man);
	return usdt__err_ptr(err);
}

void usdt__manager_unface(struct usdt_manager *man)
{
	struct usdt__storage *st = &man->store->storage;

	managed_drop(man);
	/* No live link of the store uses it; an implicit store has none. */
	usdt__storage_release(st, !man->store->pinned_cnt);
	memset(st, 0, sizeof(*st));
}

void usdt__manager_retire(struct usdt_manager *man)
{
	managed_drop(man);
	/* The links left hold the store. */
	usdt__store_put(man->store);
	free(man->owned);
	free(man);
}
