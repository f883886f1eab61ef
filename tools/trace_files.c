// SPDX-License-Identifier: BSD-2-Clause
/*
 * Which files `usdt trace` reads: the one the user named, found as the
 * dynamic loader would, or with `-p PID` alone every file the process
 * maps; a file deleted or replaced on disk since the process mapped it is
 * read through /proc/PID/map_files (tools/common.c's targets_of_pid()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	free(list);	/* the strings moved */
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
