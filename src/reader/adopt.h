/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A file opened and checked by its caller, read from that descriptor
 * (src/reader/file.c): the reader's one entry that the `usdt` tool uses
 * too (src/usdt_tool.h). System headers only, as that header wants.
 */
#ifndef __LIBUSDT_READER_ADOPT_H
#define __LIBUSDT_READER_ADOPT_H

struct usdt_file;

/*
 * usdt_file__open() of the regular file open at fd (taken over: the file
 * keeps it, or it is closed on error), so that a caller who checked that
 * descriptor (usdt__open_mapping()) reads, and gives the kernel, that
 * very file rather than whatever its path reaches by then. path names it
 * (usdt_file__path(), messages). Returns the file, or NULL with errno as
 * usdt_file__open().
 */
struct usdt_file *usdt__file_adopt(int fd, const char *path);

#endif /* __LIBUSDT_READER_ADOPT_H */
