// SPDX-License-Identifier: BSD-2-Clause
/*
 * The stapsdt note codec: the bytes of .note.stapsdt, read through a
 * window, walked note by note and decoded into raw sites; and the table
 * of repeated notes. The reader (src/reader/noteidx.c) uses it.
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
 * pc and semaphore alike (src/reader/probe.c).
 *
 * The file is untrusted. Each note header is checked against the section
 * before its name or descriptor is touched; each string must end inside
 * the descriptor. A bad note becomes a site with a negative status, and
 * the walk goes on to the next note whenever the header still says where
 * that is.
 */
#include <unistd.h>

#include "base/base.h"
#include "reader/notes.h"

#define STAPSDT_NOTE_TYPE 3
#define STAPSDT_OWNER "stapsdt"

static void raw_bad(struct usdt__raw_site *s, const char *why)
{
	s->status = -EINVAL;
	s->error = why;
}

void usdt__site_bad(struct usdt__raw_site *s, const char *why)
{
	memset(s, 0, sizeof(*s));
	s->provider = s->name = s->args = "";
	raw_bad(s, why);
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

/* The window's usual size: notes are a few dozen bytes each, and the
 * window is most of the peak memory of indexing a small file (16 KB: a
 * 100k-site section takes 850 reads, 0.5 ms more than at 32 KB). */
#define NOTE_WINDOW (16u << 10)

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
			break; /* what was asked is there */
		if (n <= 0)
			return -EIO; /* the file shrank, or cannot be read */
		got += (size_t)n;
	}
	src->buf_off = off;
	src->buf_len = got;
	return 0;
}

const char *usdt__note_bytes(struct usdt__note_src *src, size_t off, size_t len)
{
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
		  size_t align, size_t off, const char **desc, size_t *descsz)
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
			return k->bad(k,
				      "note runs past the end of .note.stapsdt");
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
				 ue->path, h ? usdt__elf_rd32(ue, h + 8) : 0,
				 off);
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
