// SPDX-License-Identifier: BSD-2-Clause
/*
 * Opening a file someone else may control, and the one way into a
 * process's root.
 *
 * libusdt runs as root on the files of other users. Any file it opens
 * for one is opened for reading with O_NONBLOCK (a FIFO must not wait
 * for a writer), O_NOCTTY and O_CLOEXEC, and only if it is a regular
 * file: a device is never opened at all, since opening one can act.
 *
 * A process's files are reached through /proc/PID/root/, the root the
 * process sees (a container's, a chroot's). The kernel walks a path
 * there from that root, but a symlink in it is followed from *our* root:
 * a link /etc/shadow that the process's user planted at the path we look
 * up, inside its own root, made root open the host's /etc/shadow, or a
 * FUSE file that never answers. So every path through /proc/PID/root is
 * resolved here, by openat2() with RESOLVE_IN_ROOT (Linux 5.6,
 * fddb5d430ad9, "open: introduce openat2(2) syscall") from a descriptor
 * of that root: absolute links and ".." stay inside it, and magic links
 * (/proc/N/fd/M, which lead anywhere) are refused. What the lookup
 * finds is opened as O_PATH first, checked to be a regular file by
 * fstat(), and only then opened for reading, through our own
 * /proc/self/fd/N of it: the very inode checked, not the path again.
 *
 * Without openat2() (before 5.6, or a seccomp filter that refuses it),
 * nothing is opened inside a root: -ENOSYS, said once. A caller that has
 * another way that leaves no room to the process's user (the mapping
 * itself, /proc/PID/map_files/) tries that; none falls back to a plain
 * open() of the path.
 *
 * Mounts inside the root are crossed (no RESOLVE_NO_XDEV): a container's
 * /usr, /home or a volume are mounts, and a user who can mount a FUSE
 * file system in its root can as well run a program from it, whose
 * mapping any way to the file opens.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/internal.h"
#include "base/openpath.h"

/* <linux/openat2.h>, which older build hosts lack; glibc has no wrapper
 * before 2.42. The numbers are the kernel's ABI. */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
struct usdt__open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};
#define USDT__RESOLVE_NO_MAGICLINKS 0x02
#define USDT__RESOLVE_IN_ROOT 0x10

/* A lookup RESOLVE_IN_ROOT refuses for a rename that raced its ".." may
 * succeed when tried again. */
#define USDT__IN_ROOT_TRIES 8

bool usdt__proc_root_split(const char *path, pid_t *pid, const char **rest)
{
	static const char proc[] = "/proc/", root[] = "/root";
	const char *p = path + sizeof(proc) - 1;
	unsigned long n = 0;

	if (strncmp(path, proc, sizeof(proc) - 1) || *p < '1' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		n = n * 10 + (unsigned long)(*p - '0');
		if (n > INT_MAX)
			return false;
	}
	if (strncmp(p, root, sizeof(root) - 1))
		return false;
	p += sizeof(root) - 1;
	if (*p && *p != '/')
		return false;
	*pid = (pid_t)n;
	*rest = p;
	return true;
}

/* Said once per process: every later lookup in a root fails alike. */
static void warn_no_openat2(pid_t pid, const char *path)
{
	static int said;

	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	pr_warn("/proc/%d/root/%s: cannot look up inside the process's root: openat2(): %s (it needs Linux 5.6 or later, not refused by a seccomp filter); not opened another way, which could leave that root\n",
		(int)pid, path, usdt__errstr(-ENOSYS));
}

/*
 * An O_PATH descriptor of path inside the root of process pid (0: ours),
 * or a negative errno. Only the lookup: nothing is opened for I/O.
 */
static int path_in_root(pid_t pid, const char *path)
{
	struct usdt__open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = USDT__RESOLVE_IN_ROOT | USDT__RESOLVE_NO_MAGICLINKS,
	};
	char root[32];
	int dfd, fd, err = 0, tries = 0;

	if (pid > 0)
		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	else
		snprintf(root, sizeof(root), "/proc/self/root");
	/* The magic link itself is the kernel's: it is the root. */
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	while (*path == '/')
		path++;
	do {
		fd = (int)syscall(SYS_openat2, dfd, *path ? path : ".", &how,
				  sizeof(how));
		err = fd < 0 ? -errno : 0;
	} while (err == -EAGAIN && ++tries < USDT__IN_ROOT_TRIES);
	close(dfd);
	if (err == -ENOSYS)
		warn_no_openat2(pid, path);
	return err ? err : fd;
}

/*
 * The regular file at the O_PATH descriptor pfd (closed), opened for
 * reading: the fd, -ENOEXEC for anything else, or a negative errno.
 */
static int reopen_regular(int pfd)
{
	char self[32];
	struct stat st;
	int fd;

	if (fstat(pfd, &st)) {
		fd = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		fd = -ENOEXEC;
	} else {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
		fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			fd = -errno;
	}
	close(pfd);
	return fd;
}

int usdt__open_in_root(pid_t pid, const char *path)
{
	int pfd = path_in_root(pid, path);

	return pfd < 0 ? pfd : reopen_regular(pfd);
}

int usdt__open_regular(const char *path)
{
	const char *rest;
	struct stat st;
	pid_t pid;
	int fd;

	if (usdt__proc_root_split(path, &pid, &rest))
		return usdt__open_in_root(pid, rest);
	/* Look first, so that no device is even opened in the usual case;
	 * the fstat() below is what counts. */
	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	/* O_NONBLOCK: opening a FIFO or a device must not wait. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	return fd;
}

int usdt__stat_path(const char *path, struct stat *st)
{
	const char *rest;
	pid_t pid;
	int pfd, err = 0;

	if (!usdt__proc_root_split(path, &pid, &rest))
		return stat(path, st) ? -errno : 0;
	pfd = path_in_root(pid, rest);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, st))
		err = -errno;
	close(pfd);
	return err;
}
