// SPDX-License-Identifier: BSD-2-Clause
/*
 * Finding the file a user named, the way the dynamic loader would, and
 * opening it once.
 *
 * A name with a '/' is a path. A bare name ("libc.so.6", or "libc" for
 * it) is looked for, in this order, among the files process pid has
 * mapped, in LD_LIBRARY_PATH, in the loader's cache /etc/ld.so.cache, and
 * in the default directories. Only regular 64-bit ELF files of this
 * host's machine count, so that an i386 library of the same name, or a
 * FIFO or a device planted in a searched directory, is passed over
 * without being read (and without blocking).
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
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "internal.h"

/* The loader's per-arch library directories (Debian multiarch). */
#if defined(__x86_64__)
#define USDT__MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define USDT__MULTIARCH "aarch64-linux-gnu"
#elif defined(__s390x__)
#define USDT__MULTIARCH "s390x-linux-gnu"
#elif defined(__riscv)
#define USDT__MULTIARCH "riscv64-linux-gnu"
#else
#define USDT__MULTIARCH "unknown"
#endif

#define USDT__LD_CACHE_MAX (64u << 20)

/* <linux/magic.h> */
#define USDT__OVERLAYFS_MAGIC 0x794c7630
#define USDT__BTRFS_MAGIC 0x9123683e

/* Is the file open at fd a 64-bit ELF file for this host's machine? */
static bool fd_is_host_elf(int fd)
{
	const struct usdt__arch_ops *host = usdt__arch_host();
	unsigned char hdr[EI_NIDENT + 4];
	uint16_t machine;

	if (pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    memcmp(hdr, ELFMAG, SELFMAG) || hdr[EI_CLASS] != ELFCLASS64 ||
	    hdr[EI_DATA] != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
				     ELFDATA2MSB : ELFDATA2LSB))
		return false;
	memcpy(&machine, hdr + EI_NIDENT + 2, sizeof(machine));
	return !host || machine == host->e_machine;
}

/* Open path if it is a regular ELF file for this host: the fd, or -1. */
static int open_candidate(const char *path)
{
	int fd = usdt__open_regular(path);

	if (fd < 0)
		return -1;
	if (!fd_is_host_elf(fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* dir[0..dir_len)/name, if it is a candidate: the fd, else -1. */
static int try_dir(const char *dir, size_t dir_len, const char *name,
		   char *out, size_t out_sz)
{
	int n;

	if (!dir_len)
		return -1;
	n = snprintf(out, out_sz, "%.*s/%s", (int)dir_len, dir, name);
	if (n <= 0 || (size_t)n >= out_sz)
		return -1;
	return open_candidate(out);
}

static int search_list(const char *list, const char *name, char *out,
		       size_t out_sz)
{
	const char *p = list;
	size_t n;
	int fd;

	while (p && *p) {
		n = strcspn(p, ":;");
		fd = try_dir(p, n, name, out, out_sz);
		if (fd >= 0)
			return fd;
		p += n;
		if (*p)
			p++;
	}
	return -1;
}

/* Read all of a small regular file (at most max bytes) into memory. */
static char *slurp(const char *path, size_t max, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	int fd = usdt__open_regular(path);

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && st.st_size > 0 && (uint64_t)st.st_size <= max) {
		buf = malloc((size_t)st.st_size);
		if (buf && pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)st.st_size;
	}
	close(fd);
	return buf;
}

/*
 * The loader's cache, /etc/ld.so.cache, in its current format: the header
 * "glibc-ld.so.cache1.1", the entry count at 20, then 24-byte entries from
 * offset 48, each {int32 flags, uint32 key, uint32 value, uint32 osversion,
 * uint64 hwcap} where key and value are offsets of strings from the start
 * of that header. A leading table of the old "ld.so-1.7.0" format is
 * skipped.
 */
static int search_ld_cache(const char *name, char *out, size_t out_sz)
{
	static const char magic_new[] = "glibc-ld.so.cache1.1";
	static const char magic_old[] = "ld.so-1.7.0";
	size_t len = 0, base = 0, i, e;
	uint32_t n, key, value, old_n;
	int fd = -1;
	char *buf = slurp("/etc/ld.so.cache", USDT__LD_CACHE_MAX, &len);

	if (!buf)
		return -1;
	if (len >= 16 && !memcmp(buf, magic_old, sizeof(magic_old) - 1)) {
		memcpy(&old_n, buf + 12, 4);
		base = (16 + (size_t)old_n * 12 + 7) & ~(size_t)7;
	}
	if (base > len || len - base < 48 ||
	    memcmp(buf + base, magic_new, sizeof(magic_new) - 1))
		goto out;
	memcpy(&n, buf + base + 20, 4);
	for (i = 0; i < n && fd < 0; i++) {
		e = base + 48 + i * 24;
		if (e > len || len - e < 24)
			break;
		memcpy(&key, buf + e + 4, 4);
		memcpy(&value, buf + e + 8, 4);
		if (key >= len - base || value >= len - base ||
		    !memchr(buf + base + key, 0, len - base - key) ||
		    !memchr(buf + base + value, 0, len - base - value) ||
		    strcmp(buf + base + key, name))
			continue;
		if ((size_t)snprintf(out, out_sz, "%s", buf + base + value) <
		    out_sz)
			fd = open_candidate(out);
	}
out:
	free(buf);
	return fd;
}

/* Does a mapped file's base name answer to name ("libc.so.6", or "libc"
 * for it)? */
static bool basename_matches(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');
	size_t len = strlen(name);

	base = base ? base + 1 : path;
	return !strncmp(base, name, len) && (!base[len] || base[len] == '.');
}

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
		return 0;	/* unmapped since */
	if (err)
		return err;
	return st.st_dev == id->mf_dev && st.st_ino == id->mf_ino;
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

/* The file at path, open, if it is that of mapping m of process pid;
 * else -ENOENT, or the error that left it unknown. */
static int open_if_mapped(const char *path, pid_t pid,
			  const struct usdt__mapping *m)
{
	int fd = open_candidate(path), is;

	if (fd < 0)
		return -ENOENT;
	is = same_inode(fd, pid, m);
	if (is > 0)
		return fd;
	close(fd);
	return is ? is : -ENOENT;
}

int usdt__open_mapping(pid_t pid, const struct usdt__mapping *m, char *out,
		       size_t out_sz)
{
	int fd, n;

	/* The path, as the process sees it, if it still is that file. */
	n = snprintf(out, out_sz, "/proc/%d/root%s", (int)pid, m->path);
	if (n > 0 && (size_t)n < out_sz && !m->deleted) {
		fd = open_if_mapped(out, pid, m);
		if (fd >= 0)
			return fd;
	}
	/* Else the mapping itself (root only). */
	n = snprintf(out, out_sz, "/proc/%d/map_files/%llx-%llx", (int)pid,
		     (unsigned long long)m->start, (unsigned long long)m->end);
	if (n <= 0 || (size_t)n >= out_sz)
		return -ENAMETOOLONG;
	return open_if_mapped(out, pid, m);
}

int usdt__maps_next(FILE *f, char **line, size_t *cap, struct usdt__mapping *m)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[8], *path, *nl;
	size_t len;

	while (getline(line, cap, f) > 0) {
		if (sscanf(*line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end,
			   perms, &off, &maj, &min, &ino) != 7 || !ino)
			continue;
		path = strchr(*line, '/');
		if (!path)
			continue;
		nl = strchr(path, '\n');
		if (nl)
			*nl = '\0';
		m->deleted = false;
		len = strlen(path);
		if (len > 10 && !strcmp(path + len - 10, " (deleted)")) {
			path[len - 10] = '\0';
			m->deleted = true;
		}
		m->start = start;
		m->end = end;
		m->off = off;
		m->exec = perms[2] == 'x';
		m->dev = makedev(maj, min);
		m->ino = (ino_t)ino;
		m->path = path;
		return 1;
	}
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

/* A file process pid has mapped whose base name answers to name. */
static int search_maps(pid_t pid, const char *name, char *out, size_t out_sz)
{
	struct usdt__mapping m;
	char *line = NULL;
	size_t cap = 0;
	int fd = -1;
	FILE *f = usdt__maps_open(pid);

	if (!f)
		return -1;
	while (fd < 0 && usdt__maps_next(f, &line, &cap, &m) > 0)
		if (basename_matches(m.path, name))
			fd = usdt__open_mapping(pid, &m, out, out_sz);
	free(line);
	fclose(f);
	return fd < 0 ? -1 : fd;
}

int usdt__resolve_open(pid_t pid, const char *name, char *out, size_t out_sz)
{
	static const char dirs[] =
		"/lib/" USDT__MULTIARCH ":/usr/lib/" USDT__MULTIARCH
		":/lib64:/usr/lib64:/lib:/usr/lib:/usr/local/lib";
	int fd;

	if (!name || !out || !out_sz || !*name)
		return -EINVAL;
	if (strchr(name, '/')) {
		if ((size_t)snprintf(out, out_sz, "%s", name) >= out_sz)
			return -ENAMETOOLONG;
		return usdt__open_regular(out);
	}
	fd = pid > 0 ? search_maps(pid, name, out, out_sz) : -1;
	if (fd < 0)
		fd = search_list(getenv("LD_LIBRARY_PATH"), name, out, out_sz);
	if (fd < 0)
		fd = search_ld_cache(name, out, out_sz);
	if (fd < 0)
		fd = search_list(dirs, name, out, out_sz);
	return fd < 0 ? -ENOENT : fd;
}

int usdt_resolve_path(pid_t pid, const char *name, char *buf, size_t size)
{
	int fd;

	if (pid == 0)
		pid = getpid();
	fd = usdt__resolve_open(pid, name, buf, size);
	if (fd < 0)
		return usdt__err(fd);
	close(fd);
	return 0;
}
