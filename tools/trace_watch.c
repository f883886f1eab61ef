// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace -p PID` without a TARGET traces every file the process maps,
 * and those it maps later too (a library it dlopen()s, the program it
 * execs): every 0.2 s the tool looks at the process's maps again, and
 * attaches the matching probes of each file it had not seen, into room
 * the BPF maps keep for them (TRACE_WATCH_SPARE probes). A hit between
 * the mapping and that look is missed.
 *
 * A look at unchanged maps only reads and hashes their text; they are
 * parsed only when it differs from the last look's (a process mapping
 * thousands of files cost seconds of CPU every ten seconds when each look
 * parsed them and searched every name ever seen). Which files were read
 * is kept in two sets of names (struct watch_state), always disjoint:
 *   kept:   the files of r->files that have probes in the table: read
 *           once for the whole run, so never attached twice;
 *   mapped: every other file mapped at the last look that parsed, read
 *           then (its usdt_file closed since); made anew at each such
 *           look, so a file no longer mapped is forgotten (and read again
 *           if it is mapped again).
 * What the tool holds follows what is mapped now, plus the files with
 * probes and the names of those mapped at the start.
 *
 * Files named by path, traced in every process, are followed instead
 * when their path comes to name another file (trace_follow_scan()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "usdt_tool.h"
#include "trace.h"

/* The process the watch looks at: -p's, or -c's command. */
static pid_t watch_pid(const struct trace_run *r)
{
	return r->o.pid ? r->o.pid : r->attach_pid;
}

/* Attach probes [from, r->ctx.probe_cnt) of the newest file; how many
 * were. */
static size_t attach_new(struct trace_run *r, size_t from, size_t *sites)
{
	size_t i, ok = 0;

	for (i = from; i < r->ctx.probe_cnt; i++) {
		struct probe_ent *p = &r->ctx.probes[i];

		if (trace_check_fmts(p) || trace_set_probe_cfg(r, (uint32_t)i))
			continue; /* said */
		p->link = trace_attach_one(r, i);
		if (!p->link) {
			probe_err(p, "warning: skipped: %s",
				  trace_attach_why(r, p, errno));
			continue;
		}
		*sites += usdt_link__site_cnt(p->link);
		ok++;
	}
	return ok;
}

/*
 * A file opened to be traced (one the watch or -a found mapped, or a
 * followed path's new file): its matching probes into the table, the BPF
 * maps and links, and it into r->files (*f then zeroed) if it has any
 * that fit; how ends the line that says so ("mapped since"). 0 or the
 * exit status (out of memory).
 */
int trace_add_file(struct trace_run *r, struct trace_file *f, const char *how)
{
	size_t from = r->ctx.probe_cnt, sites_from = r->ctx.site_cnt;
	size_t sites = 0, ok;
	int fi = r->file_cnt;
	struct trace_file *v;

	if (trace_build_table(f, fi, &r->groups[f->group].sel, &r->ctx))
		return tool_err("trace: out of memory");
	if (r->ctx.probe_cnt > r->probe_cap) {
		if (!r->watch_full)
			tool_err("trace: warning: %s: no room for its probes (more than %d probes of files %s since the start)",
				 f->target.shown,
				 r->watch || r->all ? TRACE_WATCH_SPARE :
						      TRACE_FOLLOW_SPARE,
				 r->watch || r->all ? "mapped" : "replaced");
		r->watch_full = true;
		r->ctx.probe_cnt = from;
	}
	/* The table may have moved, even with nothing added. */
	sum_set_probes(r->sums, r->ctx.probes, r->ctx.probe_cnt);
	if (r->ctx.probe_cnt == from) {
		r->ctx.site_cnt = sites_from;
		return 0;
	}
	r->groups[f->group].found = true;
	v = realloc(r->files, ((size_t)fi + 1) * sizeof(*v));
	if (!v)
		return tool_err("trace: out of memory");
	r->files = v;
	v[fi] = *f;
	memset(f, 0, sizeof(*f));
	r->file_cnt++;
	if (r->watch && name_set_add(&r->ws.kept, v[fi].target.shown) < 0)
		return tool_err("trace: out of memory");
	ok = attach_new(r, from, &sites);
	r->attached += ok;
	if (ok && !r->o.quiet)
		fprintf(stderr,
			"%s: tracing %zu more probe%s (%zu call site%s) in %s, %s\n",
			tool_name, ok, ok == 1 ? "" : "s", sites,
			sites == 1 ? "" : "s", r->files[fi].target.shown, how);
	return 0;
}

/* A file the last look did not see: opened, then as trace_add_file().
 * 0 or the exit status. */
static int add_mapped(struct trace_run *r, struct trace_file *f)
{
	if (trace_open_file(f))
		return 0; /* not a file of ours */
	return trace_add_file(r, f,
			      r->watch ? "mapped since" :
					 "replaced on disk since");
}

/* Stop following: said once, with why. */
static void follow_stop(struct trace_run *r, const char *shown, const char *why)
{
	tool_err("trace: warning: %s was replaced on disk, and processes that start it from now on are not traced: %s",
		 shown, why);
	r->follow = false;
}

/*
 * Named files, every process: a path that comes to name another file (a
 * package upgrade renames a new one over it) is followed, its new file's
 * matching probes attached beside the old one's, which the processes
 * still running it keep firing. A stat() of each path every 0.2 s; at
 * most TRACE_FOLLOW_MAX files followed in all, and none where probes are
 * attached a pattern at a time (their call sites are set at the start):
 * past that the tool says it stops following.
 */
int trace_follow_scan(struct trace_run *r)
{
	int i, n = r->file_cnt, err;
	struct trace_file nf;
	struct stat st;

	for (i = 0; i < n && r->follow; i++) {
		struct trace_file *f = &r->files[i];

		if (f->replaced || !f->file || !f->ino ||
		    usdt__stat_path(f->target.open_path, &st) ||
		    (st.st_dev == f->dev && st.st_ino == f->ino) ||
		    !S_ISREG(st.st_mode))
			continue;
		f->replaced = true;
		if (r->by_pattern)
			follow_stop(r, f->target.shown,
				    "its probes are attached a pattern at a time");
		else if (r->follow_cnt++ >= TRACE_FOLLOW_MAX)
			follow_stop(r, f->target.shown,
				    "files were replaced too many times");
		if (!r->follow)
			break;
		if (trace_file_resolve(f->target.open_path, 0, &nf))
			continue; /* gone again: the next look sees */
		nf.group = f->group;
		nf.globbed = f->globbed;
		err = add_mapped(r, &nf); /* may move r->files */
		target_free(&nf.target);
		usdt_file__close(nf.file);
		if (err)
			return err;
	}
	return 0;
}

static void names_free(char **names, size_t cnt)
{
	size_t i;

	for (i = 0; i < cnt; i++)
		free(names[i]);
	free(names);
}

/*
 * The first look: the files of the start go to kept if they have probes
 * in the table, else to mapped (their usdt_file closed: nothing reads
 * them again). 0 or -ENOMEM.
 */
static int watch_start(struct trace_run *r)
{
	struct watch_state *w = &r->ws;
	bool *has = calloc((size_t)r->file_cnt + 1, sizeof(*has));
	int i, err = 0;
	size_t k;

	w->names = calloc((size_t)r->file_cnt + 1, sizeof(*w->names));
	if (!has || !w->names) {
		free(has);
		return -ENOMEM;
	}
	for (k = 0; k < r->ctx.probe_cnt; k++)
		has[r->ctx.probes[k].file] = true;
	for (i = 0; i < r->file_cnt && err >= 0; i++) {
		struct trace_file *f = &r->files[i];
		char *name;

		if (has[i]) {
			err = name_set_add(&w->kept, f->target.shown);
			continue;
		}
		usdt_file__close(f->file);
		f->file = NULL;
		name = strdup(f->target.shown);
		if (!name)
			break;
		w->names[w->name_cnt++] = name;
		err = name_set_add(&w->mapped, name);
	}
	free(has);
	if (err < 0 || i < r->file_cnt)
		return -ENOMEM;
	w->started = true;
	return 0;
}

/*
 * Has the process's maps text changed since the last call? It is read in
 * one pass and only hashed. Unreadable counts as changed: the parse that
 * follows finds out why. A change between this read and the parse is
 * seen at the next look (its text then differs from the one hashed here).
 */
static bool maps_changed(struct trace_run *r)
{
	struct watch_state *w = &r->ws;
	uint64_t h = 0;
	size_t len = 0, n, i;
	char buf[16384];
	uint32_t word;
	FILE *f;

	f = usdt__maps_open(watch_pid(r));
	if (!f)
		return true;
	/* 4 bytes a step; fread() fills buf but at the end, so where the
	 * words fall follows from the length. */
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (i = 0; i + 4 <= n; i += 4) {
			memcpy(&word, buf + i, 4);
			h = tool_hash_step(h, word);
		}
		for (; i < n; i++)
			h = tool_hash_step(h, (unsigned char)buf[i]);
		len += n;
	}
	if (ferror(f))
		len = 0; /* matches no later read */
	fclose(f);
	if (len && len == w->maps_len && h == w->maps_hash)
		return false;
	w->maps_len = len;
	w->maps_hash = h;
	return true;
}

/*
 * The group a mapped file is traced as: with -p PID alone, the one group;
 * else that of a TARGET waiting for a file of its name (the file name as
 * given, or a name it begins, the rest a version: "libfoo.so" names
 * libfoo.so.1). -1: none.
 */
static int group_of(const struct trace_run *r, const char *shown)
{
	const char *base = strrchr(shown, '/');
	size_t len;
	int g;

	if (!r->o.pat_from)
		return 0;
	base = base ? base + 1 : shown;
	for (g = 0; g < r->group_cnt; g++) {
		if (!r->groups[g].wait_mapped)
			continue;
		len = strlen(r->groups[g].target);
		if (!strncmp(base, r->groups[g].target, len) &&
		    (!base[len] || base[len] == '.' || base[len] == ' '))
			return g;
	}
	return -1;
}

/*
 * Read the files of list (what the process maps now) that are in neither
 * set, and make mapped the names of list not kept. 0 or the exit status.
 */
static int watch_look(struct trace_run *r, struct trace_file *list, int cnt)
{
	struct watch_state *w = &r->ws;
	struct name_set now = { 0 };
	char **names = calloc((size_t)cnt + 1, sizeof(*names));
	size_t n = 0;
	int i, err = 0;

	if (!names)
		return tool_err("trace: out of memory");
	for (i = 0; i < cnt && !err; i++) {
		char *name = list[i].target.shown;

		if (name_set_has(&w->kept, name))
			continue;
		list[i].group = group_of(r, name);
		if (list[i].group >= 0 && !name_set_has(&w->mapped, name)) {
			err = add_mapped(r, &list[i]);
			if (err || !list[i].target.shown)
				continue; /* failed, or now kept */
		}
		if (name_set_add(&now, name) < 0)
			err = tool_err("trace: out of memory");
		names[n++] = name; /* owned from here */
		list[i].target.shown = NULL;
	}
	if (err) {
		name_set_free(&now);
		names_free(names, n);
		return err;
	}
	name_set_free(&w->mapped);
	names_free(w->names, w->name_cnt);
	w->mapped = now;
	w->names = names;
	w->name_cnt = n;
	return 0;
}

int trace_watch_scan(struct trace_run *r)
{
	struct trace_file *list;
	int cnt, err;

	if (!r->ws.started && watch_start(r))
		return tool_err("trace: out of memory");
	if (!maps_changed(r))
		return 0;
	if (watch_pid(r) <= 0)
		return 0; /* -c's command not started yet */
	cnt = trace_files_of_pid(watch_pid(r), &list);
	if (cnt <= 0) {
		r->ws.maps_len = 0; /* parsed again next time */
		return 0; /* gone, or unreadable now: trace_over() says */
	}
	err = watch_look(r, list, cnt);
	trace_files_free(list, cnt);
	return err;
}

void trace_watch_free(struct trace_run *r)
{
	name_set_free(&r->ws.kept);
	name_set_free(&r->ws.mapped);
	names_free(r->ws.names, r->ws.name_cnt);
	memset(&r->ws, 0, sizeof(r->ws));
}
