/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libusdt, BPF side: the machinery behind usdt.bpf.h. Not an API: include
 * usdt.bpf.h, which includes this file after its limits and documents
 * everything a program may use. The names here (usdt__*, __usdt_*) and
 * what they do change with the spec layout (usdt_spec.h), which the
 * manager checks.
 *
 * In this file, in order: the errno values; how the global functions are
 * linked and the context type they take; the spec map and the IP map, and
 * the read-only globals the manager writes before load; the context's
 * registers (copied, or read in place by a tree of compares); the spec
 * lookup; the argument readers, general and windowed; the global
 * functions behind libbpf's names (usdt__arg() and friends) and behind
 * BPF_USDT() (usdt__args()); the storage map and slot lookup; BPF_USDT()'s
 * argument macros.
 *
 * Verifier cost. The argument reader is a few global BPF functions
 * (usdt__arg() and friends, and usdt__ctx_word(), the one tree of
 * compares that finds a register in the context): the kernel verifies each
 * once, on its own, whatever the caller's branches, and a call costs the
 * caller a handful of instructions. Twelve checked bpf_usdt_arg() calls
 * thus verify in about 600 instructions instead of hundreds of thousands
 * (what the caller's own branches cost comes on top; see bpf_usdt_arg()
 * for the branch hint that keeps those linear). This needs BTF (-g) and a
 * kernel that checks pointer arguments of global functions (5.12 and
 * later); usdt.bpf.h says what to do without them (USDT_STATIC_SUBPROGS,
 * __USDT_FN below).
 *
 * Run time. No helper call reads a register where the arch is known: the
 * readers load the words they need from the context, and BPF_USDT() looks
 * the spec up once per hit for all the arguments. No function here takes
 * more than 40 bytes of stack (clang 14 and 21, GCC 16), so the JIT never
 * gives one a per-CPU private stack, which a preempted run would share
 * (docs/library.md, "Preemptible kernels"); BPF_USDT() of four arguments
 * or fewer keeps its values in 32 bytes of the program's frame
 * (usdt__args4()). The manager
 * precomputes per argument what the readers do with the value
 * (usdt_arg_spec.fast: the size kept, the sign, and whether it is a whole
 * register), so a register argument costs BPF_USDT() a dozen instructions.
 * Memory operands near one register (stack slots such as 8@16(%rsp)) are
 * grouped by the manager into a window that BPF_USDT() reads with one
 * bpf_probe_read_user() (32 more bytes of stack), not one per argument;
 * a checked bpf_usdt_arg() reads its argument alone.
 */
#ifndef __LIBUSDT_USDT_BPF_H
#error "usdt_impl.bpf.h is libusdt's internal: include <usdt/usdt.bpf.h>"
#endif
#ifndef __LIBUSDT_USDT_IMPL_BPF_H
#define __LIBUSDT_USDT_IMPL_BPF_H

#include "usdt_spec.h"

/*
 * The errno values BPF programs use, as <linux/errno.h> (which libbpf's
 * header includes) would give them, without the host's asm/ headers. The
 * same tokens as the kernel's, so including <linux/errno.h> too is fine.
 */
#ifndef EPERM
#define EPERM 1
#define ENOENT 2
#define ESRCH 3
#define EINTR 4
#define EIO 5
#define ENXIO 6
#define E2BIG 7
#define ENOEXEC 8
#define EBADF 9
#define ECHILD 10
#define EAGAIN 11
#define ENOMEM 12
#define EACCES 13
#define EFAULT 14
#define ENOTBLK 15
#define EBUSY 16
#define EEXIST 17
#define EXDEV 18
#define ENODEV 19
#define ENOTDIR 20
#define EISDIR 21
#define EINVAL 22
#define ENFILE 23
#define EMFILE 24
#define ENOTTY 25
#define ETXTBSY 26
#define EFBIG 27
#define ENOSPC 28
#define ESPIPE 29
#define EROFS 30
#define EMLINK 31
#define EPIPE 32
#define EDOM 33
#define ERANGE 34
#endif
#ifndef ENOSYS
#define ENOSYS 38
#define ENOMSG 42
#define ENODATA 61
#define EPROTO 71
#define EBADMSG 74
#define EOVERFLOW 75
#define EOPNOTSUPP 95
#define ENOTCONN 107
#define ETIMEDOUT 110
#define EALREADY 114
#define EINPROGRESS 115
#define ECANCELED 125
#endif

/*
 * How the reader's functions are linked. Global (the default): verified
 * once each. USDT_STATIC_SUBPROGS: hidden, which libbpf turns into static
 * functions, verified at every call like libbpf's own.
 */
#ifdef USDT_STATIC_SUBPROGS
#define __USDT_FN __weak __noinline __hidden
#else
#define __USDT_FN __weak __noinline
#endif

/*
 * The context type of the global functions. The kernel accepts a global
 * function's argument as the context only under the name it gives a
 * kprobe program's context: bpf_user_pt_regs_t, which vmlinux.h has for
 * every arch (struct pt_regs on x86, where it is the same type). Kernels
 * before 6.8 compare the struct it stands for by name: a vmlinux.h of
 * another arch gives the wrong one, and the manager then has these
 * functions verified per call instead (see usdt_manager__new()).
 */
#ifndef __USDT_CTX
#ifdef __VMLINUX_H__
#define __USDT_CTX bpf_user_pt_regs_t
#else
#define __USDT_CTX struct pt_regs
#endif
#endif

/* The head's specs (usdt_spec.h), at most USDT_MAX_SPEC_CNT. */
#define __USDT_HEAD_CNT                                                \
	(USDT_SPEC_HEAD_CNT < USDT_MAX_SPEC_CNT ? USDT_SPEC_HEAD_CNT : \
						  USDT_MAX_SPEC_CNT)
/* The outer array's chunks: the specs past the head, at least one (an
 * array has an entry). */
#define __USDT_SPEC_CHUNKS                                                     \
	(USDT_MAX_SPEC_CNT > __USDT_HEAD_CNT ?                                 \
		 (USDT_MAX_SPEC_CNT - __USDT_HEAD_CNT + USDT_SPEC_CHUNK - 1) / \
			 USDT_SPEC_CHUNK :                                     \
		 1)

/*
 * Spec ID -> spec: IDs below usdt__spec_head_cnt in the head, the others
 * in chunks of USDT_SPEC_CHUNK that the manager creates as IDs are handed
 * out (usdt_spec.h). Written only by libusdt.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	/* Entry __USDT_HEAD_CNT: the owner's token, not a spec. */
	__uint(max_entries, __USDT_HEAD_CNT + 1);
	__type(key, __u32);
	__type(value, char[sizeof(struct usdt_spec)]);
} usdt__spec_head SEC(".maps") __weak;

/* clang-format off */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, __USDT_SPEC_CHUNKS);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, 1U << 10); /* BPF_F_MMAPABLE, 5.5 */
		__uint(max_entries, USDT_SPEC_CHUNK);
		__type(key, __u32);
		/* As bytes, like the IP map's value. */
		__type(value, char[sizeof(struct usdt_spec)]);
	});
} usdt__specs SEC(".maps") __weak;
/* clang-format on */

/*
 * Run-time IP of a call site -> spec ID (and storage slot), for attaches
 * without cookies: entry 0 is a hash the manager creates at the first such
 * attach and replaces by a bigger one as it fills, up to usdt__max_ips.
 */
/* clang-format off */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_HASH);
		__uint(max_entries, 1); /* a template: sized by the manager */
		__type(key, long);
		/* A struct usdt_ip_val. Clang (14 at least) emits a struct
		 * seen only from an inner map's definition as a forward
		 * declaration, which libbpf cannot size: inner maps name
		 * their values' size, as bytes. */
		__type(value, char[sizeof(struct usdt_ip_val)]);
	});
} usdt__ip2spec SEC(".maps") __weak;
/* clang-format on */

/* The limits, exact (the outer arrays hold whole chunks); the manager
 * reads them, and usdt_manager_opts overrides them before load. */
const volatile __u32 usdt__max_specs __weak = USDT_MAX_SPEC_CNT;
/* The head's specs; the manager writes it, and the head's size, before
 * load. */
const volatile __u32 usdt__spec_head_cnt __weak = __USDT_HEAD_CNT;
const volatile __u32 usdt__max_ips __weak = USDT_MAX_IP_CNT;

/* Set by libbpf at load time: can the kernel give a program its cookie? */
extern const _Bool LINUX_HAS_BPF_COOKIE __kconfig;

/*
 * 1: programs can find their spec through the IP map (attaches without
 * cookies). The manager writes 0 before load when the kernel has
 * bpf_cookie and usdt_manager_opts.keep_ip_map is unset: the verifier of
 * a privileged load then drops the IP-map path (about 20 instructions of
 * every program), and force_ip_map attaches fail with EINVAL.
 */
const volatile __u32 usdt__ip_map __weak = 1;

/*
 * For targets whose arch this header was not told about (no
 * __TARGET_ARCH_xxx), the manager writes before load where the PC is in
 * the program's context and how much of it to read (usdt_spec.h's
 * USDT_CTX_SZ_<ARCH>). 0xffff / 0: unknown;
 * then IP-map lookups fail with -ESRCH, IP-relative arguments with
 * -EOPNOTSUPP, and registers past the smallest context of all
 * (USDT_CTX_SZ_MIN, s390x's) with -EOPNOTSUPP.
 */
const volatile __u32 usdt__ip_off __weak = 0xffff;
const volatile __u32 usdt__ctx_sz __weak = 0;

/* The spec layout this object reads; usdt_manager__new() checks it. */
const volatile __u32 usdt__layout __weak = USDT_SPEC_LAYOUT;

/*
 * Named like libbpf's spec map, and never called: an object linking a file
 * built on libbpf's header with one built on ours then fails in the linker
 * (`bpftool gen object`: one name, a map and a function) instead of one
 * side silently reading the other's maps.
 */
__weak __noinline int __bpf_usdt_specs(void)
{
	return 0;
}

/*
 * The registers. bpf_usdt_arg() and BPF_USDT() read the one or two an
 * argument needs straight from the context; a program that reads
 * arguments in many places per hit may copy the context once into memory
 * of its own (usdt__regs) and read each from the copy at a bounded offset.
 * Neither needs a helper call where the arch is known (the verifier allows
 * constant-offset loads from the context, but no variable-offset one).
 * __USDT_CTX_SLOTS is the number of the context's 8-byte words read,
 * __USDT_IP_OFF where the PC is in it (both from usdt_spec.h).
 */
#if defined(__TARGET_ARCH_x86)
#define __USDT_CTX_SLOTS (USDT_CTX_SZ_X86_64 / 8)
#define __USDT_IP_OFF USDT_PC_OFF_X86_64
#elif defined(__TARGET_ARCH_arm64)
#define __USDT_CTX_SLOTS (USDT_CTX_SZ_ARM64 / 8)
#define __USDT_IP_OFF USDT_PC_OFF_ARM64
#elif defined(__TARGET_ARCH_s390)
#define __USDT_CTX_SLOTS (USDT_CTX_SZ_S390X / 8)
#define __USDT_IP_OFF USDT_PC_OFF_S390X
#elif defined(__TARGET_ARCH_riscv)
#define __USDT_CTX_SLOTS (USDT_CTX_SZ_RISCV64 / 8)
#define __USDT_IP_OFF USDT_PC_OFF_RISCV64
#endif

#ifdef __USDT_CTX_SLOTS
#define __USDT_CTX_SZ (__USDT_CTX_SLOTS * 8)
_Static_assert(__USDT_IP_OFF / 8 < __USDT_CTX_SLOTS, "the PC is read");
#else
/* The largest context; usdt__ctx_sz bytes of it are read, at most that
 * (a manager of another version may know a bigger one, as arm64's 272
 * bytes before pstate was left out: words no operand names). */
#define __USDT_CTX_SLOTS (USDT_CTX_SZ_MAX / 8)
#define __USDT_CTX_SZ __usdt_ctx_sz()
static __always_inline __u32 __usdt_ctx_sz(void)
{
	__u32 sz = usdt__ctx_sz;

	/* One load: read for each use, the clamp costs instructions. */
	if (!sz)
		return USDT_CTX_SZ_MIN;
	return sz < USDT_CTX_SZ_MAX ? sz : USDT_CTX_SZ_MAX;
}
#endif

#ifdef __USDT_IP_OFF
/*
 * Word n of the context itself: a binary tree of compares over the
 * constant offsets, each leaf a load of its own asm statement (left to
 * itself, clang merges the leaves into one load from a computed context
 * pointer, which the verifier refuses). One compare per inner node and no
 * default branch: n is checked by the caller, and any n past the context
 * reads its last word (a subtree wholly past it is left out, so n goes to
 * its left neighbour's last leaf). In global functions only
 * (usdt__ctx_word(), and usdt__read() for BPF_USDT()'s registers), so the
 * kernel verifies the tree once in each, not once for each register an
 * argument names.
 */
#define __USDT_LAST (__USDT_CTX_SLOTS - 1)
#define __USDT_T1(a)                                                         \
	{                                                                    \
		asm volatile("%0 = *(u64 *)(%1 + %2)"                        \
			     : "=r"(v)                                       \
			     : "r"(ctx),                                     \
			       "i"(((a) < __USDT_LAST ? (a) : __USDT_LAST) * \
				   8));                                      \
		return v;                                                    \
	}
/* Words a to a + 2h - 1, from two subtrees of h words; written out per
 * level (a macro does not expand inside itself). */
#define __USDT_T2(a)                       \
	{                                  \
		if ((a) + 1 > __USDT_LAST) \
			__USDT_T1(a)       \
		else if (n < (a) + 1)      \
			__USDT_T1(a)       \
		else                       \
			__USDT_T1((a) + 1) \
	}
#define __USDT_T4(a)                       \
	{                                  \
		if ((a) + 2 > __USDT_LAST) \
			__USDT_T2(a)       \
		else if (n < (a) + 2)      \
			__USDT_T2(a)       \
		else                       \
			__USDT_T2((a) + 2) \
	}
#define __USDT_T8(a)                       \
	{                                  \
		if ((a) + 4 > __USDT_LAST) \
			__USDT_T4(a)       \
		else if (n < (a) + 4)      \
			__USDT_T4(a)       \
		else                       \
			__USDT_T4((a) + 4) \
	}
#define __USDT_T16(a)                      \
	{                                  \
		if ((a) + 8 > __USDT_LAST) \
			__USDT_T8(a)       \
		else if (n < (a) + 8)      \
			__USDT_T8(a)       \
		else                       \
			__USDT_T8((a) + 8) \
	}
#define __USDT_T32(a)                        \
	{                                    \
		if ((a) + 16 > __USDT_LAST)  \
			__USDT_T16(a)        \
		else if (n < (a) + 16)       \
			__USDT_T16(a)        \
		else                         \
			__USDT_T16((a) + 16) \
	}
#define __USDT_T64(a)                        \
	{                                    \
		if ((a) + 32 > __USDT_LAST)  \
			__USDT_T32(a)        \
		else if (n < (a) + 32)       \
			__USDT_T32(a)        \
		else                         \
			__USDT_T32((a) + 32) \
	}

_Static_assert(__USDT_CTX_SLOTS <= 64, "__USDT_T64() has a leaf per word");

/* The tree itself, for usdt__ctx_word() and usdt__read(). */
static __always_inline __u64 __usdt_tree(__USDT_CTX *ctx, __u64 n)
{
	__u64 v;

	__USDT_T64(0)
}

__USDT_FN __u64 usdt__ctx_word(__USDT_CTX *ctx, __u64 n)
{
	return __usdt_tree(ctx, n);
}

/* The word at byte offset off (a multiple of 8) of the context into *v,
 * or -EOPNOTSUPP past its end. */
static __always_inline int __usdt_ctx_word(const void *ctx, __u64 off, __u64 *v)
{
	if (off & 7 || off > __USDT_CTX_SZ - 8)
		return -EOPNOTSUPP;
	*v = usdt__ctx_word((void *)ctx, off / 8);
	return 0;
}
#else
static __always_inline int __usdt_ctx_word(const void *ctx, __u64 off, __u64 *v)
{
	if (off > __USDT_CTX_SZ - 8 ||
	    bpf_probe_read_kernel(v, sizeof(*v), ctx + off))
		return -EOPNOTSUPP;
	return 0;
}
#endif

/*
 * A copy of the context, for a program that reads arguments in many places
 * per hit (`usdt trace`): copied once (__usdt_copy_regs()) into memory of
 * its own, a map value, never its stack (which a preempted run may share,
 * docs/library.md), and read by __usdt_read() with from_ctx 0. A function
 * that takes the copy and no context is one the kernel verifies once even
 * without kernel BTF, where the readers that take the context are verified
 * at every call (about 10,000 instructions each on s390x 6.1).
 */
struct usdt__regs {
	__u64 r[__USDT_CTX_SLOTS];
};

#ifdef __USDT_IP_OFF
/* X(n) for every 8-byte word a context of any arch has. */
/* clang-format off */
#define __USDT_EACH_SLOT(X)                                                 \
	X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)       \
	X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22)   \
	X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) X(32) X(33)
/* clang-format on */
#define __USDT_ONE(n) +1
_Static_assert(0 __USDT_EACH_SLOT(__USDT_ONE) >= USDT_CTX_SZ_MAX / 8,
	       "__USDT_EACH_SLOT() names every word of the largest context");

/* One constant-offset load per word, each its own asm statement, which
 * clang may not merge into a loop over a computed context pointer (the
 * verifier refuses one). */
#define __USDT_CP(n)                                                 \
	if ((n) < __USDT_CTX_SLOTS)                                  \
		asm volatile("%0 = *(u64 *)(%1 + %2)"                \
			     : "=r"(regs->r[(n) % __USDT_CTX_SLOTS]) \
			     : "r"(ctx), "i"((n)*8));

static __always_inline int __usdt_copy_regs(__USDT_CTX *ctx,
					    struct usdt__regs *regs)
{
	__USDT_EACH_SLOT(__USDT_CP)
	return 0;
}
#else
/* Unknown arch: the size comes from the manager, so one helper call. */
static __always_inline int __usdt_copy_regs(__USDT_CTX *ctx,
					    struct usdt__regs *regs)
{
	__u32 sz = __USDT_CTX_SZ;

	/* Bounds for the verifier. */
	if (sz > sizeof(*regs))
		sz = sizeof(*regs);
	__builtin_memset(regs, 0, sizeof(*regs));
	return bpf_probe_read_kernel(regs, sz, ctx);
}
#endif

/* The word at byte offset off (a multiple of 8) of the context (from_ctx,
 * a constant) or of its copy into *v, or -EOPNOTSUPP past its end. */
static __always_inline int __usdt_word(const void *src, int from_ctx, __u64 off,
				       __u64 *v)
{
	if (from_ctx)
		return __usdt_ctx_word(src, off, v);
	/* off opaque first (64 bits wide, so no zero-extended copy is
	 * compared instead): clang would otherwise compute the address
	 * from the unchecked value, and the verifier must see the bound on
	 * the register it adds. */
	asm volatile("" : "+r"(off));
	if (off & 7 || off > __USDT_CTX_SZ - 8 ||
	    off > sizeof(struct usdt__regs) - 8)
		return -EOPNOTSUPP;
	*v = ((const struct usdt__regs *)src)->r[off / 8];
	return 0;
}

/* The PC, from the context; 0 where unknown. */
static __always_inline __u64 __usdt_pc(const void *ctx)
{
	__u64 ip = 0;

#ifdef __USDT_IP_OFF
	ip = ((const __u64 *)ctx)[__USDT_IP_OFF / 8];
#else
	__usdt_ctx_word(ctx, usdt__ip_off, &ip);
#endif
	return ip;
}

/* The IP map's value for the PC, or NULL. */
static __always_inline struct usdt_ip_val *__usdt_ip_val(const void *ctx)
{
	__u32 zero = 0;
	__u64 ip = __usdt_pc(ctx);
	void *ips = bpf_map_lookup_elem(&usdt__ip2spec, &zero);

	return ips ? bpf_map_lookup_elem(ips, &ip) : 0;
}

/* The spec of ID *id, or NULL: in the head one array lookup, past it two,
 * all inlined by the kernel: the chunk, then the spec in it. (The ID by
 * its address, the key's own: a copy of it, stored where the branches
 * that set it meet, doubled what Linux 6.1's verifier walked of
 * BPF_USDT() at -mcpu=v2 and v3.) */
static __always_inline const struct usdt_spec *__usdt_spec_at(const int *id)
{
	__u32 chunk, idx;
	void *specs;

	if ((__u32)*id < usdt__spec_head_cnt)
		return bpf_map_lookup_elem(&usdt__spec_head, id);
	chunk = ((__u32)*id - usdt__spec_head_cnt) / USDT_SPEC_CHUNK;
	idx = ((__u32)*id - usdt__spec_head_cnt) % USDT_SPEC_CHUNK;
	specs = bpf_map_lookup_elem(&usdt__specs, &chunk);
	return specs ? bpf_map_lookup_elem(specs, &idx) : 0;
}

/*
 * The spec of the call site that fired, or NULL; its ID into *idp (-1 for
 * none) where idp is not NULL. With a cookie, the manager put the spec ID
 * + 1 in its low 32 bits; a zero cookie means the attach used the IP map,
 * keyed by the PC.
 */
static __always_inline const struct usdt_spec *__usdt_spec_id(__USDT_CTX *ctx,
							      int *idp)
{
	struct usdt_ip_val *ip_id;
	int id = -1;

	if (idp)
		*idp = -1;
	/* The manager clears usdt__ip_map only where the kernel has
	 * cookies: the verifier then drops the other branch. */
	if (!usdt__ip_map) {
		id = (int)bpf_get_attach_cookie(ctx) - 1;
		if (id < 0)
			return 0;
	} else if (LINUX_HAS_BPF_COOKIE) {
		id = (int)bpf_get_attach_cookie(ctx) - 1;
	}
	if (id < 0) {
		ip_id = __usdt_ip_val(ctx);
		if (!ip_id)
			return 0;
		id = ip_id->spec_id;
	}
	if (idp)
		*idp = id;
	return __usdt_spec_at(&id);
}

/* The spec of the call site that fired, or NULL. */
static __always_inline const struct usdt_spec *__usdt_spec(__USDT_CTX *ctx)
{
	return __usdt_spec_id(ctx, 0);
}

/* v kept to the size its fast code says, sign-extended if it says so. */
static __always_inline __u64 __usdt_trunc(__u64 v, __u32 fast)
{
	__u32 shift = fast & USDT_FAST_SHIFT_MASK;

	v <<= shift;
	if (fast & USDT_FAST_SIGNED)
		return (__u64)((__s64)v >> shift);
	return v >> shift;
}

/*
 * The value of argument a of the call site that fired, before it is kept
 * to its size, into *res, with registers from the context or its copy
 * (from_ctx, a constant: see __usdt_word()). The fields of
 * *a are read again where they are used: across the call that reads a
 * context word, a load costs one instruction where keeping the field
 * costs a spill and a fill.
 */
static __always_inline int __usdt_value(const void *ctx, int from_ctx,
					const struct usdt_arg_spec *a,
					long *res)
{
	__u32 base = a->base_off, flags;
	__u64 val = 0, reg;

	/* USDT_SPEC_VALUE or _MEM, else USDT_SPEC_UNSUPPORTED: the manager
	 * writes no other kind below arg_cnt (USDT_SPEC_NONE would read as
	 * a value), so one compare against a constant. size is 1 to 8 as the
	 * manager writes it; any other reads a bounded, meaningless value. */
	if (a->kind > USDT_SPEC_MEM)
		return -EOPNOTSUPP;
	if (base != USDT_REG_NONE) {
		if (__usdt_word(ctx, from_ctx, base & ~7U, &reg))
			return -EOPNOTSUPP;
		/* A base offset inside a register names a byte of it (%ah). */
		val += reg >> ((a->base_off & 7) * 8);
	}
	if (a->idx_off != USDT_REG_NONE) {
		if (__usdt_word(ctx, from_ctx, a->idx_off, &reg))
			return -EOPNOTSUPP;
		flags = a->flags;
		/* arm64 "[x3, w0, sxtw]": a 32-bit index, extended. */
		if (flags & USDT_SPEC_F_IDX_S32)
			reg = (__u64)(__s64)(__s32)reg;
		else if (flags & USDT_SPEC_F_IDX_U32)
			reg = (__u32)reg;
		val += reg << ((flags & USDT_SPEC_SCALE_MASK) >>
			       USDT_SPEC_SCALE_SHIFT);
	}
	val += a->val_off;
	if (a->flags & USDT_SPEC_F_IPREL) {
		/* 0: built without __TARGET_ARCH_xxx and the manager could
		 * not tell where the PC is (created after load). */
		reg = __usdt_pc(ctx);
		if (!reg)
			return -EOPNOTSUPP;
		val += reg;
	}

	if (a->kind == USDT_SPEC_MEM) {
		__u64 n = a->size;

		/* Straight into *res: no buffer of its own on the stack.
		 * size is 1 to 8 here, but clang passes a copy whose bound
		 * older verifiers (6.1, 6.12) do not know. Bring the length
		 * to 1 to 8 in asm, which clang cannot fold away (any size
		 * from 1 to 8 is kept): any length the verifier sees fits
		 * the 8 bytes of *res. */
		asm volatile("%[n] += -1\n\t%[n] &= 7\n\t%[n] += 1"
			     : [n] "+r"(n));
		/* Tested at the helper's own width (narrowing it to an int
		 * costs three instructions before -mcpu=v3): its only error
		 * is -EFAULT, after which those bytes of *res are 0 (the
		 * helper zeroes them). The bytes past size keep *res's old
		 * ones: shifted out below on big-endian targets, cut by the
		 * caller's __usdt_trunc() on little-endian ones. */
		if (bpf_probe_read_user(res, n, (void *)val))
			return -EFAULT;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		/* The bytes read sit in the high end of *res. */
		*res = (long)((__u64)*res >> (8 - a->size) * 8);
#endif
		return 0;
	}
	*res = (long)val;
	return 0;
}

/* Argument a into *res, kept to its size; see bpf_usdt_arg(). */
static __always_inline int __usdt_read_arg(const void *ctx, int from_ctx,
					   const struct usdt_arg_spec *a,
					   long *res)
{
	long val;
	int err = __usdt_value(ctx, from_ctx, a, &val);

	if (err)
		return err;
	*res = (long)__usdt_trunc(val, a->fast);
	/* -E2BIG with the low 8 bytes of a 16-byte argument, else 0. */
	return -(int)(a->fast & USDT_FAST_ERRNO_MASK);
}

/*
 * Argument arg_num of the call site whose spec is spec (NULL: -ESRCH) into
 * *res, with registers from the context or its copy (from_ctx, a
 * constant); see bpf_usdt_arg().
 */
static __always_inline int __usdt_read(const void *ctx, int from_ctx,
				       const struct usdt_spec *spec,
				       __u64 arg_num, long *res)
{
	const struct usdt_arg_spec *a;

	if (!res)
		return -EINVAL;
	if (!spec)
		return -ESRCH;
	/* One register, checked and then indexed with: clang would reload
	 * a spilled arg_num for each, and verifiers before 6.3 or so do
	 * not carry the bound from one reload to the next. */
	asm volatile("" : "+r"(arg_num));
	if (arg_num >= USDT_MAX_ARG_CNT || arg_num >= spec->arg_cnt)
		return -ENOENT;
	/* The argument's address, kept in one register: clang would
	 * otherwise compute it again from spec and arg_num at each use. */
	a = &spec->args[arg_num];
	asm volatile("" : "+r"(a));
	return __usdt_read_arg(ctx, from_ctx, a, res);
}

/* The window's bytes (usdt_spec.h), as words. */
struct usdt__win_buf {
	__u64 w[USDT_WIN_MAX / 8];
};

/*
 * Argument a from the window read into b, at byte offset pos of it (pos
 * plus its size within the window), kept to its size as its fast code
 * says. Two words, shifted, the second in two steps (a shift of 0 gives 0,
 * not an undefined shift by 64); the indexes masked for the verifier
 * (where the second wraps to word 0, every byte of the value is in the
 * first, and the second's land above them and are cut).
 */
static __always_inline __u64 __usdt_win_val(const struct usdt__win_buf *b,
					    __u32 pos,
					    const struct usdt_arg_spec *a)
{
	__u32 i = pos / 8, sh = (pos & 7) * 8;
	__u64 v = b->w[i & (USDT_WIN_MAX / 8 - 1)];
	__u64 hi = b->w[(i + 1) & (USDT_WIN_MAX / 8 - 1)];

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = v << sh | hi >> (63 - sh) >> 1;
	/* The value's bytes are the top size bytes. */
	v >>= (64 - 8 * a->size) & 63;
#else
	v = v >> sh | hi << (63 - sh) << 1;
#endif
	return __usdt_trunc(v, a->fast);
}

/*
 * Argument a's value from the window read into win, at its place aw
 * (arg_win); a function of its own, like the general reader, for the same
 * reason. It returns the value, which its caller stores: a function whose
 * return value nobody reads may exit with whatever r0 last held (clang
 * drops the return), here a pointer into the caller's stack, which older
 * verifiers refuse ("cannot return stack pointer to the caller": Linux
 * 6.1 on s390x, verifying per call).
 */
static __noinline __u64 __usdt_read_win(const struct usdt__win_buf *win,
					__u64 aw, const struct usdt_arg_spec *a)
{
	return __usdt_win_val(win, aw & USDT_WIN_POS_MASK, a);
}

/*
 * Argument a from a copy of the context by the general reader, kept to its
 * size; a function of its own, so that usdt__read() saves no register
 * for it when the argument is a register.
 */
static __noinline int
__usdt_read_general(__USDT_CTX *ctx, const struct usdt_arg_spec *a, long *res)
{
	/* In *res itself: a local would take stack. */
	if (!__usdt_value(ctx, 1, a, res))
		*res = (long)__usdt_trunc(*res, a->fast);
	return 0;
}

/*
 * Argument a from a copy of the context (BPF_USDT()): from the window
 * read into win where aw (its arg_win byte, 0 when the window was not
 * read) says it is there, a whole register in a few instructions where
 * its fast code says so, else by the general reader. Global functions
 * like this one are verified once, whatever their callers do. Returns
 * nothing useful (BPF_USDT() has no use for an error): what cannot be
 * read leaves *res alone (BPF_USDT()'s 0; a memory read that faults
 * zeroes it).
 */
__USDT_FN int usdt__read(__USDT_CTX *ctx, const struct usdt_arg_spec *a,
			 long *res, const struct usdt__win_buf *win, __u64 aw)
{
	__u32 fast;
	__u64 v;

	if (!a || !res)
		return 0;
	fast = a->fast;
	/* One compare (clang would test the byte's sign bit in three
	 * instructions). A register is never in a window: tested first, it
	 * costs what it did before windows. */
	asm volatile("" : "+r"(fast));
	if (fast < USDT_FAST_REG) {
		if (!aw)
			return __usdt_read_general(ctx, a, res);
		/* Tested here, off a register argument's path. */
		if (win)
			*res = (long)__usdt_read_win(win, aw, a);
		return 0;
	}
#ifdef __USDT_IP_OFF
	/* The tree inlined: BPF_USDT() reads each register argument
	 * here, and a call more per argument costs (verified once). */
	v = a->base_off;
	if (!(v & 7) && v <= __USDT_CTX_SZ - 8)
		*res = (long)__usdt_trunc(__usdt_tree(ctx, v / 8), fast);
#else
	if (!__usdt_ctx_word(ctx, a->base_off, &v))
		*res = (long)__usdt_trunc(v, fast);
#endif
	return 0;
}

/* The global functions behind libbpf's names. */
__USDT_FN int usdt__arg(__USDT_CTX *ctx, __u64 arg_num, long *res)
{
	return __usdt_read(ctx, 1, __usdt_spec(ctx), arg_num, res);
}

__USDT_FN int usdt__arg_cnt(__USDT_CTX *ctx)
{
	const struct usdt_spec *spec = __usdt_spec(ctx);

	return spec ? spec->arg_cnt : -ESRCH;
}

/* The size of argument arg_num of the call site whose spec is spec; see
 * bpf_usdt_arg_size(). */
static __always_inline int __usdt_arg_size(const struct usdt_spec *spec,
					   __u64 arg_num)
{
	const struct usdt_arg_spec *a;

	if (!spec)
		return -ESRCH;
	if (arg_num >= USDT_MAX_ARG_CNT || arg_num >= spec->arg_cnt)
		return -ENOENT;
	a = &spec->args[arg_num];
	/* The size the note wrote (usdt_spec.h). */
	if (a->kind == USDT_SPEC_UNSUPPORTED)
		return (int)a->val_off;
	return a->flags & USDT_SPEC_F_TRUNC ? 16 : a->size;
}

__USDT_FN int usdt__arg_size(__USDT_CTX *ctx, __u64 arg_num)
{
	return __usdt_arg_size(__usdt_spec(ctx), arg_num);
}

__USDT_FN long usdt__cookie(__USDT_CTX *ctx)
{
	const struct usdt_spec *spec = __usdt_spec(ctx);

	return spec ? (long)spec->usr_cookie : 0;
}

/* BPF_USDT()'s arguments, 0 where unreadable: room for all, or for a
 * probe's first four in a program that names no more (usdt__args4()). */
struct usdt__vals {
	long v[USDT_MAX_ARG_CNT];
};

struct usdt__vals4 {
	long v[4];
};

/*
 * The spec's window into *win with one bpf_probe_read_user(). Returns the
 * mask BPF_USDT() applies to each argument's arg_win byte: all ones, but
 * 0 when the read faults (say, the window runs into an unmapped page while
 * each argument alone is readable), so that every argument is then read
 * alone. A spec without a window has every arg_win 0 (usdt_spec.h).
 * *win is zeroed first either way: kernels before 6.5 want the memory
 * behind a global function's pointer argument initialised.
 *
 * The mask is computed from the helper's return without a branch, so the
 * verifier walks the arguments once for a read that faults or not, and
 * once more at most (a subset: all ones) without a window.
 */
static __always_inline __u64 __usdt_win_read(__USDT_CTX *ctx,
					     const struct usdt_spec *spec,
					     struct usdt__win_buf *win)
{
	__u64 base, len;
	long err;

	__builtin_memset(win, 0, sizeof(*win));
	/* A base register past the context gives the window's arguments
	 * 0 from the zeroed window, as reading each alone would. */
	if (!spec->win_cnt ||
	    __usdt_ctx_word(ctx, spec->wins[0].base_off, &base))
		return -1ULL;
	/* 1 to USDT_WIN_MAX bytes whatever the map holds (the manager
	 * writes 2 to USDT_WIN_MAX), masked in asm for older verifiers. */
	len = spec->wins[0].len - 1;
	asm volatile("%[l] &= %[m]"
		     : [l] "+r"(len)
		     : [m] "i"(USDT_WIN_MAX - 1));
	err = bpf_probe_read_user(win, len + 1,
				  (void *)(base + (__s64)spec->wins[0].off));
	/* 0 or a negative errno: all ones or 0. */
	return ((__u64)err >> 63) - 1;
}

/* The spec, in a frame of its own: its lookups' keys take no stack of
 * usdt__args()'s. */
static __noinline const struct usdt_spec *__usdt_spec_of(__USDT_CTX *ctx)
{
	return __usdt_spec(ctx);
}

/* The window read into buf, and the mask __usdt_win_read() gave. */
struct usdt__win {
	struct usdt__win_buf buf;
	__u64 ok;
};

/*
 * The spec, its window into *win and its first cnt arguments, at most
 * max, into v, for __usdt_args(), whose frame holds the window alone: the registers
 * that the calls here keep spill into this frame (16 bytes with clang, 24
 * with GCC 16's BPF backend, which keeps few values in r6-r9), so that
 * neither frame reaches 49 bytes.
 *
 * Counted down in 64 bits (no zero-extension for the verifier to lose the
 * bound in at -mcpu=v1), signed (n > 0 bounds n in the loop, where the
 * verifier of 6.1 does not learn n >= 1 from n != 0), with moving
 * pointers. The empty asm hides n's sign from clang, which would
 * otherwise test n + 1 > 1 (an instruction more).
 */
static __noinline int __usdt_read_n(__USDT_CTX *ctx, long *v,
				    struct usdt__win *win, __u64 cnt, __s64 max)
{
	const struct usdt_arg_spec *a;
	const struct usdt_spec *spec;
	const __u8 *aw;
	__s64 n;
	__u64 x;

	spec = __usdt_spec_of(ctx);
	if (!spec)
		return 0;
	n = spec->arg_cnt;
	if (n > cnt)
		n = cnt;
	/* max is a constant here: verifiers before 6.2 or so learn no bound
	 * from a compare with a register that is not. */
	if (n > max)
		n = max;
	win->ok = __usdt_win_read(ctx, spec, &win->buf);
	a = spec->args;
	aw = spec->arg_win;
	/* Not unrolled: GCC's BPF backend makes four copies of the loop,
	 * whose registers then spill. Clang keeps it as it is either
	 * way. */
#pragma GCC unroll 1
	while (n > 0) {
		x = *aw++;
		asm volatile("%[x] &= %[ok]" : [x] "+r"(x) : [ok] "r"(win->ok));
		usdt__read(ctx, a++, v++, &win->buf, x);
		n--;
		asm volatile("" : "+r"(n));
	}
	return 0;
}

/*
 * The first cnt arguments, at most max, into v, for BPF_USDT(): one spec
 * lookup for all of them, each register read from the context through
 * usdt__read()'s own copy of the tree (a call less per argument). Always
 * returns 0 (BPF_USDT() has no use for an error, and one return value
 * saves a stack slot and three instructions).
 */
static __always_inline int __usdt_args(__USDT_CTX *ctx, long *v, __u64 cnt,
				       __s64 max)
{
	struct usdt__win win;

	return __usdt_read_n(ctx, v, &win, cnt, max);
}

/* The first cnt arguments into vals (nothing without vals). */
__USDT_FN int usdt__args(__USDT_CTX *ctx, struct usdt__vals *vals, __u64 cnt)
{
	return vals ? __usdt_args(ctx, vals->v, cnt, USDT_MAX_ARG_CNT) : 0;
}

/* The same for a program that names four or fewer, whose values then
 * take 32 bytes of its frame, not 96: a frame of 64 bytes or more is
 * exposed on preemptible kernels (docs/library.md). */
__USDT_FN int usdt__args4(__USDT_CTX *ctx, struct usdt__vals4 *vals, __u64 cnt)
{
	return vals ? __usdt_args(ctx, vals->v, cnt, 4) : 0;
}

#ifdef USDT_STORAGE_TYPE
/*
 * Per-attach storage (bpf_usdt_storage()): one USDT_STORAGE_TYPE value per
 * link, or per call site of a link. The values are slots of mmapable
 * arrays of about a page each, created by the manager as slots are handed
 * out, which user space reads and writes in place (usdt_link__storage());
 * the cookie's high 32 bits, or the IP map's value, carry the slot + 1
 * (see usdt_spec.h). Objects that do not define USDT_STORAGE_TYPE have
 * neither the map nor the code.
 */
#define __USDT_STORAGE_PER USDT_STORAGE_CHUNK(sizeof(USDT_STORAGE_TYPE))

/* Slot -> value, in chunks of about a page that the manager creates and
 * maps as slots are handed out. */
/* clang-format off */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, (USDT_MAX_STORAGE_CNT + __USDT_STORAGE_PER - 1) /
				    __USDT_STORAGE_PER);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, 1U << 10); /* BPF_F_MMAPABLE, 5.5 */
		__uint(max_entries, __USDT_STORAGE_PER);
		__type(key, __u32);
		/* As bytes, like the IP map's value. */
		__type(value, char[sizeof(USDT_STORAGE_TYPE)]);
	});
} usdt__storage SEC(".maps") __weak;
/* clang-format on */

const volatile __u32 usdt__max_storage __weak = USDT_MAX_STORAGE_CNT;

/* The storage slot of the call site that fired, or -1. */
__USDT_FN int usdt__slot(__USDT_CTX *ctx)
{
	struct usdt_ip_val *v;
	__u64 cookie = 0;

	if (LINUX_HAS_BPF_COOKIE)
		cookie = bpf_get_attach_cookie(ctx);
	if (cookie & USDT_COOKIE_ID_MASK)
		return (int)(cookie >> USDT_COOKIE_SLOT_SHIFT) - 1;
	if (!usdt__ip_map)
		return -1;
	v = __usdt_ip_val(ctx);
	return v ? (int)v->slot - 1 : -1;
}

/*
 * The storage value of the call site that fired, or NULL: the slot, then
 * two array lookups (chunk, then value), which the kernel inlines.
 */
static __always_inline USDT_STORAGE_TYPE *__usdt_storage(__USDT_CTX *ctx)
{
	int slot = usdt__slot(ctx);
	__u32 chunk, idx;
	void *vals;

	if (slot < 0)
		return 0;
	chunk = (__u32)slot / __USDT_STORAGE_PER;
	idx = (__u32)slot % __USDT_STORAGE_PER;
	vals = bpf_map_lookup_elem(&usdt__storage, &chunk);
	return vals ? bpf_map_lookup_elem(vals, &idx) : 0;
}
#endif /* USDT_STORAGE_TYPE */

/*
 * BPF_USDT()'s argument list: the context, then the values usdt__args()
 * read, one per parameter the program names (at most 12), each as a
 * void *, which converts to a pointer parameter as it is and to an
 * integer one with -Wint-conversion off (BPF_USDT() turns it off).
 */
#define __USDT_NTH(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, \
		   ...)                                                      \
	N
#define __USDT_NARGS(...) \
	__USDT_NTH(_, ##__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define __USDT_JOIN2(a, b) a##b
#define __USDT_JOIN(a, b) __USDT_JOIN2(a, b)

/* The values' room, and the function that reads them: four or all. */
#define __USDT_VALS(a...)                                           \
	__typeof__(__builtin_choose_expr(__USDT_NARGS(a) <= 4,      \
					 (struct usdt__vals4){ 0 }, \
					 (struct usdt__vals){ 0 }))
#define __USDT_READ_VALS(ctx, vals, a...)                                \
	__builtin_choose_expr(__USDT_NARGS(a) <= 4, usdt__args4,         \
			      usdt__args)((void *)(ctx), (void *)(vals), \
					  __USDT_NARGS(a))

#define __USDT_GET(n) ((void *)__usdt_vals.v[n])
#define __USDT_A0() ctx
#define __USDT_A1(x) __USDT_A0(), __USDT_GET(0)
#define __USDT_A2(x, a...) __USDT_A1(a), __USDT_GET(1)
#define __USDT_A3(x, a...) __USDT_A2(a), __USDT_GET(2)
#define __USDT_A4(x, a...) __USDT_A3(a), __USDT_GET(3)
#define __USDT_A5(x, a...) __USDT_A4(a), __USDT_GET(4)
#define __USDT_A6(x, a...) __USDT_A5(a), __USDT_GET(5)
#define __USDT_A7(x, a...) __USDT_A6(a), __USDT_GET(6)
#define __USDT_A8(x, a...) __USDT_A7(a), __USDT_GET(7)
#define __USDT_A9(x, a...) __USDT_A8(a), __USDT_GET(8)
#define __USDT_A10(x, a...) __USDT_A9(a), __USDT_GET(9)
#define __USDT_A11(x, a...) __USDT_A10(a), __USDT_GET(10)
#define __USDT_A12(x, a...) __USDT_A11(a), __USDT_GET(11)
#define __USDT_ARGS(a...) __USDT_JOIN(__USDT_A, __USDT_NARGS(a))(a)

#endif /* __LIBUSDT_USDT_IMPL_BPF_H */
