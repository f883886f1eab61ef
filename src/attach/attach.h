/* SPDX-License-Identifier: BSD-2-Clause */
/* The attach engine (src/attach/), as the faces use it: the manager's
 * (src/manager.c) and libbpf's flow (src/libbpf/progh.c). */
#ifndef __LIBUSDT_ATTACH_H
#define __LIBUSDT_ATTACH_H

#include "store/store.h"

/* Close the files the manager keeps. */
void usdt__file_cache_clear(struct usdt_manager *man);

/*
 * Links of libbpf's: attach as usdt_manager__attach() does,
 * into a struct bpf_link of libbpf's that the caller gets and destroys;
 * man keeps the record (its spec IDs and IP-map entries) in man->ext until
 * a sweep finds the kernel link gone. NULL and errno on error.
 */
struct bpf_link *usdt__attach_ext(struct usdt_manager *man,
				  const struct bpf_program *prog, pid_t pid,
				  const char *path, const char *provider,
				  const char *name, uint64_t cookie);
/*
 * Is fd (this process's) still the BPF link (link) or map of that kernel
 * ID? 1 yes; 0 definitely not: the fd is closed, or reused for something
 * else (not a BPF object, another ID, or, where /proc/self/fd tells,
 * another kind); a negative errno when the kernel gave no answer (-ENOMEM,
 * ...), which must change nothing.
 */
int usdt__fd_is_bpf(int fd, bool link, uint32_t id);
/* Give back what the records of gone kernel links hold. */
void usdt__ext_sweep(struct usdt_manager *man);
/* Free every record, leaving the maps as they are (the object is gone,
 * and live links read them). */
void usdt__ext_drop(struct usdt_manager *man);

/* Where site i of a link has its uprobe (file offset), for tests. */
uint64_t usdt__link_offset(const struct usdt_link *link, size_t i);

/* A manager made for a loaded object takes over imp, the object's implicit
 * manager (usdt__store_take()): its records, then its store
 * (usdt__store_move()); imp is freed. */
void usdt__manager_adopt(struct usdt_manager *man, struct usdt_manager *imp);

#endif /* __LIBUSDT_ATTACH_H */
