/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stapsdt note codec (src/reader/notes.c), for the reader (src/reader/noteidx.c):
 * the bytes of .note.stapsdt through a window, the walk over its notes,
 * decoding one note, and the table of repeated notes.
 */
#ifndef __LIBUSDT_NOTES_H
#define __LIBUSDT_NOTES_H

#include "reader/elfread.h"

/* One note's descriptor, decoded (usdt__note_decode()). Strings point
 * into the note's bytes and are NUL-terminated there (or are ""). */
struct usdt__raw_site {
	const char *provider, *name, *args;
	size_t provider_len, name_len, args_len;
	uint64_t pc, base, sema;
	int status;
	const char *error;
};

void usdt__note_decode(const struct usdt__elf *ue, const char *desc,
		       size_t descsz, struct usdt__raw_site *s);
/* Make s a bad site with no strings: status -EINVAL, error why. */
void usdt__site_bad(struct usdt__raw_site *s, const char *why);

/*
 * Notes that repeat a call site. Some build setups emit a site's note
 * twice (the same provider:name at the same address); a second uprobe
 * there would report every hit twice. The index (src/reader/noteidx.c) drops
 * such a note while walking the section, so that a file lists, picks and
 * attaches each site once; a repeat whose arguments or semaphore differ
 * keeps the first note's, with a warning. The set below holds the sites
 * kept so far, by a hash of their key (usdt__site_key()) that the caller
 * checks with eq().
 */
struct usdt__dups {
	struct {
		uint32_t site1, hash;
	} * slots;	 /* site1 0: empty */
	size_t cap, cnt; /* cap a power of two, at least twice cnt */
};

/* Is the note being walked the same call site as kept site site? */
typedef bool (*usdt__dups_eq_fn)(void *ctx, uint32_t site);

/*
 * Look the note being walked up (its key's hash h): 1 with the kept site
 * in *earlier when it repeats one, else 0 with it added as site site, or
 * -ENOMEM.
 */
int usdt__dups_add(struct usdt__dups *d, uint32_t h, uint32_t site,
		   usdt__dups_eq_fn eq, void *ctx, uint32_t *earlier);
void usdt__dups_free(struct usdt__dups *d);

/* The hash of a good site's key: address (pc and base), provider, name. */
uint32_t usdt__site_key(const struct usdt__raw_site *s);

/* Say that s repeats a kept site; differs: with other arguments or
 * semaphore (a warning, else a debug message). */
void usdt__dup_log(const struct usdt__elf *ue, const struct usdt__raw_site *s,
		   bool differs);

/*
 * The bytes of .note.stapsdt, read from fd through a window of a few
 * pages, so that reading a big section costs the window, not the section.
 */
struct usdt__note_src {
	int fd;
	uint64_t file_off; /* where the section is in the file */
	size_t size;	   /* the section's size */
	size_t win;	   /* bytes read at once; 0: a default */
	char *buf;	   /* the window: bytes [buf_off, buf_off + buf_len) */
	size_t buf_off, buf_len, buf_cap;
	int err; /* why usdt__note_bytes() gave NULL */
};

/*
 * Section bytes [off, off + len) (inside the section), valid until the
 * next call; NULL with src->err set when they cannot be read (-EIO: the
 * file shrank, or -ENOMEM).
 */
const char *usdt__note_bytes(struct usdt__note_src *src, size_t off,
			     size_t len);
void usdt__note_src_free(struct usdt__note_src *src);

/*
 * A window for reading n places spread over span bytes, in runs of rising
 * offsets (runs >= 1): a page when they are far apart, up to 64 KB when a
 * few share one, so that a read serves several of them and the reads of a
 * run copy not much more than span.
 */
static inline size_t usdt__note_win(uint64_t span, size_t n, size_t runs)
{
	size_t per_run = runs && n / runs ? n / runs : 1;
	uint64_t win = span / per_run * 4;

	if (win < 4096)
		return 4096;
	return win > (64u << 10) ? 64u << 10 : (size_t)(win & ~4095ull);
}

/*
 * What the note walk hands each stapsdt note to: note() gets its
 * descriptor desc[0..descsz) and the offset of the note's header in the
 * section; bad() a damaged note that ends the walk (why says how).
 */
struct usdt__note_sink {
	int (*note)(struct usdt__note_sink *k, const char *desc, size_t descsz,
		    size_t off);
	int (*bad)(struct usdt__note_sink *k, const char *why);
	size_t cnt; /* notes handed over, bad ones included */
};

/*
 * Walk the notes of the section (aligned to align) in order. Returns 0,
 * -E2BIG past USDT__MAX_SITES, the sink's error, or src->err.
 */
int usdt__note_walk(const struct usdt__elf *ue, struct usdt__note_src *src,
		    size_t align, struct usdt__note_sink *k);

/*
 * Check the note whose header is at off again (the file may have changed
 * since the walk): its descriptor into *desc and *descsz. Returns 0,
 * -EINVAL if it is not a stapsdt note inside the section, or src->err.
 */
int usdt__note_at(const struct usdt__elf *ue, struct usdt__note_src *src,
		  size_t align, size_t off, const char **desc, size_t *descsz);

#endif /* __LIBUSDT_NOTES_H */
