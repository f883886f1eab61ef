// SPDX-License-Identifier: BSD-2-Clause
/*
 * The IDs of the machine's live BPF links, for telling whether a link the
 * library no longer holds an fd of still runs (usdt__ext_sweep(), in
 * src/attach/ext.c) where BPF_LINK_GET_FD_BY_ID is refused: that command needs
 * CAP_SYS_ADMIN, and a tracer may run with CAP_BPF and CAP_PERFMON only.
 * A BPF iterator over links (Linux 6.0, "bpf: Add bpf_link iterator")
 * needs no more than those two: a thirteen-instruction tracing program
 * writes each link's ID, and one read() loop takes them all.
 *
 * What the program reads is the kernel's: the iterator's context is
 * struct bpf_iter__bpf_link { meta; link; }, two pointers (the kernel's
 * DEFINE_BPF_ITER_FUNC lays every iterator's out so, one 8-byte slot per
 * member), the meta's first member is the seq_file, and the offset of
 * struct bpf_link's id comes from the kernel's BTF, which iterators need
 * anyway. The program, the link and the iterator are closed before
 * return: nothing stays loaded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "base/base.h"
#include "kernel/linkids.h"

/* More links than this on one machine: not worth the memory to list. */
#define LINKIDS_MAX (1U << 20)

/* The iterator target's BTF function and the byte offset of struct
 * bpf_link's id, from the kernel's BTF. */
static int iter_btf(__u32 *func_id, __u32 *id_off)
{
	const struct btf_member *m;
	const struct btf_type *t;
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id, i, err = -ENOENT;

	if (!vmlinux)
		return -errno ? -errno : -ENOENT;
	id = btf__find_by_name_kind(vmlinux, "bpf_iter_bpf_link",
				    BTF_KIND_FUNC);
	*func_id = id > 0 ? (__u32)id : 0;
	id = btf__find_by_name_kind(vmlinux, "bpf_link", BTF_KIND_STRUCT);
	t = id > 0 ? btf__type_by_id(vmlinux, id) : NULL;
	for (i = 0, m = t ? btf_members(t) : NULL; t && i < btf_vlen(t);
	     i++, m++) {
		if (strcmp(btf__name_by_offset(vmlinux, m->name_off), "id"))
			continue;
		*id_off = btf_member_bit_offset(t, i) / 8;
		err = *func_id && *id_off < 32768 ? 0 : -ENOENT;
		break;
	}
	btf__free(vmlinux);
	return err;
}

#define INSN(c, d, s, o, i)                                              \
	{                                                                \
		.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), \
		.imm = (i)                                               \
	}

/* The iterator's program: bpf_seq_write(meta->seq, &link->id, 4) for
 * each link. */
static int load_prog(void)
{
	__u32 func_id = 0, id_off = 0;
	int err = iter_btf(&func_id, &id_off);

	if (err)
		return err;
	{
		const struct bpf_insn insns[] = {
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),
			INSN(BPF_LDX | BPF_MEM | BPF_DW, 2, 6, 8, 0),
			INSN(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 8, 0),
			INSN(BPF_LDX | BPF_MEM | BPF_W, 2, 2, (__s16)id_off, 0),
			INSN(BPF_STX | BPF_MEM | BPF_W, 10, 2, -4, 0),
			INSN(BPF_LDX | BPF_MEM | BPF_DW, 1, 6, 0, 0),
			INSN(BPF_LDX | BPF_MEM | BPF_DW, 1, 1, 0, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 4),
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_seq_write),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		};
		LIBBPF_OPTS(bpf_prog_load_opts, o,
			    .expected_attach_type = BPF_TRACE_ITER,
			    .attach_btf_id = func_id);
		int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "usdt_link_ids",
				       "Dual BSD/GPL", insns,
				       sizeof(insns) / sizeof(insns[0]), &o);

		return fd < 0 ? -errno : fd;
	}
}

/* Read the iterator fd to its end into a growing array of IDs. */
static int read_ids(int fd, struct usdt__link_ids *out)
{
	size_t cap = 0, len = 0; /* in bytes */
	char *buf = NULL, *v;
	ssize_t n;

	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 16384;
			if (cap > LINKIDS_MAX * sizeof(__u32) ||
			    !(v = realloc(buf, cap))) {
				free(buf);
				return cap > LINKIDS_MAX * sizeof(__u32) ?
					       -E2BIG :
					       -ENOMEM;
			}
			buf = v;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (n < 0) {
		free(buf);
		return -errno;
	}
	out->ids = (__u32 *)(void *)buf;
	out->cnt = len / sizeof(__u32);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

int usdt__link_ids_get(struct usdt__link_ids *out)
{
	int prog_fd, link_fd = -1, iter_fd = -1, err;

	memset(out, 0, sizeof(*out));
	prog_fd = load_prog();
	if (prog_fd < 0) {
		pr_debug("no BPF link iterator here (needs Linux 6.0, kernel BTF, CAP_BPF and CAP_PERFMON): %s\n",
			 strerror(-prog_fd));
		return prog_fd;
	}
	link_fd = bpf_link_create(prog_fd, 0, BPF_TRACE_ITER, NULL);
	err = link_fd < 0 ? -errno : 0;
	if (!err) {
		iter_fd = bpf_iter_create(link_fd);
		err = iter_fd < 0 ? -errno : read_ids(iter_fd, out);
	}
	if (iter_fd >= 0)
		close(iter_fd);
	if (link_fd >= 0)
		close(link_fd);
	close(prog_fd);
	if (err) {
		pr_debug("listing the BPF links: %s\n", strerror(-err));
		return err;
	}
	if (out->cnt)
		qsort(out->ids, out->cnt, sizeof(*out->ids), cmp_u32);
	return 0;
}

bool usdt__link_ids_has(const struct usdt__link_ids *ids, __u32 id)
{
	size_t lo = 0, hi = ids->cnt;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ids->ids[mid] == id)
			return true;
		if (ids->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

void usdt__link_ids_free(struct usdt__link_ids *ids)
{
	free(ids->ids);
	memset(ids, 0, sizeof(*ids));
}
