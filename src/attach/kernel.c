// SPDX-License-Identifier: BSD-2-Clause
/*
 * The link makers of our own kernel links (link.h): one uprobe_multi
 * link (Linux 6.6) for all the sites of an attach, whose fd the link
 * holds, or one perf uprobe per site, made through libbpf.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "attach/link.h"
#include "proc/proc.h"

/*
 * File descriptors a perf uprobe takes: libbpf's perf event, and the BPF
 * link over it (kernels since 5.15; an older one attaches by ioctl and
 * takes one, so this counts high there).
 */
#define FDS_PER_PERF_SITE 2

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
		return 0; /* the kernel will say */
	used = usdt__open_fds_below(rl.rlim_cur);
	if (used < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    (uint64_t)used + need <= rl.rlim_cur)
		return 0;
	pr_warn("%s:%s: %zu perf uprobes in '%s' need %llu file descriptors, %ld are open, and the soft RLIMIT_NOFILE is %llu (hard %llu): raise the soft limit to at least %llu (setrlimit(), ulimit -n), or attach with uprobe_multi\n",
		c->provider, c->name, c->cnt, c->file->path,
		(unsigned long long)need, used, (unsigned long long)rl.rlim_cur,
		(unsigned long long)rl.rlim_max,
		(unsigned long long)(used + need));
	return -EMFILE;
}

/* Why the kernel may refuse a semaphore site with EINVAL, if it has one. */
#define USDT__CLASH_HINT \
	" (a site with a semaphore: the kernel refuses one when another uprobe sits there with another semaphore offset or none, another tracer's perhaps; dmesg says \"ref_ctr_offset mismatch\")"

const char *usdt__clash_hint(int err, const uint64_t *refs, size_t n)
{
	size_t i;

	for (i = 0; err == -EINVAL && i < n; i++)
		if (refs[i])
			return USDT__CLASH_HINT;
	return "";
}

/* One uprobe_multi link for all the sites, its fd the link's. */
static int multi_make(const struct attach_ctx *c, struct usdt_link *link,
		      const uint64_t *refs, const uint64_t *cookies)
{
	int fd = usdt__uprobe_multi_create(bpf_program__fd(c->prog), c->pid,
					   c->kpath, link->offsets, refs,
					   cookies, c->cnt);

	if (fd < 0) {
		pr_warn("%s:%s: uprobe_multi attach to '%s' (%zu sites) failed: %s%s\n",
			c->provider, c->name, c->file->path, c->cnt,
			usdt__errstr(fd), usdt__clash_hint(fd, refs, c->cnt));
		return fd;
	}
	link->multi_fd = fd;
	return 0;
}

static int multi_detach(struct usdt_link *link)
{
	int err = 0;

	if (link->multi_fd >= 0 && close(link->multi_fd))
		err = -errno;
	link->multi_fd = -1;
	return err;
}

const struct usdt__link_maker usdt__maker_multi = {
	.what = "uprobe_multi",
	.make = multi_make,
	.detach = multi_detach,
};

static int perf_detach(struct usdt_link *link)
{
	int err = 0, e;
	size_t i;

	for (i = 0; i < link->perf_cnt; i++) {
		struct bpf_link *l = link->perf[i];

		/* libbpf's detach disables the perf event, which a fork()
		 * shares with the parent: a child only closes its fd. The
		 * perf event's own fd, when libbpf holds a second one,
		 * stays open in the child: libbpf does not give it out. */
		if (usdt__store_forked(link->st)) {
			bpf_link__disconnect(l);
			close(bpf_link__fd(l));
		}
		e = bpf_link__destroy(l);
		err = err ? err : e;
	}
	link->perf_cnt = 0;
	return err;
}

/* A perf uprobe per site, through libbpf; on error, those made go. */
static int perf_make(const struct attach_ctx *c, struct usdt_link *link,
		     const uint64_t *refs, const uint64_t *cookies)
{
	struct bpf_link *l;
	size_t i;
	int err = perf_fd_room(c);

	for (i = 0; !err && i < c->cnt; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo,
			    .ref_ctr_offset = (size_t)refs[i],
			    .bpf_cookie = cookies[i]);

		l = bpf_program__attach_uprobe_opts(c->prog, c->pid, c->kpath,
						    (size_t)link->offsets[i],
						    &uo);
		err = libbpf_get_error(l);
		if (err) {
			pr_warn("%s:%s: uprobe at 0x%llx of '%s' failed: %s%s\n",
				c->provider, c->name,
				(unsigned long long)link->offsets[i],
				c->file->path, usdt__errstr(err),
				usdt__clash_hint(err, &refs[i], 1));
			break;
		}
		link->perf[link->perf_cnt++] = l;
	}
	if (err)
		perf_detach(link);
	return err;
}

const struct usdt__link_maker usdt__maker_perf = {
	.what = "perf uprobes",
	.per_site = true,
	.fds_per_site = FDS_PER_PERF_SITE,
	.make = perf_make,
	.detach = perf_detach,
};
