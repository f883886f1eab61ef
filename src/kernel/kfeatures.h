/* SPDX-License-Identifier: BSD-2-Clause */
/* Kernel features (src/kernel/kfeatures.c) and the one fact read from the
 * kernel's BTF file for them (src/kernel/kbtf.c). */
#ifndef __LIBUSDT_KFEATURES_H
#define __LIBUSDT_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <bpf/btf.h>

/* What the running kernel can do; probed once per process. */
struct usdt__features {
	bool bpf_cookie;   /* bpf_get_attach_cookie() for uprobes */
	bool uprobe_multi; /* BPF_TRACE_UPROBE_MULTI links */
	bool ref_ctr;	   /* uprobe ref_ctr_offset (semaphores) */
	/* The struct a kprobe program's context is to the kernel (what its
	 * bpf_user_pt_regs_t stands for: "pt_regs" on x86, "user_pt_regs"
	 * on arm64, "" on s390x); ctx_known false without kernel BTF, where
	 * no global function's argument is the context. */
	bool ctx_known;
	char ctx_name[64];
	bool ctx_typedef_ok; /* bpf_user_pt_regs_t is the context by name */
	/* A batch of updates of an array of maps waits for one RCU grace
	 * period, not one per entry (6.8); no feature bit says it. */
	bool outer_batch_one_wait;
};

const struct usdt__features *usdt__features(void);
/* The names of the BPF header's global functions that take the context
 * (bpf/usdt.bpf.h's __USDT_CTX), NULL-terminated; test_bpf_header checks
 * them against the header's BTF. */
extern const char *const usdt__ctx_funcs[];
/* Would feat's kernel take every one of the BPF header's functions that
 * take the context, in btf, for what they are? */
bool usdt__ctx_funcs_fit(const struct btf *btf,
			 const struct usdt__features *feat);
/* Where feat's kernel would not take those functions' context argument,
 * make them static in btf (a BPF object's, before load, or a copy to load
 * its programs with), as libbpf makes a hidden one, and with them every
 * global function of the object that takes a pointer to the same type or
 * to struct pt_regs that the kernel would not take either (the user's
 * own): the kernel then verifies these at every call, and every other
 * function stays global, the function and line info kept. Returns how
 * many it made static. */
int usdt__ctx_funcs_make_static(struct btf *btf,
				const struct usdt__features *feat);
/*
 * The name of the struct (or union) the typedef bpf_user_pt_regs_t stands
 * for, from the BTF file at path (src/kernel/kbtf.c: read through a small buffer,
 * never loaded whole), into buf ("" for an anonymous one). Returns 0,
 * -ESRCH (no such typedef, or it leads elsewhere), -E2BIG (buf too
 * small), -EOPNOTSUPP (not native BTF, or a kind this reader does not know),
 * -ENOMEM, or the error of opening or reading the file.
 */
int usdt__btf_ctx_name(const char *path, char *buf, size_t size);

/*
 * One uprobe_multi link of the program prog_fd on cnt sites of the file at
 * path (the kernel opens it by that name), for pid (-1: every process):
 * the link's fd, or -errno. The one place that lays out link_create's
 * uprobe_multi fields where libbpf (before 1.3) cannot.
 */
int usdt__uprobe_multi_create(int prog_fd, pid_t pid, const char *path,
			      const uint64_t *offs, const uint64_t *ref_ctrs,
			      const uint64_t *cookies, size_t cnt);

#define USDT__TRACE_UPROBE_MULTI 48 /* enum bpf_attach_type, 6.6 */

#endif
