// SPDX-License-Identifier: BSD-2-Clause
/*
 * The target file of an attach: in a process (where it runs, whether the
 * process runs it at all), matched by device and inode, never by name; and
 * the files a manager keeps read (its cache of USDT__FILE_CACHE).
 */
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/proc.h"
#include "attach/link.h"

/*
 * Find an executable mapping of the file in process pid, one that maps
 * file offset off, and its run-time address. Matched by device and inode
 * (usdt__mapping_is()), so any name of the file works and no other file
 * with that name does; read-only mappings of the same file (a loader's
 * first look, or anyone's mmap) are not where code runs. Returns 0,
 * -ENOENT, or the error that left a mapping unknown.
 */
int usdt__runtime_addr(pid_t pid, const struct usdt_file *file, uint64_t off,
		       uint64_t *addr)
{
	const struct usdt__map_id *id;
	struct usdt__mapping m;
	char *line = NULL;
	size_t cap = 0;
	int err = usdt__file_map_id(file, &id), is;
	FILE *f;

	if (err)
		return err;
	err = -ENOENT;
	f = usdt__maps_open(pid);
	if (!f)
		return -ENOENT;
	while (err == -ENOENT && usdt__maps_next(f, &line, &cap, &m) > 0) {
		if (!m.exec || off < m.off || off - m.off >= m.end - m.start)
			continue;
		is = usdt__mapping_is(pid, &m, id);
		if (is > 0)
			*addr = m.start + (off - m.off);
		if (is)
			err = is > 0 ? 0 : is;
	}
	free(line);
	fclose(f);
	return err;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The last component of the path the file's descriptor reached, through
 * its symlinks (/usr/bin/python3 -> python3.11), into buf; "" where /proc
 * cannot say. */
static const char *real_base(const struct usdt_file *file, char *buf,
			     size_t size)
{
	char link[32];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", file->fd);
	n = file->fd >= 0 ? readlink(link, buf, size - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	return base_name(buf);
}

/*
 * Can a link for process pid to the file ever fire? Not when the process
 * has no address space (it exited: a zombie), nor when it runs another
 * file of the same name, as given or as its symlinks lead, and not this
 * one (another install of the program, or the file replaced on disk
 * since the process mapped it: the link would wait for a file the process
 * will never map). A process that maps neither may still map the file
 * later (exec, dlopen): *maps says whether it maps it now. Returns 0,
 * -ESRCH, the error that left it unknown (logged), or -ENOMEM.
 */
int usdt__check_process(const struct attach_ctx *c, bool *maps)
{
	const char *base = base_name(c->file->path), *real, *other = NULL;
	const struct usdt__map_id *id;
	struct usdt__mapping m;
	char *line = NULL, buf[PATH_MAX];
	size_t cap = 0;
	int ours = usdt__file_map_id(c->file, &id);
	bool any = false;
	FILE *f;

	if (ours)
		return ours;
	real = real_base(c->file, buf, sizeof(buf));
	f = usdt__maps_open(c->pid);

	while (f && !ours && usdt__maps_next(f, &line, &cap, &m) > 0) {
		any = true;
		if (!m.exec)
			continue;
		ours = usdt__mapping_is(c->pid, &m, id);
		if (!ours && !other && !strcmp(base_name(m.path), base))
			other = base;
		else if (!ours && !other && *real &&
			 !strcmp(base_name(m.path), real))
			other = real;
	}
	free(line);
	if (f)
		fclose(f);
	if (ours < 0) {
		pr_warn("%s:%s: cannot tell whether process %d runs %s: /proc/%d/map_files/: %s%s\n",
			c->provider, c->name, c->pid, c->file->path, c->pid,
			usdt__errstr(ours),
			ours == -EPERM ?
				" (a file on btrfs, or on an overlay before Linux 6.8, is told apart from others there, which needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE)" :
				"");
		return ours;
	}
	/* Nothing mapped: gone, a zombie, or caught in an exec() between
	 * its old image and its new one (maps empty for a moment), which
	 * maps the file later if at all. */
	if (!any && usdt__proc_gone(c->pid)) {
		pr_warn("%s:%s: process %d does not exist or has exited\n",
			c->provider, c->name, c->pid);
		return -ESRCH;
	}
	if (!ours && other) {
		pr_warn("%s:%s: process %d runs another '%s' than %s (another install of it, or replaced on disk since? what it runs is in /proc/%d/map_files/, its executable /proc/%d/exe)\n",
			c->provider, c->name, c->pid, other, c->file->path,
			c->pid, c->pid);
		return -ESRCH;
	}
	*maps = ours > 0;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The files a manager keeps                                              */

static bool file_current(const struct usdt_file *file, const struct stat *st)
{
	return file->dev == st->st_dev && file->ino == st->st_ino &&
	       file->size == st->st_size &&
	       file->mtime.tv_sec == st->st_mtim.tv_sec &&
	       file->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/*
 * The parsed file for the open fd (taken over): one the store read
 * before if it is the same inode, unchanged (size and mtime), else read
 * now and kept, the oldest kept file making room. The store owns the
 * result.
 */
int usdt__file_cached(struct usdt__store *st, int fd, const char *path,
		      struct usdt_file **out)
{
	struct usdt_file *file;
	struct stat sb;
	size_t i, n = USDT__ARRAY_SIZE(st->files);
	int err;

	if (fstat(fd, &sb)) {
		err = -errno;
		close(fd);
		return err;
	}
	for (i = 0; i < n && st->files[i]; i++) {
		file = st->files[i];
		if (!file_current(file, &sb))
			continue;
		/* Most recent first. */
		memmove(&st->files[1], &st->files[0], i * sizeof(file));
		st->files[0] = file;
		close(fd);
		*out = file;
		return 0;
	}
	err = usdt__file_open_fd(fd, path, &file);
	if (err)
		return err;
	usdt_file__close(st->files[n - 1]);
	memmove(&st->files[1], &st->files[0], (n - 1) * sizeof(file));
	st->files[0] = file;
	*out = file;
	return 0;
}

void usdt__file_cache_clear(struct usdt__store *st)
{
	size_t i;

	for (i = 0; i < USDT__ARRAY_SIZE(st->files); i++) {
		usdt_file__close(st->files[i]);
		st->files[i] = NULL;
	}
}
