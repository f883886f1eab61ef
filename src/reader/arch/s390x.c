// SPDX-License-Identifier: BSD-2-Clause
/*
 * s390x operand parser, for the operands GCC and clang print for sys/sdt.h:
 *
 *   5  -536  0x10                      a constant (no prefix)
 *   %r0..%r15                          a register's value
 *   160(%r15)  (%r2)                   memory at D(B): base plus offset
 *   0(%r3,%r4)                         memory at D(X,B): index %r3 plus
 *                                      base %r4 plus offset (the index comes
 *                                      first in s390 assembler syntax)
 *   sym  sym+8                         a symbol's address, as a value, or
 *                                      with the "g" constraint the value
 *                                      at it (see usdt__bare_symbol())
 *   sym+8(%r1)                         memory with a symbolic displacement
 *
 * In an address, register 0 stands for "no register" (the CPU adds zero,
 * not the contents of %r0), so %r0 in the X or B slot leaves that slot
 * empty. GCC never puts %r0 there; the rule is the architecture's.
 *
 * Refused with a reason: floating-point, vector, access and control
 * registers. (GCC's default "nor" constraint never prints a symbol on
 * s390x, since globals are reached through a register loaded by larl; the
 * symbol forms come from hand-written or "g"/"i" constrained probes.)
 */
#include <elf.h>
#include <stddef.h>
#ifdef __s390x__
#include <asm/bpf_perf_event.h> /* the host's bpf_user_pt_regs_t */
#endif

#include "reader/arch/arch.h"

/*
 * The BPF context of a uprobe on s390 is the kernel's struct pt_regs, which
 * starts with user_pt_regs (arch/s390/include/uapi/asm/ptrace.h, the type
 * <asm/bpf_perf_event.h> names bpf_user_pt_regs_t):
 *     unsigned long args[1];          0
 *     psw_t psw;                      8: mask at 8, addr (the PC) at 16
 *     unsigned long gprs[NUM_GPRS];   24: gprs[N] at 24 + 8 * N
 * psw_t is two unsigned longs, aligned to 8. Everything we read lies in
 * that prefix, so its size is the size we claim (usdt_spec.h's, with the
 * PC's offset).
 */
enum {
	S390_GPRS = 24,
};
_Static_assert(USDT_PC_OFF_S390X + 8 == S390_GPRS &&
		       S390_GPRS + 16 * 8 == USDT_CTX_SZ_S390X,
	       "args[1], psw, gprs[16]");
#ifdef __s390x__
_Static_assert(offsetof(user_pt_regs, psw.addr) == USDT_PC_OFF_S390X &&
		       offsetof(user_pt_regs, gprs) == S390_GPRS,
	       "the host's user_pt_regs");
_Static_assert(sizeof(bpf_user_pt_regs_t) == USDT_CTX_SZ_S390X,
	       "the host's bpf_user_pt_regs_t is the context");
#endif

/* "rN" with N from 0 to 15. */
static int reg_off(const char *name, size_t len, int *width)
{
	int n;

	if (len < 2 || name[0] != 'r')
		return -ENOENT;
	n = usdt__reg_num(name + 1, len - 1);
	if (n < 0 || n > 15)
		return -ENOENT;
	if (width)
		*width = 8;
	return S390_GPRS + n * 8;
}

/* Why a name after '%' that is not a general-purpose register is refused. */
static int bad_reg(struct usdt__arg *arg, const char *name, size_t len)
{
	int q = len > USDT__QUOTE_MAX ? USDT__QUOTE_MAX : (int)len;
	int n = len > 1 ? usdt__reg_num(name + 1, len - 1) : -1;

	if ((n >= 0 && n <= 15 && name[0] == 'f') ||
	    (n >= 0 && n <= 31 && name[0] == 'v'))
		return usdt__op_fail_fpreg(arg, "%", name, len);
	if (n >= 0 && n <= 15 && (name[0] == 'a' || name[0] == 'c'))
		return usdt__op_fail(arg, -EOPNOTSUPP,
				     "%s register %%%.*s not supported",
				     name[0] == 'a' ? "access" : "control", q,
				     name);
	return usdt__op_fail(arg, -EINVAL, "unknown register %%%.*s", q, name);
}

/* "%rN" at op[*pos]: its pt_regs offset; the name goes to *np and *nl. */
static int scan_reg(const char *op, size_t len, size_t *pos,
		    struct usdt__arg *arg, size_t *np, size_t *nl)
{
	size_t p = *pos, n;
	int off;

	if (p >= len || op[p] != '%')
		return usdt__op_fail(arg, -EINVAL, "expected a register %%rN");
	n = usdt__span_alnum(op, len, p + 1);
	if (!n)
		return usdt__op_fail(arg, -EINVAL,
				     "expected a register after %%");
	off = reg_off(op + p + 1, n, NULL);
	if (off < 0)
		return bad_reg(arg, op + p + 1, n);
	*np = p + 1;
	*nl = n;
	*pos = p + 1 + n;
	return off;
}

/* "(%rB)", "(%rX,%rB)" or "(,%rB)" at op[*pos] == '('. */
static int parse_regs(const char *op, size_t len, size_t *pos,
		      struct usdt__arg *arg)
{
	size_t p = *pos + 1, np[2], nl[2];
	int off[2], cnt = 0;

	usdt__skip_blanks(op, len, &p);
	if (p < len && op[p] == ',') {
		/* "(,%rB)": an empty index slot. */
		off[cnt] = -1;
		np[cnt] = nl[cnt] = 0;
		cnt++;
		p++;
		usdt__skip_blanks(op, len, &p);
	}
	for (; cnt < 2; cnt++) {
		off[cnt] = scan_reg(op, len, &p, arg, &np[cnt], &nl[cnt]);
		if (off[cnt] < 0)
			return off[cnt];
		usdt__skip_blanks(op, len, &p);
		if (cnt == 1 || p >= len || op[p] != ',')
			break;
		p++;
		usdt__skip_blanks(op, len, &p);
	}
	if (p >= len || op[p] != ')')
		return usdt__op_fail(arg, -EINVAL, "expected ')'");
	if (cnt == 0) {
		/* One register: the base. */
		off[1] = off[0], np[1] = np[0], nl[1] = nl[0];
		off[0] = -1;
	}
	/* %r0 as X or B means no register (see the top of this file). */
	if (off[0] >= 0 && off[0] != S390_GPRS) {
		usdt__set_name(arg->index, op + np[0], nl[0]);
		arg->idx_off = off[0];
		arg->scale = 1;
	}
	if (off[1] != S390_GPRS) {
		usdt__set_name(arg->base, op + np[1], nl[1]);
		arg->base_off = off[1];
	}
	*pos = p + 1;
	return 0;
}

static int parse_operand(const char *op, size_t len, struct usdt__arg *arg)
{
	size_t p = 0, np, nl;
	int off, err;

	if (!len)
		return usdt__op_fail(arg, -EINVAL, "empty operand");
	if (op[0] == '%') {
		off = scan_reg(op, len, &p, arg, &np, &nl);
		if (off < 0)
			return off;
		if (p != len)
			return usdt__op_fail(arg, -EINVAL,
					     "garbage after a register");
		usdt__set_name(arg->base, op + np, nl);
		arg->base_off = off;
		return 0;
	}
	if (op[0] != '(') {
		/*
		 * A constant, or a symbol expression: "sym", "sym+8" (the
		 * address as a value, like x86's $sym) or "sym+8(%r1)" (a
		 * symbolic displacement).
		 */
		err = usdt__scan_sym_expr(op, len, &p, arg, false);
		if (err)
			return err;
		if (p == len && arg->has_sym)
			usdt__bare_symbol(arg);
		if (p == len)
			return 0;
	}
	if (p >= len || op[p] != '(')
		return usdt__op_fail(arg, -EINVAL, "expected '(' or the end");
	arg->mem = true;
	err = parse_regs(op, len, &p, arg);
	if (err)
		return err;
	if (p != len)
		return usdt__op_fail(arg, -EINVAL,
				     "garbage after a memory operand");
	return 0;
}

const struct usdt__arch_ops usdt__arch_s390x = {
	.e_machine = EM_S390,
	.name = "s390x",
	.parse_operand = parse_operand,
	.reg_off = reg_off,
	.pt_regs_size = USDT_CTX_SZ_S390X,
	.ip_off = USDT_PC_OFF_S390X,
};
