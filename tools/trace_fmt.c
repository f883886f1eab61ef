// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace`'s event output: one line of text or one JSON object per
 * hit, arguments typed by the call site that fired, or by the user's
 * per-probe format ("%s %d ..."). Text output escapes every byte that
 * could move a terminal (notes, process names and strings come from
 * other users); JSON output is exact.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* ---------------------------------------------------------------------- */
/* Formats                                                                */

/*
 * Parse a format such as "%s called with %d". Conversions take the probe's
 * arguments in order; %% is a literal %. Returns 0 or -EINVAL with why.
 */
int fmt_parse(const char *s, struct probe_fmt *out, char *why, size_t len)
{
	const char *lit = s;

	memset(out, 0, sizeof(*out));
	while (*s) {
		if (*s != '%') {
			s++;
			continue;
		}
		if (s[1] == '%') {
			s += 2;
			continue;
		}
		if (!s[1] || !strchr("sduxpcf", s[1])) {
			snprintf(why, len, "unknown conversion '%%%.1s' (use %%s %%d %%u %%x %%p %%c %%f)",
				 s[1] ? s + 1 : "");
			return -EINVAL;
		}
		if (out->conv_cnt == TRACE_MAX_ARGS) {
			snprintf(why, len, "more than %d conversions",
				 TRACE_MAX_ARGS);
			return -EINVAL;
		}
		out->convs[out->conv_cnt].c = s[1];
		out->convs[out->conv_cnt].lit = lit;
		out->convs[out->conv_cnt].lit_len = (size_t)(s - lit);
		out->conv_cnt++;
		s += 2;
		lit = s;
	}
	out->tail = lit;
	return 0;
}

/* Literal text of a format, with %% made %. */
static void put_lit(FILE *f, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 1 < n && s[i + 1] == '%')
			i++;
		fputc(s[i], f);
	}
}

/* ---------------------------------------------------------------------- */
/* Escaping                                                               */

static void print_name(FILE *f, const char *s, bool json)
{
	if (json)
		json_str(f, s);
	else
		print_escaped(f, s, strlen(s));
}

/* ---------------------------------------------------------------------- */
/* Values                                                                 */

/* The shortest decimal that reads back as the same double. */
static void print_double(FILE *f, double d, bool json)
{
	char buf[40];
	int prec;

	if (!isfinite(d)) {
		fputs(json ? "null" : (isnan(d) ? "nan" :
				       d > 0 ? "inf" : "-inf"), f);
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	fputs(buf, f);
}

static void print_float(FILE *f, float v, bool json)
{
	char buf[40];
	int prec;

	if (!isfinite(v)) {
		print_double(f, v, json);
		return;
	}
	for (prec = 1; prec <= 9; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, (double)v);
		if (strtof(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

/* A float or double argument of size bytes. */
static bool print_fp(FILE *f, int size, uint64_t v, bool json)
{
	if (size == 4) {
		uint32_t bits = (uint32_t)v;
		float fl;

		memcpy(&fl, &bits, sizeof(fl));
		print_float(f, fl, json);
		return true;
	}
	if (size == 8) {
		double d;

		memcpy(&d, &v, sizeof(d));
		print_double(f, d, json);
		return true;
	}
	return false;
}

static void print_value(FILE *f, const struct arg_fmt *fmt, int size,
			uint64_t v, bool json)
{
	if (!size)
		size = fmt->size > 8 ? 8 : fmt->size;
	if (fmt->is_float && print_fp(f, size, v, json))
		return;
	if (size < 8 || fmt->is_signed)
		/* Below 8 bytes, bpf_usdt_arg() has already sign- or
		 * zero-extended the value as this call site's spec says. */
		fprintf(f, "%" PRId64, (int64_t)v);
	else
		fprintf(f, "%" PRIu64, v);
}

/* Argument i of e as conversion c. str: its string, when it has one. */
static void print_conv(FILE *f, char c, const struct usdt_hit *e, int i,
		       const struct arg_fmt *type, const char *str, bool json)
{
	uint64_t v = e->args[i];
	char ch = (char)v;

	switch (c) {
	case 's':
		if (json)
			json_str(f, str);
		else
			print_escaped(f, str, strlen(str));
		break;
	case 'd':
		fprintf(f, "%" PRId64, (int64_t)v);
		break;
	case 'u':
		fprintf(f, "%" PRIu64, v);
		break;
	case 'x':
		fprintf(f, json ? "%" PRIu64 : "%" PRIx64, v);
		break;
	case 'p':
		fprintf(f, json ? "%" PRIu64 : "0x%" PRIx64, v);
		break;
	case 'c':
		if (json) {
			char s[2] = { ch, 0 };

			json_str(f, s);
		} else {
			print_escaped(f, &ch, 1);
		}
		break;
	case 'f':
		/* An integer argument prints as its value. */
		if (!type->is_float ||
		    !print_fp(f, e->sizes[i] ? e->sizes[i] : type->size, v,
			      json))
			print_double(f, type->is_signed || e->sizes[i] < 8 ?
				     (double)(int64_t)v : (double)v, json);
		break;
	}
}

/* ---------------------------------------------------------------------- */
/* Which call site                                                        */

/* Reread the mappings of file dev/ino in pid. */
static void maps_load(struct pid_maps *m, pid_t pid, dev_t dev, ino_t ino)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;

	m->pid = pid;
	m->dev = dev;
	m->ino = ino;
	m->cnt = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0 && m->cnt < 8) {
		unsigned long long start, end, pgoff, ino;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %llu", &start, &end,
			   &pgoff, &ino) != 4)
			continue;
		/* By inode only: st_dev and the device /proc shows differ on
		 * btrfs (see struct trace_site_key). */
		if (ino != m->ino)
			continue;
		m->r[m->cnt].start = start;
		m->r[m->cnt].end = end;
		m->r[m->cnt].pgoff = pgoff;
		m->cnt++;
	}
	free(line);
	fclose(f);
}

static bool ip_to_offset(struct pid_maps *m, const struct probe_ent *p,
			 pid_t pid, uint64_t ip, uint64_t *off)
{
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass || m->pid != pid || m->dev != p->dev || m->ino != p->ino)
			maps_load(m, pid, p->dev, p->ino);
		for (i = 0; i < m->cnt; i++) {
			if (ip >= m->r[i].start && ip < m->r[i].end) {
				*off = ip - m->r[i].start + m->r[i].pgoff;
				return true;
			}
		}
	}
	return false;
}

const struct arg_fmt *site_args(struct trace_ctx *ctx, struct probe_ent *p,
				const struct usdt_hit *e, int *cnt)
{
	uint64_t off;
	size_t i;

	*cnt = p->arg_cnt;
	if (!p->sites)
		return p->args;
	/* Where the BPF side found the site; else (the process was busy)
	 * from its maps, if it still runs. */
	off = e->site_off;
	if (off == ~0ull &&
	    !ip_to_offset(&ctx->maps, p, (pid_t)e->pid, e->ip, &off))
		return p->args;
	for (i = 0; i < p->site_cnt; i++) {
		if (p->sites[i].file_offset == off) {
			*cnt = p->sites[i].arg_cnt;
			return p->sites[i].args;
		}
	}
	return p->args;
}

/* ---------------------------------------------------------------------- */
/* One event                                                              */

int probe_err(const struct probe_ent *p, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: trace: ", tool_name);
	print_escaped(stderr, p->provider, strlen(p->provider));
	fputc(':', stderr);
	print_escaped(stderr, p->name, strlen(p->name));
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static void warn_unreadable(struct probe_ent *p, int i, int err)
{
	if (i >= TRACE_MAX_ARGS || (p->warned & (1u << i)))
		return;
	/* Not flushing stdout first: a half line there could be split by
	 * another writer to the same pipe (the -c command). */
	p->warned |= 1u << i;
	probe_err(p, "argument %d cannot be read: %s", i,
		  (err == EOPNOTSUPP || err == ENOTSUP) && p->reasons[i] ?
		  p->reasons[i] : tool_strerror(err ? err : EFAULT));
}

/* Where each string argument's text is in the event, or NULL. */
static void find_strings(const struct usdt_hit *e, size_t len,
			 const char *strs[TRACE_MAX_ARGS])
{
	const char *base = (const char *)e + sizeof(*e);
	size_t off = 0, avail = len - sizeof(*e);
	int i;

	if (avail > e->str_total)
		avail = e->str_total;
	for (i = 0; i < TRACE_MAX_ARGS; i++) {
		size_t n = e->str_len[i];

		strs[i] = NULL;
		if (!n || off + n > avail || base[off + n - 1])
			continue;
		strs[i] = base + off;
		off += n;
	}
}

static void print_head(struct trace_ctx *ctx, const struct usdt_hit *e,
		       const struct probe_ent *p)
{
	char comm[TRACE_COMM_LEN + 1];

	memcpy(comm, e->comm, TRACE_COMM_LEN);
	comm[TRACE_COMM_LEN] = '\0';
	if (ctx->json) {
		printf("{\"ts\": %" PRIu64 ", \"pid\": %u, \"tid\": %u, \"comm\": ",
		       (uint64_t)e->ts, e->pid, e->tid);
		json_str(stdout, comm);
		fputs(", \"provider\": ", stdout);
		json_str(stdout, p->provider);
		fputs(", \"name\": ", stdout);
		json_str(stdout, p->name);
		fputs(", \"args\": [", stdout);
		return;
	}
	printf("%" PRIu64 " %u %u ", (uint64_t)e->ts, e->pid, e->tid);
	print_name(stdout, comm, false);
	fputc(' ', stdout);
	print_name(stdout, p->provider, false);
	fputc(':', stdout);
	print_name(stdout, p->name, false);
}

static void print_args(struct trace_ctx *ctx, struct probe_ent *p,
		       const struct usdt_hit *e, size_t len)
{
	static const struct arg_fmt unknown = { .size = 8 };
	const struct probe_fmt *pf = p->fmt;
	const char *strs[TRACE_MAX_ARGS];
	const struct arg_fmt *fmts;
	int i, cnt, fcnt;

	find_strings(e, len, strs);
	fmts = site_args(ctx, p, e, &fcnt);
	cnt = e->arg_cnt < 0 ? 0 : e->arg_cnt;
	if (cnt > TRACE_MAX_ARGS)
		cnt = TRACE_MAX_ARGS;
	if (pf && pf->conv_cnt < cnt)
		cnt = pf->conv_cnt;
	for (i = 0; i < cnt; i++) {
		bool bad = e->err_mask & (1u << i);

		if (ctx->json)
			fputs(i ? ", " : "", stdout);
		else if (pf)
			put_lit(stdout, pf->convs[i].lit, pf->convs[i].lit_len);
		else
			fputc(' ', stdout);
		if (pf && pf->convs[i].c == 's' && !bad && !strs[i])
			bad = true;
		if (bad) {
			fputs(ctx->json ? "null" : "?", stdout);
			warn_unreadable(p, i, e->errs[i]);
		} else if (pf) {
			print_conv(stdout, pf->convs[i].c, e, i,
				   i < fcnt ? &fmts[i] : &unknown, strs[i],
				   ctx->json);
		} else {
			print_value(stdout, i < fcnt ? &fmts[i] : &unknown,
				    e->sizes[i], e->args[i], ctx->json);
		}
	}
	if (pf && !ctx->json && cnt == pf->conv_cnt)
		put_lit(stdout, pf->tail, strlen(pf->tail));
}

/* After a line: did stdout take it? Sets ctx->write_err. */
int output_check(struct trace_ctx *ctx)
{
	int err = stdout_flush();

	if (err)
		ctx->write_err = err;
	return err ? -ECANCELED : 0;
}

int on_hit(void *data, void *raw, size_t len)
{
	struct trace_ctx *ctx = data;
	const struct usdt_hit *e = raw;
	struct probe_ent *p;

	if (len < sizeof(*e) || e->cookie >= ctx->probe_cnt)
		return 0;
	if (ctx->max_count && ctx->count >= ctx->max_count)
		return -ECANCELED;
	p = &ctx->probes[e->cookie];
	print_head(ctx, e, p);
	if (!ctx->json && p->fmt)
		fputc(' ', stdout);
	print_args(ctx, p, e, len);
	fputs(ctx->json ? "]}\n" : "\n", stdout);
	if (output_check(ctx))
		return -ECANCELED;
	ctx->count++;
	if (ctx->max_count && ctx->count >= ctx->max_count)
		return -ECANCELED;
	return 0;
}
