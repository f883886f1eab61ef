/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Building a call site's probe from its decoded note (src/reader/probe.c), for
 * the reader (src/reader/noteidx.c).
 */
#ifndef __LIBUSDT_PROBE_H
#define __LIBUSDT_PROBE_H

#include "reader/notes.h"
#include "reader/sites.h"

struct usdt__stapsdt_base {
	bool has;      /* the file has .stapsdt.base */
	uint64_t addr; /* its address */
};

/*
 * The symbol table and the code before sites, read when an argument first
 * needs them. ue->elf may be NULL (an index read without libelf): the file
 * at fd is then opened with libelf on the first need.
 */
struct usdt__lazy {
	const struct usdt__elf *ue;
	int fd;
	struct usdt__elf own; /* ue opened from fd (own.elf != NULL) */
	bool opened;	      /* tried to open it */
	struct usdt__symtab *st;
	bool tried;
	int err;	  /* -ENOMEM fails the file */
	size_t code_read; /* bytes of code read so far (load_code) */
};

void usdt__lazy_end(struct usdt__lazy *l);

/*
 * Fill in probe p from its decoded note s: addresses, offsets and
 * arguments; full: also its argument string and texts (p->strs) and
 * every argument (p->args), else only their specs (p->specs, args_str
 * ""). Its provider and name are the caller's. Out of memory, p->status
 * is -ENOMEM. Logs a probe that is bad.
 */
void usdt__probe_build(struct usdt__lazy *lazy, const struct usdt_file *file,
		       const struct usdt__stapsdt_base *base,
		       const struct usdt__raw_site *s, struct usdt_probe *p,
		       bool full);

#endif /* __LIBUSDT_PROBE_H */
