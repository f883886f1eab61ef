/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The table of operations of one architecture's parser (a file each in
 * src/reader/arch/), chosen at run time from the ELF file's e_machine
 * (src/reader/arch/arch.c).
 */
#ifndef __LIBUSDT_ARCH_OPS_H
#define __LIBUSDT_ARCH_OPS_H

#include "reader/args.h"

#ifndef EM_RISCV
#define EM_RISCV 243
#endif

/*
 * Operand parser of one architecture: parse op[0..len) (not NUL-terminated;
 * a pointer into the args string, which is) and fill the operand fields of
 * arg. On a form it cannot read, return -EINVAL (or -EOPNOTSUPP for a form
 * it recognises but cannot support, like vector registers) and write why
 * in arg->reason. Size fields are already set; a parser may read them (x86
 * checks the register width against a written size) but must not change
 * them. For a register's value it sets reg_width where the name gives a
 * width narrower than 8 bytes: a size-less operand is read at that width.
 * The code stays inside the library: an argument is unsupported, with its
 * reason, whichever it is.
 */
typedef int (*usdt__parse_operand_fn)(const char *op, size_t len,
				      struct usdt__arg *arg);

struct usdt__code;

struct usdt__arch_ops {
	uint16_t e_machine;
	const char *name; /* "x86_64", "aarch64", ... */
	usdt__parse_operand_fn parse_operand;
	/*
	 * Byte offset in the arch's kernel struct pt_regs of the register
	 * name[0..len), and its width in bytes in *width (may be NULL);
	 * -ENOENT if the name is not a general-purpose register.
	 */
	int (*reg_off)(const char *name, size_t len, int *width);
	/*
	 * Optional: how many bytes past a call site's address to put the
	 * uprobe, given the instruction bytes there (insn[0..len)); NULL
	 * means 0. Used only where the attach asks for it
	 * (usdt_attach_opts.allow_red_zone_writes): x86 skips the nop of a
	 * "nop; nop5" site so that the kernel can optimise the uprobe on the
	 * nop5 into a call, which writes below the stack pointer.
	 */
	int (*attach_skip)(const unsigned char *insn, size_t len);
	/*
	 * Optional: for an operand that adds the low bits of a compiler-local
	 * label to a base register ("[x1, #:lo12:.LANCHOR0]"), recover those
	 * bits from the instructions before the site (see the arch file).
	 * code ends at the site; base_off is the base register's pt_regs
	 * offset. On success *lo is the value to add, *page what the base
	 * register holds there (a link-time address), and 0 is returned;
	 * otherwise -ENOENT with *why saying why it cannot be read.
	 */
	int (*label_lo)(const struct usdt__code *code, int base_off,
			int64_t *lo, uint64_t *page, const char **why);
	/* The size of the BPF context's part that holds every register an
	 * operand names and the PC, and where the PC is in it: usdt_spec.h's
	 * USDT_CTX_SZ_<ARCH> and USDT_PC_OFF_<ARCH>. */
	uint16_t pt_regs_size;
	uint16_t ip_off;
};

extern const struct usdt__arch_ops usdt__arch_x86_64;
extern const struct usdt__arch_ops usdt__arch_arm64;
extern const struct usdt__arch_ops usdt__arch_s390x;
extern const struct usdt__arch_ops usdt__arch_riscv64;

/* The parser for an ELF e_machine, or NULL (src/reader/arch/arch.c). */
const struct usdt__arch_ops *usdt__arch_find(int e_machine);
/* The parser of the host, or NULL. */
const struct usdt__arch_ops *usdt__arch_host(void);

#endif /* __LIBUSDT_ARCH_OPS_H */
