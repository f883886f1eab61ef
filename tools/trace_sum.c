// SPDX-License-Identifier: BSD-2-Clause
/*
 * The summaries of `usdt trace` (--count, --hist, --latency): the BPF
 * program adds each hit to the map "sums"; here the map is read every
 * interval and at the end, and what was added since the last reading is
 * printed. The map is never cleared from user space (that would race
 * with the program's increments): counts are cumulative there, and the
 * last reading is kept here to take differences.
 *
 * Rows are per probe name: the table has an entry (a cookie) per
 * provider:name per file, and the entries of one name in several files
 * (two copies of a library, -a, a glob TARGET) are the one row the user
 * sees. Each reading moves an entry's count to its name's first entry,
 * its head (heads[]), and adds up what then has one key: one row, one
 * histogram, one Prometheus series (a scrape with two of the same labels
 * fails). The head is the smallest cookie of its name; the table only
 * grows, so a name's head stays its head and differences between two
 * readings stay right.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* A map entry; the key of map sums widened to by_sums's (val and str
 * zero). */
struct sum_ent {
	struct trace_by_key key;
	uint64_t val;
};

struct sum_state {
	struct sum_cfg cfg;
	int fd;
	const struct probe_ent *probes;
	size_t probe_cnt;
	struct sum_ent *prev, *cur;
	size_t prev_cnt, cur_cnt, cap;
	/* Per cookie, of the first headed_cnt probes: the head of its name,
	 * and (at a head) whether any entry of the name is not --enable's
	 * alone (TRACE_ROLE_QUIET), so has a row. */
	uint32_t *heads;
	bool *shown;
	size_t headed_cnt;
};

uint32_t sum_map_size(const struct sum_cfg *cfg, size_t probe_cnt)
{
	switch (cfg->mode) {
	case TRACE_COUNT:
		/* --sum: a sum per count. */
		return (uint32_t)(cfg->by_pid ? probe_cnt * 256 + 4096 :
						probe_cnt) *
		       (cfg->sum_arg >= 0 ? 2 : 1);
	case TRACE_HIST:
		/* And a sum each (TRACE_SUM_AUX). */
		return (uint32_t)(probe_cnt * (TRACE_SLOTS + 1));
	case TRACE_LATENCY:
		return 128;
	default:
		return 1;
	}
}

static int ent_cmp(const void *a, const void *b)
{
	const struct sum_ent *x = a, *y = b;
	int i;

	if (x->key.cookie != y->key.cookie)
		return x->key.cookie < y->key.cookie ? -1 : 1;
	if (x->key.aux != y->key.aux)
		return x->key.aux < y->key.aux ? -1 : 1;
	for (i = 0; i < TRACE_BY_PARTS; i++)
		if (x->key.val[i] != y->key.val[i])
			return x->key.val[i] < y->key.val[i] ? -1 : 1;
	return memcmp(x->key.str, y->key.str, sizeof(x->key.str));
}

/* Read the entry after *prev (NULL: the first) of the map: sums's keys
 * are widened. 0, or -ENOENT at the end. */
static int map_next(const struct sum_state *s, const struct sum_ent *prev,
		    struct sum_ent *out)
{
	struct trace_sum_key small, next_small;

	memset(&out->key, 0, sizeof(out->key));
	if (s->cfg.by_cnt) {
		if (bpf_map_get_next_key(s->fd, prev ? &prev->key : NULL,
					 &out->key))
			return -ENOENT;
	} else {
		if (prev) {
			small.cookie = prev->key.cookie;
			small.aux = prev->key.aux;
		}
		if (bpf_map_get_next_key(s->fd, prev ? &small : NULL,
					 &next_small))
			return -ENOENT;
		out->key.cookie = next_small.cookie;
		out->key.aux = next_small.aux;
	}
	return 0;
}

static int map_value(const struct sum_state *s, const struct sum_ent *e,
		     uint64_t *v)
{
	struct trace_sum_key small = { e->key.cookie, e->key.aux };

	return bpf_map_lookup_elem(s->fd,
				   s->cfg.by_cnt ? (const void *)&e->key :
						   &small,
				   v);
}

struct sum_state *sum_new(const struct sum_cfg *cfg, int map_fd,
			  const struct probe_ent *probes, size_t probe_cnt)
{
	struct sum_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->fd = map_fd;
	s->probes = probes;
	s->probe_cnt = probe_cnt;
	return s;
}

void sum_set_probes(struct sum_state *s, const struct probe_ent *probes,
		    size_t probe_cnt)
{
	if (!s)
		return;
	s->probes = probes;
	s->probe_cnt = probe_cnt;
}

void sum_free(struct sum_state *s)
{
	if (!s)
		return;
	free(s->prev);
	free(s->cur);
	free(s->heads);
	free(s->shown);
	free(s);
}

struct name_ref {
	const char *provider, *name;
	uint32_t cookie;
};

static int name_cmp(const struct name_ref *x, const struct name_ref *y)
{
	int c = strcmp(x->provider, y->provider);

	return c ? c : strcmp(x->name, y->name);
}

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	int c = name_cmp(x, y);

	if (!c && x->cookie != y->cookie)
		c = x->cookie < y->cookie ? -1 : 1;
	return c;
}

/* heads[] and shown[] for the probes the table has now (sorted by name:
 * n log n, whatever names the files have). 0 or -ENOMEM. */
static int find_heads(struct sum_state *s)
{
	size_t i, j, n = s->probe_cnt;
	struct name_ref *v;
	uint32_t *heads;
	bool *shown;

	if (s->headed_cnt == n && s->heads)
		return 0;
	v = calloc(n + 1, sizeof(*v));
	heads = realloc(s->heads, (n + 1) * sizeof(*heads));
	if (heads)
		s->heads = heads;
	shown = realloc(s->shown, (n + 1) * sizeof(*shown));
	if (shown)
		s->shown = shown;
	if (!v || !heads || !shown) {
		free(v);
		s->headed_cnt = 0;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		v[i] = (struct name_ref){ s->probes[i].provider,
					  s->probes[i].name, (uint32_t)i };
	if (n)
		qsort(v, n, sizeof(*v), name_ref_cmp);
	for (i = 0; i < n; i = j) {
		uint32_t head = v[i].cookie;

		shown[head] = false;
		for (j = i; j < n && !name_cmp(&v[j], &v[i]); j++) {
			heads[v[j].cookie] = head;
			shown[head] |= !(s->probes[v[j].cookie].role &
					 TRACE_ROLE_QUIET);
		}
	}
	free(v);
	s->headed_cnt = n;
	return 0;
}

/* cur's entries moved to their names' heads and added up where they then
 * have one key; sorted. */
static void merge_names(struct sum_state *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->cur_cnt; i++)
		if (s->cur[i].key.cookie < s->headed_cnt)
			s->cur[i].key.cookie = s->heads[s->cur[i].key.cookie];
	/* Before the first hit cur is still NULL, and qsort() takes no NULL
	 * even for no elements. */
	if (!s->cur_cnt)
		return;
	qsort(s->cur, s->cur_cnt, sizeof(*s->cur), ent_cmp);
	for (i = 1; i < s->cur_cnt; i++) {
		if (!ent_cmp(&s->cur[n], &s->cur[i]))
			s->cur[n].val += s->cur[i].val;
		else
			s->cur[++n] = s->cur[i];
	}
	s->cur_cnt = n + 1;
}

/* Read the whole map into cur, its entries merged by name (see the top)
 * and sorted; delta() takes differences from prev, the last reading
 * printed. Returns 0 or -ENOMEM. */
static int sum_read(struct sum_state *s)
{
	struct sum_ent e, prev;
	struct sum_ent *t;
	bool first = true;

	s->cur_cnt = 0;
	if (find_heads(s))
		return -ENOMEM;
	while (!map_next(s, first ? NULL : &prev, &e)) {
		first = false;
		prev = e;
		if (map_value(s, &e, &e.val))
			continue;
		if (s->cur_cnt == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 256;

			t = realloc(s->cur, cap * sizeof(*t));
			if (!t)
				return -ENOMEM;
			s->cur = t;
			t = realloc(s->prev, cap * sizeof(*t));
			if (!t)
				return -ENOMEM;
			s->prev = t;
			s->cap = cap;
		}
		s->cur[s->cur_cnt++] = e;
	}
	merge_names(s);
	return 0;
}

/* The value of key added since the last print. */
static uint64_t delta(const struct sum_state *s, const struct sum_ent *e)
{
	const struct sum_ent *old =
		s->prev_cnt ?
			bsearch(e, s->prev, s->prev_cnt, sizeof(*e), ent_cmp) :
			NULL;

	return old ? e->val - old->val : e->val;
}

static void print_probe(const struct sum_state *s, uint32_t cookie)
{
	const struct probe_ent *p = &s->probes[cookie];

	if (s->cfg.json) {
		char *full;

		if (asprintf(&full, "%s:%s", p->provider, p->name) < 0) {
			fputs("null", stdout);
			return;
		}
		json_str(stdout, full);
		free(full);
		return;
	}
	print_escaped(stdout, p->provider, strlen(p->provider));
	fputc(':', stdout);
	print_escaped(stdout, p->name, strlen(p->name));
}

/* The probe whose arguments an entry's --by key has: its own, or for
 * --latency the first START probe (which the key is read at). */
static const struct probe_ent *key_probe(const struct sum_state *s,
					 const struct sum_ent *e)
{
	size_t i;

	if (e->key.cookie < s->probe_cnt)
		return &s->probes[e->key.cookie];
	for (i = 0; i < s->probe_cnt; i++)
		if (s->probes[i].role & TRACE_ROLE_START)
			break;
	return &s->probes[i < s->probe_cnt ? i : 0];
}

/* Part i of an entry's --by key as text (NUL-terminated, in buf of
 * TRACE_BY_STR + 1 bytes or more): the argument as its probe types it,
 * or the string. Returns its length. */
static size_t by_text(const struct sum_state *s, const struct sum_ent *e, int i,
		      char *buf)
{
	const struct trace_by_part *bp = &s->cfg.by[i];
	const struct probe_ent *p = key_probe(s, e);

	if (bp->str) {
		memcpy(buf, e->key.str[bp->str - 1], TRACE_BY_STR);
		buf[TRACE_BY_STR] = '\0';
		return strlen(buf);
	}
	if (bp->arg < p->arg_cnt && p->args[bp->arg].is_signed)
		return (size_t)snprintf(buf, TRACE_BY_STR, "%" PRId64,
					(int64_t)e->key.val[i]);
	return (size_t)snprintf(buf, TRACE_BY_STR, "%" PRIu64,
				(uint64_t)e->key.val[i]);
}

/* --by's parts of an entry, after a blank each; JSON: "value" for one
 * part, "values": [...] for several. */
static void print_by(const struct sum_state *s, const struct sum_ent *e)
{
	char buf[TRACE_BY_STR + 1];
	int i;

	if (s->cfg.json)
		fputs(s->cfg.by_cnt > 1 ? ", \"values\": [" : ", \"value\": ",
		      stdout);
	for (i = 0; i < s->cfg.by_cnt; i++) {
		size_t n = by_text(s, e, i, buf);

		if (!s->cfg.json) {
			fputc(' ', stdout);
			print_escaped(stdout, buf, n);
			continue;
		}
		if (i)
			fputs(", ", stdout);
		if (s->cfg.by[i].str)
			json_str(stdout, buf);
		else
			fputs(buf, stdout);
	}
	if (s->cfg.json && s->cfg.by_cnt > 1)
		fputc(']', stdout);
}

struct count_line {
	const struct sum_ent *e;
	uint64_t d;
};

/* By probe, then (--by) the most hits first, then by key. */
static int line_cmp(const void *a, const void *b)
{
	const struct count_line *x = a, *y = b;

	if (x->e->key.cookie != y->e->key.cookie)
		return x->e->key.cookie < y->e->key.cookie ? -1 : 1;
	if (x->d != y->d)
		return x->d > y->d ? -1 : 1;
	return ent_cmp(x->e, y->e);
}

/* The sum (TRACE_AUX_SUM) of count entry e since the last print; 0 if
 * none. */
static uint64_t sum_of(const struct sum_state *s, const struct sum_ent *e)
{
	struct sum_ent k = *e;
	const struct sum_ent *f;

	k.key.aux |= TRACE_AUX_SUM;
	f = bsearch(&k, s->cur, s->cur_cnt, sizeof(k), ent_cmp);
	return f ? delta(s, f) : 0;
}

/* --sum: what the argument added up to, since the last print, for count
 * entry e (0 where it never could be read), as its probe types it. */
static void sum_text(const struct sum_state *s, const struct sum_ent *e,
		     char *buf, size_t len)
{
	const struct probe_ent *p = &s->probes[e->key.cookie];
	uint64_t d = sum_of(s, e);

	if (s->cfg.sum_arg < p->arg_cnt && p->args[s->cfg.sum_arg].is_signed)
		snprintf(buf, len, "%" PRId64, (int64_t)d);
	else
		snprintf(buf, len, "%" PRIu64, d);
}

static void print_count(const struct sum_state *s, const struct count_line *l,
			bool first)
{
	const struct sum_ent *e = l->e;
	char sum[24] = "";

	if (s->cfg.sum_arg >= 0)
		sum_text(s, e, sum, sizeof(sum));
	if (s->cfg.json) {
		fputs(first ? "{\"probe\": " : ", {\"probe\": ", stdout);
		print_probe(s, e->key.cookie);
		if (s->cfg.by_pid)
			printf(", \"pid\": %u", e->key.aux);
		if (s->cfg.by_cnt)
			print_by(s, e);
		printf(", \"count\": %" PRIu64, l->d);
		if (*sum)
			printf(", \"sum\": %s", sum);
		fputc('}', stdout);
		return;
	}
	printf("%12" PRIu64 " ", l->d);
	if (*sum)
		printf("%14s ", sum);
	if (s->cfg.by_pid)
		printf("%8u ", e->key.aux);
	print_probe(s, e->key.cookie);
	if (s->cfg.by_cnt)
		print_by(s, e);
	fputc('\n', stdout);
}

static void print_counts(const struct sum_state *s)
{
	struct count_line *lines = calloc(s->cur_cnt + 1, sizeof(*lines));
	size_t i, n = 0;

	if (s->cfg.json)
		fputs(", \"counts\": [", stdout);
	for (i = 0; lines && i < s->cur_cnt; i++) {
		uint64_t d = delta(s, &s->cur[i]);

		if (d && s->cur[i].key.cookie < s->probe_cnt &&
		    !(s->cur[i].key.aux & TRACE_AUX_SUM))
			lines[n++] = (struct count_line){ &s->cur[i], d };
	}
	if (n && s->cfg.by_cnt)
		qsort(lines, n, sizeof(*lines), line_cmp);
	for (i = 0; i < n; i++)
		print_count(s, &lines[i], !i);
	free(lines);
	if (s->cfg.json)
		fputs("]", stdout);
}

/* "[1024, 2048)" style bounds of a log2 slot, with K/M/G suffixes in
 * text. */
static void slot_bounds(uint32_t slot, uint64_t *lo, uint64_t *hi)
{
	if (slot > 64) { /* TRACE_SLOT_NEG: no bounds of its own */
		*lo = *hi = 0;
		return;
	}
	*lo = slot <= 1 ? slot : (uint64_t)1 << (slot - 1);
	*hi = slot == 0 ? 1 : slot == 64 ? UINT64_MAX : (uint64_t)1 << slot;
}

static const char *human(uint64_t v, char *buf, size_t len)
{
	static const char sfx[] = "KMGTPE";
	int i = -1;

	while (v >= 1024 && !(v % 1024) && i < 5) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, sfx[i]);
	return buf;
}

/*
 * One histogram: the slots of the entries [from, to) of cur (one cookie),
 * as text bars or a JSON array of buckets.
 */
static void print_hist(const struct sum_state *s, size_t from, size_t to)
{
	uint64_t max = 0, d, lo, hi;
	char a[24], b[24];
	bool first = true;
	size_t i;

	for (i = from; i < to; i++)
		if (s->cur[i].key.aux < TRACE_SLOTS &&
		    (d = delta(s, &s->cur[i])) > max)
			max = d;
	if (s->cfg.json)
		fputs("\"buckets\": [", stdout);
	for (i = from; i < to; i++) {
		uint32_t slot = s->cur[i].key.aux;

		d = delta(s, &s->cur[i]);
		if (!d || slot >= TRACE_SLOTS)
			continue;
		slot_bounds(slot, &lo, &hi);
		if (s->cfg.json) {
			if (slot == TRACE_SLOT_NEG)
				printf("%s{\"negative\": true, \"count\": %" PRIu64
				       "}",
				       first ? "" : ", ", d);
			else
				printf("%s{\"low\": %" PRIu64
				       ", \"high\": %" PRIu64
				       ", \"count\": %" PRIu64 "}",
				       first ? "" : ", ", lo, hi, d);
		} else {
			char range[64];
			int bar = (int)(d * 40 / max);

			if (slot == TRACE_SLOT_NEG)
				snprintf(range, sizeof(range), "(< 0)");
			else if (slot == 0)
				snprintf(range, sizeof(range), "[0]");
			else
				snprintf(range, sizeof(range), "[%s, %s)",
					 human(lo, a, sizeof(a)),
					 hi == UINT64_MAX ?
						 "max" :
						 human(hi, b, sizeof(b)));
			printf("  %-20s %12" PRIu64 " |%.*s%*s|\n", range, d,
			       bar, "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
			       40 - bar, "");
		}
		first = false;
	}
	if (s->cfg.json)
		fputs("]", stdout);
}

static void print_hists(const struct sum_state *s)
{
	size_t i = 0, j;
	bool first = true;

	if (s->cfg.json)
		fputs(", \"hists\": [", stdout);
	while (i < s->cur_cnt) {
		uint32_t cookie = s->cur[i].key.cookie;

		for (j = i; j < s->cur_cnt && s->cur[j].key.cookie == cookie;
		     j++)
			;
		if (cookie < s->probe_cnt) {
			if (s->cfg.json) {
				fputs(first ? "{\"probe\": " : ", {\"probe\": ",
				      stdout);
				print_probe(s, cookie);
				printf(", \"arg\": %d, ", s->cfg.hist_arg);
				print_hist(s, i, j);
				fputs("}", stdout);
			} else {
				print_probe(s, cookie);
				printf(" arg%d\n", s->cfg.hist_arg);
				print_hist(s, i, j);
			}
			first = false;
		}
		i = j;
	}
	if (s->cfg.json)
		fputs("]", stdout);
}

/* Threads whose START is still open at the end. */
static uint64_t open_starts(int fd)
{
	uint32_t key, next, *kp = NULL;
	uint64_t n = 0;

	while (fd >= 0 && !bpf_map_get_next_key(fd, kp, &next)) {
		key = next;
		kp = &key;
		n++;
	}
	return n;
}

/* --latency --by: a line per key of START's arguments, most pairs
 * first: the pairs, their total and mean time (in --time-unit's unit). */
static void print_latency_keys(const struct sum_state *s)
{
	struct count_line *lines = calloc(s->cur_cnt + 1, sizeof(*lines));
	size_t i, n = 0;

	for (i = 0; lines && i < s->cur_cnt; i++) {
		uint64_t d = delta(s, &s->cur[i]);

		if (d && !s->cur[i].key.aux)
			lines[n++] = (struct count_line){ &s->cur[i], d };
	}
	if (n)
		qsort(lines, n, sizeof(*lines), line_cmp);
	if (s->cfg.json)
		fputs("\"keys\": [", stdout);
	for (i = 0; i < n; i++) {
		uint64_t total = sum_of(s, lines[i].e);
		char tot[TIME_TEXT_LEN], mean[TIME_TEXT_LEN];

		time_text(tot, total, s->cfg.time_digits);
		time_text(mean, total / lines[i].d, s->cfg.time_digits);
		if (s->cfg.json) {
			printf("%s{\"count\": %" PRIu64, i ? ", " : "",
			       lines[i].d);
			print_by(s, lines[i].e);
			printf(", \"total\": %s, \"mean\": %s}", tot, mean);
			continue;
		}
		printf("%12" PRIu64 " %14s %14s", lines[i].d, tot, mean);
		print_by(s, lines[i].e);
		fputc('\n', stdout);
	}
	if (s->cfg.json)
		fputs("]", stdout);
	free(lines);
}

static void print_latency(const struct sum_state *s, bool final, int starts_fd)
{
	uint64_t um_start = 0, um_end = 0;
	size_t i, from = s->cur_cnt, to = s->cur_cnt;

	for (i = 0; i < s->cur_cnt; i++) {
		const struct sum_ent *e = &s->cur[i];

		if (e->key.cookie != TRACE_LAT_KEY)
			continue;
		if (e->key.aux == TRACE_LAT_UNMATCHED_START)
			um_start = delta(s, e);
		else if (e->key.aux == TRACE_LAT_UNMATCHED_END)
			um_end = delta(s, e);
		if (from == s->cur_cnt)
			from = i;
		to = i + 1;
	}
	if (final)
		um_start += open_starts(starts_fd);
	if (s->cfg.json) {
		fputs(", \"latency\": {\"start\": ", stdout);
		json_str(stdout, s->cfg.lat_start);
		fputs(", \"end\": ", stdout);
		json_str(stdout, s->cfg.lat_end);
		printf(", \"unit\": \"%s\", ",
		       time_unit_name(s->cfg.time_digits));
		if (s->cfg.by_cnt)
			print_latency_keys(s);
		else
			print_hist(s, from, to);
		printf(", \"unmatched_starts\": %" PRIu64
		       ", \"unmatched_ends\": %" PRIu64 "}",
		       um_start, um_end);
		return;
	}
	fputs("latency ", stdout);
	print_escaped(stdout, s->cfg.lat_start, strlen(s->cfg.lat_start));
	fputs(" -> ", stdout);
	print_escaped(stdout, s->cfg.lat_end, strlen(s->cfg.lat_end));
	if (s->cfg.by_cnt) {
		printf(" (%s): count, total, mean, key\n",
		       time_unit_name(s->cfg.time_digits));
		print_latency_keys(s);
	} else {
		printf(" (%s)\n", time_unit_name(s->cfg.time_digits));
		print_hist(s, from, to);
	}
	printf("unmatched starts: %" PRIu64 ", unmatched ends: %" PRIu64 "\n",
	       um_start, um_end);
}

int sum_print_slow(const struct sum_state *s, const struct trace_slow *e,
		   int64_t wall_off)
{
	struct sum_ent ent = { .key = e->key };
	char comm[TRACE_COMM_LEN + 1];

	if (!s)
		return 0;
	memcpy(comm, e->comm, TRACE_COMM_LEN);
	comm[TRACE_COMM_LEN] = '\0';
	if (s->cfg.json) {
		printf("{\"ts\": %" PRIu64 ", \"wall\": ", (uint64_t)e->ts);
		print_wall(stdout, (int64_t)e->ts + wall_off);
		printf(", \"pid\": %u, \"tid\": %u, \"comm\": ", e->pid,
		       e->tid);
		json_str(stdout, comm);
		fputs(", \"start\": ", stdout);
		json_str(stdout, s->cfg.lat_start);
		fputs(", \"end\": ", stdout);
		json_str(stdout, s->cfg.lat_end);
		printf(", \"ns\": %" PRIu64, (uint64_t)e->ns);
		if (s->cfg.by_cnt)
			print_by(s, &ent);
		fputs("}\n", stdout);
		return -stdout_flush();
	}
	print_time(stdout, e->ts, s->cfg.time_digits);
	printf(" %u %u ", e->pid, e->tid);
	print_escaped(stdout, comm, strlen(comm));
	fputc(' ', stdout);
	print_escaped(stdout, s->cfg.lat_start, strlen(s->cfg.lat_start));
	fputs(" -> ", stdout);
	print_escaped(stdout, s->cfg.lat_end, strlen(s->cfg.lat_end));
	fputc(' ', stdout);
	print_time(stdout, e->ns, s->cfg.time_digits);
	printf(" %s", time_unit_name(s->cfg.time_digits));
	if (s->cfg.by_cnt)
		print_by(s, &ent);
	fputc('\n', stdout);
	return -stdout_flush();
}

int sum_print(struct sum_state *s, double t, uint64_t lost, bool final,
	      int starts_fd)
{
	struct sum_ent *tmp;
	int err = sum_read(s);

	if (err)
		return err;
	if (s->cfg.json) {
		printf("{\"time\": %.3f, \"wall\": ", t);
		print_wall(stdout, wall_now());
		printf(", \"final\": %s, \"lost\": %" PRIu64,
		       final ? "true" : "false", lost);
	}
	if (!s->cfg.json)
		printf("@ %.3f s%s%s\n", t, final ? " (end)" : "",
		       lost ? " (some hits lost: map or buffer full)" : "");
	if (s->cfg.mode == TRACE_COUNT)
		print_counts(s);
	else if (s->cfg.mode == TRACE_HIST)
		print_hists(s);
	else
		print_latency(s, final, starts_fd);
	fputs(s->cfg.json ? "}\n" : "\n", stdout);
	tmp = s->prev;
	s->prev = s->cur;
	s->cur = tmp;
	s->prev_cnt = s->cur_cnt;
	return -stdout_flush();
}

/* ---------------------------------------------------------------------- */
/* --listen: the map's totals as Prometheus metrics (trace_prom.c's text). */

static void metric_probe(struct prom_buf *b, const char *name,
			 const struct probe_ent *p)
{
	prom_printf(b, "%s{", name);
	prom_label(b, "provider", p->provider, strlen(p->provider));
	prom_label(b, "probe", p->name, strlen(p->name));
}

/* --by's labels: argN="value" for each part, as print_by() shows it. */
static void metric_by(struct prom_buf *b, const struct sum_state *s,
		      const struct sum_ent *e)
{
	char name[16], val[TRACE_BY_STR + 1];
	int i;

	for (i = 0; i < s->cfg.by_cnt; i++) {
		size_t n = by_text(s, e, i, val);

		snprintf(name, sizeof(name), "arg%d", s->cfg.by[i].arg);
		prom_label(b, name, val, n);
	}
}

/* " V\n" after a metric's labels: a count, or (flag TRACE_AUX_SUM) a sum
 * as probe k types the argument. */
static void metric_value(struct prom_buf *b, const struct sum_state *s,
			 uint32_t k, uint64_t v, uint32_t flag)
{
	const struct probe_ent *p = &s->probes[k];
	int a = s->cfg.sum_arg;

	if (flag && a < p->arg_cnt && p->args[a].is_signed)
		prom_printf(b, "} %" PRId64 "\n", (int64_t)v);
	else
		prom_printf(b, "} %" PRIu64 "\n", v);
}

/* The counts' (flag 0) or --sum's sums' (TRACE_AUX_SUM) metric, each
 * entry of cur that is one of them. */
static void metrics_entries(const struct sum_state *s, struct prom_buf *b,
			    const char *name, uint32_t flag)
{
	bool keyed = s->cfg.by_pid || s->cfg.by_cnt;
	const struct sum_ent *e;
	size_t i, k;

	for (i = 0; keyed && i < s->cur_cnt; i++) {
		e = &s->cur[i];
		if (e->key.cookie >= s->probe_cnt ||
		    (e->key.aux & TRACE_AUX_SUM) != flag)
			continue;
		metric_probe(b, name, &s->probes[e->key.cookie]);
		if (s->cfg.by_pid)
			prom_printf(b, ",pid=\"%u\"",
				    e->key.aux & ~TRACE_AUX_SUM);
		if (s->cfg.by_cnt)
			metric_by(b, s, e);
		metric_value(b, s, e->key.cookie, e->val, flag);
	}
	/* cur is sorted by cookie, each a name's head: one pass for both,
	 * a series per name, at its head. */
	for (i = 0, k = 0; !keyed && k < s->probe_cnt; k++) {
		uint64_t v = 0;

		for (; i < s->cur_cnt && s->cur[i].key.cookie <= k; i++)
			if (s->cur[i].key.cookie == k &&
			    (s->cur[i].key.aux & TRACE_AUX_SUM) == flag)
				v += s->cur[i].val;
		if (s->heads[k] != k || !s->shown[k])
			continue;
		metric_probe(b, name, &s->probes[k]);
		metric_value(b, s, (uint32_t)k, v, flag);
	}
}

/* Plain --count: every probe name, 0 until it is hit; --by-pid and --by:
 * each key seen. --sum: its sums too. */
static void metrics_counts(const struct sum_state *s, struct prom_buf *b)
{
	static const char name[] = "usdt_probe_hits_total";
	/* Not "_sum": Prometheus keeps that for histograms and summaries
	 * (promtool refuses a gauge so named). */
	static const char sum_name[] = "usdt_probe_arg_summed";

	prom_head(b, name, "counter",
		  "Hits of a USDT probe since the trace started.");
	metrics_entries(s, b, name, 0);
	if (s->cfg.sum_arg < 0)
		return;
	prom_head(b, sum_name, "gauge",
		  "The sum of the argument --sum names over the hits counted (modulo 2^64).");
	metrics_entries(s, b, sum_name, TRACE_AUX_SUM);
}

/* The histogram of cur[from, to): its slots and sum. */
static void hist_slots(const struct sum_state *s, size_t from, size_t to,
		       uint64_t slots[TRACE_SLOTS], uint64_t *sum)
{
	size_t i;

	memset(slots, 0, TRACE_SLOTS * sizeof(*slots));
	*sum = 0;
	for (i = from; i < to; i++) {
		if (s->cur[i].key.aux < TRACE_SLOTS)
			slots[s->cur[i].key.aux] = s->cur[i].val;
		else if (s->cur[i].key.aux == TRACE_SUM_AUX)
			*sum = s->cur[i].val;
	}
}

static void metrics_hists(const struct sum_state *s, struct prom_buf *b)
{
	uint64_t slots[TRACE_SLOTS], sum;
	struct prom_hist h = { .name = "usdt_probe_argument",
			       .slots = slots,
			       .scale = 1 };
	struct prom_buf labels = { 0 };
	const struct probe_ent *p;
	char arg[16];
	size_t i = 0, j;

	prom_head(b, h.name, "histogram",
		  "Values of an argument of a USDT probe (--hist), in log2 buckets.");
	snprintf(arg, sizeof(arg), "%d", s->cfg.hist_arg);
	for (; i < s->cur_cnt; i = j) {
		uint32_t cookie = s->cur[i].key.cookie;

		for (j = i; j < s->cur_cnt && s->cur[j].key.cookie == cookie;
		     j++)
			;
		if (cookie >= s->probe_cnt)
			continue;
		p = &s->probes[cookie];
		hist_slots(s, i, j, slots, &sum);
		h.neg = s->cfg.hist_arg < p->arg_cnt &&
			p->args[s->cfg.hist_arg].is_signed;
		h.sum = h.neg ? (double)(int64_t)sum : (double)sum;
		labels.len = 0;
		prom_label(&labels, "provider", p->provider,
			   strlen(p->provider));
		prom_label(&labels, "probe", p->name, strlen(p->name));
		prom_label(&labels, "arg", arg, strlen(arg));
		h.labels = labels.p;
		if (!labels.oom)
			prom_hist(b, &h);
	}
	b->oom |= labels.oom;
	free(labels.p);
}

/* The total (TRACE_AUX_SUM) of entry e since the start; 0 if none. */
static uint64_t total_of(const struct sum_state *s, const struct sum_ent *e)
{
	struct sum_ent k = *e;
	const struct sum_ent *f;

	k.key.aux |= TRACE_AUX_SUM;
	f = bsearch(&k, s->cur, s->cur_cnt, sizeof(k), ent_cmp);
	return f ? f->val : 0;
}

/* --latency --by: a summary (no quantiles: the BPF side keeps each key's
 * count and total only), _sum and _count per key of START's arguments,
 * labelled start, end and each part as --count --by labels them. */
static void metrics_latency_keys(const struct sum_state *s, struct prom_buf *b,
				 const char *labels)
{
	static const char name[] = "usdt_latency_seconds";
	const struct sum_ent *e;
	size_t i;

	prom_head(b, name, "summary",
		  "Time from probe START to the next END on the same thread (--latency), per --by key of START's arguments.");
	for (i = 0; i < s->cur_cnt; i++) {
		e = &s->cur[i];
		if (e->key.cookie != TRACE_LAT_KEY || e->key.aux)
			continue;
		prom_printf(b, "%s_sum{%s", name, labels);
		metric_by(b, s, e);
		prom_printf(b, "} %.9f\n", (double)total_of(s, e) / 1e9);
		prom_printf(b, "%s_count{%s", name, labels);
		metric_by(b, s, e);
		prom_printf(b, "} %" PRIu64 "\n", e->val);
	}
}

/* --latency: the histogram (its slots in --time-unit's unit), or with
 * --by a summary per key; and the unmatched counters. */
static void metrics_latency(const struct sum_state *s, struct prom_buf *b)
{
	uint64_t slots[TRACE_SLOTS], sum, um[2] = { 0, 0 };
	struct prom_hist h = { .name = "usdt_latency_seconds",
			       .slots = slots,
			       .scale = 1e9,
			       .step = time_unit_ns(s->cfg.time_digits) };
	struct prom_buf labels = { 0 };
	size_t i, from = s->cur_cnt, to = s->cur_cnt;

	for (i = 0; i < s->cur_cnt; i++) {
		if (s->cur[i].key.cookie != TRACE_LAT_KEY)
			continue;
		if (s->cur[i].key.aux == TRACE_LAT_UNMATCHED_START)
			um[0] = s->cur[i].val;
		else if (s->cur[i].key.aux == TRACE_LAT_UNMATCHED_END)
			um[1] = s->cur[i].val;
		if (from == s->cur_cnt)
			from = i;
		to = i + 1;
	}
	prom_label(&labels, "start", s->cfg.lat_start,
		   strlen(s->cfg.lat_start));
	prom_label(&labels, "end", s->cfg.lat_end, strlen(s->cfg.lat_end));
	h.labels = labels.oom ? "" : labels.p;
	if (s->cfg.by_cnt) {
		metrics_latency_keys(s, b, h.labels);
	} else {
		hist_slots(s, from, to, slots, &sum);
		h.sum = (double)sum;
		prom_head(b, h.name, "histogram",
			  "Time from probe START to the next END on the same thread (--latency).");
		prom_hist(b, &h);
	}
	prom_head(b, "usdt_latency_unmatched_starts_total", "counter",
		  "STARTs that another START replaced before an END.");
	prom_printf(b, "usdt_latency_unmatched_starts_total{%s} %" PRIu64 "\n",
		    h.labels, um[0]);
	prom_head(b, "usdt_latency_unmatched_ends_total", "counter",
		  "ENDs without a START before them on their thread.");
	prom_printf(b, "usdt_latency_unmatched_ends_total{%s} %" PRIu64 "\n",
		    h.labels, um[1]);
	b->oom |= labels.oom;
	free(labels.p);
}

int sum_metrics(struct sum_state *s, struct prom_buf *b)
{
	/* cur is sum_print()'s scratch: it reads the map again itself. */
	int err = sum_read(s);

	if (err)
		return err;
	if (s->cfg.mode == TRACE_COUNT)
		metrics_counts(s, b);
	else if (s->cfg.mode == TRACE_HIST)
		metrics_hists(s, b);
	else
		metrics_latency(s, b);
	return b->oom ? -ENOMEM : 0;
}
