/* SPDX-License-Identifier: BSD-2-Clause */
/* The spec store (src/store/store.c): spec IDs, the IP map and storage of one
 * BPF object, as the attach engine (src/attach/attach.h) and the faces use it. */
#ifndef __LIBUSDT_STORE_H
#define __LIBUSDT_STORE_H

#include <unistd.h>

#include <bpf/libbpf.h>

#include "base/base.h"
#include "store/chunks.h"
#include "kernel/kernel.h"
#include "store/ipmap.h"
#include "store/storage.h"
#include "../../bpf/usdt_spec.h"

#define USDT__FILE_CACHE 4

/*
 * One spec ID's bookkeeping (the store's aux[]; its spec is in the chunk).
 * Invariant: refcnt > 0 iff the ID is live, its spec is in the map and it
 * is on its hash chain (bucket hash & (bucket_cnt - 1)).
 */
struct usdt__spec_aux {
	uint32_t refcnt;
	uint32_t hash;
	int32_t next; /* next live ID on this hash chain, -1 ends */
};

/*
 * The spec store of one BPF object: its spec IDs and their chunks, its IP
 * map and its storage, made by the object's manager (src/libbpf/object.c)
 * or, for an object without one, by the section handler (an implicit
 * store, src/libbpf/progh.c), and held by every link made on it.
 */
struct usdt__store {
	/*
	 * Its holders, each with one reference: its manager, or the section
	 * handler's list of implicit stores, until that lets go; and each
	 * live link made on it, the records of libbpf's links (ext[]) and
	 * the manager's own links included. usdt__store_put() of the last
	 * one releases it.
	 */
	size_t refcnt;
	/* The process that made the store. The maps are shared across
	 * fork() and the kernel links live on in the parent, so a child's
	 * copy only closes and frees, and attaches nothing. */
	pid_t owner;
	/* No manager: the section handler's, for an object without one. */
	bool implicit;
	/* The store of programs that name no spec map (usdt__store_specless()):
	 * no maps, no spec IDs, no IP-map entries, cookies 0. */
	bool specless;
	/* Can the object's programs find specs through the IP map? Not when
	 * the manager loaded them without (src/libbpf/object.c). */
	bool ip_map_kept;
	/* The object's arrays of maps: given when made (implicit), or once
	 * the object is loaded (usdt__store_bind()). */
	struct usdt__outer specs_outer, ip_outer;
	uint32_t specs_id; /* the spec map's kernel ID */
	/* Records of links of libbpf's that the user holds (src/attach/ext.c). */
	struct usdt_link **ext;
	size_t ext_cnt, ext_cap;
	size_t ext_swept; /* ext_cnt after the last sweep */
	/* The files read lately, newest first (src/attach/target.c). */
	struct usdt_file *files[USDT__FILE_CACHE];

	/* Spec IDs: the chunks opened at the first attach, and the
	 * bookkeeping of every ID below specs.next (aux[id]). */
	uint32_t max_specs; /* the cap (opts or the object's), or 0 */
	struct usdt__chunks specs;
	struct usdt__spec_aux *aux;
	uint32_t aux_cap;
	int32_t *buckets;    /* hash of spec content -> first ID */
	uint32_t bucket_cnt; /* a power of two */
	uint32_t live_cnt;

	struct usdt__ipmap ips;
	struct usdt__storage storage;

	size_t pinned_cnt; /* links pinned: their maps stay */
};

/*
 * What one link holds in its store: a spec ID for each of its sites, its
 * storage slots and its IP-map keys. The arrays are the holder's, with
 * room for every site it may take (slots: one, or one per site; NULL
 * without storage; ips NULL without IP-map entries).
 * Invariant: each of ids[0..id_cnt) holds one reference, slots[0..slot_cnt)
 * are taken, ips[0..ip_cnt) are keys in the IP map.
 */
struct usdt__hold {
	int *ids;
	uint32_t *slots;
	long *ips;
	uint32_t id_cnt, slot_cnt, ip_cnt;
};

/* How one attach's sites are taken (usdt__store_hold()). */
struct usdt__take {
	const char *provider, *name; /* for messages */
	const void *storage;	     /* a new slot's initial value, or NULL */
	bool per_site;		     /* a slot for each site, not one in all */
	bool use_ip;		     /* IP-map entries, not cookies */
};

/*
 * Before n of t's sites are taken: room for their IP-map entries (-E2BIG
 * past the cap) and, best effort, chunks for their specs: where the kernel
 * puts a batch into an array of maps with one wait (Linux 6.8) and n do
 * not fit the chunks there are, room for want (the file's sites, at least
 * n), so that the file's later attaches need no new chunk
 * (usdt__chunks_reserve()). New chunks take at most half the descriptors
 * that the soft RLIMIT_NOFILE leaves once the sites' own (site_fds) are
 * open. 0 or -errno, said.
 */
int usdt__store_reserve(struct usdt__store *st, const struct usdt__take *t,
			size_t n, size_t want, uint64_t site_fds);
/*
 * One site into hold: a reference on the ID of its spec, its storage slot
 * (the holder's first, unless per site) and, with t->use_ip, the IP-map
 * entry of its run-time address ip. *cookie is what its uprobe carries:
 * the spec ID + 1 and the slot (bpf/usdt_spec.h), 0 with the IP map or no
 * spec at all (a specless store takes nothing). On error, said, what was
 * taken stays in hold for usdt__store_drop().
 */
int usdt__store_hold(struct usdt__store *st, const struct usdt__take *t,
		     struct usdt__hold *hold, const struct usdt_spec *spec,
		     long ip, uint64_t *cookie);
/*
 * Everything in hold given back, hold emptied: its IP-map entries deleted,
 * its spec references dropped (IDs no one holds are zeroed in the maps, a
 * batch per chunk) and its slots freed. A forked copy of the store gives
 * nothing back: the parent's links still read it all. The first error.
 */
int usdt__store_drop(struct usdt__store *st, struct usdt__hold *hold);

/*
 * Take a reference on the ID of a spec with this content, allocating one
 * (and writing the map) if none exists. Returns the ID, or -E2BIG past the
 * cap, or the error of creating a chunk; nothing is taken on error.
 */
int usdt__spec_get(struct usdt__store *st, const struct usdt_spec *spec);
/* The new chunks of specs and storage into their outer maps, and the
 * specs written: one batch each (usdt__chunks_flush()). */
int usdt__store_flush(struct usdt__store *st);
/* Drop a reference; at zero the map entry is zeroed and the ID freed.
 * Returns 0. */
int usdt__spec_put(struct usdt__store *st, int id);
/* Is this a copy of the manager in a child of its owner? */
static inline bool usdt__store_forked(const struct usdt__store *st)
{
	return getpid() != st->owner;
}

/* A store, holding one reference (its maker's), with no maps yet; NULL
 * when out of memory. */
struct usdt__store *usdt__store_new(void);
/* An implicit store of the maps specs and ips (see struct usdt__store);
 * NULL when out of memory. Its holder's reference is the caller's, put
 * after its records are dropped (usdt__ext_drop()). */
struct usdt__store *usdt__store_implicit(const struct usdt__outer *specs,
					 const struct usdt__outer *ips,
					 uint32_t specs_id);
/* The implicit store of programs that read no spec (src/libbpf/progh.c):
 * no maps; NULL when out of memory. */
struct usdt__store *usdt__store_specless(void);
/* The outer maps of a loaded object, for a store made before load. */
void usdt__store_bind(struct usdt__store *st, const struct usdt__outer *specs,
		      const struct usdt__outer *ips);
/* imp, an implicit store of the object that fresh, its manager's new
 * store, serves, takes fresh's caps and storage and is its manager's
 * from now on; fresh, which no link holds, is released. Returns imp. */
struct usdt__store *usdt__store_adopt(struct usdt__store *fresh,
				      struct usdt__store *imp);
/* A reference on the store more (a link made on it), or one less: the
 * last put releases it, closing its chunks, IP map and storage (kept in
 * the maps where pinned links or a parent's links still read them) and
 * freeing its memory. */
void usdt__store_get(struct usdt__store *st);
void usdt__store_put(struct usdt__store *st);

/* The caps (0: none; src/libbpf/object.c finds them). */
void usdt__store_caps(struct usdt__store *st, uint32_t max_specs,
		      uint32_t max_ips, uint32_t max_storage);

#endif /* __LIBUSDT_STORE_H */
