/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Building a call site's probe from its decoded note (src/probe.c), and
 * the two readers that do (the full one, src/note.c, and a compact file's
 * index, src/noteidx.c) as src/file.c calls them.
 */
#ifndef __LIBUSDT_PROBE_H
#define __LIBUSDT_PROBE_H

#include "file.h"
#include "notes.h"

struct usdt__stapsdt_base {
	bool has;		/* the file has .stapsdt.base */
	uint64_t addr;		/* its address */
};

/*
 * The symbol table and the code before sites, read when an argument first
 * needs them. ue->elf may be NULL (an index read without libelf): the file
 * at fd is then opened with libelf on the first need.
 */
struct usdt__lazy {
	const struct usdt__elf *ue;
	int fd;
	struct usdt__elf own;	/* ue opened from fd (own.elf != NULL) */
	bool opened;		/* tried to open it */
	struct usdt__symtab *st;
	bool tried;
	int err;		/* -ENOMEM fails the file */
	size_t code_read;	/* bytes of code read so far (load_code) */
};

void usdt__lazy_end(struct usdt__lazy *l);

/*
 * Fill in probe p from its decoded note s: addresses, offsets and
 * arguments (specs only for a compact file). text: room for the
 * arguments' texts, or NULL. Logs a probe that is bad.
 */
void usdt__probe_build(struct usdt__lazy *lazy, const struct usdt_file *file,
		       const struct usdt__stapsdt_base *base,
		       const struct usdt__raw_site *s, struct usdt_probe *p,
		       char *text);

/* Every probe of the section scn, read whole, into file (src/note.c).
 * Returns 0 or a negative errno. */
int usdt__notes_read_all(const struct usdt__elf *ue, struct usdt_file *file,
			 Elf_Scn *scn, size_t align,
			 const struct usdt__stapsdt_base *base);

/* The compact file's index (src/noteidx.c): built from the walk of the
 * section at file_off, of size bytes. Returns 0 or a negative errno. */
int usdt__index_build(const struct usdt__elf *ue, int fd, uint64_t file_off,
		      size_t size, size_t align,
		      const struct usdt__stapsdt_base *base,
		      struct usdt_file *file);
void usdt__index_free(struct usdt__index *idx);

#endif /* __LIBUSDT_PROBE_H */
