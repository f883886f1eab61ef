// SPDX-License-Identifier: BSD-2-Clause
/*
 * Scanning helpers shared by the four operand parsers (see arch.h). They
 * read untrusted note text, so every read is checked against the length
 * the caller gave; none relies on a terminating NUL.
 */
#include <stdarg.h>
#include <stdio.h>

#include "reader/arch/arch.h"

int usdt__reg_lookup(const struct usdt__reg_desc *tab, size_t n,
		     const char *name, size_t len, int *width)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strlen(tab[i].name) != len ||
		    memcmp(tab[i].name, name, len))
			continue;
		if (width)
			*width = tab[i].width;
		return tab[i].off;
	}
	return -ENOENT;
}

int usdt__op_fail(struct usdt__arg *arg, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(arg->reason, sizeof(arg->reason), fmt, ap);
	va_end(ap);
	return err;
}

int usdt__op_fail_fpreg(struct usdt__arg *arg, const char *pfx,
			const char *name, size_t len)
{
	int q = len > USDT__QUOTE_MAX ? USDT__QUOTE_MAX : (int)len;

	return usdt__op_fail(arg, -EOPNOTSUPP,
			     "floating-point/vector register %s%.*s: not "
			     "readable by BPF",
			     pfx, q, name);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int usdt__scan_num(const char *s, size_t len, size_t *pos, uint64_t *val,
		   struct usdt__arg *arg)
{
	size_t p = *pos;
	bool neg = false;
	uint64_t v = 0;
	int digits = 0, d;

	if (p < len && (s[p] == '-' || s[p] == '+'))
		neg = s[p++] == '-';
	if (p + 1 < len && s[p] == '0' &&
	    (s[p + 1] == 'x' || s[p + 1] == 'X')) {
		p += 2;
		while (p < len && (d = hex_digit(s[p])) >= 0) {
			if (v >> 60)
				return usdt__op_fail(arg, -EINVAL,
						     "constant does not fit in 64 bits");
			v = v << 4 | (uint64_t)d;
			digits++;
			p++;
		}
	} else {
		if (p + 1 < len && s[p] == '0' && usdt__is_digit(s[p + 1]))
			return usdt__op_fail(arg, -EINVAL,
					     "constant with a leading zero (octal?)");
		while (p < len && usdt__is_digit(s[p])) {
			if (__builtin_mul_overflow(v, 10, &v) ||
			    __builtin_add_overflow(v, (uint64_t)(s[p] - '0'),
						   &v))
				return usdt__op_fail(arg, -EINVAL,
						     "constant does not fit in 64 bits");
			digits++;
			p++;
		}
	}
	if (!digits)
		return usdt__op_fail(arg, -EINVAL, "expected a number");
	/* Refuse "12abc" and "0x1g": a number runs into a name. */
	if (p < len && (usdt__is_alpha(s[p]) || s[p] == '_'))
		return usdt__op_fail(arg, -EINVAL, "garbage after a number");
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return usdt__op_fail(arg, -EINVAL,
					     "negative constant below INT64_MIN");
		v = -v;
	}
	*val = v;
	*pos = p;
	return 0;
}

size_t usdt__span_alnum(const char *s, size_t len, size_t pos)
{
	size_t p = pos;

	while (p < len && (usdt__is_alpha(s[p]) || usdt__is_digit(s[p])))
		p++;
	return p - pos;
}

int usdt__reg_num(const char *name, size_t len)
{
	if (len == 1 && usdt__is_digit(name[0]))
		return name[0] - '0';
	if (len == 2 && name[0] >= '1' && name[0] <= '9' &&
	    usdt__is_digit(name[1]))
		return (name[0] - '0') * 10 + (name[1] - '0');
	return -1;
}

bool usdt__name_is(const char *name, size_t len, const char *what)
{
	return strlen(what) == len && !memcmp(name, what, len);
}

bool usdt__name_numbered(const char *name, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len > n && !memcmp(name, prefix, n) &&
	       usdt__reg_num(name + n, len - n) >= 0;
}

static bool sym_start(char c)
{
	return usdt__is_alpha(c) || c == '_' || c == '.';
}

static bool sym_char(char c)
{
	return sym_start(c) || usdt__is_digit(c) || c == '$';
}

int usdt__scan_sym_expr(const char *s, size_t len, size_t *pos,
			struct usdt__arg *arg, bool gotpcrel)
{
	uint64_t disp = (uint64_t)arg->disp, v;
	size_t p = *pos, start;
	bool minus = false;
	int err;

	for (;;) {
		if (p < len && sym_start(s[p])) {
			if (arg->has_sym)
				return usdt__op_fail(arg, -EOPNOTSUPP,
						     "two symbols in one operand");
			if (minus)
				return usdt__op_fail(arg, -EOPNOTSUPP,
						     "subtracting a symbol not supported");
			start = p;
			while (p < len && sym_char(s[p]))
				p++;
			arg->has_sym = true;
			arg->sym_pos = (uint16_t)start;
			arg->sym_len = (uint16_t)(p - start);
			if (p < len && s[p] == '@') {
				size_t n = usdt__span_alnum(s, len, p + 1);

				if (!gotpcrel || n != 8 ||
				    memcmp(s + p + 1, "GOTPCREL", 8)) {
					if (n > USDT__QUOTE_MAX)
						n = USDT__QUOTE_MAX;
					return usdt__op_fail(arg, -EOPNOTSUPP,
							     "relocation @%.*s not supported",
							     (int)n, s + p + 1);
				}
				arg->got = true;
				p += 1 + n;
			}
		} else if (p < len && usdt__is_num_start(s[p])) {
			err = usdt__scan_num(s, len, &p, &v, arg);
			if (err)
				return err;
			disp = minus ? disp - v : disp + v;
		} else {
			return usdt__op_fail(arg, -EINVAL,
					     "expected a number or a symbol");
		}
		if (p >= len || (s[p] != '+' && s[p] != '-'))
			break;
		minus = s[p++] == '-';
	}
	arg->disp = (int64_t)disp;
	*pos = p;
	return 0;
}

void usdt__bare_symbol(struct usdt__arg *arg)
{
	if (arg->size != 8 || arg->is_float || arg->is_signed)
		arg->mem = true;
	else if (!arg->disp)
		arg->sym_obj8 = true;
}

bool usdt__reg_like(const char *name, size_t len)
{
	size_t a = 0;

	while (a < len && usdt__is_alpha(name[a]))
		a++;
	if (a < 1 || a > 2 || a == len)
		return false;
	while (a < len && usdt__is_digit(name[a]))
		a++;
	return a == len;
}
