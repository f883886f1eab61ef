// SPDX-License-Identifier: BSD-2-Clause
/*
 * arm64 operand parser, for the operands GCC and clang print for sys/sdt.h:
 *
 *   5  -536  #5  0x10                  a constant
 *   x0..x30  w0..w30  sp  xzr  wzr      a register's value (wN is the low
 *                                       half of xN; the zero registers
 *                                       read as the constant 0)
 *   [x29]  [sp, 8]  [x0, #-8]           memory at a base plus an offset
 *   [x3, x1]  [x3, x1, lsl 3]           memory at a base plus an index
 *   [x3, w0, sxtw 2]  [x3, w0, uxtw]    ... with a 32-bit index, extended
 *                                       (gcc -O2 for arrays indexed by int)
 *   sym  sym+8  .LANCHOR0+8             a symbol's address as a value, or
 *                                       the value at it (a literal load):
 *                                       see usdt__bare_symbol()
 *   [x0, #:lo12:sym]                    memory at x0 (adrp: the symbol's
 *   [x0, #:got_lo12:sym]                page) plus the low 12 bits of the
 *                                       symbol's (or its GOT slot's) address
 *
 * A compiler-local label in ":lo12:" ("[x1, #:lo12:.LANCHOR0]", gcc -O2's
 * section anchor) has no symbol: its low 12 bits are read from the
 * instructions before the site (src/reader/arch/arm64_code.c).
 *
 * Refused with a reason: FP/SIMD/SVE registers (v0, d0, s0, q0, z0...),
 * and other relocation operands.
 */
#include <elf.h>
#include <stddef.h>
#ifdef __aarch64__
#include <asm/bpf_perf_event.h> /* the host's bpf_user_pt_regs_t */
#endif

#include "reader/arch/arch.h"
#include "reader/arch/code.h"

/*
 * The BPF context of a uprobe on arm64 is the kernel's struct pt_regs,
 * which starts with struct user_pt_regs (arch/arm64/include/uapi/asm/
 * ptrace.h: u64 regs[31]; u64 sp; u64 pc; u64 pstate;), the type that
 * <asm/bpf_perf_event.h> names bpf_user_pt_regs_t. Everything we read lies
 * in that prefix, up to the PC: no name here reads pstate, the last word,
 * so the part the BPF side reads ends with the PC (usdt_spec.h's size,
 * with the PC's offset). xN is at N * 8.
 */
enum {
	ARM64_SP = 31 * 8,
	ARM64_PSTATE = USDT_PC_OFF_ARM64 + 8,
};
_Static_assert(ARM64_SP + 8 == USDT_PC_OFF_ARM64 &&
		       USDT_PC_OFF_ARM64 + 8 == USDT_CTX_SZ_ARM64,
	       "regs[31], sp, pc read; pstate not");
#ifdef __aarch64__
_Static_assert(offsetof(struct user_pt_regs, regs) == 0 &&
		       offsetof(struct user_pt_regs, sp) == ARM64_SP &&
		       offsetof(struct user_pt_regs, pc) == USDT_PC_OFF_ARM64 &&
		       offsetof(struct user_pt_regs, pstate) == ARM64_PSTATE,
	       "the host's user_pt_regs");
_Static_assert(sizeof(bpf_user_pt_regs_t) == ARM64_PSTATE + 8,
	       "the host's bpf_user_pt_regs_t is the context");
#endif

/* xN/wN/sp/wsp and the aliases fp (x29) and lr (x30). */
static int reg_off(const char *name, size_t len, int *width)
{
	int n, w = 8;

	if (usdt__name_is(name, len, "sp") || usdt__name_is(name, len, "wsp")) {
		if (width)
			*width = len == 2 ? 8 : 4;
		return ARM64_SP;
	}
	if (usdt__name_is(name, len, "fp"))
		n = 29;
	else if (usdt__name_is(name, len, "lr"))
		n = 30;
	else if (len >= 2 && (name[0] == 'x' || name[0] == 'w')) {
		n = usdt__reg_num(name + 1, len - 1);
		if (n < 0 || n > 30)
			return -ENOENT;
		w = name[0] == 'x' ? 8 : 4;
	} else {
		return -ENOENT;
	}
	if (width)
		*width = w;
	return n * 8;
}

static bool is_zero_reg(const char *name, size_t len)
{
	return usdt__name_is(name, len, "xzr") ||
	       usdt__name_is(name, len, "wzr");
}

/* Why a name that is not a general-purpose register is refused. */
static int bad_reg(struct usdt__arg *arg, const char *name, size_t len)
{
	int q = len > USDT__QUOTE_MAX ? USDT__QUOTE_MAX : (int)len;
	int n = len > 1 ? usdt__reg_num(name + 1, len - 1) : -1;

	if (n >= 0 && n <= 31 && name[0] && strchr("bhsdqvzp", name[0]))
		return usdt__op_fail_fpreg(arg, "", name, len);
	return usdt__op_fail(arg, -EINVAL, "unknown register %.*s", q, name);
}

/* A relocation operand we do not read, such as ":abs_g0:" outside []. */
static int reloc(struct usdt__arg *arg, const char *op, size_t len, size_t p)
{
	size_t n = 0;

	/* The relocation's name, as in ":lo12:" or ":got_lo12:". */
	while (p + 1 + n < len &&
	       (usdt__is_alpha(op[p + 1 + n]) ||
		usdt__is_digit(op[p + 1 + n]) || op[p + 1 + n] == '_'))
		n++;
	if (n > USDT__QUOTE_MAX)
		n = USDT__QUOTE_MAX;
	return usdt__op_fail(arg, -EOPNOTSUPP,
			     "arm64 relocation operand :%.*s: not supported",
			     (int)n, op + p + 1);
}

/*
 * The offset of "[xB, #:lo12:sym]" (after adrp xB, sym: xB holds the
 * symbol's 4 KiB page) or "[xB, #:got_lo12:sym]" (xB holds the page of the
 * symbol's GOT slot), at op[*pos] == ':'.
 */
static int parse_lo12(const char *op, size_t len, size_t *pos,
		      struct usdt__arg *arg)
{
	size_t p = *pos + 1, n = 0;

	while (p + n < len && (usdt__is_alpha(op[p + n]) ||
			       usdt__is_digit(op[p + n]) || op[p + n] == '_'))
		n++;
	if (p + n >= len || op[p + n] != ':' ||
	    (!usdt__name_is(op + p, n, "lo12") &&
	     !usdt__name_is(op + p, n, "got_lo12")))
		return reloc(arg, op, len, *pos);
	arg->lo_reloc = USDT__LO_AARCH64;
	arg->got = usdt__name_is(op + p, n, "got_lo12");
	p += n + 1;
	*pos = p;
	return usdt__scan_sym_expr(op, len, pos, arg, false);
}

/*
 * The index part after "[xB, ": "xM", "xM, lsl N", "xM, sxtx [N]" (sxtx
 * of a 64-bit register changes nothing); a wM index needs sxtw/uxtw,
 * which we refuse.
 */
static int parse_index(const char *op, size_t len, size_t *pos,
		       struct usdt__arg *arg)
{
	size_t p = *pos, n, ext, extn;
	uint64_t amount = 0;
	int off, width, err;
	bool has_amount = false;

	n = usdt__span_alnum(op, len, p);
	off = reg_off(op + p, n, &width);
	if (off < 0)
		return bad_reg(arg, op + p, n);
	if (off == ARM64_SP)
		return usdt__op_fail(arg, -EINVAL,
				     "sp cannot be an index register");
	usdt__set_name(arg->index, op + p, n);
	p += n;
	usdt__skip_blanks(op, len, &p);
	if (p < len && op[p] == ',') {
		p++;
		usdt__skip_blanks(op, len, &p);
		ext = p;
		extn = usdt__span_alnum(op, len, p);
		p += extn;
		usdt__skip_blanks(op, len, &p);
		if (p < len && op[p] == '#')
			p++;
		if (p < len && usdt__is_digit(op[p])) {
			err = usdt__scan_num(op, len, &p, &amount, arg);
			if (err)
				return err;
			has_amount = true;
		}
		if (usdt__name_is(op + ext, extn, "sxtw") ||
		    usdt__name_is(op + ext, extn, "uxtw")) {
			/* gcc -O2 indexes an array by an int this way. */
			if (width != 4)
				return usdt__op_fail(arg, -EINVAL,
						     "%.*s needs a w register index",
						     (int)extn, op + ext);
			arg->idx_ext = op[ext] == 's' ? USDT__IDX_SXTW :
							USDT__IDX_UXTW;
		} else if (usdt__name_is(op + ext, extn, "lsl")) {
			if (!has_amount)
				return usdt__op_fail(arg, -EINVAL,
						     "lsl without a shift amount");
		} else if (!usdt__name_is(op + ext, extn, "sxtx")) {
			return usdt__op_fail(arg, -EINVAL,
					     "unknown index shift or extension");
		}
		if (amount > 3)
			return usdt__op_fail(arg, -EINVAL,
					     "index shift must be 0 to 3");
	}
	if (width != 8 && !arg->idx_ext)
		return usdt__op_fail(arg, -EINVAL,
				     "a 32-bit index needs sxtw or uxtw");
	arg->idx_off = off;
	arg->scale = 1 << amount;
	*pos = p;
	return 0;
}

/* "[base]", "[base, off]", "[base, #off]", "[base, index...]". */
static int parse_mem(const char *op, size_t len, struct usdt__arg *arg)
{
	size_t p = 1, n;
	uint64_t v;
	int off, width, err;
	bool hash;

	arg->mem = true;
	usdt__skip_blanks(op, len, &p);
	n = usdt__span_alnum(op, len, p);
	if (!n)
		return usdt__op_fail(arg, -EINVAL, "expected a base register");
	off = reg_off(op + p, n, &width);
	if (off < 0)
		return bad_reg(arg, op + p, n);
	if (width != 8)
		return usdt__op_fail(arg, -EINVAL,
				     "%.*s cannot be a base register", (int)n,
				     op + p);
	usdt__set_name(arg->base, op + p, n);
	arg->base_off = off;
	p += n;
	usdt__skip_blanks(op, len, &p);
	if (p < len && op[p] == ',') {
		p++;
		usdt__skip_blanks(op, len, &p);
		hash = p < len && op[p] == '#';
		if (hash)
			p++;
		if (p < len && op[p] == ':') {
			err = parse_lo12(op, len, &p, arg);
			if (err)
				return err;
		} else if (hash || (p < len && usdt__is_num_start(op[p]))) {
			err = usdt__scan_num(op, len, &p, &v, arg);
			if (err)
				return err;
			arg->disp = (int64_t)v;
		} else if (p < len && usdt__is_alpha(op[p])) {
			err = parse_index(op, len, &p, arg);
			if (err)
				return err;
		} else {
			return usdt__op_fail(arg, -EINVAL,
					     "expected an offset or an index");
		}
		usdt__skip_blanks(op, len, &p);
	}
	if (p >= len || op[p] != ']')
		return usdt__op_fail(arg, -EINVAL, "expected ']'");
	if (p + 1 != len)
		return usdt__op_fail(arg, -EINVAL,
				     "garbage after a memory operand");
	return 0;
}

/*
 * Is op[0..len), whose first n characters are letters and digits, a
 * symbol expression ("sym", "sym+8", ".LANCHOR0") rather than a register?
 * Register names win: a symbol called x0 cannot be told from the register.
 */
static bool is_symbol(const char *op, size_t len, size_t n)
{
	if (op[0] == '.' || op[0] == '_')
		return true;
	if (!n || !usdt__is_alpha(op[0]))
		return false;
	if (n == len && usdt__reg_like(op, n))
		return false;
	if (n < len)
		return strchr("+-._$", op[n]) != NULL;
	return reg_off(op, n, NULL) < 0 && !is_zero_reg(op, n);
}

/* A bare symbol: an address or a literal load, see usdt__bare_symbol(). */
static int parse_symbol(const char *op, size_t len, struct usdt__arg *arg)
{
	size_t p = 0;
	int err;

	err = usdt__scan_sym_expr(op, len, &p, arg, false);
	if (err)
		return err;
	if (p != len)
		return usdt__op_fail(arg, -EINVAL, "garbage after a symbol");
	usdt__bare_symbol(arg);
	return 0;
}

static int parse_operand(const char *op, size_t len, struct usdt__arg *arg)
{
	size_t p = 0, n;
	uint64_t v;
	int off, width, err;

	if (!len)
		return usdt__op_fail(arg, -EINVAL, "empty operand");
	if (op[0] == '[')
		return parse_mem(op, len, arg);
	if (op[0] == ':')
		return reloc(arg, op, len, 0);
	if (op[0] == '#' || usdt__is_num_start(op[0])) {
		if (op[0] == '#')
			p++;
		if (p < len && op[p] == ':')
			return reloc(arg, op, len, p);
		err = usdt__scan_num(op, len, &p, &v, arg);
		if (err)
			return err;
		if (p != len)
			return usdt__op_fail(arg, -EINVAL,
					     "garbage after a constant");
		arg->disp = (int64_t)v;
		return 0;
	}
	n = usdt__span_alnum(op, len, 0);
	if (is_symbol(op, len, n))
		return parse_symbol(op, len, arg);
	if (!n)
		return usdt__op_fail(arg, -EINVAL,
				     "expected a register or a constant");
	if (n != len)
		return usdt__op_fail(arg, -EINVAL, "garbage after a register");
	if (is_zero_reg(op, n))
		return 0; /* the constant 0 */
	off = reg_off(op, n, &width);
	if (off < 0)
		return bad_reg(arg, op, n);
	usdt__set_name(arg->base, op, n);
	arg->base_off = off;
	arg->reg_width = (uint8_t)width;
	return 0;
}

const struct usdt__arch_ops usdt__arch_arm64 = {
	.e_machine = EM_AARCH64,
	.name = "aarch64",
	.parse_operand = parse_operand,
	.reg_off = reg_off,
	.label_lo = usdt__arm64_label_lo,
	.pt_regs_size = USDT_CTX_SZ_ARM64,
	.ip_off = USDT_PC_OFF_ARM64,
};
