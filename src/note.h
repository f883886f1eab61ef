/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The full reader (src/note.c): every call site of a file as a probe,
 * and finding them by provider and name.
 */
#ifndef __LIBUSDT_NOTE_H
#define __LIBUSDT_NOTE_H

#include "probe.h"

/* Every probe of the section scn, read whole, into file (src/note.c).
 * Returns 0 or a negative errno. */
int usdt__notes_read_all(const struct usdt__elf *ue, struct usdt_file *file,
			 Elf_Scn *scn, size_t align,
			 const struct usdt__stapsdt_base *base);

/*
 * Call the callback for every call site whose provider and name match the
 * shell globs, grouped by name and in note order within a name. A pattern
 * without glob characters costs a binary search, not a scan. Stops at and
 * returns the first nonzero result of fn, else the number of matches.
 */
typedef int (*usdt__match_fn)(const struct usdt_probe *p, void *ctx);
long usdt__file_match(const struct usdt_file *file, const char *provider,
		      const char *name, usdt__match_fn fn, void *ctx);

#endif /* __LIBUSDT_NOTE_H */
