/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the attach engine (src/attach/): a link, one attach call's
 * context, and the one way to make a link's kernel side, a link maker.
 * The phases (attach.c) read once whatever the maker: our own
 * uprobe_multi fd or per-site perf uprobes (kernel.c), or a struct
 * bpf_link of libbpf's that the user holds (ext.c). Nothing outside
 * src/attach/ includes this header: the rest of the library sees
 * attach/attach.h.
 */
#ifndef __LIBUSDT_ATTACH_LINK_H
#define __LIBUSDT_ATTACH_LINK_H

#include <bpf/bpf.h>

#include "reader/reader.h"
#include "attach/attach.h"

struct usdt__link_maker;

/*
 * A live attach.
 * Invariant: the kernel side is either multi_fd >= 0 or
 * perf[0..perf_cnt), on site_cnt sites at offsets[0..site_cnt); what they
 * hold in the store (their spec IDs, slots and IP-map keys) is in held.
 * The link reaches the maps only through its store's own descriptors,
 * never through the bpf_object.
 */
/*
 * One allocation: the struct, then its arrays, each with room for cap
 * call sites (usdt__link_alloc() sets the pointers once): a program
 * attached one name at a time holds thousands of these, about 120 bytes
 * each for one site. Counts fit 32 bits: a file has at most
 * USDT__MAX_SITES call sites.
 */
struct usdt_link {
	struct usdt__store *st; /* a reference held */
	int multi_fd;
	uint32_t cap;
	uint32_t perf_cnt;
	uint32_t site_cnt;
	uint32_t spec_cnt; /* distinct IDs among held.ids */
	/* The kernel link outlives us: keep what it holds in the store. */
	bool pinned;
	bool slot_per_site;
	uint64_t *offsets; /* [cap] where each site's uprobe is, in the file */
	struct bpf_link **perf; /* [cap] per-site uprobes, or NULL */
	/* [cap] spec IDs and IP-map keys; slots: one per site
	 * (slot_per_site) or one for all. */
	struct usdt__hold held;
	/* What made the kernel side, and detaches it. */
	const struct usdt__link_maker *maker;
	/* The kernel side is a struct bpf_link of libbpf's that the user
	 * holds (usdt__attach_ext()): its kernel ID, and the fd it had. */
	uint32_t ext_id;
	int ext_fd;
	struct bpf_link *ext_link; /* until handed out */
};

/* One attach call: what it was asked, and what it has found so far. */
struct attach_ctx {
	struct usdt__store *st;
	const struct bpf_object *obj; /* the store's object, where known */
	const struct bpf_program *prog;
	const struct usdt_file *file;
	const struct usdt__arch_ops *host;
	const struct usdt__features *feat;
	pid_t pid;	/* -1, or a real pid */
	bool maps_file; /* pid > 0 maps the file now */
	const char *provider, *name;
	uint64_t cookie; /* usdt_attach_opts.usdt_cookie */
	/* Storage, per site or not, and IP map or cookies. */
	struct usdt__take take;
	bool use_multi;
	bool ext; /* make a struct bpf_link of libbpf's */
	const struct usdt__link_maker *maker;
	bool red_zone; /* allow_red_zone_writes: may skip */
	/* The sites that match (matched of them), read a batch at a time
	 * (attach_specs()); cnt taken so far, broken skipped. */
	struct usdt__pick *pick;
	size_t matched, cnt, broken;
	/* The first site taken whose semaphore the loader clears. */
	const char *cleared_prov, *cleared_name;
	uint64_t cleared_sema;
	char kpath[32]; /* what the kernel opens */
};

/*
 * A way to make the kernel side of a link (attach_pick_mode() picks one).
 * make() attaches c's c->cnt sites at the link's offsets, with their
 * semaphore offsets (refs) and cookies, and records what it made in the
 * link: all of it or, on error, nothing. detach() takes that out of the
 * kernel; the first error, and nothing left attached either way.
 */
struct usdt__link_maker {
	const char *what;      /* for messages */
	bool per_site;	       /* a struct bpf_link per site: perf[] */
	uint32_t fds_per_site; /* descriptors each site holds */
	int (*make)(const struct attach_ctx *c, struct usdt_link *link,
		    const uint64_t *refs, const uint64_t *cookies);
	int (*detach)(struct usdt_link *link);
};

/* kernel.c: our own uprobe_multi link, or a perf uprobe per site. */
extern const struct usdt__link_maker usdt__maker_multi, usdt__maker_perf;
/* ext.c: a struct bpf_link of libbpf's, which the user gets. */
extern const struct usdt__link_maker usdt__maker_ext;

/* kernel.c */
/* Why the kernel may have refused sites with semaphores (refs) with err,
 * or "". */
const char *usdt__clash_hint(int err, const uint64_t *refs, size_t n);

/* links.c: a link's life. */
/* The link and its arrays for c's matched sites, zeroed; NULL: ENOMEM. */
struct usdt_link *usdt__link_alloc(const struct attach_ctx *c);
/* Its kernel side out (link->maker). */
int usdt__link_detach(struct usdt_link *link);
/* After usdt__link_detach(): IP-map entries, spec IDs and slots back,
 * the link freed. */
int usdt__link_release(struct usdt_link *link);
/* Both: everything the link holds undone, the link freed. */
int usdt__link_unwind(struct usdt_link *link);

/* target.c: the file, in a process and in a manager. */
int usdt__runtime_addr(pid_t pid, const struct usdt_file *file, uint64_t off,
		       uint64_t *addr);
int usdt__check_process(const struct attach_ctx *c, bool *maps);
int usdt__file_cached(struct usdt__store *st, int fd, const char *path,
		      struct usdt_file **out);

/* attach.c: c (manager, program, pid, probe) checked: the file at path
 * resolved, opened once and attached. */
struct usdt_link *usdt__attach_by_path(struct attach_ctx *c, const char *path,
				       const struct usdt_attach_opts *opts);

#endif /* __LIBUSDT_ATTACH_LINK_H */
