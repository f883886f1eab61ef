/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Layout of a USDT call-site spec as the BPF side reads it from the spec
 * array map. Shared, byte for byte, by the user-space library (src/) and the
 * BPF side (bpf/usdt_impl.bpf.h, behind bpf/usdt.bpf.h). Installed, but not
 * an API: only libusdt writes these and only its BPF side reads them.
 *
 * Every field has a fixed width and fixed offset, and no bitfields are used,
 * so the layout is the same on either byte order; the static asserts at the
 * end pin it.
 */
#ifndef __LIBUSDT_USDT_SPEC_H
#define __LIBUSDT_USDT_SPEC_H

#ifdef __bpf__
/* BPF programs get __u64 and friends from vmlinux.h or linux/types.h. */
#else
#include <linux/types.h>
#endif

/* Most arguments a USDT call site can carry (sys/sdt.h goes up to 12). */
#define USDT_MAX_ARG_CNT 12

/*
 * The layout version of the structures below. The BPF header writes it into
 * the object (usdt__layout in .rodata) and usdt_manager__new() refuses an
 * object whose version differs: change it with any change to this file that
 * the BPF side can see.
 */
#define USDT_SPEC_LAYOUT 7

/*
 * Capacity on demand (layout 3), after a head (layout 7). Spec IDs below
 * h (usdt__spec_head_cnt, USDT_SPEC_HEAD_CNT unless the manager set it
 * lower before load) are entries of usdt__spec_head, a plain array of
 * h + 1 specs that is there from load: writing it waits for nothing.
 * Entry h is no spec: it holds the owning store's token (see
 * src/store/chunks.c). Past the head, the spec map is an array of maps:
 * spec ID id is entry (id - h) % USDT_SPEC_CHUNK of chunk
 * (id - h) / USDT_SPEC_CHUNK, an array the manager creates when it hands
 * out the chunk's first ID (each insert into the outer array waits for an
 * RCU grace period). The IP map is an array of one map, a hash the
 * manager creates at the first IP-map attach and replaces by one twice as
 * big when it fills. Storage slots are chunked like specs past the head
 * (storage has none), USDT_STORAGE_CHUNK(value size) values a chunk
 * (about a page).
 */
#define USDT_SPEC_CHUNK 256
#define USDT_STORAGE_PAGE 4096
#define USDT_STORAGE_STRIDE(sz) (((sz) + 7) & ~7UL)
#define USDT_STORAGE_CHUNK(sz)                          \
	(USDT_STORAGE_STRIDE(sz) >= USDT_STORAGE_PAGE ? \
		 1 :                                    \
		 USDT_STORAGE_PAGE / USDT_STORAGE_STRIDE(sz))

/* No register: the base or index slot is unused. */
#define USDT_REG_NONE 0xffff

/*
 * The BPF program's context on each architecture, which base_off and
 * idx_off index: the part of it the BPF side reads (of the kernel's struct
 * pt_regs, the uapi part that holds every register an operand can name:
 * bpf_user_pt_regs_t where the arch has one), from its start to the last
 * word an operand names or the PC, and where in it the PC is, 8 bytes.
 * A last word no operand names is left out (x86's ss, arm64's pstate):
 * BPF_USDT() copies this much of the context to the BPF stack, where a
 * word less leaves the program's own code more of its 512 bytes. The
 * library's arch tables (src/reader/arch/, which check them against the
 * host's own headers in native builds) and the BPF side both take them
 * from here. Facts of the kernel, not of this layout: they never change
 * USDT_SPEC_LAYOUT (the BPF side bounds usdt__ctx_sz by its own largest).
 */
#define USDT_CTX_SZ_X86_64 160	/* struct pt_regs: r15 ... rsp, not ss */
#define USDT_PC_OFF_X86_64 128	/* rip */
#define USDT_CTX_SZ_ARM64 264	/* user_pt_regs: regs[31], sp, pc; no pstate */
#define USDT_PC_OFF_ARM64 256	/* pc */
#define USDT_CTX_SZ_S390X 152	/* user_pt_regs: args[1], psw, gprs[16] */
#define USDT_PC_OFF_S390X 16	/* psw.addr */
#define USDT_CTX_SZ_RISCV64 256 /* user_regs_struct: pc, x1 ... x31 */
#define USDT_PC_OFF_RISCV64 0	/* pc */
/* The largest and the smallest of them. */
#define USDT_CTX_SZ_MAX USDT_CTX_SZ_ARM64
#define USDT_CTX_SZ_MIN USDT_CTX_SZ_S390X

/* How an argument's value is obtained. */
enum usdt_spec_kind {
	/* Never written by libusdt: an all-zero (freed) spec reads as this. */
	USDT_SPEC_NONE = 0,
	/* value = val_off [+ base] [+ index << scale] [+ ip] */
	USDT_SPEC_VALUE = 1,
	/* value = *(size *)(val_off [+ base] [+ index << scale] [+ ip]) */
	USDT_SPEC_MEM = 2,
	/* The argument cannot be read; bpf_usdt_arg() returns -EOPNOTSUPP.
	 * val_off is the size the note wrote (layout 5). */
	USDT_SPEC_UNSUPPORTED = 3,
};

/* usdt_arg_spec.flags */
#define USDT_SPEC_F_SIGNED 0x01 /* sign-extend from size bytes */
#define USDT_SPEC_F_IPREL 0x02	/* add the probe's run-time IP to the address */
#define USDT_SPEC_F_FLOAT 0x04	/* raw bits of a float (informational) */
#define USDT_SPEC_F_TRUNC \
	0x08			/* 16-byte argument: low 8 bytes only,
				 * and bpf_usdt_arg() says -E2BIG (layout 5) */
#define USDT_SPEC_SCALE_SHIFT 4 /* bits 4-5: log2 of the index scale */
#define USDT_SPEC_SCALE_MASK 0x30
#define USDT_SPEC_F_IDX_S32 0x40 /* index is its low 32 bits, sign-extended */
#define USDT_SPEC_F_IDX_U32 0x80 /* index is its low 32 bits, zero-extended */

/*
 * usdt_arg_spec.fast (layout 4): what the BPF side does with the value,
 * precomputed by the manager from the other fields (usdt__arg_fast()):
 *	bits 0-2	(layout 5) the errno bpf_usdt_arg() returns with the
 *			value: E2BIG (7) for a 16-byte argument cut to its
 *			low 8 bytes (USDT_SPEC_F_TRUNC), else 0;
 *	bits 3-5	shift it left and back right by this many bits
 *			(64 - 8 * size: 0 for 8 bytes), to keep size bytes,
 *	USDT_FAST_SIGNED	arithmetically (sign-extending);
 *	USDT_FAST_REG	the value is the whole 8-byte word at base_off (a
 *			multiple of 8) of the context (kind USDT_SPEC_VALUE,
 *			no index, not IP-relative, val_off 0): BPF_USDT()
 *			then reads it in a few instructions.
 * 0 for unsupported arguments. The errno sits in the byte already loaded
 * for the shift: returning it costs the checked read two instructions.
 */
#define USDT_FAST_REG 0x80
#define USDT_FAST_SIGNED 0x40
#define USDT_FAST_SHIFT_MASK 0x38
#define USDT_FAST_ERRNO_MASK 0x07 /* E2BIG is 7 on every Linux arch */

/*
 * One argument: 16 bytes.
 *
 * base_off and idx_off are byte offsets into the kernel's struct pt_regs of
 * the architecture the probe runs on (the BPF program's context), or
 * USDT_REG_NONE. A base offset that is not a multiple of 8 names a byte
 * inside a register (x86 %ah), read on little-endian hosts only.
 *
 * size is 1, 2, 4 or 8: the number of bytes read from memory and kept of the
 * value. A 16-byte argument has size 8 and USDT_SPEC_F_TRUNC; for big-endian
 * targets the parser already moved val_off to the low half. The size the
 * note wrote, which bpf_usdt_arg_size() returns, is thus 16 with
 * USDT_SPEC_F_TRUNC, val_off for kind USDT_SPEC_UNSUPPORTED (any size, such
 * as a 24-byte struct), else size.
 */
struct usdt_arg_spec {
	__u64 val_off;
	__u16 base_off;
	__u16 idx_off;
	__u8 kind;
	__u8 size;
	__u8 flags;
	__u8 fast; /* USDT_FAST_*, or 0 */
};

/*
 * Windows (layout 6): memory operands of one call site that BPF_USDT() reads
 * with one bpf_probe_read_user() between them, where one read of a few
 * dozen bytes costs about what one read of 8 does (stack slots such as
 * 8@16(%rsp) and -4@8(%rsp) lie within a few bytes of each other).
 *
 * Invariants, as the manager writes them (usdt__spec_windows()):
 *	- a window holds two or more arguments of kind USDT_SPEC_MEM, of size
 *	  1, 2, 4 or 8, with the same base register (base_off a multiple of
 *	  8), no index register and not IP-relative, whose val_off is a
 *	  32-bit displacement (sign-extended);
 *	- each such argument's bytes [val_off, val_off + size) lie inside the
 *	  window's [off, off + len), and 2 <= len <= USDT_WIN_MAX;
 *	- windows 0 to win_cnt - 1 are used, the others all zero;
 *	- arg_win[i] is 0 for an argument read alone, else
 *	  (window + 1) << USDT_WIN_SHIFT | (val_off - off of window).
 * The argument's own fields are unchanged: a reader that ignores windows,
 * or whose window read faults (say, one that runs into an unmapped page),
 * reads each argument alone, as before layout 6.
 *
 * One window of 32 bytes: BPF_USDT() holds it on the BPF stack beside its
 * copy of the context (264 bytes on arm64) and the arguments, out of 512
 * in all; a second window, or a wider one, would leave the program's own
 * code too little. The manager picks the base register with the most
 * arguments in one span.
 */
#define USDT_WIN_MAX 32	       /* bytes a window spans at most */
#define USDT_WIN_CNT 1	       /* windows a spec has at most */
#define USDT_WIN_SHIFT 6       /* arg_win: window + 1 in bits 6-7 */
#define USDT_WIN_POS_MASK 0x3f /* arg_win: offset in it in bits 0-5 */

/* One window: len bytes from the base register's value + off. 8 bytes. */
struct usdt_win {
	__s32 off;	/* sign-extended and added to the register */
	__u16 base_off; /* the register: a context offset, as base_off */
	__u8 len;	/* 2 to USDT_WIN_MAX; 0 for an unused window */
	__u8 reserved;
};

/* One call site's (or several identical call sites') spec: 224 bytes. */
struct usdt_spec {
	struct usdt_arg_spec args[USDT_MAX_ARG_CNT];
	/* The user's cookie from usdt_attach_opts, for bpf_usdt_cookie(). */
	__u64 usr_cookie;
	__u16 arg_cnt;
	__u8 win_cnt; /* windows in use (layout 6) */
	__u8 reserved;
	__u8 arg_win[USDT_MAX_ARG_CNT];
	struct usdt_win wins[USDT_WIN_CNT];
};

/*
 * How the BPF side finds a call site's spec ID and storage slot.
 *
 * Cookie mode: the 64-bit bpf_cookie of the site's uprobe is
 *	bits  0-31  spec ID + 1 (0: no cookie, look in the IP map instead)
 *	bits 32-63  storage slot + 1 (0: the attach has no storage)
 * so a program without storage reads the low 32 bits as before.
 *
 * IP-map mode (cookie 0): the IP map's value for the site's run-time
 * address is a struct usdt_ip_val.
 */
#define USDT_COOKIE_ID_BITS 32
#define USDT_COOKIE_ID_MASK 0xffffffffULL
#define USDT_COOKIE_SLOT_SHIFT 32

struct usdt_ip_val {
	__u32 spec_id;
	__u32 slot; /* storage slot + 1; 0: none */
};

#define __USDT_SPEC_ASSERT(c, m) _Static_assert(c, m)
__USDT_SPEC_ASSERT(USDT_COOKIE_SLOT_SHIFT == USDT_COOKIE_ID_BITS &&
			   USDT_COOKIE_ID_MASK ==
				   (1ULL << USDT_COOKIE_ID_BITS) - 1,
		   "slot right above the spec ID");
__USDT_SPEC_ASSERT(USDT_COOKIE_SLOT_SHIFT + 32 == 64,
		   "slot + 1 fills the cookie's high 32 bits");
__USDT_SPEC_ASSERT(sizeof(struct usdt_ip_val) == 8, "IP-map value is 8 bytes");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_ip_val, slot) == 4,
		   "slot at 4");
__USDT_SPEC_ASSERT(sizeof(struct usdt_arg_spec) == 16, "arg spec is 16 bytes");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_arg_spec, base_off) == 8,
		   "base_off at 8");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_arg_spec, idx_off) == 10,
		   "idx_off at 10");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_arg_spec, kind) == 12,
		   "kind at 12");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_arg_spec, size) == 13,
		   "size at 13");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_arg_spec, flags) == 14,
		   "flags at 14");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_arg_spec, fast) == 15,
		   "fast at 15");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_spec, usr_cookie) == 192,
		   "usr_cookie at 192");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_spec, arg_cnt) == 200,
		   "arg_cnt at 200");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_spec, win_cnt) == 202,
		   "win_cnt at 202");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_spec, arg_win) == 204,
		   "arg_win at 204");
__USDT_SPEC_ASSERT(__builtin_offsetof(struct usdt_spec, wins) == 216,
		   "wins at 216");
__USDT_SPEC_ASSERT(sizeof(struct usdt_win) == 8, "window is 8 bytes");
__USDT_SPEC_ASSERT(sizeof(struct usdt_spec) == 224, "spec is 224 bytes");
__USDT_SPEC_ASSERT(USDT_WIN_MAX - 1 <= USDT_WIN_POS_MASK &&
			   USDT_WIN_CNT < (0x100 >> USDT_WIN_SHIFT) &&
			   USDT_WIN_MAX % 8 == 0,
		   "arg_win holds a window number and any offset in it");

/* Whole words, the PC inside, between the smallest and the largest. */
#define __USDT_CTX_OK(sz, pc)                                  \
	((sz) % 8 == 0 && (pc) % 8 == 0 && (pc) + 8 <= (sz) && \
	 (sz) >= USDT_CTX_SZ_MIN && (sz) <= USDT_CTX_SZ_MAX)
__USDT_SPEC_ASSERT(__USDT_CTX_OK(USDT_CTX_SZ_X86_64, USDT_PC_OFF_X86_64),
		   "x86_64 context");
__USDT_SPEC_ASSERT(__USDT_CTX_OK(USDT_CTX_SZ_ARM64, USDT_PC_OFF_ARM64),
		   "arm64 context");
__USDT_SPEC_ASSERT(__USDT_CTX_OK(USDT_CTX_SZ_S390X, USDT_PC_OFF_S390X),
		   "s390x context");
__USDT_SPEC_ASSERT(__USDT_CTX_OK(USDT_CTX_SZ_RISCV64, USDT_PC_OFF_RISCV64),
		   "riscv64 context");
__USDT_SPEC_ASSERT(USDT_CTX_SZ_MAX < USDT_REG_NONE,
		   "no context offset reads as no register");

#endif /* __LIBUSDT_USDT_SPEC_H */
