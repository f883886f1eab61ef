/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private to the note reader (src/elf.c, src/note.c): a thin layer over
 * libelf that knows the few things the reader asks of an ELF file.
 *
 * (Not named elf.h: with -Isrc, that name would hide the system's <elf.h>.)
 */
#ifndef __LIBUSDT_READER_H
#define __LIBUSDT_READER_H

#include <gelf.h>

#include "internal.h"

/*
 * An ELF file being read. Borrows elf and path; owns loads[]. Valid
 * between usdt__elf_begin() (success) and usdt__elf_end().
 */
struct usdt__elf {
	Elf *elf;
	const char *path;	/* for messages */
	uint16_t e_machine;
	uint16_t e_type;
	bool big_endian;
	size_t shstrndx;
	size_t file_size;	/* what libelf may read: the file's size */
	GElf_Phdr *loads;	/* the PT_LOAD program headers */
	size_t load_cnt;
};

/*
 * Limits on the work one file can cause (the file is untrusted: a sparse
 * file of a few GB costs its owner nothing). libelf, reading from a file
 * descriptor, allocates each section it is asked for in full, so every
 * section is checked against a limit before it is read. Beyond them a
 * file is refused with -EFBIG (a section) or -E2BIG (too many call sites
 * or arguments); a symbol table beyond its limit is skipped with a
 * message (only arguments that name a symbol need it). Together they keep
 * one file under about 200 MB of memory and well under a second.
 */
#define USDT__MAX_SECTIONS	(1u << 16)	/* section or program headers */
#define USDT__MAX_SECTION_SIZE	(16u << 20)	/* .note.stapsdt, names, each
						 * symbol or string table */
#define USDT__MAX_SITES		(128u << 10)	/* stapsdt notes */
#define USDT__MAX_ARGS		(256u << 10)	/* arguments, all sites */

/*
 * Check that elf is a 64-bit executable or shared library of either byte
 * order, and read its loadable segments. file_size is the size of what
 * libelf reads (the file, or the image in memory). Returns 0, -ENOEXEC or
 * -EFBIG (logged).
 */
int usdt__elf_begin(struct usdt__elf *ue, Elf *elf, const char *path,
		    size_t file_size);

/* Is the section within cap bytes? Logs "what is too big" if not. */
bool usdt__elf_section_fits(const struct usdt__elf *ue, const GElf_Shdr *shdr,
			    uint64_t cap, const char *what);
void usdt__elf_end(struct usdt__elf *ue);

/*
 * The section called name, of type type (SHT_NULL: any type): its header
 * into *shdr and its handle into *scn. Returns 0, or -ENOENT.
 */
int usdt__elf_find_section(const struct usdt__elf *ue, const char *name,
			   uint32_t type, GElf_Shdr *shdr, Elf_Scn **scn);

/*
 * The file offset of the link-time address vaddr, through the PT_LOAD
 * segment whose file image contains it. Returns 0, or -ENOENT.
 */
int usdt__elf_vaddr_to_off(const struct usdt__elf *ue, uint64_t vaddr,
			   uint64_t *off);

/*
 * The file offset of a semaphore at link-time address vaddr, as the
 * kernel's ref_ctr_offset wants it: vaddr - p_vaddr + p_offset through
 * the writable PT_LOAD segment that holds its two bytes, also in the
 * segment's zero-filled tail past p_filesz as long as it is in a page
 * the file is mapped on. Returns 0, or -ENOENT / -EINVAL with *why.
 */
int usdt__elf_sema_to_off(const struct usdt__elf *ue, uint64_t vaddr,
			  uint64_t *off, const char **why);

/* Read 4 or 8 bytes at p in the file's byte order. */
uint32_t usdt__elf_rd32(const struct usdt__elf *ue, const void *p);
uint64_t usdt__elf_rd64(const struct usdt__elf *ue, const void *p);

/*
 * Build the symbol table argument resolution needs: the defined symbols
 * of .symtab (else .dynsym), plus the GOT slots of undefined symbols from
 * the dynamic relocations. *out is NULL when the file has no symbols.
 * Returns 0 or -ENOMEM; damaged tables are skipped with a message.
 */
int usdt__elf_symtab(const struct usdt__elf *ue, struct usdt__symtab **out);

/*
 * Read the probes of an opened ELF file into a new usdt_file (the note
 * reader proper, src/note.c); fd is the file's (-1 for an image in
 * memory), which a compact file reads its notes from. Returns 0 or a
 * negative errno.
 */
int usdt__file_read(Elf *elf, int fd, const char *path, size_t file_size,
		    bool compact, struct usdt_file **out);

/* ---------------------------------------------------------------------- */
/* Between the note reader (src/note.c) and the index (src/noteidx.c)     */

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
 * there would report every hit twice. Both readers (the full one in
 * src/note.c and the index in src/noteidx.c) drop such a note while
 * walking the section, so that a file lists, picks and attaches each
 * site once; a repeat whose arguments or semaphore differ keeps the
 * first note's, with a warning. The set below holds the sites kept so
 * far, by a hash of their key (usdt__site_key()) that the caller checks
 * with eq().
 */
struct usdt__dups {
	struct { uint32_t site1, hash; } *slots;	/* site1 0: empty */
	size_t cap, cnt;	/* cap a power of two, at least twice cnt */
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
 * The bytes of .note.stapsdt: all of them in memory (data), or read from
 * fd through a window of a few pages, so that reading a big section
 * costs the window, not the section.
 */
struct usdt__note_src {
	const char *data;	/* the whole section, or NULL: read from fd */
	int fd;
	uint64_t file_off;	/* where the section is in the file */
	size_t size;		/* the section's size */
	size_t win;		/* bytes read at once; 0: a default */
	char *buf;		/* the window: bytes [buf_off, buf_off + buf_len) */
	size_t buf_off, buf_len, buf_cap;
	int err;		/* why usdt__note_bytes() gave NULL */
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
 * What the note walk hands each stapsdt note to: note() gets its
 * descriptor desc[0..descsz) and the offset of the note's header in the
 * section; bad() a damaged note that ends the walk (why says how).
 */
struct usdt__note_sink {
	int (*note)(struct usdt__note_sink *k, const char *desc,
		    size_t descsz, size_t off);
	int (*bad)(struct usdt__note_sink *k, const char *why);
	size_t cnt;		/* notes handed over, bad ones included */
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
		  size_t align, size_t off, const char **desc,
		  size_t *descsz);

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

#endif /* __LIBUSDT_READER_H */
