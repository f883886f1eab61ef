// SPDX-License-Identifier: BSD-2-Clause
/*
 * The reader: the index of a file's call sites (where each probe name's
 * notes are in .note.stapsdt, and nothing else), and the probes built
 * from it, those of the names an attach picks (usdt__file_pick()) or
 * every one in note order for usdt_file__probe() (usdt__file_probes()).
 *
 * A libbpf user attaches one name per call, so the manager keeps the files
 * it read (src/attach/attach.c) and a call must cost its own sites, not the file.
 * The index keeps 4 bytes a call site (the note's offset in the section)
 * plus each distinct provider:name once. Building probes reads their notes
 * again from the file's descriptor (the one the kernel gets) and parses
 * their arguments (usdt__probe_build()). The symbol table, when an
 * argument first needs one, is built once and kept with the index.
 *
 * Reading goes through a small window (usdt__note_src), never the whole
 * section: the walk that builds the index costs the index, plus a window.
 * A note that repeats a site is left out of the index (struct usdt__dups);
 * telling one needs each site's address and a hash of its arguments, kept
 * only while the index is built.
 *
 * The file is the user's to change. The index was taken from the file as
 * it was; a note read again is checked again like any note, and one that
 * no longer is the stapsdt note of that provider:name makes its site bad
 * ("the note changed since the file was read"), nothing worse.
 *
 * Invariants: groups[] is sorted by provider, then name, each distinct pair
 * once; the sites of group g are offs[groups[g].first .. groups[g +
 * 1].first), in note order; groups[group_cnt].first is the site count. An
 * offset of NO_NOTE is a note damaged beyond its header (bad says how),
 * which ends the walk and so is the last one. Once built, the index
 * changes only in its symbol table slot, which is published atomically:
 * a file is const to its borrowers, who may read it from several threads.
 */
#include <unistd.h>

#include "base/base.h"
#include "reader/noteidx.h"
#include "reader/symtab.h"

#define NO_NOTE UINT32_MAX

struct idx_group {
	uint32_t str;	/* "provider\0name\0" in strs */
	uint32_t first; /* its first site in offs[] */
};

struct usdt__index {
	struct usdt__elf ue; /* without libelf (elf NULL); owns loads */
	int fd;		     /* the file the notes are read from */
	bool own_fd;	     /* an image's copy (closed with the index) */
	uint64_t sec_off;    /* the section in the file */
	size_t sec_size, align;
	struct usdt__stapsdt_base base;
	char *strs;
	struct idx_group *groups;
	uint32_t group_cnt;
	uint32_t *offs; /* each site's note header in the section */
	const char *bad;
	/* Built at the first need, then kept: published with a compare and
	 * swap, tried set (atomically) once known to be none. */
	struct usdt__symtab *symtab;
	bool symtab_tried;
};

/* What a repeated note is told by: its address, and a hash of its
 * arguments and semaphore (the notes are not kept in memory). */
struct idx_place {
	uint64_t pc, base, content;
};

/* The walk's sink: each note's offset and provider:name group, in note
 * order, and the groups in a hash by name. */
struct idx_build {
	struct usdt__note_sink sink;
	const struct usdt__elf *ue;
	struct usdt__index *idx;
	uint32_t *offs, *grp;	 /* per site */
	struct idx_place *place; /* per site, for repeats */
	size_t cnt, cap;
	struct usdt__dups dups;
	uint32_t cur_grp; /* the note dups' eq() looks at */
	const struct usdt__raw_site *cur;
	size_t strs_len, strs_cap;
	uint32_t *gstr; /* per group: its strings */
	size_t gcnt, gcap;
	uint32_t *buckets; /* group + 1; 0: empty */
	size_t bucket_cnt; /* a power of two, at least twice gcnt */
};

static uint32_t pair_hash(const char *provider, size_t plen, const char *name,
			  size_t nlen)
{
	struct usdt__hash h;
	uint64_t r;

	usdt__hash_init(&h);
	usdt__hash_add(&h, provider, plen);
	usdt__hash_add(&h, "", 1); /* "a":"bc" is not "ab":"c" */
	usdt__hash_add(&h, name, nlen);
	r = usdt__hash_end(&h);
	return (uint32_t)(r ^ r >> 32);
}

static uint32_t group_hash(const struct idx_build *b, uint32_t g)
{
	const char *p = b->idx->strs + b->gstr[g], *n = p + strlen(p) + 1;

	return pair_hash(p, strlen(p), n, strlen(n));
}

static int grow_buckets(struct idx_build *b)
{
	size_t n = b->bucket_cnt ? b->bucket_cnt * 2 : 64, i, j;
	uint32_t *v = calloc(n, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < b->gcnt; i++) {
		j = group_hash(b, (uint32_t)i) & (n - 1);
		while (v[j])
			j = (j + 1) & (n - 1);
		v[j] = (uint32_t)i + 1;
	}
	free(b->buckets);
	b->buckets = v;
	b->bucket_cnt = n;
	return 0;
}

/* Room for one more of an array of elem-sized items (cap doubles). */
static int room(void **v, size_t cnt, size_t *cap, size_t elem)
{
	size_t n = *cap ? *cap * 2 : 64;
	void *p;

	if (cnt < *cap)
		return 0;
	p = usdt__reallocarray(*v, n, elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

/* A new group of provider:name, its strings appended. */
static int group_add(struct idx_build *b, const char *provider, size_t plen,
		     const char *name, size_t nlen)
{
	size_t need = plen + nlen + 2, cap;
	char *s;

	/* Each pair is from a note of the section (bounded), or "":"". */
	while (b->strs_len + need > b->strs_cap) {
		cap = b->strs_cap ? b->strs_cap * 2 : 256;
		s = realloc(b->idx->strs, cap);
		if (!s)
			return -ENOMEM;
		b->idx->strs = s;
		b->strs_cap = cap;
	}
	if (room((void **)&b->gstr, b->gcnt, &b->gcap, sizeof(*b->gstr)))
		return -ENOMEM;
	s = b->idx->strs + b->strs_len;
	memcpy(s, provider, plen);
	s[plen] = '\0';
	memcpy(s + plen + 1, name, nlen);
	s[plen + 1 + nlen] = '\0';
	b->gstr[b->gcnt++] = (uint32_t)b->strs_len;
	b->strs_len += need;
	return 0;
}

/* The group of provider:name, added if new: its number, or -ENOMEM. */
static long group_of(struct idx_build *b, const char *provider, size_t plen,
		     const char *name, size_t nlen)
{
	uint32_t h = pair_hash(provider, plen, name, nlen);
	size_t j;
	const char *p;

	if (2 * (b->gcnt + 1) > b->bucket_cnt && grow_buckets(b))
		return -ENOMEM;
	for (j = h & (b->bucket_cnt - 1); b->buckets[j];
	     j = (j + 1) & (b->bucket_cnt - 1)) {
		p = b->idx->strs + b->gstr[b->buckets[j] - 1];
		if (strlen(p) == plen && !memcmp(p, provider, plen) &&
		    !strcmp(p + plen + 1, name) && strlen(p + plen + 1) == nlen)
			return (long)b->buckets[j] - 1;
	}
	if (group_add(b, provider, plen, name, nlen))
		return -ENOMEM;
	b->buckets[j] = (uint32_t)b->gcnt;
	return (long)b->gcnt - 1;
}

/* Room for one more site in offs[] and grp[], which grow together. */
static int sites_room(struct idx_build *b)
{
	size_t cap = b->cap ? b->cap * 2 : 64;
	struct idx_place *p;
	uint32_t *v;

	if (b->cnt < b->cap)
		return 0;
	v = usdt__reallocarray(b->offs, cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	b->offs = v;
	v = usdt__reallocarray(b->grp, cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	b->grp = v;
	p = usdt__reallocarray(b->place, cap, sizeof(*p));
	if (!p)
		return -ENOMEM;
	b->place = p;
	b->cap = cap;
	return 0;
}

/* A hash of what a repeat may differ in: arguments and semaphore. */
static uint64_t content_hash(const struct usdt__raw_site *s)
{
	struct usdt__hash h;

	usdt__hash_init(&h);
	usdt__hash_add(&h, &s->sema, sizeof(s->sema));
	usdt__hash_add(&h, s->args, s->args_len);
	return usdt__hash_end(&h);
}

/* Does the note being added (b->cur, of group b->cur_grp) repeat kept
 * site i? The group stands for provider:name. */
static bool idx_same_site(void *ctx, uint32_t i)
{
	const struct idx_build *b = ctx;

	return b->grp[i] == b->cur_grp && b->place[i].pc == b->cur->pc &&
	       b->place[i].base == b->cur->base;
}

/* Site s (NULL: a damaged note) at section offset off, unless it repeats
 * a kept one (logged). */
static int site_add(struct idx_build *b, uint32_t off,
		    const struct usdt__raw_site *s)
{
	struct idx_place pl = { 0 };
	uint32_t earlier;
	long g;
	int r;

	g = s ? group_of(b, s->provider, s->provider_len, s->name,
			 s->name_len) :
		group_of(b, "", 0, "", 0);
	if (g < 0 || sites_room(b))
		return -ENOMEM;
	if (s && !s->status) {
		pl = (struct idx_place){ s->pc, s->base, content_hash(s) };
		b->cur = s;
		b->cur_grp = (uint32_t)g;
		r = usdt__dups_add(&b->dups, usdt__site_key(s),
				   (uint32_t)b->cnt, idx_same_site, b,
				   &earlier);
		if (r < 0)
			return r;
		if (r) {
			usdt__dup_log(b->ue, s,
				      b->place[earlier].content != pl.content);
			return 0;
		}
	}
	b->offs[b->cnt] = off;
	b->place[b->cnt] = pl;
	b->grp[b->cnt++] = (uint32_t)g;
	return 0;
}

/* The walk's note(): checked now (and said if bad). */
static int idx_note(struct usdt__note_sink *k, const char *desc, size_t descsz,
		    size_t off)
{
	struct idx_build *b = (struct idx_build *)k;
	struct usdt__raw_site s;

	usdt__note_decode(b->ue, desc, descsz, &s);
	if (s.status)
		pr_warn("%s: bad note at offset %zu of .note.stapsdt: %s\n",
			b->ue->path, off, s.error);
	return site_add(b, (uint32_t)off, &s);
}

static int idx_bad(struct usdt__note_sink *k, const char *why)
{
	struct idx_build *b = (struct idx_build *)k;

	b->idx->bad = why;
	return site_add(b, NO_NOTE, NULL);
}

static int cmp_group(const void *a, const void *b, void *arg)
{
	const char *strs = arg;
	const char *p = strs + ((const struct idx_group *)a)->str;
	const char *q = strs + ((const struct idx_group *)b)->str;
	int c = strcmp(p, q);

	return c ? c : strcmp(p + strlen(p) + 1, q + strlen(q) + 1);
}

/*
 * The groups sorted by name, and the sites in offs[] grouped (note order
 * kept within a group): a counting sort by the groups' ranks.
 */
static int idx_finish(struct idx_build *b)
{
	struct usdt__index *idx = b->idx;
	uint32_t *rank, *at, g, i;
	int err = -ENOMEM;

	idx->groups = calloc(b->gcnt + 1, sizeof(*idx->groups));
	rank = calloc(b->gcnt ? b->gcnt : 1, sizeof(*rank));
	at = calloc(b->gcnt ? b->gcnt : 1, sizeof(*at));
	idx->offs = calloc(b->cnt ? b->cnt : 1, sizeof(*idx->offs));
	if (!idx->groups || !rank || !at || !idx->offs)
		goto out;
	for (g = 0; g < b->gcnt; g++) {
		idx->groups[g].str = b->gstr[g];
		idx->groups[g].first = g; /* for now: the group */
	}
	qsort_r(idx->groups, b->gcnt, sizeof(*idx->groups), cmp_group,
		idx->strs);
	for (g = 0; g < b->gcnt; g++)
		rank[idx->groups[g].first] = g;
	for (i = 0; i < b->cnt; i++)
		at[rank[b->grp[i]]]++;
	/* at[]: each group's count, then where its next site goes. */
	for (g = 0, i = 0; g < b->gcnt; g++) {
		idx->groups[g].first = i;
		i += at[g];
		at[g] = idx->groups[g].first;
	}
	idx->groups[b->gcnt].first = i;
	idx->group_cnt = (uint32_t)b->gcnt;
	for (i = 0; i < b->cnt; i++)
		idx->offs[at[rank[b->grp[i]]]++] = b->offs[i];
	err = 0;
out:
	free(rank);
	free(at);
	return err;
}

void usdt__index_free(struct usdt__index *idx)
{
	if (!idx)
		return;
	usdt__symtab_free(idx->symtab);
	if (idx->own_fd)
		close(idx->fd);
	free(idx->ue.loads);
	free(idx->strs);
	free(idx->groups);
	free(idx->offs);
	free(idx);
}

/* What the index keeps of the file's reader: no libelf, its segments. */
static int idx_keep_elf(struct usdt__index *idx, const struct usdt__elf *ue,
			const struct usdt_file *file)
{
	idx->ue = *ue;
	idx->ue.elf = NULL;
	idx->ue.path = file->path;
	idx->ue.loads =
		calloc(ue->load_cnt ? ue->load_cnt : 1, sizeof(*ue->loads));
	if (!idx->ue.loads)
		return -ENOMEM;
	if (ue->load_cnt) /* loads is NULL without program headers */
		memcpy(idx->ue.loads, ue->loads,
		       ue->load_cnt * sizeof(*ue->loads));
	return 0;
}

int usdt__index_build(const struct usdt__elf *ue, int fd, bool own_fd,
		      uint64_t file_off, size_t size, size_t align,
		      const struct usdt__stapsdt_base *base,
		      struct usdt_file *file)
{
	struct idx_build b = { .sink = { .note = idx_note, .bad = idx_bad },
			       .ue = ue };
	struct usdt__note_src src = { .fd = fd,
				      .file_off = file_off,
				      .size = size };
	struct usdt__index *idx;
	int err;

	if (fd < 0)
		return -EINVAL;
	idx = calloc(1, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	b.idx = idx;
	idx->fd = fd;
	idx->sec_off = file_off;
	idx->sec_size = size;
	idx->align = align;
	idx->base = *base;
	err = idx_keep_elf(idx, ue, file);
	if (!err)
		err = usdt__note_walk(ue, &src, align, &b.sink);
	if (err == -EIO) {
		pr_warn("%s: cannot read .note.stapsdt: %s\n", ue->path,
			usdt__errstr(err));
		err = -ENOEXEC; /* the file shrank: too damaged to read */
	}
	if (!err)
		err = idx_finish(&b);
	usdt__note_src_free(&src);
	free(b.offs);
	free(b.grp);
	free(b.place);
	usdt__dups_free(&b.dups);
	free(b.gstr);
	free(b.buckets);
	if (err) {
		usdt__index_free(idx);
		return err;
	}
	idx->own_fd = own_fd;
	file->idx = idx;
	file->probe_cnt = b.cnt;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Picking the sites of a name                                            */

static const char *group_name(const struct usdt__index *idx, uint32_t g)
{
	const char *p = idx->strs + idx->groups[g].str;

	return p + strlen(p) + 1;
}

/* The provider and name of group i. */
static void group_at(const void *seq, size_t i, const char **provider,
		     const char **name)
{
	const struct usdt__index *idx = seq;

	*provider = idx->strs + idx->groups[i].str;
	*name = group_name(idx, (uint32_t)i);
}

/* Does group g match? As usdt__pat_test(). */
static int group_test(const struct usdt__index *idx, uint32_t g,
		      const struct usdt__pat *pat)
{
	return usdt__pat_test(pat, idx->strs + idx->groups[g].str,
			      group_name(idx, g));
}

/* What building probes reads with: the section through a window, and
 * what arguments need beyond their text. */
struct reread {
	const struct usdt_file *file;
	struct usdt__index *idx;
	struct usdt__note_src src;
	struct usdt__lazy lazy;
	const struct usdt__symtab *kept; /* the index's, when begun */
	size_t args; /* arguments so far, for USDT__MAX_ARGS */
	bool full;   /* probes for usdt_file__probe(), not attach */
};

/* Begin reading sites of the file with a window of win bytes. */
static void reread_begin(struct reread *k, const struct usdt_file *file,
			 size_t win, bool full)
{
	struct usdt__index *idx = file->idx;
	bool tried = __atomic_load_n(&idx->symtab_tried, __ATOMIC_ACQUIRE);
	struct usdt__symtab *st =
		__atomic_load_n(&idx->symtab, __ATOMIC_ACQUIRE);

	*k = (struct reread){
		.file = file, .idx = idx, .kept = st, .full = full
	};
	k->src = (struct usdt__note_src){ .fd = idx->fd,
					  .win = win,
					  .file_off = idx->sec_off,
					  .size = idx->sec_size };
	k->lazy = (struct usdt__lazy){
		.ue = &idx->ue, .fd = idx->fd, .st = st, .tried = tried || st
	};
}

/* End it; the symbol table stays with the index for the next reader
 * (the first one's, if two raced), though not after -ENOMEM. */
static void reread_end(struct reread *k)
{
	struct usdt__symtab *none = NULL;
	struct usdt__symtab *st = k->lazy.st;

	usdt__note_src_free(&k->src);
	usdt__lazy_end(&k->lazy);
	if (st && st != k->kept &&
	    !__atomic_compare_exchange_n(&k->idx->symtab, &none, st, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		usdt__symtab_free(st);
	if (k->lazy.tried && !k->lazy.err)
		__atomic_store_n(&k->idx->symtab_tried, true, __ATOMIC_RELEASE);
}

/* Site off of group g into p, read from the file again and parsed.
 * Returns 0, -ENOMEM, -E2BIG past USDT__MAX_ARGS arguments in all (of
 * this reader), or the error of opening the file for its symbols. */
static int reread_site(struct reread *k, uint32_t g, uint32_t off,
		       struct usdt_probe *p)
{
	struct usdt__index *idx = k->idx;
	struct usdt__raw_site s;
	const char *desc;
	size_t descsz;
	int err = off == NO_NOTE ? -EINVAL : 0;

	p->provider = idx->strs + idx->groups[g].str;
	p->name = group_name(idx, g);
	if (!err)
		err = usdt__note_at(&idx->ue, &k->src, idx->align, off, &desc,
				    &descsz);
	if (err == -ENOMEM)
		return err;
	if (!err)
		usdt__note_decode(&idx->ue, desc, descsz, &s);
	if (err || strcmp(s.provider, p->provider) || strcmp(s.name, p->name))
		usdt__site_bad(&s,
			       off == NO_NOTE ?
				       idx->bad :
				       "the note changed since the file was read");
	usdt__probe_build(&k->lazy, k->file, &idx->base, &s, p, k->full);
	if (k->lazy.err)
		return k->lazy.err;
	if (p->status == -ENOMEM)
		return -ENOMEM;
	k->args += (size_t)p->arg_cnt;
	if (k->args > USDT__MAX_ARGS) {
		pr_warn("%s: more than %u USDT arguments in all\n",
			k->file->path, USDT__MAX_ARGS);
		return -E2BIG;
	}
	return 0;
}

/* A walk over the sites that match a pattern, a batch at a time. */
struct usdt__pick {
	struct reread k;
	struct usdt__pat pat;
	uint32_t g;  /* the group being read (a match), */
	uint32_t i;  /* its next site */
	size_t left; /* sites not read yet */
};

/* The next group from g on that matches, or group_cnt. */
static uint32_t next_match(const struct usdt__pick *p, uint32_t g)
{
	const struct usdt__index *idx = p->k.idx;
	int m;

	for (; g < idx->group_cnt; g++) {
		m = group_test(idx, g, &p->pat);
		if (m < 0)
			return idx->group_cnt;
		if (m)
			return g;
	}
	return g;
}

int usdt__pick_begin(const struct usdt_file *file, const char *provider,
		     const char *name, struct usdt__pick **out, size_t *cnt)
{
	struct usdt__index *idx = file->idx;
	struct usdt__pick *p;
	size_t n = 0, runs = 0;
	uint32_t g, first;
	int m;

	*out = NULL;
	*cnt = 0;
	if (!idx) /* no notes */
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	usdt__pat_init(&p->pat, provider, name);
	first = g = (uint32_t)usdt__pat_first(&p->pat, idx, idx->group_cnt,
					      group_at);
	for (; g < idx->group_cnt; g++) {
		m = group_test(idx, g, &p->pat);
		if (m < 0)
			break;
		if (m) {
			n += idx->groups[g + 1].first - idx->groups[g].first;
			runs++;
		}
	}
	if (!n) {
		free(p);
		return 0;
	}
	/* The sites of a name are few, or spread out over the section. */
	reread_begin(&p->k, file, usdt__note_win(idx->sec_size, n, runs),
		     false);
	p->g = next_match(p, first);
	p->i = idx->groups[p->g].first;
	p->left = n;
	*out = p;
	*cnt = n;
	return 0;
}

long usdt__pick_next(struct usdt__pick *p, struct usdt_probe *probes,
		     size_t max)
{
	const struct usdt__index *idx = p->k.idx;
	size_t n = 0;
	int err;

	while (n < max && p->left && p->g < idx->group_cnt) {
		if (p->i >= idx->groups[p->g + 1].first) {
			p->g = next_match(p, p->g + 1);
			p->i = idx->groups[p->g].first;
			continue;
		}
		memset(&probes[n], 0, sizeof(probes[n]));
		err = reread_site(&p->k, p->g, idx->offs[p->i], &probes[n]);
		if (err) {
			usdt__probes_clear(probes, n + 1);
			return err;
		}
		p->i++;
		p->left--;
		n++;
	}
	return (long)n;
}

void usdt__pick_end(struct usdt__pick *p)
{
	if (!p)
		return;
	reread_end(&p->k);
	free(p);
}

int usdt__file_pick(const struct usdt_file *file, const char *provider,
		    const char *name, struct usdt_probe **out, size_t *cnt)
{
	struct usdt__pick *p;
	long got;
	int err;

	*out = NULL;
	err = usdt__pick_begin(file, provider, name, &p, cnt);
	if (err || !*cnt)
		return err;
	*out = calloc(*cnt, sizeof(**out));
	got = *out ? usdt__pick_next(p, *out, *cnt) : -ENOMEM;
	usdt__pick_end(p);
	if (got < 0) {
		free(*out);
		*out = NULL;
		*cnt = 0;
		return (int)got;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Every site, in note order                                              */

/* A site of the index: its note's offset (which rises with note order)
 * and its group. */
struct site_ref {
	uint32_t off, grp;
};

static int cmp_off(const void *a, const void *b)
{
	uint32_t x = ((const struct site_ref *)a)->off;
	uint32_t y = ((const struct site_ref *)b)->off;

	return (x > y) - (x < y);
}

int usdt__file_probes(const struct usdt_file *file, struct usdt_probe **out)
{
	const struct usdt__index *idx = file->idx;
	size_t i, n = idx ? idx->groups[idx->group_cnt].first : 0;
	struct site_ref *v;
	struct reread k;
	uint32_t g;
	int err = 0;

	*out = NULL;
	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	*out = calloc(n, sizeof(**out));
	if (!v || !*out) {
		err = -ENOMEM;
		goto out;
	}
	for (g = 0; g < idx->group_cnt; g++)
		for (i = idx->groups[g].first; i < idx->groups[g + 1].first;
		     i++)
			v[i] = (struct site_ref){ idx->offs[i], g };
	/* Offsets are distinct, and NO_NOTE (the last note) sorts last. */
	qsort(v, n, sizeof(*v), cmp_off);
	reread_begin(&k, file, usdt__note_win(idx->sec_size, 1, 1), true);
	for (i = 0; i < n && !err; i++)
		err = reread_site(&k, v[i].grp, v[i].off, &(*out)[i]);
	reread_end(&k);
out:
	free(v);
	if (err) {
		usdt__probes_free(*out, n);
		*out = NULL;
	}
	return err;
}

void usdt__probes_clear(struct usdt_probe *probes, size_t cnt)
{
	size_t i;

	for (i = 0; i < cnt && probes; i++) {
		free(probes[i].args);
		free(probes[i].specs);
		free(probes[i].strs);
		probes[i].args = NULL;
		probes[i].specs = NULL;
		probes[i].strs = NULL;
	}
}

void usdt__probes_free(struct usdt_probe *probes, size_t cnt)
{
	usdt__probes_clear(probes, cnt);
	free(probes);
}
