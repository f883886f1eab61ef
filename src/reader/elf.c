// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the note reader needs from an ELF file, on top of libelf: header
 * checks, sections by name, the mapping of link-time addresses to file
 * offsets through PT_LOAD segments, and the symbol table.
 *
 * libelf (gelf) converts headers, symbols and relocations from the file's
 * byte order and checks that each section's data lies inside the file, so
 * a file of any byte order and machine reads the same on any host. The
 * note section is read raw (src/reader/notes.c walks it itself), so the byte
 * order helpers below serve it.
 */
#include <byteswap.h>
#include <endian.h>

#include "reader/elfread.h"
#include "reader/symtab.h"

/* Dynamic relocations that fill a GOT slot with a symbol's address. */
#ifndef R_X86_64_GLOB_DAT
#define R_X86_64_GLOB_DAT 6
#endif

uint32_t usdt__elf_rd32(const struct usdt__elf *ue, const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return ue->big_endian ? be32toh(v) : le32toh(v);
}

uint64_t usdt__elf_rd64(const struct usdt__elf *ue, const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return ue->big_endian ? be64toh(v) : le64toh(v);
}

bool usdt__elf_section_fits(const struct usdt__elf *ue, const GElf_Shdr *shdr,
			    uint64_t cap, const char *what)
{
	if (shdr->sh_type == SHT_NOBITS || shdr->sh_size <= cap)
		return true;
	pr_warn("%s: %s is %llu bytes, more than the %llu this library reads\n",
		ue->path, what, (unsigned long long)shdr->sh_size,
		(unsigned long long)cap);
	return false;
}

/*
 * The section header table and its names: inside the file, within the
 * limits, and readable. Returns 0, -ENOEXEC or -EFBIG (logged).
 */
static int check_sections(struct usdt__elf *ue, const GElf_Ehdr *ehdr)
{
	size_t shnum, file_size = ue->file_size;
	const char *path = ue->path;
	Elf *elf = ue->elf;
	GElf_Shdr shdr;

	/* A file whose section headers are gone (sstrip) still opens: its
	 * USDT notes, being in a non-allocated section, are gone too.
	 * libelf quietly counts no sections when their table lies outside
	 * the file; check it here, so that a damaged file is an error, not
	 * a file without notes. */
	if (elf_getshdrnum(elf, &shnum) || (ehdr->e_shoff && !shnum) ||
	    (!ehdr->e_shoff && ehdr->e_shnum) ||
	    (shnum &&
	     (ehdr->e_shoff > file_size ||
	      shnum > (file_size - ehdr->e_shoff) / sizeof(Elf64_Shdr)))) {
		pr_warn("%s: damaged section headers\n", path);
		return -ENOEXEC;
	}
	/* libelf reads the whole table at the first look at a section. */
	if (shnum > USDT__MAX_SECTIONS) {
		pr_warn("%s: %zu sections, more than the %u this library reads\n",
			path, shnum, USDT__MAX_SECTIONS);
		return -EFBIG;
	}
	if (shnum &&
	    (elf_getshdrstrndx(elf, &ue->shstrndx) || ue->shstrndx >= shnum)) {
		pr_warn("%s: damaged section header string table index\n",
			path);
		return -ENOEXEC;
	}
	/* Section names are read through the whole string table. */
	if (!ue->shstrndx)
		return 0;
	if (!gelf_getshdr(elf_getscn(elf, ue->shstrndx), &shdr)) {
		pr_warn("%s: cannot read the section name table's header\n",
			path);
		return -ENOEXEC;
	}
	if (!usdt__elf_section_fits(ue, &shdr, USDT__MAX_SECTION_SIZE,
				    "the section name table"))
		return -EFBIG;
	return 0;
}

/* The ELF identification and header: a 64-bit executable or shared
 * library of either byte order, with tables libelf reads as described. */
static int check_header(struct usdt__elf *ue, GElf_Ehdr *ehdr)
{
	const char *path = ue->path, *ident;

	if (elf_kind(ue->elf) != ELF_K_ELF) {
		pr_warn("%s: not an ELF file\n", path);
		return -ENOEXEC;
	}
	ident = elf_getident(ue->elf, NULL);
	if (!ident || ident[EI_CLASS] != ELFCLASS64) {
		pr_warn("%s: not a 64-bit ELF file\n", path);
		return -ENOEXEC;
	}
	if (ident[EI_DATA] != ELFDATA2LSB && ident[EI_DATA] != ELFDATA2MSB) {
		pr_warn("%s: unknown ELF byte order %d\n", path,
			ident[EI_DATA]);
		return -ENOEXEC;
	}
	if (!gelf_getehdr(ue->elf, ehdr)) {
		pr_warn("%s: cannot read the ELF header: %s\n", path,
			elf_errmsg(-1));
		return -ENOEXEC;
	}
	if (ehdr->e_type != ET_EXEC && ehdr->e_type != ET_DYN) {
		pr_warn("%s: ELF type %u is neither an executable nor a shared library\n",
			path, ehdr->e_type);
		return -ENOEXEC;
	}
	/* libelf reads the tables with its own entry size whatever the
	 * header says; a header that disagrees describes some other file. */
	if ((ehdr->e_shoff && ehdr->e_shentsize != sizeof(Elf64_Shdr)) ||
	    (ehdr->e_phoff && ehdr->e_phentsize != sizeof(Elf64_Phdr))) {
		pr_warn("%s: unexpected ELF header table entry sizes\n", path);
		return -ENOEXEC;
	}
	ue->e_machine = ehdr->e_machine;
	ue->e_type = ehdr->e_type;
	ue->big_endian = ident[EI_DATA] == ELFDATA2MSB;
	return 0;
}

/* Keep the PT_LOAD segments whose file image is in the file. */
static int read_loads(struct usdt__elf *ue, const GElf_Ehdr *ehdr)
{
	size_t phnum, i, file_size = ue->file_size;
	GElf_Phdr phdr;

	if (elf_getphdrnum(ue->elf, &phnum) || phnum > USDT__MAX_SECTIONS ||
	    (phnum &&
	     (ehdr->e_phoff > file_size ||
	      phnum > (file_size - ehdr->e_phoff) / sizeof(Elf64_Phdr)))) {
		pr_warn("%s: damaged program headers\n", ue->path);
		return -ENOEXEC;
	}
	if (phnum) {
		ue->loads = calloc(phnum, sizeof(*ue->loads));
		if (!ue->loads)
			return -ENOMEM;
	}
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(ue->elf, (int)i, &phdr)) {
			pr_warn("%s: cannot read program header %zu: %s\n",
				ue->path, i, elf_errmsg(-1));
			return -ENOEXEC;
		}
		if (phdr.p_type != PT_LOAD)
			continue;
		/* A segment whose file image is not all in the file cannot
		 * give offsets; its probes will say so. */
		if (phdr.p_offset > file_size ||
		    phdr.p_filesz > file_size - phdr.p_offset) {
			pr_warn("%s: PT_LOAD %zu lies past the end of the file\n",
				ue->path, i);
			continue;
		}
		ue->loads[ue->load_cnt++] = phdr;
	}
	return 0;
}

int usdt__elf_begin(struct usdt__elf *ue, Elf *elf, const char *path,
		    size_t file_size)
{
	GElf_Ehdr ehdr;
	int err;

	memset(ue, 0, sizeof(*ue));
	ue->elf = elf;
	ue->path = path;
	ue->file_size = file_size;

	err = check_header(ue, &ehdr);
	if (!err)
		err = check_sections(ue, &ehdr);
	if (!err)
		err = read_loads(ue, &ehdr);
	if (err)
		usdt__elf_end(ue);
	return err;
}

void usdt__elf_end(struct usdt__elf *ue)
{
	free(ue->loads);
	ue->loads = NULL;
	ue->load_cnt = 0;
}

int usdt__elf_find_section(const struct usdt__elf *ue, const char *name,
			   uint32_t type, GElf_Shdr *shdr, Elf_Scn **scn_out)
{
	Elf_Scn *scn = NULL;
	const char *s;

	if (!ue->shstrndx)
		return -ENOENT;
	while ((scn = elf_nextscn(ue->elf, scn))) {
		if (!gelf_getshdr(scn, shdr))
			continue;
		if (type != SHT_NULL && shdr->sh_type != type)
			continue;
		s = elf_strptr(ue->elf, ue->shstrndx, shdr->sh_name);
		if (s && !strcmp(s, name)) {
			if (scn_out)
				*scn_out = scn;
			return 0;
		}
	}
	return -ENOENT;
}

int usdt__elf_vaddr_to_off(const struct usdt__elf *ue, uint64_t vaddr,
			   uint64_t *off)
{
	size_t i;

	for (i = 0; i < ue->load_cnt; i++) {
		const GElf_Phdr *ph = &ue->loads[i];

		/* Written to not overflow near the top of the address space. */
		if (vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr < ph->p_filesz) {
			*off = ph->p_offset + (vaddr - ph->p_vaddr);
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * The smallest page size of the architectures this library reads: the
 * file-backed part of a segment's mapping reaches at least this far.
 */
#define MIN_PAGE 4096u

int usdt__elf_sema_to_off(const struct usdt__elf *ue, uint64_t vaddr,
			  uint64_t *off, bool *cleared, const char **why)
{
	const uint64_t sz = sizeof(unsigned short);
	size_t i;

	*why = "semaphore not in any writable loadable segment";
	for (i = 0; i < ue->load_cnt; i++) {
		const GElf_Phdr *ph = &ue->loads[i];
		uint64_t rel = vaddr - ph->p_vaddr, file_end;

		/* The kernel counts only in a writable private mapping
		 * (valid_ref_ctr_vma()). */
		if (!(ph->p_flags & PF_W) || vaddr < ph->p_vaddr ||
		    ph->p_memsz < sz || rel > ph->p_memsz - sz)
			continue;
		/*
		 * The kernel maps ref_ctr_offset to an address through a
		 * vma of this file (vm_pgoff), as it does the probe's
		 * offset; the loaders map the file's pages up to the page
		 * holding the segment's last file byte, the zero-filled
		 * tail (.bss) past it anonymously. So a semaphore past
		 * p_filesz but in that last page works; one further out
		 * lies in an anonymous vma, which the kernel never finds
		 * (valid_ref_ctr_vma() wants vma->vm_file), and the probe
		 * would never be enabled. Counted at the smallest page.
		 */
		file_end = ph->p_filesz +
			   (-(ph->p_vaddr + ph->p_filesz) & (MIN_PAGE - 1));
		if (rel > file_end || file_end - rel < sz) {
			*why = "semaphore in the zero-filled pages past its segment's file image, which the kernel cannot count";
			return -EINVAL;
		}
		if (rel > UINT64_MAX - ph->p_offset)
			continue;
		/* The kernel refuses an odd one with EINVAL, which would
		 * read as a clash with another uprobe (uprobe_register():
		 * IS_ALIGNED(ref_ctr_offset, sizeof(short)), so that the
		 * counter never straddles a page). */
		if ((ph->p_offset + rel) & (sz - 1)) {
			*why = "semaphore at an odd file offset: the kernel counts only a 2-byte aligned one (ref_ctr_offset)";
			return -EINVAL;
		}
		*off = ph->p_offset + rel;
		/*
		 * Past p_filesz, in that last page: the loaders clear the
		 * page's tail from p_vaddr + p_filesz on (binfmt_elf's
		 * padzero(), ld.so's memset of the zero page) after the
		 * mmap, where the kernel counted the semaphore of a probe
		 * already attached (uprobe_mmap()). Any byte of the two.
		 */
		*cleared = rel + sz > ph->p_filesz;
		return 0;
	}
	return -ENOENT;
}

/*
 * Add name, and for a versioned name ("stdout@GLIBC_2.2.5", as .symtab
 * spells copy-relocated symbols) its bare name too, which is what an
 * operand says.
 */
static int add_sym(struct usdt__symtab *st, const char *name, uint64_t addr,
		   uint64_t got_slot)
{
	const char *at = strchr(name, '@');
	char bare[256];
	int err;

	err = usdt__symtab_add(st, name, addr, got_slot);
	if (err || !at || at == name || (size_t)(at - name) >= sizeof(bare))
		return err;
	memcpy(bare, name, (size_t)(at - name));
	bare[at - name] = '\0';
	return usdt__symtab_add(st, bare, addr, got_slot);
}

/*
 * Are a symbol table and its string table both within the limit? One too
 * big is skipped: only arguments that name a symbol need it.
 */
static bool symbols_fit(const struct usdt__elf *ue, const GElf_Shdr *shdr)
{
	GElf_Shdr str;

	if (!usdt__elf_section_fits(ue, shdr, USDT__MAX_SECTION_SIZE,
				    "a symbol or relocation table"))
		return false;
	return gelf_getshdr(elf_getscn(ue->elf, shdr->sh_link), &str) &&
	       usdt__elf_section_fits(ue, &str, USDT__MAX_SECTION_SIZE,
				      "a symbol table");
}

/*
 * Where code is, for reading the instructions before a call site: a
 * function's bounds, or a "$d" mapping symbol ("$d" or "$d.N", arm64 and
 * riscv), which marks data placed among instructions.
 */
static int add_code_range(struct usdt__symtab *st, const GElf_Sym *sym,
			  const char *name)
{
	if (GELF_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_shndx != SHN_ABS)
		return usdt__symtab_add_func(st, sym->st_value, sym->st_size);
	if (name[0] == '$' && name[1] == 'd' && (!name[2] || name[2] == '.'))
		return usdt__symtab_add_data_mark(st, sym->st_value);
	return 0;
}

/* The defined data and code symbols of one symbol table section. */
static int add_defined(const struct usdt__elf *ue, Elf_Scn *scn,
		       const GElf_Shdr *shdr, struct usdt__symtab *st)
{
	Elf_Data *data;
	size_t i, cnt;
	GElf_Sym sym;
	const char *name;
	int type, err;

	if (!symbols_fit(ue, shdr))
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data || shdr->sh_entsize != sizeof(Elf64_Sym)) {
		pr_warn("%s: unreadable symbol table: %s\n", ue->path,
			data ? "bad entry size" : elf_errmsg(-1));
		return 0;
	}
	cnt = data->d_size / sizeof(Elf64_Sym);
	if (cnt > INT32_MAX)
		cnt = INT32_MAX;
	for (i = 1; i < cnt; i++) {
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		/* Undefined symbols have no address here, TLS symbols an
		 * offset in a block, section and file symbols no name an
		 * operand could use. */
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_COMMON ||
		    type == STT_TLS || type == STT_SECTION || type == STT_FILE)
			continue;
		name = elf_strptr(ue->elf, shdr->sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		err = add_sym(st, name, sym.st_value, 0);
		if (!err)
			err = add_code_range(st, &sym, name);
		if (err)
			return err;
		/* Objects' sizes decide what s390x's bare "8@sym" is. */
		if (type == STT_OBJECT)
			usdt__symtab_set_obj_size(st, name, sym.st_size);
	}
	return 0;
}

/*
 * The GOT slots of symbols reached as sym@GOTPCREL(%rip): the r_offset of
 * each R_X86_64_GLOB_DAT dynamic relocation, named through the symbol
 * table the relocation section links to (.dynsym).
 */
static int add_got_slots(const struct usdt__elf *ue, struct usdt__symtab *st)
{
	Elf_Scn *scn = NULL, *sym_scn;
	Elf_Data *data, *syms;
	GElf_Shdr shdr, sym_shdr;
	GElf_Rela rela;
	GElf_Sym sym;
	const char *name;
	uint64_t budget = USDT__MAX_SECTION_SIZE;
	uint32_t link = 0;
	size_t i, cnt;
	int err;

	if (ue->e_machine != EM_X86_64 || !ue->shstrndx)
		return 0;
	while ((scn = elf_nextscn(ue->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA ||
		    !(shdr.sh_flags & SHF_ALLOC) ||
		    shdr.sh_entsize != sizeof(Elf64_Rela))
			continue;
		sym_scn = elf_getscn(ue->elf, shdr.sh_link);
		if (!sym_scn || !gelf_getshdr(sym_scn, &sym_shdr) ||
		    (sym_shdr.sh_type != SHT_DYNSYM &&
		     sym_shdr.sh_type != SHT_SYMTAB) ||
		    !usdt__elf_section_fits(ue, &shdr, budget,
					    "the relocation tables") ||
		    !symbols_fit(ue, &sym_shdr))
			continue;
		/* One limit for all of them (a file may have many), and one
		 * symbol table: .dynsym, which real ones all name. */
		if (link && shdr.sh_link != link)
			continue;
		link = shdr.sh_link;
		budget -= shdr.sh_size;
		data = elf_getdata(scn, NULL);
		syms = elf_getdata(sym_scn, NULL);
		if (!data || !syms)
			continue;
		cnt = data->d_size / sizeof(Elf64_Rela);
		if (cnt > INT32_MAX)
			cnt = INT32_MAX;
		for (i = 0; i < cnt; i++) {
			if (!gelf_getrela(data, (int)i, &rela))
				break;
			if (GELF_R_TYPE(rela.r_info) != R_X86_64_GLOB_DAT ||
			    !rela.r_offset)
				continue;
			if (!gelf_getsym(syms, (int)GELF_R_SYM(rela.r_info),
					 &sym))
				continue;
			name = elf_strptr(ue->elf, sym_shdr.sh_link,
					  sym.st_name);
			if (!name || !name[0])
				continue;
			err = add_sym(st, name, 0, rela.r_offset);
			if (err)
				return err;
		}
	}
	return 0;
}

int usdt__elf_symtab(const struct usdt__elf *ue, struct usdt__symtab **out)
{
	struct usdt__symtab *st;
	GElf_Shdr shdr;
	Elf_Scn *scn;
	int err;

	*out = NULL;
	if (!ue->shstrndx)
		return 0;
	st = usdt__symtab_new();
	if (!st)
		return -ENOMEM;
	if (!usdt__elf_find_section(ue, ".symtab", SHT_SYMTAB, &shdr, &scn) ||
	    !usdt__elf_find_section(ue, ".dynsym", SHT_DYNSYM, &shdr, &scn)) {
		err = add_defined(ue, scn, &shdr, st);
		if (err)
			goto err_out;
	}
	err = add_got_slots(ue, st);
	if (err)
		goto err_out;
	*out = st;
	return 0;

err_out:
	usdt__symtab_free(st);
	return err;
}
