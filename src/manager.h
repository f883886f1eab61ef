/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal interface between the manager (spec IDs, maps, kernel features)
 * and the attach engine. */
#ifndef __LIBUSDT_MANAGER_H
#define __LIBUSDT_MANAGER_H

#include <bpf/libbpf.h>

#include "internal.h"

#define USDT__FILE_CACHE 4

/* What the running kernel can do; probed once per process. */
struct usdt__features {
	bool bpf_cookie;	/* bpf_get_attach_cookie() for uprobes */
	bool uprobe_multi;	/* BPF_TRACE_UPROBE_MULTI links */
	bool ref_ctr;		/* uprobe ref_ctr_offset (semaphores) */
	bool uprobe_syscall;	/* x86 optimized (nop5) uprobes */
	/* The struct a kprobe program's context is to the kernel (what its
	 * bpf_user_pt_regs_t stands for: "pt_regs" on x86, "user_pt_regs"
	 * on arm64, "" on s390x); ctx_known false without kernel BTF. */
	bool ctx_known;
	char ctx_name[64];
	bool ctx_typedef_ok;	/* bpf_user_pt_regs_t is the context by name */
};

const struct usdt__features *usdt__features(void);

/*
 * The name of the struct (or union) the typedef bpf_user_pt_regs_t stands
 * for, from the BTF file at path (src/kbtf.c: read through a small buffer,
 * never loaded whole), into buf ("" for an anonymous one). Returns 0,
 * -ESRCH (no such typedef, or it leads elsewhere), -E2BIG (buf too
 * small), -ENOTSUP (not native BTF, or a kind this reader does not know),
 * -ENOMEM, or the error of opening or reading the file.
 */
int usdt__btf_ctx_name(const char *path, char *buf, size_t size);

/*
 * One spec ID's bookkeeping.
 * Invariant: refcnt > 0 iff the ID is live, its spec is in the map and it
 * is on its hash chain; a dead ID below next_id is on the free list.
 */
struct usdt__slot {
	struct usdt_spec spec;
	uint32_t refcnt;
	int32_t next;		/* next live ID on this hash chain, -1 ends */
};

/*
 * Storage slots (src/storage.c): the object's usdt__storage array, mapped
 * into this process at the first attach with storage (mem != NULL).
 * Invariant: a slot below next is either held by one link, or zero and on
 * the free stack.
 */
struct usdt__storage {
	struct bpf_map *map;	/* borrowed from obj; NULL: none declared */
	int fd;
	void *mem;
	size_t mem_sz;
	uint32_t value_sz, stride, max;
	uint32_t next;		/* slots below were handed out once */
	uint32_t *free;		/* stack, max entries */
	uint32_t free_cnt;
	uint32_t live_cnt;
};

struct usdt_manager {
	struct bpf_object *obj;		/* borrowed */
	struct bpf_map *specs_map;	/* borrowed from obj */
	struct bpf_map *ip_map;
	/* The maps' descriptors, dup()ed at the first attach: what spec IDs
	 * and links use, so that they never reach into obj. */
	int specs_fd;
	int ip_fd;
	/* The files read lately, newest first (see usdt_manager__attach()). */
	struct usdt_file *files[USDT__FILE_CACHE];

	/* Spec IDs; allocated at the first attach, when the map is sized. */
	uint32_t max_specs;
	struct usdt__slot *slots;
	uint32_t next_id;		/* IDs below were handed out once */
	uint32_t *free_ids;		/* stack; reused first */
	uint32_t free_cnt;
	int32_t *buckets;		/* hash of spec content -> first ID */
	uint32_t bucket_cnt;		/* a power of two */
	uint32_t live_cnt;

	struct usdt__storage storage;

	/* Links of usdt_manager__attach_all(), destroyed by free. */
	struct usdt_link **owned;
	size_t owned_cnt, owned_cap;

	size_t link_cnt;		/* live links, owned ones included */
	bool freed;			/* usdt_manager__free() called; the
					 * last link frees the memory */
};

/*
 * Take a reference on the ID of a spec with this content, allocating one
 * (and writing the map) if none exists. Returns the ID, or -E2BIG when the
 * map is full, or the map update's error; nothing is taken on error.
 */
int usdt__spec_get(struct usdt_manager *man, const struct usdt_spec *spec);
/* Drop a reference; at zero the map entry is zeroed and the ID freed.
 * Returns 0, or the error of zeroing the entry (the ID is freed anyway). */
int usdt__spec_put(struct usdt_manager *man, int id);
/* Find the object's storage map (or none), at usdt_manager__new(). */
void usdt__storage_find(struct usdt_manager *man);
/* Check an attach's storage options against the object: 0 or -EINVAL
 * (logged). No storage (init NULL) is fine. */
int usdt__storage_check(const struct usdt_manager *man, const void *init,
			size_t sz, bool per_site);
/* Take a slot and write init (value_sz bytes) into it. -E2BIG when none is
 * left, or the error of mapping the array at the first call. */
int usdt__storage_get(struct usdt_manager *man, const void *init,
		      uint32_t *slot);
/* Zero the slot and free it. */
void usdt__storage_put(struct usdt_manager *man, uint32_t slot);
void *usdt__storage_at(const struct usdt__storage *st, uint32_t slot);
void usdt__storage_release(struct usdt__storage *st);

/* Release the memory of a manager already freed by its user. */
void usdt__manager_release(struct usdt_manager *man);
void usdt__manager_close_maps(struct usdt_manager *man);
/* Close the files the manager keeps (src/attach.c). */
void usdt__file_cache_clear(struct usdt_manager *man);

/* Skeletons (skel.c): auto-attach off for SEC("usdt/...") programs, so
 * that the skeleton's __attach() skips them; destroy the owned links. */
void usdt__skel_prepare(struct bpf_object *obj);
void usdt__skel_release(struct usdt_manager *man);

/* Where site i of a link has its uprobe (file offset), for tests. */
uint64_t usdt__link_offset(const struct usdt_link *link, size_t i);

#define USDT__TRACE_UPROBE_MULTI 48	/* enum bpf_attach_type, 6.6 */

#endif /* __LIBUSDT_MANAGER_H */
