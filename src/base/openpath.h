/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening a file that another user may control (src/base/openpath.c): for
 * reading, a regular file only, without blocking or taking a terminal;
 * and a path through /proc/PID/root/ resolved inside that process's root,
 * never outside it. The one resolver of such paths, for the reader, the
 * process layer and the `usdt` tool, which includes this header (system
 * headers only, not internal.h).
 */
#ifndef __LIBUSDT_OPENPATH_H
#define __LIBUSDT_OPENPATH_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Is path "/proc/PID/root" or "/proc/PID/root/REST" (PID a number without
 * leading zeros, as procfs names a process)? Then *pid is PID and *rest
 * points into path at "" or "/REST". Only this form is taken for a way
 * into a process's root; /proc/self/root is our own.
 */
bool usdt__proc_root_split(const char *path, pid_t *pid, const char **rest);

/*
 * Open path (absolute or not, both from the root) inside the root of
 * process pid, as openat2() with RESOLVE_IN_ROOT resolves it from
 * /proc/PID/root: every symlink, absolute ones and "..", stays inside
 * that root; magic links (/proc/N/fd/...) are refused. Only a regular
 * file is opened for reading (O_NONBLOCK|O_NOCTTY|O_CLOEXEC); nothing
 * else is opened at all. Returns the fd; -ENOEXEC for anything else than
 * a regular file; -ENOSYS where openat2() is missing (before Linux 5.6,
 * or refused by a seccomp filter), said once on the log: no other way is
 * tried, as any other could leave the root; else the lookup's error.
 */
int usdt__open_in_root(pid_t pid, const char *path);

/*
 * Open path for reading, a regular file only, as usdt__open_in_root()
 * does; a path of the form "/proc/PID/root/REST" is opened that way,
 * inside that root. Returns the fd, -ENOEXEC for anything else than a
 * regular file, or the open's error.
 */
int usdt__open_regular(const char *path);

/*
 * stat() of path, a path of the form "/proc/PID/root/REST" resolved
 * inside that root (usdt__open_in_root()), without opening the file. 0 or
 * a negative errno.
 */
int usdt__stat_path(const char *path, struct stat *st);

#endif /* __LIBUSDT_OPENPATH_H */
