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
 * Specs live in an array of maps (bpf/usdt_spec.h): chunks of 256 specs,
 * mmapable arrays that chunks.c creates when the first ID in them is
 * handed out and writes in place, so an object attaching a few probes
 * holds one chunk and one attaching 65536 distinct specs needs no option.
 * Many call sites share one spec (an inlined probe often compiles to the
 * same operands at each site), so IDs are deduplicated by content,
 * including the user's cookie: identical specs share one ID, counted by
 * reference across every link of this manager. A hash of the content
 * (its buckets doubling as live IDs grow) finds an existing ID in O(1).
 * When the last reference goes, the spec is zeroed (a stale cookie then
 * reads as "no spec") and the ID is pushed on a free list, which is popped
 * before any never-used ID, so live IDs stay packed at the bottom. The
 * free list has room for every ID of every chunk, and zeroing is a store
 * into the mapping: giving an ID back cannot fail. Past the object's limit
 * (the outer array's size) or usdt_manager_opts.max_specs: -E2BIG, with
 * nothing taken. One manager per object: a chunk already in the outer
 * array belongs to another manager, and taking its place is refused
 * (-EBUSY).
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
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "reader/arch_ops.h"
#include "base/hash.h"
#include "store/store.h"

/* ---------------------------------------------------------------------- */
/* Spec IDs                                                               */

static uint32_t spec_hash(const struct usdt_spec *spec)
{
	return usdt__hash_bytes(spec, sizeof(*spec));
}

static struct usdt__spec_aux *spec_aux(const struct usdt_manager *man,
				       uint32_t id)
{
	return usdt__chunks_aux(&man->specs, id);
}

/*
 * Twice the buckets when live IDs reach half their number, so that chains
 * stay short however many specs come. Without memory for it, the chains
 * just get longer.
 */
static void buckets_grow(struct usdt_manager *man)
{
	uint32_t n = man->bucket_cnt ? man->bucket_cnt * 2 : 64, i, h;
	int32_t *b;

	if (man->bucket_cnt && man->specs.live_cnt < man->bucket_cnt / 2)
		return;
	b = malloc(n * sizeof(*b));
	if (!b)
		return;
	for (i = 0; i < n; i++)
		b[i] = -1;
	for (i = 0; i < man->specs.next; i++) {
		struct usdt__spec_aux *aux = spec_aux(man, i);

		if (!aux->refcnt)
			continue;
		h = aux->hash & (n - 1);
		aux->next = b[h];
		b[h] = (int32_t)i;
	}
	free(man->buckets);
	man->buckets = b;
	man->bucket_cnt = n;
}

/* At the first attach, once the maps exist: the chunks and the hash. */
static int specs_init(struct usdt_manager *man)
{
	int err;

	if (man->specs_map)
		man->specs_outer = usdt__outer_of(man->specs_map);
	err = usdt__chunks_open(&man->specs, &man->specs_outer,
				sizeof(struct usdt_spec), USDT_SPEC_CHUNK,
				sizeof(struct usdt__spec_aux), man->max_specs,
				false);
	if (err)
		return err;
	buckets_grow(man);
	if (!man->buckets) {
		usdt__chunks_close(&man->specs, false);
		return -ENOMEM;
	}
	return 0;
}

int usdt__spec_get(struct usdt_manager *man, const struct usdt_spec *spec)
{
	struct usdt__spec_aux *aux;
	struct usdt_spec old;
	uint32_t hash, h, id;
	int32_t cur;
	int err;

	_Static_assert(sizeof(old) <= USDT__CHUNK_VALUE_MAX, "spec size");
	if (!man->specs.mem && (err = specs_init(man)))
		return err;
	hash = spec_hash(spec);
	h = hash & (man->bucket_cnt - 1);
	for (cur = man->buckets[h]; cur >= 0; cur = aux->next) {
		aux = spec_aux(man, (uint32_t)cur);
		if (aux->hash == hash &&
		    !usdt__chunks_read(&man->specs, (uint32_t)cur, &old) &&
		    !memcmp(&old, spec, sizeof(*spec))) {
			aux->refcnt++;
			return cur;
		}
	}

	err = usdt__chunks_take(&man->specs, &id);
	if (err)
		return err;
	/* No uprobe refers to the ID yet. */
	err = usdt__chunks_write(&man->specs, id, spec);
	if (err) {
		usdt__chunks_give(&man->specs, id);
		return err;
	}
	aux = spec_aux(man, id);
	aux->refcnt = 1;
	aux->hash = hash;
	aux->next = man->buckets[h];
	man->buckets[h] = (int32_t)id;
	buckets_grow(man);
	return (int)id;
}

bool usdt__spec_room(struct usdt_manager *man, size_t n)
{
	if (man->specless || n == 0)
		return true;
	if (!man->specs.mem && specs_init(man))
		return true;	/* usdt__spec_get() says why */
	return usdt__chunks_room_left(&man->specs) >= n;
}

void usdt__spec_reserve(struct usdt_manager *man, size_t n, uint32_t max_new)
{
	if (man->specs.mem)
		usdt__chunks_reserve(&man->specs, n, max_new);
}

int usdt__store_flush(struct usdt_manager *man)
{
	int err = usdt__chunks_flush(&man->specs), e = 0;

	if (man->storage.slots.mem)
		e = usdt__chunks_flush(&man->storage.slots);
	return err ? err : e;
}

int usdt__spec_put(struct usdt_manager *man, int id)
{
	struct usdt__spec_aux *aux;
	int32_t *link;

	if (id < 0 || (uint32_t)id >= man->specs.next)
		return 0;
	aux = spec_aux(man, (uint32_t)id);
	if (!aux->refcnt || --aux->refcnt)
		return 0;
	for (link = &man->buckets[aux->hash & (man->bucket_cnt - 1)];
	     *link >= 0; link = &spec_aux(man, (uint32_t)*link)->next) {
		if (*link == id) {
			*link = aux->next;
			break;
		}
	}
	/* Zeroed (a stale cookie reads "no spec") and freed. */
	usdt__chunks_give(&man->specs, (uint32_t)id);
	return 0;
}

/*
 * The caps, as the object side (src/libbpf/object.c) found them, 0 for
 * none: spec and storage chunks are capped by their outer array's size
 * too. At most 2^30 IP-map entries (default 4 * 65536), which keeps the
 * arithmetic of growing the map in 32 bits.
 */
void usdt__store_caps(struct usdt_manager *man, uint32_t max_specs,
		      uint32_t max_ips, uint32_t max_storage)
{
	man->max_specs = max_specs;
	man->ips.cap = !max_ips ? 4 * 65536 :
		       max_ips > (1U << 30) ? 1U << 30 : max_ips;
	man->storage.cap = max_storage;
}

void usdt__store_move(struct usdt_manager *man, struct usdt_manager *imp)
{
	uint32_t ip_cap = man->ips.cap;

	man->specs_outer = imp->specs_outer;
	man->specs = imp->specs;
	if (man->max_specs && man->specs.cap > man->max_specs)
		man->specs.cap = man->max_specs;
	man->buckets = imp->buckets;
	man->bucket_cnt = imp->bucket_cnt;
	man->live_cnt = imp->live_cnt;
	man->ips = imp->ips;
	man->ips.cap = ip_cap > imp->ips.cnt ? ip_cap : imp->ips.cnt;
	man->pinned_cnt = imp->pinned_cnt;
	/* imp's links are man's now; imp's holder goes with imp. */
	man->refcnt += imp->refcnt - 1;
	free(imp);
}

struct usdt_manager *usdt__manager_implicit(const struct usdt__outer *specs,
					    const struct usdt__outer *ips,
					    uint32_t specs_id)
{
	struct usdt_manager *man = calloc(1, sizeof(*man));

	if (!man)
		return NULL;
	man->refcnt = 1;
	man->owner = getpid();
	man->ips.outer_fd = man->ips.fd = -1;
	man->specs_outer = *specs;
	man->ip_outer = *ips;
	man->specs_id = specs_id;
	man->implicit = true;
	man->ip_map_kept = true;
	usdt__store_caps(man, 0, 0, 0);
	return man;
}

struct usdt_manager *usdt__manager_specless(void)
{
	struct usdt__outer none = { .fd = -1 };
	struct usdt_manager *man = usdt__manager_implicit(&none, &none, 0);

	if (man)
		man->specless = true;
	return man;
}

static void store_release(struct usdt_manager *man)
{
	/* Pinned links go on reading the chunks, and so do the parent's
	 * links after a fork() and the links of libbpf's that an implicit
	 * store served: their maps are no one else's to replace. Nothing
	 * waits for a grace period here (src/store/chunks.c). */
	bool reusable = !man->pinned_cnt && !usdt__manager_forked(man) &&
			!man->implicit;

	usdt__chunks_close(&man->specs, reusable);
	usdt__ipmap_close(&man->ips, reusable);
	usdt__storage_release(&man->storage, reusable);
	free(man->ext);
	free(man->buckets);
	free(man);
}


void usdt__store_get(struct usdt_manager *man)
{
	man->refcnt++;
}

void usdt__store_put(struct usdt_manager *man)
{
	if (!--man->refcnt)
		store_release(man);
}
