// SPDX-License-Identifier: BSD-2-Clause
/* The note reader: a stub until the reader lands. */
#include "internal.h"

struct usdt_file *usdt_file__open(const char *path,
				  const struct usdt_file_opts *opts)
{
	return usdt__err_ptr(-ENOSYS);
}

void usdt_file__close(struct usdt_file *file)
{
}
