// SPDX-License-Identifier: BSD-2-Clause
/*
 * --filter EXPR: comparisons of argN, pid or tid with an integer, or of
 * the string argN points to (or str(argN), or str(argN, argM): argM's
 * count of bytes, no NUL needed) with a "string" (== and !=), joined by
 * && (binds tighter) and ||, e.g. "arg2 > 100 && pid == 42 || arg0 == 0"
 * or 'arg1 == "GET"'. Also the parser of str(...) for --by and formats.
 * The result is the DNF struct trace_filter that the BPF program
 * evaluates, so hits filtered out never reach user space.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

static const char *skip_ws(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* "argN" at *sp, consumed: N; -EINVAL if not one, -ERANGE past the last
 * argument (nothing consumed). */
static int arg_number(const char **sp)
{
	const char *s = *sp;
	char *end;
	long n;

	if (strncmp(s, "arg", 3) || !isdigit((unsigned char)s[3]))
		return -EINVAL;
	errno = 0;
	n = strtol(s + 3, &end, 10);
	if (isalpha((unsigned char)*end) || *end == '_')
		return -EINVAL;
	if (errno || n < 0 || n >= TRACE_MAX_ARGS)
		return -ERANGE;
	*sp = end;
	return (int)n;
}

int trace_str_expr(const char **sp, int *arg, int *len_arg)
{
	const char *s = *sp;
	int a, n = -1;

	if (strncmp(s, "str(", 4))
		return -EINVAL;
	s = skip_ws(s + 4);
	a = arg_number(&s);
	if (a < 0)
		return a;
	s = skip_ws(s);
	if (*s == ',') {
		s = skip_ws(s + 1);
		n = arg_number(&s);
		if (n < 0)
			return n;
		if (n == a)
			return -EINVAL;
		s = skip_ws(s);
	}
	if (*s != ')')
		return -EINVAL;
	*arg = a;
	*len_arg = n;
	*sp = s + 1;
	return 0;
}

/* argN, pid, tid, or str(...) (then *is_str). */
static int parse_operand(const char **sp, struct trace_term *t, bool *is_str)
{
	const char *s = *sp;
	int n, len;

	*is_str = false;
	if (!strncmp(s, "pid", 3) && !isalnum((unsigned char)s[3])) {
		t->operand = TRACE_OPD_PID;
		*sp = s + 3;
		return 0;
	}
	if (!strncmp(s, "tid", 3) && !isalnum((unsigned char)s[3])) {
		t->operand = TRACE_OPD_TID;
		*sp = s + 3;
		return 0;
	}
	*is_str = !trace_str_expr(sp, &n, &len);
	if (*is_str) {
		t->operand = (__u8)n;
		t->len_arg = (__u8)(len + 1);
		return 0;
	}
	n = arg_number(sp);
	if (n < 0)
		return n;
	t->operand = (__u8)n;
	return 0;
}

static int parse_op(const char **sp, struct trace_term *t)
{
	static const struct {
		const char *s;
		enum trace_op op;
	} ops[] = {
		{ "==", TRACE_EQ }, { "!=", TRACE_NE }, { "<=", TRACE_LE },
		{ ">=", TRACE_GE }, { "<", TRACE_LT },	{ ">", TRACE_GT },
	};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i].s);

		if (!strncmp(*sp, ops[i].s, n)) {
			t->op = ops[i].op;
			*sp += n;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * An integer constant: decimal, or hex after 0x, with an optional sign.
 * Not strtoll()'s base 0: a leading 0 would be octal (010 eight, 08 an
 * error) where a user means ten. The BPF side compares signed 64-bit
 * values, so a constant outside that range is -ERANGE: taken modulo 2^64
 * it would silently compare as another number (2^64 - 1 as -1).
 */
static int parse_value(const char **sp, struct trace_term *t)
{
	const char *s = *sp, *digits = s + (*s == '-' || *s == '+');
	int base = 10;
	char *end;

	if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
		base = 16;
	/* strtoll() would skip spaces and take a second sign. */
	if (!isxdigit((unsigned char)*digits))
		return -EINVAL;
	errno = 0;
	t->value = strtoll(s, &end, base);
	if (end == s || isalnum((unsigned char)*end))
		return -EINVAL;
	*sp = end;
	return errno == ERANGE ? -ERANGE : 0;
}

/*
 * A string constant, "..." with \" and \\ (the only escapes), for argN ==
 * or != (the string the argument points to): into out, its length in
 * t->value. -EINVAL, or -E2BIG past TRACE_FSTR - 2 bytes.
 */
static int parse_string(const char **sp, struct trace_term *t, char *out)
{
	const char *s = *sp + 1;
	size_t n = 0;

	if (t->operand >= TRACE_MAX_ARGS ||
	    (t->op != TRACE_EQ && t->op != TRACE_NE))
		return -EINVAL;
	for (; *s && *s != '"'; s++) {
		if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
			s++;
		if (n == TRACE_FSTR - 2)
			return -E2BIG;
		out[n++] = *s;
	}
	if (*s != '"')
		return -EINVAL;
	out[n] = '\0';
	t->value = (__s64)n;
	t->op = t->op == TRACE_EQ ? TRACE_SEQ : TRACE_SNE;
	*sp = s + 1;
	return 0;
}

int filter_parse(const char *s, struct trace_filter *f, char *why, size_t len)
{
	const char *start = s, *value;
	struct trace_term *t;
	bool is_str;
	int err;

	memset(f, 0, sizeof(*f));
	for (;;) {
		if (f->term_cnt == TRACE_MAX_TERMS) {
			snprintf(why, len, "more than %d comparisons",
				 TRACE_MAX_TERMS);
			return -E2BIG;
		}
		t = &f->terms[f->term_cnt++];
		s = skip_ws(s);
		if (parse_operand(&s, t, &is_str))
			goto bad;
		s = skip_ws(s);
		if (parse_op(&s, t))
			goto bad;
		s = skip_ws(s);
		value = s;
		if (*s == '"') {
			err = parse_string(&s, t, f->strs[t - f->terms]);
			if (err == -E2BIG) {
				snprintf(why, len,
					 "string '%.20s...' longer than %d bytes",
					 value + 1, TRACE_FSTR - 2);
				return err;
			}
		} else {
			/* str(...) is a string, compared with a "string". */
			err = is_str ? -EINVAL : parse_value(&s, t);
		}
		if (err == -ERANGE) {
			snprintf(why, len,
				 "constant '%.*s' out of range (signed 64-bit: %lld to %lld)",
				 (int)(s - value), value, (long long)INT64_MIN,
				 (long long)INT64_MAX);
			return err;
		}
		if (err)
			goto bad;
		s = skip_ws(s);
		if (!*s) {
			t->group_end = 1;
			return 0;
		}
		if (!strncmp(s, "||", 2))
			t->group_end = 1;
		else if (strncmp(s, "&&", 2))
			goto bad;
		s += 2;
	}
bad:
	snprintf(why, len,
		 "cannot parse at column %d: want argN, pid or tid, then == != < <= > >=, an integer (or for argN, str(argN) or str(argN, argM) == and != a \"string\"), and && or || between comparisons",
		 (int)(s - start) + 1);
	return -EINVAL;
}
