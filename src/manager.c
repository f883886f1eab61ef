// SPDX-License-Identifier: BSD-2-Clause
/*
 * The manager's face: usdt_manager__new() and usdt_manager__free() around
 * the store (src/store/store.c), and the programs in SEC("usdt/PATH:PROVIDER:
 * NAME"), libbpf's auto-attach syntax, of an object that has a manager:
 * usdt_manager__attach_all() attaches them, the manager owns those links
 * and usdt_manager__free() destroys them. Their auto-attach is turned off,
 * so that the skeleton's __attach() leaves them to the manager; an object
 * without a manager gets them attached by __attach() through libusdt's
 * section handler (src/libbpf/progh.c), into skel->links.
 */
#include <limits.h>

#include "attach/attach.h"
#include "libbpf/libbpf.h"

/* Is prog's section "usdt/..." or "usdt.s/..."? Its target, or NULL. */
static const char *usdt_target(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);

	if (!sec || bpf_program__type(prog) != BPF_PROG_TYPE_KPROBE)
		return NULL;
	if (!strncmp(sec, "usdt/", 5))
		return sec + 5;
	if (!strncmp(sec, "usdt.s/", 7))
		return sec + 7;
	return NULL;
}

static void skel_prepare(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		if (usdt_target(prog))
			bpf_program__set_autoattach(prog, false);
}

static int own_link(struct usdt_manager *man, struct usdt_link *link)
{
	struct usdt_link **v;

	if (man->owned_cnt == man->owned_cap) {
		size_t cap = man->owned_cap ? man->owned_cap * 2 : 8;

		v = usdt__reallocarray(man->owned, cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		man->owned = v;
		man->owned_cap = cap;
	}
	man->owned[man->owned_cnt++] = link;
	return 0;
}

/* Destroy the owned links from index from on, all at once: one by one,
 * the kernel's grace period per link makes a thousand take a minute. */
static void drop_owned(struct usdt_manager *man, size_t from)
{
	if (man->owned_cnt > from)
		usdt_links__destroy(man->owned + from, man->owned_cnt - from);
	man->owned_cnt = from;
}

static int attach_one(struct usdt_manager *man, const struct bpf_program *prog,
		      const char *target, pid_t pid,
		      const struct usdt_attach_opts *opts)
{
	const char *path, *provider, *name;
	char buf[PATH_MAX + 256];
	struct usdt_link *link;
	int err;

	if (usdt__split_target(target, buf, sizeof(buf), &path, &provider,
			       &name)) {
		pr_warn("program '%s': section '%s' is not usdt/PATH:PROVIDER:NAME\n",
			bpf_program__name(prog),
			bpf_program__section_name(prog));
		return -EINVAL;
	}
	link = usdt_manager__attach(man, prog, pid, path, provider, name, opts);
	if (!link)
		return -errno;
	err = own_link(man, link);
	if (err)
		usdt_link__destroy(link);
	return err;
}

int usdt_manager__attach_all(struct usdt_manager *man, pid_t pid,
			     const struct usdt_attach_opts *opts)
{
	struct bpf_program *prog;
	const char *target;
	int err, cnt = 0;

	if (!man || pid < -1 || !OPTS_VALID(opts, usdt_attach_opts))
		return usdt__err(-EINVAL);
	/*
	 * Only this function adds owned links, all or none of them: any
	 * means a call already attached every program. Again would run each
	 * twice per hit, and a silent no-op would drop another pid's or
	 * options' request; usdt_manager__attach() attaches more.
	 */
	if (man->owned_cnt) {
		pr_warn("usdt_manager__attach_all(): the programs are already attached\n");
		return usdt__err(-EALREADY);
	}
	bpf_object__for_each_program(prog, man->obj) {
		target = usdt_target(prog);
		if (!target || !bpf_program__autoload(prog))
			continue;
		err = attach_one(man, prog, target, pid, opts);
		if (err) {
			drop_owned(man, 0);
			return usdt__err(err);
		}
		cnt++;
	}
	return cnt;
}

/*
 * Where the only live links left are libbpf's (usdt_program__attach(),
 * records in ext[]), the store becomes the object's implicit one, as if
 * no manager had been made: a later usdt_program__attach() takes the IDs
 * those links do not use (it would find the chunks taken, EBUSY), and the
 * records are swept as before. man is freed. False: man is as it was.
 */
static bool hand_back(struct usdt_manager *man)
{
	struct usdt__store *st = man->store;

	/* ext[] is filled by attaches, which bound the outer maps first. */
	if (!st->ext_cnt || st->refcnt != st->ext_cnt + 1 ||
	    usdt__store_forked(st))
		return false;
	usdt__file_cache_clear(st);
	usdt__manager_unface(man);
	/* The store is the object's implicit one now; the manager's
	 * reference, the list's. */
	st->implicit = true;
	st->ip_map_kept = true;
	man->store = NULL;
	if (usdt__store_give(st)) {
		/* No room in the list: kept in the maps, as for a pinned
		 * link. */
		usdt__ext_drop(st);
		usdt__store_put(st);
	}
	free(man->owned);
	free(man);
	return true;
}

/* True when man is gone with its store given back (hand_back()). */
static bool skel_release(struct usdt_manager *man)
{
	struct usdt__store *st = man->store;

	drop_owned(man, 0);
	free(man->owned);
	man->owned = NULL;
	man->owned_cap = 0;
	/* The records of libbpf's links (usdt_program__attach()): what the
	 * live ones use stays in the maps, as for a pinned link. */
	usdt__ext_sweep(st);
	if (hand_back(man))
		return true;
	if (st->ext_cnt)
		st->pinned_cnt++;
	usdt__ext_drop(st);
	return false;
}

struct usdt_manager *usdt_manager__new(struct bpf_object *obj,
				       const struct usdt_manager_opts *opts)
{
	struct usdt_manager *man = usdt__manager_new(obj, opts);
	struct usdt__store *imp;

	if (!man)
		return NULL;
	skel_prepare(obj);
	/* Loaded: what __attach() or usdt_program__attach() attached
	 * through the object's implicit store is this manager's now. */
	imp = man->store->specs_id ? usdt__store_take(man->store->specs_id) :
				     NULL;
	if (imp)
		man->store = usdt__store_adopt(man->store, imp);
	return man;
}

/*
 * The links of usdt_manager__attach_all() go first. Links the user still
 * holds keep the bookkeeping they need, and the manager's own map
 * descriptors: the last one frees it. Neither touches the bpf_object
 * again, which the user may close at once.
 */
void usdt_manager__free(struct usdt_manager *man)
{
	if (!man || skel_release(man))
		return;
	usdt__file_cache_clear(man->store);
	usdt__manager_retire(man);
}
