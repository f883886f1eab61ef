// SPDX-License-Identifier: BSD-2-Clause
/*
 * The attach engine: find the target file, pick the call sites, give each
 * one a spec ID, and attach the program with one uprobe_multi link or one
 * perf uprobe per site. Any failure unwinds everything the call did.
 *
 * One file from read to attach: the target is opened once, its notes are
 * read from that descriptor, the nop5 check (when asked) reads the same
 * descriptor, and the kernel is given the same open file as
 * /proc/self/fd/N. A path is never opened twice, so whoever controls a
 * directory or a symlink on it cannot make the kernel apply our offsets
 * and semaphore offsets to some other file. Where a process's mappings are consulted, files are matched
 * by device and inode, never by name.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf_version.h>
#include <linux/bpf.h>

#include "reader/arch_ops.h"
#include "reader/file.h"
#include "kernel/linkids.h"
#include "attach/attach.h"
#include "reader/notes.h"
#include "reader/noteidx.h"
#include "proc/procmap.h"
#include "proc/resolve.h"

/*
 * A live attach.
 * Invariant: each of site_cnt sites holds one reference on site_ids[i];
 * ips[0..ip_cnt) are the IP-map keys this link wrote; the kernel side is
 * either multi_fd >= 0 or perf[0..perf_cnt). The link reaches the
 * maps only through man's own descriptors, never through the bpf_object.
 */
/*
 * One allocation: the struct, then its arrays, each with room for cap
 * call sites (link_alloc()): a program attached one name at a time holds
 * thousands of these, 64 bytes each for one site. Counts fit 32 bits: a
 * file has at most USDT__MAX_SITES call sites. The arrays, in order:
 *   uint64_t offsets[cap]	where each site's uprobe is, in the file
 *   long ips[cap]		IP-map keys (has_ips)
 *   struct bpf_link *perf[cap]	per-site uprobes (has_perf)
 *   int site_ids[cap]		spec IDs, site_cnt of them taken
 *   uint32_t slots[]		storage slots this link holds: one per site
 *				(slot_per_site) or one for all; slot_cnt
 */
struct usdt_link {
	struct usdt_manager *man;
	int multi_fd;
	uint32_t cap;
	uint32_t perf_cnt;
	uint32_t site_cnt;
	uint32_t ip_cnt;
	uint32_t spec_cnt;	/* distinct IDs among site_ids */
	uint32_t slot_cnt;
	bool pinned;		/* the kernel link outlives us: keep its
				 * spec IDs and IP-map entries */
	bool slot_per_site;
	bool has_ips, has_perf;
	/* The kernel side is a struct bpf_link of libbpf's that the user
	 * holds (usdt__attach_ext()): its kernel ID, and the fd it had. */
	bool ext;
	uint32_t ext_id;
	int ext_fd;
	struct bpf_link *ext_link;	/* until handed out */
};

static uint64_t *link_offsets(const struct usdt_link *link)
{
	return (uint64_t *)(link + 1);
}

static long *link_ips(const struct usdt_link *link)
{
	return (long *)(link_offsets(link) + link->cap);
}

static struct bpf_link **link_perf(const struct usdt_link *link)
{
	return (struct bpf_link **)(link_ips(link) +
				    (link->has_ips ? link->cap : 0));
}

static int *link_site_ids(const struct usdt_link *link)
{
	return (int *)(link_perf(link) + (link->has_perf ? link->cap : 0));
}

static uint32_t *link_slots(const struct usdt_link *link)
{
	return (uint32_t *)(link_site_ids(link) + link->cap);
}

/* One attach call: what it was asked, and what it has found so far. */
struct attach_ctx {
	struct usdt_manager *man;
	const struct bpf_program *prog;
	const struct usdt_file *file;
	const struct usdt__arch_ops *host;
	const struct usdt__features *feat;
	pid_t pid;			/* -1, or a real pid */
	bool maps_file;			/* pid > 0 maps the file now */
	const char *provider, *name;
	uint64_t cookie;		/* usdt_attach_opts.usdt_cookie */
	const void *storage;		/* initial value, or NULL */
	bool per_site;
	bool use_ip, use_multi;
	bool ext;			/* make a struct bpf_link of libbpf's */
	bool red_zone;			/* allow_red_zone_writes: may skip */
	/* The sites that match (matched of them), read a batch at a time
	 * (attach_specs()); cnt taken so far, broken skipped. */
	struct usdt__pick *pick;
	size_t matched, cnt, broken;
	/* The first site taken whose semaphore the loader clears. */
	const char *cleared_prov, *cleared_name;
	uint64_t cleared_sema;
	char kpath[32];			/* what the kernel opens */
};

/* ---------------------------------------------------------------------- */
/* The file in a process                                                  */

/*
 * Find an executable mapping of the file in process pid, one that maps
 * file offset off, and its run-time address. Matched by device and inode
 * (usdt__mapping_is()), so any name of the file works and no other file
 * with that name does; read-only mappings of the same file (a loader's
 * first look, or anyone's mmap) are not where code runs. Returns 0,
 * -ENOENT, or the error that left a mapping unknown.
 */
static int runtime_addr(pid_t pid, const struct usdt_file *file, uint64_t off,
			uint64_t *addr)
{
	const struct usdt__map_id *id;
	struct usdt__mapping m;
	char *line = NULL;
	size_t cap = 0;
	int err = usdt__file_map_id(file, &id), is;
	FILE *f;

	if (err)
		return err;
	err = -ENOENT;
	f = usdt__maps_open(pid);
	if (!f)
		return -ENOENT;
	while (err == -ENOENT && usdt__maps_next(f, &line, &cap, &m) > 0) {
		if (!m.exec || off < m.off || off - m.off >= m.end - m.start)
			continue;
		is = usdt__mapping_is(pid, &m, id);
		if (is > 0)
			*addr = m.start + (off - m.off);
		if (is)
			err = is > 0 ? 0 : is;
	}
	free(line);
	fclose(f);
	return err;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * Can a link for process pid to the file ever fire? Not when the process
 * has no address space (it exited: a zombie), nor when it runs another
 * file of the same name and not this one (the file was replaced on disk
 * since the process mapped it: the link would wait for a file the process
 * will never map). A process that maps neither may still map the file
 * later (exec, dlopen): *maps says whether it maps it now. Returns 0,
 * -ESRCH, the error that left it unknown (logged), or -ENOMEM.
 */
static int check_process(const struct attach_ctx *c, bool *maps)
{
	const char *base = base_name(c->file->path);
	const struct usdt__map_id *id;
	bool any = false, other = false;
	struct usdt__mapping m;
	char *line = NULL;
	size_t cap = 0;
	int ours = usdt__file_map_id(c->file, &id);
	FILE *f;

	if (ours)
		return ours;
	f = usdt__maps_open(c->pid);

	while (f && !ours && usdt__maps_next(f, &line, &cap, &m) > 0) {
		any = true;
		if (!m.exec)
			continue;
		ours = usdt__mapping_is(c->pid, &m, id);
		if (!ours && !strcmp(base_name(m.path), base))
			other = true;
	}
	free(line);
	if (f)
		fclose(f);
	if (ours < 0) {
		pr_warn("%s:%s: cannot tell whether process %d runs %s: /proc/%d/map_files/: %s%s\n",
			c->provider, c->name, c->pid, c->file->path, c->pid,
			usdt__errstr(ours),
			ours == -EPERM ? " (a file on btrfs, or on an overlay before Linux 6.8, is told apart from others there, which needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE)" : "");
		return ours;
	}
	/* Nothing mapped: gone, a zombie, or caught in an exec() between
	 * its old image and its new one (maps empty for a moment), which
	 * maps the file later if at all. */
	if (!any && usdt__proc_gone(c->pid)) {
		pr_warn("%s:%s: process %d does not exist or has exited\n",
			c->provider, c->name, c->pid);
		return -ESRCH;
	}
	if (!ours && other) {
		pr_warn("%s:%s: process %d runs another '%s' than %s (replaced on disk? what it runs is in /proc/%d/map_files/, its executable /proc/%d/exe)\n",
			c->provider, c->name, c->pid, base, c->file->path,
			c->pid, c->pid);
		return -ESRCH;
	}
	*maps = ours > 0;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The files a manager keeps                                              */

static bool file_current(const struct usdt_file *file, const struct stat *st)
{
	return file->dev == st->st_dev && file->ino == st->st_ino &&
	       file->size == st->st_size &&
	       file->mtime.tv_sec == st->st_mtim.tv_sec &&
	       file->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/*
 * The parsed file for the open fd (taken over): one the manager read
 * before if it is the same inode, unchanged (size and mtime), else read
 * now and kept, the oldest kept file making room. The manager owns the
 * result.
 */
static int file_cached(struct usdt_manager *man, int fd, const char *path,
		       struct usdt_file **out)
{
	struct usdt_file *file;
	struct stat st;
	size_t i, n = USDT__ARRAY_SIZE(man->files);
	int err;

	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	for (i = 0; i < n && man->files[i]; i++) {
		file = man->files[i];
		if (!file_current(file, &st))
			continue;
		/* Most recent first. */
		memmove(&man->files[1], &man->files[0], i * sizeof(file));
		man->files[0] = file;
		close(fd);
		*out = file;
		return 0;
	}
	err = usdt__file_open_fd(fd, path, &file);
	if (err)
		return err;
	usdt_file__close(man->files[n - 1]);
	memmove(&man->files[1], &man->files[0], (n - 1) * sizeof(file));
	man->files[0] = file;
	*out = file;
	return 0;
}

void usdt__file_cache_clear(struct usdt_manager *man)
{
	size_t i;

	for (i = 0; i < USDT__ARRAY_SIZE(man->files); i++) {
		usdt_file__close(man->files[i]);
		man->files[i] = NULL;
	}
}

/* ---------------------------------------------------------------------- */
/* Attaching                                                              */

/* Detach a link from the kernel; the first error, and nothing to detach
 * left behind in either case. */
static int link_detach(struct usdt_link *link)
{
	int err = 0, e;
	size_t i;

	if (link->multi_fd >= 0 && close(link->multi_fd))
		err = -errno;
	link->multi_fd = -1;
	for (i = 0; i < link->perf_cnt; i++) {
		struct bpf_link *l = link_perf(link)[i];

		/* libbpf's detach disables the perf event, which a fork()
		 * shares with the parent: a child only closes its fd. The
		 * perf event's own fd, when libbpf holds a second one,
		 * stays open in the child: libbpf does not give it out. */
		if (usdt__manager_forked(link->man)) {
			bpf_link__disconnect(l);
			close(bpf_link__fd(l));
		}
		e = bpf_link__destroy(l);
		err = err ? err : e;
	}
	link->perf_cnt = 0;
	return err;
}

/* After link_detach(): give back the IP-map entries and spec IDs, free. */
static int link_release(struct usdt_link *link)
{
	struct usdt_manager *man = link->man;
	int err = 0, e;
	size_t i;

	/* A pinned kernel link goes on reading its specs and storage, and
	 * after a fork() the parent's does. */
	if (link->pinned || usdt__manager_forked(man))
		link->ip_cnt = link->site_cnt = link->slot_cnt = 0;
	for (i = 0; i < link->ip_cnt; i++) {
		e = usdt__ipmap_del(&man->ips, link_ips(link)[i]);
		if (!e)
			continue;
		err = err ? err : e;
		pr_warn("cannot delete IP-map entry 0x%lx: %s\n",
			link_ips(link)[i], usdt__errstr(e));
	}
	/* Last first: the free list is a stack, so the lowest IDs end up
	 * on top and are reused first. */
	for (i = link->site_cnt; i-- > 0;) {
		e = usdt__spec_put(man, link_site_ids(link)[i]);
		err = err ? err : e;
	}
	/* The specs given back are zeroed, a batch per chunk. */
	if (link->site_cnt)
		(void)usdt__chunks_flush_writes(&man->specs);
	for (i = link->slot_cnt; i-- > 0;)
		usdt__storage_put(&man->storage, link_slots(link)[i]);
	free(link);		/* and its arrays */
	return err;
}

/* Undo everything the link holds and free it; the first error met. */
static int link_unwind(struct usdt_link *link)
{
	/* Kernel first, so no hit sees a spec going away. */
	int err = link_detach(link), e = link_release(link);

	return err ? err : e;
}

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
	c->use_ip = OPTS_GET(opts, force_ip_map, false);
	c->cookie = OPTS_GET(opts, usdt_cookie, 0);
	c->storage = OPTS_GET(opts, storage, NULL);
	c->per_site = OPTS_GET(opts, storage_per_site, false);
	c->red_zone = OPTS_GET(opts, allow_red_zone_writes, false);
	if (mode > USDT_MODE_PERF)
		return -EINVAL;
	/* Its spec IDs would go to our maps and never be read. (An implicit
	 * manager's maps are the program's own.) */
	if (c->man->obj && !prog_of_object(c->prog, c->man->obj)) {
		pr_warn("%s:%s: program '%s' is not of the manager's BPF object '%s'\n",
			c->provider, c->name, pname,
			bpf_object__name(c->man->obj));
		return -EINVAL;
	}
	if (bpf_program__fd(c->prog) < 0) {
		pr_warn("%s:%s: program '%s' is not loaded\n", c->provider,
			c->name, pname);
		return -EINVAL;
	}
	err = usdt__storage_check(&c->man->storage,
				  c->man->obj ? bpf_object__name(c->man->obj) :
						"(no manager)",
				  c->storage, OPTS_GET(opts, storage_sz, 0),
				  c->per_site);
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
		c->use_ip = true;
	/* A program that reads no spec needs no way to find one. */
	if (c->man->specless)
		c->use_ip = false;
	/* Only force_ip_map gets here: without bpf_cookie the manager
	 * always keeps the path. */
	if (c->use_ip && !c->man->ip_map_kept) {
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
	if (c->use_ip && file->e_type == ET_DYN && c->pid < 0) {
		pr_warn("%s:%s: '%s' is position-independent: IP-map mode (%s) needs a pid\n",
			c->provider, c->name, file->path,
			c->feat->bpf_cookie ? "force_ip_map" :
					      "no bpf_cookie in this kernel");
		return c->feat->bpf_cookie ? -EINVAL : -EOPNOTSUPP;
	}
	/* A link to a file the process does not run would never fire. */
	if (c->pid > 0 && (err = check_process(c, &c->maps_file)))
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
		c->cleared_prov = p->provider;	/* the index's: they stay */
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

/* The link and its arrays in one zeroed allocation: 8-byte elements
 * first, after the struct (a multiple of 8 bytes), then 4-byte ones. */
static struct usdt_link *link_alloc(const struct attach_ctx *c)
{
	size_t n = c->matched, ips = c->use_ip ? n : 0;
	size_t perf = c->use_multi || c->ext ? 0 : n;
	size_t slots = c->storage ? (c->per_site ? n : 1) : 0;
	struct usdt_link *link;

	_Static_assert(sizeof(struct usdt_link) % 8 == 0, "tail alignment");
	link = calloc(1, sizeof(*link) + n * sizeof(uint64_t) +
			       ips * sizeof(long) +
			       perf * sizeof(struct bpf_link *) +
			       n * sizeof(int) + slots * sizeof(uint32_t));
	if (!link)
		return NULL;
	link->man = c->man;
	link->multi_fd = -1;
	link->cap = (uint32_t)n;
	link->has_ips = ips;
	link->has_perf = perf;
	link->slot_per_site = c->per_site;
	link->ext = c->ext;
	link->ext_fd = -1;
	return link;
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
	if (!c->red_zone || !c->host->attach_skip ||
	    c->file->fd < 0 || c->file->size <= 0)
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

/* Site i's IP-map entry: its run-time address -> spec ID and slot. */
static int add_ip(const struct attach_ctx *c, struct usdt_link *link,
		  const struct usdt_probe *p, uint64_t off, int skip,
		  const struct usdt_ip_val *val)
{
	uint64_t abs = p->vaddr + (uint64_t)skip;
	long key;
	int err;

	err = c->file->e_type == ET_DYN ?
		      runtime_addr(c->pid, c->file, off, &abs) : 0;
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
	key = (long)abs;
	err = usdt__ipmap_add(&c->man->ips, usdt__ip_outer_fd(c->man), key,
			      val);
	if (err) {
		pr_warn("%s:%s: cannot add IP 0x%lx to the IP map: %s%s\n",
			p->provider, p->name, key, usdt__errstr(err),
			err == -EEXIST ? " (the site is already attached in IP-map mode)" :
			err == -E2BIG ? " (at its limit: raise usdt_manager_opts.max_ips or USDT_MAX_IP_CNT)" : "");
		return err;
	}
	link_ips(link)[link->ip_cnt++] = key;
	return 0;
}

/* Site i (p)'s storage slot + 1 (0: none), taking a slot for it if it is
 * the link's first site or storage is per site. */
static int site_slot(const struct attach_ctx *c, struct usdt_link *link,
		     const struct usdt_probe *p, size_t i, uint32_t *slot1)
{
	int err;

	*slot1 = 0;
	if (!c->storage)
		return 0;
	if (i && !c->per_site) {
		*slot1 = link_slots(link)[0] + 1;
		return 0;
	}
	err = usdt__storage_get(&c->man->storage, c->storage,
				&link_slots(link)[link->slot_cnt]);
	if (err) {
		if (err == -E2BIG)
			pr_warn("%s:%s: out of storage slots (%u in use; raise usdt_manager_opts.max_storage or USDT_MAX_STORAGE_CNT)\n",
				p->provider, p->name,
				c->man->storage.slots.live_cnt);
		return err;
	}
	*slot1 = link_slots(link)[link->slot_cnt++] + 1;
	return 0;
}

/* Site p, taken as site i: its spec ID, storage slot, offset and cookie,
 * and its IP-map entry where cookies are not used. */
static int site_spec(const struct attach_ctx *c, struct usdt__note_src *code,
		     struct usdt_link *link, const struct usdt_probe *p,
		     size_t i, uint64_t *refs, uint64_t *cookies)
{
	struct usdt_ip_val val;
	struct usdt_spec spec;
	int j, id, skip, err;

	skip = site_skip(c, code, p);
	link_offsets(link)[i] = p->file_off + (uint64_t)skip;
	refs[i] = p->sema_off;
	if (c->man->specless)
		return 0;	/* no spec, no slot: cookie 0 */
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
	id = usdt__spec_get(c->man, &spec);
	if (id < 0) {
		if (id == -E2BIG)
			pr_warn("%s:%s: out of spec IDs (%u in use; raise usdt_manager_opts.max_specs or USDT_MAX_SPEC_CNT)\n",
				p->provider, p->name, c->man->specs.live_cnt);
		return id;
	}
	link_site_ids(link)[link->site_cnt++] = id;
	err = site_slot(c, link, p, i, &val.slot);
	if (err)
		return err;
	val.spec_id = (uint32_t)id;
	cookies[i] = c->use_ip ? 0 :
		     ((uint64_t)val.spec_id + 1) |
		     (uint64_t)val.slot << USDT_COOKIE_SLOT_SHIFT;
	if (c->use_ip)
		return add_ip(c, link, p, link_offsets(link)[i], skip, &val);
	return 0;
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
	uint32_t n = c->matched > UINT32_MAX ? UINT32_MAX :
					       (uint32_t)c->matched;
	struct usdt_probe *batch;
	long got = 0;
	int err = 0;

	if (c->use_ip && (err = usdt__ipmap_reserve(
				  &c->man->ips, usdt__ip_outer_fd(c->man), n))) {
		if (err == -E2BIG)
			pr_warn("%s:%s: no room for %zu more IP-map entries (%u in use, at most %u: raise usdt_manager_opts.max_ips or USDT_MAX_IP_CNT)\n",
				c->provider, c->name, c->matched,
				c->man->ips.cnt, c->man->ips.cap);
		return err;
	}
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

/*
 * File descriptors a perf uprobe takes: libbpf's perf event, and the BPF
 * link over it (kernels since 5.15; an older one attaches by ioctl and
 * takes one, so this counts high there).
 */
#define FDS_PER_PERF_SITE 2

/* Open descriptors below limit (the ones that use up the limit's room),
 * or -1 when /proc cannot say. */
static long open_fds_below(rlim_t limit)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;
	int self;

	if (!d)
		return -1;
	self = dirfd(d);
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (e->d_name[0] != '.' && !*end && fd != self &&
		    (rlim_t)fd < limit)
			n++;
	}
	closedir(d);
	return n;
}

/*
 * Room for the descriptors of c->cnt perf uprobes under the soft
 * RLIMIT_NOFILE, checked before the first is made, so that the attach
 * fails whole with -EMFILE and the numbers rather than stop at some site
 * and unwind. The limit is the host program's: raising it would let
 * descriptors past FD_SETSIZE into a program that uses select(), so the
 * message says to raise it, and the caller decides.
 */
static int perf_fd_room(const struct attach_ctx *c)
{
	uint64_t need = (uint64_t)c->cnt * FDS_PER_PERF_SITE;
	struct rlimit rl;
	long used;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;	/* the kernel will say */
	used = open_fds_below(rl.rlim_cur);
	if (used < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    (uint64_t)used + need <= rl.rlim_cur)
		return 0;
	pr_warn("%s:%s: %zu perf uprobes in '%s' need %llu file descriptors, %ld are open, and the soft RLIMIT_NOFILE is %llu (hard %llu): raise the soft limit to at least %llu (setrlimit(), ulimit -n), or attach with uprobe_multi\n",
		c->provider, c->name, c->cnt, c->file->path,
		(unsigned long long)need, used,
		(unsigned long long)rl.rlim_cur,
		(unsigned long long)rl.rlim_max,
		(unsigned long long)(used + need));
	return -EMFILE;
}

/*
 * Where the specs have no room for this attach: room for every call site
 * of its file (an upper bound of its specs), so that the file's other
 * names attach with no new chunk, and so with no RCU grace period (the
 * chunks of one attach go into the outer map in one batch, which waits
 * once). Before Linux 6.8 a batch waits once per entry: there, chunks
 * are made only as specs need them. Each chunk of specs holds a
 * descriptor: at most half the room the soft RLIMIT_NOFILE leaves goes
 * to chunks made ahead of need.
 */
static void reserve_specs(const struct attach_ctx *c)
{
	size_t want = c->file->probe_cnt > c->matched ? c->file->probe_cnt :
							c->matched;
	uint64_t max_new = UINT32_MAX;
	struct rlimit rl;
	long used;

	if (!c->feat->outer_batch_one_wait ||
	    usdt__spec_room(c->man, c->matched))
		return;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    (used = open_fds_below(rl.rlim_cur)) >= 0) {
		uint64_t left = rl.rlim_cur > (rlim_t)used ?
					rl.rlim_cur - (rlim_t)used : 0;

		if (!c->use_multi)
			left = left > (uint64_t)c->matched * FDS_PER_PERF_SITE ?
				       left - (uint64_t)c->matched *
						      FDS_PER_PERF_SITE : 0;
		max_new = left / 2;
	}
	usdt__spec_reserve(c->man, want,
			   max_new > UINT32_MAX ? UINT32_MAX : (uint32_t)max_new);
}

/* Why the kernel may refuse a semaphore site with EINVAL, if it has one. */
#define USDT__CLASH_HINT " (a site with a semaphore: the kernel refuses one when another uprobe sits there with another semaphore offset or none, another tracer's perhaps; dmesg says \"ref_ctr_offset mismatch\")"

static const char *clash_hint(int err, const uint64_t *refs, size_t n)
{
	size_t i;

	for (i = 0; err == -EINVAL && i < n; i++)
		if (refs[i])
			return USDT__CLASH_HINT;
	return "";
}

#if !(LIBBPF_MAJOR_VERSION > 1 || LIBBPF_MINOR_VERSION >= 3)
/* The new mount API (Linux 5.2), by number: glibc has wrappers only from
 * 2.36 on. The same numbers on every arch. */
#define USDT__NR_fsopen 430
#define USDT__NR_fsconfig 431
#define USDT__NR_fsmount 432
#define USDT__FSCONFIG_CMD_CREATE 6
#define USDT__FSMOUNT_CLOEXEC 1

/*
 * A BPF file system of our own that no mount namespace sees: made with
 * fsopen()/fsmount() and never attached anywhere, reached only through
 * its descriptor (/proc/self/fd/N), and gone when that is closed. So the
 * hand-over below needs no mounted bpffs and leaves nothing in anyone's
 * view of the file system. Needs CAP_SYS_ADMIN (and no seccomp filter
 * that refuses the calls): the descriptor, or -errno.
 */
static int private_bpffs(void)
{
	int fs, mnt;

	fs = (int)syscall(USDT__NR_fsopen, "bpf", 1 /* FSOPEN_CLOEXEC */);
	if (fs < 0)
		return -errno;
	if (syscall(USDT__NR_fsconfig, fs, USDT__FSCONFIG_CMD_CREATE, NULL,
		    NULL, 0)) {
		mnt = -errno;
	} else {
		mnt = (int)syscall(USDT__NR_fsmount, fs, USDT__FSMOUNT_CLOEXEC,
				   0);
		if (mnt < 0)
			mnt = -errno;
	}
	close(fs);
	return mnt;
}

/* A mounted BPF file system's mount point, from /proc/self/mounts; 0 or
 * -ENOENT. */
static int bpffs_dir(char *dir, size_t size)
{
	char *line = NULL, mnt[PATH_MAX], type[32];
	size_t cap = 0;
	int err = -ENOENT;
	FILE *f = fopen("/proc/self/mounts", "re");

	if (!f)
		return -ENOENT;
	while (err && getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%*s %4095s %31s", mnt, type) == 2 &&
		    !strcmp(type, "bpf") && strlen(mnt) < size &&
		    !strchr(mnt, '\\')) {	/* no escaped characters */
			strcpy(dir, mnt);
			err = 0;
		}
	}
	free(line);
	fclose(f);
	return err;
}

/*
 * Where to pin a link for a moment, into pin: in a BPF file system of our
 * own (*mnt its descriptor, to close after), else, without CAP_SYS_ADMIN,
 * in a mounted one (*mnt -1), where others may see it for that moment.
 */
static int pin_place(char *pin, size_t size, int *mnt)
{
	static unsigned int seq;
	char dir[PATH_MAX];
	int err;

	*mnt = private_bpffs();
	if (*mnt >= 0) {
		snprintf(pin, size, "/proc/self/fd/%d/link", *mnt);
		return 0;
	}
	err = bpffs_dir(dir, sizeof(dir)) ? *mnt : 0;
	/* No "." in a BPF file system name. */
	if (!err)
		snprintf(pin, size, "%s/libusdt_%d_%u", dir, (int)getpid(),
			 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	return err;
}

/*
 * libbpf before 1.3 makes no uprobe_multi link of its own; it opens a
 * pinned one. So: our link, pinned for a moment (pin_place()), opened by
 * libbpf (bpf_link__open()), which then holds its own fd, and unpinned
 * through libbpf, so that the link has no pin path and the user can pin it
 * where they like.
 */
static struct bpf_link *ext_multi(const struct attach_ctx *c,
				  const struct usdt_link *link,
				  const uint64_t *refs, const uint64_t *cookies)
{
	char pin[PATH_MAX + 64];
	struct bpf_link *l = NULL;
	int fd, mnt, err;

	err = pin_place(pin, sizeof(pin), &mnt);
	if (err) {
		pr_warn("%s:%s: with libbpf %d.%d, a uprobe_multi link becomes libbpf's through a BPF file system: one of libusdt's own needs CAP_SYS_ADMIN and Linux 5.2 (%s), and none is mounted; use usdt_manager__attach()\n",
			c->provider, c->name, LIBBPF_MAJOR_VERSION,
			LIBBPF_MINOR_VERSION, usdt__errstr(err));
		errno = -err;
		return NULL;
	}
	fd = usdt__uprobe_multi_create(bpf_program__fd(c->prog), c->pid,
				       c->kpath, link_offsets(link), refs,
				       cookies, c->cnt);
	if (fd < 0) {
		if (mnt >= 0)
			close(mnt);
		errno = -fd;
		return NULL;
	}
	err = bpf_obj_pin(fd, pin) ? -errno : 0;
	if (!err) {
		l = bpf_link__open(pin);
		err = l ? bpf_link__unpin(l) : -errno;
		if (!l || err)
			unlink(pin);
		if (err && l) {
			bpf_link__destroy(l);
			l = NULL;
		}
	}
	close(fd);
	if (mnt >= 0)
		close(mnt);	/* our file system goes */
	if (err)
		pr_warn("%s:%s: cannot hand the uprobe_multi link to libbpf through '%s': %s\n",
			c->provider, c->name, pin, usdt__errstr(err));
	errno = -err;
	return l;
}
#endif

/* libbpf's struct bpf_link for the sites: a uprobe_multi link, or one
 * site's perf uprobe. */
static struct bpf_link *ext_kernel_link(const struct attach_ctx *c,
					const struct usdt_link *link,
					const uint64_t *refs,
					const uint64_t *cookies)
{
	if (c->use_multi) {
#if LIBBPF_MAJOR_VERSION > 1 || LIBBPF_MINOR_VERSION >= 3
		LIBBPF_OPTS(bpf_uprobe_multi_opts, mo,
			    .offsets = (const unsigned long *)link_offsets(link),
			    .ref_ctr_offsets = (const unsigned long *)refs,
			    .cookies = (const __u64 *)cookies, .cnt = c->cnt);

		return bpf_program__attach_uprobe_multi(c->prog, c->pid,
							c->kpath, NULL, &mo);
#else
		return ext_multi(c, link, refs, cookies);
#endif
	}
	if (c->cnt != 1) {
		pr_warn("%s:%s: %zu call sites in '%s' need a uprobe_multi link (Linux 6.6) or a perf uprobe each, which no one struct bpf_link holds: use usdt_manager__attach()\n",
			c->provider, c->name, c->cnt, c->file->path);
		errno = EOPNOTSUPP;
		return NULL;
	}
	{
		LIBBPF_OPTS(bpf_uprobe_opts, uo,
			    .ref_ctr_offset = (size_t)refs[0],
			    .bpf_cookie = cookies[0]);

		return bpf_program__attach_uprobe_opts(c->prog, c->pid, c->kpath,
						       (size_t)link_offsets(link)[0],
						       &uo);
	}
}

static int attach_ext(const struct attach_ctx *c, struct usdt_link *link,
		      const uint64_t *refs, const uint64_t *cookies)
{
	struct bpf_link *l = ext_kernel_link(c, link, refs, cookies);
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int err;

	if (!l) {
		err = -errno;
		if (err != -EOPNOTSUPP)
			pr_warn("%s:%s: attach to '%s' (%zu sites) failed: %s%s\n",
				c->provider, c->name, c->file->path, c->cnt,
				usdt__errstr(err), clash_hint(err, refs, c->cnt));
		return err;
	}
	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(bpf_link__fd(l), &info, &len);
	if (err) {
		err = -errno;
		pr_warn("%s:%s: cannot read the new link's ID: %s\n",
			c->provider, c->name, usdt__errstr(err));
		bpf_link__destroy(l);
		return err;
	}
	link->ext_link = l;
	link->ext_fd = bpf_link__fd(l);
	link->ext_id = info.id;
	return 0;
}

/* The kernel side: one uprobe_multi link, or a perf uprobe per site. */
static int attach_kernel(const struct attach_ctx *c, struct usdt_link *link,
			 const uint64_t *refs, const uint64_t *cookies)
{
	struct bpf_link *l;
	size_t i;
	int err;

	if (c->ext)
		return attach_ext(c, link, refs, cookies);
	if (c->use_multi) {
		err = usdt__uprobe_multi_create(bpf_program__fd(c->prog),
						c->pid, c->kpath,
						link_offsets(link), refs,
						cookies, c->cnt);
		if (err < 0) {
			pr_warn("%s:%s: uprobe_multi attach to '%s' (%zu sites) failed: %s%s\n",
				c->provider, c->name, c->file->path, c->cnt,
				usdt__errstr(err), clash_hint(err, refs, c->cnt));
			return err;
		}
		link->multi_fd = err;
		return 0;
	}
	err = perf_fd_room(c);
	if (err)
		return err;
	for (i = 0; i < c->cnt; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo,
			    .ref_ctr_offset = (size_t)refs[i],
			    .bpf_cookie = cookies[i]);

		l = bpf_program__attach_uprobe_opts(c->prog, c->pid, c->kpath,
						    (size_t)link_offsets(link)[i],
						    &uo);
		err = libbpf_get_error(l);
		if (err) {
			pr_warn("%s:%s: uprobe at 0x%llx of '%s' failed: %s%s\n",
				c->provider, c->name,
				(unsigned long long)link_offsets(link)[i],
				c->file->path, usdt__errstr(err),
				clash_hint(err, &refs[i], 1));
			return err;
		}
		link_perf(link)[link->perf_cnt++] = l;
	}
	return 0;
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
	link = refs && cookies ? link_alloc(c) : NULL;
	if (!link) {
		err = -ENOMEM;
		goto out;
	}
	reserve_specs(c);
	err = attach_specs(c, link, refs, cookies);
	/* The new specs and storage are in the maps before any uprobe can
	 * read them. */
	if (!err && (err = usdt__store_flush(c->man)))
		pr_warn("%s:%s: cannot write the specs: %s\n", c->provider,
			c->name, usdt__errstr(err));
	if (!err)
		err = attach_kernel(c, link, refs, cookies);
	if (err) {
		link_unwind(link);
		link = NULL;
		goto out;
	}
	/* refs is no longer needed: it is big enough to sort IDs in. */
	link->spec_cnt = count_distinct(link_site_ids(link), link->site_cnt,
					(int *)refs);
	c->man->link_cnt++;
	pr_debug("attached '%s' to %zu sites of %s:%s in '%s' (%s, %u specs%s)\n",
		 bpf_program__name(c->prog), c->cnt, c->provider, c->name,
		 c->file->path, c->use_multi ? "uprobe_multi" : "perf uprobes",
		 link->spec_cnt, c->use_ip ? ", IP map" : "");
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
	return man && prog && provider && name && pid >= -1 &&
	       OPTS_VALID(opts, usdt_attach_opts) && !man->freed;
}

/* -EBUSY, said, in a child of the manager's owner: its spec IDs and
 * storage slots are the parent's to give, which it goes on doing. */
static int attach_forked(const struct usdt_manager *man, const char *provider,
			 const char *name)
{
	if (!usdt__manager_forked(man))
		return 0;
	pr_warn("%s:%s: the manager belongs to process %d, of which this is a child: its maps are the parent's; make a BPF object and a manager here\n",
		provider, name, (int)man->owner);
	return -EBUSY;
}

struct usdt_link *usdt_manager__attach_file(struct usdt_manager *man,
					    const struct bpf_program *prog,
					    pid_t pid,
					    const struct usdt_file *file,
					    const char *provider,
					    const char *name,
					    const struct usdt_attach_opts *opts)
{
	struct attach_ctx c = { .man = man, .prog = prog, .pid = pid,
				.file = file, .provider = provider,
				.name = name };
	int err;

	if (!attach_args_ok(man, prog, pid, provider, name, opts) || !file)
		return usdt__err_ptr(-EINVAL);
	err = attach_forked(man, provider, name);
	if (!err)
		err = attach_prepare(&c, opts);
	if (err)
		return usdt__err_ptr(err);
	return attach_sites(&c);
}

/* c (its manager, program, pid, probe) and path checked: attach. */
static struct usdt_link *attach_by_path(struct attach_ctx *c, const char *path,
					const struct usdt_attach_opts *opts)
{
	const char *provider = c->provider, *name = c->name;
	struct usdt_file *file = NULL;
	char real_path[PATH_MAX];
	int err, fd;

	err = attach_forked(c->man, provider, name);
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
	err = file_cached(c->man, fd, real_path, &file);
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
	struct attach_ctx c = { .man = man, .prog = prog, .pid = pid,
				.provider = provider, .name = name };

	if (!attach_args_ok(man, prog, pid, provider, name, opts) || !path)
		return usdt__err_ptr(-EINVAL);
	return attach_by_path(&c, path, opts);
}

/* ---------------------------------------------------------------------- */
/* Links of libbpf's (usdt_program__attach())                              */

/*
 * Does /proc/self/fd say that fd is another kind of file than a BPF link
 * (link) or map? Only a readable answer counts: without /proc mounted, or
 * on any error, it says no.
 */
static bool kind_differs(int fd, bool link)
{
	char path[32], what[32];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, what, sizeof(what) - 1);
	if (n <= 0)
		return false;
	what[n] = '\0';
	return strcmp(what,
		      link ? "anon_inode:bpf_link" : "anon_inode:bpf-map");
}

int usdt__fd_is_bpf(int fd, bool link, uint32_t id)
{
	/* Room for either kind's info: the ID sits at the same offset. */
	union {
		struct bpf_map_info map;
		struct bpf_link_info link;
	} info;
	__u32 len = sizeof(info);
	int err;

	_Static_assert(offsetof(struct bpf_map_info, id) ==
			       offsetof(struct bpf_link_info, id),
		       "one ID offset");
	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (!err)
		return info.map.id == id && !kind_differs(fd, link);
	/* Definite: no such descriptor, or one that is no BPF object (the
	 * kernel's EINVAL, as the info asked for is all zero). Anything else
	 * (ENOMEM, ...) says nothing either way. */
	return err == -EBADF || err == -EINVAL ? 0 : err;
}

/*
 * Does the kernel link still run? Through the fd it had when it is still
 * that link, else by its ID; where a lookup by ID is refused (it needs
 * CAP_SYS_ADMIN), in the list of live links (src/kernel/linkids.c), taken once
 * per sweep into *live. Kept when neither can tell: a pin may hold it.
 */
static bool ext_alive(const struct usdt_link *link,
		      struct usdt__link_ids *live, int *live_err)
{
	int fd;

	/* Not the fd, or no answer through it: by ID. */
	if (usdt__fd_is_bpf(link->ext_fd, true, link->ext_id) > 0)
		return true;
	fd = bpf_link_get_fd_by_id(link->ext_id);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	if (errno == ENOENT)
		return false;
	if (errno != EPERM)
		return true;
	if (*live_err == 1)
		*live_err = usdt__link_ids_get(live);
	return *live_err || usdt__link_ids_has(live, link->ext_id);
}

void usdt__ext_sweep(struct usdt_manager *man)
{
	struct usdt__link_ids live = { 0 };
	int live_err = 1;	/* not listed yet */
	size_t i, n = 0;

	for (i = 0; i < man->ext_cnt; i++) {
		struct usdt_link *l = man->ext[i];

		if (ext_alive(l, &live, &live_err)) {
			man->ext[n++] = l;
			continue;
		}
		link_release(l);
		man->link_cnt--;
	}
	man->ext_cnt = man->ext_swept = n;
	usdt__link_ids_free(&live);
}

void usdt__manager_adopt(struct usdt_manager *man, struct usdt_manager *imp)
{
	size_t i;

	usdt__file_cache_clear(imp);
	man->ext = imp->ext;
	man->ext_cnt = imp->ext_cnt;
	man->ext_cap = imp->ext_cap;
	man->ext_swept = imp->ext_swept;
	for (i = 0; i < man->ext_cnt; i++)
		man->ext[i]->man = man;
	usdt__store_move(man, imp);
}

void usdt__ext_drop(struct usdt_manager *man)
{
	size_t i;

	for (i = 0; i < man->ext_cnt; i++) {
		man->ext[i]->pinned = true;	/* the maps are left as they are */
		link_release(man->ext[i]);
		man->link_cnt--;
	}
	man->ext_cnt = man->ext_swept = 0;
}

/* Before an attach: room for its record, and the dead records' IDs back
 * when there are twice as many records as at the last sweep, or when the
 * spec IDs run short. */
static int ext_room(struct usdt_manager *man)
{
	const struct usdt__chunks *s = &man->specs;
	struct usdt_link **v;
	size_t cap;

	if (man->ext_cnt >= 2 * man->ext_swept + 16 ||
	    (s->cap && (uint64_t)s->live_cnt * 8 >= (uint64_t)s->cap * 7))
		usdt__ext_sweep(man);
	if (man->ext_cnt < man->ext_cap)
		return 0;
	cap = man->ext_cap ? man->ext_cap * 2 : 16;
	v = usdt__reallocarray(man->ext, cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	man->ext = v;
	man->ext_cap = cap;
	return 0;
}

struct bpf_link *usdt__attach_ext(struct usdt_manager *man,
				  const struct bpf_program *prog, pid_t pid,
				  const char *path, const char *provider,
				  const char *name, uint64_t cookie)
{
	USDT_OPTS(usdt_attach_opts, o, .usdt_cookie = cookie);
	struct attach_ctx c = { .man = man, .prog = prog, .pid = pid,
				.provider = provider, .name = name,
				.ext = true };
	struct usdt_link *link;
	struct bpf_link *out;
	int err = ext_room(man);

	if (err)
		return usdt__err_ptr(err);
	link = attach_by_path(&c, path, &o);
	if (!link)
		return NULL;
	out = link->ext_link;
	link->ext_link = NULL;
	man->ext[man->ext_cnt++] = link;
	return out;
}

/* Drop a link's reference on its manager, and the manager's memory with
 * the last one after usdt_manager__free(). */
static void link_unref(struct usdt_manager *man)
{
	if (!--man->link_cnt && man->freed)
		usdt__manager_release(man);
}

int usdt_link__destroy(struct usdt_link *link)
{
	struct usdt_manager *man;
	int err;

	if (!link)
		return 0;
	man = link->man;
	err = link_unwind(link);
	link_unref(man);
	return usdt__err(err);
}

/*
 * Closing a kernel link waits for a grace period (~55 ms for a
 * uprobe_multi link on 6.x): one by one, 10,000 links take ten minutes.
 * Threads close them side by side, and the grace periods overlap.
 */
#define DETACH_THREADS 256

struct detach_job {
	struct usdt_link **links;
	size_t n;
	size_t next;		/* the next link to take, atomically */
	int err;		/* the first error, atomically */
};

static void *detach_worker(void *arg)
{
	struct detach_job *job = arg;
	size_t i;
	int e, none = 0;

	while ((i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED)) <
	       job->n) {
		if (!job->links[i])
			continue;
		e = link_detach(job->links[i]);
		if (e)
			__atomic_compare_exchange_n(&job->err, &none, e, false,
						    __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
		none = 0;
	}
	return NULL;
}

/* Detach links[0..n) from the kernel, in parallel where threads start. */
static int detach_all(struct usdt_link **links, size_t n)
{
	struct detach_job job = { .links = links, .n = n };
	pthread_t tids[DETACH_THREADS];
	size_t t, started = 0;

	for (t = 0; t < DETACH_THREADS && t + 1 < n; t++) {
		if (pthread_create(&tids[t], NULL, detach_worker, &job))
			break;
		started++;
	}
	/* This thread works too: with no thread started, it does it all. */
	detach_worker(&job);
	for (t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	return job.err;
}

int usdt_links__destroy(struct usdt_link **links, size_t n)
{
	struct usdt_manager *man;
	int err, e;
	size_t i;

	if (!links)
		return n ? usdt__err(-EINVAL) : 0;
	/* Every kernel link first, so no hit sees a spec going away; then
	 * the bookkeeping, which is not thread-safe, in this thread. */
	err = detach_all(links, n);
	for (i = 0; i < n; i++) {
		if (!links[i])
			continue;
		man = links[i]->man;
		e = link_release(links[i]);
		err = err ? err : e;
		link_unref(man);
		links[i] = NULL;
	}
	return usdt__err(err);
}

size_t usdt_link__site_cnt(const struct usdt_link *link)
{
	return link ? link->site_cnt : 0;
}

size_t usdt_link__spec_cnt(const struct usdt_link *link)
{
	return link ? link->spec_cnt : 0;
}

uint64_t usdt__link_offset(const struct usdt_link *link, size_t i)
{
	return i < link->site_cnt ? link_offsets(link)[i] : 0;
}

void *usdt_link__storage(const struct usdt_link *link, size_t site_index)
{
	if (!link) {
		errno = EINVAL;
		return NULL;
	}
	if (!link->slot_cnt || site_index >= link->site_cnt) {
		errno = ENOENT;
		return NULL;
	}
	return usdt__storage_at(&link->man->storage,
				link_slots(link)[link->slot_per_site ? site_index : 0]);
}

bool usdt_link__is_multi(const struct usdt_link *link)
{
	return link && link->multi_fd >= 0;
}

int usdt_link__fd(const struct usdt_link *link)
{
	if (!link)
		return usdt__err(-EINVAL);
	return link->multi_fd >= 0 ? link->multi_fd : usdt__err(-EOPNOTSUPP);
}

int usdt_link__pin(struct usdt_link *link, const char *path)
{
	int err;

	if (!link || !path)
		return usdt__err(-EINVAL);
	if (link->multi_fd < 0) {
		pr_warn("cannot pin '%s': per-site uprobes are one kernel object per call site\n",
			path);
		return usdt__err(-EOPNOTSUPP);
	}
	err = bpf_obj_pin(link->multi_fd, path);
	if (err) {
		err = -errno;
		pr_warn("cannot pin the link at '%s': %s\n", path,
			usdt__errstr(err));
		return usdt__err(err);
	}
	if (!link->pinned)
		link->man->pinned_cnt++;
	link->pinned = true;
	return 0;
}
