/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Arguments of a call site (src/reader/args.c): the text of each argument, what
 * the arch parser reads of its operand, and what resolution makes of it,
 * down to the BPF spec (bpf/usdt_spec.h).
 */
#ifndef __LIBUSDT_ARGS_H
#define __LIBUSDT_ARGS_H

#include "base/base.h"
#include "../../bpf/usdt_spec.h"

struct usdt__arch_ops;
struct usdt__symtab;

/*
 * One argument of a call site, from its text to its BPF spec.
 *
 * The generic splitter (src/reader/args.c) fills the size fields and the text
 * span; the arch parser fills the operand fields (syntax only: it knows
 * registers, not symbols); resolution (src/reader/args.c) turns a symbol into an
 * address using the ELF file and fills kind, spec and offset/value.
 *
 * Invariant: when kind == USDT_ARG_UNSUPPORTED, reason is non-empty and
 * spec.kind == USDT_SPEC_UNSUPPORTED; otherwise reason is empty.
 */
struct usdt__arg {
	/* From the "[-]SIZE[f]@" prefix. */
	int size;   /* 1, 2, 4, 8 or 16; as written (0-9999)
				 * when unsupported for its size */
	bool sized; /* a size was written; without one (old
				 * notes, assembler probes: "%ax") size is 8
				 * until resolution gives a register its
				 * name's width (reg_width) */
	bool is_signed;
	bool is_float;
	uint16_t str_pos, str_len; /* the whole argument in the args string */

	/* From the arch parser. */
	bool mem;	   /* the operand is memory at the address */
	bool pcrel;	   /* base is the PC (x86 %rip) */
	bool got;	   /* sym@GOTPCREL(%rip): value is &sym */
	bool has_sym;	   /* the operand names a symbol (sym_pos/len) */
	bool sym_obj8;	   /* s390x "8@sym": the value of an 8-byte
				 * object, else the address (resolution) */
	uint8_t reg_width; /* a register's value: the bytes its name
				 * denotes (x86 %ax 2, %ah 1, arm64 w0 4);
				 * 0 where the name says nothing */
	char base[8];	   /* register names as written, "" for none */
	char index[8];
	int base_off; /* pt_regs byte offsets, -1 for none */
	int idx_off;
	int scale;		   /* 1, 2, 4 or 8 with an index, else 0 */
	int64_t disp;		   /* displacement, or the constant itself */
	uint16_t sym_pos, sym_len; /* the symbol in the args string */
	uint8_t idx_ext;	   /* USDT__IDX_*: how a 32-bit index extends */
	uint8_t lo_reloc;	   /* USDT__LO_*: the operand holds only the low
				 * bits of the symbol's address; the base
				 * register holds the rest (adrp, lui) */

	/* From resolution. */
	char read_base[8]; /* the register read when not base: s390x
				 * 16-byte pairs read rN+1 */
	int64_t read_adj;  /* added to the written offset to read: 8 for
				 * a 16-byte memory operand on big-endian */
	enum usdt_arg_kind kind;
	int64_t offset; /* as in struct usdt_arg_info */
	uint64_t value;
	struct usdt_arg_spec spec;
	char reason[96];
};

enum {
	USDT__IDX_64 = 0, /* the whole register */
	USDT__IDX_SXTW,	  /* low 32 bits, sign-extended (arm64 sxtw) */
	USDT__IDX_UXTW,	  /* low 32 bits, zero-extended (arm64 uxtw) */
};

enum {
	USDT__LO_NONE = 0,
	USDT__LO_AARCH64, /* :lo12:sym, bits 0-11, unsigned */
	USDT__LO_RISCV,	  /* %lo(sym), bits 0-11, sign-extended */
};

/*
 * The instructions before a call site, for usdt__label_lo(): the file's
 * bytes [start, start + len) with start + len the site's address, all of
 * them inside the function that holds the site and inside one loadable
 * segment. Borrowed from the reader; valid while the file is being read.
 */
struct usdt__code {
	const uint8_t *bytes;
	uint64_t start;
	size_t len;
	bool at_func_start; /* start is the function's first byte */
};

/* What resolution needs to know about the call site. */
struct usdt__site_ctx {
	const struct usdt__arch_ops *arch;
	const struct usdt__symtab *symtab; /* may be NULL */
	/* Optional, used when symtab is NULL: builds the table on the first
	 * argument that names a symbol (most files have none), or NULL. */
	const struct usdt__symtab *(*load_symtab)(void *load_arg);
	void *load_arg;
	/*
	 * Optional (NULL: no code is read): the code before the site, at most
	 * max_back bytes of it, into *code. Returns 0, or a negative errno
	 * with *why saying what is missing (no function symbol holds the
	 * site, data among the instructions, ...).
	 */
	int (*load_code)(void *load_arg, uint64_t vaddr, size_t max_back,
			 struct usdt__code *code, const char **why);
	/* Optional: is vaddr inside a loadable segment of the file? */
	bool (*mapped)(void *load_arg, uint64_t vaddr);
	uint64_t vaddr; /* the call site's link-time address */
	bool is_dyn;	/* ET_DYN: absolute addresses need the load bias */
	bool big_endian;
};

/*
 * Split and parse an argument string into *args (malloc'ed, *cnt entries).
 * An argument that cannot be parsed or resolved becomes
 * USDT_ARG_UNSUPPORTED with a reason; that is not an error. Returns 0, or
 * -EINVAL when the string cannot be split into arguments at all, -E2BIG
 * for more than USDT_MAX_ARG_CNT, -ENOMEM; *why then says why.
 */
int usdt__args_parse(const struct usdt__site_ctx *site, const char *str,
		     struct usdt__arg **args, int *cnt, const char **why);

/* Parse one argument "[-]SIZE[f]@OPERAND" (the whole text given) into arg
 * and resolve it; used by the splitter and by the unit tests. */
void usdt__arg_parse_one(const struct usdt__site_ctx *site, const char *str,
			 size_t pos, size_t len, struct usdt__arg *arg);

/* The fast code of an argument's spec (usdt_arg_spec.fast, usdt_spec.h):
 * how the BPF side keeps its size, and whether BPF_USDT() may read it as a
 * whole register; 0 for an unsupported one. */
uint8_t usdt__arg_fast(const struct usdt_arg_spec *spec);

/*
 * Group spec's memory arguments into the windows BPF_USDT() reads with one
 * user-memory read each (usdt_spec.h): those with one base register and
 * no index whose bytes span at most USDT_WIN_MAX, first fit in argument
 * order; of those with two or more arguments, the USDT_WIN_CNT with the
 * most. Sets win_cnt, arg_win and wins from args and arg_cnt; the rest is
 * unchanged.
 */
void usdt__spec_windows(struct usdt_spec *spec);

#endif /* __LIBUSDT_ARGS_H */
