/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The symbol table argument resolution looks symbols up in, and the
 * functions that say where code is (src/reader/symtab.c).
 */
#ifndef __LIBUSDT_SYMTAB_H
#define __LIBUSDT_SYMTAB_H

#include "base/internal.h"

/*
 * Symbol lookup for resolution: the link-time address of name[0..len)
 * into *addr (return 0), or, for a symbol only reachable through the GOT,
 * the GOT slot's address into *got_slot (return 1); -ENOENT when unknown,
 * -ENOTUNIQ when several different symbols have that name (src/reader/symtab.c).
 * A defined symbol that also has a GOT slot returns 0 with both *addr and
 * *got_slot set (*got_slot is 0 when it has none).
 */
struct usdt__symtab;
int usdt__sym_lookup(const struct usdt__symtab *st, const char *name,
		     size_t len, uint64_t *addr, uint64_t *got_slot);

/* Building a symbol table by hand (the note reader and unit tests). */
struct usdt__symtab *usdt__symtab_new(void);
/* got_slot != 0: the symbol is undefined here and reached through that
 * GOT slot; addr is then ignored. Returns 0 or -ENOMEM. */
int usdt__symtab_add(struct usdt__symtab *st, const char *name, uint64_t addr,
		     uint64_t got_slot);
/* The symbol name, added before, is a data object (STT_OBJECT) of size
 * bytes; two definitions of one name with different sizes leave it
 * unknown. */
void usdt__symtab_set_obj_size(struct usdt__symtab *st, const char *name,
			       uint64_t size);
/* The data object size of name[0..len), or 0: not a data object, unknown,
 * ambiguous or absent. */
uint64_t usdt__sym_obj_size(const struct usdt__symtab *st, const char *name,
			    size_t len);
void usdt__symtab_free(struct usdt__symtab *st);

/*
 * Where code is (for reading the instructions before a call site, see
 * usdt__label_lo()): the functions (STT_FUNC with a size) and the "$d"
 * mapping symbols, which mark data placed among instructions. Returns 0
 * or -ENOMEM.
 */
int usdt__symtab_add_func(struct usdt__symtab *st, uint64_t start,
			  uint64_t size);
int usdt__symtab_add_data_mark(struct usdt__symtab *st, uint64_t addr);
/*
 * The function that holds vaddr: its bounds into *start and *end. Returns
 * 0, -ENOENT (none), or -ENOTUNIQ (two functions of different bounds hold
 * it: the file does not say which one the site is in).
 */
int usdt__symtab_func_at(const struct usdt__symtab *st, uint64_t vaddr,
			 uint64_t *start, uint64_t *end);
/* Is there a "$d" mark in [start, end)? */
bool usdt__symtab_data_in(const struct usdt__symtab *st, uint64_t start,
			  uint64_t end);

#endif /* __LIBUSDT_SYMTAB_H */
