/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libusdt, BPF side: read the arguments of the USDT probe a program was
 * attached to by libusdt (usdt_manager__attach(), a skeleton's __attach(),
 * usdt_program__attach()).
 *
 * This file is the API, all of it. bpf_usdt_arg(), bpf_usdt_arg_cnt(),
 * bpf_usdt_arg_size(), bpf_usdt_cookie() and BPF_USDT() have the names,
 * signatures and meaning of libbpf's <bpf/usdt.bpf.h>, and this header
 * brings what libbpf's brings (ENOENT and the other errno values,
 * <bpf/bpf_tracing.h> with PT_REGS_IP() and BPF_KPROBE(),
 * BPF_USDT_MAX_SPEC_CNT, BPF_USDT_MAX_IP_CNT, BPF_USDT_MAX_ARG_CNT), so a
 * program moves over by changing one #include. bpf_usdt_storage() is
 * libusdt's own. The machinery behind them (maps, spec lookup, argument
 * readers, and what they cost the verifier and each hit) is in
 * usdt_impl.bpf.h, which this file includes: nothing there is an API.
 *
 * Maps, link-time names and include guard are our own: the two headers in
 * one file, or in two files linked into one object, fail to build instead
 * of mixing two spec layouts.
 *
 * Include after vmlinux.h (or linux/types.h plus a struct pt_regs
 * declaration); it needs nothing else but libbpf's headers:
 *
 *	#include "vmlinux.h"
 *	#include <bpf/bpf_helpers.h>
 *	#include <usdt/usdt.bpf.h>
 *
 * Compile with -g and -D__TARGET_ARCH_x86 (arm64, s390, riscv) as for
 * libbpf's bpf_tracing.h. Without __TARGET_ARCH_xxx, the manager tells the
 * program where the PC is and how big the context is, before load. Without
 * BTF (-g), or for kernels before 5.12, define USDT_STATIC_SUBPROGS before
 * the include: the readers are global BPF functions, which the kernel
 * verifies once each; with it, they are verified at every call, like
 * libbpf's.
 *
 * What may be defined before the include: the limits below (and
 * USDT_SPEC_HEAD_CNT),
 * USDT_STORAGE_TYPE (bpf_usdt_storage()), USDT_NO_ARG_HINT (bpf_usdt_arg())
 * and USDT_STATIC_SUBPROGS.
 */
#ifdef __USDT_BPF_H__
#error "libbpf's <bpf/usdt.bpf.h> is already included: include libusdt's usdt.bpf.h instead of it, not beside it"
#endif
#ifndef __LIBUSDT_USDT_BPF_H
#define __LIBUSDT_USDT_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/*
 * Limits. The first USDT_SPEC_HEAD_CNT spec IDs live in a plain array
 * that exists from load (about 230 KB of kernel memory at 1024 specs, 224
 * bytes each; libbpf's default spec map of 256 costs 57 KB): attaching
 * within it waits for no RCU grace period. Past it, capacity grows on
 * demand: an array of chunks of 256 specs, which the manager creates as
 * spec IDs are handed out (from Linux 6.8, for a file's every call site at
 * its first attach, one grace period), and the IP map a hash it creates at
 * the first attach without cookies and doubles as it fills (usdt_spec.h).
 * The limits below, under our names or libbpf's, hold unless set lower (or
 * higher) before the include, or by usdt_manager_opts before load (a
 * max_specs below the head shrinks the head to it); past them, attach
 * fails with -E2BIG. Without a manager (a skeleton's __attach(),
 * usdt_program__attach()) the spec limit is the head plus the outer
 * array's whole chunks, at least one: USDT_MAX_SPEC_CNT 256, libbpf's
 * default, gives 512.
 */
#ifndef USDT_SPEC_HEAD_CNT
#define USDT_SPEC_HEAD_CNT 1024
#endif
#ifndef USDT_MAX_SPEC_CNT
#ifdef BPF_USDT_MAX_SPEC_CNT
#define USDT_MAX_SPEC_CNT BPF_USDT_MAX_SPEC_CNT
#else
#define USDT_MAX_SPEC_CNT 65536
#endif
#endif
#ifndef BPF_USDT_MAX_SPEC_CNT
#define BPF_USDT_MAX_SPEC_CNT USDT_MAX_SPEC_CNT
#endif

#ifndef USDT_MAX_IP_CNT
#ifdef BPF_USDT_MAX_IP_CNT
#define USDT_MAX_IP_CNT BPF_USDT_MAX_IP_CNT
#else
#define USDT_MAX_IP_CNT (4 * USDT_MAX_SPEC_CNT)
#endif
#endif
#ifndef BPF_USDT_MAX_IP_CNT
#define BPF_USDT_MAX_IP_CNT USDT_MAX_IP_CNT
#endif

/* Storage values (bpf_usdt_storage()): 1024 chunks of about a page. */
#ifndef USDT_MAX_STORAGE_CNT
#define USDT_MAX_STORAGE_CNT (1024 * __USDT_STORAGE_PER)
#endif

/* Arguments a probe has at most, as libbpf's header names it: 12. */
#define BPF_USDT_MAX_ARG_CNT USDT_MAX_ARG_CNT

#include "usdt_impl.bpf.h"

/* The number of arguments of the probe, or -ESRCH. */
static __always_inline int bpf_usdt_arg_cnt(struct pt_regs *ctx)
{
	return usdt__arg_cnt((void *)ctx);
}

/*
 * The size in bytes of argument arg_num, as its note wrote it (1, 2, 4, 8,
 * 16, or any other for an argument bpf_usdt_arg() cannot read, such as a
 * 24-byte struct: what `usdt list` and usdt_probe__arg() say), or -ENOENT
 * past the last one, or -ESRCH. A size-less operand (assembler probes) has
 * its register's width, else 8.
 */
static __always_inline int bpf_usdt_arg_size(struct pt_regs *ctx, __u64 arg_num)
{
	return usdt__arg_size((void *)ctx, arg_num);
}

/*
 * Read argument arg_num into *res, sign- or zero-extended to 64 bits.
 * Returns 0; -ENOENT past the last argument; -ESRCH when the program was
 * not attached by libusdt; -EOPNOTSUPP when the argument cannot be read
 * (see `usdt list`: among them any size but 1, 2, 4, 8 and 16, such as a
 * 24-byte struct); -EFAULT when the memory read faults. *res is 0 on error,
 * but for one: -E2BIG says a 16-byte argument (__int128) was cut to its
 * low 8 bytes, which are in *res (as BPF_USDT() passes them). libbpf
 * refuses to attach to such probes, so no libbpf program meets either.
 * bpf_usdt_arg_size() gives the size written.
 *
 * One function, and a macro of its name over it that adds only a hint to
 * clang, in the caller's own branch, that an error is unlikely:
 * `if (bpf_usdt_arg(...))` stays one branch (after `err =
 * bpf_usdt_arg(...)`, write `if (__builtin_expect(err, 0))`), where clang
 * would make the checks selects that have the verifier walk every
 * combination of failures (twelve at -mcpu=v1/v2: ~37,000 instructions,
 * not ~600). The function alone cannot give the hint: clang drops one on
 * a return value, and one on a branch inside does not reach the caller's.
 * The macro breaks a declaration of the name after this header, and the
 * call is a long, not an int; &bpf_usdt_arg, #undef and USDT_NO_ARG_HINT
 * get the function, without the hint (docs/bench.md).
 */
static __always_inline int bpf_usdt_arg(struct pt_regs *ctx, __u64 arg_num,
					long *res)
{
	/* Zeroed here first too: kernels before 6.5 want the memory behind
	 * a global function's pointer argument initialised. */
	*res = 0;
	return usdt__arg((void *)ctx, arg_num, res);
}
#ifndef USDT_NO_ARG_HINT
#define bpf_usdt_arg(ctx, arg_num, res) \
	__builtin_expect(bpf_usdt_arg(ctx, arg_num, res), 0)
#endif

/* The attach's usdt_cookie (usdt_attach_opts, or libbpf's bpf_usdt_opts
 * through usdt_program__attach()), or 0. */
static __always_inline long bpf_usdt_cookie(struct pt_regs *ctx)
{
	return usdt__cookie((void *)ctx);
}

/*
 * BPF_USDT(name, type1 arg1, ...) defines a program whose arguments are the
 * probe's, read as bpf_usdt_arg() reads them (0 when unreadable):
 *
 *	SEC("usdt")
 *	int BPF_USDT(on_request, int fd, const char *path) { ... }
 *
 * The spec is looked up once for all the arguments (usdt__args()), and the
 * program's body is the always-inline __usdt_body_<name>(). The values
 * take 32 bytes of the program's frame for four arguments or fewer, 96
 * for more: on a preemptible kernel, a frame of 49 bytes or more is
 * exposed to another task's run (docs/library.md, "Preemptible kernels").
 */
#define BPF_USDT(name, args...)                                                                           \
	name(struct pt_regs *ctx);                                                                        \
	static __always_inline typeof(name(                                                               \
		0)) __usdt_body_##name(struct pt_regs *ctx, ##args);                                      \
	typeof(name(0)) name(struct pt_regs *ctx)                                                         \
	{                                                                                                 \
		__USDT_VALS(args) __usdt_vals = {};                                                       \
                                                                                                          \
		if (__USDT_NARGS(args))                                                                   \
			__USDT_READ_VALS(ctx, &__usdt_vals, args);                                        \
		_Pragma("GCC diagnostic push")                                                            \
			_Pragma("GCC diagnostic ignored \"-Wint-conversion\"") return __usdt_body_##name( \
				__USDT_ARGS(args));                                                       \
		_Pragma("GCC diagnostic pop")                                                             \
	}                                                                                                 \
	static __always_inline typeof(name(                                                               \
		0)) __usdt_body_##name(struct pt_regs *ctx, ##args)

#ifdef USDT_STORAGE_TYPE
/*
 * Per-attach storage, with `#define USDT_STORAGE_TYPE struct my_state`
 * before the include: this attach's value, readable and writable, or NULL
 * where the attach has none. One value per link (or per call site of a
 * link, usdt_attach_opts.storage_per_site), set from
 * usdt_attach_opts.storage before the first hit, read and written in place
 * by user space (usdt_link__storage()), zeroed when the link goes. Costs
 * the cookie (or the IP-map lookup without cookies) and two array lookups,
 * which the kernel inlines. Without the define, neither the storage map
 * nor its code is in the object; USDT_MAX_STORAGE_CNT (above) caps the
 * values.
 */
static __always_inline USDT_STORAGE_TYPE *bpf_usdt_storage(struct pt_regs *ctx)
{
	return __usdt_storage((void *)ctx);
}
#endif

#endif /* __LIBUSDT_USDT_BPF_H */
