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
#include <sys/uio.h>
#include <time.h>

#include "trace.h"

/* ---------------------------------------------------------------------- */
/* Formats                                                                */

/* The longest width or precision a format may give. */
#define FMT_MAX_DIM 4096

struct fmt_parse_state {
	const char *conv; /* the '%' of the conversion being parsed */
	int numbered;	  /* -1 not known yet, 0 no, 1 yes (%N$) */
	int next_arg;	  /* the next argument of an unnumbered one */
	int arg_need;
	char *why;
	size_t len;
};

static int fmt_fail(struct fmt_parse_state *st, const char *p, const char *fmt,
		    ...) __attribute__((format(printf, 3, 4)));

/* why: the conversion so far (from its '%' to p, p included), then the
 * message. Returns -EINVAL. */
static int fmt_fail(struct fmt_parse_state *st, const char *p, const char *fmt,
		    ...)
{
	size_t n = (size_t)(p - st->conv) + (*p ? 1 : 0);
	int used;
	va_list ap;

	used = snprintf(st->why, st->len, "'%.*s': ", (int)n, st->conv);
	if (used < 0 || (size_t)used >= st->len)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(st->why + used, st->len - (size_t)used, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A decimal number at *p, consumed; -1 if above FMT_MAX_DIM. */
static int fmt_number(const char **p)
{
	int n = 0;

	while (**p >= '0' && **p <= '9') {
		if (n <= FMT_MAX_DIM)
			n = n * 10 + (**p - '0');
		(*p)++;
	}
	return n > FMT_MAX_DIM ? -1 : n;
}

/* "N$" at *p, consumed: N; else 0 (nothing consumed). -1: too big. */
static int fmt_arg_number(const char **p)
{
	const char *q = *p;
	int n;

	if (*q < '1' || *q > '9')
		return 0;
	n = fmt_number(&q);
	if (*q != '$')
		return 0;
	*p = q + 1;
	return n;
}

/*
 * The argument a conversion, a '*' width or a '*' precision takes: N
 * (from "N$"), or with 0 the next in order. Numbered and unnumbered ones
 * do not mix (as POSIX says). Returns it (from 0), or -EINVAL. p: where
 * the parse is, for the message.
 */
static int fmt_take_arg(struct fmt_parse_state *st, const char *p, int n)
{
	int a;

	if (st->numbered < 0)
		st->numbered = n != 0;
	if (st->numbered != (n != 0))
		return fmt_fail(st, p,
				"numbered (%%N$) and unnumbered conversions or '*' do not mix: number all or none");
	if (n < 0 || n > TRACE_MAX_ARGS)
		return fmt_fail(st, p,
				"no such argument (a probe has at most %d, from %%1$)",
				TRACE_MAX_ARGS);
	a = n ? n - 1 : st->next_arg++;
	if (a >= TRACE_MAX_ARGS)
		return fmt_fail(st, p, "more than %d arguments",
				TRACE_MAX_ARGS);
	if (a + 1 > st->arg_need)
		st->arg_need = a + 1;
	return a;
}

/* A width or a precision: digits, or '*' with its argument. */
static int fmt_dim(struct fmt_parse_state *st, const char **p, int *val,
		   int8_t *arg, const char *what)
{
	int a;

	if (**p == '*') {
		(*p)++;
		a = fmt_arg_number(p);
		a = fmt_take_arg(st, *p - 1, a);
		if (a < 0)
			return a;
		*arg = (int8_t)a;
		return 0;
	}
	if (**p < '0' || **p > '9')
		return 0;
	*val = fmt_number(p);
	if (*val < 0)
		return fmt_fail(st, *p - 1, "%s is more than %d", what,
				FMT_MAX_DIM);
	return 0;
}

/* A length modifier: the bytes the argument is taken at. */
static int fmt_length(struct fmt_parse_state *st, const char **p, int8_t *size)
{
	const char *q = *p;

	switch (*q) {
	case 'h':
		*size = q[1] == 'h' ? 1 : 2;
		q += q[1] == 'h' ? 2 : 1;
		break;
	case 'l':
		*size = q[1] == 'l' ? (int8_t)sizeof(long long) :
				      (int8_t)sizeof(long);
		q += q[1] == 'l' ? 2 : 1;
		break;
	case 'z':
	case 'j':
	case 't':
		*size = *q == 'z' ? (int8_t)sizeof(size_t) :
			*q == 'j' ? (int8_t)sizeof(intmax_t) :
				    (int8_t)sizeof(ptrdiff_t);
		q++;
		break;
	case 'L':
		return fmt_fail(st, q,
				"length modifier 'L' is not supported (use hh h l ll z j t)");
	}
	*p = q;
	return 0;
}
/* What each conversion takes: flags, a precision, a length modifier. */
static const struct {
	char c;
	const char *flags;
	bool prec, length;
} conv_rules[] = {
	{ 's', "-", true, false },   { 'c', "-", false, false },
	{ 'p', "-", false, false },  { 'd', "-+ 0", true, true },
	{ 'i', "-+ 0", true, true }, { 'u', "-0", true, true },
	{ 'x', "-#0", true, true },  { 'X', "-#0", true, true },
	{ 'o', "-#0", true, true },  { 'f', "-+ #0", true, false },
};

/* Whether cv's flags, precision and length go with its conversion (as
 * printf defines them; what it would ignore or leave undefined is an
 * error here). p: the conversion character. */
static int fmt_check(struct fmt_parse_state *st, const char *p,
		     const struct conv *cv, const char *len_at)
{
	size_t i, j;

	for (i = 0; i < sizeof(conv_rules) / sizeof(conv_rules[0]); i++)
		if (conv_rules[i].c == cv->c)
			break;
	if (!*p)
		return fmt_fail(st, p, "the format ends inside a conversion");
	if (*p == '$')
		return fmt_fail(st, p, "arguments are numbered from 1 (%%1$)");
	if (*p == '\'' || *p == 'I')
		return fmt_fail(st, p,
				"flag '%c' (locale digits) is not supported",
				*p);
	if (i == sizeof(conv_rules) / sizeof(conv_rules[0]))
		return fmt_fail(st, p,
				"unknown conversion '%%%.1s' (use %%s %%d %%i %%u %%x %%X %%o %%p %%c %%f)",
				p);
	for (j = 0; cv->flags[j]; j++)
		if (!strchr(conv_rules[i].flags, cv->flags[j]))
			return fmt_fail(st, p,
					"flag '%c' does not go with %%%c",
					cv->flags[j], cv->c);
	if ((cv->prec >= 0 || cv->prec_arg >= 0) && !conv_rules[i].prec)
		return fmt_fail(st, p, "%%%c takes no precision", cv->c);
	/* %lf is %f in printf. */
	if (cv->size && !conv_rules[i].length &&
	    !(cv->c == 'f' && len_at[0] == 'l' && p == len_at + 1))
		return fmt_fail(st, p, "%%%c takes no length modifier%s", cv->c,
				cv->c == 's' || cv->c == 'c' ?
					" (wide characters are not supported)" :
					"");
	return 0;
}

/* One conversion, *p just after its '%'. */
static int fmt_conv(struct fmt_parse_state *st, const char **p, struct conv *cv)
{
	const char *len_at;
	int n = fmt_arg_number(p), err;

	cv->width = cv->prec = -1;
	cv->width_arg = cv->prec_arg = -1;
	for (; **p && strchr("-+ #0", **p); (*p)++)
		if (!strchr(cv->flags, **p))
			cv->flags[strlen(cv->flags)] = **p;
	err = fmt_dim(st, p, &cv->width, &cv->width_arg, "the width");
	if (!err && **p == '.') {
		(*p)++;
		cv->prec = 0; /* "%.s": precision 0, as in printf */
		err = fmt_dim(st, p, &cv->prec, &cv->prec_arg, "the precision");
	}
	len_at = *p;
	if (!err)
		err = fmt_length(st, p, &cv->size);
	if (err)
		return err;
	cv->c = **p;
	err = fmt_check(st, *p, cv, len_at);
	if (err)
		return err;
	n = fmt_take_arg(st, *p, n);
	if (n < 0)
		return n;
	cv->arg = (int8_t)n;
	(*p)++;
	return 0;
}

/* Value v for messages, in buf: "argument N (%N+1$)" or "typed load K". */
static const char *val_name(char buf[32], int v)
{
	if (v < TRACE_MAX_ARGS)
		snprintf(buf, 32, "argument %d (%%%d$)", v, v + 1);
	else
		snprintf(buf, 32, "typed load %d", v - TRACE_MAX_ARGS);
	return buf;
}

/*
 * Which values the BPF side reads as strings: %s up to a NUL, at most
 * the longest precision given (none: -s); %.*s exactly its length
 * argument's count of bytes. One argument cannot be both.
 */
static int fmt_strings(struct fmt_parse_state *st, struct probe_fmt *out)
{
	struct trace_probe_cfg *c = &out->str_cfg;
	uint32_t unbounded = 0;
	char name[32];
	int i;

	for (i = 0; i < out->conv_cnt; i++) {
		const struct conv *cv = &out->convs[i];
		uint32_t bit = 1u << cv->arg;
		int max = cv->prec + 1 > TRACE_STR_MAX ? TRACE_STR_MAX :
							 cv->prec + 1;

		if (cv->c != 's')
			continue;
		if (c->str_mask & bit &&
		    !(c->fixed_mask & bit) != (cv->prec_arg < 0)) {
			snprintf(st->why, st->len,
				 "%s is a string both with a length argument (%%.*s) and without",
				 val_name(name, cv->arg));
			return -EINVAL;
		}
		if (c->fixed_mask & bit &&
		    c->len_arg[cv->arg] != cv->prec_arg) {
			snprintf(st->why, st->len,
				 "%s is a string with two length arguments",
				 val_name(name, cv->arg));
			return -EINVAL;
		}
		c->str_mask |= bit;
		if (cv->prec_arg >= 0) {
			c->fixed_mask |= bit;
			c->len_arg[cv->arg] = (uint8_t)cv->prec_arg;
		} else if (cv->prec < 0) {
			unbounded |= bit;
		} else if (max > c->str_max[cv->arg]) {
			c->str_max[cv->arg] = (uint16_t)max;
		}
	}
	for (i = 0; i < TRACE_MAX_VALS; i++)
		if (unbounded & (1u << i))
			c->str_max[i] = 0;
	return 0;
}

/*
 * Parse a format such as "%s called with %-8d", printf's conversions
 * (see struct conv). They take the probe's arguments in order, or each
 * the one it numbers (%2$d); %% is a literal %. Returns 0 or -EINVAL
 * with why.
 */
int fmt_parse(const char *s, struct probe_fmt *out, char *why, size_t len)
{
	struct fmt_parse_state st = { .numbered = -1, .why = why, .len = len };
	const char *lit = s;
	int err;

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
		st.conv = s;
		if (out->conv_cnt == FMT_MAX_CONVS)
			return fmt_fail(&st, s, "more than %d conversions",
					FMT_MAX_CONVS);
		s++;
		err = fmt_conv(&st, &s, &out->convs[out->conv_cnt]);
		if (err)
			return err;
		out->convs[out->conv_cnt].lit = lit;
		out->convs[out->conv_cnt].lit_len = (size_t)(st.conv - lit);
		out->conv_cnt++;
		lit = s;
	}
	out->tail = lit;
	out->arg_need = st.arg_need;
	return fmt_strings(&st, out);
}
/* ---------------------------------------------------------------------- */
/* Formats with their values: "FMT", EXPR, ...                            */

static const struct {
	const char *name;
	uint8_t size, is_signed;
} load_types[] = {
	/* longer names first where one starts another */
	{ "unsigned char", 1, 0 }, { "unsigned short", 2, 0 },
	{ "unsigned int", 4, 0 },  { "unsigned long", 8, 0 },
	{ "unsigned", 4, 0 },	   { "char", 1, 1 },
	{ "short", 2, 1 },	   { "int8", 1, 1 },
	{ "int16", 2, 1 },	   { "int32", 4, 1 },
	{ "int64", 8, 1 },	   { "uint8", 1, 0 },
	{ "uint16", 2, 0 },	   { "uint32", 4, 0 },
	{ "uint64", 8, 0 },	   { "int", 4, 1 },
	{ "long", 8, 1 },	   { "u8", 1, 0 },
	{ "u16", 2, 0 },	   { "u32", 4, 0 },
	{ "u64", 8, 0 },	   { "s8", 1, 1 },
	{ "s16", 2, 1 },	   { "s32", 4, 1 },
	{ "s64", 8, 1 },
};

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* "argN" at *p: N, consumed; -1 if not one. */
static int expr_arg(const char **p)
{
	const char *q = ws(*p);
	int n = 0;

	if (strncmp(q, "arg", 3) || q[3] < '0' || q[3] > '9')
		return -1;
	for (q += 3; *q >= '0' && *q <= '9' && n < 100; q++)
		n = n * 10 + (*q - '0');
	if (n >= TRACE_MAX_ARGS)
		return -1;
	*p = q;
	return n;
}

/* "*(TYPE *)" at *p, consumed, into l; -1 if not one. */
static int expr_cast(const char **p, struct trace_load *l)
{
	const char *q = ws(*p);
	size_t i, n;

	if (*q != '*')
		return -1;
	q = ws(q + 1);
	if (*q != '(')
		return -1;
	q = ws(q + 1);
	for (i = 0; i < sizeof(load_types) / sizeof(load_types[0]); i++) {
		n = strlen(load_types[i].name);
		if (!strncmp(q, load_types[i].name, n) &&
		    (q[n] == ' ' || q[n] == '*'))
			break;
	}
	if (i == sizeof(load_types) / sizeof(load_types[0]))
		return -1;
	q = ws(q + n);
	if (*q != '*' || *(q = ws(q + 1)) != ')')
		return -1;
	l->size = load_types[i].size;
	l->is_signed = load_types[i].is_signed;
	*p = q + 1;
	return 0;
}

/* "+ K" or "- K" (decimal or 0x) at *p, consumed, into *off. */
static int expr_off(const char **p, int32_t *off)
{
	const char *q = ws(*p);
	long long v;
	char *end;
	int neg;

	if (*q != '+' && *q != '-')
		return -1;
	neg = *q == '-';
	q = ws(q + 1);
	if (*q < '0' || *q > '9')
		return -1;
	errno = 0;
	v = strtoll(q, &end,
		    q[0] == '0' && (q[1] == 'x' || q[1] == 'X') ? 16 : 10);
	if (errno || v > INT32_MAX)
		return -1;
	*off = (int32_t)(neg ? -v : v);
	*p = end;
	return 0;
}

/* One EXPR at *p: its value index (an argument, or TRACE_MAX_ARGS + k
 * for a new load k of c); -1 if it is none of them, -2 for a load past
 * TRACE_MAX_LOADS. */
static int expr_parse(const char **p, struct trace_probe_cfg *c)
{
	struct trace_load l = { 0 };
	const char *q = *p;
	int a, paren;

	a = expr_arg(&q);
	if (a >= 0) {
		*p = q;
		return a;
	}
	if (expr_cast(&q, &l))
		return -1;
	if (c->load_cnt == TRACE_MAX_LOADS)
		return -2;
	q = ws(q);
	paren = *q == '(';
	if (paren)
		q++;
	a = expr_arg(&q);
	if (a < 0 || (paren && expr_off(&q, &l.off) && *ws(q) != ')'))
		return -1;
	if (paren && *(q = ws(q)) != ')')
		return -1;
	l.arg = (uint8_t)a;
	c->loads[c->load_cnt] = l;
	*p = paren ? q + 1 : q;
	return TRACE_MAX_ARGS + (int)c->load_cnt++;
}

/* The text between the quotes of w, unescaped (\" and \\), malloc'ed,
 * and where the rest starts; NULL if the quote is not closed. */
static char *quoted_text(const char *w, const char **rest)
{
	char *t = malloc(strlen(w) + 1), *o = t;

	if (!t)
		return NULL;
	for (w++; *w && *w != '"'; w++) {
		if (*w == '\\' && (w[1] == '"' || w[1] == '\\'))
			w++;
		*o++ = *w;
	}
	*o = '\0';
	if (*w != '"') {
		free(t);
		return NULL;
	}
	*rest = w + 1;
	return t;
}

/* Send conversions' value numbers (from 0, in EXPR order) through map. */
static int remap_convs(struct probe_fmt *out, const int *map, int n, char *why,
		       size_t len)
{
	int i, top = 0;

	for (i = 0; i < out->conv_cnt; i++) {
		struct conv *cv = &out->convs[i];
		int8_t *v[3] = { &cv->arg, &cv->width_arg, &cv->prec_arg };
		int j;

		for (j = 0; j < 3; j++) {
			if (*v[j] < 0)
				continue;
			if (*v[j] >= n) {
				snprintf(why, len,
					 "the format takes %d values; %d given after it",
					 out->arg_need, n);
				return -EINVAL;
			}
			*v[j] = (int8_t)map[*v[j]];
		}
		if (cv->c == 's' && cv->arg >= TRACE_MAX_ARGS &&
		    out->str_cfg.loads[cv->arg - TRACE_MAX_ARGS].size != 8) {
			snprintf(why, len,
				 "%%s of a typed load takes a pointer: an 8-byte load, *(uint64 *)(argN + K)");
			return -EINVAL;
		}
	}
	for (i = 0; i < n; i++) {
		int a = map[i] < TRACE_MAX_ARGS ?
				map[i] :
				out->str_cfg.loads[map[i] - TRACE_MAX_ARGS].arg;

		if (a + 1 > top)
			top = a + 1;
	}
	out->arg_need = top;
	return 0;
}

/*
 * The values that were str(argN) or str(argN, argM) (strs[v]: -1 for
 * str(argN), M, or -2 for another EXPR): only %s takes them, and str(argN,
 * argM)'s %s reads and prints argM's count of bytes (as %.*s). conv_vals:
 * each conversion's value before remap_convs().
 */
static int apply_strs(struct probe_fmt *out, const int8_t *conv_vals,
		      const int *strs, int n, char *why, size_t len)
{
	int i;

	for (i = 0; i < out->conv_cnt; i++) {
		struct conv *cv = &out->convs[i];
		int v = conv_vals[3 * i], wv = conv_vals[3 * i + 1],
		    pv = conv_vals[3 * i + 2];

		if ((wv >= 0 && wv < n && strs[wv] != -2) ||
		    (pv >= 0 && pv < n && strs[pv] != -2) ||
		    (v < n && strs[v] != -2 && cv->c != 's')) {
			snprintf(why, len,
				 "value %d is str(): a string, for %%s only",
				 (wv >= 0 && wv < n && strs[wv] != -2 ? wv :
				  pv >= 0 && pv < n && strs[pv] != -2 ? pv :
									v) +
					 1);
			return -EINVAL;
		}
		if (v >= n || strs[v] < 0)
			continue;
		if (cv->prec >= 0 || cv->prec_arg >= 0) {
			snprintf(why, len,
				 "value %d is str(argN, argM), which gives its length: %%s takes no precision then",
				 v + 1);
			return -EINVAL;
		}
		cv->prec_arg = (int8_t)strs[v];
		if (strs[v] + 1 > out->arg_need)
			out->arg_need = strs[v] + 1;
	}
	return 0;
}

/* One value of a quoted format at *p: str(...) of an argument or of a
 * typed load (its value, and in *str_len what apply_strs() takes), or
 * expr_parse()'s. */
static int value_parse(const char **p, struct trace_probe_cfg *loads,
		       int *str_len)
{
	const char *q = ws(*p);
	uint32_t cnt = loads->load_cnt;
	int a;

	*str_len = -2;
	if (!trace_str_expr(&q, &a, str_len)) {
		*p = q;
		return a;
	}
	*str_len = -2;
	if (!strncmp(q, "str(", 4) && *ws(q + 4) == '*') {
		q += 4;
		a = expr_parse(&q, loads);
		if (a < 0)
			return a;
		if (*(q = ws(q)) != ')') {
			loads->load_cnt = cnt;
			return -1;
		}
		*p = q + 1;
		*str_len = -1;
		return a;
	}
	return expr_parse(p, loads);
}

int fmt_parse_word(const char *w, struct probe_fmt *out, char *why, size_t len)
{
	struct fmt_parse_state st = { .why = why, .len = len };
	struct trace_probe_cfg loads = { 0 };
	int map[TRACE_MAX_ARGS], strs[TRACE_MAX_ARGS], n = 0, err, i;
	int8_t conv_vals[3 * FMT_MAX_CONVS];
	const char *p;
	char *text;

	if (*w != '"')
		return fmt_parse(w, out, why, len);
	text = quoted_text(w, &p);
	if (!text) {
		snprintf(why, len,
			 "no closing '\"' (a quoted format: '\"FMT\", EXPR, ...')");
		return -EINVAL;
	}
	while (*(p = ws(p)) == ',' && n < TRACE_MAX_ARGS) {
		p++;
		map[n] = value_parse(&p, &loads, &strs[n]);
		if (map[n] == -2)
			snprintf(why, len,
				 "value %d: more than %d typed loads in one format",
				 n + 1, TRACE_MAX_LOADS);
		else if (map[n] < 0)
			snprintf(why, len,
				 "cannot parse value %d at '%.24s': want argN, str(argN), str(argN, argM), *(TYPE *)argN, *(TYPE *)(argN + K) or str(*(uint64 *)(argN + K))",
				 n + 1, ws(p));
		if (map[n++] < 0) {
			free(text);
			return -EINVAL;
		}
	}
	err = *p ? -EINVAL : fmt_parse(text, out, why, len);
	if (*p)
		snprintf(why, len, "cannot parse after the values at '%.24s'",
			 p);
	memcpy(out->str_cfg.loads, loads.loads, sizeof(loads.loads));
	out->str_cfg.load_cnt = loads.load_cnt;
	for (i = 0; !err && i < out->conv_cnt; i++) {
		conv_vals[3 * i] = out->convs[i].arg;
		conv_vals[3 * i + 1] = out->convs[i].width_arg;
		conv_vals[3 * i + 2] = out->convs[i].prec_arg;
	}
	if (!err)
		err = remap_convs(out, map, n, why, len);
	if (!err)
		err = apply_strs(out, conv_vals, strs, n, why, len);
	if (!err) {
		/* The string reads, by the arguments now named. */
		memset(&out->str_cfg, 0,
		       offsetof(struct trace_probe_cfg, load_cnt));
		err = fmt_strings(&st, out);
	}
	if (err) {
		free(text);
		return err;
	}
	out->text = text;
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

/* The fewest significant digits (%g's precision) that read back as d,
 * or as the float d is when single. */
static int shortest_prec(double d, bool single)
{
	char buf[40];
	int prec, max = single ? 9 : 17;

	for (prec = 1; prec < max; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (single ? strtof(buf, NULL) == (float)d :
			     strtod(buf, NULL) == d)
			break;
	}
	return prec;
}

/* The shortest decimal that reads back as the same double. */
static void print_double(FILE *f, double d, bool json)
{
	if (!isfinite(d)) {
		fputs(json ? "null" :
			     (isnan(d) ? "nan" :
			      d > 0    ? "inf" :
					 "-inf"),
		      f);
		return;
	}
	fprintf(f, "%.*g", shortest_prec(d, false), d);
}

static void print_float(FILE *f, float v, bool json)
{
	if (!isfinite(v)) {
		print_double(f, v, json);
		return;
	}
	fprintf(f, "%.*g", shortest_prec(v, true), (double)v);
}

/* A float or double argument of size bytes as a double; *single: it was
 * a float. False for other sizes. */
static bool fp_bits(int size, uint64_t v, double *d, bool *single)
{
	if (size == 4) {
		uint32_t bits = (uint32_t)v;
		float fl;

		memcpy(&fl, &bits, sizeof(fl));
		*d = fl;
		*single = true;
		return true;
	}
	if (size == 8) {
		memcpy(d, &v, sizeof(*d));
		*single = false;
		return true;
	}
	return false;
}

/* A float or double argument of size bytes. */
static bool print_fp(FILE *f, int size, uint64_t v, bool json)
{
	bool single;
	double d;

	if (!fp_bits(size, v, &d, &single))
		return false;
	if (single)
		print_float(f, (float)d, json);
	else
		print_double(f, d, json);
	return true;
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

/* cv's width and precision for event e: as written, or from their
 * arguments, clamped to FMT_MAX_DIM. A negative width is '-' (printf's
 * way); a negative precision none, but 0 for %s: its argument is the
 * length of a buffer, and the BPF side read none of it. */
static void conv_dims(const struct conv *cv, const struct usdt_hit *e, int *w,
		      int *prec)
{
	int64_t x;

	*w = cv->width < 0 ? 0 : cv->width;
	*prec = cv->prec;
	if (cv->width_arg >= 0) {
		x = (int64_t)e->args[cv->width_arg];
		*w = x < -FMT_MAX_DIM ? -FMT_MAX_DIM :
		     x > FMT_MAX_DIM  ? FMT_MAX_DIM :
					(int)x;
	}
	if (cv->prec_arg >= 0) {
		x = (int64_t)e->args[cv->prec_arg];
		*prec = x < 0		? (cv->c == 's' ? 0 : -1) :
			x > FMT_MAX_DIM ? FMT_MAX_DIM :
					  (int)x;
	}
}

/* n bytes of s in a field of width w (negative, or flag '-': on the
 * left), escaped for a terminal when escape. */
static void put_padded(FILE *f, const struct conv *cv, int w, const char *s,
		       size_t n, bool escape)
{
	bool left = w < 0 || strchr(cv->flags, '-');
	size_t width = (size_t)(w < 0 ? -w : w);
	size_t shown = escape ? escaped_len(s, n) : n, pad;

	pad = width > shown ? width - shown : 0;
	if (!left)
		fprintf(f, "%*s", (int)pad, "");
	if (escape)
		print_escaped(f, s, n);
	else
		fwrite(s, 1, n, f);
	if (left)
		fprintf(f, "%*s", (int)pad, "");
}

/* %s: str (NULL: the pointer was NULL), at most prec bytes of it. */
static void print_str(FILE *f, const struct conv *cv, int w, int prec,
		      const char *str, bool json)
{
	char buf[TRACE_STR_MAX + 1];
	size_t n;

	if (!str) {
		if (json)
			fputs("null", f);
		else
			put_padded(f, cv, w, "(null)", 6, false);
		return;
	}
	n = strlen(str);
	if (prec >= 0 && (size_t)prec < n)
		n = (size_t)prec;
	if (!json) {
		put_padded(f, cv, w, str, n, true);
		return;
	}
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, str, n);
	buf[n] = '\0';
	json_str(f, buf);
}

/* d i u x X o: v taken at the conversion's size, printf's way. */
static void print_int(FILE *f, const struct conv *cv, int w, int prec,
		      uint64_t v, bool json)
{
	bool sign = cv->c == 'd' || cv->c == 'i';
	int bits = cv->size ? cv->size * 8 : 64;
	char spec[24];

	if (bits < 64) {
		uint64_t mask = (1ull << bits) - 1;

		v &= mask;
		if (sign && (v >> (bits - 1)))
			v |= ~mask;
	}
	if (json) {
		fprintf(f, sign ? "%" PRId64 : "%" PRIu64, v);
		return;
	}
	/* Only flags, '*' and a conversion fmt_check() let through. */
	snprintf(spec, sizeof(spec), "%%%s*.*ll%c", cv->flags, cv->c);
	if (sign)
		fprintf(f, spec, w, prec, (long long)v);
	else
		fprintf(f, spec, w, prec, (unsigned long long)v);
}

/* %f: a float or double argument, or an integer one as its value. With
 * no flags, width or precision, the shortest decimal that reads back. */
static void print_f(FILE *f, const struct conv *cv, int w, int prec,
		    const struct arg_fmt *type, int size, uint64_t v, bool json)
{
	bool single = false;
	char spec[24];
	double d;

	if (!type->is_float ||
	    !fp_bits(size ? size : type->size, v, &d, &single))
		d = type->is_signed || size < 8 ? (double)(int64_t)v :
						  (double)v;
	if (json ||
	    (!cv->flags[0] && cv->width < 0 && cv->width_arg < 0 && prec < 0)) {
		if (single)
			print_float(f, (float)d, json);
		else
			print_double(f, d, json);
		return;
	}
	snprintf(spec, sizeof(spec), "%%%s*.*%c", cv->flags,
		 prec >= 0 ? 'f' : 'g');
	fprintf(f, spec, w, prec >= 0 ? prec : shortest_prec(d, single), d);
}

/* One conversion of event e. str: its argument's string, when it has
 * one (NULL: a NULL pointer). */
static void print_conv(FILE *f, const struct conv *cv, const struct usdt_hit *e,
		       const struct arg_fmt *type, const char *str, bool json)
{
	uint64_t v = e->args[cv->arg];
	char ch = (char)v;
	int w, prec;

	conv_dims(cv, e, &w, &prec);
	switch (cv->c) {
	case 's':
		print_str(f, cv, w, prec, str, json);
		break;
	case 'p':
		if (json)
			fprintf(f, "%" PRIu64, v);
		else if (!v)
			put_padded(f, cv, w, "(nil)", 5, false);
		else
			fprintf(f, cv->flags[0] ? "%-#*llx" : "%#*llx", w,
				(unsigned long long)v);
		break;
	case 'c':
		if (json) {
			char s[2] = { ch, 0 };

			json_str(f, s);
		} else {
			put_padded(f, cv, w, &ch, 1, true);
		}
		break;
	case 'f':
		print_f(f, cv, w, prec, type, e->sizes[cv->arg], v, json);
		break;
	default:
		print_int(f, cv, w, prec, v, json);
	}
}

int fmt_cfg_merge(struct trace_probe_cfg *into,
		  const struct trace_probe_cfg *from)
{
	uint32_t both = into->str_mask & from->str_mask, bit;
	int i;

	for (i = 0; i < TRACE_MAX_VALS; i++) {
		bit = 1u << i;
		if ((both & bit) &&
		    (((into->fixed_mask ^ from->fixed_mask) & bit) ||
		     ((into->fixed_mask & bit) &&
		      into->len_arg[i] != from->len_arg[i])))
			return -EINVAL;
	}
	for (i = 0; i < TRACE_MAX_VALS; i++) {
		bit = 1u << i;
		if (!(from->str_mask & bit))
			continue;
		if (!(into->str_mask & bit)) {
			into->len_arg[i] = from->len_arg[i];
			into->str_max[i] = from->str_max[i];
		} else if (!into->str_max[i] || !from->str_max[i]) {
			into->str_max[i] = 0; /* one reads to the NUL */
		} else if (from->str_max[i] > into->str_max[i]) {
			into->str_max[i] = from->str_max[i];
		}
	}
	into->str_mask |= from->str_mask;
	into->fixed_mask |= from->fixed_mask;
	/* Loads are numbered per format: two formats may share theirs. */
	if (from->load_cnt && into->load_cnt &&
	    (from->load_cnt != into->load_cnt ||
	     memcmp(from->loads, into->loads, sizeof(from->loads))))
		return -EINVAL;
	if (from->load_cnt) {
		into->load_cnt = from->load_cnt;
		memcpy(into->loads, from->loads, sizeof(from->loads));
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Which call site                                                        */

/*
 * How the arguments of hit e print: as the call site that fired declares
 * them, which the hit carries (sites of one probe may differ: int64 at
 * one, uint64 at another); the probe's first site's where the BPF side
 * found no spec.
 */
const struct arg_fmt *site_args(struct trace_ctx *ctx, struct probe_ent *p,
				const struct usdt_hit *e, int *cnt)
{
	int i;

	*cnt = p->arg_cnt;
	if (e->arg_cnt < 0 || e->arg_cnt > TRACE_MAX_ARGS)
		return p->args;
	for (i = 0; i < e->arg_cnt; i++) {
		ctx->hit_args[i].is_signed = e->signed_mask & (1u << i);
		ctx->hit_args[i].is_float = e->float_mask & (1u << i);
		ctx->hit_args[i].size = e->sizes[i] ? e->sizes[i] : 8;
	}
	*cnt = e->arg_cnt;
	return ctx->hit_args;
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

/* Why a value could not be read, for warn_unreadable(). */
static const char *unreadable_why(const struct probe_ent *p, int i, int err)
{
	if (!err)
		err = EFAULT;
	if (err == ETIMEDOUT)
		return "the process did not let its page be read in time (a page held with userfaultfd, or a file server that does not answer)";
	if (err == EOPNOTSUPP && i < TRACE_MAX_ARGS && p->reasons[i])
		return p->reasons[i];
	return tool_strerror(err);
}

/* Value i could not be read (a load that was, whose string was not:
 * str). */
static void warn_unreadable(struct probe_ent *p, int i, int err, bool str)
{
	if (i >= TRACE_MAX_VALS || (p->warned & (1u << i)))
		return;
	/* Not flushing stdout first: a half line there could be split by
	 * another writer to the same pipe (the -c command). */
	p->warned |= 1u << i;
	if (i >= TRACE_MAX_ARGS) {
		probe_err(p, "typed load %d%s cannot be read: %s",
			  i - TRACE_MAX_ARGS, str ? "'s string" : "",
			  unreadable_why(p, i, err));
		return;
	}
	probe_err(p, "argument %d cannot be read: %s", i,
		  unreadable_why(p, i, err));
}

/* Where each string value's text (an argument's or a load's) is in the
 * event, or NULL. */
static void find_strings(const struct usdt_hit *e, size_t len,
			 const char *strs[TRACE_MAX_VALS])
{
	const char *base = (const char *)e + sizeof(*e);
	size_t off = 0, avail = len - sizeof(*e);
	int i;

	if (avail > e->str_total)
		avail = e->str_total;
	for (i = 0; i < TRACE_MAX_VALS; i++) {
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
		printf("{\"ts\": %" PRIu64 ", \"wall\": ", (uint64_t)e->ts);
		print_wall(stdout, (int64_t)e->ts + ctx->wall_off);
		printf(", \"pid\": %u, \"tid\": %u, \"comm\": ", e->pid,
		       e->tid);
		json_str(stdout, comm);
		fputs(", \"provider\": ", stdout);
		json_str(stdout, p->provider);
		fputs(", \"name\": ", stdout);
		json_str(stdout, p->name);
		return;
	}
	print_time(stdout, e->ts, ctx->time_digits);
	printf(" %u %u ", e->pid, e->tid);
	print_name(stdout, comm, false);
	fputc(' ', stdout);
	print_name(stdout, p->provider, false);
	fputc(':', stdout);
	print_name(stdout, p->name, false);
}

/* The first argument cv needs that e does not have or could not read
 * (its string included), or -1. */
static int conv_bad_arg(const struct conv *cv, const struct usdt_hit *e,
			const char *const strs[TRACE_MAX_VALS])
{
	int need[3] = { cv->arg, cv->width_arg, cv->prec_arg }, i;

	for (i = 0; i < 3; i++)
		if (need[i] >= 0 && (e->err_mask & (1u << need[i])))
			return need[i];
	if (cv->c == 's' && e->args[cv->arg] && !strs[cv->arg])
		return cv->arg;
	return -1;
}

/* Has the hit every value cv takes: arguments below cnt (the site's),
 * loads of pf's? */
static bool conv_fits(const struct conv *cv, const struct probe_fmt *pf,
		      int cnt)
{
	int v[3] = { cv->arg, cv->width_arg, cv->prec_arg }, i;

	for (i = 0; i < 3; i++)
		if (v[i] >= 0 &&
		    !(v[i] < cnt ||
		      (v[i] >= TRACE_MAX_ARGS &&
		       v[i] < TRACE_MAX_ARGS + (int)pf->str_cfg.load_cnt)))
			return false;
	return true;
}

/* How value v of a hit prints by default: an argument as its site says,
 * a load as its type. */
static const struct arg_fmt *val_fmt(const struct probe_fmt *pf,
				     const struct arg_fmt *fmts, int fcnt,
				     int v, struct arg_fmt *tmp)
{
	static const struct arg_fmt unknown = { .size = 8 };
	const struct trace_load *l;

	if (v < fcnt)
		return &fmts[v];
	if (v < TRACE_MAX_ARGS)
		return &unknown;
	l = &pf->str_cfg.loads[v - TRACE_MAX_ARGS];
	*tmp = (struct arg_fmt){ .is_signed = l->is_signed, .size = l->size };
	return tmp;
}

/* With the user's format: its text, and each conversion as it says. A
 * call site with fewer arguments than the format takes ends the line at
 * the first conversion it cannot fill. */
static void print_formatted(struct trace_ctx *ctx, struct probe_ent *p,
			    const struct probe_fmt *pf,
			    const struct usdt_hit *e, int cnt,
			    const char *const strs[TRACE_MAX_VALS], FILE *f,
			    bool json)
{
	const struct arg_fmt *fmts;
	struct arg_fmt tmp;
	int i, fcnt, bad;

	fmts = site_args(ctx, p, e, &fcnt);
	for (i = 0; i < pf->conv_cnt; i++) {
		const struct conv *cv = &pf->convs[i];

		if (!conv_fits(cv, pf, cnt))
			break;
		if (json)
			fputs(i ? ", " : "", f);
		else
			put_lit(f, cv->lit, cv->lit_len);
		bad = conv_bad_arg(cv, e, strs);
		if (bad >= 0) {
			fputs(json ? "null" : "?", f);
			warn_unreadable(p, bad, e->errs[bad],
					bad >= TRACE_MAX_ARGS && e->args[bad]);
			continue;
		}
		print_conv(f, cv, e, val_fmt(pf, fmts, fcnt, cv->arg, &tmp),
			   e->args[cv->arg] ? strs[cv->arg] : NULL, json);
	}
	if (!json && i == pf->conv_cnt)
		put_lit(f, pf->tail, strlen(pf->tail));
}

/* The arguments of a hit, with format pf (the user's) or as they are. */
/*
 * String value i of hit e, which the BPF side could not read (EFAULT:
 * its page is not in memory, and a uprobe's read may not fault it in),
 * read again here from the process's memory, which may: a literal in a
 * page the program has not touched yet, the first probe users write. The
 * memory as it is now (for a literal, as it was). Page by page, so that a
 * string just before an unmapped page is still read. NULL if it cannot
 * be, *err then why (EFAULT: the process has gone, say; ETIMEDOUT: it
 * held the page past the deadline, see trace_peek.c).
 */
static const char *refetch(struct trace_ctx *ctx, const struct probe_fmt *pf,
			   const struct usdt_hit *e, int i, int *err)
{
	const struct trace_probe_cfg *c = &pf->str_cfg;
	size_t max = ctx->str_size ? ctx->str_size - 1 : 63, n = 0, k;
	uint64_t ptr = e->args[i], page = 4096;
	struct iovec remote[TRACE_STR_MAX / 4096 + 2];
	char *buf = ctx->refetched[i];
	bool fixed = c->fixed_mask & (1u << i);
	ssize_t got;

	if (fixed) {
		int64_t want = (int64_t)e->args[c->len_arg[i]];

		max = want < 0 ? 0 : (size_t)want < max ? (size_t)want : max;
	} else if (c->str_max[i] && c->str_max[i] - 1u < max) {
		max = c->str_max[i] - 1u;
	}
	if (max > TRACE_STR_MAX)
		max = TRACE_STR_MAX;
	for (k = 0; n < max && k < sizeof(remote) / sizeof(remote[0]); k++) {
		size_t room = page - ((ptr + n) & (page - 1));

		remote[k].iov_base = (void *)(uintptr_t)(ptr + n);
		remote[k].iov_len = room < max - n ? room : max - n;
		n += remote[k].iov_len;
	}
	got = trace_peek((pid_t)e->pid, buf, n, remote, k);
	*err = got < 0 ? (int)-got : EFAULT;
	if (got < 0 || (fixed && (size_t)got < max))
		return NULL;
	buf[got] = '\0';
	/* Up to a NUL, as the BPF side reads; or the count, fixed. */
	if (!fixed && !memchr(buf, '\0', (size_t)got) && (size_t)got < max)
		return NULL;
	return buf;
}

/* Typed load k that faulted, read again the same way: 0, or the errno. */
static int refetch_load(const struct probe_fmt *pf, struct usdt_hit *h, int k)
{
	const struct trace_load *l = &pf->str_cfg.loads[k];
	unsigned char b[8] = { 0 };
	struct iovec remote;
	uint64_t v = 0;
	ssize_t got;
	int j;

	if (l->arg >= TRACE_MAX_ARGS || l->size > 8 || !l->size)
		return EFAULT;
	remote.iov_base =
		(void *)(uintptr_t)(h->args[l->arg] + (int64_t)l->off);
	remote.iov_len = l->size;
	got = trace_peek((pid_t)h->pid, b, l->size, &remote, 1);
	if (got != (ssize_t)l->size)
		return got < 0 ? (int)-got : EFAULT;
	/* The bytes in this host's order: the traced process's. */
	for (j = 0; j < l->size; j++)
		((unsigned char *)&v)[__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
					      8 - l->size + j :
					      j] = b[j];
	if (l->is_signed && l->size < 8 && (v >> (l->size * 8 - 1)) & 1)
		v |= ~0ull << (l->size * 8);
	h->args[TRACE_MAX_ARGS + k] = v;
	return 0;
}

/* The hit with its unread strings and loads read again where they can
 * be: a copy of e's header, strs filled in. A value still unread keeps
 * its error, or takes the re-read's where that timed out (so that the
 * warning says the process held it). A load read again here that is a
 * string's pointer: the BPF side read no string for it, and that is
 * read here too. */
static void refetch_all(struct trace_ctx *ctx, const struct probe_fmt *pf,
			struct usdt_hit *h, const char *strs[TRACE_MAX_VALS])
{
	uint32_t k, reread = 0;
	int i, err;

	for (k = 0; k < pf->str_cfg.load_cnt && k < TRACE_MAX_LOADS; k++) {
		uint32_t bit = 1u << (TRACE_MAX_ARGS + k);

		/* (A load that was read has a value: its string failed.) */
		if (!(h->err_mask & bit) || h->args[TRACE_MAX_ARGS + k] ||
		    h->errs[TRACE_MAX_ARGS + k] != EFAULT)
			continue;
		err = refetch_load(pf, h, (int)k);
		if (!err)
			h->err_mask &= ~bit;
		if (!err && (pf->str_cfg.str_mask & bit)) {
			reread |= bit;
			h->err_mask |= bit; /* now its string's */
		} else if (err == ETIMEDOUT)
			h->errs[TRACE_MAX_ARGS + k] = ETIMEDOUT;
	}
	for (i = 0; i < TRACE_MAX_VALS; i++) {
		uint32_t bit = 1u << i;

		if (!(pf->str_cfg.str_mask & bit) || strs[i] ||
		    !(h->err_mask & bit) || h->errs[i] != EFAULT)
			continue;
		if (!h->args[i]) {
			if (reread & bit) /* a NULL pointer read again */
				h->err_mask &= ~bit;
			continue;
		}
		strs[i] = refetch(ctx, pf, h, i, &err);
		if (strs[i])
			h->err_mask &= ~bit;
		else if (err == ETIMEDOUT)
			h->errs[i] = ETIMEDOUT;
	}
}

/* A hit as it prints: its header (with a format, its unread strings and
 * loads read again), the strings it carries, its argument count. */
struct hit_view {
	struct usdt_hit h;
	const char *strs[TRACE_MAX_VALS];
	int cnt;
};

static void hit_view(struct trace_ctx *ctx, const struct probe_fmt *pf,
		     const struct usdt_hit *e, size_t len, struct hit_view *v)
{
	find_strings(e, len, v->strs);
	v->cnt = e->arg_cnt < 0 ? 0 : e->arg_cnt;
	if (v->cnt > TRACE_MAX_ARGS)
		v->cnt = TRACE_MAX_ARGS;
	v->h = *e;
	if (pf)
		refetch_all(ctx, pf, &v->h, v->strs);
}

/* With --json and a format, "text": the line's text as it prints
 * without --json. */
static void print_text(struct trace_ctx *ctx, struct probe_ent *p,
		       const struct probe_fmt *pf, const struct hit_view *v)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	fputs(", \"text\": ", stdout);
	if (m) {
		print_formatted(ctx, p, pf, &v->h, v->cnt, v->strs, m, false);
		if (fclose(m)) {
			free(text);
			text = NULL;
		}
	}
	if (text)
		json_str(stdout, text);
	else
		fputs("null", stdout);
	free(text);
}

static void print_args(struct trace_ctx *ctx, struct probe_ent *p,
		       const struct probe_fmt *pf, const struct hit_view *v)
{
	static const struct arg_fmt unknown = { .size = 8 };
	const struct usdt_hit *e = &v->h;
	const struct arg_fmt *fmts;
	int i, cnt = v->cnt, fcnt;

	if (pf) {
		print_formatted(ctx, p, pf, e, cnt, v->strs, stdout, ctx->json);
		return;
	}
	fmts = site_args(ctx, p, e, &fcnt);
	for (i = 0; i < cnt; i++) {
		fputs(ctx->json		   ? (i ? ", " : "") :
		      i || !ctx->text_only ? " " :
					     "",
		      stdout);
		if (e->err_mask & (1u << i)) {
			fputs(ctx->json ? "null" : "?", stdout);
			warn_unreadable(p, i, e->errs[i], false);
		} else {
			print_value(stdout, i < fcnt ? &fmts[i] : &unknown,
				    e->sizes[i], e->args[i], ctx->json);
		}
	}
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
	const struct probe_fmt *pf;
	struct hit_view v;
	struct probe_ent *p;
	int k;

	if (len >= sizeof(struct trace_slow) &&
	    e->cookie == TRACE_SLOW_COOKIE) {
		ctx->write_err = -sum_print_slow(ctx->sums, raw, ctx->wall_off);
		return ctx->write_err ? -ECANCELED : 0;
	}
	if (len < sizeof(*e) || e->cookie >= ctx->probe_cnt)
		return 0;
	if (ctx->max_count && ctx->count >= ctx->max_count)
		return -ECANCELED;
	p = &ctx->probes[e->cookie];
	/* A line per format (none: one, as the arguments are). */
	for (k = 0; k == 0 || k < p->fmt_cnt; k++) {
		pf = p->fmt_cnt ? p->fmts[k] : NULL;
		hit_view(ctx, pf, e, len, &v);
		if (!ctx->text_only)
			print_head(ctx, e, p);
		if (ctx->json && pf)
			print_text(ctx, p, pf, &v);
		if (ctx->json)
			fputs(", \"args\": [", stdout);
		else if (pf && !ctx->text_only)
			fputc(' ', stdout);
		print_args(ctx, p, pf, &v);
		fputs(ctx->json ? "]" : "", stdout);
		if (ctx->json && ctx->ustack)
			stack_print(ctx, e, len);
		fputs(ctx->json ? "}\n" : "\n", stdout);
	}
	if (!ctx->json && ctx->ustack)
		stack_print(ctx, e, len);
	if (output_check(ctx))
		return -ECANCELED;
	ctx->count++;
	if (ctx->max_count && ctx->count >= ctx->max_count)
		return -ECANCELED;
	return 0;
}
