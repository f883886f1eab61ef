// SPDX-License-Identifier: BSD-2-Clause
/*
 * --ustack: the user stack of each hit, one frame a line, as
 * "function+0xOFF (file)". The BPF side sends the return addresses; here
 * each is placed in the process's maps (read again when an address is in
 * none known, by the library's parser) and looked up in its file's
 * function symbols (.symtab, else .dynsym), each file read once. Files come
 * from other users: a file is opened as the library opens a mapping's file
 * (usdt__open_mapping(): a regular file only, checked by device and inode),
 * and at most STACK_SYMS symbols of it are kept. C++ names print
 * demangled, by the system's libstdc++ where it has one (see demangler()).
 */
#include <dlfcn.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "usdt_tool.h"
#include "trace.h"

#define STACK_SYMS (1u << 21) /* function symbols kept per file */
#define STACK_MAPS 4096	      /* mappings kept per process */
/* The largest symbol or string section read (libelf reads a section
 * whole): 2^21 symbols' worth, so that a file with a huge one costs a
 * bounded allocation, and its addresses print as file offsets. */
#define STACK_SECT_MAX ((uint64_t)STACK_SYMS * sizeof(Elf64_Sym))

struct stack_sym {
	uint64_t start, size;
	char *name;
	bool demangled; /* name has been through sym_name() */
};

/* Mangled names up to this long are demangled (the demangler's work and
 * memory grow with its input, which other users' files choose); a
 * demangled name is cut to STACK_NAME_MAX bytes, "..." included. */
#define STACK_DEMANGLE_IN 1024
#define STACK_NAME_MAX 512

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len,
				 int *status);

/*
 * __cxa_demangle() of the system's libstdc++, loaded at the first C++
 * name from the system's library path, not linked: the tool does not
 * need a C++ runtime to run. NULL where there is none (names then print
 * mangled).
 */
static cxa_demangle_fn demangler(void)
{
	static cxa_demangle_fn fn;
	static bool tried;
	void *h;

	if (tried)
		return fn;
	tried = true;
	h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		fn = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
	return fn;
}

/* A symbol's name as it prints: demangled (once, kept) if it is a C++
 * one and the demangler takes it, else as the file has it. */
static const char *sym_name(struct stack_sym *sym)
{
	cxa_demangle_fn fn;
	int status = -1;
	char *out;

	if (sym->demangled)
		return sym->name;
	sym->demangled = true;
	if (strncmp(sym->name, "_Z", 2) ||
	    strlen(sym->name) > STACK_DEMANGLE_IN || !(fn = demangler()))
		return sym->name;
	out = fn(sym->name, NULL, NULL, &status);
	if (!out || status) {
		free(out);
		return sym->name;
	}
	if (strlen(out) >= STACK_NAME_MAX)
		memcpy(out + STACK_NAME_MAX - 4, "...", 4);
	free(sym->name);
	sym->name = out;
	return out;
}

struct stack_file {
	dev_t dev;
	ino_t ino;
	struct stack_sym *syms; /* by start */
	size_t cnt, cap;
	struct {
		uint64_t off, vaddr, filesz;
	} seg[16]; /* PT_LOAD */
	int seg_cnt;
};

/* A mapping with an inode; m.path is path, owned (without " (deleted)"). */
struct stack_map {
	struct usdt__mapping m;
	char *path;
};

struct stack_state {
	bool warned; /* an empty stack has been said */
	pid_t pid;
	struct stack_map *maps;
	size_t map_cnt;
	struct stack_file *files;
	size_t file_cnt;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct stack_sym *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* Is section i of elf one that read_syms() reads whole? */
static bool sect_fits(Elf *elf, size_t i)
{
	Elf_Scn *scn = elf_getscn(elf, i);
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && sh.sh_size <= STACK_SECT_MAX;
}

/* The function symbols of one symbol section; 0 or -ENOMEM. */
static int read_syms(Elf *elf, Elf_Scn *scn, struct stack_file *f)
{
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Sym sym;
	size_t i, n;
	void *v;

	if (!scn || !gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
	    !sect_fits(elf, elf_ndxscn(scn)) || !sect_fits(elf, sh.sh_link))
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data)
		return 0;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < n && f->cnt < STACK_SYMS; i++) {
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (f->cnt == f->cap) {
			size_t cap = f->cap ? f->cap * 2 : 256;

			v = realloc(f->syms, cap * sizeof(*f->syms));
			if (!v)
				return -ENOMEM;
			f->syms = v;
			f->cap = cap;
		}
		f->syms[f->cnt].start = sym.st_value;
		f->syms[f->cnt].size = sym.st_size;
		f->syms[f->cnt].demangled = false;
		f->syms[f->cnt].name = strdup(name);
		if (!f->syms[f->cnt].name)
			return -ENOMEM;
		f->cnt++;
	}
	return 0;
}

/* The loadable segments and function symbols of the ELF file at fd. Read
 * with read calls, not mapped: a file its owner truncates meanwhile gives
 * short reads, not SIGBUS. */
static void read_elf(int fd, struct stack_file *f)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL, *dyn = NULL, *tab = NULL;
	size_t i, phnum;
	GElf_Phdr ph;
	GElf_Shdr sh;

	if (!elf)
		return;
	for (i = 0; !elf_getphdrnum(elf, &phnum) && i < phnum; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    f->seg_cnt < 16) {
			f->seg[f->seg_cnt].off = ph.p_offset;
			f->seg[f->seg_cnt].vaddr = ph.p_vaddr;
			f->seg[f->seg_cnt++].filesz = ph.p_filesz;
		}
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			tab = scn;
		else if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			dyn = scn;
	if (read_syms(elf, tab ? tab : dyn, f) == 0 && f->cnt)
		qsort(f->syms, f->cnt, sizeof(*f->syms), sym_cmp);
	elf_end(elf);
}

/* The file of mapping m, read once (by device and inode). */
static struct stack_file *file_of(struct stack_state *st,
				  const struct usdt__mapping *m)
{
	char path[PATH_MAX + 64];
	struct stack_file *f;
	size_t i;
	int fd;

	for (i = 0; i < st->file_cnt; i++)
		if (st->files[i].dev == m->dev && st->files[i].ino == m->ino)
			return &st->files[i];
	f = realloc(st->files, (st->file_cnt + 1) * sizeof(*f));
	if (!f)
		return NULL;
	st->files = f;
	f = &st->files[st->file_cnt++];
	memset(f, 0, sizeof(*f));
	f->dev = m->dev;
	f->ino = m->ino;
	fd = usdt__open_mapping(st->pid, m, path, sizeof(path));
	if (fd >= 0) {
		read_elf(fd, f);
		close(fd);
	}
	return f;
}

static void maps_clear(struct stack_state *st)
{
	size_t i;

	for (i = 0; i < st->map_cnt; i++)
		free(st->maps[i].path);
	free(st->maps);
	st->maps = NULL;
	st->map_cnt = 0;
}

/* Read pid's mappings with an inode (files, and names such as
 * "anon_inode:[...]" that are no path) again; those known of pid stay
 * when it has gone (its last hits print after its exit). */
static void maps_read(struct stack_state *st, pid_t pid)
{
	struct usdt__mapping m;
	char *line = NULL;
	size_t cap = 0;
	FILE *mf = usdt__maps_open(pid);

	if (!mf && st->pid == pid)
		return;
	maps_clear(st);
	st->pid = pid;
	while (mf && st->map_cnt < STACK_MAPS &&
	       usdt__maps_next_any(mf, &line, &cap, &m) > 0) {
		struct stack_map *v;

		if (!m.ino)
			continue;
		v = realloc(st->maps, (st->map_cnt + 1) * sizeof(*v));
		if (!v)
			break;
		st->maps = v;
		v = &st->maps[st->map_cnt];
		v->m = m;
		v->path = strdup(m.path);
		v->m.path = v->path;
		if (v->path)
			st->map_cnt++;
	}
	free(line);
	if (mf)
		fclose(mf);
}

static const struct usdt__mapping *map_at(struct stack_state *st, pid_t pid,
					  uint64_t addr)
{
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass || st->pid != pid)
			maps_read(st, pid);
		for (i = 0; i < st->map_cnt; i++)
			if (addr >= st->maps[i].m.start &&
			    addr < st->maps[i].m.end)
				return &st->maps[i].m;
	}
	return NULL;
}

/* The function of file f that holds file offset off, and the offset in
 * it; NULL if none. */
static struct stack_sym *sym_at(struct stack_file *f, uint64_t off,
				uint64_t *in)
{
	uint64_t vaddr = 0;
	size_t lo = 0, hi = f->cnt;
	int i;

	for (i = 0; i < f->seg_cnt; i++)
		if (off >= f->seg[i].off &&
		    off < f->seg[i].off + f->seg[i].filesz)
			break;
	if (i == f->seg_cnt)
		return NULL;
	vaddr = off - f->seg[i].off + f->seg[i].vaddr;
	while (lo < hi) { /* the last symbol starting at or below */
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || (f->syms[lo - 1].size &&
		    vaddr >= f->syms[lo - 1].start + f->syms[lo - 1].size))
		return NULL;
	*in = vaddr - f->syms[lo - 1].start;
	return &f->syms[lo - 1];
}

/* One frame, as text ("    name+0x1f (path)") or a JSON string. */
static void print_frame(struct stack_state *st, pid_t pid, uint64_t addr,
			bool json, bool first)
{
	const struct usdt__mapping *m = map_at(st, pid, addr);
	struct stack_file *f = m ? file_of(st, m) : NULL;
	uint64_t in = 0, off = m ? addr - m->start + m->off : 0;
	struct stack_sym *sym = f ? sym_at(f, off, &in) : NULL;
	const char *name = sym ? sym_name(sym) : NULL;
	const char *del = m && m->deleted ? " (deleted)" : "";
	char buf[STACK_NAME_MAX + PATH_MAX + 64];

	/* The file as maps shows it, " (deleted)" and all. */
	if (name)
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64 " (%s%s)", name, in,
			 m->path, del);
	else if (m)
		snprintf(buf, sizeof(buf), "0x%" PRIx64 " (%s%s+0x%" PRIx64 ")",
			 addr, m->path, del, off);
	else
		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
	if (json) {
		fputs(first ? "" : ", ", stdout);
		json_str(stdout, buf);
		return;
	}
	fputs("    ", stdout);
	print_escaped(stdout, buf, strlen(buf));
	fputc('\n', stdout);
}

void stack_print(struct trace_ctx *ctx, const struct usdt_hit *e, size_t len)
{
	const unsigned char *p =
		(const unsigned char *)(e + 1) + TRACE_STR_AREA;
	size_t n = e->stack_len / 8, i;
	uint64_t addr;

	if (!ctx->stacks) {
		ctx->stacks = calloc(1, sizeof(*ctx->stacks));
		if (!ctx->stacks)
			return;
		elf_version(EV_CURRENT);
	}
	if (sizeof(*e) + TRACE_STR_AREA + e->stack_len > len)
		n = 0; /* not all sent: nothing to trust */
	if (!e->stack_len && !ctx->stacks->warned) {
		ctx->stacks->warned = true;
		fprintf(stderr,
			"%s: trace: warning: the kernel gives no user stack for these hits (on s390x it unwinds none for BPF)\n",
			tool_name);
	}
	if (ctx->json)
		fputs(", \"ustack\": [", stdout);
	for (i = 0; i < n; i++) {
		memcpy(&addr, p + i * 8, 8);
		print_frame(ctx->stacks, (pid_t)e->pid, addr, ctx->json, !i);
	}
	if (ctx->json)
		fputs("]", stdout);
}

void stack_free(struct stack_state *st)
{
	size_t i, j;

	if (!st)
		return;
	maps_clear(st);
	for (i = 0; i < st->file_cnt; i++) {
		for (j = 0; j < st->files[i].cnt; j++)
			free(st->files[i].syms[j].name);
		free(st->files[i].syms);
	}
	free(st->files);
	free(st);
}
