// SPDX-License-Identifier: BSD-2-Clause
/*
 * Finding the file a user named, the way the dynamic loader would, and
 * opening it once.
 *
 * A name with a '/' is a path. A bare name ("libc.so.6", or "libc" for
 * it) is looked for, in this order, among the files process pid has
 * mapped, then, for a name that is no library's (no "lib" prefix, no
 * ".so"), in PATH as a shell would (an executable file; as libbpf finds
 * "python3"), then in LD_LIBRARY_PATH, in the loader's cache
 * /etc/ld.so.cache (the short form "libc" as well, after an exact name),
 * and in the default directories. Only regular 64-bit
 * ELF files of this host's machine count, so that an i386 library of the
 * same name, a script, or a FIFO or a device planted in a searched
 * directory, is passed over without being read (and without blocking). An
 * empty entry of PATH (the current directory, to a shell) is skipped: a
 * bare name never means a file in the current directory here.
 *
 * A file a process has mapped is opened as that mapping's file, checked
 * by device and inode (usdt__open_mapping(), src/proc/procmap.c).
 */
#include <elf.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/reader.h"
#include "proc/procmap.h"
#include "proc/resolve.h"

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

/* Is the file open at fd a 64-bit ELF file for this host's machine? */
static bool fd_is_host_elf(int fd)
{
	const struct usdt__arch_ops *host = usdt__arch_host();
	unsigned char hdr[EI_NIDENT + 4];
	uint16_t machine;

	if (pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    memcmp(hdr, ELFMAG, SELFMAG) || hdr[EI_CLASS] != ELFCLASS64 ||
	    hdr[EI_DATA] != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
				     ELFDATA2MSB :
				     ELFDATA2LSB))
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
static int try_dir(const char *dir, size_t dir_len, const char *name, char *out,
		   size_t out_sz)
{
	int n;

	if (!dir_len)
		return -1;
	n = snprintf(out, out_sz, "%.*s/%s", (int)dir_len, dir, name);
	if (n <= 0 || (size_t)n >= out_sz)
		return -1;
	return open_candidate(out);
}

/* A candidate someone may execute (a PATH search's), else closed. */
static int executable(int fd)
{
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) || !(st.st_mode & 0111))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int search_list(const char *list, const char *name, bool exec, char *out,
		       size_t out_sz)
{
	const char *p = list;
	size_t n;
	int fd;

	while (p && *p) {
		n = strcspn(p, ":;");
		fd = try_dir(p, n, name, out, out_sz);
		if (exec)
			fd = executable(fd);
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
		if (buf &&
		    pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)st.st_size;
	}
	close(fd);
	return buf;
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
 * The loader's cache, /etc/ld.so.cache, in its current format: the header
 * "glibc-ld.so.cache1.1", the entry count at 20, then 24-byte entries from
 * offset 48, each {int32 flags, uint32 key, uint32 value, uint32 osversion,
 * uint64 hwcap} where key and value are offsets of strings from the start
 * of that header. A leading table of the old "ld.so-1.7.0" format is
 * skipped. The first entry whose key (a soname) is name, or, with prefix,
 * answers to it ("libstdc++" for "libstdc++.so.6"), and whose file opens
 * as a host ELF file; buf holds the len bytes of the cache, base the
 * offset of the new format's header. An fd, or -1.
 */
static int ld_cache_pick(const char *buf, size_t len, size_t base,
			 const char *name, bool prefix, char *out,
			 size_t out_sz)
{
	uint32_t n, key, value;
	size_t i, e;
	int fd = -1;

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
		    (prefix ? !basename_matches(buf + base + key, name) :
			      strcmp(buf + base + key, name) != 0))
			continue;
		if ((size_t)snprintf(out, out_sz, "%s", buf + base + value) <
		    out_sz)
			fd = open_candidate(out);
	}
	return fd;
}

/* name in the loader's cache: as it is, else the short form. */
static int search_ld_cache(const char *name, char *out, size_t out_sz)
{
	static const char magic_new[] = "glibc-ld.so.cache1.1";
	static const char magic_old[] = "ld.so-1.7.0";
	size_t len = 0, base = 0;
	uint32_t old_n;
	int fd = -1;
	char *buf = slurp("/etc/ld.so.cache", USDT__LD_CACHE_MAX, &len);

	if (!buf)
		return -1;
	if (len >= 16 && !memcmp(buf, magic_old, sizeof(magic_old) - 1)) {
		memcpy(&old_n, buf + 12, 4);
		base = (16 + (size_t)old_n * 12 + 7) & ~(size_t)7;
	}
	if (base <= len && len - base >= 48 &&
	    !memcmp(buf + base, magic_new, sizeof(magic_new) - 1)) {
		fd = ld_cache_pick(buf, len, base, name, false, out, out_sz);
		if (fd < 0)
			fd = ld_cache_pick(buf, len, base, name, true, out,
					   out_sz);
	}
	free(buf);
	return fd;
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
	while (fd < 0 && usdt__maps_next(f, &line, &cap, &m) > 0) {
		if (!basename_matches(m.path, name))
			continue;
		fd = usdt__open_mapping(pid, &m, out, out_sz);
		if (fd >= 0 && !fd_is_host_elf(fd)) {
			close(fd);
			fd = -1;
		}
	}
	free(line);
	fclose(f);
	return fd < 0 ? -1 : fd;
}

/* Is a bare name a library's ("libc", "libfoo.so.1", "ld-linux.so.2")? */
static bool is_lib_name(const char *name)
{
	return !strncmp(name, "lib", 3) || strstr(name, ".so");
}

int usdt__resolve_open(pid_t pid, const char *name, char *out, size_t out_sz)
{
	/* Where a shell looks without PATH (root's, on Debian). */
	static const char path_dflt[] =
		"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
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
	if (fd < 0 && !is_lib_name(name))
		fd = search_list(getenv("PATH") ? getenv("PATH") : path_dflt,
				 name, true, out, out_sz);
	if (fd < 0)
		fd = search_list(getenv("LD_LIBRARY_PATH"), name, false, out,
				 out_sz);
	if (fd < 0)
		fd = search_ld_cache(name, out, out_sz);
	if (fd < 0)
		fd = search_list(dirs, name, false, out, out_sz);
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
