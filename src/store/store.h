/* SPDX-License-Identifier: BSD-2-Clause */
/* The spec store (src/store/store.c): spec IDs, the IP map and storage of one
 * BPF object, as the attach engine (src/attach/attach.h) and the faces use it. */
#ifndef __LIBUSDT_STORE_H
#define __LIBUSDT_STORE_H

#include <unistd.h>

#include <bpf/libbpf.h>

#include "base/internal.h"
#include "store/chunks.h"
#include "kernel/kfeatures.h"
#include "store/ipmap.h"
#include "store/storage.h"
#include "../../bpf/usdt_spec.h"

#define USDT__FILE_CACHE 4

/*
 * One spec ID's bookkeeping, beside its spec in the chunk.
 * Invariant: refcnt > 0 iff the ID is live, its spec is in the map and it
 * is on its hash chain (bucket hash & (bucket_cnt - 1)).
 */
struct usdt__spec_aux {
	uint32_t refcnt;
	uint32_t hash;
	int32_t next;		/* next live ID on this hash chain, -1 ends */
};

struct usdt_manager {
	struct bpf_object *obj;		/* borrowed; NULL: implicit */
	struct bpf_map *specs_map;	/* borrowed from obj */
	struct bpf_map *ip_map;
	/*
	 * An implicit manager (usdt__manager_implicit()) is the spec store
	 * of an object that has no manager of its own, made from its maps'
	 * fds (borrowed, as the object holds them) by usdt_program__attach()
	 * (src/libbpf/progh.c), which also frees it. Its records are links of
	 * libbpf's that the user holds: ext[0..ext_cnt).
	 */
	struct usdt__outer specs_outer, ip_outer;
	uint32_t specs_id;		/* the spec map's kernel ID */
	struct usdt_link **ext;
	size_t ext_cnt, ext_cap;
	size_t ext_swept;		/* ext_cnt after the last sweep */
	bool implicit;
	/* Can the object's programs find specs through the IP map? Not when
	 * the manager loaded them without (src/libbpf/object.c). */
	bool ip_map_kept;
	/* The store of programs that name no spec map (usdt__manager_specless()):
	 * no maps, no spec IDs, no IP-map entries, cookies 0. */
	bool specless;
	/* The files read lately, newest first (see usdt_manager__attach()). */
	struct usdt_file *files[USDT__FILE_CACHE];

	/* Spec IDs: the chunks opened at the first attach. */
	uint32_t max_specs;		/* the cap (opts or the object's), or 0 */
	struct usdt__chunks specs;
	int32_t *buckets;		/* hash of spec content -> first ID */
	uint32_t bucket_cnt;		/* a power of two */
	uint32_t live_cnt;

	struct usdt__ipmap ips;
	struct usdt__storage storage;

	size_t pinned_cnt;		/* links pinned: their maps stay */

/* Links of usdt_manager__attach_all(), destroyed by free. */
	struct usdt_link **owned;
	size_t owned_cnt, owned_cap;

	/*
	 * Its holders, each with one reference: the manager that made it,
	 * or the section handler's list of implicit stores (src/libbpf/
	 * progh.c), until usdt__manager_retire() or that list lets go; and
	 * each live link made on it, the records of libbpf's links (ext[])
	 * and the manager's own links included. usdt__store_put() of the
	 * last one releases it (store.c).
	 */
	size_t refcnt;
	/* The process that made the manager. The maps are shared across
	 * fork() and the kernel links live on in the parent, so a child's
	 * copy only closes and frees, and attaches nothing. */
	pid_t owner;
	bool freed;			/* usdt_manager__free() called: no
					 * more attaches */
};

/*
 * Take a reference on the ID of a spec with this content, allocating one
 * (and writing the map) if none exists. Returns the ID, or -E2BIG past the
 * cap, or the error of creating a chunk; nothing is taken on error.
 */
int usdt__spec_get(struct usdt_manager *man, const struct usdt_spec *spec);
/* Can n more specs be had without a new chunk? (Opens the chunks at the
 * first call; a store of no maps always can.) */
bool usdt__spec_room(struct usdt_manager *man, size_t n);
/* Room for n more specs, best effort, in at most max_new new chunks
 * (usdt__chunks_reserve()). */
void usdt__spec_reserve(struct usdt_manager *man, size_t n, uint32_t max_new);
/* The new chunks of specs and storage into their outer maps, and the
 * specs written: one batch each (usdt__chunks_flush()). */
int usdt__store_flush(struct usdt_manager *man);
/* Drop a reference; at zero the map entry is zeroed and the ID freed.
 * Returns 0. */
int usdt__spec_put(struct usdt_manager *man, int id);
/* The fd of the manager's IP map outer array (the object's, or the one an
 * implicit manager borrows); -1 before the object is loaded. */
static inline int usdt__ip_outer_fd(const struct usdt_manager *man)
{
	return man->ip_map ? bpf_map__fd(man->ip_map) : man->ip_outer.fd;
}

/* Is this a copy of the manager in a child of its owner? */
static inline bool usdt__manager_forked(const struct usdt_manager *man)
{
	return getpid() != man->owner;
}

/* An implicit manager of the maps specs and ips (see struct usdt_manager);
 * NULL when out of memory. Its holder's reference is the caller's, put
 * after its records are dropped (usdt__ext_drop()). */
struct usdt_manager *usdt__manager_implicit(const struct usdt__outer *specs,
					    const struct usdt__outer *ips,
					    uint32_t specs_id);

/* The implicit manager of programs that read no spec (src/libbpf/progh.c): no
 * maps; NULL when out of memory. Released as an implicit one. */
struct usdt_manager *usdt__manager_specless(void);

/* Move imp's store (chunks, spec IDs, IP map, counts) into man, a
 * manager of the same loaded object, and free imp (usdt__manager_adopt()). */
void usdt__store_move(struct usdt_manager *man, struct usdt_manager *imp);
/* A reference on the store more (a link made on it), or one less: the
 * last put releases it, closing its chunks, IP map and storage (kept in
 * the maps where pinned links or a parent's links still read them) and
 * freeing its memory. */
void usdt__store_get(struct usdt_manager *man);
void usdt__store_put(struct usdt_manager *man);

/* The caps (0: none; src/libbpf/object.c finds them). */
void usdt__store_caps(struct usdt_manager *man, uint32_t max_specs,
		      uint32_t max_ips, uint32_t max_storage);

#endif /* __LIBUSDT_STORE_H */
