// SPDX-License-Identifier: BSD-2-Clause
/*
 * The symbol table that argument resolution looks names up in.
 *
 * Operands name symbols by text inside the argument string ("counter(%rip)"),
 * so lookups take a (name, len) span that is not NUL-terminated. The table
 * is an open-addressing hash of entries whose names live in one growing
 * character buffer, so a table of a hundred thousand symbols costs three
 * allocations, not a hundred thousand.
 *
 * Invariants:
 *  - names[] holds every entry's name back to back, each NUL-terminated;
 *    entries refer to them by offset, because the buffer moves as it grows;
 *  - buckets[] has a power-of-two size at least twice the entry count, and
 *    holds entry index + 1 (0 is an empty bucket);
 *  - a name appears in at most one entry.
 *
 * One name can be defined at two addresses: a static variable in one
 * translation unit and a global, or two statics, of the same name. The
 * operand text does not say which one the compiler meant, so such a name
 * is marked ambiguous and lookups of it fail (-ENOTUNIQ) rather than
 * guess.
 *
 * Beside names, the table keeps where code is: each function's bounds and
 * each "$d" mapping symbol (data among instructions), in two plain arrays
 * searched linearly. They are asked only for the rare argument whose
 * low bits come from the instructions before its site (src/reader/args.c).
 */
#include "base/base.h"
#include "reader/symtab.h"

#define SYM_F_DEFINED 0x1   /* addr is valid */
#define SYM_F_GOT 0x2	    /* got_slot is valid */
#define SYM_F_AMBIGUOUS 0x4 /* defined at two different addresses */
#define SYM_F_SIZED 0x8	    /* obj_size was set (0: sizes disagreed) */

struct sym_entry {
	size_t name_off;
	size_t name_len;
	uint64_t addr;
	uint64_t got_slot;
	uint64_t obj_size; /* a data object's size, 0 when unknown */
	uint32_t hash;
	uint32_t flags;
};

struct usdt__symtab {
	struct sym_entry *entries;
	size_t cnt, cap;
	uint32_t *buckets;
	size_t bucket_cnt; /* a power of two, or 0 before the first add */
	char *names;
	size_t names_len, names_cap;
	struct func_range {
		uint64_t start, end;
	} * funcs;
	size_t func_cnt, func_cap;
	uint64_t *marks; /* "$d" addresses */
	size_t mark_cnt, mark_cap;
};

static uint32_t name_hash(const char *name, size_t len)
{
	return usdt__hash_bytes(name, len);
}

static struct sym_entry *find(const struct usdt__symtab *st, const char *name,
			      size_t len, uint32_t hash)
{
	size_t mask, i;

	if (!st->bucket_cnt)
		return NULL;
	mask = st->bucket_cnt - 1;
	for (i = hash & mask; st->buckets[i]; i = (i + 1) & mask) {
		struct sym_entry *e = &st->entries[st->buckets[i] - 1];

		if (e->hash == hash && e->name_len == len &&
		    !memcmp(st->names + e->name_off, name, len))
			return e;
	}
	return NULL;
}

static void insert_bucket(uint32_t *buckets, size_t bucket_cnt, uint32_t hash,
			  uint32_t idx)
{
	size_t mask = bucket_cnt - 1, i;

	for (i = hash & mask; buckets[i]; i = (i + 1) & mask)
		;
	buckets[i] = idx + 1;
}

/* Make room for one more entry, keeping the load factor at most 1/2. */
static int grow(struct usdt__symtab *st)
{
	struct sym_entry *entries;
	uint32_t *buckets;
	size_t cap, n, i;

	if (st->cnt >= UINT32_MAX - 1)
		return -E2BIG;
	if (st->cnt == st->cap) {
		cap = st->cap ? st->cap * 2 : 64;
		entries =
			usdt__reallocarray(st->entries, cap, sizeof(*entries));
		if (!entries)
			return -ENOMEM;
		st->entries = entries;
		st->cap = cap;
	}
	if ((st->cnt + 1) * 2 > st->bucket_cnt) {
		n = st->bucket_cnt ? st->bucket_cnt * 2 : 128;
		buckets = calloc(n, sizeof(*buckets));
		if (!buckets)
			return -ENOMEM;
		for (i = 0; i < st->cnt; i++)
			insert_bucket(buckets, n, st->entries[i].hash,
				      (uint32_t)i);
		free(st->buckets);
		st->buckets = buckets;
		st->bucket_cnt = n;
	}
	return 0;
}

static int append_name(struct usdt__symtab *st, const char *name, size_t len,
		       size_t *off)
{
	size_t need = st->names_len + len + 1, cap;
	char *names;

	if (need < len)
		return -ENOMEM;
	if (need > st->names_cap) {
		cap = st->names_cap ? st->names_cap : 4096;
		while (cap < need)
			cap *= 2;
		names = realloc(st->names, cap);
		if (!names)
			return -ENOMEM;
		st->names = names;
		st->names_cap = cap;
	}
	memcpy(st->names + st->names_len, name, len);
	st->names[st->names_len + len] = '\0';
	*off = st->names_len;
	st->names_len = need;
	return 0;
}

struct usdt__symtab *usdt__symtab_new(void)
{
	return calloc(1, sizeof(struct usdt__symtab));
}

int usdt__symtab_add(struct usdt__symtab *st, const char *name, uint64_t addr,
		     uint64_t got_slot)
{
	size_t len = strlen(name), off;
	uint32_t hash = name_hash(name, len);
	struct sym_entry *e;
	int err;

	if (!len)
		return 0;
	e = find(st, name, len, hash);
	if (e) {
		if (got_slot) {
			if (!(e->flags & SYM_F_GOT)) {
				e->got_slot = got_slot;
				e->flags |= SYM_F_GOT;
			}
		} else if (!(e->flags & SYM_F_DEFINED)) {
			e->addr = addr;
			e->flags |= SYM_F_DEFINED;
		} else if (e->addr != addr) {
			e->flags |= SYM_F_AMBIGUOUS;
		}
		return 0;
	}

	err = grow(st);
	if (err)
		return err;
	err = append_name(st, name, len, &off);
	if (err)
		return err;
	e = &st->entries[st->cnt];
	e->name_off = off;
	e->name_len = len;
	e->hash = hash;
	e->addr = got_slot ? 0 : addr;
	e->got_slot = got_slot;
	e->obj_size = 0;
	e->flags = got_slot ? SYM_F_GOT : SYM_F_DEFINED;
	insert_bucket(st->buckets, st->bucket_cnt, hash, (uint32_t)st->cnt);
	st->cnt++;
	return 0;
}

int usdt__sym_lookup(const struct usdt__symtab *st, const char *name,
		     size_t len, uint64_t *addr, uint64_t *got_slot)
{
	const struct sym_entry *e;

	if (!st || !len)
		return -ENOENT;
	e = find(st, name, len, name_hash(name, len));
	if (!e)
		return -ENOENT;
	if (e->flags & SYM_F_AMBIGUOUS)
		return -ENOTUNIQ;
	/* A definition in this file beats going through the GOT. The slot,
	 * if there is one, is reported too: for a symbol a copy relocation
	 * may move into the executable, the GOT has the address in use. */
	if (e->flags & SYM_F_DEFINED) {
		*addr = e->addr;
		*got_slot = (e->flags & SYM_F_GOT) ? e->got_slot : 0;
		return 0;
	}
	*got_slot = e->got_slot;
	return 1;
}

void usdt__symtab_set_obj_size(struct usdt__symtab *st, const char *name,
			       uint64_t size)
{
	size_t len = strlen(name);
	struct sym_entry *e = find(st, name, len, name_hash(name, len));

	if (!e)
		return;
	if (!(e->flags & SYM_F_SIZED))
		e->obj_size = size;
	else if (e->obj_size != size)
		e->obj_size = 0;
	e->flags |= SYM_F_SIZED;
}

uint64_t usdt__sym_obj_size(const struct usdt__symtab *st, const char *name,
			    size_t len)
{
	const struct sym_entry *e;

	if (!st || !len)
		return 0;
	e = find(st, name, len, name_hash(name, len));
	if (!e || (e->flags & SYM_F_AMBIGUOUS))
		return 0;
	return e->obj_size;
}

/* Room for one more element in *arr (cnt used of *cap). */
static int grow_array(void **arr, size_t *cap, size_t cnt, size_t elem)
{
	void *p;
	size_t n;

	if (cnt < *cap)
		return 0;
	n = *cap ? *cap * 2 : 64;
	p = usdt__reallocarray(*arr, n, elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

int usdt__symtab_add_func(struct usdt__symtab *st, uint64_t start,
			  uint64_t size)
{
	void *arr = st->funcs;
	int err;

	if (!size || start + size < start)
		return 0;
	err = grow_array(&arr, &st->func_cap, st->func_cnt, sizeof(*st->funcs));
	st->funcs = arr;
	if (err)
		return err;
	st->funcs[st->func_cnt].start = start;
	st->funcs[st->func_cnt].end = start + size;
	st->func_cnt++;
	return 0;
}

int usdt__symtab_add_data_mark(struct usdt__symtab *st, uint64_t addr)
{
	void *arr = st->marks;
	int err;

	err = grow_array(&arr, &st->mark_cap, st->mark_cnt, sizeof(*st->marks));
	st->marks = arr;
	if (err)
		return err;
	st->marks[st->mark_cnt++] = addr;
	return 0;
}

int usdt__symtab_func_at(const struct usdt__symtab *st, uint64_t vaddr,
			 uint64_t *start, uint64_t *end)
{
	bool found = false;
	size_t i;

	for (i = 0; st && i < st->func_cnt; i++) {
		const struct func_range *f = &st->funcs[i];

		if (vaddr < f->start || vaddr >= f->end)
			continue;
		/* Aliases (same bounds) are one function. */
		if (found && (f->start != *start || f->end != *end))
			return -ENOTUNIQ;
		*start = f->start;
		*end = f->end;
		found = true;
	}
	return found ? 0 : -ENOENT;
}

bool usdt__symtab_data_in(const struct usdt__symtab *st, uint64_t start,
			  uint64_t end)
{
	size_t i;

	for (i = 0; st && i < st->mark_cnt; i++)
		if (st->marks[i] >= start && st->marks[i] < end)
			return true;
	return false;
}

void usdt__symtab_free(struct usdt__symtab *st)
{
	if (!st)
		return;
	free(st->funcs);
	free(st->marks);
	free(st->entries);
	free(st->buckets);
	free(st->names);
	free(st);
}
