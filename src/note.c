// SPDX-License-Identifier: BSD-2-Clause
/*
 * The full reader: every call site of an ELF file as a probe, in the
 * file's storage, and finding them by name (usdt__file_match()). The notes
 * themselves are read by the codec (src/notes.c), the probes built by
 * src/probe.c; the file object is src/file.c's.
 *
 * Reading goes in two passes: the first walks the notes and records where
 * each string is, the second copies all strings into one allocation (the
 * file's storage) and parses the arguments. Per probe the storage holds
 *
 *	provider\0 name\0 args\0 arg0\0 arg1\0 ...
 *
 * the last part being each argument's text on its own, which
 * usdt_probe__arg() hands out. The arguments' texts are disjoint pieces of
 * args separated by at least one space, so they fit in strlen(args) + 1
 * bytes.
 *
 * A compact file (the manager's) takes only the first pass, through a
 * window of the section, and keeps an index by name (src/noteidx.c); an
 * attach builds the probes it matches with usdt__probe_build().
 */
#include "match.h"
#include "note.h"
#include "symtab.h"

/*
 * What the first pass keeps of one note: where its descriptor is in the
 * section (decoded again when the probe is built), or why there is none
 * (error). 16 bytes, not a raw_site's 88: for a file of 10,000 sites this
 * list is most of the parse's peak memory.
 */
struct raw_note {
	const char *error;	/* NULL: the descriptor is at desc_off */
	uint32_t desc_off, desc_sz;
};

/* The full reader's sink: every note, for build_probes(). */
struct raw_sites {
	struct usdt__note_sink sink;
	const struct usdt__elf *ue;
	const char *data;	/* the section */
	struct raw_note *v;
	size_t cnt, cap;
	/* The probes' strings need str_total bytes, and twice args_total
	 * more for the argument strings. */
	size_t str_total, args_total;
	struct usdt__dups dups;
	const struct usdt__raw_site *cur;	/* the note eq() looks at */
};

static struct raw_note *raw_push(struct raw_sites *rs)
{
	struct raw_note *v, *s;
	size_t cap;

	if (rs->cnt == rs->cap) {
		cap = rs->cap ? rs->cap * 2 : 16;
		v = usdt__reallocarray(rs->v, cap, sizeof(*v));
		if (!v)
			return NULL;
		rs->v = v;
		rs->cap = cap;
	}
	s = &rs->v[rs->cnt++];
	memset(s, 0, sizeof(*s));
	return s;
}

/* Does the note being added (rs->cur) repeat kept site i? */
static bool raw_same_site(void *ctx, uint32_t i)
{
	struct raw_sites *rs = ctx;
	const struct usdt__raw_site *s = rs->cur;
	struct usdt__raw_site t;

	usdt__note_decode(rs->ue, rs->data + rs->v[i].desc_off,
			  rs->v[i].desc_sz, &t);
	return !t.status && t.pc == s->pc && t.base == s->base &&
	       !strcmp(t.provider, s->provider) && !strcmp(t.name, s->name);
}

/* Is the good note s a repeat of a kept site (logged)? 1, 0 or -ENOMEM. */
static int raw_repeat(struct raw_sites *rs, const struct usdt__raw_site *s)
{
	struct usdt__raw_site t;
	uint32_t i;
	int r;

	rs->cur = s;
	r = usdt__dups_add(&rs->dups, usdt__site_key(s), (uint32_t)rs->cnt,
			   raw_same_site, rs, &i);
	if (r != 1)
		return r;
	usdt__note_decode(rs->ue, rs->data + rs->v[i].desc_off,
			  rs->v[i].desc_sz, &t);
	usdt__dup_log(rs->ue, s, strcmp(t.args, s->args) || t.sema != s->sema);
	return 1;
}

/* A note damaged beyond its descriptor: a site with no strings. */
static int note_bad(struct usdt__note_sink *k, const char *why)
{
	struct raw_sites *rs = (struct raw_sites *)k;
	struct raw_note *n = raw_push(rs);

	if (!n)
		return -ENOMEM;
	n->error = why;
	rs->str_total += 4;
	return 0;
}

/* A stapsdt note: checked now (and said if bad), decoded again later. */
static int note_add(struct usdt__note_sink *k, const char *desc,
		    size_t descsz, size_t off)
{
	struct raw_sites *rs = (struct raw_sites *)k;
	struct raw_note *n;
	struct usdt__raw_site s;
	int r;

	usdt__note_decode(rs->ue, desc, descsz, &s);
	if (s.status)
		pr_warn("%s: bad note at offset %zu of .note.stapsdt: %s\n",
			rs->ue->path, off, s.error);
	r = s.status ? 0 : raw_repeat(rs, &s);
	if (r)
		return r < 0 ? r : 0;
	n = raw_push(rs);
	if (!n)
		return -ENOMEM;
	n->desc_off = (uint32_t)(desc - rs->data);
	n->desc_sz = (uint32_t)descsz;
	rs->str_total += s.provider_len + s.name_len + 4;
	rs->args_total += s.args_len;
	return 0;
}

/*
 * The probe's names, and its argument string with room for the arguments'
 * texts (returned), copied into the string table at *st, which advances.
 */
static char *copy_strings(const struct usdt__raw_site *s, struct usdt_probe *p,
			  char **st)
{
	char *text;

	p->provider = memcpy(*st, s->provider, s->provider_len + 1);
	*st += s->provider_len + 1;
	p->name = memcpy(*st, s->name, s->name_len + 1);
	*st += s->name_len + 1;
	p->args_str = memcpy(*st, s->args, s->args_len + 1);
	*st += s->args_len + 1;
	text = *st;
	*st += s->args_len + 1;
	p->arg_text = text;
	*text = '\0';
	return text;
}

/* The names[] index: each probe by provider, then name, then index. */
static int cmp_site(const void *a, const void *b, void *arg)
{
	const struct usdt_file *file = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct usdt_probe *p = &file->probes[i], *q = &file->probes[j];
	int c = strcmp(p->provider, q->provider);

	if (!c)
		c = strcmp(p->name, q->name);
	return c ? c : (i > j) - (i < j);
}

/* Sort the file's names[] index. Returns 0 or -ENOMEM. */
static int file_index(struct usdt_file *file)
{
	uint32_t i;

	file->names = calloc(file->probe_cnt ? file->probe_cnt : 1,
			     sizeof(*file->names));
	if (!file->names)
		return -ENOMEM;
	for (i = 0; i < file->probe_cnt; i++)
		file->names[i] = i;
	qsort_r(file->names, file->probe_cnt, sizeof(*file->names), cmp_site,
		file);
	return 0;
}

/* Every probe from its raw site, into file->probes[] and storage. */
static int build_probes(struct usdt_file *file, struct usdt__lazy *lazy,
			const struct usdt__stapsdt_base *base,
			const struct raw_sites *rs)
{
	size_t i, arg_total = 0;
	char *st = file->storage, *text;
	struct usdt__raw_site s;

	for (i = 0; i < rs->cnt; i++) {
		if (rs->v[i].error)
			usdt__site_bad(&s, rs->v[i].error);
		else
			usdt__note_decode(rs->ue, rs->data + rs->v[i].desc_off,
					  rs->v[i].desc_sz, &s);
		text = copy_strings(&s, &file->probes[i], &st);
		usdt__probe_build(lazy, file, base, &s, &file->probes[i], text);
		file->probe_cnt = i + 1;
		/* Only running out of memory is fatal to the file. */
		if (file->probes[i].status == -ENOMEM || lazy->err)
			return -ENOMEM;
		arg_total += (size_t)file->probes[i].arg_cnt;
		if (arg_total > USDT__MAX_ARGS) {
			pr_warn("%s: more than %u USDT arguments in all\n",
				rs->ue->path, USDT__MAX_ARGS);
			return -E2BIG;
		}
	}
	return 0;
}

/* Every probe of the section, read whole (a file that is not compact). */
int usdt__notes_read_all(const struct usdt__elf *ue, struct usdt_file *file,
			 Elf_Scn *scn, size_t align,
			 const struct usdt__stapsdt_base *base)
{
	struct raw_sites rs = { .sink = { .note = note_add, .bad = note_bad },
				.ue = ue };
	struct usdt__lazy lazy = { .ue = ue, .fd = -1 };
	struct usdt__note_src src = { .fd = -1 };
	Elf_Data *data;
	int err;

	data = elf_rawdata(scn, NULL);
	if (!data) {
		pr_warn("%s: cannot read .note.stapsdt: %s\n", ue->path,
			elf_errmsg(-1));
		return -ENOEXEC;
	}
	if (!data->d_buf || !data->d_size)
		return 0;
	src.data = rs.data = data->d_buf;
	src.size = data->d_size;
	err = usdt__note_walk(ue, &src, align, &rs.sink);
	if (err || !rs.cnt)
		goto out;
	/* Bounded by twice the section's size, which is inside the file. */
	file->storage = malloc(rs.str_total + 2 * rs.args_total);
	file->probes = calloc(rs.cnt, sizeof(*file->probes));
	if (!file->storage || !file->probes) {
		err = -ENOMEM;
		goto out;
	}
	err = build_probes(file, &lazy, base, &rs);
	if (!err)
		err = file_index(file);
out:
	usdt__symtab_free(lazy.st);
	usdt__dups_free(&rs.dups);
	free(rs.v);
	return err;
}

/* ---------------------------------------------------------------------- */
/* Finding call sites by name                                             */

/* The provider and name at position i of the file's names[]. */
static void names_at(const void *seq, size_t i, const char **provider,
		     const char **name)
{
	const struct usdt_file *file = seq;
	const struct usdt_probe *p = &file->probes[file->names[i]];

	*provider = p->provider;
	*name = p->name;
}

long usdt__file_match(const struct usdt_file *file, const char *provider,
		      const char *name, usdt__match_fn fn, void *ctx)
{
	struct usdt__pat pat;
	const struct usdt_probe *p, *first;
	size_t i, grp;
	long cnt = 0;
	int match = 0, err;

	usdt__pat_init(&pat, provider, name);
	i = usdt__pat_first(&pat, file, file->probe_cnt, names_at);
	for (grp = i; i < file->probe_cnt; i++) {
		p = &file->probes[file->names[i]];
		first = &file->probes[file->names[grp]];
		/* Tested once per distinct provider:name. */
		if (i == grp || strcmp(p->name, first->name) ||
		    strcmp(p->provider, first->provider)) {
			grp = i;
			match = usdt__pat_test(&pat, p->provider, p->name);
			if (match < 0)
				break;
		}
		if (!match)
			continue;
		err = fn(p, ctx);
		if (err)
			return err;
		cnt++;
	}
	return cnt;
}
