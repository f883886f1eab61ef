// SPDX-License-Identifier: BSD-2-Clause
/*
 * The symbol table resolution looks operand symbols up in ("sym(%rip)",
 * "$sym", "sym@GOTPCREL(%rip)"): names to link-time addresses, or to the
 * GOT slot through which an undefined symbol is reached.
 *
 * A hash table with open addressing over an array of entries; names are
 * copied. Lookups take a (name, len) pair that is not NUL-terminated,
 * because the name is a span inside an argument string.
 *
 * One name may be added more than once: an ELF file has both .symtab and
 * .dynsym, and a symbol may be defined and also have a GOT slot. The rules:
 * a definition wins over a GOT slot; the same definition twice is one
 * symbol; two different definitions of one name (static variables of the
 * same name in two translation units) make the name ambiguous, and a
 * lookup of it fails with -ENOTUNIQ rather than pick one at random.
 */
#include "internal.h"

struct symtab_ent {
	char *name;
	size_t len;
	uint64_t addr;
	uint64_t got_slot;	/* 0: defined here, at addr */
	bool ambiguous;
};

struct usdt__symtab {
	struct symtab_ent *ents;
	size_t cnt, cap;
	/* Entry index + 1, or 0 for an empty bucket; size a power of 2. */
	uint32_t *buckets;
	size_t nbuckets;
};

static uint64_t hash_name(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The bucket holding name, or the empty bucket where it would go. */
static size_t find_bucket(const struct usdt__symtab *st, const char *name,
			  size_t len)
{
	size_t mask = st->nbuckets - 1, b = hash_name(name, len) & mask;

	for (;;) {
		uint32_t i = st->buckets[b];

		if (!i || (st->ents[i - 1].len == len &&
			   !memcmp(st->ents[i - 1].name, name, len)))
			return b;
		b = (b + 1) & mask;
	}
}

static int grow_buckets(struct usdt__symtab *st)
{
	size_t n = st->nbuckets ? st->nbuckets * 2 : 64, i, b;
	uint32_t *old = st->buckets;

	if (n > UINT32_MAX)
		return -ENOMEM;
	st->buckets = calloc(n, sizeof(*st->buckets));
	if (!st->buckets) {
		st->buckets = old;
		return -ENOMEM;
	}
	st->nbuckets = n;
	for (i = 0; i < st->cnt; i++) {
		b = find_bucket(st, st->ents[i].name, st->ents[i].len);
		st->buckets[b] = (uint32_t)(i + 1);
	}
	free(old);
	return 0;
}

struct usdt__symtab *usdt__symtab_new(void)
{
	struct usdt__symtab *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	if (grow_buckets(st)) {
		free(st);
		return NULL;
	}
	return st;
}

int usdt__symtab_add(struct usdt__symtab *st, const char *name, uint64_t addr,
		     uint64_t got_slot)
{
	size_t len = strlen(name), b;
	struct symtab_ent *e;

	b = find_bucket(st, name, len);
	if (st->buckets[b]) {
		e = &st->ents[st->buckets[b] - 1];
		if (got_slot) {
			/* A definition wins over a GOT slot. */
			if (e->got_slot && e->got_slot != got_slot)
				e->ambiguous = true;
		} else if (e->got_slot) {
			e->addr = addr;
			e->got_slot = 0;
		} else if (e->addr != addr) {
			e->ambiguous = true;
		}
		return 0;
	}

	/* Keep the table at most half full. */
	if ((st->cnt + 1) * 2 > st->nbuckets) {
		if (grow_buckets(st))
			return -ENOMEM;
		b = find_bucket(st, name, len);
	}
	if (st->cnt == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 32;
		struct symtab_ent *ents;

		ents = usdt__reallocarray(st->ents, cap, sizeof(*ents));
		if (!ents)
			return -ENOMEM;
		st->ents = ents;
		st->cap = cap;
	}
	e = &st->ents[st->cnt];
	e->name = malloc(len + 1);
	if (!e->name)
		return -ENOMEM;
	memcpy(e->name, name, len + 1);
	e->len = len;
	e->addr = got_slot ? 0 : addr;
	e->got_slot = got_slot;
	e->ambiguous = false;
	st->buckets[b] = (uint32_t)(++st->cnt);
	return 0;
}

int usdt__sym_lookup(const struct usdt__symtab *st, const char *name,
		     size_t len, uint64_t *addr, uint64_t *got_slot)
{
	const struct symtab_ent *e;
	size_t b;

	if (!st)
		return -ENOENT;
	b = find_bucket(st, name, len);
	if (!st->buckets[b])
		return -ENOENT;
	e = &st->ents[st->buckets[b] - 1];
	if (e->ambiguous)
		return -ENOTUNIQ;
	if (e->got_slot) {
		*got_slot = e->got_slot;
		return 1;
	}
	*addr = e->addr;
	return 0;
}

void usdt__symtab_free(struct usdt__symtab *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->cnt; i++)
		free(st->ents[i].name);
	free(st->ents);
	free(st->buckets);
	free(st);
}
