// SPDX-License-Identifier: BSD-2-Clause
/*
 * The attach engine: find the target file, pick the call sites, give each
 * one a spec ID, and attach the program with one uprobe_multi link or one
 * perf uprobe per site. Any failure unwinds everything the call did.
 */
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf_version.h>
#include <linux/bpf.h>

#include "manager.h"

/* The loader's per-arch library directories (Debian multiarch). */
#if defined(__x86_64__)
#define USDT__MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define USDT__MULTIARCH "aarch64-linux-gnu"
#elif defined(__s390x__)
#define USDT__MULTIARCH "s390x-linux-gnu"
#elif defined(__riscv)
#define USDT__MULTIARCH "riscv64-linux-gnu"
#else
#define USDT__MULTIARCH "unknown"
#endif

/*
 * A live attach.
 * Invariant: each of site_cnt sites holds one reference on site_ids[i];
 * ips[0..ip_cnt) are the IP-map keys this link wrote; the kernel side is
 * either multi_fd >= 0 or perf_links[0..perf_cnt).
 */
struct usdt_link {
	struct usdt_manager *man;
	int multi_fd;
	struct bpf_link **perf_links;
	size_t perf_cnt;
	int *site_ids;
	size_t site_cnt;
	long *ips;
	size_t ip_cnt;
	size_t spec_cnt;	/* distinct IDs among site_ids */
	bool pinned;		/* the kernel link outlives us: keep its
				 * spec IDs and IP-map entries */
	uint64_t *offsets;	/* where each site's uprobe is, in the file */
};

/* ---------------------------------------------------------------------- */
/* Finding the file                                                       */

/* Is path an ELF file for this host's machine? */
static bool host_elf(const char *path)
{
	const struct usdt__arch_ops *host = usdt__arch_host();
	unsigned char hdr[EI_NIDENT + 4];
	uint16_t machine;
	bool ok;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = read(fd, hdr, sizeof(hdr)) == (ssize_t)sizeof(hdr) &&
	     !memcmp(hdr, ELFMAG, SELFMAG) && hdr[EI_CLASS] == ELFCLASS64;
	close(fd);
	if (!ok || !host)
		return ok;
	memcpy(&machine, hdr + EI_NIDENT + 2, sizeof(machine));
	return machine == host->e_machine;
}

static bool try_dir(const char *dir, size_t dir_len, const char *name,
		    char *out, size_t out_sz)
{
	int n;

	if (!dir_len)
		return false;
	n = snprintf(out, out_sz, "%.*s/%s", (int)dir_len, dir, name);
	return n > 0 && (size_t)n < out_sz && host_elf(out);
}

static bool search_list(const char *list, char sep, const char *name,
			char *out, size_t out_sz)
{
	const char *p = list, *end;

	while (p && *p) {
		end = strchr(p, sep);
		if (!end)
			end = p + strlen(p);
		if (try_dir(p, (size_t)(end - p), name, out, out_sz))
			return true;
		p = *end ? end + 1 : NULL;
	}
	return false;
}

/* The directories of /etc/ld.so.conf and the files it includes. */
static bool search_ld_conf(const char *conf, const char *name, char *out,
			   size_t out_sz, int depth)
{
	char line[PATH_MAX];
	bool found = false;
	FILE *f;

	if (depth > 4)
		return false;
	f = fopen(conf, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *s = line, *e;

		s[strcspn(s, "#\n")] = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		e = s + strlen(s);
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = '\0';
		if (!*s)
			continue;
		if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t')) {
			glob_t g;
			size_t i;

			s += 8;
			while (*s == ' ' || *s == '\t')
				s++;
			if (glob(s, 0, NULL, &g))
				continue;
			for (i = 0; !found && i < g.gl_pathc; i++)
				found = search_ld_conf(g.gl_pathv[i], name, out,
						       out_sz, depth + 1);
			globfree(&g);
			continue;
		}
		found = try_dir(s, strlen(s), name, out, out_sz);
	}
	fclose(f);
	return found;
}

/* A library a process has mapped, by file name. */
static bool search_maps(pid_t pid, const char *name, char *out,
			size_t out_sz)
{
	char maps[64], line[PATH_MAX + 128];
	size_t name_len = strlen(name);
	bool found = false;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/'), *base;
		size_t len;

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		base = strrchr(path, '/') + 1;
		len = strlen(base);
		/* "libfoo.so" finds libfoo.so and libfoo.so.1.2. */
		if (len < name_len || memcmp(base, name, name_len) ||
		    (base[name_len] && base[name_len] != '.'))
			continue;
		if (pid == getpid())
			found = snprintf(out, out_sz, "%s", path) < (int)out_sz;
		else
			found = snprintf(out, out_sz, "/proc/%d/root%s", pid,
					 path) < (int)out_sz;
	}
	fclose(f);
	return found;
}

/*
 * Turn the user's path into one the kernel can open: a path with a '/' is
 * used as it is; a bare name is looked up in the process's maps, then
 * where the dynamic loader would look.
 */
static int resolve_path(pid_t pid, const char *path, char *out, size_t out_sz)
{
	static const char *const dirs =
		"/lib/" USDT__MULTIARCH ":/usr/lib/" USDT__MULTIARCH
		":/lib64:/usr/lib64:/lib:/usr/lib:/usr/local/lib";

	if (strchr(path, '/')) {
		if ((size_t)snprintf(out, out_sz, "%s", path) >= out_sz)
			return -ENAMETOOLONG;
		return access(out, R_OK) ? -errno : 0;
	}
	if (pid > 0 && search_maps(pid, path, out, out_sz))
		return 0;
	if (search_list(getenv("LD_LIBRARY_PATH"), ':', path, out, out_sz) ||
	    search_ld_conf("/etc/ld.so.conf", path, out, out_sz, 0) ||
	    search_list(dirs, ':', path, out, out_sz))
		return 0;
	return -ENOENT;
}

/*
 * The run-time address of file offset off of path in process pid, from
 * /proc/PID/maps (matched by device and inode, so any name of the file
 * works).
 */
static int runtime_addr(pid_t pid, const char *path, uint64_t off,
			uint64_t *addr)
{
	char maps[64], line[PATH_MAX + 128];
	unsigned long long start, end, moff, ino;
	unsigned int maj, min;
	struct stat st;
	int err = -ENOENT;
	FILE *f;

	if (stat(path, &st))
		return -errno;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu", &start, &end,
			   &moff, &maj, &min, &ino) != 6)
			continue;
		if (ino != st.st_ino || makedev(maj, min) != st.st_dev)
			continue;
		if (off >= moff && off < moff + (end - start)) {
			*addr = start + (off - moff);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

/* ---------------------------------------------------------------------- */
/* Attaching                                                              */

/*
 * One uprobe_multi link for cnt sites of the file at path (the kernel opens
 * it by that name): the link's fd, or -errno.
 */
#if LIBBPF_MAJOR_VERSION > 1 || LIBBPF_MINOR_VERSION >= 3
/* libbpf 1.3+ has uprobe_multi in bpf_link_create()'s options. */
static int attach_multi(const struct bpf_program *prog, pid_t pid,
			const char *path, const uint64_t *offs,
			const uint64_t *ref_ctrs, const uint64_t *cookies,
			size_t cnt)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo,
		    .uprobe_multi.path = path,
		    .uprobe_multi.offsets = (const unsigned long *)offs,
		    .uprobe_multi.ref_ctr_offsets =
			    (const unsigned long *)ref_ctrs,
		    .uprobe_multi.cookies = (const __u64 *)cookies,
		    .uprobe_multi.cnt = (__u32)cnt,
		    .uprobe_multi.pid = pid < 0 ? 0 : (__u32)pid);

	_Static_assert(sizeof(unsigned long) == sizeof(uint64_t),
		       "uprobe_multi offsets are unsigned longs");
	return bpf_link_create(bpf_program__fd(prog), 0,
			       (enum bpf_attach_type)USDT__TRACE_UPROBE_MULTI,
			       &lo);
}
#else
/* Older libbpf: the bpf() syscall itself. */
static int attach_multi(const struct bpf_program *prog, pid_t pid,
			const char *path, const uint64_t *offs,
			const uint64_t *ref_ctrs, const uint64_t *cookies,
			size_t cnt)
{
	union bpf_attr attr;
	char *lc;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = bpf_program__fd(prog);
	attr.link_create.attach_type = USDT__TRACE_UPROBE_MULTI;
	/*
	 * link_create.uprobe_multi (6.6+; Debian 12's uapi headers predate
	 * it): path, offsets, ref_ctr_offsets, cookies (u64s at 16..47),
	 * then cnt, flags, pid (u32s at 48..59).
	 */
	lc = (char *)&attr.link_create;
	*(uint64_t *)(lc + 16) = (uintptr_t)path;
	*(uint64_t *)(lc + 24) = (uintptr_t)offs;
	*(uint64_t *)(lc + 32) = (uintptr_t)ref_ctrs;
	*(uint64_t *)(lc + 40) = (uintptr_t)cookies;
	*(uint32_t *)(lc + 48) = (uint32_t)cnt;
	*(uint32_t *)(lc + 56) = pid < 0 ? 0 : (uint32_t)pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}
#endif

static void link_unwind(struct usdt_link *link)
{
	struct usdt_manager *man = link->man;
	size_t i;

	/* Kernel first, so no hit sees a spec going away. */
	if (link->multi_fd >= 0)
		close(link->multi_fd);
	for (i = 0; i < link->perf_cnt; i++)
		bpf_link__destroy(link->perf_links[i]);
	if (link->pinned)
		link->ip_cnt = link->site_cnt = 0;
	for (i = 0; i < link->ip_cnt; i++)
		if (bpf_map_delete_elem(bpf_map__fd(man->ip_map), &link->ips[i]))
			pr_warn("cannot delete IP-map entry 0x%lx: %s\n",
				link->ips[i], usdt__errstr(-errno));
	/* Last first: the free list is a stack, so the lowest IDs end up
	 * on top and are reused first. */
	for (i = link->site_cnt; i-- > 0;)
		usdt__spec_put(man, link->site_ids[i]);
	free(link->perf_links);
	free(link->offsets);
	free(link->site_ids);
	free(link->ips);
	free(link);
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

struct usdt_link *usdt_manager__attach(struct usdt_manager *man,
				       const struct bpf_program *prog,
				       pid_t pid, const char *path,
				       const char *provider, const char *name,
				       const struct usdt_attach_opts *opts)
{
	const struct usdt__arch_ops *host = usdt__arch_host();
	const struct usdt__features *feat;
	uint64_t *offs = NULL, *refs = NULL, *cookies = NULL;
	const struct usdt_probe **sites = NULL;
	struct usdt_file *file = NULL;
	struct usdt_link *link = NULL;
	enum usdt_attach_mode mode;
	size_t i, cnt = 0, broken = 0;
	char real_path[PATH_MAX];
	bool use_ip, prog_multi, use_multi;
	uint64_t cookie;
	int err, id, fd = -1;

	if (!man || !prog || !path || !provider || !name || pid < -1 ||
	    !OPTS_VALID(opts) || man->freed)
		return usdt__err_ptr(-EINVAL);
	mode = OPTS_GET(opts, mode, USDT_MODE_AUTO);
	use_ip = OPTS_GET(opts, force_ip_map, false);
	cookie = OPTS_GET(opts, usdt_cookie, 0);
	if (mode > USDT_MODE_PERF)
		return usdt__err_ptr(-EINVAL);
	if (bpf_program__fd(prog) < 0) {
		pr_warn("%s:%s: program '%s' is not loaded\n", provider, name,
			bpf_program__name(prog));
		return usdt__err_ptr(-EINVAL);
	}
	if (!host)
		return usdt__err_ptr(-ENOTSUP);

	feat = usdt__features();
	if (!feat->bpf_cookie)
		use_ip = true;
	prog_multi = bpf_program__expected_attach_type(prog) ==
		     (enum bpf_attach_type)USDT__TRACE_UPROBE_MULTI;
	if (mode == USDT_MODE_PERF && prog_multi) {
		pr_warn("%s:%s: program '%s' was loaded for uprobe_multi links; create the manager before bpf_object__load() with no_uprobe_multi for per-site uprobes\n",
			provider, name, bpf_program__name(prog));
		return usdt__err_ptr(-EINVAL);
	}
	if (mode == USDT_MODE_MULTI && !prog_multi) {
		pr_warn("%s:%s: program '%s' was not loaded for uprobe_multi links (kernel support: %s)\n",
			provider, name, bpf_program__name(prog),
			feat->uprobe_multi ? "yes" : "no");
		return usdt__err_ptr(-ENOTSUP);
	}
	use_multi = prog_multi;
	if (pid == 0)
		pid = getpid();

	err = resolve_path(pid, path, real_path, sizeof(real_path));
	if (err) {
		pr_warn("%s:%s: cannot find '%s': %s\n", provider, name, path,
			usdt__errstr(err));
		return usdt__err_ptr(err);
	}
	file = usdt_file__open(real_path, NULL);
	if (!file) {
		err = -errno;
		pr_warn("%s:%s: cannot read '%s': %s\n", provider, name,
			real_path, usdt__errstr(err));
		return usdt__err_ptr(err);
	}
	if (file->e_machine != host->e_machine) {
		pr_warn("%s:%s: '%s' is for %s, this host runs %s\n", provider,
			name, real_path,
			file->arch ? file->arch->name : "another architecture",
			host->name);
		err = -ENOTSUP;
		goto err_out;
	}
	if (use_ip && file->e_type == ET_DYN && pid < 0) {
		pr_warn("%s:%s: '%s' is position-independent: IP-map mode (no bpf_cookie%s) needs a pid\n",
			provider, name, real_path,
			feat->bpf_cookie ? " requested" : " in this kernel");
		err = -ENOTSUP;
		goto err_out;
	}

	sites = calloc(file->probe_cnt ? file->probe_cnt : 1, sizeof(*sites));
	if (!sites) {
		err = -ENOMEM;
		goto err_out;
	}
	for (i = 0; i < file->probe_cnt; i++) {
		const struct usdt_probe *p = &file->probes[i];

		if (fnmatch(provider, p->provider, 0) ||
		    fnmatch(name, p->name, 0))
			continue;
		if (p->status < 0) {
			pr_warn("%s:%s: skipping the site at 0x%llx in '%s': %s\n",
				p->provider, p->name,
				(unsigned long long)p->vaddr, real_path,
				p->error);
			broken++;
			continue;
		}
		if (p->sema_off && !feat->ref_ctr) {
			pr_warn("%s:%s: has a semaphore and the kernel has no uprobe ref_ctr_offset\n",
				p->provider, p->name);
			err = -ENOTSUP;
			goto err_out;
		}
		sites[cnt++] = p;
	}
	if (!cnt) {
		pr_warn("%s:%s: no such probe in '%s'%s\n", provider, name,
			real_path, broken ? " (only broken sites)" : "");
		err = broken ? -EINVAL : -ENOENT;
		goto err_out;
	}

	link = calloc(1, sizeof(*link));
	offs = calloc(cnt, sizeof(*offs));
	refs = calloc(cnt, sizeof(*refs));
	cookies = calloc(cnt, sizeof(*cookies));
	if (!link || !offs || !refs || !cookies) {
		free(link);
		link = NULL;
		err = -ENOMEM;
		goto err_out;
	}
	link->man = man;
	link->multi_fd = -1;
	link->site_ids = calloc(cnt, sizeof(*link->site_ids));
	link->offsets = calloc(cnt, sizeof(*link->offsets));
	if (use_ip)
		link->ips = calloc(cnt, sizeof(*link->ips));
	if (!use_multi)
		link->perf_links = calloc(cnt, sizeof(*link->perf_links));
	if (!link->site_ids || !link->offsets || (use_ip && !link->ips) ||
	    (!use_multi && !link->perf_links)) {
		err = -ENOMEM;
		goto err_unwind;
	}

	if (feat->uprobe_syscall && host->attach_skip) {
		fd = open(real_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			goto err_unwind;
		}
	}

	/* Spec IDs, and IP-map entries where cookies are not used. */
	for (i = 0; i < cnt; i++) {
		const struct usdt_probe *p = sites[i];
		struct usdt_spec spec;
		unsigned char insn[16];
		ssize_t n;
		int j, skip = 0;

		if (fd >= 0) {
			n = pread(fd, insn, sizeof(insn), (off_t)p->file_off);
			if (n > 0)
				skip = host->attach_skip(insn, (size_t)n);
		}
		memset(&spec, 0, sizeof(spec));
		spec.arg_cnt = (uint16_t)p->arg_cnt;
		spec.usr_cookie = cookie;
		for (j = 0; j < p->arg_cnt && j < USDT_MAX_ARG_CNT; j++) {
			spec.args[j] = p->args[j].spec;
			/* The IP the program sees moves with the uprobe. */
			if (spec.args[j].flags & USDT_SPEC_F_IPREL)
				spec.args[j].val_off -= (uint64_t)skip;
		}
		id = usdt__spec_get(man, &spec);
		if (id < 0) {
			err = id;
			if (err == -E2BIG)
				pr_warn("%s:%s: out of spec IDs (%u in use; raise usdt_manager_opts.max_specs or USDT_MAX_SPEC_CNT)\n",
					p->provider, p->name, man->live_cnt);
			goto err_unwind;
		}
		link->site_ids[link->site_cnt++] = id;
		offs[i] = p->file_off + (uint64_t)skip;
		link->offsets[i] = offs[i];
		refs[i] = p->sema_off;
		cookies[i] = use_ip ? 0 : (uint64_t)id + 1;
		if (use_ip) {
			uint64_t abs = p->vaddr + (uint64_t)skip;
			long key;

			if (file->e_type == ET_DYN) {
				err = runtime_addr(pid, real_path, offs[i],
						   &abs);
				if (err) {
					pr_warn("%s:%s: process %d does not map '%s' at offset 0x%llx\n",
						p->provider, p->name, pid,
						real_path,
						(unsigned long long)p->file_off);
					goto err_unwind;
				}
			}
			key = (long)abs;
			if (bpf_map_update_elem(bpf_map__fd(man->ip_map), &key,
						&id, BPF_NOEXIST)) {
				err = -errno;
				pr_warn("%s:%s: cannot add IP 0x%lx to the IP map: %s%s\n",
					p->provider, p->name, key,
					usdt__errstr(err),
					err == -EEXIST ? " (the site is already attached in IP-map mode)" :
					err == -E2BIG ? " (map full: raise usdt_manager_opts.max_ips)" : "");
				goto err_unwind;
			}
			link->ips[link->ip_cnt++] = key;
		}
	}

	if (use_multi) {
		err = attach_multi(prog, pid, real_path, offs, refs, cookies,
				   cnt);
		if (err < 0) {
			pr_warn("%s:%s: uprobe_multi attach to '%s' (%zu sites) failed: %s\n",
				provider, name, real_path, cnt,
				usdt__errstr(err));
			goto err_unwind;
		}
		link->multi_fd = err;
	} else {
		for (i = 0; i < cnt; i++) {
			LIBBPF_OPTS(bpf_uprobe_opts, uo,
				    .ref_ctr_offset = (size_t)refs[i],
				    .bpf_cookie = cookies[i]);
			struct bpf_link *l;

			l = bpf_program__attach_uprobe_opts(prog, pid, real_path,
							    (size_t)offs[i], &uo);
			err = libbpf_get_error(l);
			if (err) {
				pr_warn("%s:%s: uprobe at 0x%llx of '%s' failed: %s\n",
					sites[i]->provider, sites[i]->name,
					(unsigned long long)offs[i], real_path,
					usdt__errstr(err));
				goto err_unwind;
			}
			link->perf_links[link->perf_cnt++] = l;
		}
	}

	/* offs is no longer needed: it is big enough to sort IDs in. */
	link->spec_cnt = count_distinct(link->site_ids, link->site_cnt,
					(int *)offs);
	man->link_cnt++;
	pr_debug("attached '%s' to %zu sites of %s:%s in '%s' (%s, %zu specs%s)\n",
		 bpf_program__name(prog), cnt, provider, name, real_path,
		 use_multi ? "uprobe_multi" : "perf uprobes", link->spec_cnt,
		 use_ip ? ", IP map" : "");
	goto out;

err_unwind:
	link_unwind(link);
	link = NULL;
err_out:
out:
	/* One exit for both: the scratch arrays and the file go either way. */
	if (fd >= 0)
		close(fd);
	free(offs);
	free(refs);
	free(cookies);
	free(sites);
	usdt_file__close(file);
	return link ? link : usdt__err_ptr(err);
}

int usdt_link__destroy(struct usdt_link *link)
{
	struct usdt_manager *man;

	if (!link)
		return 0;
	man = link->man;
	link_unwind(link);
	if (!--man->link_cnt && man->freed)
		usdt__manager_release(man);
	return 0;
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
	return i < link->site_cnt ? link->offsets[i] : 0;
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
	link->pinned = true;
	return 0;
}
