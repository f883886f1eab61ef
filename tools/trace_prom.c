// SPDX-License-Identifier: BSD-2-Clause
/*
 * The text of `usdt trace --listen`'s /metrics: Prometheus's text
 * exposition format, version 0.0.4. A page is built whole in a growing
 * buffer, then sent (trace_http.c): one line per sample,
 *
 *   name{label="value",...} number
 *
 * after the metric's "# HELP" and "# TYPE" lines. A label value escapes
 * backslash, double quote and newline as \\, \" and \n, and is UTF-8 (a
 * byte that is not, U+FFFD); a HELP text escapes backslash and newline.
 *
 * A buffer that could not grow is marked, not freed: every later append
 * is dropped, and the caller looks once, at the end (prom_buf.oom).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

static bool prom_grow(struct prom_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	if (b->oom || more >= SIZE_MAX - b->len) {
		b->oom = true;
		return false;
	}
	if (b->len + more + 1 <= b->cap)
		return true;
	while (cap < b->len + more + 1) {
		if (cap > SIZE_MAX / 2) {
			b->oom = true;
			return false;
		}
		cap *= 2;
	}
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void prom_put(struct prom_buf *b, const char *s, size_t len)
{
	if (!prom_grow(b, len))
		return;
	memcpy(b->p + b->len, s, len);
	b->len += len;
	b->p[b->len] = '\0';
}

void prom_printf(struct prom_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !prom_grow(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/*
 * The length of the valid UTF-8 sequence at s (at most len bytes), or 0:
 * Prometheus refuses a whole scrape over one invalid label value, and a
 * traced program's strings may be anything. RFC 3629's table: no
 * overlong forms, no surrogates, nothing above U+10FFFF.
 */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	size_t n, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

void prom_escape(struct prom_buf *b, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, from = 0, n;

	while (i < len) {
		const char *rep = s[i] == '\\' ? "\\\\" :
				  s[i] == '"'  ? "\\\"" :
				  s[i] == '\n' ? "\\n" :
						 NULL;

		n = rep ? 0 : utf8_len(u + i, len - i);
		if (n) {
			i += n;
			continue;
		}
		prom_put(b, s + from, i - from);
		/* A byte that is no UTF-8: U+FFFD, the replacement
		 * character. */
		prom_put(b, rep ? rep : "\xef\xbf\xbd", rep ? strlen(rep) : 3);
		from = ++i;
	}
	prom_put(b, s + from, len - from);
}

void prom_label(struct prom_buf *b, const char *name, const char *val,
		size_t len)
{
	/* Labels after the first are joined with a comma. */
	if (b->len && b->p[b->len - 1] != '{')
		prom_put(b, ",", 1);
	prom_printf(b, "%s=\"", name);
	prom_escape(b, val, len);
	prom_put(b, "\"", 1);
}

void prom_head(struct prom_buf *b, const char *name, const char *type,
	       const char *help)
{
	/* HELP's own escapes: backslash and newline only. Ours are plain
	 * text without either. */
	prom_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The upper bound of log2 slot k (1..63) of integer values, inclusive:
 * [2^(k-1), 2^k) holds at most 2^k - 1. */
static uint64_t slot_le(uint32_t k)
{
	return k ? ((uint64_t)1 << k) - 1 : 0;
}

static void prom_le(struct prom_buf *b, const struct prom_hist *h,
		    const char *le, uint64_t cum)
{
	prom_printf(b, "%s_bucket{%s%sle=\"%s\"} %" PRIu64 "\n", h->name,
		    h->labels, *h->labels ? "," : "", le, cum);
}

void prom_hist(struct prom_buf *b, const struct prom_hist *h)
{
	uint64_t cum = 0;
	char le[40];
	uint32_t k;

	/* Negatives first: an integer below 0 is at most -1. */
	if (h->neg) {
		cum += h->slots[TRACE_SLOT_NEG];
		prom_le(b, h, h->scale != 1 ? "-1e-09" : "-1", cum);
	}
	for (k = 0; k < 64; k++) {
		cum += h->slots[k];
		if (h->scale == 1 && h->step <= 1)
			snprintf(le, sizeof(le), "%" PRIu64, slot_le(k));
		else if (h->step <= 1)
			snprintf(le, sizeof(le), "%.15g",
				 (double)slot_le(k) / h->scale);
		else /* the last base unit of the slot's last step */
			snprintf(le, sizeof(le), "%.15g",
				 (((double)slot_le(k) + 1) * (double)h->step -
				  1) / h->scale);
		prom_le(b, h, le, cum);
	}
	/* Slot 64, [2^63, 2^64), only in +Inf; a negative value of an
	 * argument not typed signed counts there too. */
	cum += h->slots[64] + (h->neg ? 0 : h->slots[TRACE_SLOT_NEG]);
	prom_le(b, h, "+Inf", cum);
	prom_printf(b, "%s_sum{%s} %.17g\n%s_count{%s} %" PRIu64 "\n", h->name,
		    h->labels, h->sum / h->scale, h->name, h->labels, cum);
}
