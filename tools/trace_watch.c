// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace -p PID` without a TARGET traces every file the process maps,
 * and those it maps later too (a library it dlopen()s, the program it
 * execs): every 0.2 s the tool reads the process's maps again, and
 * attaches the matching probes of each file it had not seen, into room
 * the BPF maps keep for them (TRACE_WATCH_SPARE probes). A hit between
 * the mapping and that look is missed; each file is read once, whether
 * or not it has probes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* Is the file a maps line shows as name traced, or known to have none? */
static bool file_known(const struct trace_run *r, const char *name)
{
	int i;

	for (i = 0; i < r->file_cnt; i++)
		if (!strcmp(r->files[i].target.shown, name))
			return true;
	return false;
}

/* Attach probes [from, r->ctx.probe_cnt) of file fi; how many were. */
static size_t attach_new(struct trace_run *r, size_t from, size_t *sites)
{
	size_t i, ok = 0;

	for (i = from; i < r->ctx.probe_cnt; i++) {
		struct probe_ent *p = &r->ctx.probes[i];

		if (trace_check_fmts(p) || trace_set_probe_cfg(r, (uint32_t)i))
			continue;	/* said */
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

/* The probes of a file mapped since the start: table, maps, links. */
static int add_mapped(struct trace_run *r, struct trace_file *f, int fi)
{
	size_t from = r->ctx.probe_cnt, sites = 0, ok;

	if (trace_open_file(f))
		return 0;	/* not a file of ours: remembered, not read */
	if (trace_build_table(f, fi, &r->groups[0].sel, &r->ctx))
		return tool_err("trace: out of memory");
	sum_set_probes(r->sums, r->ctx.probes, r->ctx.probe_cnt);
	if (r->ctx.probe_cnt > r->probe_cap) {
		if (!r->watch_full)
			tool_err("trace: warning: %s: no room for its probes (more than %d probes of files mapped since the start)",
				 f->target.shown, TRACE_WATCH_SPARE);
		r->watch_full = true;
		r->ctx.probe_cnt = from;
		sum_set_probes(r->sums, r->ctx.probes, from);
		return 0;
	}
	ok = attach_new(r, from, &sites);
	r->attached += ok;
	if (ok && !r->o.quiet)
		fprintf(stderr, "%s: tracing %zu more probe%s (%zu call site%s) in %s, mapped since\n",
			tool_name, ok, ok == 1 ? "" : "s", sites,
			sites == 1 ? "" : "s", f->target.shown);
	return 0;
}

int trace_watch_scan(struct trace_run *r)
{
	struct trace_file *list, *v;
	int cnt, i, err = 0;

	cnt = trace_files_of_pid(r->o.pid, &list);
	if (cnt <= 0)
		return 0;	/* gone, or unreadable now: trace_over() says */
	for (i = 0; i < cnt && !err; i++) {
		if (file_known(r, list[i].target.shown))
			continue;
		v = realloc(r->files, ((size_t)r->file_cnt + 1) * sizeof(*v));
		if (!v) {
			err = tool_err("trace: out of memory");
			break;
		}
		r->files = v;
		v[r->file_cnt] = list[i];
		memset(&list[i], 0, sizeof(list[i]));
		err = add_mapped(r, &v[r->file_cnt], r->file_cnt);
		r->file_cnt++;
	}
	trace_files_free(list, cnt);
	return err;
}
