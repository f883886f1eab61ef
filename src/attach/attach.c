// SPDX-License-Identifier: BSD-2-Clause
/*
 * The attach engine: find the target file, pick the call sites, give each
 * one a spec ID, and hand the sites to a link maker (link.h): one
 * uprobe_multi link or one perf uprobe per site (kernel.c), or a struct
 * bpf_link of libbpf's (ext.c). Any failure unwinds everything the call
 * did (links.c).
 *
 * One file from read to attach: the target is opened once, its notes are
 * read from that descriptor, the nop5 check (when asked) reads the same
 * descriptor, and the kernel is given the same open file as
 * /proc/self/fd/N. A path is never opened twice, so whoever controls a
 * directory or a symlink on it cannot make the kernel apply our offsets
 * and semaphore offsets to some other file. Where a process's mappings
 * are consulted (target.c), files are matched by device and inode, never
 * by name.
 */
#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "reader/reader.h"
#include "proc/proc.h"
#include "attach/link.h"

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Distinct IDs in ids[0..n), using scratch (n ints) to sort a copy. */
static size_t count_distinct(const int *ids, size_t n, int *scratch)
{
	size_t i, cnt = 0;

	memcpy(scratch, ids, n * sizeof(*ids));
	qsort(scratch, n, sizeof(*scratch), cmp_int);
	for (i = 0; i < n; i++)
		cnt += !i || scratch[i] != scratch[i - 1];
	return cnt;
}

static bool prog_of_object(const struct bpf_program *prog,
			   const struct bpf_object *obj)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj)
		if (p == prog)
			return true;
	return false;
}

/*
 * The link the program was loaded for decides: a program loaded for
 * uprobe_multi links cannot take perf uprobes, and one loaded as a plain
 * uprobe cannot take a uprobe_multi link. Asking for the other is the
 * caller's mistake (-EINVAL), unless the kernel has no uprobe_multi links
 * at all (-EOPNOTSUPP).
 */
static int attach_pick_mode(struct attach_ctx *c, enum usdt_attach_mode mode,
			    const char *pname)
{
	bool prog_multi = bpf_program__expected_attach_type(c->prog) ==
			  (enum bpf_attach_type)USDT__TRACE_UPROBE_MULTI;

	if (mode == USDT_MODE_PERF && prog_multi) {
		pr_warn("%s:%s: program '%s' was loaded for uprobe_multi links; create the manager before bpf_object__load() with no_uprobe_multi for per-site uprobes\n",
			c->provider, c->name, pname);
		return -EINVAL;
	}
	if (mode == USDT_MODE_MULTI && !prog_multi && !c->feat->uprobe_multi) {
		pr_warn("%s:%s: USDT_MODE_MULTI: this kernel has no uprobe_multi links (Linux 6.6)\n",
			c->provider, c->name);
		return -EOPNOTSUPP;
	}
	if (mode == USDT_MODE_MULTI && !prog_multi) {
		pr_warn("%s:%s: program '%s' was not loaded for uprobe_multi links (a SEC(\"uprobe\") program, a manager with no_uprobe_multi, or one created after load with libbpf before 1.3)\n",
			c->provider, c->name, pname);
		return -EINVAL;
	}
	c->use_multi = prog_multi;
	c->maker = c->ext     ? &usdt__maker_ext :
		   prog_multi ? &usdt__maker_multi :
				&usdt__maker_perf;
	return 0;
}

/* Check the arguments that do not depend on the file, and pick a mode. */
static int attach_prepare(struct attach_ctx *c,
			  const struct usdt_attach_opts *opts)
{
	const char *pname = bpf_program__name(c->prog);
	enum usdt_attach_mode mode;
	int err;

	mode = OPTS_GET(opts, mode, USDT_MODE_AUTO);
	c->take.provider = c->provider;
	c->take.name = c->name;
	c->take.use_ip = OPTS_GET(opts, force_ip_map, false);
	c->cookie = OPTS_GET(opts, usdt_cookie, 0);
	c->take.storage = OPTS_GET(opts, storage, NULL);
	c->take.per_site = OPTS_GET(opts, storage_per_site, false);
	c->red_zone = OPTS_GET(opts, allow_red_zone_writes, false);
	if (mode > USDT_MODE_PERF)
		return -EINVAL;
	/* Its spec IDs would go to our maps and never be read. (An implicit
	 * manager's maps are the program's own.) */
	if (c->obj && !prog_of_object(c->prog, c->obj)) {
		pr_warn("%s:%s: program '%s' is not of the manager's BPF object '%s'\n",
			c->provider, c->name, pname, bpf_object__name(c->obj));
		return -EINVAL;
	}
	if (bpf_program__fd(c->prog) < 0) {
		pr_warn("%s:%s: program '%s' is not loaded\n", c->provider,
			c->name, pname);
		return -EINVAL;
	}
	err = usdt__storage_check(&c->st->storage,
				  c->obj ? bpf_object__name(c->obj) :
					   "(no manager)",
				  c->take.storage,
				  OPTS_GET(opts, storage_sz, 0),
				  c->take.per_site);
	if (err)
		return err;
	c->host = usdt__arch_host();
	if (!c->host) {
		pr_warn("%s:%s: libusdt cannot attach on this host's architecture\n",
			c->provider, c->name);
		return -EOPNOTSUPP;
	}
	c->feat = usdt__features();
	if (!c->feat->bpf_cookie)
		c->take.use_ip = true;
	/* A program that reads no spec needs no way to find one. */
	if (c->st->specless)
		c->take.use_ip = false;
	/* Only force_ip_map gets here: without bpf_cookie the manager
	 * always keeps the path. */
	if (c->take.use_ip && !c->st->ip_map_kept) {
		pr_warn("%s:%s: force_ip_map needs the IP-map path, and program '%s' was loaded without it: create the manager before load with usdt_manager_opts.keep_ip_map\n",
			c->provider, c->name, pname);
		return -EINVAL;
	}
	err = attach_pick_mode(c, mode, pname);
	if (err)
		return err;
	if (c->pid == 0)
		c->pid = getpid();
	return 0;
}

/* Check the file against the call: machine, mode, process. */
static int attach_check_file(struct attach_ctx *c)
{
	const struct usdt_file *file = c->file;
	int err;

	if (file->fd < 0) {
		pr_warn("%s:%s: '%s' was not read from a file\n", c->provider,
			c->name, file->path);
		return -EINVAL;
	}
	if (file->e_machine != c->host->e_machine) {
		pr_warn("%s:%s: '%s' is for %s, this host runs %s\n",
			c->provider, c->name, file->path,
			file->arch ? file->arch->name : "another architecture",
			c->host->name);
		return -ENOEXEC;
	}
	/* Where a position-independent file sits differs per process, so
	 * IP-map keys need one: force_ip_map with pid -1 asks for what
	 * cannot be, and a kernel without bpf_cookie cannot do without. */
	if (c->take.use_ip && file->e_type == ET_DYN && c->pid < 0) {
		pr_warn("%s:%s: '%s' is position-independent: IP-map mode (%s) needs a pid\n",
			c->provider, c->name, file->path,
			c->feat->bpf_cookie ? "force_ip_map" :
					      "no bpf_cookie in this kernel");
		return c->feat->bpf_cookie ? -EINVAL : -EOPNOTSUPP;
	}
	/* A link to a file the process does not run would never fire. */
	if (c->pid > 0 && (err = usdt__check_process(c, &c->maps_file)))
		return err;
	snprintf(c->kpath, sizeof(c->kpath), "/proc/self/fd/%d", file->fd);
	return 0;
}

/* Can site p be taken? 1, or 0 (broken: counted and said), or
 * -EOPNOTSUPP. */
static int site_ok(struct attach_ctx *c, const struct usdt_probe *p)
{
	if (p->status < 0) {
		pr_warn("%s:%s: skipping the site at 0x%llx in '%s': %s\n",
			p->provider, p->name, (unsigned long long)p->vaddr,
			c->file->path, p->error);
		c->broken++;
		return 0;
	}
	if (p->sema_off && !c->feat->ref_ctr) {
		pr_warn("%s:%s: has a semaphore and the kernel has no uprobe ref_ctr_offset\n",
			p->provider, p->name);
		return -EOPNOTSUPP;
	}
	if (p->sema_cleared && !c->cleared_prov) {
		c->cleared_prov = p->provider; /* the index's: they stay */
		c->cleared_name = p->name;
		c->cleared_sema = p->sema_vaddr;
	}
	return 1;
}

/*
 * Say so when a site's semaphore is one the loader clears (struct
 * usdt_probe's sema_cleared) and the attach reaches processes that will
 * map the file after it: with pid -1, any started (or loading the file)
 * from now on; with a pid, one that does not map it yet (a child attached
 * to before its exec). Those never see the probe enabled; processes that
 * map the file now do, so the attach goes on.
 */
static void warn_cleared(const struct attach_ctx *c)
{
	char who[96];

	if ((c->pid > 0 && c->maps_file) || !c->cleared_prov)
		return;
	if (c->pid > 0)
		snprintf(who, sizeof(who),
			 "process %d, which does not map the file yet,",
			 (int)c->pid);
	else
		snprintf(who, sizeof(who),
			 "a process that maps the file after this attach (started, or loading it, later)");
	pr_warn("%s:%s: the semaphore at 0x%llx in '%s' is in .bss, in the page that holds its segment's last file byte, which the loader clears after the kernel has counted the semaphore there: %s will never see the probe enabled\n",
		c->cleared_prov, c->cleared_name,
		(unsigned long long)c->cleared_sema, c->file->path, who);
}

/* The call sites that match, counted (c->matched): O(matching sites),
 * read from the file a batch at a time (attach_specs()). */
static int attach_match(struct attach_ctx *c)
{
	int err = usdt__pick_begin(c->file, c->provider, c->name, &c->pick,
				   &c->matched);

	if (!err && !c->matched) {
		pr_warn("%s:%s: no such probe in '%s'\n", c->provider, c->name,
			c->file->path);
		err = -ENOENT;
	}
	return err;
}

/* After the sites are read: any taken, and what to say of them. */
static int attach_found(const struct attach_ctx *c)
{
	if (!c->cnt) {
		pr_warn("%s:%s: no such probe in '%s' (only broken sites)\n",
			c->provider, c->name, c->file->path);
		return -EINVAL;
	}
	warn_cleared(c);
	return 0;
}

/*
 * The file's code bytes at a batch's sites, read through one window (the
 * sites come in runs of file order: a name's, a few to a read), or nothing where no site's uprobe can move (code.fd < 0):
 * every uprobe stays on its site's first byte unless the caller allowed
 * writes below the stack pointer. No kernel's check is trusted for that:
 * the move is harmless on a kernel that does not optimise, and on one that
 * does, only the caller knows whether the program keeps a red zone.
 */
static void code_src_init(const struct attach_ctx *c,
			  struct usdt__note_src *code,
			  const struct usdt_probe *batch, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0, off;
	size_t i, runs = 1;

	*code = (struct usdt__note_src){ .fd = -1 };
	if (!c->red_zone || !c->host->attach_skip || c->file->fd < 0 ||
	    c->file->size <= 0)
		return;
	for (i = 0; i < n; i++) {
		off = batch[i].file_off;
		runs += i && off < batch[i - 1].file_off;
		lo = off < lo ? off : lo;
		hi = off > hi ? off : hi;
	}
	code->fd = c->file->fd;
	code->size = (size_t)c->file->size;
	code->win = usdt__note_win(n ? hi - lo : 0, n, runs);
}

/* Where the uprobe goes past the site's address, from the file's bytes. */
static int site_skip(const struct attach_ctx *c, struct usdt__note_src *code,
		     const struct usdt_probe *p)
{
	const char *insn;
	size_t len = 16;

	if (code->fd < 0 || p->file_off >= code->size)
		return 0;
	if (len > code->size - p->file_off)
		len = code->size - p->file_off;
	insn = usdt__note_bytes(code, (size_t)p->file_off, len);
	return insn ? c->host->attach_skip((const unsigned char *)insn, len) :
		      0;
}

/* Site p's IP-map key, with its uprobe skip bytes past the site: its
 * run-time address. */
static int site_ip(const struct attach_ctx *c, const struct usdt_probe *p,
		   uint64_t off, int skip, long *key)
{
	uint64_t abs = p->vaddr + (uint64_t)skip;
	int err;

	*key = 0;
	if (!c->take.use_ip)
		return 0;
	err = c->file->e_type == ET_DYN ?
		      usdt__runtime_addr(c->pid, c->file, off, &abs) :
		      0;
	if (err) {
		pr_warn("%s:%s: process %d %s '%s' at offset 0x%llx%s%s\n",
			p->provider, p->name, c->pid,
			err == -ENOENT ? "does not map" :
					 "cannot be told to map",
			c->file->path, (unsigned long long)p->file_off,
			err == -ENOENT ? "" : ": ",
			err == -ENOENT ? "" : usdt__errstr(err));
		return err;
	}
	*key = (long)abs;
	return 0;
}

/* Site p, taken as site i: its offset, its spec as its uprobe reads it,
 * and what it holds in the store (usdt__store_hold()). */
static int site_spec(const struct attach_ctx *c, struct usdt__note_src *code,
		     struct usdt_link *link, const struct usdt_probe *p,
		     size_t i, uint64_t *refs, uint64_t *cookies)
{
	struct usdt_spec spec;
	int j, skip, err;
	long ip;

	skip = site_skip(c, code, p);
	link->offsets[i] = p->file_off + (uint64_t)skip;
	link->site_cnt = (uint32_t)i + 1;
	refs[i] = p->sema_off;
	memset(&spec, 0, sizeof(spec));
	spec.arg_cnt = (uint16_t)p->arg_cnt;
	spec.usr_cookie = c->cookie;
	for (j = 0; j < p->arg_cnt && j < USDT_MAX_ARG_CNT; j++) {
		spec.args[j] = *usdt__probe_spec(p, j);
		/* The IP the program sees moves with the uprobe. */
		if (spec.args[j].flags & USDT_SPEC_F_IPREL)
			spec.args[j].val_off -= (uint64_t)skip;
		spec.args[j].fast = usdt__arg_fast(&spec.args[j]);
	}
	/* From the final fields, which dedup then compares too. */
	usdt__spec_windows(&spec);
	err = site_ip(c, p, link->offsets[i], skip, &ip);
	if (!err)
		err = usdt__store_hold(c->st, &c->take, &link->held, &spec, ip,
				       &cookies[i]);
	return err;
}

/* The batch's sites that can be taken, as sites c->cnt, c->cnt + 1, ...,
 * with their code read through one window. */
static int batch_specs(struct attach_ctx *c, const struct usdt_probe *batch,
		       size_t n, struct usdt_link *link, uint64_t *refs,
		       uint64_t *cookies)
{
	struct usdt__note_src code;
	size_t i;
	int err = 0, ok;

	code_src_init(c, &code, batch, n);
	for (i = 0; i < n && !err; i++) {
		ok = site_ok(c, &batch[i]);
		if (ok <= 0) {
			err = ok;
			continue;
		}
		err = site_spec(c, &code, link, &batch[i], c->cnt, refs,
				cookies);
		c->cnt++;
	}
	usdt__note_src_free(&code);
	return err;
}

/* Sites read and built at a time: what an attach holds of them. */
#define PICK_BATCH 4096

/* Every site that matches, read a batch at a time, into the link. The
 * IP map grows once for the whole attach. */
static int attach_specs(struct attach_ctx *c, struct usdt_link *link,
			uint64_t *refs, uint64_t *cookies)
{
	size_t max = c->matched < PICK_BATCH ? c->matched : PICK_BATCH;
	struct usdt_probe *batch;
	long got = 0;
	int err;

	/* Room for every call site of the file (an upper bound of its
	 * specs), so that its other names attach with no new chunk: no
	 * RCU grace period. */
	err = usdt__store_reserve(c->st, &c->take, c->matched,
				  c->file->probe_cnt,
				  (uint64_t)c->matched *
					  c->maker->fds_per_site);
	if (err)
		return err;
	batch = calloc(max, sizeof(*batch));
	if (!batch)
		return -ENOMEM;
	while (!err && (got = usdt__pick_next(c->pick, batch, max)) > 0) {
		err = batch_specs(c, batch, (size_t)got, link, refs, cookies);
		usdt__probes_clear(batch, (size_t)got);
	}
	free(batch);
	return err ? err : got < 0 ? (int)got : attach_found(c);
}

/* Everything after the file is known; c is prepared. */
static struct usdt_link *attach_sites(struct attach_ctx *c)
{
	uint64_t *refs = NULL, *cookies = NULL;
	struct usdt_link *link = NULL;
	int err;

	err = attach_check_file(c);
	if (!err)
		err = attach_match(c);
	if (err)
		goto out;
	refs = calloc(c->matched, sizeof(*refs));
	cookies = calloc(c->matched, sizeof(*cookies));
	link = refs && cookies ? usdt__link_alloc(c) : NULL;
	if (!link) {
		err = -ENOMEM;
		goto out;
	}
	err = attach_specs(c, link, refs, cookies);
	/* The new specs and storage are in the maps before any uprobe can
	 * read them. */
	if (!err && (err = usdt__store_flush(c->st)))
		pr_warn("%s:%s: cannot write the specs: %s\n", c->provider,
			c->name, usdt__errstr(err));
	if (!err)
		err = c->maker->make(c, link, refs, cookies);
	if (err) {
		usdt__link_unwind(link);
		link = NULL;
		goto out;
	}
	/* refs is no longer needed: it is big enough to sort IDs in. */
	link->spec_cnt =
		count_distinct(link->held.ids, link->held.id_cnt, (int *)refs);
	usdt__store_get(c->st);
	pr_debug("attached '%s' to %zu sites of %s:%s in '%s' (%s, %u specs%s)\n",
		 bpf_program__name(c->prog), c->cnt, c->provider, c->name,
		 c->file->path, c->maker->what, link->spec_cnt,
		 c->take.use_ip ? ", IP map" : "");
out:
	free(refs);
	free(cookies);
	usdt__pick_end(c->pick);
	return link ? link : usdt__err_ptr(err);
}

static bool attach_args_ok(const struct usdt_manager *man,
			   const struct bpf_program *prog, pid_t pid,
			   const char *provider, const char *name,
			   const struct usdt_attach_opts *opts)
{
	return man && man->store && prog && provider && name && pid >= -1 &&
	       OPTS_VALID(opts, usdt_attach_opts);
}

/* -EBUSY, said, in a child of the store's owner: its spec IDs and
 * storage slots are the parent's to give, which it goes on doing. */
static int attach_forked(const struct usdt__store *st, const char *provider,
			 const char *name)
{
	if (!usdt__store_forked(st))
		return 0;
	pr_warn("%s:%s: the manager belongs to process %d, of which this is a child: its maps are the parent's; make a BPF object and a manager here\n",
		provider, name, (int)st->owner);
	return -EBUSY;
}

struct usdt__store *usdt__manager_store(struct usdt_manager *man)
{
	if (man->specs_map && bpf_map__fd(man->specs_map) >= 0) {
		struct usdt__outer specs = usdt__outer_of(man->specs_map);
		struct usdt__outer ips = usdt__outer_of(man->ip_map);

		specs.head_fd = bpf_map__fd(man->spec_head);
		specs.head_cnt = bpf_map__max_entries(man->spec_head) - 1;

		usdt__store_bind(man->store, &specs, &ips);
		if (man->storage_map)
			man->store->storage.outer =
				usdt__outer_of(man->storage_map);
	}
	return man->store;
}

static struct attach_ctx manager_ctx(struct usdt_manager *man,
				     const struct bpf_program *prog, pid_t pid,
				     const char *provider, const char *name)
{
	return (struct attach_ctx){ .st = usdt__manager_store(man),
				    .obj = man->obj,
				    .prog = prog,
				    .pid = pid,
				    .provider = provider,
				    .name = name };
}

struct usdt_link *
usdt_manager__attach_file(struct usdt_manager *man,
			  const struct bpf_program *prog, pid_t pid,
			  const struct usdt_file *file, const char *provider,
			  const char *name, const struct usdt_attach_opts *opts)
{
	struct attach_ctx c;
	int err;

	if (!attach_args_ok(man, prog, pid, provider, name, opts) || !file)
		return usdt__err_ptr(-EINVAL);
	c = manager_ctx(man, prog, pid, provider, name);
	c.file = file;
	err = attach_forked(c.st, provider, name);
	if (!err)
		err = attach_prepare(&c, opts);
	if (err)
		return usdt__err_ptr(err);
	return attach_sites(&c);
}

/* c (its manager, program, pid, probe) and path checked: attach. */
struct usdt_link *usdt__attach_by_path(struct attach_ctx *c, const char *path,
				       const struct usdt_attach_opts *opts)
{
	const char *provider = c->provider, *name = c->name;
	struct usdt_file *file = NULL;
	char real_path[PATH_MAX];
	int err, fd;

	err = attach_forked(c->st, provider, name);
	if (!err)
		err = attach_prepare(c, opts);
	if (err)
		return usdt__err_ptr(err);
	/* Resolved and opened once: from here on, only this fd counts. */
	fd = usdt__resolve_open(c->pid, path, real_path, sizeof(real_path));
	if (fd < 0) {
		pr_warn("%s:%s: cannot open '%s': %s\n", provider, name, path,
			fd == -ENOEXEC ? "not a regular file" :
					 usdt__errstr(fd));
		return usdt__err_ptr(fd);
	}
	err = usdt__file_cached(c->st, fd, real_path, &file);
	if (err) {
		pr_warn("%s:%s: cannot read '%s': %s\n", provider, name,
			real_path, usdt__errstr(err));
		return usdt__err_ptr(err);
	}
	c->file = file;
	return attach_sites(c);
}

struct usdt_link *usdt_manager__attach(struct usdt_manager *man,
				       const struct bpf_program *prog,
				       pid_t pid, const char *path,
				       const char *provider, const char *name,
				       const struct usdt_attach_opts *opts)
{
	struct attach_ctx c;

	if (!attach_args_ok(man, prog, pid, provider, name, opts) || !path)
		return usdt__err_ptr(-EINVAL);
	c = manager_ctx(man, prog, pid, provider, name);
	return usdt__attach_by_path(&c, path, opts);
}
