// SPDX-License-Identifier: BSD-2-Clause
/*
 * A call site's probe, built from its decoded note (a raw site): its
 * addresses and file offsets, moved by prelink's .stapsdt.base if need
 * be, and its arguments, parsed for the file's architecture; with its
 * argument string and each argument's text (its own allocation, strs) for
 * usdt_file__probe(), with only the arguments' specs for an attach. The
 * reader (src/reader/noteidx.c) builds here the probes of the sites an attach
 * picks, and every site's for usdt_file__probe().
 *
 * What an argument may need beyond its text (the symbol table, the code
 * before the site) is read only when one asks for it (struct usdt__lazy):
 * most files' arguments are registers and memory only.
 */
#include "reader/arch_ops.h"
#include "reader/probe.h"
#include "reader/symtab.h"

/* ---------------------------------------------------------------------- */
/* What arguments read when they first need it                           */

/*
 * The libelf handle of the file, opened from lazy->fd when the index read
 * the notes without one. NULL when it cannot be had: lazy->err then says
 * why (out of memory, or the file is no longer what was read), which
 * fails the call rather than pass for a file without symbols.
 */
static const struct usdt__elf *lazy_elf(struct usdt__lazy *l)
{
	Elf *elf;
	int err;

	if (l->ue->elf)
		return l->ue;
	if (!l->opened && l->fd >= 0) {
		l->opened = true;
		elf = elf_begin(l->fd, ELF_C_READ, NULL);
		err = elf ? usdt__elf_begin(&l->own, elf, l->ue->path,
					    l->ue->file_size) :
			    -ENOMEM;
		if (err) {
			pr_warn("%s: cannot read the file again for its symbols: %s\n",
				l->ue->path, usdt__errstr(err));
			if (elf)
				elf_end(elf);
			l->own.elf = NULL;
			l->err = err;
		}
	}
	return l->own.elf ? &l->own : NULL;
}

void usdt__lazy_end(struct usdt__lazy *l)
{
	if (l->own.elf) {
		usdt__elf_end(&l->own);
		elf_end(l->own.elf);
		l->own.elf = NULL;
	}
}

/*
 * The symbol table, built when an argument first names a symbol: reading
 * .symtab and its strings is most of the memory a big unstripped binary
 * costs, and most files' arguments are registers and memory only.
 */
static const struct usdt__symtab *lazy_symtab_get(void *arg)
{
	struct usdt__lazy *l = arg;
	const struct usdt__elf *ue;

	if (!l->tried) {
		l->tried = true;
		ue = lazy_elf(l);
		if (ue)
			l->err = usdt__elf_symtab(ue, &l->st);
	}
	return l->st;
}

/*
 * Code read before call sites, all sites of a file together: libelf keeps
 * each chunk until the file is closed, so a file whose every argument asks
 * for code costs at most this much.
 */
#define CODE_BUDGET (16u << 20)

/* Both ends of [start, vaddr) in the file image of one segment: offsets
 * that are exactly the length apart; the first one into *off. */
static bool code_in_file(const struct usdt__elf *ue, uint64_t start,
			 uint64_t vaddr, uint64_t *off)
{
	uint64_t end_off;

	return !usdt__elf_vaddr_to_off(ue, start, off) &&
	       !usdt__elf_vaddr_to_off(ue, vaddr - 1, &end_off) &&
	       end_off - *off == vaddr - 1 - start;
}

/*
 * The site's usdt__site_ctx.load_code: the bytes before vaddr inside the
 * function that holds it (from the symbol table), at most max_back of
 * them, all inside one loadable segment and with no "$d" data mark among
 * them.
 */
static int lazy_load_code(void *arg, uint64_t vaddr, size_t max_back,
			  struct usdt__code *code, const char **why)
{
	struct usdt__lazy *l = arg;
	const struct usdt__symtab *st = lazy_symtab_get(l);
	const struct usdt__elf *ue = lazy_elf(l);
	uint64_t start, end, off;
	Elf_Data *d;
	int err;

	err = usdt__symtab_func_at(st, vaddr, &start, &end);
	if (err) {
		*why = err == -ENOTUNIQ ? "two functions hold the site" :
					  "no function symbol holds the site";
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
	d = NULL;
	if (ue && code_in_file(ue, start, vaddr, &off) &&
	    l->code_read + (vaddr - start) <= CODE_BUDGET)
		d = elf_getdata_rawchunk(ue->elf, (int64_t)off, vaddr - start,
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
	const struct usdt__elf *ue = ((struct usdt__lazy *)arg)->ue;
	size_t i;

	for (i = 0; i < ue->load_cnt; i++)
		if (vaddr >= ue->loads[i].p_vaddr &&
		    vaddr - ue->loads[i].p_vaddr < ue->loads[i].p_memsz)
			return true;
	return false;
}

/* ---------------------------------------------------------------------- */
/* Building probes                                                        */

/* Keep only the specs of the probe's arguments (16 bytes, not ~200):
 * all an attach needs of the sites it picks. */
static void specs_only(struct usdt_probe *p)
{
	int i;

	p->specs =
		calloc(p->arg_cnt ? (size_t)p->arg_cnt : 1, sizeof(*p->specs));
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

/* The probe's argument string, and room for its arguments' texts. */
static bool probe_strings(const struct usdt__raw_site *s, struct usdt_probe *p)
{
	/* Bounded by the note's descriptor, inside the section. */
	p->strs = malloc(2 * (s->args_len + 1));
	if (!p->strs) {
		p->status = -ENOMEM;
		p->error = "out of memory";
		return false;
	}
	memcpy(p->strs, s->args, s->args_len);
	p->strs[s->args_len] = '\0';
	p->args_str = p->strs;
	p->arg_text = p->strs + s->args_len + 1;
	p->strs[s->args_len + 1] = '\0';
	return true;
}

/* The probe's addresses and file offsets; false (p made bad) when they
 * are not in the file. */
static bool probe_place(const struct usdt__elf *ue,
			const struct usdt__stapsdt_base *base,
			const struct usdt__raw_site *s, struct usdt_probe *p)
{
	uint64_t delta = 0;
	const char *why;

	if (base->has && s->base)
		delta = base->addr - s->base;
	p->vaddr = s->pc + delta;
	p->sema_vaddr = s->sema ? s->sema + delta : 0;
	if (usdt__elf_vaddr_to_off(ue, p->vaddr, &p->file_off)) {
		p->status = -EINVAL;
		p->error = "address not in any loadable segment";
		return false;
	}
	if (p->sema_vaddr &&
	    usdt__elf_sema_to_off(ue, p->sema_vaddr, &p->sema_off,
				  &p->sema_cleared, &why)) {
		p->status = -EINVAL;
		p->error = why;
		return false;
	}
	return true;
}

void usdt__probe_build(struct usdt__lazy *lazy, const struct usdt_file *file,
		       const struct usdt__stapsdt_base *base,
		       const struct usdt__raw_site *s, struct usdt_probe *p,
		       bool full)
{
	const struct usdt__elf *ue = lazy->ue;
	struct usdt__site_ctx site = {};
	const char *why;
	char *text;
	int i, err;

	p->status = s->status;
	p->error = s->error;
	p->args_str = p->arg_text = "";
	if ((full && !probe_strings(s, p)) || p->status)
		return;
	if (!probe_place(ue, base, s, p))
		goto err_out;
	if (!file->arch) {
		p->status = -EOPNOTSUPP;
		p->error = "unsupported architecture";
		goto err_out;
	}

	site.arch = file->arch;
	site.load_symtab = lazy_symtab_get;
	site.load_code = lazy_load_code;
	site.mapped = lazy_mapped;
	site.load_arg = lazy;
	site.vaddr = p->vaddr;
	site.is_dyn = file->e_type == ET_DYN;
	site.big_endian = file->big_endian;
	err = usdt__args_parse(&site, s->args, &p->args, &p->arg_cnt, &why);
	if (err) {
		p->status = err;
		p->error = why ? why : "cannot parse the argument string";
		goto err_out;
	}
	text = full ? p->strs + s->args_len + 1 : NULL;
	for (i = 0; text && i < p->arg_cnt; i++) {
		const struct usdt__arg *a = &p->args[i];

		memcpy(text, s->args + a->str_pos, a->str_len);
		text[a->str_len] = '\0';
		text += a->str_len + 1;
	}
	if (!full)
		specs_only(p);
	return;

err_out:
	/* An attach's picks are said by the attach, which skips the site
	 * ("skipping the site at ..."): once is enough. */
	if (full)
		pr_warn("%s: probe %s:%s at 0x%llx: %s\n", ue->path,
			p->provider, p->name, (unsigned long long)s->pc,
			p->error);
	else
		pr_debug("%s: probe %s:%s at 0x%llx: %s\n", ue->path,
			 p->provider, p->name, (unsigned long long)s->pc,
			 p->error);
}

bool usdt_probe__semaphore_cleared_at_load(const struct usdt_probe *p)
{
	return p->sema_cleared;
}
