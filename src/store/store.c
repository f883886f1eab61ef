// SPDX-License-Identifier: BSD-2-Clause
/*
 * The spec store: one per bpf_object, its manager's (src/manager.c) or,
 * for an object without one, an implicit store (src/libbpf/progh.c).
 *
 * Theory of operation
 * -------------------
 * A USDT probe is a nop in the program plus a note in .note.stapsdt that
 * gives the nop's address, an optional semaphore (a counter the program
 * tests before computing expensive arguments; the kernel raises it for us
 * through the uprobe's ref_ctr_offset), and where each argument lives at
 * the nop: "-4@%edi 8@-16(%rbp)". The note reader (noteidx.c) and the arch
 * parsers (arch/) turn that into one struct usdt_spec per call site: the
 * BPF side (bpf/usdt.bpf.h) can read every argument from it and the
 * program's registers.
 *
 * Specs live in a head and an array of maps (bpf/usdt_spec.h): IDs below
 * the head's size (1024 by default) in a plain array that exists from
 * load, the others in chunks of 256 specs that chunks.c creates when the
 * first ID in them is handed out, so an object attaching a few probes
 * waits for no RCU grace period and one attaching 65536 distinct specs
 * needs no option.
 * Many call sites share one spec (an inlined probe often compiles to the
 * same operands at each site), so IDs are deduplicated by content,
 * including the user's cookie: identical specs share one ID, counted by
 * reference across every link of this manager. A hash of the content
 * (its buckets doubling as live IDs grow) finds an existing ID in O(1).
 * When the last reference goes, the spec is zeroed (a stale cookie then
 * reads as "no spec") and the ID is pushed on a free list, which is popped
 * before any never-used ID, so live IDs stay packed at the bottom. The
 * free list has room for every ID of the head and of every chunk, and
 * zeroing is a write kept for the next flush (chunks.c): giving an ID back
 * cannot fail. Past the object's limit
 * (the head and the outer array's size) or usdt_manager_opts.max_specs:
 * -E2BIG, with nothing taken. One manager per object: a head that holds
 * another store's token belongs to another manager, and taking it is
 * refused (-EBUSY).
 *
 * How the BPF side finds a call site's spec ID: where the kernel gives
 * uprobes a bpf_cookie (5.15), the cookie is ID + 1. Without cookies, or
 * when asked to, the cookie is 0 and an IP map gives the ID from the
 * call site's run-time address; that needs the address the file is mapped
 * at, hence a pid for PIEs and shared libraries. The IP map is a hash
 * that ipmap.c creates at the first such attach and doubles as needed.
 *
 * Kernel links: one uprobe_multi link (6.6) per attach when the program
 * was loaded for it, one perf uprobe per call site otherwise. A
 * uprobe_multi program cannot be attached as a perf uprobe, so a manager
 * created before load decides, for all the object's "usdt" programs.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "reader/reader.h"
#include "base/base.h"
#include "proc/proc.h"
#include "store/store.h"

/* ---------------------------------------------------------------------- */
/* Spec IDs                                                               */

static uint32_t spec_hash(const struct usdt_spec *spec)
{
	return usdt__hash_bytes(spec, sizeof(*spec));
}

static struct usdt__spec_aux *spec_aux(const struct usdt__store *st,
				       uint32_t id)
{
	return &st->aux[id];
}

/* Bookkeeping for the next ID too (specs.next), doubling: what the next
 * usdt__chunks_take() gives has its aux. */
static int aux_room(struct usdt__store *st)
{
	uint32_t n = st->aux_cap ? st->aux_cap * 2 : USDT_SPEC_CHUNK;
	struct usdt__spec_aux *aux;

	if (st->specs.next < st->aux_cap)
		return 0;
	aux = usdt__reallocarray(st->aux, n, sizeof(*aux));
	if (!aux)
		return -ENOMEM;
	memset(aux + st->aux_cap, 0, (size_t)(n - st->aux_cap) * sizeof(*aux));
	st->aux = aux;
	st->aux_cap = n;
	return 0;
}

/*
 * Twice the buckets when live IDs reach half their number, so that chains
 * stay short however many specs come. Without memory for it, the chains
 * just get longer.
 */
static void buckets_grow(struct usdt__store *st)
{
	uint32_t n = st->bucket_cnt ? st->bucket_cnt * 2 : 64, i, h;
	int32_t *b;

	if (st->bucket_cnt && st->specs.live_cnt < st->bucket_cnt / 2)
		return;
	b = malloc(n * sizeof(*b));
	if (!b)
		return;
	for (i = 0; i < n; i++)
		b[i] = -1;
	for (i = 0; i < st->specs.next; i++) {
		struct usdt__spec_aux *aux = spec_aux(st, i);

		if (!aux->refcnt)
			continue;
		h = aux->hash & (n - 1);
		aux->next = b[h];
		b[h] = (int32_t)i;
	}
	free(st->buckets);
	st->buckets = b;
	st->bucket_cnt = n;
}

/* At the first attach, once the maps exist: the chunks and the hash. */
static int specs_init(struct usdt__store *st)
{
	int err;

	err = usdt__chunks_open(&st->specs, &st->specs_outer,
				sizeof(struct usdt_spec), USDT_SPEC_CHUNK,
				st->max_specs, false);
	if (err)
		return err;
	buckets_grow(st);
	if (!st->buckets) {
		usdt__chunks_close(&st->specs, false);
		return -ENOMEM;
	}
	return 0;
}

int usdt__spec_get(struct usdt__store *st, const struct usdt_spec *spec)
{
	struct usdt__spec_aux *aux;
	struct usdt_spec old;
	uint32_t hash, h, id;
	int32_t cur;
	int err;

	_Static_assert(sizeof(old) <= USDT__CHUNK_VALUE_MAX, "spec size");
	if (!st->specs.mem && (err = specs_init(st)))
		return err;
	hash = spec_hash(spec);
	h = hash & (st->bucket_cnt - 1);
	for (cur = st->buckets[h]; cur >= 0; cur = aux->next) {
		aux = spec_aux(st, (uint32_t)cur);
		if (aux->hash == hash &&
		    !usdt__chunks_read(&st->specs, (uint32_t)cur, &old) &&
		    !memcmp(&old, spec, sizeof(*spec))) {
			aux->refcnt++;
			return cur;
		}
	}

	err = aux_room(st);
	if (!err)
		err = usdt__chunks_take(&st->specs, &id);
	if (err)
		return err;
	/* No uprobe refers to the ID yet. */
	err = usdt__chunks_write(&st->specs, id, spec);
	if (err) {
		usdt__chunks_give(&st->specs, id);
		return err;
	}
	aux = spec_aux(st, id);
	aux->refcnt = 1;
	aux->hash = hash;
	aux->next = st->buckets[h];
	st->buckets[h] = (int32_t)id;
	buckets_grow(st);
	return (int)id;
}

/* At most half the descriptors the soft RLIMIT_NOFILE leaves once used
 * more are open: UINT32_MAX where there is no limit or /proc cannot say. */
static uint32_t chunks_fd_room(uint64_t used)
{
	struct rlimit rl;
	uint64_t left;
	long open;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    (open = usdt__open_fds_below(rl.rlim_cur)) < 0)
		return UINT32_MAX;
	left = rl.rlim_cur > (rlim_t)open ? rl.rlim_cur - (rlim_t)open : 0;
	left = left > used ? left - used : 0;
	return left / 2 > UINT32_MAX ? UINT32_MAX : (uint32_t)(left / 2);
}

/* Chunks for n more specs, best effort (usdt__store_reserve()). Before
 * Linux 6.8 a batch into an array of maps waits once per entry: there,
 * chunks are made only as specs need them. */
static void spec_reserve(struct usdt__store *st, size_t n, size_t want,
			 uint64_t site_fds)
{
	if (st->specless || !n || !usdt__features()->outer_batch_one_wait)
		return;
	if (!st->specs.mem && specs_init(st))
		return; /* usdt__spec_get() says why */
	if (usdt__chunks_room_left(&st->specs) >= n)
		return;
	usdt__chunks_reserve(&st->specs, want > n ? want : n,
			     chunks_fd_room(site_fds));
}

/* ---------------------------------------------------------------------- */
/* What links hold                                                        */

int usdt__store_reserve(struct usdt__store *st, const struct usdt__take *t,
			size_t n, size_t want, uint64_t site_fds)
{
	uint32_t n32 = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	int err;

	if (t->use_ip &&
	    (err = usdt__ipmap_reserve(&st->ips, st->ip_outer.fd, n32))) {
		if (err == -E2BIG)
			pr_warn("%s:%s: no room for %zu more IP-map entries (%u in use, at most %u: raise usdt_manager_opts.max_ips or USDT_MAX_IP_CNT)\n",
				t->provider, t->name, n, st->ips.cnt,
				st->ips.cap);
		return err;
	}
	spec_reserve(st, n, want, site_fds);
	return 0;
}

/* The holder's slot for its next site + 1 in *slot1 (0: no storage): a
 * new one for its first site, or for each where storage is per site. */
static int take_slot(struct usdt__store *st, const struct usdt__take *t,
		     struct usdt__hold *hold, uint32_t *slot1)
{
	int err;

	*slot1 = 0;
	if (!t->storage)
		return 0;
	if (hold->slot_cnt && !t->per_site) {
		*slot1 = hold->slots[0] + 1;
		return 0;
	}
	err = usdt__storage_get(&st->storage, t->storage,
				&hold->slots[hold->slot_cnt]);
	if (err) {
		if (err == -E2BIG)
			pr_warn("%s:%s: out of storage slots (%u in use; raise usdt_manager_opts.max_storage or USDT_MAX_STORAGE_CNT)\n",
				t->provider, t->name,
				st->storage.slots.live_cnt);
		return err;
	}
	*slot1 = hold->slots[hold->slot_cnt++] + 1;
	return 0;
}

/* The IP-map entry key -> val, into hold. */
static int take_ip(struct usdt__store *st, const struct usdt__take *t,
		   struct usdt__hold *hold, long key,
		   const struct usdt_ip_val *val)
{
	int err = usdt__ipmap_add(&st->ips, st->ip_outer.fd, key, val);

	if (err) {
		pr_warn("%s:%s: cannot add IP 0x%lx to the IP map: %s%s\n",
			t->provider, t->name, key, usdt__errstr(err),
			err == -EEXIST ?
				" (the site is already attached in IP-map mode)" :
			err == -E2BIG ?
				" (at its limit: raise usdt_manager_opts.max_ips or USDT_MAX_IP_CNT)" :
				"");
		return err;
	}
	hold->ips[hold->ip_cnt++] = key;
	return 0;
}

int usdt__store_hold(struct usdt__store *st, const struct usdt__take *t,
		     struct usdt__hold *hold, const struct usdt_spec *spec,
		     long ip, uint64_t *cookie)
{
	struct usdt_ip_val val;
	int id, err;

	*cookie = 0;
	if (st->specless)
		return 0; /* no spec, no slot: cookie 0 */
	id = usdt__spec_get(st, spec);
	if (id < 0) {
		if (id == -E2BIG)
			pr_warn("%s:%s: out of spec IDs (%u in use; raise usdt_manager_opts.max_specs or USDT_MAX_SPEC_CNT)\n",
				t->provider, t->name, st->specs.live_cnt);
		return id;
	}
	hold->ids[hold->id_cnt++] = id;
	err = take_slot(st, t, hold, &val.slot);
	if (err)
		return err;
	val.spec_id = (uint32_t)id;
	if (t->use_ip)
		return take_ip(st, t, hold, ip, &val);
	*cookie = ((uint64_t)val.spec_id + 1) |
		  (uint64_t)val.slot << USDT_COOKIE_SLOT_SHIFT;
	return 0;
}

int usdt__store_drop(struct usdt__store *st, struct usdt__hold *hold)
{
	int err = 0, e;
	uint32_t i;

	if (usdt__store_forked(st))
		hold->ip_cnt = hold->id_cnt = hold->slot_cnt = 0;
	for (i = 0; i < hold->ip_cnt; i++) {
		e = usdt__ipmap_del(&st->ips, hold->ips[i]);
		if (!e)
			continue;
		err = err ? err : e;
		pr_warn("cannot delete IP-map entry 0x%lx: %s\n", hold->ips[i],
			usdt__errstr(e));
	}
	/* Last first: the free list is a stack, so the lowest IDs end up
	 * on top and are reused first. */
	for (i = hold->id_cnt; i-- > 0;) {
		e = usdt__spec_put(st, hold->ids[i]);
		err = err ? err : e;
	}
	/* The specs given back are zeroed, a batch per chunk. */
	if (hold->id_cnt)
		(void)usdt__chunks_flush_writes(&st->specs);
	for (i = hold->slot_cnt; i-- > 0;)
		usdt__storage_put(&st->storage, hold->slots[i]);
	hold->ip_cnt = hold->id_cnt = hold->slot_cnt = 0;
	return err;
}

int usdt__store_flush(struct usdt__store *st)
{
	int err = usdt__chunks_flush(&st->specs), e = 0;

	if (st->storage.slots.mem)
		e = usdt__chunks_flush(&st->storage.slots);
	return err ? err : e;
}

int usdt__spec_put(struct usdt__store *st, int id)
{
	struct usdt__spec_aux *aux;
	int32_t *link;

	if (id < 0 || (uint32_t)id >= st->specs.next)
		return 0;
	aux = spec_aux(st, (uint32_t)id);
	if (!aux->refcnt || --aux->refcnt)
		return 0;
	for (link = &st->buckets[aux->hash & (st->bucket_cnt - 1)]; *link >= 0;
	     link = &spec_aux(st, (uint32_t)*link)->next) {
		if (*link == id) {
			*link = aux->next;
			break;
		}
	}
	/* Zeroed (a stale cookie reads "no spec") and freed. */
	usdt__chunks_give(&st->specs, (uint32_t)id);
	memset(aux, 0, sizeof(*aux));
	return 0;
}

/*
 * The caps, as the object side (src/libbpf/object.c) found them, 0 for
 * none: spec and storage chunks are capped by their outer array's size
 * too. At most 2^30 IP-map entries (default 4 * 65536), which keeps the
 * arithmetic of growing the map in 32 bits.
 */
void usdt__store_caps(struct usdt__store *st, uint32_t max_specs,
		      uint32_t max_ips, uint32_t max_storage)
{
	st->max_specs = max_specs;
	st->ips.cap = !max_ips		   ? 4 * 65536 :
		      max_ips > (1U << 30) ? 1U << 30 :
					     max_ips;
	st->storage.cap = max_storage;
}

struct usdt__store *usdt__store_adopt(struct usdt__store *fresh,
				      struct usdt__store *imp)
{
	uint32_t ip_cap = fresh->ips.cap;

	imp->implicit = false;
	imp->max_specs = fresh->max_specs;
	if (imp->max_specs && imp->specs.cap > imp->max_specs)
		imp->specs.cap = imp->max_specs;
	imp->ips.cap = ip_cap > imp->ips.cnt ? ip_cap : imp->ips.cnt;
	imp->ip_map_kept = fresh->ip_map_kept;
	/* An implicit store has no storage: its manager's goes with it. */
	imp->storage = fresh->storage;
	memset(&fresh->storage, 0, sizeof(fresh->storage));
	usdt__store_put(fresh);
	return imp;
}

struct usdt__store *usdt__store_new(void)
{
	struct usdt__store *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->refcnt = 1;
	st->owner = getpid();
	st->ips.outer_fd = st->ips.fd = -1;
	st->specs_outer.fd = st->ip_outer.fd = st->storage.outer.fd = -1;
	return st;
}

void usdt__store_bind(struct usdt__store *st, const struct usdt__outer *specs,
		      const struct usdt__outer *ips)
{
	st->specs_outer = *specs;
	st->ip_outer = *ips;
}

struct usdt__store *usdt__store_implicit(const struct usdt__outer *specs,
					 const struct usdt__outer *ips,
					 uint32_t specs_id)
{
	struct usdt__store *st = usdt__store_new();

	if (!st)
		return NULL;
	st->specs_outer = *specs;
	st->ip_outer = *ips;
	st->specs_id = specs_id;
	st->implicit = true;
	st->ip_map_kept = true;
	usdt__store_caps(st, 0, 0, 0);
	return st;
}

struct usdt__store *usdt__store_specless(void)
{
	struct usdt__outer none = { .fd = -1 };
	struct usdt__store *st = usdt__store_implicit(&none, &none, 0);

	if (st)
		st->specless = true;
	return st;
}

static void store_release(struct usdt__store *st)
{
	/* Pinned links go on reading the chunks, and so do the parent's
	 * links after a fork() and the links of libbpf's that an implicit
	 * store served: their maps are no one else's to replace. Nothing
	 * waits for a grace period here (src/store/chunks.c). */
	bool reusable =
		!st->pinned_cnt && !usdt__store_forked(st) && !st->implicit;

	usdt__chunks_close(&st->specs, reusable);
	usdt__ipmap_close(&st->ips, reusable);
	usdt__storage_release(&st->storage, reusable);
	for (size_t i = 0; i < USDT__ARRAY_SIZE(st->files); i++)
		usdt_file__close(st->files[i]);
	free(st->ext);
	free(st->buckets);
	free(st->aux);
	free(st);
}

void usdt__store_get(struct usdt__store *st)
{
	st->refcnt++;
}

void usdt__store_put(struct usdt__store *st)
{
	if (!--st->refcnt)
		store_release(st);
}
