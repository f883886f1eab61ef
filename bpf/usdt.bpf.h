/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libusdt, BPF side: read the arguments of the USDT probe a program was
 * attached to by usdt_manager__attach().
 *
 * The functions and BPF_USDT() have the names, signatures and meaning of
 * libbpf's <bpf/usdt.bpf.h>, so a program moves over by changing one
 * #include. The maps and the include guard are our own: including both
 * headers fails loudly at compile time (the functions are defined twice)
 * instead of mixing two incompatible spec layouts.
 *
 * Include after vmlinux.h (or linux/types.h plus a struct pt_regs
 * declaration); it needs nothing else but libbpf's <bpf/bpf_helpers.h>:
 *
 *	#include "vmlinux.h"
 *	#include <bpf/bpf_helpers.h>
 *	#include <usdt/usdt.bpf.h>
 *
 * Compile with -D__TARGET_ARCH_x86 (arm64, s390, riscv) as for libbpf's
 * bpf_tracing.h, and registers are read straight from the context;
 * without it they are read with a helper call.
 *
 * Map sizes can be set before the include (USDT_MAX_SPEC_CNT,
 * USDT_MAX_IP_CNT) or by usdt_manager_opts before load.
 */
#ifndef __LIBUSDT_USDT_BPF_H
#define __LIBUSDT_USDT_BPF_H

#include <bpf/bpf_helpers.h>

#include "usdt_spec.h"

#ifndef USDT_MAX_SPEC_CNT
#define USDT_MAX_SPEC_CNT 256
#endif

#ifndef USDT_MAX_IP_CNT
#define USDT_MAX_IP_CNT (4 * USDT_MAX_SPEC_CNT)
#endif

#ifndef __USDT_ENOENT
#define __USDT_ENOENT 2
#define __USDT_E2BIG 7
#define __USDT_ESRCH 3
#define __USDT_EINVAL 22
#define __USDT_EOPNOTSUPP 95
#endif

/* Spec ID -> spec. Written only by libusdt. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, USDT_MAX_SPEC_CNT);
	__type(key, int);
	__type(value, struct usdt_spec);
} usdt__specs SEC(".maps") __weak;

/* Run-time IP of a call site -> spec ID, for attaches without cookies. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, USDT_MAX_IP_CNT);
	__type(key, long);
	__type(value, __u32);
} usdt__ip2spec SEC(".maps") __weak;

/* Set by libbpf at load time: can the kernel give a program its cookie? */
extern const _Bool LINUX_HAS_BPF_COOKIE __kconfig;

/*
 * Where the PC is in the program's context, for targets whose arch this
 * header was not told about (no __TARGET_ARCH_xxx): the manager writes it
 * before load. 0xffff: unknown; IP-map lookups then fail with -ESRCH and
 * IP-relative arguments with -EOPNOTSUPP.
 */
const volatile __u32 usdt__ip_off __weak = 0xffff;

/*
 * Registers are read straight from the context where the arch is known:
 * the verifier allows constant-offset loads from struct pt_regs, and a
 * branch tree over the offsets costs a few compares instead of a helper
 * call. The slot count (8-byte words of the context) bounds the offsets
 * to the context's size; __USDT_IP_OFF is where the PC is in it.
 */
#if defined(__TARGET_ARCH_x86)
#define __USDT_REG_SLOTS 21
#define __USDT_IP_OFF 128
#elif defined(__TARGET_ARCH_arm64)
#define __USDT_REG_SLOTS 34
#define __USDT_IP_OFF 256
#elif defined(__TARGET_ARCH_s390)
#define __USDT_REG_SLOTS 19
#define __USDT_IP_OFF 16
#elif defined(__TARGET_ARCH_riscv)
#define __USDT_REG_SLOTS 32
#define __USDT_IP_OFF 0
#endif

#ifdef __USDT_REG_SLOTS
/*
 * Each load is its own asm statement with the offset written in: left to
 * itself, clang merges the cases into one load from a computed ctx
 * pointer, which the verifier refuses.
 */
#define __USDT_SLOT(n, off)                                                 \
	case off:                                                           \
		if ((n) < __USDT_REG_SLOTS) {                               \
			__u64 __v;                                          \
			asm volatile("%0 = *(u64 *)(%1 + " #off ")"         \
				     : "=r"(__v) : "r"(ctx));               \
			return __v;                                         \
		}                                                           \
		return 0;

static __always_inline __u64 __usdt_reg(struct pt_regs *ctx, __u32 off)
{
	switch (off) {
	__USDT_SLOT(0, 0) __USDT_SLOT(1, 8) __USDT_SLOT(2, 16)
	__USDT_SLOT(3, 24) __USDT_SLOT(4, 32) __USDT_SLOT(5, 40)
	__USDT_SLOT(6, 48) __USDT_SLOT(7, 56) __USDT_SLOT(8, 64)
	__USDT_SLOT(9, 72) __USDT_SLOT(10, 80) __USDT_SLOT(11, 88)
	__USDT_SLOT(12, 96) __USDT_SLOT(13, 104) __USDT_SLOT(14, 112)
	__USDT_SLOT(15, 120) __USDT_SLOT(16, 128) __USDT_SLOT(17, 136)
	__USDT_SLOT(18, 144) __USDT_SLOT(19, 152) __USDT_SLOT(20, 160)
	__USDT_SLOT(21, 168) __USDT_SLOT(22, 176) __USDT_SLOT(23, 184)
	__USDT_SLOT(24, 192) __USDT_SLOT(25, 200) __USDT_SLOT(26, 208)
	__USDT_SLOT(27, 216) __USDT_SLOT(28, 224) __USDT_SLOT(29, 232)
	__USDT_SLOT(30, 240) __USDT_SLOT(31, 248) __USDT_SLOT(32, 256)
	__USDT_SLOT(33, 264)
	default:
		return 0;
	}
}

static __always_inline long __usdt_ip(struct pt_regs *ctx)
{
	return (long)__usdt_reg(ctx, __USDT_IP_OFF);
}
#else
static __always_inline __u64 __usdt_reg(struct pt_regs *ctx, __u32 off)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (void *)ctx + off);
	return v;
}

static __always_inline long __usdt_ip(struct pt_regs *ctx)
{
	if (usdt__ip_off == 0xffff)
		return 0;
	return (long)__usdt_reg(ctx, usdt__ip_off);
}
#endif

/*
 * The spec ID of the call site that fired. With a cookie, the manager put
 * ID + 1 in it; a zero cookie means the attach used the IP map.
 */
static __always_inline int __usdt_spec_id(struct pt_regs *ctx)
{
	__u32 *id;
	long ip;

	if (LINUX_HAS_BPF_COOKIE) {
		__u64 cookie = bpf_get_attach_cookie(ctx);

		if (cookie)
			return (int)(cookie - 1);
	}
	ip = __usdt_ip(ctx);
	id = bpf_map_lookup_elem(&usdt__ip2spec, &ip);
	return id ? (int)*id : -__USDT_ESRCH;
}

static __always_inline struct usdt_spec *__usdt_spec(struct pt_regs *ctx)
{
	int id = __usdt_spec_id(ctx);

	if (id < 0)
		return 0;
	return bpf_map_lookup_elem(&usdt__specs, &id);
}

/* The number of arguments of the probe, or -ESRCH. */
__weak __hidden int bpf_usdt_arg_cnt(struct pt_regs *ctx)
{
	struct usdt_spec *spec = __usdt_spec(ctx);

	if (!spec)
		return -__USDT_ESRCH;
	return spec->arg_cnt;
}

/* The size in bytes (1, 2, 4, 8 or 16) of argument arg_num, or -ENOENT
 * past the last one, or -ESRCH. */
__weak __hidden int bpf_usdt_arg_size(struct pt_regs *ctx, __u64 arg_num)
{
	struct usdt_spec *spec = __usdt_spec(ctx);
	struct usdt_arg_spec *a;

	if (!spec)
		return -__USDT_ESRCH;
	if (arg_num >= USDT_MAX_ARG_CNT || arg_num >= spec->arg_cnt)
		return -__USDT_ENOENT;
	a = &spec->args[arg_num];
	return a->flags & USDT_SPEC_F_TRUNC ? 16 : a->size;
}

/*
 * Read argument arg_num into *res, sign- or zero-extended to 64 bits.
 * Returns 0; -ENOENT past the last argument; -ESRCH when the program was
 * not attached by libusdt; -EOPNOTSUPP when the argument cannot be read
 * (see `usdt list`); or the error of the memory read. *res is 0 on error.
 */
__weak __hidden int bpf_usdt_arg(struct pt_regs *ctx, __u64 arg_num,
				 long *res)
{
	struct usdt_spec *spec;
	struct usdt_arg_spec *a;
	__u64 val, addr;
	__u32 size, shift;
	int err;

	*res = 0;
	spec = __usdt_spec(ctx);
	if (!spec)
		return -__USDT_ESRCH;
	if (arg_num >= USDT_MAX_ARG_CNT || arg_num >= spec->arg_cnt)
		return -__USDT_ENOENT;
	a = &spec->args[arg_num];

	if (a->kind != USDT_SPEC_VALUE && a->kind != USDT_SPEC_MEM)
		return a->kind == USDT_SPEC_UNSUPPORTED ? -__USDT_EOPNOTSUPP
							: -__USDT_EINVAL;
	size = a->size;
	if (size == 0 || size > 8)
		return -__USDT_EINVAL;

	addr = a->val_off;
	if (a->base_off != USDT_REG_NONE) {
		/* A base offset inside a register names a byte of it (%ah). */
		val = __usdt_reg(ctx, a->base_off & ~7U);
		addr += val >> ((a->base_off & 7) * 8);
	}
	if (a->idx_off != USDT_REG_NONE) {
		val = __usdt_reg(ctx, a->idx_off);
		/* arm64 "[x3, w0, sxtw]": a 32-bit index, extended. */
		if (a->flags & USDT_SPEC_F_IDX_S32)
			val = (__u64)(__s64)(__s32)val;
		else if (a->flags & USDT_SPEC_F_IDX_U32)
			val = (__u32)val;
		addr += val << ((a->flags & USDT_SPEC_SCALE_MASK) >>
				USDT_SPEC_SCALE_SHIFT);
	}
	if (a->flags & USDT_SPEC_F_IPREL) {
		long ip = __usdt_ip(ctx);

		/* 0: built without __TARGET_ARCH_xxx and the manager could
		 * not tell where the PC is (created after load). */
		if (!ip)
			return -__USDT_EOPNOTSUPP;
		addr += ip;
	}

	if (a->kind == USDT_SPEC_MEM) {
		val = 0;
		err = bpf_probe_read_user(&val, size, (void *)addr);
		if (err)
			return err;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		/* The bytes read sit in the high end of val. */
		val >>= (8 - size) * 8;
#endif
	} else {
		val = addr;
	}

	/* Keep size bytes, sign-extending signed arguments. */
	shift = 64 - size * 8;
	val <<= shift;
	if (a->flags & USDT_SPEC_F_SIGNED)
		val = (__u64)((__s64)val >> shift);
	else
		val >>= shift;
	*res = (long)val;
	return 0;
}

/* The cookie given in usdt_attach_opts.usr_cookie, or 0. */
__weak __hidden long bpf_usdt_cookie(struct pt_regs *ctx)
{
	struct usdt_spec *spec = __usdt_spec(ctx);

	return spec ? (long)spec->usr_cookie : 0;
}

/*
 * BPF_USDT(name, type1 arg1, ...) defines a program whose arguments are the
 * probe's, read with bpf_usdt_arg() (0 when unreadable):
 *
 *	SEC("usdt")
 *	int BPF_USDT(on_request, int fd, const char *path) { ... }
 */
#define __USDT_NTH(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, \
		   ...) N
#define __USDT_NARGS(...)                                                   \
	__USDT_NTH(_, ##__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define __USDT_JOIN2(a, b) a##b
#define __USDT_JOIN(a, b) __USDT_JOIN2(a, b)

#define __USDT_GET(n)                                                       \
	({                                                                  \
		long __v;                                                   \
		bpf_usdt_arg(ctx, n, &__v);                                 \
		(void *)__v;                                                \
	})
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

#define BPF_USDT(name, args...)                                             \
	name(struct pt_regs *ctx);                                          \
	static __always_inline typeof(name(0))                              \
	__usdt_body_##name(struct pt_regs *ctx, ##args);                    \
	typeof(name(0)) name(struct pt_regs *ctx)                           \
	{                                                                   \
		_Pragma("GCC diagnostic push")                              \
		_Pragma("GCC diagnostic ignored \"-Wint-conversion\"")      \
		return __usdt_body_##name(__USDT_ARGS(args));               \
		_Pragma("GCC diagnostic pop")                               \
	}                                                                   \
	static __always_inline typeof(name(0))                              \
	__usdt_body_##name(struct pt_regs *ctx, ##args)

#endif /* __LIBUSDT_USDT_BPF_H */
