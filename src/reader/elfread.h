/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The reader's ELF layer (src/reader/elf.c): a thin layer over libelf that knows
 * the few things the reader asks of an ELF file, and the limits on the
 * work one file may cause. Private to the reader.
 * (Not named elf.h, so that no include path can take it for the
 * system's <elf.h>.)
 */
#ifndef __LIBUSDT_READER_ELFREAD_H
#define __LIBUSDT_READER_ELFREAD_H

#include <gelf.h>

#include "base/base.h"

struct usdt__symtab;

/*
 * An ELF file being read. Borrows elf and path; owns loads[]. Valid
 * between usdt__elf_begin() (success) and usdt__elf_end().
 */
struct usdt__elf {
	Elf *elf;
	const char *path; /* for messages */
	uint16_t e_machine;
	uint16_t e_type;
	bool big_endian;
	size_t shstrndx;
	size_t file_size; /* what libelf may read: the file's size */
	GElf_Phdr *loads; /* the PT_LOAD program headers */
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
 * one file under about 300 MB of memory and a few seconds: `usdt list` of
 * 100,003 sites with 600,000 arguments took 168 MB and 1.0 s here. The
 * argument cap leaves room for eight a site at the most sites (real code
 * averages under four; 0-12 in the bench's targets).
 */
#define USDT__MAX_SECTIONS (1u << 16) /* section or program headers */
#define USDT__MAX_SECTION_SIZE \
	(16u << 20)		     /* .note.stapsdt, names, each
						 * symbol or string table */
#define USDT__MAX_SITES (128u << 10) /* stapsdt notes */
#define USDT__MAX_ARGS (1u << 20)    /* arguments, all sites: 8 a site */

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
 * the file is mapped on, and at an even offset (the kernel's rule).
 * *cleared: it is in that tail, which the loader clears when it maps the
 * file, after the kernel counted it for a probe attached before (see
 * struct usdt_probe). Returns 0, or -ENOENT / -EINVAL with *why.
 */
int usdt__elf_sema_to_off(const struct usdt__elf *ue, uint64_t vaddr,
			  uint64_t *off, bool *cleared, const char **why);

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

#endif /* __LIBUSDT_READER_ELFREAD_H */
