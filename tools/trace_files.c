// SPDX-License-Identifier: BSD-2-Clause
/*
 * Which files `usdt trace` reads: those the user named (each found as the
 * dynamic loader would, a glob's matches in order), or with `-p PID`
 * alone every file the process maps; a file deleted or replaced on disk
 * since the process mapped it is read through /proc/PID/map_files
 * (tools/common.c's target_open()).
 */
#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "usdt_tool.h"
#include "trace.h"

/* With pid > 0, an absolute path the process maps: the file it maps,
 * even if the path now names another one. */
static int mapped_path(const char *name, pid_t pid, struct trace_file *out)
{
	struct target *list;
	size_t len = strlen(name);
	int cnt, i, err = -ENOENT;

	if (pid <= 0 || name[0] != '/')
		return -ENOENT;
	cnt = targets_of_pid(pid, &list);
	for (i = 0; i < cnt; i++) {
		const char *s = list[i].shown;

		if (strncmp(s, name, len) ||
		    (s[len] && strcmp(s + len, " (deleted)")))
			continue;
		out->target = list[i];
		memset(&list[i], 0, sizeof(list[i]));
		err = 0;
		break;
	}
	if (cnt >= 0)
		targets_free(list, cnt);
	return err;
}

int trace_file_resolve(const char *name, pid_t pid, struct trace_file *out)
{
	memset(out, 0, sizeof(*out));
	if (!mapped_path(name, pid, out))
		return 0;
	return target_resolve(name, pid, &out->target);
}

/* Room for n more files; 0 or -ENOMEM. */
static int files_grow(struct trace_file **files, int cnt, size_t n)
{
	struct trace_file *v = realloc(*files, ((size_t)cnt + n) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	memset(v + cnt, 0, n * sizeof(*v));
	*files = v;
	return 0;
}

static int add_globbed(const char *word, pid_t pid, int group,
		       struct trace_file **files, int *cnt)
{
	glob_t g;
	size_t i;
	int err;

	err = glob(word, 0, NULL, &g);
	if (err) {
		globfree(&g);
		return err == GLOB_NOSPACE ? -ENOMEM : -ENOENT;
	}
	if (g.gl_pathc > TRACE_GLOB_MAX) {
		globfree(&g);
		return -E2BIG;
	}
	err = files_grow(files, *cnt, g.gl_pathc);
	for (i = 0; !err && i < g.gl_pathc; i++) {
		struct trace_file *f = &(*files)[*cnt];

		if (trace_file_resolve(g.gl_pathv[i], pid, f))
			continue; /* gone since, or not for this pid */
		f->group = group;
		f->globbed = true;
		++*cnt;
	}
	globfree(&g);
	return err;
}

int trace_files_add(const char *word, pid_t pid, int group,
		    struct trace_file **files, int *cnt)
{
	struct trace_file *f;
	int err;

	/* A glob is expanded in the tool's view of the file system. */
	if (strpbrk(word, "*?[") && access(word, F_OK))
		return add_globbed(word, pid, group, files, cnt);
	err = files_grow(files, *cnt, 1);
	if (err)
		return err;
	f = &(*files)[*cnt];
	err = trace_file_resolve(word, pid, f);
	if (err)
		return err;
	f->group = group;
	++*cnt;
	return 0;
}

int trace_files_of_pid(pid_t pid, struct trace_file **out)
{
	struct target *list;
	int cnt, i;

	*out = NULL;
	cnt = targets_of_pid(pid, &list);
	if (cnt <= 0)
		return cnt;
	*out = calloc((size_t)cnt, sizeof(**out));
	if (!*out) {
		targets_free(list, cnt);
		return -ENOMEM;
	}
	for (i = 0; i < cnt; i++)
		(*out)[i].target = list[i];
	free(list); /* the strings moved */
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

/* Open a file to trace; 0, or -errno of the open. */
int trace_open_file(struct trace_file *f)
{
	struct stat st;

	f->file = target_open(&f->target);
	if (!f->file)
		return -errno;
	/* By the path that reached it: inside the process's root. */
	if (!f->ino && !usdt__stat_path(usdt_file__path(f->file), &st)) {
		f->dev = st.st_dev;
		f->ino = st.st_ino;
	}
	return 0;
}
