/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A small ELF64 writer for the note reader's tests: a well-formed file of
 * either byte order with two PT_LOAD segments, USDT notes, a symbol table,
 * a dynamic symbol table and GOT relocations, whose pieces the tests then
 * damage one at a time. The layout is fixed (see the ELFB_* offsets), so a
 * test knows which byte it breaks.
 */
#ifndef __LIBUSDT_ELF_BUILDER_H
#define __LIBUSDT_ELF_BUILDER_H

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define ELFB_MAX 16384

/* Fixed layout. */
#define ELFB_PHOFF 0x40
#define ELFB_TEXT_OFF 0x100	/* 0x80 bytes of code */
#define ELFB_BASE_OFF 0x180	/* .stapsdt.base, 1 byte */
#define ELFB_PROBES_OFF 0x200	/* .probes, 0x10 bytes */
#define ELFB_NOTE_OFF 0x240	/* .note.stapsdt */

#define ELFB_LOAD1_VA 0x400000	/* file 0 .. 0x200, R+X */
#define ELFB_LOAD2_VA 0x600000	/* file 0x200 .. 0x210 at 0x600200, R+W */
#define ELFB_TEXT_VA (ELFB_LOAD1_VA + ELFB_TEXT_OFF)
#define ELFB_BASE_VA (ELFB_LOAD1_VA + ELFB_BASE_OFF)
#define ELFB_PROBES_VA (ELFB_LOAD2_VA + ELFB_PROBES_OFF)
#define ELFB_GOT_VA 0x600300	/* GOT slots named by .rela.dyn */

/* Section indexes. */
enum {
	ELFB_SEC_NULL,
	ELFB_SEC_TEXT,
	ELFB_SEC_BASE,
	ELFB_SEC_PROBES,
	ELFB_SEC_NOTE,
	ELFB_SEC_SYMTAB,
	ELFB_SEC_STRTAB,
	ELFB_SEC_DYNSYM,
	ELFB_SEC_DYNSTR,
	ELFB_SEC_RELA,
	ELFB_SEC_SHSTRTAB,
	ELFB_SEC_CNT,
};

struct elfb {
	unsigned char buf[ELFB_MAX];
	size_t len;
	bool be;
	/* Filled by elfb_finish(). */
	size_t shoff;
	size_t sec_off[ELFB_SEC_CNT];
};

/* The notes of .note.stapsdt, in the file's byte order. */
struct elfb_notes {
	unsigned char buf[ELFB_MAX / 2];
	size_t len;
	bool be;
};

static inline void elfb_put(unsigned char *p, bool be, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[be ? n - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

static inline size_t elfb_align(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* A note with any header, to lie with: payload is name then descriptor,
 * written as given (the caller pads). */
static inline void elfb_note_raw(struct elfb_notes *n, uint32_t namesz,
				 uint32_t descsz, uint32_t type,
				 const void *payload, size_t payload_len)
{
	elfb_put(n->buf + n->len, n->be, namesz, 4);
	elfb_put(n->buf + n->len + 4, n->be, descsz, 4);
	elfb_put(n->buf + n->len + 8, n->be, type, 4);
	memcpy(n->buf + n->len + 12, payload, payload_len);
	n->len += 12 + payload_len;
}

/* A well-formed note with owner name and descriptor desc. */
static inline void elfb_note(struct elfb_notes *n, const char *owner,
			     uint32_t type, const void *desc, size_t descsz)
{
	size_t namesz = strlen(owner) + 1;
	unsigned char payload[2048] = { 0 };
	size_t dpos = elfb_align(namesz, 4);

	memcpy(payload, owner, namesz);
	memcpy(payload + dpos, desc, descsz);
	elfb_note_raw(n, (uint32_t)namesz, (uint32_t)descsz, type, payload,
		      dpos + elfb_align(descsz, 4));
}

/* The descriptor of a stapsdt note; returns its size. */
static inline size_t elfb_desc(unsigned char *d, bool be, uint64_t pc,
			       uint64_t base, uint64_t sema,
			       const char *provider, const char *name,
			       const char *args)
{
	size_t len = 24, l;

	elfb_put(d, be, pc, 8);
	elfb_put(d + 8, be, base, 8);
	elfb_put(d + 16, be, sema, 8);
	l = strlen(provider) + 1;
	memcpy(d + len, provider, l);
	len += l;
	l = strlen(name) + 1;
	memcpy(d + len, name, l);
	len += l;
	l = strlen(args) + 1;
	memcpy(d + len, args, l);
	return len + l;
}

static inline void elfb_probe(struct elfb_notes *n, uint64_t pc,
			      uint64_t base, uint64_t sema,
			      const char *provider, const char *name,
			      const char *args)
{
	unsigned char d[1024];
	size_t len = elfb_desc(d, n->be, pc, base, sema, provider, name, args);

	elfb_note(n, "stapsdt", 3, d, len);
}

static inline size_t elfb_append(struct elfb *e, const void *data, size_t len,
				 size_t align)
{
	size_t off = elfb_align(e->len, align);

	memset(e->buf + e->len, 0, off - e->len);
	memcpy(e->buf + off, data, len);
	e->len = off + len;
	return off;
}

static inline void elfb_sym(unsigned char *p, bool be, uint32_t name,
			    int bind, int type, uint16_t shndx, uint64_t value)
{
	elfb_put(p, be, name, 4);
	p[4] = (unsigned char)((bind << 4) | type);
	p[5] = 0;
	elfb_put(p + 6, be, shndx, 2);
	elfb_put(p + 8, be, value, 8);
	elfb_put(p + 16, be, 8, 8);
}

/*
 * Write the whole file: e_machine machine, e_type type, the given notes
 * in .note.stapsdt, and .stapsdt.base at ELFB_BASE_VA.
 */
static inline void elfb_build(struct elfb *e, bool be, uint16_t machine,
			      uint16_t type, const struct elfb_notes *notes)
{
	static const char strtab[] =
		"\0counter\0dup\0func\0tlsvar\0undef\0stdout@GLIBC_2.2.5";
	static const char dynstr[] = "\0ext_var\0counter";
	static const char shstrtab[] =
		"\0.text\0.stapsdt.base\0.probes\0.note.stapsdt\0.symtab"
		"\0.strtab\0.dynsym\0.dynstr\0.rela.dyn\0.shstrtab";
	/* Offsets of the names above. */
	enum { S_COUNTER = 1, S_DUP = 9, S_FUNC = 13, S_TLS = 18,
	       S_UNDEF = 25, S_STDOUT = 31 };
	enum { D_EXT = 1, D_COUNTER = 9 };
	static const uint32_t sh_names[ELFB_SEC_CNT] = {
		0, 1, 7, 21, 29, 43, 51, 59, 67, 75, 85,
	};
	unsigned char syms[9 * 24] = { 0 }, dsyms[3 * 24] = { 0 };
	unsigned char rela[3 * 24];
	unsigned char *sh, *p;
	size_t i;

	memset(e, 0, sizeof(*e));
	e->be = be;

	/* ELF header. */
	p = e->buf;
	memcpy(p, ELFMAG, SELFMAG);
	p[EI_CLASS] = ELFCLASS64;
	p[EI_DATA] = be ? ELFDATA2MSB : ELFDATA2LSB;
	p[EI_VERSION] = EV_CURRENT;
	elfb_put(p + 16, be, type, 2);
	elfb_put(p + 18, be, machine, 2);
	elfb_put(p + 20, be, EV_CURRENT, 4);
	elfb_put(p + 24, be, ELFB_TEXT_VA, 8);
	elfb_put(p + 32, be, ELFB_PHOFF, 8);
	elfb_put(p + 52, be, 64, 2);
	elfb_put(p + 54, be, 56, 2);
	elfb_put(p + 56, be, 2, 2);
	elfb_put(p + 58, be, 64, 2);
	elfb_put(p + 60, be, ELFB_SEC_CNT, 2);
	elfb_put(p + 62, be, ELFB_SEC_SHSTRTAB, 2);

	/* Two PT_LOADs: code and data. */
	p = e->buf + ELFB_PHOFF;
	elfb_put(p, be, PT_LOAD, 4);
	elfb_put(p + 4, be, PF_R | PF_X, 4);
	elfb_put(p + 8, be, 0, 8);
	elfb_put(p + 16, be, ELFB_LOAD1_VA, 8);
	elfb_put(p + 24, be, ELFB_LOAD1_VA, 8);
	elfb_put(p + 32, be, ELFB_PROBES_OFF, 8);
	elfb_put(p + 40, be, ELFB_PROBES_OFF, 8);
	elfb_put(p + 48, be, 0x1000, 8);
	p += 56;
	elfb_put(p, be, PT_LOAD, 4);
	elfb_put(p + 4, be, PF_R | PF_W, 4);
	elfb_put(p + 8, be, ELFB_PROBES_OFF, 8);
	elfb_put(p + 16, be, ELFB_PROBES_VA, 8);
	elfb_put(p + 24, be, ELFB_PROBES_VA, 8);
	elfb_put(p + 32, be, 0x10, 8);
	elfb_put(p + 40, be, 0x200, 8);
	elfb_put(p + 48, be, 0x1000, 8);

	/* Code (x86 nops), .stapsdt.base, .probes. */
	memset(e->buf + ELFB_TEXT_OFF, 0x90, 0x80);
	e->sec_off[ELFB_SEC_TEXT] = ELFB_TEXT_OFF;
	e->sec_off[ELFB_SEC_BASE] = ELFB_BASE_OFF;
	e->sec_off[ELFB_SEC_PROBES] = ELFB_PROBES_OFF;
	e->len = ELFB_NOTE_OFF;
	e->sec_off[ELFB_SEC_NOTE] = elfb_append(e, notes->buf, notes->len, 4);

	/* .symtab: locals first, as the gABI wants. */
	elfb_sym(syms + 1 * 24, be, S_DUP, STB_LOCAL, STT_OBJECT,
		 ELFB_SEC_PROBES, ELFB_PROBES_VA + 2);
	elfb_sym(syms + 2 * 24, be, S_DUP, STB_LOCAL, STT_OBJECT,
		 ELFB_SEC_PROBES, ELFB_PROBES_VA + 4);
	elfb_sym(syms + 3 * 24, be, 0, STB_LOCAL, STT_SECTION,
		 ELFB_SEC_TEXT, ELFB_TEXT_VA);
	elfb_sym(syms + 4 * 24, be, S_COUNTER, STB_GLOBAL, STT_OBJECT,
		 ELFB_SEC_PROBES, ELFB_PROBES_VA);
	elfb_sym(syms + 5 * 24, be, S_FUNC, STB_GLOBAL, STT_FUNC,
		 ELFB_SEC_TEXT, ELFB_TEXT_VA);
	elfb_sym(syms + 6 * 24, be, S_TLS, STB_GLOBAL, STT_TLS,
		 ELFB_SEC_PROBES, 0);
	elfb_sym(syms + 7 * 24, be, S_UNDEF, STB_GLOBAL, STT_NOTYPE,
		 SHN_UNDEF, 0);
	elfb_sym(syms + 8 * 24, be, S_STDOUT, STB_GLOBAL, STT_OBJECT,
		 ELFB_SEC_PROBES, ELFB_PROBES_VA + 8);
	e->sec_off[ELFB_SEC_SYMTAB] = elfb_append(e, syms, sizeof(syms), 8);
	e->sec_off[ELFB_SEC_STRTAB] = elfb_append(e, strtab, sizeof(strtab),
						  1);

	/* .dynsym: ext_var undefined (reached through the GOT), counter
	 * defined and also given a GOT slot. */
	elfb_sym(dsyms + 1 * 24, be, D_EXT, STB_GLOBAL, STT_OBJECT,
		 SHN_UNDEF, 0);
	elfb_sym(dsyms + 2 * 24, be, D_COUNTER, STB_GLOBAL, STT_OBJECT,
		 ELFB_SEC_PROBES, ELFB_PROBES_VA);
	e->sec_off[ELFB_SEC_DYNSYM] = elfb_append(e, dsyms, sizeof(dsyms), 8);
	e->sec_off[ELFB_SEC_DYNSTR] = elfb_append(e, dynstr, sizeof(dynstr),
						  1);

	/* .rela.dyn: GLOB_DAT for both, and a RELATIVE to be ignored. */
	elfb_put(rela, be, ELFB_GOT_VA, 8);
	elfb_put(rela + 8, be, (1ULL << 32) | 6, 8);
	elfb_put(rela + 16, be, 0, 8);
	elfb_put(rela + 24, be, ELFB_GOT_VA + 8, 8);
	elfb_put(rela + 32, be, (2ULL << 32) | 6, 8);
	elfb_put(rela + 40, be, 0, 8);
	elfb_put(rela + 48, be, ELFB_GOT_VA + 16, 8);
	elfb_put(rela + 56, be, 8, 8);
	elfb_put(rela + 64, be, 0x1234, 8);
	e->sec_off[ELFB_SEC_RELA] = elfb_append(e, rela, sizeof(rela), 8);
	e->sec_off[ELFB_SEC_SHSTRTAB] = elfb_append(e, shstrtab,
						    sizeof(shstrtab), 1);

	/* Section headers. */
	e->shoff = elfb_align(e->len, 8);
	memset(e->buf + e->len, 0, e->shoff - e->len);
	elfb_put(e->buf + 40, be, e->shoff, 8);
	sh = e->buf + e->shoff;
	memset(sh, 0, ELFB_SEC_CNT * 64);
	for (i = 1; i < ELFB_SEC_CNT; i++) {
		static const struct {
			uint32_t type;
			uint64_t flags, addr, align, entsize;
			uint32_t link, info;
		} s[ELFB_SEC_CNT] = {
			[ELFB_SEC_TEXT] = { SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
					    ELFB_TEXT_VA, 16, 0, 0, 0 },
			[ELFB_SEC_BASE] = { SHT_PROGBITS, SHF_ALLOC,
					    ELFB_BASE_VA, 1, 0, 0, 0 },
			[ELFB_SEC_PROBES] = { SHT_PROGBITS, SHF_ALLOC | SHF_WRITE,
					      ELFB_PROBES_VA, 2, 0, 0, 0 },
			[ELFB_SEC_NOTE] = { SHT_NOTE, 0, 0, 4, 0, 0, 0 },
			[ELFB_SEC_SYMTAB] = { SHT_SYMTAB, 0, 0, 8, 24,
					      ELFB_SEC_STRTAB, 4 },
			[ELFB_SEC_STRTAB] = { SHT_STRTAB, 0, 0, 1, 0, 0, 0 },
			[ELFB_SEC_DYNSYM] = { SHT_DYNSYM, SHF_ALLOC, 0, 8, 24,
					      ELFB_SEC_DYNSTR, 1 },
			[ELFB_SEC_DYNSTR] = { SHT_STRTAB, SHF_ALLOC, 0, 1, 0,
					      0, 0 },
			[ELFB_SEC_RELA] = { SHT_RELA, SHF_ALLOC, 0, 8, 24,
					    ELFB_SEC_DYNSYM, 0 },
			[ELFB_SEC_SHSTRTAB] = { SHT_STRTAB, 0, 0, 1, 0, 0, 0 },
		};
		static const size_t sizes[ELFB_SEC_CNT] = {
			[ELFB_SEC_TEXT] = 0x80,
			[ELFB_SEC_BASE] = 1,
			[ELFB_SEC_PROBES] = 0x10,
			[ELFB_SEC_SYMTAB] = 9 * 24,
			[ELFB_SEC_STRTAB] = sizeof(strtab),
			[ELFB_SEC_DYNSYM] = 3 * 24,
			[ELFB_SEC_DYNSTR] = sizeof(dynstr),
			[ELFB_SEC_RELA] = 3 * 24,
			[ELFB_SEC_SHSTRTAB] = sizeof(shstrtab),
		};
		unsigned char *h = sh + i * 64;
		size_t size = i == ELFB_SEC_NOTE ? notes->len : sizes[i];

		elfb_put(h, be, sh_names[i], 4);
		elfb_put(h + 4, be, s[i].type, 4);
		elfb_put(h + 8, be, s[i].flags, 8);
		elfb_put(h + 16, be, s[i].addr, 8);
		elfb_put(h + 24, be, e->sec_off[i], 8);
		elfb_put(h + 32, be, size, 8);
		elfb_put(h + 40, be, s[i].link, 4);
		elfb_put(h + 44, be, s[i].info, 4);
		elfb_put(h + 48, be, s[i].align, 8);
		elfb_put(h + 56, be, s[i].entsize, 8);
	}
	e->len = e->shoff + ELFB_SEC_CNT * 64;
}

/* Offset of field at byte off of section header i. */
static inline unsigned char *elfb_shdr(struct elfb *e, int i, size_t off)
{
	return e->buf + e->shoff + (size_t)i * 64 + off;
}

#endif /* __LIBUSDT_ELF_BUILDER_H */
