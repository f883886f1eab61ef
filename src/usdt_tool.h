/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The library's private interface to its `usdt` tool (tools/), as
 * bpftool has libbpf's: the tool is built on include/usdt.h like any
 * user's program, and on this one header for what there must be one of,
 * the library's own:
 *  - /proc/PID/maps read, and a mapping's file opened and told from other
 *    files, by the one process layer (procmap.h);
 *  - a path through /proc/PID/root/ looked up inside that root by the one
 *    resolver (openpath.h);
 *  - provider:name patterns matched by the matcher attach uses (match.h);
 *  - a file the tool opened and checked read from that descriptor.
 * Nothing here includes internal.h: these headers include system headers
 * only, and nothing else of the library's is the tool's to use.
 */
#ifndef __LIBUSDT_USDT_TOOL_H
#define __LIBUSDT_USDT_TOOL_H

#include "match.h"
#include "openpath.h"
#include "procmap.h"

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

#endif /* __LIBUSDT_USDT_TOOL_H */
