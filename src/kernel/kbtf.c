// SPDX-License-Identifier: BSD-2-Clause
/*
 * One fact from the kernel's BTF, read without loading it: the name of
 * the struct that bpf_user_pt_regs_t stands for (see probe_ctx_name() in
 * kfeatures.c). libbpf's btf__load_vmlinux_btf() holds all of
 * /sys/kernel/btf/vmlinux (about 6 MB) and its index in memory: with
 * libbpf 1.1.2 that alone raised the peak memory of every attaching
 * process from about 2 MB to 13 MB, five times what the attach itself
 * needs for 10,000 call sites. Here the file is read in passes through
 * one small buffer: the string section once for the typedef's name, the
 * type section once per hop from the typedef to the struct.
 *
 * Type records are walked as the BTF UAPI lays them out (<linux/btf.h>):
 * a struct btf_type, then data whose size depends on the kind and vlen.
 * A kind this reader does not know stops it (-EOPNOTSUPP): the caller then
 * asks libbpf.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/btf.h>

#include "kernel/kfeatures.h"
#include "base/base.h"

#define KBTF_BUF 65536
#define KBTF_HOPS 8 /* typedefs and qualifiers followed */

/*
 * The fields of the BTF header this reader uses, as the UAPI laid them out
 * from the start: 24 bytes. Newer kernels append fields (Linux 7.x adds
 * layout_off and layout_len, 32 bytes) and say so in hdr_len, which then
 * places the sections; so the header is never sized by the <linux/btf.h>
 * this file was built against, which would refuse every older kernel's
 * header when built against a newer one.
 */
struct kbtf_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t hdr_len;
	uint32_t type_off, type_len;
	uint32_t str_off, str_len;
};
_Static_assert(sizeof(struct kbtf_hdr) == 24, "BTF header v1 is 24 bytes");

struct kbtf {
	int fd;
	uint64_t type_off, type_end; /* the type section, in the file */
	uint64_t str_off, str_len;   /* the string section */
	uint64_t buf_at;	     /* file offset of buf[0] */
	size_t buf_len;
	unsigned char buf[KBTF_BUF];
};

/* Fill the buffer from file offset off. Returns 0, or -EIO at the end. */
static int kbtf_fill(struct kbtf *k, uint64_t off)
{
	ssize_t n = pread(k->fd, k->buf, sizeof(k->buf), (off_t)off);

	if (n < 0)
		return -errno;
	k->buf_at = off;
	k->buf_len = (size_t)n;
	return n ? 0 : -EIO;
}

/* len (<= KBTF_BUF) bytes at file offset off. Returns 0 or -EIO. */
static int kbtf_read(struct kbtf *k, uint64_t off, void *out, size_t len)
{
	int err;

	if (off < k->buf_at || off + len > k->buf_at + k->buf_len) {
		err = kbtf_fill(k, off);
		if (err)
			return err;
		if (len > k->buf_len)
			return -EIO;
	}
	memcpy(out, k->buf + (off - k->buf_at), len);
	return 0;
}

/* Bytes after the struct btf_type of a record of this kind and vlen. */
static long kbtf_extra(uint32_t kind, uint32_t vlen)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_ARRAY:
		return 12;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_DATASEC:
	case BTF_KIND_ENUM64:
		return 12L * vlen;
	case BTF_KIND_ENUM:
	case BTF_KIND_FUNC_PROTO:
		return 8L * vlen;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	default:
		return -1;
	}
}

/*
 * Walk the type records from id 1: the first one (id >= 1) that is `want`
 * (want_id, or else the typedef named at name_off). Its id into *id and
 * record into *t. Returns 0, -ENOENT, -EOPNOTSUPP or -EIO.
 */
static int kbtf_find(struct kbtf *k, uint32_t want_id, uint32_t name_off,
		     uint32_t *id, struct btf_type *t)
{
	uint64_t off = k->type_off;
	uint32_t cur = 1;
	long extra;
	int err;

	for (; off + sizeof(*t) <= k->type_end; cur++) {
		err = kbtf_read(k, off, t, sizeof(*t));
		if (err)
			return err;
		if (want_id ? cur == want_id :
			      BTF_INFO_KIND(t->info) == BTF_KIND_TYPEDEF &&
				      t->name_off == name_off) {
			*id = cur;
			return 0;
		}
		extra = kbtf_extra(BTF_INFO_KIND(t->info),
				   BTF_INFO_VLEN(t->info));
		if (extra < 0)
			return -EOPNOTSUPP;
		off += sizeof(*t) + (uint64_t)extra;
	}
	return -ENOENT;
}

/* The offset of the string name in the string section, or -ESRCH. */
static int64_t kbtf_str_find(struct kbtf *k, const char *name)
{
	size_t len = strlen(name), match = 0, i;
	uint64_t off, start = 0;
	bool alive = true;
	unsigned char c;
	int err;

	for (off = 0; off < k->str_len; off += k->buf_len) {
		err = kbtf_fill(k, k->str_off + off);
		if (err)
			return err;
		for (i = 0; i < k->buf_len && off + i < k->str_len; i++) {
			c = k->buf[i];
			if (!c) {
				if (alive && match == len)
					return (int64_t)start;
				start = off + i + 1;
				match = 0;
				alive = true;
			} else if (alive && match < len &&
				   c == (unsigned char)name[match]) {
				match++;
			} else {
				alive = false;
			}
		}
	}
	return -ESRCH;
}

static int kbtf_open(struct kbtf *k, const char *path)
{
	struct kbtf_hdr h;
	struct stat st;
	int err;

	k->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (k->fd < 0)
		return -errno;
	if (fstat(k->fd, &st))
		return -errno;
	err = kbtf_read(k, 0, &h, sizeof(h));
	if (err)
		return err;
	if (h.magic != BTF_MAGIC || h.hdr_len < sizeof(h) ||
	    (uint64_t)h.hdr_len + h.type_off + h.type_len >
		    (uint64_t)st.st_size ||
	    (uint64_t)h.hdr_len + h.str_off + h.str_len > (uint64_t)st.st_size)
		return -EOPNOTSUPP;
	k->type_off = (uint64_t)h.hdr_len + h.type_off;
	k->type_end = k->type_off + h.type_len;
	k->str_off = (uint64_t)h.hdr_len + h.str_off;
	k->str_len = h.str_len;
	return 0;
}

/* The string at off of the string section into buf, NUL-terminated. */
static int kbtf_str(struct kbtf *k, uint32_t off, char *buf, size_t size)
{
	size_t i;
	int err;

	for (i = 0; i < size && off + i < k->str_len; i++) {
		err = kbtf_read(k, k->str_off + off + i, &buf[i], 1);
		if (err)
			return err;
		if (!buf[i])
			return 0;
	}
	return -E2BIG;
}

/* Follow the typedef at name_off to a struct or union: its name into
 * buf. Returns 0, -ESRCH, or the error of reading. */
static int kbtf_ctx(struct kbtf *k, uint32_t name_off, char *buf, size_t size)
{
	struct btf_type t;
	uint32_t id, kind;
	int err, hop;

	err = kbtf_find(k, 0, name_off, &id, &t);
	for (hop = 0; !err && hop < KBTF_HOPS; hop++) {
		if (!t.type) /* void */
			return -ESRCH;
		err = kbtf_find(k, t.type, 0, &id, &t);
		if (err)
			break;
		kind = BTF_INFO_KIND(t.info);
		if (kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION)
			return kbtf_str(k, t.name_off, buf, size);
		if (kind != BTF_KIND_TYPEDEF && kind != BTF_KIND_VOLATILE &&
		    kind != BTF_KIND_CONST && kind != BTF_KIND_RESTRICT &&
		    kind != BTF_KIND_TYPE_TAG)
			return -ESRCH;
	}
	return err == -ENOENT || !err ? -ESRCH : err;
}

int usdt__btf_ctx_name(const char *path, char *buf, size_t size)
{
	struct kbtf *k = calloc(1, sizeof(*k));
	int64_t name_off;
	int err;

	if (!k)
		return -ENOMEM;
	err = kbtf_open(k, path);
	if (!err) {
		name_off = kbtf_str_find(k, "bpf_user_pt_regs_t");
		err = name_off < 0 ? (int)name_off :
				     kbtf_ctx(k, (uint32_t)name_off, buf, size);
	}
	if (k->fd >= 0)
		close(k->fd);
	free(k);
	return err;
}
