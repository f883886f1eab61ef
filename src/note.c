// SPDX-License-Identifier: BSD-2-Clause
/*
 * The note reader: the USDT call sites of an ELF file, and the public
 * usdt_file__* / usdt_probe__* getters.
 *
 * Every <sys/sdt.h> call site leaves one ELF note in the non-allocated
 * section .note.stapsdt: owner "stapsdt", type 3, and a descriptor of
 *
 *	pc, base, semaphore	three addresses of the ELF class's size, in
 *				the file's byte order
 *	provider\0 name\0 args\0
 *
 * pc is the link-time address of the nop the probe sits on, semaphore the
 * link-time address of the probe's counter (0 for none), and base the
 * link-time address of the section .stapsdt.base as the assembler saw it.
 * prelink moves sections after the notes were written; the difference
 * between .stapsdt.base's address now and base is how far, and applies to
 * pc and semaphore alike.
 *
 * The file is untrusted. Each note header is checked against the section
 * before its name or descriptor is touched; each string must end inside
 * the descriptor. A bad note becomes a probe with a negative status, and
 * the walk goes on to the next note whenever the header still says where
 * that is.
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
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "reader.h"

#define STAPSDT_NOTE_TYPE 3
#define STAPSDT_OWNER "stapsdt"

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

static void raw_bad(struct usdt__raw_site *s, const char *why)
{
	s->status = -EINVAL;
	s->error = why;
}

static bool all_zero(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Take the NUL-terminated string at *p (inside [*p, end)) and advance. */
static bool take_str(const char **p, const char *end, const char **str,
		     size_t *len)
{
	const char *nul = memchr(*p, '\0', (size_t)(end - *p));

	if (!nul)
		return false;
	*str = *p;
	*len = (size_t)(nul - *p);
	*p = nul + 1;
	return true;
}

void usdt__note_decode(const struct usdt__elf *ue, const char *desc,
		       size_t descsz, struct usdt__raw_site *s)
{
	const char *p = desc + 24, *end = desc + descsz;

	memset(s, 0, sizeof(*s));
	s->provider = s->name = s->args = "";
	if (descsz < 24) {
		raw_bad(s, "note descriptor too small for 3 addresses");
		return;
	}
	s->pc = usdt__elf_rd64(ue, desc);
	s->base = usdt__elf_rd64(ue, desc + 8);
	s->sema = usdt__elf_rd64(ue, desc + 16);
	if (!take_str(&p, end, &s->provider, &s->provider_len)) {
		raw_bad(s, "provider is not NUL-terminated");
		return;
	}
	if (!take_str(&p, end, &s->name, &s->name_len)) {
		s->provider = "";
		s->provider_len = 0;
		raw_bad(s, "name is not NUL-terminated");
		return;
	}
	/* A note may end without an argument string at all. */
	if (p < end && !take_str(&p, end, &s->args, &s->args_len)) {
		raw_bad(s, "argument string is not NUL-terminated");
		return;
	}
	if (!s->provider_len || !s->name_len)
		raw_bad(s, "empty provider or name");
}

/* ---------------------------------------------------------------------- */
/* The section's bytes                                                    */

/* The window's usual size: notes are a few dozen bytes each. */
#define NOTE_WINDOW (32u << 10)

/* Refill the window with the section's bytes from off on, len at least. */
static int note_refill(struct usdt__note_src *src, size_t off, size_t len)
{
	size_t want = src->size - off, got = 0;
	size_t win = src->win ? src->win : NOTE_WINDOW;
	ssize_t n;
	char *buf;

	/* len <= want: the caller asks for bytes inside the section. */
	if (len > win)
		want = len;
	else if (want > win)
		want = win;
	if (want > src->buf_cap) {
		/* Bounded by the section, itself bounded. */
		buf = realloc(src->buf, want);
		if (!buf)
			return -ENOMEM;
		src->buf = buf;
		src->buf_cap = want;
	}
	src->buf_len = 0;
	while (got < want) {
		n = pread(src->fd, src->buf + got, want - got,
			  (off_t)(src->file_off + off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && got >= len)
			break;		/* what was asked is there */
		if (n <= 0)
			return -EIO;	/* the file shrank, or cannot be read */
		got += (size_t)n;
	}
	src->buf_off = off;
	src->buf_len = got;
	return 0;
}

const char *usdt__note_bytes(struct usdt__note_src *src, size_t off,
			     size_t len)
{
	if (src->data)
		return src->data + off;
	if (off < src->buf_off || off - src->buf_off > src->buf_len ||
	    len > src->buf_len - (off - src->buf_off)) {
		src->err = note_refill(src, off, len);
		if (src->err)
			return NULL;
	}
	return src->buf + (off - src->buf_off);
}

void usdt__note_src_free(struct usdt__note_src *src)
{
	free(src->buf);
	src->buf = NULL;
	src->buf_cap = src->buf_len = 0;
}

/* ---------------------------------------------------------------------- */
/* Walking the notes                                                      */

/*
 * The note whose header is at off, checked: its type and its name's and
 * descriptor's places, which must lie inside the section (else the next
 * note cannot be found). Returns 1 for a stapsdt note (*desc and *descsz
 * set), 0 for another note, -EINVAL for one that runs past the section's
 * end, or src->err. *next is where the next note is.
 */
static int note_check(const struct usdt__elf *ue, struct usdt__note_src *src,
		      size_t align, size_t off, const char **desc,
		      size_t *descsz, size_t *next)
{
	size_t size = src->size, namesz, name_off = off + 12, desc_off;
	const char *h = usdt__note_bytes(src, off, 12);
	uint32_t type;

	if (!h)
		return src->err;
	namesz = usdt__elf_rd32(ue, h);
	*descsz = usdt__elf_rd32(ue, h + 4);
	type = usdt__elf_rd32(ue, h + 8);
	if (namesz > size - name_off ||
	    (desc_off = name_off + ((namesz + align - 1) & ~(align - 1)),
	     desc_off > size) ||
	    *descsz > size - desc_off)
		return -EINVAL;
	/* The last note may lack its padding. */
	*next = desc_off + *descsz;
	*next = *next + (align - 1) > size ? size :
					     (*next + align - 1) & ~(align - 1);
	if (type != STAPSDT_NOTE_TYPE || namesz != sizeof(STAPSDT_OWNER))
		return 0;
	/* The whole note in the window at once. */
	h = usdt__note_bytes(src, off, desc_off + *descsz - off);
	if (!h)
		return src->err;
	if (memcmp(h + 12, STAPSDT_OWNER, sizeof(STAPSDT_OWNER)))
		return 0;
	*desc = h + (desc_off - off);
	return 1;
}

int usdt__note_at(const struct usdt__elf *ue, struct usdt__note_src *src,
		  size_t align, size_t off, const char **desc,
		  size_t *descsz)
{
	size_t next;
	int err;

	if (off > src->size || src->size - off < 12)
		return -EINVAL;
	err = note_check(ue, src, align, off, desc, descsz, &next);
	return err == 1 ? 0 : err ? err : -EINVAL;
}

/* Is [off, size) padding (zeros)? Returns 1, 0, or src->err. */
static int note_tail_zero(struct usdt__note_src *src, size_t off)
{
	const char *p = usdt__note_bytes(src, off, src->size - off);

	return p ? all_zero(p, src->size - off) : src->err;
}

int usdt__note_walk(const struct usdt__elf *ue, struct usdt__note_src *src,
		    size_t align, struct usdt__note_sink *k)
{
	size_t off = 0, next = 0, descsz;
	const char *desc, *h;
	int r;

	while (off < src->size) {
		if (src->size - off < 12) {
			/* Padding is zeros; anything else is damage. */
			r = note_tail_zero(src, off);
			if (r)
				return r < 0 ? r : 0;
			k->cnt++;
			return k->bad(k, "truncated note header");
		}
		h = usdt__note_bytes(src, off, 12);
		if (!h)
			return src->err;
		/* An empty header is padding: nothing real follows it. */
		if (all_zero(h, 12))
			break;
		r = note_check(ue, src, align, off, &desc, &descsz, &next);
		if (r == -EINVAL) {
			pr_warn("%s: note at offset %zu of .note.stapsdt runs past the section's end; ignoring the rest\n",
				ue->path, off);
			k->cnt++;
			return k->bad(k, "note runs past the end of .note.stapsdt");
		}
		if (r < 0)
			return r;
		if (r == 1) {
			if (k->cnt >= USDT__MAX_SITES) {
				pr_warn("%s: more than %u USDT call sites\n",
					ue->path, USDT__MAX_SITES);
				return -E2BIG;
			}
			k->cnt++;
			r = k->note(k, desc, descsz, off);
			if (r)
				return r;
		} else {
			h = usdt__note_bytes(src, off, 12);
			pr_debug("%s: skipping a note of type %u at offset %zu of .note.stapsdt\n",
				 ue->path, h ? usdt__elf_rd32(ue, h + 8) : 0, off);
		}
		off = next;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Repeated notes                                                         */

uint32_t usdt__site_key(const struct usdt__raw_site *s)
{
	struct usdt__hash h;
	uint64_t r;

	usdt__hash_init(&h);
	usdt__hash_add(&h, &s->pc, sizeof(s->pc));
	usdt__hash_add(&h, &s->base, sizeof(s->base));
	usdt__hash_add(&h, s->provider, s->provider_len + 1);
	usdt__hash_add(&h, s->name, s->name_len + 1);
	r = usdt__hash_end(&h);
	return (uint32_t)(r ^ r >> 32);
}

static int dups_grow(struct usdt__dups *d)
{
	size_t cap = d->cap ? d->cap * 2 : 64, i, j;
	__typeof__(d->slots) v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < d->cap; i++) {
		if (!d->slots[i].site1)
			continue;
		for (j = d->slots[i].hash & (cap - 1); v[j].site1;
		     j = (j + 1) & (cap - 1))
			;
		v[j] = d->slots[i];
	}
	free(d->slots);
	d->slots = v;
	d->cap = cap;
	return 0;
}

int usdt__dups_add(struct usdt__dups *d, uint32_t h, uint32_t site,
		   usdt__dups_eq_fn eq, void *ctx, uint32_t *earlier)
{
	size_t j, mask;

	/* site + 1 fits: sites are at most USDT__MAX_SITES. */
	if ((d->cnt + 1) * 2 > d->cap && dups_grow(d))
		return -ENOMEM;
	mask = d->cap - 1;
	for (j = h & mask; d->slots[j].site1; j = (j + 1) & mask) {
		if (d->slots[j].hash == h && eq(ctx, d->slots[j].site1 - 1)) {
			*earlier = d->slots[j].site1 - 1;
			return 1;
		}
	}
	d->slots[j].site1 = site + 1;
	d->slots[j].hash = h;
	d->cnt++;
	return 0;
}

void usdt__dups_free(struct usdt__dups *d)
{
	free(d->slots);
	memset(d, 0, sizeof(*d));
}

void usdt__dup_log(const struct usdt__elf *ue, const struct usdt__raw_site *s,
		   bool differs)
{
	if (differs)
		pr_warn("%s: %s:%s at 0x%llx has a second note with other arguments (\"%s\") or semaphore; keeping the first\n",
			ue->path, s->provider, s->name,
			(unsigned long long)s->pc, s->args);
	else
		pr_debug("%s: %s:%s at 0x%llx: a second note of the site, dropped\n",
			 ue->path, s->provider, s->name,
			 (unsigned long long)s->pc);
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

/* ---------------------------------------------------------------------- */
/* Building probes                                                        */

/*
 * The libelf handle of the file, opened from lazy->fd when the index read
 * the notes without one. NULL when it cannot be had: lazy->err then says
 * why (out of memory, or the file is no longer what was read), which
 * fails the call rather than pass for a file without symbols.
 */
static const struct usdt__elf *lazy_elf(struct usdt__lazy *l)
{
	Elf *elf;
	int err;

	if (l->ue->elf)
		return l->ue;
	if (!l->opened && l->fd >= 0) {
		l->opened = true;
		elf = elf_begin(l->fd, ELF_C_READ, NULL);
		err = elf ? usdt__elf_begin(&l->own, elf, l->ue->path,
					    l->ue->file_size) : -ENOMEM;
		if (err) {
			pr_warn("%s: cannot read the file again for its symbols: %s\n",
				l->ue->path, usdt__errstr(err));
			if (elf)
				elf_end(elf);
			l->own.elf = NULL;
			l->err = err;
		}
	}
	return l->own.elf ? &l->own : NULL;
}

void usdt__lazy_end(struct usdt__lazy *l)
{
	if (l->own.elf) {
		usdt__elf_end(&l->own);
		elf_end(l->own.elf);
		l->own.elf = NULL;
	}
}

/*
 * The symbol table, built when an argument first names a symbol: reading
 * .symtab and its strings is most of the memory a big unstripped binary
 * costs, and most files' arguments are registers and memory only.
 */
static const struct usdt__symtab *lazy_symtab_get(void *arg)
{
	struct usdt__lazy *l = arg;
	const struct usdt__elf *ue;

	if (!l->tried) {
		l->tried = true;
		ue = lazy_elf(l);
		if (ue)
			l->err = usdt__elf_symtab(ue, &l->st);
	}
	return l->st;
}

/*
 * Code read before call sites, all sites of a file together: libelf keeps
 * each chunk until the file is closed, so a file whose every argument asks
 * for code costs at most this much.
 */
#define CODE_BUDGET (16u << 20)

/* Both ends of [start, vaddr) in the file image of one segment: offsets
 * that are exactly the length apart; the first one into *off. */
static bool code_in_file(const struct usdt__elf *ue, uint64_t start,
			 uint64_t vaddr, uint64_t *off)
{
	uint64_t end_off;

	return !usdt__elf_vaddr_to_off(ue, start, off) &&
	       !usdt__elf_vaddr_to_off(ue, vaddr - 1, &end_off) &&
	       end_off - *off == vaddr - 1 - start;
}

/*
 * The site's usdt__site_ctx.load_code: the bytes before vaddr inside the
 * function that holds it (from the symbol table), at most max_back of
 * them, all inside one loadable segment and with no "$d" data mark among
 * them.
 */
static int lazy_load_code(void *arg, uint64_t vaddr, size_t max_back,
			  struct usdt__code *code, const char **why)
{
	struct usdt__lazy *l = arg;
	const struct usdt__symtab *st = lazy_symtab_get(l);
	const struct usdt__elf *ue = lazy_elf(l);
	uint64_t start, end, off;
	Elf_Data *d;
	int err;

	err = usdt__symtab_func_at(st, vaddr, &start, &end);
	if (err) {
		*why = err == -ENOTUNIQ ? "two functions hold the site"
					: "no function symbol holds the site";
		return err;
	}
	if (vaddr == start) {
		*why = "no instruction before the site";
		return -ENOENT;
	}
	code->at_func_start = vaddr - start <= max_back;
	if (!code->at_func_start)
		start = vaddr - max_back;
	if (usdt__symtab_data_in(st, start, vaddr)) {
		*why = "data among the instructions before the site";
		return -ENOENT;
	}
	d = NULL;
	if (ue && code_in_file(ue, start, vaddr, &off) &&
	    l->code_read + (vaddr - start) <= CODE_BUDGET)
		d = elf_getdata_rawchunk(ue->elf, (int64_t)off, vaddr - start,
					 ELF_T_BYTE);
	if (!d || !d->d_buf || d->d_size != vaddr - start) {
		*why = "the code before the site cannot be read";
		return -ENOENT;
	}
	l->code_read += d->d_size;
	code->bytes = d->d_buf;
	code->start = start;
	code->len = d->d_size;
	return 0;
}

/* The site's usdt__site_ctx.mapped: in a segment's memory image (which
 * includes .bss, beyond the file image). */
static bool lazy_mapped(void *arg, uint64_t vaddr)
{
	const struct usdt__elf *ue = ((struct usdt__lazy *)arg)->ue;
	size_t i;

	for (i = 0; i < ue->load_cnt; i++)
		if (vaddr >= ue->loads[i].p_vaddr &&
		    vaddr - ue->loads[i].p_vaddr < ue->loads[i].p_memsz)
			return true;
	return false;
}

/* Keep only the specs of the probe's arguments (16 bytes, not ~200). */
static void compact_probe(struct usdt_probe *p)
{
	int i;

	p->specs = calloc(p->arg_cnt ? (size_t)p->arg_cnt : 1,
			  sizeof(*p->specs));
	if (!p->specs) {
		p->status = -ENOMEM;
		p->error = "out of memory";
		return;
	}
	for (i = 0; i < p->arg_cnt; i++)
		p->specs[i] = p->args[i].spec;
	free(p->args);
	p->args = NULL;
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

/* The probe's addresses and file offsets; false (p made bad) when they
 * are not in the file. */
static bool probe_place(const struct usdt__elf *ue,
			const struct usdt__stapsdt_base *base,
			const struct usdt__raw_site *s, struct usdt_probe *p)
{
	uint64_t delta = 0;
	const char *why;

	if (base->has && s->base)
		delta = base->addr - s->base;
	p->vaddr = s->pc + delta;
	p->sema_vaddr = s->sema ? s->sema + delta : 0;
	if (usdt__elf_vaddr_to_off(ue, p->vaddr, &p->file_off)) {
		p->status = -EINVAL;
		p->error = "address not in any loadable segment";
		return false;
	}
	if (p->sema_vaddr &&
	    usdt__elf_sema_to_off(ue, p->sema_vaddr, &p->sema_off, &why)) {
		p->status = -EINVAL;
		p->error = why;
		return false;
	}
	return true;
}

void usdt__probe_build(struct usdt__lazy *lazy, const struct usdt_file *file,
		       const struct usdt__stapsdt_base *base,
		       const struct usdt__raw_site *s, struct usdt_probe *p,
		       char *text)
{
	const struct usdt__elf *ue = lazy->ue;
	struct usdt__site_ctx site = {};
	const char *why;
	int i, err;

	p->status = s->status;
	p->error = s->error;
	if (p->status)
		return;
	if (!probe_place(ue, base, s, p))
		goto err_out;
	if (!file->arch) {
		p->status = -ENOTSUP;
		p->error = "unsupported architecture";
		goto err_out;
	}

	site.arch = file->arch;
	site.load_symtab = lazy_symtab_get;
	site.load_code = lazy_load_code;
	site.mapped = lazy_mapped;
	site.load_arg = lazy;
	site.vaddr = p->vaddr;
	site.is_dyn = file->e_type == ET_DYN;
	site.big_endian = file->big_endian;
	err = usdt__args_parse(&site, s->args, &p->args, &p->arg_cnt, &why);
	if (err) {
		p->status = err;
		p->error = why ? why : "cannot parse the argument string";
		goto err_out;
	}
	for (i = 0; text && i < p->arg_cnt; i++) {
		const struct usdt__arg *a = &p->args[i];

		memcpy(text, s->args + a->str_pos, a->str_len);
		text[a->str_len] = '\0';
		text += a->str_len + 1;
	}
	if (file->compact)
		compact_probe(p);
	return;

err_out:
	pr_warn("%s: probe %s:%s at 0x%llx: %s\n", ue->path, p->provider,
		p->name, (unsigned long long)s->pc, p->error);
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
		if (rs->v[i].error) {
			memset(&s, 0, sizeof(s));
			s.provider = s.name = s.args = "";
			raw_bad(&s, rs->v[i].error);
		} else {
			usdt__note_decode(rs->ue, rs->data + rs->v[i].desc_off,
					  rs->v[i].desc_sz, &s);
		}
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
static int read_all(const struct usdt__elf *ue, struct usdt_file *file,
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
		err = usdt__file_index(file);
out:
	usdt__symtab_free(lazy.st);
	usdt__dups_free(&rs.dups);
	free(rs.v);
	return err;
}

static int read_probes(const struct usdt__elf *ue, int fd,
		       struct usdt_file *file)
{
	struct usdt__stapsdt_base base = {};
	size_t align;
	GElf_Shdr shdr;
	Elf_Scn *scn;

	if (usdt__elf_find_section(ue, ".note.stapsdt", SHT_NOTE, &shdr,
				   &scn)) {
		pr_debug("%s: no .note.stapsdt section\n", ue->path);
		return 0;
	}
	if (!usdt__elf_section_fits(ue, &shdr, USDT__MAX_SECTION_SIZE,
				    ".note.stapsdt"))
		return -EFBIG;
	pr_debug("%s: reading %llu bytes of .note.stapsdt\n", ue->path,
		 (unsigned long long)shdr.sh_size);
	align = shdr.sh_addralign == 8 ? 8 : 4;
	if (!usdt__elf_find_section(ue, ".stapsdt.base", SHT_NULL, &shdr,
				    NULL)) {
		base.has = true;
		base.addr = shdr.sh_addr;
	}
	if (!file->compact)
		return read_all(ue, file, scn, align, &base);
	/* The index reads the section itself, through a window. */
	gelf_getshdr(scn, &shdr);
	if (shdr.sh_offset > ue->file_size ||
	    shdr.sh_size > ue->file_size - shdr.sh_offset) {
		pr_warn("%s: cannot read .note.stapsdt: it lies past the end of the file\n",
			ue->path);
		return -ENOEXEC;
	}
	return usdt__index_build(ue, fd, shdr.sh_offset, shdr.sh_size, align,
				 &base, file);
}

void usdt_file__close(struct usdt_file *file)
{
	size_t i;

	if (!file)
		return;
	for (i = 0; file->probes && i < file->probe_cnt; i++) {
		free(file->probes[i].args);
		free(file->probes[i].specs);
	}
	if (file->fd >= 0)
		close(file->fd);
	free(file->probes);
	free(file->storage);
	free(file->names);
	usdt__index_free(file->idx);
	free(file->path);
	free(file);
}

int usdt__file_read(Elf *elf, int fd, const char *path, size_t file_size,
		    bool compact, struct usdt_file **out)
{
	struct usdt__elf ue;
	struct usdt_file *file;
	int err;

	*out = NULL;
	file = calloc(1, sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->fd = -1;
	file->compact = compact;
	file->path = strdup(path);
	if (!file->path) {
		free(file);
		return -ENOMEM;
	}
	err = usdt__elf_begin(&ue, elf, path, file_size);
	if (err) {
		usdt_file__close(file);
		return err;
	}
	file->e_machine = ue.e_machine;
	file->e_type = ue.e_type;
	file->big_endian = ue.big_endian;
	file->arch = usdt__arch_find(ue.e_machine);

	err = read_probes(&ue, compact ? fd : -1, file);
	usdt__elf_end(&ue);
	if (err) {
		usdt_file__close(file);
		return err;
	}
	pr_debug("%s: %zu USDT call sites\n", path, file->probe_cnt);
	*out = file;
	return 0;
}

static int libelf_init(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE) {
		pr_warn("libelf is too old: %s\n", elf_errmsg(-1));
		return -ENOTSUP;
	}
	return 0;
}

int usdt__file_open_fd(int fd, const char *path, bool compact,
		       struct usdt_file **out)
{
	struct stat st;
	Elf *elf;
	int err;

	*out = NULL;
	err = libelf_init();
	if (err)
		goto err_out;
	if (fstat(fd, &st)) {
		err = -errno;
		pr_warn("%s: cannot stat: %s\n", path, usdt__errstr(err));
		goto err_out;
	}
	if (!S_ISREG(st.st_mode)) {
		pr_warn("%s: not a regular file\n", path);
		err = -ENOEXEC;
		goto err_out;
	}
	/*
	 * Read with pread(), not through a mapping: a file that its owner
	 * truncates while we read it then gives short reads, not SIGBUS.
	 * libelf reads only the headers here, and each section when asked.
	 */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		pr_warn("%s: cannot read as ELF: %s\n", path, elf_errmsg(-1));
		err = -ENOEXEC;
		goto err_out;
	}
	err = usdt__file_read(elf, fd, path, (size_t)st.st_size, compact,
			      out);
	elf_end(elf);
	if (err)
		goto err_out;
	(*out)->fd = fd;
	(*out)->dev = st.st_dev;
	(*out)->ino = st.st_ino;
	usdt__map_id(fd, &st, &(*out)->map);
	(*out)->size = st.st_size;
	(*out)->mtime = st.st_mtim;
	return 0;

err_out:
	close(fd);
	return err;
}

int usdt__open_regular(const char *path)
{
	struct stat st;
	int fd;

	/* Look first, so that no device is even opened in the usual case;
	 * the fstat() below is what counts. */
	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	/* O_NONBLOCK: opening a FIFO or a device must not wait. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	return fd;
}

struct usdt_file *usdt_file__open(const char *path,
				  const struct usdt_file_opts *opts)
{
	struct usdt_file *file;
	int fd, err;

	if (!path || !OPTS_VALID(opts, usdt_file_opts))
		return usdt__err_ptr(-EINVAL);
	fd = usdt__open_regular(path);
	if (fd < 0) {
		pr_warn("%s: cannot open: %s\n", path,
			fd == -ENOEXEC ? "not a regular file" :
					 usdt__errstr(fd));
		return usdt__err_ptr(fd);
	}
	err = usdt__file_open_fd(fd, path, false, &file);
	return err ? usdt__err_ptr(err) : file;
}

struct usdt_file *usdt__file_open_mem(const void *buf, size_t size,
				      const char *name)
{
	struct usdt_file *file = NULL;
	char *copy;
	Elf *elf;
	int err;

	err = libelf_init();
	if (err)
		return usdt__err_ptr(err);
	/* elf_memory() may write to the image (it is a private mapping to
	 * libelf), and the caller's is const. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return usdt__err_ptr(-ENOMEM);
	memcpy(copy, buf, size);
	elf = elf_memory(copy, size);
	if (!elf) {
		pr_warn("%s: cannot read as ELF: %s\n", name, elf_errmsg(-1));
		free(copy);
		return usdt__err_ptr(-ENOEXEC);
	}
	err = usdt__file_read(elf, -1, name, size, false, &file);
	elf_end(elf);
	free(copy);
	if (err)
		return usdt__err_ptr(err);
	return file;
}

/* ---------------------------------------------------------------------- */
/* Finding call sites by name                                             */

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

int usdt__file_index(struct usdt_file *file)
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

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[\\") != NULL;
}

/* The first position in names[] whose provider:name is not below the
 * given one. */
static size_t lower_bound(const struct usdt_file *file, const char *provider,
			  const char *name)
{
	size_t lo = 0, hi = file->probe_cnt, mid;
	const struct usdt_probe *p;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		p = &file->probes[file->names[mid]];
		c = strcmp(p->provider, provider);
		if (!c)
			c = strcmp(p->name, name);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long usdt__file_match(const struct usdt_file *file, const char *provider,
		      const char *name, usdt__match_fn fn, void *ctx)
{
	bool exact = !is_glob(provider) && !is_glob(name);
	size_t i = exact ? lower_bound(file, provider, name) : 0, grp;
	const struct usdt_probe *p, *first;
	long cnt = 0;
	bool match = false;
	int err;

	for (grp = i; i < file->probe_cnt; i++) {
		p = &file->probes[file->names[i]];
		first = &file->probes[file->names[grp]];
		/* fnmatch once per distinct provider:name. */
		if (i == grp || strcmp(p->name, first->name) ||
		    strcmp(p->provider, first->provider)) {
			grp = i;
			if (exact && (strcmp(p->provider, provider) ||
				      strcmp(p->name, name)))
				break;
			match = exact || (!fnmatch(provider, p->provider, 0) &&
					  !fnmatch(name, p->name, 0));
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

/* ---------------------------------------------------------------------- */
/* Getters                                                                */

const char *usdt_file__path(const struct usdt_file *file)
{
	return file->path;
}

int usdt_file__machine(const struct usdt_file *file)
{
	return file->e_machine;
}

const char *usdt_file__arch_name(const struct usdt_file *file)
{
	return file->arch ? file->arch->name : NULL;
}

bool usdt_file__is_dyn(const struct usdt_file *file)
{
	return file->e_type == ET_DYN;
}

size_t usdt_file__probe_cnt(const struct usdt_file *file)
{
	return file->probe_cnt;
}

const struct usdt_probe *usdt_file__probe(const struct usdt_file *file,
					  size_t i)
{
	if (i >= file->probe_cnt)
		return usdt__err_ptr(-ERANGE);
	return &file->probes[i];
}

const char *usdt_probe__provider(const struct usdt_probe *p)
{
	return p->provider;
}

const char *usdt_probe__name(const struct usdt_probe *p)
{
	return p->name;
}

uint64_t usdt_probe__address(const struct usdt_probe *p)
{
	return p->vaddr;
}

uint64_t usdt_probe__file_offset(const struct usdt_probe *p)
{
	return p->file_off;
}

uint64_t usdt_probe__semaphore(const struct usdt_probe *p)
{
	return p->sema_vaddr;
}

uint64_t usdt_probe__semaphore_offset(const struct usdt_probe *p)
{
	return p->sema_off;
}

const char *usdt_probe__args_str(const struct usdt_probe *p)
{
	return p->args_str;
}

int usdt_probe__status(const struct usdt_probe *p)
{
	return p->status;
}

const char *usdt_probe__error(const struct usdt_probe *p)
{
	return p->status ? p->error : NULL;
}

int usdt_probe__arg_cnt(const struct usdt_probe *p)
{
	return p->status ? 0 : p->arg_cnt;
}

int usdt_probe__arg(const struct usdt_probe *p, int i,
		    struct usdt_arg_info *info)
{
	const size_t need = offsetof(struct usdt_arg_info, str) +
			    sizeof(info->str);
	const struct usdt__arg *a;
	const char *text;
	size_t sz;
	int j;

	if (!info || info->sz < need ||
	    !OPTS_VALID(info, usdt_arg_info))
		return usdt__err(-EINVAL);
	if (!p || p->status || i < 0 || i >= p->arg_cnt)
		return usdt__err(-ERANGE);
	if (!p->args)		/* a compact file's; never handed out */
		return usdt__err(-ENOTSUP);

	a = &p->args[i];
	text = p->arg_text;
	for (j = 0; j < i; j++)
		text += p->args[j].str_len + 1;

	/* A caller built against an older, smaller struct gets its part. */
	sz = info->sz;
	memset(info, 0, sz < sizeof(*info) ? sz : sizeof(*info));
	info->sz = sz;
	info->kind = a->kind;
	info->size = a->size;
	info->is_signed = a->is_signed;
	info->is_float = a->is_float;
	info->reg = a->base[0] ? a->base : NULL;
	info->index = a->index[0] ? a->index : NULL;
	info->scale = a->index[0] ? a->scale : 0;
	info->offset = a->offset;
	info->value = a->value;
	info->reason = a->kind == USDT_ARG_UNSUPPORTED ? a->reason : NULL;
	info->str = text;
	if (OPTS_HAS(info, index_ext)) {
		info->offset = (int64_t)((uint64_t)a->offset -
					 (uint64_t)a->read_adj);
		info->read_offset = a->offset;
		info->read_reg = a->read_base[0] ? a->read_base : info->reg;
		/* riscv64 %lo(sym)(a4) is read at sym, a4 aside (args.c). */
		if (a->lo_reloc && a->spec.base_off == USDT_REG_NONE)
			info->read_reg = NULL;
		info->index_ext = !info->index ? NULL :
				  a->idx_ext == USDT__IDX_SXTW ? "sxtw" :
				  a->idx_ext == USDT__IDX_UXTW ? "uxtw" : NULL;
	}
	return 0;
}
