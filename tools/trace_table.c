// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace`: the table of probes (step 1 of tools/trace_cmd.c's order).
 * The patterns and formats the user gave, matched against each traced
 * file's probes: one entry per probe, its index its cookie, with how to
 * print each argument of each call site.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "trace.h"

void trace_selection_free(struct selection *sel)
{
	int i;

	for (i = 0; sel->fmts && i < sel->pat_cnt; i++)
		free(sel->fmts[i].text);
	patterns_free(sel->pats, sel->pat_cnt);
	free(sel->fmts);
	free(sel->has_fmt);
	memset(sel, 0, sizeof(*sel));
}

/* The patterns and formats of o->pos[from..to). */
int trace_selection_parse(const struct trace_opts *o, int from, int to,
			  struct selection *sel)
{
	size_t max = (size_t)o->pos_cnt + (size_t)o->enable_cnt + 2;
	char **words = calloc(max, sizeof(*words));
	const char **fmt_of = calloc(max, sizeof(*fmt_of));
	int i, n = 0, err = 1;
	char why[160];

	memset(sel, 0, sizeof(*sel));
	if (!words || !fmt_of) {
		free(words);
		free(fmt_of);
		return tool_err("trace: out of memory");
	}
	if (o->sum.mode == TRACE_LATENCY) {
		if (to > from) {
			tool_err(
				"trace: with --latency, START and END are the probes");
			goto out;
		}
		words[n] = (char *)o->sum.lat_start;
		fmt_of[n++] = NULL;
		words[n] = (char *)o->sum.lat_end;
		fmt_of[n++] = NULL;
	}
	for (i = from; i < to; i++) {
		if (!strchr(o->pos[i], '%')) {
			words[n] = o->pos[i];
			fmt_of[n++] = NULL;
		} else if (!n || fmt_of[n - 1]) {
			tool_err("trace: format '%s' follows no pattern",
				 o->pos[i]);
			goto out;
		} else {
			fmt_of[n - 1] = o->pos[i];
		}
	}
	if (!n && o->enable_cnt)
		words[n++] = (char *)"*:*"; /* no pattern: every probe */
	sel->quiet_from = n;
	for (i = 0; i < o->enable_cnt; i++) {
		words[n] = o->enables[i];
		fmt_of[n++] = NULL;
	}
	sel->fmts = calloc((size_t)n + 1, sizeof(*sel->fmts));
	sel->has_fmt = calloc((size_t)n + 1, sizeof(*sel->has_fmt));
	if (!sel->fmts || !sel->has_fmt ||
	    patterns_parse(words, n, &sel->pats, &sel->pat_cnt)) {
		tool_err("trace: out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (!fmt_of[i])
			continue;
		if (fmt_parse_word(fmt_of[i], &sel->fmts[i], why,
				   sizeof(why))) {
			tool_err("trace: format '%s': %s", fmt_of[i], why);
			goto out;
		}
		sel->has_fmt[i] = true;
	}
	err = 0;
out:
	free(words);
	free(fmt_of);
	if (err)
		trace_selection_free(sel);
	return err;
}

/*
 * provider:name -> index in the table, open addressing; the table has
 * room for every call site, so building it is linear whatever the names:
 * they come from files other users write, so the hash is tool_hash_step()'s,
 * keyed at random once per run, where a fixed hash would let a file choose
 * names that all collide and make the build quadratic.
 */
struct probe_index {
	uint32_t *slots; /* index + 1, 0 empty */
	size_t mask;
};

static size_t name_hash(const char *provider, const char *name)
{
	uint64_t h = 0;

	for (; *provider; provider++)
		h = tool_hash_step(h, (unsigned char)*provider);
	h = tool_hash_step(h, 256);
	for (; *name; name++)
		h = tool_hash_step(h, (unsigned char)*name);
	return (size_t)(h ^ h >> 29);
}

/* The slot of provider:name: its entry, or the empty slot for it. */
static uint32_t *index_slot(struct probe_index *ix, const struct probe_ent *t,
			    const char *provider, const char *name)
{
	size_t i = name_hash(provider, name) & ix->mask;

	while (ix->slots[i]) {
		const struct probe_ent *e = &t[ix->slots[i] - 1];

		if (!strcmp(e->provider, provider) && !strcmp(e->name, name))
			break;
		i = (i + 1) & ix->mask;
	}
	return &ix->slots[i];
}

/* The types of a call site's arguments; the reasons of unreadable ones. */
static void site_types(const struct usdt_probe *p, int cnt,
		       struct arg_fmt *args, const char **reasons)
{
	int j;

	for (j = 0; j < cnt; j++) {
		struct usdt_arg_info a = { .sz = sizeof(a) };

		memset(&args[j], 0, sizeof(args[j]));
		args[j].size = 8;
		if (usdt_probe__arg(p, j, &a) < 0)
			continue;
		args[j].size = a.size;
		args[j].is_signed = a.is_signed;
		args[j].is_float = a.is_float;
		if (reasons && a.kind == USDT_ARG_UNSUPPORTED)
			reasons[j] = a.reason;
	}
}

static int site_arg_cnt(const struct usdt_probe *p)
{
	int n = usdt_probe__arg_cnt(p);

	return n > TRACE_MAX_ARGS ? TRACE_MAX_ARGS : n < 0 ? 0 : n;
}

static void warn_bad_site(const struct usdt_probe *p)
{
	fputs("usdt: trace: warning: skipping the call site of ", stderr);
	print_escaped(stderr, usdt_probe__provider(p),
		      strlen(usdt_probe__provider(p)));
	fputc(':', stderr);
	print_escaped(stderr, usdt_probe__name(p), strlen(usdt_probe__name(p)));
	fprintf(stderr, " at 0x%" PRIx64 ": %s\n", usdt_probe__address(p),
		usdt_probe__error(p) ? usdt_probe__error(p) : "malformed note");
}

/* The formats of the patterns from pat on that match p, in order (each
 * prints a line per hit). */
static void entry_fmts(struct probe_ent *e, const struct usdt_probe *p,
		       const struct selection *sel, int pat)
{
	int j;

	for (j = pat; j < sel->pat_cnt; j++) {
		if (!sel->has_fmt[j] ||
		    !patterns_match(&sel->pats[j], 1, usdt_probe__provider(p),
				    usdt_probe__name(p)))
			continue;
		if (e->fmt_cnt == TRACE_PROBE_FMTS) {
			probe_err(e,
				  "warning: more than %d formats; the rest are left out",
				  TRACE_PROBE_FMTS);
			return;
		}
		e->fmts[e->fmt_cnt++] = &sel->fmts[j];
	}
}

/* A new entry for call site p, matched by pattern pat of sel first. */
static void entry_init(struct probe_ent *e, const struct usdt_probe *p,
		       const struct selection *sel, int pat)
{
	e->provider = usdt_probe__provider(p);
	e->name = usdt_probe__name(p);
	e->arg_cnt = site_arg_cnt(p);
	site_types(p, e->arg_cnt, e->args, e->reasons);
	if (sel->pat_cnt)
		entry_fmts(e, p, sel, pat);
	if (sel->pat_cnt && pat >= sel->quiet_from)
		e->role = TRACE_ROLE_QUIET;
}

/* Room in the table for n more probes and call sites. */
static int table_grow(struct trace_ctx *ctx, size_t n)
{
	struct probe_ent *t;
	struct site_ref *s;

	t = realloc(ctx->probes, (ctx->probe_cnt + n + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	memset(t + ctx->probe_cnt, 0, (n + 1) * sizeof(*t));
	ctx->probes = t;
	s = realloc(ctx->site_refs, (ctx->site_cnt + n + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	ctx->site_refs = s;
	return 0;
}

/* Mark the patterns after first that p matches too as used. */
static void mark_later(struct selection *sel, const struct pattern *first,
		       const struct usdt_probe *p)
{
	int j;

	if (!sel->pat_cnt)
		return;
	for (j = (int)(first - sel->pats) + 1; j < sel->pat_cnt; j++)
		patterns_match(&sel->pats[j], 1, usdt_probe__provider(p),
			       usdt_probe__name(p));
}

/*
 * Add one entry per distinct provider:name of file number fi that a
 * pattern matches, in note order, and one site_ref per call site. Broken
 * call sites are skipped with a warning.
 */
int trace_build_table(struct trace_file *tf, int fi, struct selection *sel,
		      struct trace_ctx *ctx)
{
	size_t i, n = usdt_file__probe_cnt(tf->file);
	struct probe_index ix = { 0 };
	int err = -ENOMEM;

	for (ix.mask = 1; ix.mask < 2 * n + 2; ix.mask <<= 1)
		;
	ix.slots = calloc(ix.mask--, sizeof(*ix.slots));
	if (!ix.slots || table_grow(ctx, n))
		goto out;
	for (i = 0; i < n; i++) {
		const struct usdt_probe *p = usdt_file__probe(tf->file, i);
		struct probe_ent *e = &ctx->probes[ctx->probe_cnt];
		struct site_ref *ref = &ctx->site_refs[ctx->site_cnt];
		struct pattern *pat;
		uint32_t *slot;

		pat = p ? patterns_match(sel->pats, sel->pat_cnt,
					 usdt_probe__provider(p),
					 usdt_probe__name(p)) :
			  NULL;
		if (!pat)
			continue;
		mark_later(sel, pat, p);
		if (usdt_probe__status(p) < 0) {
			warn_bad_site(p);
			continue;
		}
		slot = index_slot(&ix, ctx->probes, usdt_probe__provider(p),
				  usdt_probe__name(p));
		if (!*slot) {
			entry_init(e, p, sel,
				   sel->pat_cnt ? (int)(pat - sel->pats) : 0);
			e->file = fi;
			e->dev = tf->dev;
			e->ino = tf->ino;
			*slot = (uint32_t)++ctx->probe_cnt;
		}
		ref->off = usdt_probe__file_offset(p);
		ref->probe = *slot - 1;
		ref->file = (uint32_t)fi;
		ctx->site_cnt++;
	}
	err = 0;
out:
	free(ix.slots);
	return err;
}

/* Do p's formats fit its arguments, and their string reads each other's?
 * Merges the reads into p->str_cfg. 0 or the exit status. */
/*
 * A %.*s takes its length first, then the string, as printf does; HotSpot
 * and most probes pass (pointer, length). Where the string's argument
 * cannot be a pointer (signed, or narrower than one) and the length's
 * looks like one, say how the pair is written the other way round. A
 * warning: the types are the first site's.
 */
static void hint_swapped(const struct probe_ent *p, const struct probe_fmt *pf)
{
	int i;

	for (i = 0; i < pf->conv_cnt; i++) {
		const struct conv *cv = &pf->convs[i];
		int a = cv->arg, m = cv->prec_arg;

		if (cv->c != 's' || m < 0 || a >= p->arg_cnt ||
		    m >= p->arg_cnt || !p->args[a].size ||
		    p->args[a].is_float ||
		    (p->args[a].size == 8 && !p->args[a].is_signed) ||
		    p->args[m].size != 8 || p->args[m].is_signed)
			continue;
		probe_err(p,
			  "warning: %%.*s takes the length (argument %d here) before the string (argument %d: %s, %d bytes, no pointer); for a (pointer, length) pair write %%%d$.*%d$s, or '\"%%s\", str(arg%d, arg%d)'",
			  m, a, p->args[a].is_signed ? "signed" : "unsigned",
			  p->args[a].size, m + 1, a + 1, m, a);
	}
}

int trace_check_fmts(struct probe_ent *p)
{
	int k;

	for (k = 0; k < p->fmt_cnt; k++) {
		hint_swapped(p, p->fmts[k]);
		if (p->fmts[k]->arg_need > p->arg_cnt)
			return probe_err(p,
					 "has %d arguments; its format wants %d",
					 p->arg_cnt, p->fmts[k]->arg_need);
		if (fmt_cfg_merge(&p->str_cfg, &p->fmts[k]->str_cfg))
			return probe_err(p,
					 "two formats read one argument as a string in two ways (%%.*s and %%s, or two lengths), or have different typed loads");
	}
	return 0;
}

/* The highest argument the filter compares, or -1. */
static int filter_max_arg(const char *expr)
{
	struct trace_filter f;
	char why[240];
	int max = -1;
	__u32 i;

	memset(&f, 0, sizeof(f));
	if (!expr || filter_parse(expr, &f, why, sizeof(why)))
		return -1; /* said when the program is set up */
	for (i = 0; i < f.term_cnt; i++) {
		if (f.terms[i].operand < TRACE_MAX_ARGS &&
		    (int)f.terms[i].operand > max)
			max = f.terms[i].operand;
		if ((int)f.terms[i].len_arg - 1 > max)
			max = f.terms[i].len_arg - 1;
	}
	return max;
}

/*
 * Does some probe have argument arg (what --hist, --by or the filter
 * reads)? If none: the error, with how arguments are numbered (from arg0,
 * as bpftrace; bcc's tools count from arg1). For the filter, a probe
 * without it is said: a term on it never holds there.
 */
static int check_arg_known(const struct trace_ctx *ctx, int arg,
			   const char *what)
{
	bool any = false;
	size_t i;

	for (i = 0; i < ctx->probe_cnt; i++)
		any |= ctx->probes[i].arg_cnt > arg;
	if (!any)
		return tool_err("trace: no matching probe has argument %d, which %s reads (arguments count from arg0, as in bpftrace; bcc's arg1 is arg0 here)",
				arg, what);
	if (strcmp(what, "the filter"))
		return 0;
	for (i = 0; i < ctx->probe_cnt; i++)
		if (ctx->probes[i].arg_cnt <= arg)
			probe_err(&ctx->probes[i],
				  "warning: has %d argument%s: the filter's terms on arg%d never hold for it",
				  ctx->probes[i].arg_cnt,
				  ctx->probes[i].arg_cnt == 1 ? "" : "s", arg);
	return 0;
}

/* Roles for --latency and the formats' fit; 0 or the exit status. */
int trace_check_table(struct trace_ctx *ctx, const struct trace_opts *o,
		      const struct selection *sel)
{
	uint32_t roles = 0;
	size_t i;
	int err;

	for (i = 0; i < ctx->probe_cnt; i++) {
		struct probe_ent *p = &ctx->probes[i];

		if (o->sum.mode == TRACE_LATENCY) {
			p->role &= TRACE_ROLE_QUIET;
			p->role |= patterns_match(sel->pats, 1, p->provider,
						  p->name) ?
					   TRACE_ROLE_START :
					   0;
			p->role |= patterns_match(sel->pats + 1, 1, p->provider,
						  p->name) ?
					   TRACE_ROLE_END :
					   0;
			if (p->role == (TRACE_ROLE_START | TRACE_ROLE_END))
				return probe_err(p,
						 "matches both START and END");
			roles |= p->role & (TRACE_ROLE_START | TRACE_ROLE_END);
		}
		err = trace_check_fmts(p);
		if (err)
			return err;
	}
	if (o->sum.mode == TRACE_LATENCY &&
	    roles != (TRACE_ROLE_START | TRACE_ROLE_END))
		return tool_err("trace: no probe matches %s",
				roles & TRACE_ROLE_START ? o->sum.lat_end :
							   o->sum.lat_start);
	if (o->sum.mode == TRACE_HIST &&
	    check_arg_known(ctx, o->sum.hist_arg, "--hist"))
		return 1;
	if (o->sum.sum_arg >= 0 &&
	    check_arg_known(ctx, o->sum.sum_arg, "--sum"))
		return 1;
	for (i = 0; i < (size_t)o->sum.by_cnt; i++) {
		const struct trace_by_part *bp = &o->sum.by[i];

		if (check_arg_known(ctx, bp->arg, "--by") ||
		    (bp->len_arg &&
		     check_arg_known(ctx, bp->len_arg - 1, "--by")))
			return 1;
	}
	err = filter_max_arg(o->filter);
	return err >= 0 ? check_arg_known(ctx, err, "the filter") : 0;
}
