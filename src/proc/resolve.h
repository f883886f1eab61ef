/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Finding the file a user named the way the dynamic loader would
 * (src/proc/resolve.c).
 */
#ifndef __LIBUSDT_RESOLVE_H
#define __LIBUSDT_RESOLVE_H

#include <sys/types.h>

#include <stddef.h>

/*
 * usdt_resolve_path(), keeping the file open: returns its fd (a regular
 * file; for a bare name, an ELF file for this host) or a negative errno;
 * the path it was found at goes to out.
 */
int usdt__resolve_open(pid_t pid, const char *name, char *out, size_t out_sz);

#endif /* __LIBUSDT_RESOLVE_H */
