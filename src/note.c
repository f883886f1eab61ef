// SPDX-License-Identifier: BSD-2-Clause
/*
 * The note reader: the USDT call sites of an ELF file, and the public
 * usdt_file__* / usdt_probe__* getters.
 *
 * Every <sys/sdt.h> call site leaves one ELF note in the non-allocated
 * section .note.stapsdt: owner "stapsdt", type 3, and a descriptor of
 *
 *	pc, base, semaphore	three addresses of the ELF class's size, in
 *				the file's byte order
 *	provider\0 name\0 args\0
 *
 * pc is the link-time address of the nop the probe sits on, semaphore the
 * link-time address of the probe's counter (0 for none), and base the
 * link-time address of the section .stapsdt.base as the assembler saw it.
 * prelink moves sections after the notes were written; the difference
 * between .stapsdt.base's address now and base is how far, and applies to
 * pc and semaphore alike.
 *
 * The file is untrusted. Each note header is checked against the section
 * before its name or descriptor is touched; each string must end inside
 * the descriptor. A bad note becomes a probe with a negative status, and
 * the walk goes on to the next note whenever the header still says where
 * that is.
 *
 * Reading goes in two passes: the first walks the notes and records where
 * each string is, the second copies all strings into one allocation (the
 * file's storage) and parses the arguments. Per probe the storage holds
 *
 *	provider\0 name\0 args\0 arg0\0 arg1\0 ...
 *
 * the last part being each argument's text on its own, which
 * usdt_probe__arg() hands out. The arguments' texts are disjoint pieces of
 * args separated by at least one space, so they fit in strlen(args) + 1
 * bytes.
 */
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader.h"

#define STAPSDT_NOTE_TYPE 3
#define STAPSDT_OWNER "stapsdt"

/* One note's descriptor, decoded (parse_desc()). Strings point into the
 * note section's data and are NUL-terminated there (or are ""). */
struct raw_site {
	const char *provider, *name, *args;
	size_t provider_len, name_len, args_len;
	uint64_t pc, base, sema;
	int status;
	const char *error;
};

/*
 * What the first pass keeps of one note: where its descriptor is in the
 * section (decoded again when the probe is built), or why there is none
 * (error). 16 bytes, not a raw_site's 88: for a file of 10,000 sites this
 * list is most of the parse's peak memory.
 */
struct raw_note {
	const char *error;	/* NULL: the descriptor is at desc_off */
	uint32_t desc_off, desc_sz;
};

struct raw_sites {
	struct raw_note *v;
	size_t cnt, cap;
	/* The probes' strings need str_total bytes, and twice args_total
	 * more for the argument strings of a file that is not compact. */
	size_t str_total, args_total;
};

static struct raw_note *raw_push(struct raw_sites *rs)
{
	struct raw_note *v, *s;
	size_t cap;

	if (rs->cnt == rs->cap) {
		cap = rs->cap ? rs->cap * 2 : 16;
		v = usdt__reallocarray(rs->v, cap, sizeof(*v));
		if (!v)
			return NULL;
		rs->v = v;
		rs->cap = cap;
	}
	s = &rs->v[rs->cnt++];
	memset(s, 0, sizeof(*s));
	return s;
}

static void raw_bad(struct raw_site *s, const char *why)
{
	s->status = -EINVAL;
	s->error = why;
}

static bool all_zero(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Take the NUL-terminated string at *p (inside [*p, end)) and advance. */
static bool take_str(const char **p, const char *end, const char **str,
		     size_t *len)
{
	const char *nul = memchr(*p, '\0', (size_t)(end - *p));

	if (!nul)
		return false;
	*str = *p;
	*len = (size_t)(nul - *p);
	*p = nul + 1;
	return true;
}

static void parse_desc(const struct usdt__elf *ue, const char *desc,
		       size_t descsz, struct raw_site *s)
{
	const char *p = desc + 24, *end = desc + descsz;

	memset(s, 0, sizeof(*s));
	s->provider = s->name = s->args = "";
	if (descsz < 24) {
		raw_bad(s, "note descriptor too small for 3 addresses");
		return;
	}
	s->pc = usdt__elf_rd64(ue, desc);
	s->base = usdt__elf_rd64(ue, desc + 8);
	s->sema = usdt__elf_rd64(ue, desc + 16);
	if (!take_str(&p, end, &s->provider, &s->provider_len)) {
		raw_bad(s, "provider is not NUL-terminated");
		return;
	}
	if (!take_str(&p, end, &s->name, &s->name_len)) {
		s->provider = "";
		s->provider_len = 0;
		raw_bad(s, "name is not NUL-terminated");
		return;
	}
	/* A note may end without an argument string at all. */
	if (p < end && !take_str(&p, end, &s->args, &s->args_len)) {
		raw_bad(s, "argument string is not NUL-terminated");
		return;
	}
	if (!s->provider_len || !s->name_len)
		raw_bad(s, "empty provider or name");
}

/*
 * Walk the notes of .note.stapsdt (data[0..size), aligned to align) and
 * record every stapsdt note. Returns 0 or -ENOMEM.
 */
/* A note damaged beyond its descriptor: a site with no strings. */
static int note_bad(struct raw_sites *rs, const char *why)
{
	struct raw_note *n = raw_push(rs);

	if (!n)
		return -ENOMEM;
	n->error = why;
	rs->str_total += 4;
	return 0;
}

/* A stapsdt note: checked now (and said if bad), decoded again later. */
static int note_add(const struct usdt__elf *ue, const char *data,
		    size_t desc_off, size_t descsz, size_t off,
		    struct raw_sites *rs)
{
	struct raw_note *n;
	struct raw_site s;

	if (rs->cnt >= USDT__MAX_SITES) {
		pr_warn("%s: more than %u USDT call sites\n", ue->path,
			USDT__MAX_SITES);
		return -E2BIG;
	}
	n = raw_push(rs);
	if (!n)
		return -ENOMEM;
	n->desc_off = (uint32_t)desc_off;
	n->desc_sz = (uint32_t)descsz;
	parse_desc(ue, data + desc_off, descsz, &s);
	if (s.status)
		pr_warn("%s: bad note at offset %zu of .note.stapsdt: %s\n",
			ue->path, off, s.error);
	rs->str_total += s.provider_len + s.name_len + 4;
	rs->args_total += s.args_len;
	return 0;
}

static int walk_notes(const struct usdt__elf *ue, const char *data,
		      size_t size, size_t align, struct raw_sites *rs)
{
	size_t off = 0, namesz, descsz, name_off, desc_off;
	uint32_t type;
	int err;

	while (off < size) {
		if (size - off < 12) {
			/* Padding is zeros; anything else is damage. */
			if (all_zero(data + off, size - off))
				break;
			return note_bad(rs, "truncated note header");
		}
		namesz = usdt__elf_rd32(ue, data + off);
		descsz = usdt__elf_rd32(ue, data + off + 4);
		type = usdt__elf_rd32(ue, data + off + 8);
		name_off = off + 12;
		/* An empty header is padding: nothing real follows it. */
		if (!namesz && !descsz && !type)
			break;

		/* The header's sizes must keep name and descriptor inside
		 * the section; otherwise the next note cannot be found. */
		if (namesz > size - name_off ||
		    (desc_off = name_off + ((namesz + align - 1) & ~(align - 1)),
		     desc_off > size) ||
		    descsz > size - desc_off) {
			pr_warn("%s: note at offset %zu of .note.stapsdt runs past the section's end; ignoring the rest\n",
				ue->path, off);
			return note_bad(rs,
					"note runs past the end of .note.stapsdt");
		}

		if (type == STAPSDT_NOTE_TYPE &&
		    namesz == sizeof(STAPSDT_OWNER) &&
		    !memcmp(data + name_off, STAPSDT_OWNER,
			    sizeof(STAPSDT_OWNER))) {
			err = note_add(ue, data, desc_off, descsz, off, rs);
			if (err)
				return err;
		} else {
			pr_debug("%s: skipping a note of type %u at offset %zu of .note.stapsdt\n",
				 ue->path, type, off);
		}

		/* The last note may lack its padding. */
		off = desc_off + descsz;
		off = off + (align - 1) > size ? size :
						 (off + align - 1) & ~(align - 1);
	}
	return 0;
}

/*
 * The symbol table, built when an argument first names a symbol: reading
 * .symtab and its strings is most of the memory a big unstripped binary
 * costs, and most files' arguments are registers and memory only.
 */
struct lazy_symtab {
	const struct usdt__elf *ue;
	struct usdt__symtab *st;
	bool tried;
	int err;		/* -ENOMEM fails the file */
	size_t code_read;	/* bytes of code read so far (load_code) */
};

static const struct usdt__symtab *lazy_symtab_get(void *arg)
{
	struct lazy_symtab *l = arg;

	if (!l->tried) {
		l->tried = true;
		l->err = usdt__elf_symtab(l->ue, &l->st);
	}
	return l->st;
}

/*
 * Code read before call sites, all sites of a file together: libelf keeps
 * each chunk until the file is closed, so a file whose every argument asks
 * for code costs at most this much.
 */
#define CODE_BUDGET (16u << 20)

/*
 * The site's usdt__site_ctx.load_code: the bytes before vaddr inside the
 * function that holds it (from the symbol table), at most max_back of
 * them, all inside one loadable segment and with no "$d" data mark among
 * them.
 */
static int lazy_load_code(void *arg, uint64_t vaddr, size_t max_back,
			  struct usdt__code *code, const char **why)
{
	struct lazy_symtab *l = arg;
	const struct usdt__symtab *st = lazy_symtab_get(l);
	uint64_t start, end, off, end_off;
	Elf_Data *d;
	int err;

	err = usdt__symtab_func_at(st, vaddr, &start, &end);
	if (err) {
		*why = err == -ENOTUNIQ ? "two functions hold the site"
					: "no function symbol holds the site";
		return err;
	}
	if (vaddr == start) {
		*why = "no instruction before the site";
		return -ENOENT;
	}
	code->at_func_start = vaddr - start <= max_back;
	if (!code->at_func_start)
		start = vaddr - max_back;
	if (usdt__symtab_data_in(st, start, vaddr)) {
		*why = "data among the instructions before the site";
		return -ENOENT;
	}
	/* Both ends in the file image of one segment: offsets that are
	 * exactly len apart. */
	if (usdt__elf_vaddr_to_off(l->ue, start, &off) ||
	    usdt__elf_vaddr_to_off(l->ue, vaddr - 1, &end_off) ||
	    end_off - off != vaddr - 1 - start ||
	    l->code_read + (vaddr - start) > CODE_BUDGET) {
		*why = "the code before the site cannot be read";
		return -ENOENT;
	}
	d = elf_getdata_rawchunk(l->ue->elf, (int64_t)off, vaddr - start,
				 ELF_T_BYTE);
	if (!d || !d->d_buf || d->d_size != vaddr - start) {
		*why = "the code before the site cannot be read";
		return -ENOENT;
	}
	l->code_read += d->d_size;
	code->bytes = d->d_buf;
	code->start = start;
	code->len = d->d_size;
	return 0;
}

/* The site's usdt__site_ctx.mapped: in a segment's memory image (which
 * includes .bss, beyond the file image). */
static bool lazy_mapped(void *arg, uint64_t vaddr)
{
	const struct usdt__elf *ue = ((struct lazy_symtab *)arg)->ue;
	size_t i;

	for (i = 0; i < ue->load_cnt; i++)
		if (vaddr >= ue->loads[i].p_vaddr &&
		    vaddr - ue->loads[i].p_vaddr < ue->loads[i].p_memsz)
			return true;
	return false;
}

/* Keep only the specs of the probe's arguments (16 bytes, not ~200). */
static void compact_probe(struct usdt_probe *p)
{
	int i;

	p->specs = calloc(p->arg_cnt ? (size_t)p->arg_cnt : 1,
			  sizeof(*p->specs));
	if (!p->specs) {
		p->status = -ENOMEM;
		p->error = "out of memory";
		return;
	}
	for (i = 0; i < p->arg_cnt; i++)
		p->specs[i] = p->args[i].spec;
	free(p->args);
	p->args = NULL;
}

/* Fill in one probe from its raw site; strings are copied to *st. */
/*
 * The probe's names, and its argument string with room for the arguments'
 * texts (returned; NULL for a compact file), copied into the string table
 * at *st, which advances.
 */
static char *copy_strings(const struct usdt_file *file,
			  const struct raw_site *s, struct usdt_probe *p,
			  char **st)
{
	char *text = NULL;

	p->provider = memcpy(*st, s->provider, s->provider_len + 1);
	*st += s->provider_len + 1;
	p->name = memcpy(*st, s->name, s->name_len + 1);
	*st += s->name_len + 1;
	/* A compact file (the manager's, for attaching) keeps no argument
	 * text: only the specs. */
	p->args_str = p->arg_text = "";
	if (!file->compact) {
		p->args_str = memcpy(*st, s->args, s->args_len + 1);
		*st += s->args_len + 1;
		text = *st;
		*st += s->args_len + 1;
		p->arg_text = text;
		*text = '\0';
	}
	return text;
}

static void build_probe(const struct usdt__elf *ue, struct usdt_file *file,
			struct lazy_symtab *symtab, bool has_base,
			uint64_t base_addr, const struct raw_site *s,
			struct usdt_probe *p, char **st)
{
	struct usdt__site_ctx site = {};
	uint64_t delta = 0;
	char *text = copy_strings(file, s, p, st);
	const char *why;
	int i, err;

	p->status = s->status;
	p->error = s->error;
	if (p->status)
		return;

	if (has_base && s->base)
		delta = base_addr - s->base;
	p->vaddr = s->pc + delta;
	p->sema_vaddr = s->sema ? s->sema + delta : 0;

	if (usdt__elf_vaddr_to_off(ue, p->vaddr, &p->file_off)) {
		p->status = -EINVAL;
		p->error = "address not in any loadable segment";
		goto err_out;
	}
	if (p->sema_vaddr &&
	    usdt__elf_vaddr_to_off(ue, p->sema_vaddr, &p->sema_off)) {
		p->status = -EINVAL;
		p->error = "semaphore not in any loadable segment";
		goto err_out;
	}
	if (!file->arch) {
		p->status = -ENOTSUP;
		p->error = "unsupported architecture";
		goto err_out;
	}

	site.arch = file->arch;
	site.load_symtab = lazy_symtab_get;
	site.load_code = lazy_load_code;
	site.mapped = lazy_mapped;
	site.load_arg = symtab;
	site.vaddr = p->vaddr;
	site.is_dyn = file->e_type == ET_DYN;
	site.big_endian = file->big_endian;
	err = usdt__args_parse(&site, s->args, &p->args, &p->arg_cnt, &why);
	if (err) {
		p->status = err;
		p->error = why ? why : "cannot parse the argument string";
		goto err_out;
	}
	for (i = 0; text && i < p->arg_cnt; i++) {
		const struct usdt__arg *a = &p->args[i];

		memcpy(text, s->args + a->str_pos, a->str_len);
		text[a->str_len] = '\0';
		text += a->str_len + 1;
	}
	if (file->compact)
		compact_probe(p);
	return;

err_out:
	pr_warn("%s: probe %s:%s at 0x%llx: %s\n", ue->path, p->provider,
		p->name, (unsigned long long)s->pc, p->error);
}

struct stapsdt_base {
	bool has;		/* the file has .stapsdt.base */
	uint64_t addr;		/* its address */
};

/* Every probe from its raw site, into file->probes[] and storage. */
static int build_probes(const struct usdt__elf *ue, struct usdt_file *file,
			struct lazy_symtab *symtab,
			const struct stapsdt_base *base,
			const struct raw_sites *rs, const char *data)
{
	size_t i, arg_total = 0;
	char *st = file->storage;
	struct raw_site s;

	for (i = 0; i < rs->cnt; i++) {
		if (rs->v[i].error) {
			memset(&s, 0, sizeof(s));
			s.provider = s.name = s.args = "";
			raw_bad(&s, rs->v[i].error);
		} else {
			parse_desc(ue, data + rs->v[i].desc_off,
				   rs->v[i].desc_sz, &s);
		}
		build_probe(ue, file, symtab, base->has, base->addr, &s,
			    &file->probes[i], &st);
		file->probe_cnt = i + 1;
		/* Only running out of memory is fatal to the file. */
		if (file->probes[i].status == -ENOMEM || symtab->err)
			return -ENOMEM;
		arg_total += (size_t)file->probes[i].arg_cnt;
		if (arg_total > USDT__MAX_ARGS) {
			pr_warn("%s: more than %u USDT arguments in all\n",
				ue->path, USDT__MAX_ARGS);
			return -E2BIG;
		}
	}
	return 0;
}

static int read_probes(const struct usdt__elf *ue, struct usdt_file *file)
{
	struct raw_sites rs = {};
	struct lazy_symtab symtab = { .ue = ue };
	struct stapsdt_base base = {};
	size_t align;
	GElf_Shdr shdr;
	Elf_Scn *scn;
	Elf_Data *data;
	int err;

	if (usdt__elf_find_section(ue, ".note.stapsdt", SHT_NOTE, &shdr,
				   &scn)) {
		pr_debug("%s: no .note.stapsdt section\n", ue->path);
		return 0;
	}
	if (!usdt__elf_section_fits(ue, &shdr, USDT__MAX_SECTION_SIZE,
				    ".note.stapsdt"))
		return -EFBIG;
	pr_debug("%s: reading %llu bytes of .note.stapsdt\n", ue->path,
		 (unsigned long long)shdr.sh_size);
	data = elf_rawdata(scn, NULL);
	if (!data) {
		pr_warn("%s: cannot read .note.stapsdt: %s\n", ue->path,
			elf_errmsg(-1));
		return -ENOEXEC;
	}
	if (!data->d_buf || !data->d_size)
		return 0;
	align = shdr.sh_addralign == 8 ? 8 : 4;

	if (!usdt__elf_find_section(ue, ".stapsdt.base", SHT_NULL, &shdr,
				    NULL)) {
		base.has = true;
		base.addr = shdr.sh_addr;
	}

	err = walk_notes(ue, data->d_buf, data->d_size, align, &rs);
	if (err)
		goto err_out;
	if (!rs.cnt)
		goto out;

	/* Bounded by twice the section's size, which is inside the file. */
	file->storage = malloc(rs.str_total +
			       (file->compact ? 0 : 2 * rs.args_total));
	file->probes = calloc(rs.cnt, sizeof(*file->probes));
	if (!file->storage || !file->probes) {
		err = -ENOMEM;
		goto err_out;
	}
	err = build_probes(ue, file, &symtab, &base, &rs, data->d_buf);
	if (err)
		goto err_out;
out:
	usdt__symtab_free(symtab.st);
	free(rs.v);
	return 0;

err_out:
	usdt__symtab_free(symtab.st);
	free(rs.v);
	return err;
}

void usdt_file__close(struct usdt_file *file)
{
	size_t i;

	if (!file)
		return;
	for (i = 0; i < file->probe_cnt; i++) {
		free(file->probes[i].args);
		free(file->probes[i].specs);
	}
	if (file->fd >= 0)
		close(file->fd);
	free(file->probes);
	free(file->storage);
	free(file->names);
	free(file->path);
	free(file);
}

int usdt__file_read(Elf *elf, const char *path, size_t file_size,
		    bool compact, struct usdt_file **out)
{
	struct usdt__elf ue;
	struct usdt_file *file;
	int err;

	*out = NULL;
	file = calloc(1, sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->fd = -1;
	file->compact = compact;
	file->path = strdup(path);
	if (!file->path) {
		free(file);
		return -ENOMEM;
	}
	err = usdt__elf_begin(&ue, elf, path, file_size);
	if (err) {
		usdt_file__close(file);
		return err;
	}
	file->e_machine = ue.e_machine;
	file->e_type = ue.e_type;
	file->big_endian = ue.big_endian;
	file->arch = usdt__arch_find(ue.e_machine);

	err = read_probes(&ue, file);
	usdt__elf_end(&ue);
	if (!err)
		err = usdt__file_index(file);
	if (err) {
		usdt_file__close(file);
		return err;
	}
	pr_debug("%s: %zu USDT call sites\n", path, file->probe_cnt);
	*out = file;
	return 0;
}

static int libelf_init(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE) {
		pr_warn("libelf is too old: %s\n", elf_errmsg(-1));
		return -ENOTSUP;
	}
	return 0;
}

int usdt__file_open_fd(int fd, const char *path, bool compact,
		       struct usdt_file **out)
{
	struct stat st;
	Elf *elf;
	int err;

	*out = NULL;
	err = libelf_init();
	if (err)
		goto err_out;
	if (fstat(fd, &st)) {
		err = -errno;
		pr_warn("%s: cannot stat: %s\n", path, usdt__errstr(err));
		goto err_out;
	}
	if (!S_ISREG(st.st_mode)) {
		pr_warn("%s: not a regular file\n", path);
		err = -ENOEXEC;
		goto err_out;
	}
	/*
	 * Read with pread(), not through a mapping: a file that its owner
	 * truncates while we read it then gives short reads, not SIGBUS.
	 * libelf reads only the headers here, and each section when asked.
	 */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		pr_warn("%s: cannot read as ELF: %s\n", path, elf_errmsg(-1));
		err = -ENOEXEC;
		goto err_out;
	}
	err = usdt__file_read(elf, path, (size_t)st.st_size, compact, out);
	elf_end(elf);
	if (err)
		goto err_out;
	(*out)->fd = fd;
	(*out)->dev = st.st_dev;
	(*out)->ino = st.st_ino;
	(*out)->size = st.st_size;
	(*out)->mtime = st.st_mtim;
	return 0;

err_out:
	close(fd);
	return err;
}

int usdt__open_regular(const char *path)
{
	struct stat st;
	int fd;

	/* Look first, so that no device is even opened in the usual case;
	 * the fstat() below is what counts. */
	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	/* O_NONBLOCK: opening a FIFO or a device must not wait. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	return fd;
}

struct usdt_file *usdt_file__open(const char *path,
				  const struct usdt_file_opts *opts)
{
	struct usdt_file *file;
	int fd, err;

	if (!path || !OPTS_VALID(opts))
		return usdt__err_ptr(-EINVAL);
	fd = usdt__open_regular(path);
	if (fd < 0) {
		pr_warn("%s: cannot open: %s\n", path,
			fd == -ENOEXEC ? "not a regular file" :
					 usdt__errstr(fd));
		return usdt__err_ptr(fd);
	}
	err = usdt__file_open_fd(fd, path, false, &file);
	return err ? usdt__err_ptr(err) : file;
}

struct usdt_file *usdt__file_open_mem(const void *buf, size_t size,
				      const char *name)
{
	struct usdt_file *file = NULL;
	char *copy;
	Elf *elf;
	int err;

	err = libelf_init();
	if (err)
		return usdt__err_ptr(err);
	/* elf_memory() may write to the image (it is a private mapping to
	 * libelf), and the caller's is const. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return usdt__err_ptr(-ENOMEM);
	memcpy(copy, buf, size);
	elf = elf_memory(copy, size);
	if (!elf) {
		pr_warn("%s: cannot read as ELF: %s\n", name, elf_errmsg(-1));
		free(copy);
		return usdt__err_ptr(-ENOEXEC);
	}
	err = usdt__file_read(elf, name, size, false, &file);
	elf_end(elf);
	free(copy);
	if (err)
		return usdt__err_ptr(err);
	return file;
}

/* ---------------------------------------------------------------------- */
/* Finding call sites by name                                             */

static int cmp_site(const void *a, const void *b, void *arg)
{
	const struct usdt_file *file = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct usdt_probe *p = &file->probes[i], *q = &file->probes[j];
	int c = strcmp(p->provider, q->provider);

	if (!c)
		c = strcmp(p->name, q->name);
	return c ? c : (i > j) - (i < j);
}

int usdt__file_index(struct usdt_file *file)
{
	uint32_t i;

	file->names = calloc(file->probe_cnt ? file->probe_cnt : 1,
			     sizeof(*file->names));
	if (!file->names)
		return -ENOMEM;
	for (i = 0; i < file->probe_cnt; i++)
		file->names[i] = i;
	qsort_r(file->names, file->probe_cnt, sizeof(*file->names), cmp_site,
		file);
	return 0;
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[\\") != NULL;
}

/* The first position in names[] whose provider:name is not below the
 * given one. */
static size_t lower_bound(const struct usdt_file *file, const char *provider,
			  const char *name)
{
	size_t lo = 0, hi = file->probe_cnt, mid;
	const struct usdt_probe *p;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		p = &file->probes[file->names[mid]];
		c = strcmp(p->provider, provider);
		if (!c)
			c = strcmp(p->name, name);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long usdt__file_match(const struct usdt_file *file, const char *provider,
		      const char *name, usdt__match_fn fn, void *ctx)
{
	bool exact = !is_glob(provider) && !is_glob(name);
	size_t i = exact ? lower_bound(file, provider, name) : 0, grp;
	const struct usdt_probe *p, *first;
	long cnt = 0;
	bool match = false;
	int err;

	for (grp = i; i < file->probe_cnt; i++) {
		p = &file->probes[file->names[i]];
		first = &file->probes[file->names[grp]];
		/* fnmatch once per distinct provider:name. */
		if (i == grp || strcmp(p->name, first->name) ||
		    strcmp(p->provider, first->provider)) {
			grp = i;
			if (exact && (strcmp(p->provider, provider) ||
				      strcmp(p->name, name)))
				break;
			match = exact || (!fnmatch(provider, p->provider, 0) &&
					  !fnmatch(name, p->name, 0));
		}
		if (!match)
			continue;
		err = fn(p, ctx);
		if (err)
			return err;
		cnt++;
	}
	return cnt;
}

/* ---------------------------------------------------------------------- */
/* Getters                                                                */

const char *usdt_file__path(const struct usdt_file *file)
{
	return file->path;
}

int usdt_file__machine(const struct usdt_file *file)
{
	return file->e_machine;
}

const char *usdt_file__arch_name(const struct usdt_file *file)
{
	return file->arch ? file->arch->name : NULL;
}

bool usdt_file__is_dyn(const struct usdt_file *file)
{
	return file->e_type == ET_DYN;
}

size_t usdt_file__probe_cnt(const struct usdt_file *file)
{
	return file->probe_cnt;
}

const struct usdt_probe *usdt_file__probe(const struct usdt_file *file,
					  size_t i)
{
	if (i >= file->probe_cnt)
		return usdt__err_ptr(-ERANGE);
	return &file->probes[i];
}

const char *usdt_probe__provider(const struct usdt_probe *p)
{
	return p->provider;
}

const char *usdt_probe__name(const struct usdt_probe *p)
{
	return p->name;
}

uint64_t usdt_probe__address(const struct usdt_probe *p)
{
	return p->vaddr;
}

uint64_t usdt_probe__file_offset(const struct usdt_probe *p)
{
	return p->file_off;
}

uint64_t usdt_probe__semaphore(const struct usdt_probe *p)
{
	return p->sema_vaddr;
}

uint64_t usdt_probe__semaphore_offset(const struct usdt_probe *p)
{
	return p->sema_off;
}

const char *usdt_probe__args_str(const struct usdt_probe *p)
{
	return p->args_str;
}

int usdt_probe__status(const struct usdt_probe *p)
{
	return p->status;
}

const char *usdt_probe__error(const struct usdt_probe *p)
{
	return p->status ? p->error : NULL;
}

int usdt_probe__arg_cnt(const struct usdt_probe *p)
{
	return p->status ? 0 : p->arg_cnt;
}

int usdt_probe__arg(const struct usdt_probe *p, int i,
		    struct usdt_arg_info *info)
{
	const size_t need = offsetof(struct usdt_arg_info, str) +
			    sizeof(info->str);
	const struct usdt__arg *a;
	const char *text;
	size_t sz;
	int j;

	if (!info || info->sz < need ||
	    !usdt__opts_tail_zero(info, sizeof(*info), info->sz))
		return usdt__err(-EINVAL);
	if (!p || p->status || i < 0 || i >= p->arg_cnt)
		return usdt__err(-ERANGE);
	if (!p->args)		/* a compact file's; never handed out */
		return usdt__err(-ENOTSUP);

	a = &p->args[i];
	text = p->arg_text;
	for (j = 0; j < i; j++)
		text += p->args[j].str_len + 1;

	/* A caller built against an older, smaller struct gets its part. */
	sz = info->sz;
	memset(info, 0, sz < sizeof(*info) ? sz : sizeof(*info));
	info->sz = sz;
	info->kind = a->kind;
	info->size = a->size;
	info->is_signed = a->is_signed;
	info->is_float = a->is_float;
	info->reg = a->base[0] ? a->base : NULL;
	info->index = a->index[0] ? a->index : NULL;
	info->scale = a->index[0] ? a->scale : 0;
	info->offset = a->offset;
	info->value = a->value;
	info->reason = a->kind == USDT_ARG_UNSUPPORTED ? a->reason : NULL;
	info->str = text;
	if (OPTS_HAS(info, index_ext)) {
		info->offset = (int64_t)((uint64_t)a->offset -
					 (uint64_t)a->read_adj);
		info->read_offset = a->offset;
		info->read_reg = a->read_base[0] ? a->read_base : info->reg;
		/* riscv64 %lo(sym)(a4) is read at sym, a4 aside (args.c). */
		if (a->lo_reloc && a->spec.base_off == USDT_REG_NONE)
			info->read_reg = NULL;
		info->index_ext = !info->index ? NULL :
				  a->idx_ext == USDT__IDX_SXTW ? "sxtw" :
				  a->idx_ext == USDT__IDX_UXTW ? "uxtw" : NULL;
	}
	return 0;
}
