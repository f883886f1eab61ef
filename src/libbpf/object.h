/* SPDX-License-Identifier: BSD-2-Clause */
/* The object side of a manager (src/libbpf/object.c): a user's bpf_object
 * checked, set up before load, and its programs told apart. */
#ifndef __LIBUSDT_LIBBPF_OBJECT_H
#define __LIBUSDT_LIBBPF_OBJECT_H

#include "attach/attach.h"

/* The store and its checks of obj, for usdt_manager__new() (src/manager.c);
 * NULL and errno on error. */
struct usdt_manager *usdt__manager_new(struct bpf_object *obj,
				       const struct usdt_manager_opts *opts);
/* The user is done with man (usdt_manager__free(), src/manager.c): man is
 * freed, and its reference on the store put (the links left hold it). */
void usdt__manager_retire(struct usdt_manager *man);
/* Before usdt_manager__free() gives man's store back to the object as its
 * implicit one (src/manager.c): its programs are no longer its, and its storage,
 * which no live link of its own uses, goes (kept in the maps for pinned
 * links). */
void usdt__manager_unface(struct usdt_manager *man);
/* Is libusdt libbpf's handler of SEC("usdt") programs (src/libbpf/progh.c)? */
extern bool usdt__handler_active;
/* The manager that prepared prog for load (its link kind set), or NULL. */
struct usdt_manager *usdt__prog_manager(const struct bpf_program *prog);

#endif /* __LIBUSDT_LIBBPF_OBJECT_H */
