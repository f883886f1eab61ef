// SPDX-License-Identifier: BSD-2-Clause
/*
 * Which files `usdt trace` reads: the one the user named, found as the
 * dynamic loader would (usdt_resolve_path()), or with `-p PID` alone every
 * file the process maps, including one replaced or deleted on disk since
 * it was mapped (reached through /proc/PID/map_files/START-END).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "trace.h"

/* With pid > 0, an absolute path the process maps: the file it maps,
 * even if the path now names another one. */
static int mapped_path(const char *name, pid_t pid, struct trace_file *out)
{
	struct trace_file *list;
	int cnt, i, err = -ENOENT;

	if (pid <= 0 || name[0] != '/')
		return -ENOENT;
	cnt = trace_files_of_pid(pid, &list);
	for (i = 0; i < cnt; i++) {
		if (strcmp(list[i].target.shown, name))
			continue;
		*out = list[i];
		memset(&list[i], 0, sizeof(list[i]));
		err = 0;
		break;
	}
	if (cnt >= 0)
		trace_files_free(list, cnt);
	return err;
}

int trace_file_resolve(const char *name, pid_t pid, struct trace_file *out)
{
	char buf[PATH_MAX];
	int err;

	memset(out, 0, sizeof(*out));
	if (!mapped_path(name, pid, out))
		return 0;
	err = usdt_resolve_path(pid > 0 ? pid : -1, name, buf, sizeof(buf));
	if (err)
		return err;
	out->target.shown = strdup(name);
	out->target.open_path = strdup(buf);
	if (!out->target.shown || !out->target.open_path) {
		target_free(&out->target);
		return -ENOMEM;
	}
	return 0;
}

/* Is the file at path the inode dev/ino? */
static bool is_inode(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && st.st_dev == dev &&
	       st.st_ino == ino;
}

/* One mapping of /proc/PID/maps: the file as a path that reaches that
 * very inode, or false. */
static bool mapping_path(pid_t pid, const char *line, struct trace_file *f)
{
	unsigned long long start, end, ino;
	unsigned int maj, min;
	const char *path = strchr(line, '/');
	char *p;
	size_t len;

	if (!path || sscanf(line, "%llx-%llx %*s %*s %x:%x %llu", &start,
			    &end, &maj, &min, &ino) != 5 || !ino)
		return false;
	len = strcspn(path, "\n");
	if (len > 10 && !strncmp(path + len - 10, " (deleted)", 10))
		len -= 10;
	memset(f, 0, sizeof(*f));
	f->dev = makedev(maj, min);
	f->ino = (ino_t)ino;
	f->target.shown = strndup(path, len);
	if (!f->target.shown ||
	    asprintf(&p, "/proc/%d/root%s", (int)pid, f->target.shown) < 0)
		goto fail;
	if (!is_inode(p, f->dev, f->ino)) {
		/* Replaced or deleted: the mapping itself (needs root). */
		free(p);
		if (asprintf(&p, "/proc/%d/map_files/%llx-%llx", (int)pid,
			     start, end) < 0)
			goto fail;
	}
	f->target.open_path = p;
	return true;
fail:
	target_free(&f->target);
	return false;
}

static bool seen(const struct trace_file *t, int cnt, dev_t dev, ino_t ino)
{
	int i;

	for (i = 0; i < cnt; i++)
		if (t[i].dev == dev && t[i].ino == ino)
			return true;
	return false;
}

int trace_files_of_pid(pid_t pid, struct trace_file **out)
{
	struct trace_file *list = NULL, f, *tmp;
	char path[64], *line = NULL;
	size_t cap = 0;
	int cnt = 0, err = 0;
	FILE *fp;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return -errno;
	while (getline(&line, &cap, fp) > 0) {
		if (!mapping_path(pid, line, &f))
			continue;
		if (seen(list, cnt, f.dev, f.ino)) {
			target_free(&f.target);
			continue;
		}
		tmp = realloc(list, (size_t)(cnt + 1) * sizeof(*list));
		if (!tmp) {
			target_free(&f.target);
			err = -ENOMEM;
			break;
		}
		list = tmp;
		list[cnt++] = f;
	}
	free(line);
	fclose(fp);
	if (err) {
		trace_files_free(list, cnt);
		return err;
	}
	*out = list;
	return cnt;
}

void trace_files_free(struct trace_file *t, int cnt)
{
	int i;

	for (i = 0; t && i < cnt; i++) {
		target_free(&t[i].target);
		usdt_file__close(t[i].file);
	}
	free(t);
}
