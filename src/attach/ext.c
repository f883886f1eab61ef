// SPDX-License-Identifier: BSD-2-Clause
/*
 * Links of libbpf's: the kernel side of an attach made as a struct
 * bpf_link of libbpf's (usdt__maker_ext), for __attach() and
 * usdt_program__attach() (src/libbpf/progh.c), which must return one; and
 * the records that keep such a link's spec IDs, IP-map entries and slots.
 *
 * Why libbpf's public API forces this bookkeeping. A struct bpf_link is
 * libbpf's: the user destroys it with bpf_link__destroy(), or a skeleton's
 * __destroy() does, and libbpf tells no one. libbpf's API has no hook on a
 * link's end (bpf_link__destroy() calls only a detach callback that a
 * link made by libbpf itself carries, and libusdt cannot make a link of
 * libbpf's with its own callback), so what the link held in the store is
 * given back when its kernel link is seen gone: each record keeps the
 * link's kernel ID and the fd it had, and usdt__ext_sweep() asks the
 * kernel which of them still run (ext_alive()): before an attach once
 * the records have doubled since the last sweep or spec IDs run short
 * (ext_room()), and when a manager that adopted them is freed
 * (src/manager.c). A link released through its last pin is the kernel's
 * work queue's: its ID goes before its uprobes do, so its last hits may
 * read specs given back here and taken again (test_native's
 * test_reclaim_caps waits that out); no ID says when the uprobes are
 * gone. libbpf before 1.3 cannot make a
 * uprobe_multi link for a program at all: libusdt makes one and hands it
 * over through a pin in a BPF file system of its own (ext_multi()).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>
#include <linux/bpf.h>

#include "kernel/kernel.h"
#include "attach/link.h"

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
		    !strchr(mnt, '\\')) { /* no escaped characters */
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
				       c->kpath, link->offsets, refs, cookies,
				       c->cnt);
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
		close(mnt); /* our file system goes */
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
			    .offsets = (const unsigned long *)link->offsets,
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

		return bpf_program__attach_uprobe_opts(c->prog, c->pid,
						       c->kpath,
						       (size_t)link->offsets[0],
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
				usdt__errstr(err),
				usdt__clash_hint(err, refs, c->cnt));
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

/* The kernel side is the user's to destroy: nothing here detaches it.
 * Its record goes by usdt__ext_sweep(). */
static int ext_detach(struct usdt_link *link)
{
	return 0;
}

const struct usdt__link_maker usdt__maker_ext = {
	.what = "libbpf's bpf_link",
	.make = attach_ext,
	.detach = ext_detach,
};

/* ---------------------------------------------------------------------- */
/* The records                                                            */

/*
 * Does /proc/self/fd say that fd is another kind of file than a BPF
 * object of that kind? Only a readable answer counts: without /proc
 * mounted, or on any error, it says no.
 */
static bool kind_differs(int fd, enum usdt__bpf_kind kind)
{
	static const char *const names[] = {
		[USDT__BPF_MAP] = "anon_inode:bpf-map",
		[USDT__BPF_LINK] = "anon_inode:bpf_link",
		[USDT__BPF_BTF] = "anon_inode:btf",
	};
	char path[32], what[32];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, what, sizeof(what) - 1);
	if (n <= 0)
		return false;
	what[n] = '\0';
	return strcmp(what, names[kind]);
}

int usdt__fd_is_bpf(int fd, enum usdt__bpf_kind kind, uint32_t id)
{
	union {
		struct bpf_map_info map;
		struct bpf_link_info link;
		struct bpf_btf_info btf;
	} info;
	__u32 len = sizeof(info), got;
	int err;

	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	/* Definite: no such descriptor, or one that is no BPF object (the
	 * kernel's EINVAL, as the info asked for is all zero). Anything else
	 * (ENOMEM, ...) says nothing either way. */
	if (err)
		return err == -EBADF || err == -EINVAL ? 0 : err;
	got = kind == USDT__BPF_BTF  ? info.btf.id :
	      kind == USDT__BPF_LINK ? info.link.id :
				       info.map.id;
	return got == id && !kind_differs(fd, kind);
}

/*
 * Does the kernel link still run? Through the fd it had when it is still
 * that link, else by its ID; where a lookup by ID is refused (it needs
 * CAP_SYS_ADMIN), in the list of live links (src/kernel/linkids.c), taken once
 * per sweep into *live. Kept when neither can tell: a pin may hold it.
 */
static bool ext_alive(const struct usdt_link *link, struct usdt__link_ids *live,
		      int *live_err)
{
	int fd;

	/* Not the fd, or no answer through it: by ID. */
	if (usdt__fd_is_bpf(link->ext_fd, USDT__BPF_LINK, link->ext_id) > 0)
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

void usdt__ext_sweep(struct usdt__store *st)
{
	struct usdt__link_ids live = { 0 };
	int live_err = 1; /* not listed yet */
	size_t i, n = 0;

	for (i = 0; i < st->ext_cnt; i++) {
		struct usdt_link *l = st->ext[i];

		if (ext_alive(l, &live, &live_err)) {
			st->ext[n++] = l;
			continue;
		}
		usdt__link_release(l);
		usdt__store_put(st); /* never its holder's */
	}
	st->ext_cnt = st->ext_swept = n;
	usdt__link_ids_free(&live);
}

void usdt__ext_drop(struct usdt__store *st)
{
	size_t i;

	for (i = 0; i < st->ext_cnt; i++) {
		st->ext[i]->pinned = true; /* the maps are left as they are */
		usdt__link_release(st->ext[i]);
		usdt__store_put(st); /* never its holder's */
	}
	st->ext_cnt = st->ext_swept = 0;
}

/* Before an attach: room for its record, and the dead records' IDs back
 * when there are twice as many records as at the last sweep, or when the
 * spec IDs run short. */
static int ext_room(struct usdt__store *st)
{
	const struct usdt__chunks *s = &st->specs;
	struct usdt_link **v;
	size_t cap;

	if (st->ext_cnt >= 2 * st->ext_swept + 16 ||
	    (s->cap && (uint64_t)s->live_cnt * 8 >= (uint64_t)s->cap * 7))
		usdt__ext_sweep(st);
	if (st->ext_cnt < st->ext_cap)
		return 0;
	cap = st->ext_cap ? st->ext_cap * 2 : 16;
	v = usdt__reallocarray(st->ext, cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	st->ext = v;
	st->ext_cap = cap;
	return 0;
}

struct bpf_link *usdt__attach_ext(struct usdt__store *st,
				  const struct bpf_object *obj,
				  const struct bpf_program *prog, pid_t pid,
				  const char *path, const char *provider,
				  const char *name, uint64_t cookie)
{
	USDT_OPTS(usdt_attach_opts, o, .usdt_cookie = cookie);
	struct attach_ctx c = { .st = st,
				.obj = obj,
				.prog = prog,
				.pid = pid,
				.provider = provider,
				.name = name,
				.ext = true };
	struct usdt_link *link;
	struct bpf_link *out;
	int err = ext_room(st);

	if (err)
		return usdt__err_ptr(err);
	link = usdt__attach_by_path(&c, path, &o);
	if (!link)
		return NULL;
	out = link->ext_link;
	link->ext_link = NULL;
	st->ext[st->ext_cnt++] = link;
	return out;
}
