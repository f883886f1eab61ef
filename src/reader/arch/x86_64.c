// SPDX-License-Identifier: BSD-2-Clause
/*
 * x86_64 operand parser: AT&T syntax, as GCC and clang print the operands
 * of sys/sdt.h's "nor" constraint.
 *
 *   $imm  $sym  $sym+8  $72+sym        an immediate value
 *   %rax %eax %ax %al %ah %r8d ...     a register's value
 *   [disp](%base[,%index[,scale]])     memory; disp is a number, a symbol,
 *   disp(,%index[,scale])              or symbol plus or minus numbers
 *   sym(%rip)  sym@GOTPCREL(%rip)      memory PC-relative, through the GOT
 *   sym  sym+8  1234                   memory at an absolute address
 *
 * Only the syntax is read here; resolve() in src/reader/args.c looks symbols up.
 * Vector, x87, mask and segment registers are recognised and refused with
 * a reason: their contents cannot be read from struct pt_regs.
 */
#include <elf.h>
#include <stddef.h>
#ifdef __x86_64__
#include <asm/ptrace.h> /* the host's struct pt_regs */
#endif

#include "reader/arch/arch.h"

/*
 * Offsets in the kernel's struct pt_regs for x86_64, which is also the
 * uapi <asm/ptrace.h> struct pt_regs (arch/x86/include/uapi/asm/ptrace.h):
 * r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip
 * cs eflags rsp ss, each 8 bytes. No name here reads ss, the last word:
 * the part the BPF side reads, r15 to rsp, and rip's offset are
 * usdt_spec.h's. Checked against the host's header below when built on
 * x86_64, and by tests/unit/test_regs.c.
 */
enum {
	X86_R15 = 0,
	X86_R14 = 8,
	X86_R13 = 16,
	X86_R12 = 24,
	X86_RBP = 32,
	X86_RBX = 40,
	X86_R11 = 48,
	X86_R10 = 56,
	X86_R9 = 64,
	X86_R8 = 72,
	X86_RAX = 80,
	X86_RCX = 88,
	X86_RDX = 96,
	X86_RSI = 104,
	X86_RDI = 112,
	X86_ORIG_RAX = 120,
	X86_RIP = USDT_PC_OFF_X86_64,
	X86_CS = 136,
	X86_EFLAGS = 144,
	X86_RSP = 152,
	X86_SS = 160,
};
_Static_assert(X86_ORIG_RAX + 8 == X86_RIP && X86_RIP + 8 == X86_CS,
	       "rip between orig_rax and cs");
_Static_assert(X86_RSP + 8 == USDT_CTX_SZ_X86_64 && X86_SS == X86_RSP + 8,
	       "rsp ends the part read, ss the context");

#ifdef __x86_64__
#define X86_AT(off, field) (offsetof(struct pt_regs, field) == (off))
_Static_assert(X86_AT(X86_R15, r15) && X86_AT(X86_R14, r14) &&
		       X86_AT(X86_R13, r13) && X86_AT(X86_R12, r12) &&
		       X86_AT(X86_RBP, rbp) && X86_AT(X86_RBX, rbx) &&
		       X86_AT(X86_R11, r11) && X86_AT(X86_R10, r10) &&
		       X86_AT(X86_R9, r9) && X86_AT(X86_R8, r8),
	       "the host's pt_regs, r15 to r8");
_Static_assert(X86_AT(X86_RAX, rax) && X86_AT(X86_RCX, rcx) &&
		       X86_AT(X86_RDX, rdx) && X86_AT(X86_RSI, rsi) &&
		       X86_AT(X86_RDI, rdi) && X86_AT(X86_ORIG_RAX, orig_rax) &&
		       X86_AT(X86_RIP, rip) && X86_AT(X86_CS, cs) &&
		       X86_AT(X86_EFLAGS, eflags) && X86_AT(X86_RSP, rsp) &&
		       X86_AT(X86_SS, ss),
	       "the host's pt_regs, rax to ss");
_Static_assert(sizeof(struct pt_regs) == X86_SS + 8,
	       "the host's struct pt_regs is the context");
#endif

/*
 * Every name of every general-purpose register. The legacy high-byte
 * registers %ah..%dh are bits 8-15 of their register: on this
 * little-endian architecture that is the second byte of the saved value.
 */
#define X86_GPR(q, d, w, b, off)                     \
	{ q, off, 8 }, { d, off, 4 }, { w, off, 2 }, \
	{                                            \
		b, off, 1                            \
	}

static const struct usdt__reg_desc x86_regs[] = {
	X86_GPR("rax", "eax", "ax", "al", X86_RAX),
	X86_GPR("rbx", "ebx", "bx", "bl", X86_RBX),
	X86_GPR("rcx", "ecx", "cx", "cl", X86_RCX),
	X86_GPR("rdx", "edx", "dx", "dl", X86_RDX),
	X86_GPR("rsi", "esi", "si", "sil", X86_RSI),
	X86_GPR("rdi", "edi", "di", "dil", X86_RDI),
	X86_GPR("rbp", "ebp", "bp", "bpl", X86_RBP),
	X86_GPR("rsp", "esp", "sp", "spl", X86_RSP),
	X86_GPR("r8", "r8d", "r8w", "r8b", X86_R8),
	X86_GPR("r9", "r9d", "r9w", "r9b", X86_R9),
	X86_GPR("r10", "r10d", "r10w", "r10b", X86_R10),
	X86_GPR("r11", "r11d", "r11w", "r11b", X86_R11),
	X86_GPR("r12", "r12d", "r12w", "r12b", X86_R12),
	X86_GPR("r13", "r13d", "r13w", "r13b", X86_R13),
	X86_GPR("r14", "r14d", "r14w", "r14b", X86_R14),
	X86_GPR("r15", "r15d", "r15w", "r15b", X86_R15),
	{ "ah", X86_RAX + 1, 1 },
	{ "bh", X86_RBX + 1, 1 },
	{ "ch", X86_RCX + 1, 1 },
	{ "dh", X86_RDX + 1, 1 },
	{ "rip", X86_RIP, 8 },
};

static int reg_off(const char *name, size_t len, int *width)
{
	return usdt__reg_lookup(x86_regs, USDT__ARRAY_SIZE(x86_regs), name, len,
				width);
}

/* Why a name after '%' that is not a general-purpose register is refused. */
static int bad_reg(struct usdt__arg *arg, const char *name, size_t len)
{
	int q = len > USDT__QUOTE_MAX ? USDT__QUOTE_MAX : (int)len;

	if (usdt__name_numbered(name, len, "xmm") ||
	    usdt__name_numbered(name, len, "ymm") ||
	    usdt__name_numbered(name, len, "zmm") ||
	    usdt__name_is(name, len, "st") ||
	    usdt__name_numbered(name, len, "mm"))
		return usdt__op_fail_fpreg(arg, "%", name, len);
	if (usdt__name_numbered(name, len, "k"))
		return usdt__op_fail(arg, -EOPNOTSUPP,
				     "mask register %%%.*s not supported", q,
				     name);
	if (usdt__name_is(name, len, "cs") || usdt__name_is(name, len, "ds") ||
	    usdt__name_is(name, len, "es") || usdt__name_is(name, len, "fs") ||
	    usdt__name_is(name, len, "gs") || usdt__name_is(name, len, "ss"))
		return usdt__op_fail(arg, -EOPNOTSUPP,
				     "segment register %%%.*s not supported", q,
				     name);
	return usdt__op_fail(arg, -EINVAL, "unknown register %%%.*s", q, name);
}

/*
 * Read "%name" at op[*pos]: its offset and width, and where the name is.
 * Only general-purpose registers (and %rip) succeed.
 */
static int scan_reg(const char *op, size_t len, size_t *pos,
		    struct usdt__arg *arg, int *width, size_t *name_pos,
		    size_t *name_len)
{
	size_t p = *pos + 1, n;
	int off;

	n = usdt__span_alnum(op, len, p);
	if (!n)
		return usdt__op_fail(arg, -EINVAL,
				     "expected a register after %%");
	off = reg_off(op + p, n, width);
	if (off < 0)
		return bad_reg(arg, op + p, n);
	*name_pos = p;
	*name_len = n;
	*pos = p + n;
	return off;
}

/* "(%base,%index,scale)" and its shorter forms, at op[*pos] == '('. */
static int parse_regs(const char *op, size_t len, size_t *pos,
		      struct usdt__arg *arg)
{
	size_t p = *pos + 1, np, nl;
	uint64_t scale;
	int off, width, err;

	usdt__skip_blanks(op, len, &p);
	if (p < len && op[p] == '%') {
		off = scan_reg(op, len, &p, arg, &width, &np, &nl);
		if (off < 0)
			return off;
		if (width == 4)
			return usdt__op_fail(arg, -EOPNOTSUPP,
					     "32-bit address register %%%.*s not supported",
					     (int)nl, op + np);
		if (width != 8)
			return usdt__op_fail(arg, -EINVAL,
					     "%%%.*s cannot be a base register",
					     (int)nl, op + np);
		usdt__set_name(arg->base, op + np, nl);
		arg->base_off = off;
		arg->pcrel = off == X86_RIP;
		usdt__skip_blanks(op, len, &p);
	}
	if (p < len && op[p] == ',') {
		p++;
		usdt__skip_blanks(op, len, &p);
		if (p >= len || op[p] != '%')
			return usdt__op_fail(arg, -EINVAL,
					     "expected an index register");
		off = scan_reg(op, len, &p, arg, &width, &np, &nl);
		if (off < 0)
			return off;
		if (width == 4)
			return usdt__op_fail(arg, -EOPNOTSUPP,
					     "32-bit address register %%%.*s not supported",
					     (int)nl, op + np);
		if (width != 8 || off == X86_RSP || off == X86_RIP)
			return usdt__op_fail(arg, -EINVAL,
					     "%%%.*s cannot be an index register",
					     (int)nl, op + np);
		usdt__set_name(arg->index, op + np, nl);
		arg->idx_off = off;
		arg->scale = 1;
		usdt__skip_blanks(op, len, &p);
		if (p < len && op[p] == ',') {
			p++;
			usdt__skip_blanks(op, len, &p);
			if (p >= len || !usdt__is_digit(op[p]))
				return usdt__op_fail(arg, -EINVAL,
						     "expected an index scale");
			err = usdt__scan_num(op, len, &p, &scale, arg);
			if (err)
				return err;
			if (scale != 1 && scale != 2 && scale != 4 &&
			    scale != 8)
				return usdt__op_fail(arg, -EINVAL,
						     "index scale must be 1, 2, 4 or 8");
			arg->scale = (int)scale;
			usdt__skip_blanks(op, len, &p);
		}
	}
	if (p >= len || op[p] != ')')
		return usdt__op_fail(arg, -EINVAL, "expected ')'");
	if (arg->base_off < 0 && arg->idx_off < 0)
		return usdt__op_fail(arg, -EINVAL, "no register inside ()");
	if (arg->pcrel && arg->idx_off >= 0)
		return usdt__op_fail(arg, -EINVAL,
				     "%%rip with an index register");
	*pos = p + 1;
	return 0;
}

static int parse_operand(const char *op, size_t len, struct usdt__arg *arg)
{
	size_t p = 0, np, nl;
	int off, width, err;

	if (!len)
		return usdt__op_fail(arg, -EINVAL, "empty operand");
	/* sym_pos and sym_len are 16 bits, like the args string's length. */
	if (len > UINT16_MAX)
		return usdt__op_fail(arg, -EINVAL, "operand too long");

	if (op[0] == '$') {
		p = 1;
		err = usdt__scan_sym_expr(op, len, &p, arg, true);
		if (err)
			return err;
		if (arg->got)
			return usdt__op_fail(arg, -EOPNOTSUPP,
					     "@GOTPCREL in an immediate not supported");
		if (p != len)
			return usdt__op_fail(arg, -EINVAL,
					     "garbage after an immediate");
		return 0;
	}

	if (op[0] == '%') {
		/* A segment override "%fs:..." fails here, as a segment
		 * register. */
		off = scan_reg(op, len, &p, arg, &width, &np, &nl);
		if (off < 0)
			return off;
		if (p < len && op[p] == ':')
			return usdt__op_fail(arg, -EINVAL,
					     "%%%.*s is not a segment register",
					     (int)nl, op + np);
		if (p != len)
			return usdt__op_fail(arg, -EINVAL,
					     "garbage after a register");
		if (off == X86_RIP)
			return usdt__op_fail(arg, -EINVAL,
					     "%%rip is only valid as a base");
		if (off % 8 && arg->sized && arg->size != 1)
			return usdt__op_fail(arg, -EOPNOTSUPP,
					     "%%%.*s holds 1 byte, not %d",
					     (int)nl, op + np, arg->size);
		usdt__set_name(arg->base, op + np, nl);
		arg->base_off = off;
		arg->reg_width = (uint8_t)width;
		return 0;
	}

	/* Memory: an optional displacement, then optional registers. */
	arg->mem = true;
	if (op[0] != '(') {
		err = usdt__scan_sym_expr(op, len, &p, arg, true);
		if (err)
			return err;
	}
	if (p < len && op[p] == '(') {
		err = parse_regs(op, len, &p, arg);
		if (err)
			return err;
	}
	if (p != len)
		return usdt__op_fail(arg, -EINVAL,
				     "garbage after a memory operand");
	if (arg->got && (!arg->pcrel || arg->disp))
		return usdt__op_fail(arg, -EOPNOTSUPP,
				     "@GOTPCREL other than sym@GOTPCREL(%%rip) not supported");
	return 0;
}

/*
 * Some <sys/sdt.h> emit "nop; nop5" at a probe (0x90, then 0f 1f 44 00
 * 00). A uprobe on the 5-byte nop can be optimised by the kernel (6.18,
 * uprobe syscall) into a call instead of a trap, and the one-byte nop
 * before it changes no register, so the arguments read the same at +1.
 * But that call and the kernel's trampoline push onto the traced
 * thread's stack, into the 128-byte red zone below %rsp where a leaf
 * function keeps live values: the attach moves a uprobe here only when
 * asked (usdt_attach_opts.allow_red_zone_writes). "nop; nop10" sites
 * never move.
 */
static int attach_skip(const unsigned char *insn, size_t len)
{
	static const unsigned char combo[] = { 0x90, 0x0f, 0x1f,
					       0x44, 0x00, 0x00 };

	return len >= sizeof(combo) && !memcmp(insn, combo, sizeof(combo));
}

const struct usdt__arch_ops usdt__arch_x86_64 = {
	.attach_skip = attach_skip,
	.e_machine = EM_X86_64,
	.name = "x86_64",
	.parse_operand = parse_operand,
	.reg_off = reg_off,
	.pt_regs_size = USDT_CTX_SZ_X86_64,
	.ip_off = USDT_PC_OFF_X86_64,
};
