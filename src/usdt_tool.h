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
 *  - a file the tool opened and checked read from that descriptor
 *    (reader/adopt.h).
 * Nothing here includes internal.h: these headers include system headers
 * only, and nothing else of the library's is the tool's to use.
 */
#ifndef __LIBUSDT_USDT_TOOL_H
#define __LIBUSDT_USDT_TOOL_H

#include "base/match.h"
#include "base/openpath.h"
#include "proc/procmap.h"
#include "reader/adopt.h"

#endif /* __LIBUSDT_USDT_TOOL_H */
