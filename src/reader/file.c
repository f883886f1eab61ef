// SPDX-License-Identifier: BSD-2-Clause
/*
 * The file object: opening an ELF file (from a path, a descriptor or
 * memory) and indexing its notes (src/reader/noteidx.c), closing it, and the
 * public usdt_file__* / usdt_probe__* getters; usdt_file__probe() builds
 * every probe from the index at its first call and keeps them. A file a
 * user named is opened by src/base/openpath.c's usdt__open_regular(), as every
 * part of the library opens one.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/arch_ops.h"
#include "reader/file.h"
#include "reader/noteidx.h"

/* Index the notes of the file open at fd (the index's to close if own). */
static int read_probes(const struct usdt__elf *ue, int fd, bool own,
		       struct usdt_file *file)
{
	struct usdt__stapsdt_base base = {};
	size_t align;
	GElf_Shdr shdr;
	Elf_Scn *scn;

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
	align = shdr.sh_addralign == 8 ? 8 : 4;
	if (!usdt__elf_find_section(ue, ".stapsdt.base", SHT_NULL, &shdr,
				    NULL)) {
		base.has = true;
		base.addr = shdr.sh_addr;
	}
	/* The index reads the section itself, through a window. */
	gelf_getshdr(scn, &shdr);
	if (shdr.sh_offset > ue->file_size ||
	    shdr.sh_size > ue->file_size - shdr.sh_offset) {
		pr_warn("%s: cannot read .note.stapsdt: it lies past the end of the file\n",
			ue->path);
		return -ENOEXEC;
	}
	return usdt__index_build(ue, fd, own, shdr.sh_offset, shdr.sh_size,
				 align, &base, file);
}

void usdt_file__close(struct usdt_file *file)
{
	if (!file)
		return;
	if (file->fd >= 0)
		close(file->fd);
	usdt__probes_free(file->probes, file->probe_cnt);
	free(file->map);
	usdt__index_free(file->idx);
	free(file->path);
	free(file);
}

/* Every probe of the file, built from the index at the first call. Two
 * threads may race to build them: the first to publish wins. */
static int file_probes(const struct usdt_file *file, struct usdt_probe **out)
{
	struct usdt_probe *cur, *v;
	int err;

	cur = __atomic_load_n(&file->probes, __ATOMIC_ACQUIRE);
	if (cur) {
		*out = cur;
		return 0;
	}
	err = usdt__file_probes(file, &v);
	if (err)
		return err;
	/* The file is const to its borrowers; this slot is its cache. */
	if (!__atomic_compare_exchange_n((struct usdt_probe **)&file->probes,
					 &cur, v, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		usdt__probes_free(v, file->probe_cnt);
		v = cur;
	}
	*out = v;
	return 0;
}

/*
 * Index the notes of an opened ELF file into a new usdt_file; fd is the
 * file's, which the index reads its notes from again (its own copy for an
 * image: own). Returns 0 or a negative errno.
 */
static int file_read(Elf *elf, int fd, bool own, const char *path,
		     size_t file_size, struct usdt_file **out)
{
	struct usdt__elf ue;
	struct usdt_file *file;
	int err;

	*out = NULL;
	file = calloc(1, sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->fd = -1;
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

	err = read_probes(&ue, fd, own, file);
	usdt__elf_end(&ue);
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
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * usdt__file_open_fd(), or for an image (a copy of one in memory, at fd):
 * the index keeps fd, and the file has none (it cannot be attached).
 */
static int index_fd(int fd, const char *path, bool image,
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
	err = file_read(elf, fd, image, path, (size_t)st.st_size, out);
	elf_end(elf);
	if (err)
		goto err_out;
	if (image) {
		if (!(*out)->idx) /* else the index's */
			close(fd);
		return 0;
	}
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

int usdt__file_open_fd(int fd, const char *path, struct usdt_file **out)
{
	return index_fd(fd, path, false, out);
}

/*
 * What usdt_file__open() promises: the file indexed, and every probe
 * built now, so that a file that cannot be (out of memory, too many
 * arguments in all) fails to open, and a bad probe's message comes at
 * open. Later getters read what this built.
 */
static int open_fd(int fd, const char *path, bool image, struct usdt_file **out)
{
	struct usdt_probe *v;
	int err;

	err = index_fd(fd, path, image, out);
	if (!err && (err = file_probes(*out, &v))) {
		usdt_file__close(*out);
		*out = NULL;
	}
	return err;
}

struct usdt_file *usdt_file__open(const char *path,
				  const struct usdt_file_opts *opts)
{
	struct usdt_file *file;
	int fd, err;

	if (!path || !OPTS_VALID(opts, usdt_file_opts))
		return usdt__err_ptr(-EINVAL);
	fd = usdt__open_regular(path);
	if (fd < 0) {
		pr_warn("%s: cannot open: %s\n", path,
			fd == -ENOEXEC ? "not a regular file" :
					 usdt__errstr(fd));
		return usdt__err_ptr(fd);
	}
	err = open_fd(fd, path, false, &file);
	return err ? usdt__err_ptr(err) : file;
}

struct usdt_file *usdt__file_adopt(int fd, const char *path)
{
	struct usdt_file *file;
	int err;

	err = open_fd(fd, path, false, &file);
	return err ? usdt__err_ptr(err) : file;
}

struct usdt_file *usdt__file_open_mem(const void *buf, size_t size,
				      const char *name)
{
	struct usdt_file *file = NULL;
	size_t done = 0;
	ssize_t n;
	int fd, err;

	/* A copy in a file of its own, read as any file is (the index reads
	 * its notes again from it). */
	fd = memfd_create("usdt-image", MFD_CLOEXEC);
	if (fd < 0)
		return usdt__err_ptr(-errno);
	while (done < size) {
		n = write(fd, (const char *)buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			close(fd);
			return usdt__err_ptr(err);
		}
		done += (size_t)n;
	}
	err = open_fd(fd, name, true, &file);
	return err ? usdt__err_ptr(err) : file;
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
	struct usdt_probe *v;
	int err;

	if (i >= file->probe_cnt)
		return usdt__err_ptr(-ERANGE);
	err = file_probes(file, &v);
	return err ? usdt__err_ptr(err) : &v[i];
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
	/* The struct as of 0.1; fields added later are filled where sz
	 * has room for them (OPTS_HAS). */
	const size_t need = offsetof(struct usdt_arg_info, index_ext) +
			    sizeof(info->index_ext);
	const struct usdt__arg *a;
	const char *text;
	size_t sz;
	int j;

	if (!info || info->sz < need || !OPTS_VALID(info, usdt_arg_info))
		return usdt__err(-EINVAL);
	if (!p || p->status || i < 0 || i >= p->arg_cnt)
		return usdt__err(-ERANGE);
	if (!p->args) /* a picked probe's; never handed out */
		return usdt__err(-EOPNOTSUPP);

	a = &p->args[i];
	text = p->arg_text;
	for (j = 0; j < i; j++)
		text += p->args[j].str_len + 1;

	/* A caller built against a newer, larger struct: its tail is
	 * zero (OPTS_VALID), and stays so. */
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
	info->offset = (int64_t)((uint64_t)a->offset - (uint64_t)a->read_adj);
	info->value = a->value;
	info->reason = a->kind == USDT_ARG_UNSUPPORTED ? a->reason : NULL;
	info->str = text;
	info->read_offset = a->offset;
	info->read_reg = a->read_base[0] ? a->read_base : info->reg;
	/* riscv64 %lo(sym)(a4) is read at sym, a4 aside (args.c). */
	if (a->lo_reloc && a->spec.base_off == USDT_REG_NONE)
		info->read_reg = NULL;
	info->index_ext = !info->index		       ? NULL :
			  a->idx_ext == USDT__IDX_SXTW ? "sxtw" :
			  a->idx_ext == USDT__IDX_UXTW ? "uxtw" :
							 NULL;
	return 0;
}
