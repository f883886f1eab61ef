/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening an ELF file for its call sites (src/reader/file.c). A file a user
 * named is opened safely by openpath.h's usdt__open_regular(), included
 * here for every part of the library that opens one. The file object
 * itself is in sites.h.
 */
#ifndef __LIBUSDT_FILE_H
#define __LIBUSDT_FILE_H

#include "reader/sites.h"
#include "base/openpath.h"
#include "reader/adopt.h"

/*
 * usdt_file__open() for an ELF image in memory (the fuzzer's entry point);
 * name is only used in messages. Returns the file, or NULL with errno.
 */
struct usdt_file *usdt__file_open_mem(const void *buf, size_t size,
				      const char *name);

/*
 * Index the call sites of the regular file open at fd (taken over: the
 * file keeps it, or it is closed on error); path is for messages. The
 * index (about 4 bytes a call site) is all that is read: probes are built
 * when asked for (usdt__file_pick(), usdt_file__probe()). Returns 0 or a
 * negative errno.
 */
int usdt__file_open_fd(int fd, const char *path, struct usdt_file **out);

#endif /* __LIBUSDT_FILE_H */
