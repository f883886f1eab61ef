/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal interface between the manager (spec IDs, maps, kernel features)
 * and the attach engine. */
#ifndef __LIBUSDT_MANAGER_H
#define __LIBUSDT_MANAGER_H

#include <unistd.h>

#include <bpf/libbpf.h>

#include "internal.h"
#include "chunks.h"
#include "kfeatures.h"
#include "ipmap.h"
#include "storage.h"
#include "../bpf/usdt_spec.h"

#define USDT__FILE_CACHE 4

/* Can the object's programs find specs through the IP map? Not when the
 * manager loaded them without (usdt__ip_map = 0 in .rodata). */
bool usdt__ip_map_kept(struct usdt_manager *man);

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
	 * (src/progh.c), which also frees it. Its records are links of
	 * libbpf's that the user holds: ext[0..ext_cnt).
	 */
	struct usdt__outer specs_outer, ip_outer;
	uint32_t specs_id;		/* the spec map's kernel ID */
	struct usdt_link **ext;
	size_t ext_cnt, ext_cap;
	size_t ext_swept;		/* ext_cnt after the last sweep */
	bool implicit;
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

	size_t link_cnt;		/* live links, owned ones included */
	/* The process that made the manager. The maps are shared across
	 * fork() and the kernel links live on in the parent, so a child's
	 * copy only closes and frees, and attaches nothing. */
	pid_t owner;
	bool freed;			/* usdt_manager__free() called; the
					 * last link frees the memory */
};

/*
 * Take a reference on the ID of a spec with this content, allocating one
 * (and writing the map) if none exists. Returns the ID, or -E2BIG past the
 * cap, or the error of creating a chunk; nothing is taken on error.
 */
int usdt__spec_get(struct usdt_manager *man, const struct usdt_spec *spec);
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
 * NULL when out of memory. Released by usdt__manager_release() after its
 * records are dropped (usdt__ext_drop()). */
struct usdt_manager *usdt__manager_implicit(const struct usdt__outer *specs,
					    const struct usdt__outer *ips,
					    uint32_t specs_id);

/*
 * Adopting an implicit manager: a manager made for a loaded object (its
 * specs_id set) takes the object's implicit store, if any, out of
 * src/progh.c's list (usdt__store_take(): NULL if none) and over, with
 * its records (usdt__manager_adopt(), src/attach.c), which moves the
 * store itself with usdt__store_move() and frees imp.
 */
struct usdt_manager *usdt__store_take(uint32_t specs_id);
void usdt__manager_adopt(struct usdt_manager *man, struct usdt_manager *imp);
void usdt__store_move(struct usdt_manager *man, struct usdt_manager *imp);

/* Release the memory of a manager already freed by its user. */
void usdt__manager_release(struct usdt_manager *man);
/* Close the files the manager keeps (src/attach.c). */
void usdt__file_cache_clear(struct usdt_manager *man);

/* The store and its checks of obj, for usdt_manager__new() (src/skel.c);
 * NULL and errno on error. */
struct usdt_manager *usdt__manager_new(struct bpf_object *obj,
				       const struct usdt_manager_opts *opts);
/* The user is done with man (usdt_manager__free(), src/skel.c): the
 * memory goes with the last link. */
void usdt__manager_retire(struct usdt_manager *man);
/* Split "PATH:PROVIDER:NAME" into buf (PATH may hold ':'; the provider and
 * the name may not, as in sys/sdt.h). 0, or -EINVAL. */
int usdt__split_target(const char *target, char *buf, size_t size,
		       const char **path, const char **provider,
		       const char **name);
/* Is libusdt libbpf's handler of SEC("usdt") programs (src/progh.c)? */
extern bool usdt__handler_active;
/* The manager that prepared prog for load (its link kind set), or NULL. */
struct usdt_manager *usdt__prog_manager(const struct bpf_program *prog);

/*
 * Links of libbpf's (src/attach.c): attach as usdt_manager__attach() does,
 * into a struct bpf_link of libbpf's that the caller gets and destroys;
 * man keeps the record (its spec IDs and IP-map entries) in man->ext until
 * a sweep finds the kernel link gone. NULL and errno on error.
 */
struct bpf_link *usdt__attach_ext(struct usdt_manager *man,
				  const struct bpf_program *prog, pid_t pid,
				  const char *path, const char *provider,
				  const char *name, uint64_t cookie);
/* Is fd (this process's) still the BPF link (link) or map of that kernel
 * ID? Not once it is closed, or reused for something else. */
bool usdt__fd_is_bpf(int fd, bool link, uint32_t id);
/* Give back what the records of gone kernel links hold. */
void usdt__ext_sweep(struct usdt_manager *man);
/* Free every record, leaving the maps as they are (the object is gone,
 * and live links read them). */
void usdt__ext_drop(struct usdt_manager *man);

/* Where site i of a link has its uprobe (file offset), for tests. */
uint64_t usdt__link_offset(const struct usdt_link *link, size_t i);


#endif /* __LIBUSDT_MANAGER_H */
