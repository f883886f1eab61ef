/* SPDX-License-Identifier: BSD-2-Clause */
/* The attach engine (src/attach/), as the faces use it: the manager's
 * (src/manager.c) and libbpf's flow (src/libbpf/progh.c). */
#ifndef __LIBUSDT_ATTACH_H
#define __LIBUSDT_ATTACH_H

#include "store/store.h"

/*
 * A manager: the face of one bpf_object's store to its user. It holds a
 * reference on the store, as each link made on it does, and owns the
 * links of usdt_manager__attach_all(); the store outlives it while links
 * do (usdt_manager__free()).
 */
struct usdt_manager {
	struct usdt__store *store;
	struct bpf_object *obj;	   /* borrowed; NULL once freed */
	struct bpf_map *specs_map; /* borrowed from obj */
	struct bpf_map *spec_head; /* its head (usdt_spec.h) */
	struct bpf_map *ip_map;
	struct bpf_map *storage_map; /* NULL: none */
	/* Links of usdt_manager__attach_all(), destroyed by free. */
	struct usdt_link **owned;
	size_t owned_cnt, owned_cap;
};

/* man's store, bound to the object's outer maps once they exist (the
 * object is loaded before any attach). */
struct usdt__store *usdt__manager_store(struct usdt_manager *man);

/* Close the files the store keeps. */
void usdt__file_cache_clear(struct usdt__store *st);

/*
 * Links of libbpf's: attach as usdt_manager__attach() does, on store st
 * (obj: its object where known, for checks and messages), into a struct
 * bpf_link of libbpf's that the caller gets and destroys; st keeps the
 * record (its spec IDs and IP-map entries) in st->ext until a sweep finds
 * the kernel link gone. NULL and errno on error.
 */
struct bpf_link *usdt__attach_ext(struct usdt__store *st,
				  const struct bpf_object *obj,
				  const struct bpf_program *prog, pid_t pid,
				  const char *path, const char *provider,
				  const char *name, uint64_t cookie);
enum usdt__bpf_kind { USDT__BPF_MAP, USDT__BPF_LINK, USDT__BPF_BTF };
/*
 * Is fd (this process's) still the BPF object of that kind and kernel
 * ID? 1 yes; 0 definitely not: the fd is closed, or reused for something
 * else (not a BPF object, another ID, or, where /proc/self/fd tells,
 * another kind); a negative errno when the kernel gave no answer (-ENOMEM,
 * ...), which must change nothing.
 */
int usdt__fd_is_bpf(int fd, enum usdt__bpf_kind kind, uint32_t id);
/* Give back what the records of gone kernel links hold. */
void usdt__ext_sweep(struct usdt__store *st);
/* Free every record, leaving the maps as they are (the object is gone,
 * and live links read them). */
void usdt__ext_drop(struct usdt__store *st);

/* Where site i of a link has its uprobe (file offset), for tests. */
uint64_t usdt__link_offset(const struct usdt_link *link, size_t i);

#endif /* __LIBUSDT_ATTACH_H */
