/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal interface between the manager (spec IDs, maps, kernel features)
 * and the attach engine. */
#ifndef __LIBUSDT_MANAGER_H
#define __LIBUSDT_MANAGER_H

#include <unistd.h>

#include <bpf/libbpf.h>

#include "internal.h"
#include "../bpf/usdt_spec.h"

#define USDT__FILE_CACHE 4

/* What the running kernel can do; probed once per process. */
struct usdt__features {
	bool bpf_cookie;	/* bpf_get_attach_cookie() for uprobes */
	bool uprobe_multi;	/* BPF_TRACE_UPROBE_MULTI links */
	bool ref_ctr;		/* uprobe ref_ctr_offset (semaphores) */
	bool uprobe_syscall;	/* x86 optimized (nop5) uprobes */
	/* The struct a kprobe program's context is to the kernel (what its
	 * bpf_user_pt_regs_t stands for: "pt_regs" on x86, "user_pt_regs"
	 * on arm64, "" on s390x); ctx_known false without kernel BTF, where
	 * no global function's argument is the context. */
	bool ctx_known;
	char ctx_name[64];
	bool ctx_typedef_ok;	/* bpf_user_pt_regs_t is the context by name */
};

const struct usdt__features *usdt__features(void);
/* Would feat's kernel take every one of the BPF header's functions that
 * take the context, in btf, for what they are? */
bool usdt__ctx_funcs_fit(const struct btf *btf,
			 const struct usdt__features *feat);
/* Can the object's programs find specs through the IP map? Not when the
 * manager loaded them without (usdt__ip_map = 0 in .rodata). */
bool usdt__ip_map_kept(struct usdt_manager *man);

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
 * A chunked array (src/chunks.c): the BPF side's array of maps, its chunks
 * created, mapped into this process and handed out index by index.
 * Invariant: chunks below cnt exist, are mapped at mem[k] and sit in the
 * outer map; an index below next is either taken or zero and on the free
 * stack, which has room for every index of every chunk.
 */
struct usdt__chunks {
	char name[16];		/* the outer map's, for messages */
	int fd;			/* the outer map, dup()ed */
	uint32_t value_sz, stride, per, aux_sz;
	uint32_t max_chunks;	/* the outer map's entries */
	uint32_t cap;		/* most indexes handed out at once */
	uint32_t cnt;		/* chunks created */
	size_t chunk_sz;	/* bytes mapped per chunk */
	void **mem;		/* [max_chunks]; NULL: not opened */
	int *fds;		/* [max_chunks] of chunks not mapped */
	bool mapped;
	/* Writes to chunks not mapped, until usdt__chunks_flush(). */
	uint32_t *pend_idx;
	void *pend_val;		/* stride bytes each */
	uint32_t pend_cnt, pend_cap;
	void **aux;		/* [max_chunks]: aux_sz bytes per index */
	uint32_t next;		/* indexes below were handed out once */
	uint32_t *free;		/* stack; reused first */
	uint32_t free_cnt;
	uint32_t live_cnt;
};

/* An outer map (an array of maps): the object's, or one found by its fd. */
struct usdt__outer {
	int fd;			/* borrowed */
	uint32_t max_entries;
	const char *name;
};

static inline struct usdt__outer usdt__outer_of(const struct bpf_map *map)
{
	return (struct usdt__outer){ .fd = bpf_map__fd(map),
				     .max_entries = bpf_map__max_entries(map),
				     .name = bpf_map__name(map) };
}

/* The size of each chunk (per) and of its values in the BTF definition of
 * the array of maps named map; -ENOENT if it is not one. */
int usdt__inner_def(const struct btf *btf, const char *map, uint32_t *per,
		    uint32_t *value_sz);
/* Open outer's chunks (none created yet); aux_sz bytes of bookkeeping per
 * index; cap 0: as many as the outer map holds. */
int usdt__chunks_open(struct usdt__chunks *c, const struct usdt__outer *outer,
		      uint32_t value_sz, uint32_t per, uint32_t aux_sz,
		      uint32_t cap, bool mapped);
/* The largest value of chunks not mapped. */
#define USDT__CHUNK_VALUE_MAX 256
/* Write or read index i's value: in place, or through the chunk's fd (0
 * or -errno). Such writes wait for usdt__chunks_flush() (a read flushes
 * first): nothing may read the value before. */
int usdt__chunks_write(struct usdt__chunks *c, uint32_t i, const void *val);
int usdt__chunks_read(struct usdt__chunks *c, uint32_t i, void *val);
/* The writes kept: one batch per chunk. 0, or the first error. */
int usdt__chunks_flush(struct usdt__chunks *c);
/* Take an index, creating a chunk for it if needed; its value is zero.
 * -E2BIG past the cap, -EBUSY if the outer map already holds the chunk
 * (another manager's), or the error of creating it. */
int usdt__chunks_take(struct usdt__chunks *c, uint32_t *i);
/* Zero index i's value and bookkeeping and free it. */
void usdt__chunks_give(struct usdt__chunks *c, uint32_t i);
/* Index i's value in a mapped chunk. */
void *usdt__chunks_at(const struct usdt__chunks *c, uint32_t i);
void *usdt__chunks_aux(const struct usdt__chunks *c, uint32_t i);
/* Unmap and free; take the chunks out of the outer map unless keep. */
void usdt__chunks_close(struct usdt__chunks *c, bool keep);

/* The IP map (src/ipmap.c): the hash in entry 0 of usdt__ip2spec. */
struct usdt__ipmap {
	int outer_fd;		/* dup()ed at the first entry; -1 */
	int fd;			/* the current hash; -1 */
	uint32_t size;		/* its entries */
	uint32_t cnt;		/* entries in it */
	uint32_t cap;		/* most entries */
};

/* Room for n more IP-map entries: -E2BIG past the cap, -EBUSY if another
 * manager's hash is there, or the error of growing the map. */
int usdt__ipmap_reserve(struct usdt_manager *man, uint32_t n);
/* Add an entry (-EEXIST if the key is there); delete one. */
int usdt__ipmap_add(struct usdt_manager *man, long key,
		    const struct usdt_ip_val *val);
int usdt__ipmap_del(struct usdt_manager *man, long key);
void usdt__ipmap_close(struct usdt__ipmap *m, bool keep);

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

/*
 * Storage slots (src/storage.c): the object's usdt__storage array of maps,
 * its chunks mapped into this process as slots are taken.
 */
struct usdt__storage {
	struct bpf_map *map;	/* borrowed from obj; NULL: none declared */
	uint32_t value_sz, per;	/* from the object's BTF; 0: unknown */
	uint32_t cap;		/* the cap (opts or the object's), or 0 */
	struct usdt__chunks slots;
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
/* Find the object's storage map (or none), at usdt_manager__new(). */
void usdt__storage_find(struct usdt_manager *man);
/* Check an attach's storage options against the object: 0 or -EINVAL
 * (logged). No storage (init NULL) is fine. */
int usdt__storage_check(const struct usdt_manager *man, const void *init,
			size_t sz, bool per_site);
/* Take a slot and write init (value_sz bytes) into it. -E2BIG when none is
 * left, or the error of creating a chunk. */
int usdt__storage_get(struct usdt_manager *man, const void *init,
		      uint32_t *slot);
/* Zero the slot and free it. */
void usdt__storage_put(struct usdt_manager *man, uint32_t slot);
void *usdt__storage_at(const struct usdt__storage *st, uint32_t slot);
void usdt__storage_release(struct usdt__storage *st, bool keep);

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

/* Release the memory of a manager already freed by its user. */
void usdt__manager_release(struct usdt_manager *man);
/* Close the files the manager keeps (src/attach.c). */
void usdt__file_cache_clear(struct usdt_manager *man);

/* Skeletons (skel.c): auto-attach off for SEC("usdt/...") programs, so
 * that the skeleton's __attach() skips them; destroy the owned links. */
void usdt__skel_prepare(struct bpf_object *obj);
void usdt__skel_release(struct usdt_manager *man);
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

#define USDT__TRACE_UPROBE_MULTI 48	/* enum bpf_attach_type, 6.6 */

#endif /* __LIBUSDT_MANAGER_H */
