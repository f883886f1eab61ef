// SPDX-License-Identifier: BSD-2-Clause
/* The note reader: a stub until the reader lands. */
#include "internal.h"

int usdt__sym_lookup(const struct usdt__symtab *st, const char *name,
		     size_t len, uint64_t *addr, uint64_t *got_slot)
{
	return -ENOENT;
}

struct usdt_file *usdt_file__open(const char *path,
				  const struct usdt_file_opts *opts)
{
	return usdt__err_ptr(-ENOSYS);
}

void usdt_file__close(struct usdt_file *file)
{
}

struct usdt__symtab *usdt__symtab_new(void)
{
	return NULL;
}

int usdt__symtab_add(struct usdt__symtab *st, const char *name, uint64_t addr,
		     uint64_t got_slot)
{
	return -ENOMEM;
}

void usdt__symtab_free(struct usdt__symtab *st)
{
}
