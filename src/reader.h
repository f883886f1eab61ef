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
	GElf_Phdr *loads;	/* the PT_LOAD program headers */
	size_t load_cnt;
};

/*
 * Check that elf is a 64-bit executable or shared library of either byte
 * order, and read its loadable segments. Returns 0 or -ENOEXEC (logged).
 */
int usdt__elf_begin(struct usdt__elf *ue, Elf *elf, const char *path);
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
 * reader proper, src/note.c). Returns 0 or a negative errno.
 */
int usdt__file_read(Elf *elf, const char *path, struct usdt_file **out);

#endif /* __LIBUSDT_READER_H */
