// SPDX-License-Identifier: BSD-2-Clause
/*
 * Process identity: the lines of /proc/PID/maps, and telling which of
 * them map a given file, for attach (is this process running the file,
 * where is it loaded) and for finding a library a process has mapped
 * (src/proc/resolve.c).
 *
 * A process's mapping is checked by device and inode: the file at its
 * path may have been replaced since it was mapped (an upgrade, or someone
 * racing us), and then the mapped one is reached through
 * /proc/PID/map_files/START-END.
 *
 * The device and inode /proc/PID/maps shows are not always fstat()'s. A
 * file on overlayfs (every container's root) is mapped as the file of the
 * layer below, and before Linux 6.8 (3efdc78fdc21, "fs/proc: show correct
 * device and inode numbers in /proc/pid/maps") maps shows that file's
 * device and inode, while fstat() shows the overlay's device. So a file
 * is compared with a mapping by what maps shows for it: the file is
 * mapped here for a moment and our own maps line read (usdt__map_id()).
 * That is the same kernel's answer for the same file, on any version.
 *
 * On btrfs it is not only this file's: maps shows the device of the whole
 * file system, fstat() that of the file's subvolume, and each subvolume
 * numbers its inodes anew, so a file in another subvolume can show the
 * same device and inode in maps. There, and wherever what maps shows is
 * not what fstat() does (an overlay whose layer may be on btrfs), a
 * mapping that shows them is confirmed by stat() of
 * /proc/PID/map_files/START-END, the file the kernel mapped, which has its
 * subvolume's device (usdt__mapping_is()). Only those candidates cost a
 * look-up, not every line of a big process's maps.
 *
 * The reader needs none of this (it reads a file, not a process): a
 * file's map identity is worked out here when attach first asks for it
 * (usdt__file_map_id()).
 *
 * The lines of maps are parsed here only (usdt__maps_parse()), for the
 * library and for the usdt tool, which lists a process's files and
 * places stack addresses in its mappings (anonymous ones are given too,
 * to a caller that asks: usdt__maps_next_any()).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "reader/reader.h"
#include "proc/procmap.h"

/* <linux/magic.h> */
#define USDT__OVERLAYFS_MAGIC 0x794c7630
#define USDT__BTRFS_MAGIC 0x9123683e

/*
 * The stat() of a mapping from start to end of process pid (0: ours)
 * through /proc/PID/map_files/: the file mapped there, opened as the
 * kernel opens it for that mapping. 0 or a negative errno.
 */
static int map_files_stat(pid_t pid, uint64_t start, uint64_t end,
			  struct stat *st)
{
	char path[80];

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx",
			 (int)pid, (unsigned long long)start,
			 (unsigned long long)end);
	else
		snprintf(path, sizeof(path), "/proc/self/map_files/%llx-%llx",
			 (unsigned long long)start, (unsigned long long)end);
	return stat(path, st) ? -errno : 0;
}

/*
 * Map one page of the file open at fd for a moment and read our own maps
 * line of it: what maps shows for the file (id->dev/ino) and, if that is
 * not st's (NULL: not needed), what stat() of that mapping through
 * /proc/self/map_files/ gives (id->mf_dev/mf_ino, or why not in
 * id->mf_err).
 */
static void mapped_id(int fd, const struct stat *st, struct usdt__map_id *id)
{
	struct usdt__mapping m;
	struct stat mst;
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f;
	void *p = mmap(NULL, 1, PROT_READ, MAP_PRIVATE, fd, 0);

	if (p == MAP_FAILED)
		return;
	f = usdt__maps_open(0);
	while (f && !found && usdt__maps_next(f, &line, &cap, &m) > 0) {
		if (m.start != (uintptr_t)p)
			continue;
		found = true;
		id->dev = m.dev;
		id->ino = m.ino;
		if (!st || (m.dev == st->st_dev && m.ino == st->st_ino))
			continue;
		id->mf_err = map_files_stat(0, m.start, m.end, &mst);
		if (!id->mf_err) {
			id->mf_dev = mst.st_dev;
			id->mf_ino = mst.st_ino;
		}
	}
	free(line);
	if (f)
		fclose(f);
	munmap(p, 1);
}

/*
 * Only overlayfs and btrfs show in maps what fstat() does not. A file on
 * btrfs is shown with the device of the whole file system, while fstat()
 * gives its subvolume's, and inode numbers repeat in each subvolume: two
 * files can show the same. So can a file of another subvolume and one of
 * an overlay whose layer is on btrfs. Where what maps shows is not what
 * fstat() does, or the file is on btrfs (whose top subvolume had the file
 * system's device on old kernels), a mapping is confirmed by the file
 * /proc/PID/map_files/ opens for it, which has the subvolume's device
 * (below an overlay, the layer's file's). What that shows for the file is
 * learnt from our own mapping, except on btrfs, where it is fstat()'s.
 */
void usdt__map_id(int fd, const struct stat *st, struct usdt__map_id *id)
{
	struct statfs sfs;
	bool btrfs;

	memset(id, 0, sizeof(*id));
	id->dev = id->mf_dev = st->st_dev;
	id->ino = id->mf_ino = st->st_ino;
	if (fstatfs(fd, &sfs))
		return;
	btrfs = (unsigned long)sfs.f_type == USDT__BTRFS_MAGIC;
	if (!btrfs && (unsigned long)sfs.f_type != USDT__OVERLAYFS_MAGIC)
		return;
	mapped_id(fd, btrfs ? NULL : st, id);
	id->confirm = btrfs || id->dev != st->st_dev || id->ino != st->st_ino;
}

int usdt__mapping_is(pid_t pid, const struct usdt__mapping *m,
		     const struct usdt__map_id *id)
{
	struct stat st;
	int err;

	if (m->dev != id->dev || m->ino != id->ino)
		return 0;
	if (!id->confirm)
		return 1;
	if (id->mf_err)
		return id->mf_err;
	/* stat(), not open(): a device's mapping is not opened. */
	err = map_files_stat(pid, m->start, m->end, &st);
	if (err == -ENOENT)
		return 0; /* unmapped since */
	if (err)
		return err;
	return st.st_dev == id->mf_dev && st.st_ino == id->mf_ino;
}

/*
 * The map identity is a cache of the file, not part of what the reader
 * reads: taken here on first use, from the descriptor the file keeps and
 * the device and inode of its fstat() at open (all usdt__map_id() reads
 * of st). Set once with a compare-and-swap, so that two attaches of one
 * borrowed const file from two threads neither race nor leak.
 */
int usdt__file_map_id(const struct usdt_file *file,
		      const struct usdt__map_id **out)
{
	struct usdt__map_id *id, *cur;
	struct stat st;

	cur = __atomic_load_n(&file->map, __ATOMIC_ACQUIRE);
	if (cur) {
		*out = cur;
		return 0;
	}
	id = calloc(1, sizeof(*id));
	if (!id)
		return -ENOMEM;
	memset(&st, 0, sizeof(st));
	st.st_dev = file->dev;
	st.st_ino = file->ino;
	usdt__map_id(file->fd, &st, id);
	/* The file is const to its borrowers; this slot is its cache. */
	if (!__atomic_compare_exchange_n((struct usdt__map_id **)&file->map,
					 &cur, id, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		free(id);
		id = cur;
	}
	*out = id;
	return 0;
}

/* Is the file open at fd the one mapping m of process pid maps? 1, 0 or a
 * negative errno. */
static int same_inode(int fd, pid_t pid, const struct usdt__mapping *m)
{
	struct usdt__map_id id;
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	usdt__map_id(fd, &st, &id);
	return usdt__mapping_is(pid, m, &id);
}

/*
 * The file at path, open, if it is that of mapping m of process pid; else
 * -ENOENT, -ENOSYS where a path inside its root cannot be looked up
 * (usdt__open_regular()), or the error that left it unknown. Where that
 * cannot be told without CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE (-EPERM:
 * a file on btrfs, or on an overlay before Linux 6.8, whose maps line
 * shows that file's device and inode), the file is taken: without them no
 * way to the mapping can be told, map_files/ cannot even be opened, and a
 * caller that must know (attach) asks usdt__mapping_is() itself.
 */
static int open_if_mapped(const char *path, pid_t pid,
			  const struct usdt__mapping *m)
{
	int fd = usdt__open_regular(path), is;

	if (fd < 0)
		return fd == -ENOSYS ? fd : -ENOENT;
	is = same_inode(fd, pid, m);
	if (is > 0 || is == -EPERM)
		return fd;
	close(fd);
	return is ? is : -ENOENT;
}

/*
 * Where path lies under the root of process pid as we see it, and that
 * is not ours (a chroot: "/tmp/jail" of "/tmp/jail/bin/sh"), the rest of
 * path ("/bin/sh"), pointing into it; else NULL. The root's path only
 * helps find the file: it is looked up inside that root all the same.
 */
static const char *under_root(pid_t pid, const char *path)
{
	char link[32], root[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/root", (int)pid);
	n = readlink(link, root, sizeof(root));
	if (n <= 1 || (size_t)n >= sizeof(root))
		return NULL;
	if (strncmp(path, root, (size_t)n) || path[n] != '/')
		return NULL;
	return path + n;
}

/*
 * The ways to the file of mapping m of process pid, in order, into out:
 * false when there is none (a deleted file's path no longer reaches it,
 * a name that is no path reaches nothing), or it does not fit.
 *  0: /proc/PID/map_files/START-END, the mapping itself: the very file
 *     mapped, with no name looked up (needs CAP_SYS_ADMIN or
 *     CAP_CHECKPOINT_RESTORE);
 *  1: /proc/PID/root/PATH, the path as the process sees it (maps shows a
 *     file by its path in the reader's root, or, where that does not
 *     reach it, in the process's mount namespace: a container's);
 *  2: /proc/PID/root/REST, where PATH is ROOT/REST and ROOT the path of
 *     the process's root as we see it: a process chrooted in our mount
 *     namespace (chroot, unshare --root) has maps show our paths.
 * The process's user chooses what maps shows and what lies at any path
 * in its root, down to a FUSE file system there whose lookups never
 * answer. So the mapping itself comes first, and the paths, for a caller
 * that may not read map_files/ (its own user's processes only, then), are
 * looked up inside the process's root (usdt__open_regular(),
 * src/base/openpath.c): no way opens a path outside it, and a file mapped from
 * outside it (before a chroot) is reached through map_files/ only.
 */
#define USDT__MAPPING_WAYS 3
static bool mapping_way(int way, pid_t pid, const struct usdt__mapping *m,
			char *out, size_t out_sz)
{
	bool path = m->path[0] == '/' && !m->deleted;
	const char *rest;
	int n;

	if (way == 0)
		n = snprintf(out, out_sz, "/proc/%d/map_files/%llx-%llx",
			     (int)pid, (unsigned long long)m->start,
			     (unsigned long long)m->end);
	else if (way == 1 && path)
		n = snprintf(out, out_sz, "/proc/%d/root%s", (int)pid, m->path);
	else if (way == 2 && path && (rest = under_root(pid, m->path)))
		n = snprintf(out, out_sz, "/proc/%d/root%s", (int)pid, rest);
	else
		return false;
	return n > 0 && (size_t)n < out_sz;
}

int usdt__open_mapping(pid_t pid, const struct usdt__mapping *m, char *out,
		       size_t out_sz)
{
	int way, fd = -ENAMETOOLONG;
	bool nosys = false;

	for (way = 0; way < USDT__MAPPING_WAYS; way++) {
		if (!mapping_way(way, pid, m, out, out_sz))
			continue;
		fd = open_if_mapped(out, pid, m);
		if (fd >= 0)
			return fd;
		nosys |= fd == -ENOSYS;
	}
	/* No way, and its root could not be looked into: say that. */
	return nosys ? -ENOSYS : fd;
}

/* What maps adds to the path of a file deleted since it was mapped. */
#define USDT__DELETED " (deleted)"

int usdt__maps_parse(char *line, struct usdt__mapping *m)
{
	const size_t sfx = sizeof(USDT__DELETED) - 1;
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[5], *path;
	size_t len;
	int n = 0;

	/* "START-END PERMS OFFSET MAJ:MIN INODE   PATH": the name is padded
	 * to a column, and an anonymous mapping's line ends "0 ". */
	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu%n", &start, &end, perms,
		   &off, &maj, &min, &ino, &n) != 7 ||
	    !n || start >= end || strlen(perms) != 4 ||
	    (line[n] && line[n] != ' ' && line[n] != '\n'))
		return -EINVAL;
	path = line + n + strspn(line + n, " ");
	/* The kernel escapes a newline in a name, so the first one ends
	 * the line. */
	path[strcspn(path, "\n")] = '\0';
	len = strlen(path);
	m->deleted = len > sfx && !strcmp(path + len - sfx, USDT__DELETED);
	if (m->deleted)
		path[len - sfx] = '\0';
	m->start = start;
	m->end = end;
	m->off = off;
	m->exec = perms[2] == 'x';
	m->dev = makedev(maj, min);
	m->ino = (ino_t)ino;
	m->path = path;
	return 0;
}

int usdt__maps_next_any(FILE *f, char **line, size_t *cap,
			struct usdt__mapping *m)
{
	while (getline(line, cap, f) > 0)
		if (!usdt__maps_parse(*line, m))
			return 1;
	return 0;
}

int usdt__maps_next(FILE *f, char **line, size_t *cap, struct usdt__mapping *m)
{
	while (usdt__maps_next_any(f, line, cap, m) > 0)
		if (m->ino && m->path[0] == '/')
			return 1;
	return 0;
}

FILE *usdt__maps_open(pid_t pid)
{
	char maps[64];

	if (pid > 0)
		snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	else
		snprintf(maps, sizeof(maps), "/proc/self/maps");
	return fopen(maps, "re");
}

bool usdt__proc_gone(pid_t pid)
{
	char path[32], buf[512], *paren;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "PID (COMM) S ...": COMM may hold ')' itself. */
	paren = strrchr(buf, ')');
	return !paren || paren[1] != ' ' || paren[2] == 'Z' || paren[2] == 'X';
}

long usdt__open_fds_below(rlim_t limit)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;
	int self;

	if (!d)
		return -1;
	self = dirfd(d);
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (e->d_name[0] != '.' && !*end && fd != self &&
		    (rlim_t)fd < limit)
			n++;
	}
	closedir(d);
	return n;
}
