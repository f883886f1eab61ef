// SPDX-License-Identifier: BSD-2-Clause
/*
 * riscv64 operand parser, for the operands GCC prints for sys/sdt.h:
 *
 *   5  -536  0x10                      a constant (no prefix)
 *   a0  s1  fp  sp  x10 ...            a register's value, by ABI name or
 *                                      by number
 *   -52(s0)  8(sp)  (a0)               memory at a base plus an offset
 *
 * x0 ("zero") is not saved in pt_regs because it always reads 0: as a
 * value it is the constant 0; as a base it leaves only the offset, an
 * absolute address.
 *
 *   sym  sym+8  .LANCHOR0              a symbol's address as a value, or the
 *                                      value at it: see usdt__bare_symbol()
 *   %lo(sym)(a4)                       gcc's non-PIC global: a4 holds
 *                                      %hi(sym) from a lui, the operand
 *                                      adds the low 12 bits; read at sym
 *                                      (src/reader/args.c), or for a label with
 *                                      no symbol (.LANCHOR0) from the
 *                                      instructions before the site
 *                                      (src/reader/arch/riscv64_code.c)
 *
 * Refused with a reason: floating-point and vector registers, and other
 * relocation operands (%pcrel_lo names a label, %tprel_lo TLS).
 */
#include <elf.h>
#include <stddef.h>
#if defined(__riscv) && __riscv_xlen == 64
#include <asm/bpf_perf_event.h> /* the host's bpf_user_pt_regs_t */
#endif

#include "reader/arch/arch.h"
#include "reader/arch/code.h"

/*
 * The BPF context of a uprobe on riscv is the kernel's struct pt_regs,
 * which starts with struct user_regs_struct (arch/riscv/include/uapi/asm/
 * ptrace.h, the type <asm/bpf_perf_event.h> names bpf_user_pt_regs_t):
 * pc, then x1 (ra) to x31 (t6), 8 bytes each. So register xN is at N * 8
 * and the PC at 0. Everything we read lies in that prefix, so its size is
 * the size we claim (usdt_spec.h's, with the PC's offset).
 */
_Static_assert(USDT_PC_OFF_RISCV64 == 0 && USDT_CTX_SZ_RISCV64 == 32 * 8,
	       "pc, x1 ... x31");
#if defined(__riscv) && __riscv_xlen == 64
_Static_assert(offsetof(struct user_regs_struct, pc) == USDT_PC_OFF_RISCV64 &&
		       offsetof(struct user_regs_struct, ra) == 1 * 8 &&
		       offsetof(struct user_regs_struct, t6) == 31 * 8,
	       "the host's user_regs_struct");
_Static_assert(sizeof(bpf_user_pt_regs_t) == USDT_CTX_SZ_RISCV64,
	       "the host's bpf_user_pt_regs_t is the context");
#endif

static const struct usdt__reg_desc riscv_abi_regs[] = {
	{ "ra", 1 * 8, 8 },   { "sp", 2 * 8, 8 },  { "gp", 3 * 8, 8 },
	{ "tp", 4 * 8, 8 },   { "t0", 5 * 8, 8 },  { "t1", 6 * 8, 8 },
	{ "t2", 7 * 8, 8 },   { "s0", 8 * 8, 8 },  { "fp", 8 * 8, 8 },
	{ "s1", 9 * 8, 8 },   { "a0", 10 * 8, 8 }, { "a1", 11 * 8, 8 },
	{ "a2", 12 * 8, 8 },  { "a3", 13 * 8, 8 }, { "a4", 14 * 8, 8 },
	{ "a5", 15 * 8, 8 },  { "a6", 16 * 8, 8 }, { "a7", 17 * 8, 8 },
	{ "s2", 18 * 8, 8 },  { "s3", 19 * 8, 8 }, { "s4", 20 * 8, 8 },
	{ "s5", 21 * 8, 8 },  { "s6", 22 * 8, 8 }, { "s7", 23 * 8, 8 },
	{ "s8", 24 * 8, 8 },  { "s9", 25 * 8, 8 }, { "s10", 26 * 8, 8 },
	{ "s11", 27 * 8, 8 }, { "t3", 28 * 8, 8 }, { "t4", 29 * 8, 8 },
	{ "t5", 30 * 8, 8 },  { "t6", 31 * 8, 8 },
};

static bool is_zero_reg(const char *name, size_t len)
{
	return (len == 4 && !memcmp(name, "zero", 4)) ||
	       (len == 2 && !memcmp(name, "x0", 2));
}

/* ABI names and x1..x31; x0 is not in pt_regs (-ENOENT). */
static int reg_off(const char *name, size_t len, int *width)
{
	int n;

	if (len >= 2 && name[0] == 'x') {
		n = usdt__reg_num(name + 1, len - 1);
		if (n < 1 || n > 31)
			return -ENOENT;
		if (width)
			*width = 8;
		return n * 8;
	}
	return usdt__reg_lookup(riscv_abi_regs,
				USDT__ARRAY_SIZE(riscv_abi_regs), name, len,
				width);
}

/* Why a name that is not a general-purpose register is refused. */
static int bad_reg(struct usdt__arg *arg, const char *name, size_t len)
{
	int q = len > USDT__QUOTE_MAX ? USDT__QUOTE_MAX : (int)len;

	if (usdt__name_numbered(name, len, "f") ||
	    usdt__name_numbered(name, len, "ft") ||
	    usdt__name_numbered(name, len, "fs") ||
	    usdt__name_numbered(name, len, "fa") ||
	    usdt__name_numbered(name, len, "v"))
		return usdt__op_fail_fpreg(arg, "", name, len);
	return usdt__op_fail(arg, -EINVAL, "unknown register %.*s", q, name);
}

/* "(reg)" at op[*pos] == '('. */
static int parse_base(const char *op, size_t len, size_t *pos,
		      struct usdt__arg *arg)
{
	size_t p = *pos + 1, np, n;
	int off;

	usdt__skip_blanks(op, len, &p);
	np = p;
	n = usdt__span_alnum(op, len, p);
	if (!n)
		return usdt__op_fail(arg, -EINVAL, "expected a base register");
	p += n;
	usdt__skip_blanks(op, len, &p);
	if (p >= len || op[p] != ')')
		return usdt__op_fail(arg, -EINVAL, "expected ')'");
	if (!is_zero_reg(op + np, n)) {
		off = reg_off(op + np, n, NULL);
		if (off < 0)
			return bad_reg(arg, op + np, n);
		usdt__set_name(arg->base, op + np, n);
		arg->base_off = off;
	}
	*pos = p + 1;
	return 0;
}

/* "(reg)" at op[p] == '(' ending the operand: memory at that base. */
static int parse_mem_tail(const char *op, size_t len, size_t p,
			  struct usdt__arg *arg)
{
	int err;

	arg->mem = true;
	err = parse_base(op, len, &p, arg);
	if (err)
		return err;
	if (p != len)
		return usdt__op_fail(arg, -EINVAL,
				     "garbage after a memory operand");
	return 0;
}

/*
 * Is op[0..len) a symbol expression ("sym", "sym+8", ".LANCHOR0") rather
 * than a register? Register names win (a symbol called a0 cannot be told
 * from the register), and so does the xN syntax.
 */
static bool is_symbol(const char *op, size_t len)
{
	size_t n = usdt__span_alnum(op, len, 0);

	if (op[0] == '.' || op[0] == '_')
		return true;
	if (!n || !usdt__is_alpha(op[0]))
		return false;
	if (n < len)
		return strchr("+-._$", op[n]) != NULL;
	return !usdt__reg_like(op, n) && !is_zero_reg(op, n) &&
	       reg_off(op, n, NULL) < 0;
}

static int parse_operand(const char *op, size_t len, struct usdt__arg *arg)
{
	size_t p = 0, n;
	uint64_t v;
	int off, err;

	if (!len)
		return usdt__op_fail(arg, -EINVAL, "empty operand");
	if (op[0] == '%') {
		n = 0;
		while (1 + n < len &&
		       (usdt__is_alpha(op[1 + n]) ||
			usdt__is_digit(op[1 + n]) || op[1 + n] == '_'))
			n++;
		/*
		 * "%lo(sym)(a4)": gcc's non-PIC access to a global, after
		 * "lui a4, %hi(sym)". The register holds the high part, the
		 * operand adds the low 12 bits. Others (%pcrel_lo, %tprel_lo)
		 * name a label or TLS and are refused.
		 */
		if (n != 2 || op[1] != 'l' || op[2] != 'o' || 3 >= len ||
		    op[3] != '(') {
			if (n > USDT__QUOTE_MAX)
				n = USDT__QUOTE_MAX;
			return usdt__op_fail(arg, -EOPNOTSUPP,
					     "riscv64 relocation operand %%%.*s() not supported",
					     (int)n, op + 1);
		}
		p = 4;
		err = usdt__scan_sym_expr(op, len, &p, arg, false);
		if (err)
			return err;
		if (!arg->has_sym || p >= len || op[p] != ')')
			return usdt__op_fail(arg, -EINVAL,
					     "expected %%lo(symbol)");
		p++;
		if (p >= len || op[p] != '(')
			return usdt__op_fail(arg, -EINVAL,
					     "expected a base register after %%lo()");
		arg->lo_reloc = USDT__LO_RISCV;
		return parse_mem_tail(op, len, p, arg);
	}
	if (is_symbol(op, len)) {
		/* "sym", "sym+8", ".LANCHOR0": see usdt__bare_symbol(). */
		err = usdt__scan_sym_expr(op, len, &p, arg, false);
		if (err)
			return err;
		if (p != len)
			return usdt__op_fail(arg, -EINVAL,
					     "garbage after a symbol");
		usdt__bare_symbol(arg);
		return 0;
	}
	if (usdt__is_alpha(op[0])) {
		n = usdt__span_alnum(op, len, 0);
		if (n != len)
			return usdt__op_fail(arg, -EINVAL,
					     "garbage after a register");
		if (is_zero_reg(op, n))
			return 0; /* the constant 0 */
		off = reg_off(op, n, NULL);
		if (off < 0)
			return bad_reg(arg, op, n);
		usdt__set_name(arg->base, op, n);
		arg->base_off = off;
		return 0;
	}
	if (op[0] != '(') {
		err = usdt__scan_num(op, len, &p, &v, arg);
		if (err)
			return err;
		arg->disp = (int64_t)v;
		if (p == len)
			return 0; /* a constant */
	}
	if (p >= len || op[p] != '(')
		return usdt__op_fail(arg, -EINVAL, "expected '(' or the end");
	return parse_mem_tail(op, len, p, arg);
}

const struct usdt__arch_ops usdt__arch_riscv64 = {
	.e_machine = EM_RISCV,
	.name = "riscv64",
	.parse_operand = parse_operand,
	.reg_off = reg_off,
	.label_lo = usdt__riscv64_label_lo,
	.pt_regs_size = USDT_CTX_SZ_RISCV64,
	.ip_off = USDT_PC_OFF_RISCV64,
};
