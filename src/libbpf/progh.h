/* SPDX-License-Identifier: BSD-2-Clause */
/* libusdt inside libbpf's own flow (src/libbpf/progh.c), as the manager's face
 * (src/manager.c) uses it. */
#ifndef __LIBUSDT_PROGH_H
#define __LIBUSDT_PROGH_H

#include "attach/attach.h"

/* Take the implicit store of the spec map of kernel ID specs_id (made by
 * usdt_program__attach() for an object without a manager) out of the
 * list, for a manager of that object to adopt; NULL if there is none. */
struct usdt__store *usdt__store_take(uint32_t specs_id);
/* Put imp, an implicit store, in the list, as usdt_program__attach()
 * would have made it (usdt_manager__free() gives a store back). 0, or
 * -ENOMEM. */
int usdt__store_give(struct usdt__store *imp);
/* Split "PATH:PROVIDER:NAME" into buf (PATH may hold ':'; the provider and
 * the name may not, as in sys/sdt.h). 0, or -EINVAL. */
int usdt__split_target(const char *target, char *buf, size_t size,
		       const char **path, const char **provider,
		       const char **name);

#endif /* __LIBUSDT_PROGH_H */
