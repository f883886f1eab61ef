// SPDX-License-Identifier: BSD-2-Clause
/*
 * Argument strings: splitting, the "[-]SIZE[f]@" prefix, and resolution of
 * what an arch parser read into a BPF spec.
 *
 * An argument string is a list of "[-]SIZE[f]@OPERAND" separated by spaces,
 * but an operand may contain a space itself (arm64 "[sp, 132]"). So an
 * argument ends at a space outside brackets that is followed by the start
 * of another argument ("-4@", "8f@") or by the end of the string.
 *
 * Resolution turns the operand into one of the spec kinds. Addresses in the
 * ELF file are link-time addresses; at run time the file is loaded at some
 * bias, the same for all of it. A probe's own run-time IP is its link-time
 * address plus that bias, so any link-time address A is reached at run time
 * as IP + (A - site address): that is USDT_SPEC_F_IPREL. It serves x86
 * %rip operands, and absolute symbol references in PIEs and shared
 * libraries, without a pid and without knowing where the file is mapped.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>

#include "reader/arch_ops.h"
#include "reader/symtab.h"

/* Does s start an argument ("-?DIGITS f? @")? */
static bool starts_arg(const char *s)
{
	if (*s == '-')
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s))
		s++;
	if (*s == 'f')
		s++;
	return *s == '@';
}

static void set_unsupported(struct usdt__arg *arg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_unsupported(struct usdt__arg *arg, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(arg->reason, sizeof(arg->reason), fmt, ap);
		va_end(ap);
	}
	if (!arg->reason[0])
		snprintf(arg->reason, sizeof(arg->reason), "cannot parse");
	arg->kind = USDT_ARG_UNSUPPORTED;
	memset(&arg->spec, 0, sizeof(arg->spec));
	arg->spec.kind = USDT_SPEC_UNSUPPORTED;
	/* The spec's size is one a read could have; the size written (0 to
	 * 9999, which a byte cannot hold) goes to val_off, which nothing
	 * reads of an unsupported argument but bpf_usdt_arg_size(): one
	 * size in usdt list, usdt_probe__arg() and the BPF side. */
	arg->spec.size = arg->size == 1 || arg->size == 2 || arg->size == 4 ?
				 arg->size :
				 8;
	arg->spec.val_off = (uint64_t)arg->size;
	arg->spec.base_off = USDT_REG_NONE;
	arg->spec.idx_off = USDT_REG_NONE;
	arg->spec.flags = (arg->is_signed ? USDT_SPEC_F_SIGNED : 0) |
			  (arg->is_float ? USDT_SPEC_F_FLOAT : 0) |
			  (arg->size == 16 ? USDT_SPEC_F_TRUNC : 0);
}

static uint64_t truncate_to(uint64_t v, int size)
{
	return size >= 8 ? v : v & ((1ULL << (size * 8)) - 1);
}

static int scale_shift(int scale)
{
	switch (scale) {
	case 0:
	case 1:
		return 0;
	case 2:
		return 1;
	case 4:
		return 2;
	case 8:
		return 3;
	default:
		return -1;
	}
}

/* What resolution knows about an operand as it goes through its phases. */
struct resolve_state {
	bool has_base, has_idx;
	bool absolute; /* disp is a link-time address */
};

/* Size, sign, float and index flags of the spec. False (with arg made
 * unsupported) for an index scale that BPF cannot shift by. */
static bool spec_init(struct usdt__arg *arg, const struct resolve_state *rs)
{
	struct usdt_arg_spec *spec = &arg->spec;
	int shift;

	memset(spec, 0, sizeof(*spec));
	spec->base_off = rs->has_base ? (uint16_t)arg->base_off : USDT_REG_NONE;
	spec->idx_off = rs->has_idx ? (uint16_t)arg->idx_off : USDT_REG_NONE;
	spec->size = arg->size > 8 ? 8 : arg->size;
	spec->flags = (arg->is_signed ? USDT_SPEC_F_SIGNED : 0) |
		      (arg->is_float ? USDT_SPEC_F_FLOAT : 0) |
		      (arg->size == 16 ? USDT_SPEC_F_TRUNC : 0);

	shift = scale_shift(rs->has_idx ? arg->scale : 0);
	if (shift < 0) {
		set_unsupported(arg, "bad index scale %d", arg->scale);
		return false;
	}
	spec->flags |= shift << USDT_SPEC_SCALE_SHIFT;
	if (rs->has_idx && arg->idx_ext == USDT__IDX_SXTW)
		spec->flags |= USDT_SPEC_F_IDX_S32;
	else if (rs->has_idx && arg->idx_ext == USDT__IDX_UXTW)
		spec->flags |= USDT_SPEC_F_IDX_U32;
	return true;
}

/* Quote at most 40 characters of a symbol, so that a long C++ name leaves
 * room in the reason for what went wrong. */
static int sym_quote_len(const struct usdt__arg *arg)
{
	return arg->sym_len > 40 ? 40 : arg->sym_len;
}

/* How far before a call site to read code for a label's low bits (riscv64
 * decodes from the function's start, so this bounds the function too). */
#define LABEL_MAX_BACK (16u << 10)

/*
 * A compiler-local label (".LANCHOR0", gcc -O2's section anchor on arm64,
 * riscv64 and s390x, the start of a block of the translation unit's data;
 * ".LC0", a constant): the assembler resolves it and keeps no symbol, and
 * the note's text is not relocated. In "[x1, #:lo12:.LANCHOR0]" the base
 * register holds the page at run time and only the low bits are missing;
 * the arch's label_lo hook reads them from the instructions before the
 * site, under the rule its file states (src/reader/arch/arm64_code.c). Under
 * that rule the instructions carry the low bits of the very expression the
 * note wrote, addend included, so the value found replaces the operand's
 * displacement. Anywhere else (a bare label, s390x "8@.LANCHOR0+4") no
 * instruction is tied to the operand and its address is not in the file.
 * Returns true with arg->disp set, or false with arg made unsupported and
 * one reason, whatever the arch, for one cause.
 */
static bool label_lo(const struct usdt__site_ctx *site, const char *name,
		     struct usdt__arg *arg)
{
	const char *why = "its address is not in the file";
	int q = sym_quote_len(arg);
	bool anchor = arg->sym_len >= 8 && !memcmp(name, ".LANCHOR", 8);
	struct usdt__code code;
	uint64_t page = 0;
	int64_t lo = 0;

	if (arg->lo_reloc && !arg->got && arg->base_off >= 0) {
		if (!site->arch->label_lo)
			why = "no reader of its low bits on this arch";
		else if (!site->load_code)
			why = "the code before the site cannot be read";
		else if (!site->load_code(site->load_arg, site->vaddr,
					  LABEL_MAX_BACK, &code, &why) &&
			 !site->arch->label_lo(&code, arg->base_off, &lo, &page,
					       &why)) {
			if (!site->mapped ||
			    site->mapped(site->load_arg, page + (uint64_t)lo)) {
				arg->disp = lo;
				return true;
			}
			why = "the instructions before the site point outside the file";
		}
	}
	set_unsupported(arg, "%s %.*s: %s",
			anchor ? "section anchor" : "compiler-local label",
			q > 16 ? 16 : q, name, why);
	return false;
}

/*
 * Look the operand's symbol up: its address and GOT slot (0 for none).
 * Returns 0 when defined in the file, 1 when only reachable through the GOT
 * (as usdt__sym_lookup), 2 for a compiler-local label whose low bits are
 * now in arg->disp (label_lo()), or -1 with arg made unsupported.
 */
static int sym_find(const struct usdt__site_ctx *site, const char *name,
		    struct usdt__arg *arg, uint64_t *addr, uint64_t *got_slot)
{
	const struct usdt__symtab *st = site->symtab;
	int q = sym_quote_len(arg), err;

	if (!st && site->load_symtab)
		st = site->load_symtab(site->load_arg);
	err = st ? usdt__sym_lookup(st, name, arg->sym_len, addr, got_slot) :
		   -ENOENT;
	/* Without a symbol, or with one per translation unit (-Wa,-L keeps
	 * them): the instructions may still tell. */
	if (err < 0 && arg->sym_len > 2 && !memcmp(name, ".L", 2))
		return label_lo(site, name, arg) ? 2 : -1;
	if (err == -ENOTUNIQ) {
		set_unsupported(arg,
				"symbol '%.*s' is ambiguous: several symbols have that name",
				q, name);
		return -1;
	}
	if (err < 0) {
		set_unsupported(arg, "symbol '%.*s' not in the symbol table", q,
				name);
		return -1;
	}
	if (arg->sym_obj8 && usdt__sym_obj_size(st, name, arg->sym_len) == 8)
		arg->mem = true;
	return err;
}

/*
 * The base register already holds the high part of the address (adrp on
 * arm64 makes it PC-relative, so it follows the load bias): only the low
 * 12 bits come from the operand. arm64 :got_lo12: names the symbol's GOT
 * slot instead. found is sym_find()'s result.
 *
 * riscv64 "%lo(sym)(a4)" is read at sym's address, without a4: the
 * linker relaxes "lui a4, %hi(sym)" away when sym is within reach of gp
 * (and makes the loads gp-relative), but never rewrites the note, so a4
 * may hold anything at the site (gcc -O2 -no-pie does this to a static).
 * %hi/%lo are absolute, so the address is sym's, wherever a4 came from.
 * Returns false with arg made unsupported.
 */
static bool lower_lo12(const char *name, struct usdt__arg *arg, int found,
		       uint64_t addr, uint64_t got_slot,
		       struct resolve_state *rs)
{
	int q = sym_quote_len(arg);
	uint64_t v;

	if (arg->got && !got_slot) {
		set_unsupported(arg, "symbol '%.*s' has no GOT slot", q, name);
		return false;
	}
	if (!arg->got && found == 1) {
		set_unsupported(arg,
				"symbol '%.*s' is only reachable through the GOT",
				q, name);
		return false;
	}
	v = (arg->got ? got_slot : addr) + (uint64_t)arg->disp;
	arg->got = false;
	if (arg->lo_reloc == USDT__LO_RISCV) {
		arg->disp = (int64_t)v;
		rs->has_base = false;
		arg->spec.base_off = USDT_REG_NONE;
		rs->absolute = true;
		return true;
	}
	arg->disp = (int64_t)(v & 0xfff);
	return true;
}

/*
 * Replace the operand's symbol by its address. Returns 0 to go on
 * resolving, 1 when arg is fully resolved (a GOT load), or -1 with arg made
 * unsupported.
 */
static int lower_symbol(const struct usdt__site_ctx *site, const char *str,
			struct usdt__arg *arg, struct resolve_state *rs)
{
	struct usdt_arg_spec *spec = &arg->spec;
	const char *name = str + arg->sym_pos;
	uint64_t addr = 0, got_slot = 0;
	int found;

	found = sym_find(site, name, arg, &addr, &got_slot);
	if (found < 0)
		return -1;
	if (found == 2)
		return 0; /* base register plus the recovered low bits */
	if (arg->lo_reloc)
		return lower_lo12(name, arg, found, addr, got_slot, rs) ? 0 :
									  -1;
	if (arg->got) {
		/* Prefer the slot whenever there is one: it holds the address
		 * in use at run time, which is not this file's definition
		 * when the executable copy-relocated or interposed the
		 * symbol. */
		if (found == 1 || got_slot) {
			/* The value is the pointer stored in the GOT, at the
			 * slot's address: IP-relative, with no register
			 * added (the parser's base is %rip). */
			arg->kind = USDT_ARG_PCREL;
			spec->base_off = USDT_REG_NONE;
			arg->offset = (int64_t)(got_slot - site->vaddr);
			spec->kind = USDT_SPEC_MEM;
			spec->flags |= USDT_SPEC_F_IPREL;
			spec->val_off = (uint64_t)arg->offset;
			return 1;
		}
		/* Defined here: the value is the symbol's address, and %rip
		 * no longer takes part. */
		arg->mem = false;
		arg->pcrel = false;
		rs->has_base = false;
		spec->base_off = USDT_REG_NONE;
	} else if (found == 1) {
		set_unsupported(arg,
				"symbol '%.*s' is only reachable through the GOT",
				sym_quote_len(arg), name);
		return -1;
	}
	arg->disp = (int64_t)(addr + (uint64_t)arg->disp);
	rs->absolute = true;
	return 0;
}

/* A register holding the value itself. */
static void resolve_reg_value(const struct usdt__site_ctx *site,
			      struct usdt__arg *arg)
{
	struct usdt_arg_spec *spec = &arg->spec;

	arg->kind = USDT_ARG_REG;
	spec->kind = USDT_SPEC_VALUE;
	spec->val_off = 0;
	arg->offset = 0;
	if (arg->disp) {
		set_unsupported(arg, "register value with an offset");
		return;
	}
	/*
	 * A 16-byte value in a register is in a pair. On s390x, our only
	 * big-endian target, the pair is rN (high half) and rN+1 (low half),
	 * which sit next to each other in pt_regs.
	 */
	if (arg->size == 16 && site->big_endian) {
		if (arg->base_off + 8 + 8 >
		    (site->arch ? site->arch->pt_regs_size : 0)) {
			set_unsupported(arg,
					"16-byte value in the last register");
			return;
		}
		spec->base_off = (uint16_t)(arg->base_off + 8);
		/* s390x names them rN, so rN+1 is read. */
		snprintf(arg->read_base, sizeof(arg->read_base), "r%u",
			 (unsigned int)atoi(arg->base + 1) % 16 + 1);
	}
}

/* The operand is the value (a register, a constant or an address), not
 * memory at it. */
static void resolve_value(const struct usdt__site_ctx *site,
			  struct usdt__arg *arg, const struct resolve_state *rs)
{
	struct usdt_arg_spec *spec = &arg->spec;

	if (rs->has_idx) {
		set_unsupported(arg, "value operand with an index register");
		return;
	}
	if (rs->has_base) {
		resolve_reg_value(site, arg);
		return;
	}
	if (rs->absolute && (site->is_dyn || arg->pcrel)) {
		arg->kind = USDT_ARG_PCADDR;
		arg->offset = (int64_t)((uint64_t)arg->disp - site->vaddr);
		spec->kind = USDT_SPEC_VALUE;
		spec->flags |= USDT_SPEC_F_IPREL;
		spec->val_off = (uint64_t)arg->offset;
		return;
	}
	arg->kind = USDT_ARG_CONST;
	arg->value = truncate_to((uint64_t)arg->disp, spec->size);
	arg->offset = 0;
	spec->kind = USDT_SPEC_VALUE;
	spec->val_off = arg->value;
}

/* The operand is memory at an address. */
static void resolve_mem(const struct usdt__site_ctx *site,
			struct usdt__arg *arg, const struct resolve_state *rs)
{
	struct usdt_arg_spec *spec = &arg->spec;

	spec->kind = USDT_SPEC_MEM;
	/* The low half of a 16-byte value is at +8 on big-endian. The
	 * displacement holds two's-complement bits, so add without signed
	 * overflow (a displacement near INT64_MAX wraps, as in the CPU). */
	if (arg->size == 16 && site->big_endian) {
		arg->disp = (int64_t)((uint64_t)arg->disp + 8);
		arg->read_adj = 8;
	}

	if (!rs->has_base && !rs->has_idx) {
		if (rs->absolute && (site->is_dyn || arg->pcrel)) {
			arg->kind = USDT_ARG_PCREL;
			arg->offset =
				(int64_t)((uint64_t)arg->disp - site->vaddr);
			spec->flags |= USDT_SPEC_F_IPREL;
			spec->val_off = (uint64_t)arg->offset;
			return;
		}
		arg->kind = USDT_ARG_ABS;
		arg->offset = arg->disp;
		spec->val_off = (uint64_t)arg->disp;
		return;
	}

	arg->kind = rs->has_idx ? USDT_ARG_INDEX : USDT_ARG_DEREF;
	arg->offset = arg->disp;
	spec->val_off = (uint64_t)arg->disp;
	if (rs->absolute && site->is_dyn) {
		/* sym(%reg) in a PIE: the symbol moves with the load bias. */
		spec->flags |= USDT_SPEC_F_IPREL;
		spec->val_off = (uint64_t)arg->disp - site->vaddr;
	}
}

/*
 * Turn the parsed operand into kind, offset/value and spec, in phases: the
 * spec's flags, the symbol replaced by its address, then the value or
 * memory case. When it cannot be expressed, arg is made unsupported.
 */
static void resolve(const struct usdt__site_ctx *site, const char *str,
		    struct usdt__arg *arg)
{
	struct resolve_state rs = {
		.has_base = arg->base_off >= 0,
		.has_idx = arg->idx_off >= 0,
	};

	if (!spec_init(arg, &rs))
		return;
	if (arg->has_sym && lower_symbol(site, str, arg, &rs) != 0)
		return;

	if (arg->pcrel) {
		/* x86 sym(%rip): the assembler made it PC-relative; the
		 * address is the symbol's, wherever the PC was. */
		if (!rs.absolute) {
			set_unsupported(arg,
					"PC-relative operand without a symbol");
			return;
		}
		if (rs.has_idx) {
			set_unsupported(arg,
					"PC-relative operand with an index");
			return;
		}
		arg->spec.base_off = USDT_REG_NONE;
		rs.has_base = false;
	}

	if (arg->mem)
		resolve_mem(site, arg, &rs);
	else
		resolve_value(site, arg, &rs);
}

void usdt__arg_parse_one(const struct usdt__site_ctx *site, const char *str,
			 size_t pos, size_t len, struct usdt__arg *arg)
{
	const char *s = str + pos, *end = s + len, *op;
	long size = 8;
	int err;

	memset(arg, 0, sizeof(*arg));
	arg->str_pos = (uint16_t)pos;
	arg->str_len = (uint16_t)len;
	arg->base_off = -1;
	arg->idx_off = -1;
	arg->size = 8;

	op = memchr(s, '@', len);
	if (op && starts_arg(s)) {
		const char *p = s;

		if (*p == '-') {
			arg->is_signed = true;
			p++;
		}
		arg->sized = true;
		size = 0;
		while (p < op && isdigit((unsigned char)*p) && size < 1000)
			size = size * 10 + (*p++ - '0');
		if (p < op && *p == 'f') {
			arg->is_float = true;
			p++;
		}
		op++;
	} else {
		/* No size (old notes, assembler probes): a long, unless the
		 * operand is a register whose name says its width (below). */
		op = s;
	}
	if (size != 1 && size != 2 && size != 4 && size != 8 && size != 16) {
		/* As written (below 10000), for the listing; the spec reads
		 * nothing. */
		arg->size = (int)size;
		set_unsupported(arg, "bad argument size %ld", size);
		return;
	}
	arg->size = (int)size;
	if (op >= end) {
		set_unsupported(arg, "empty operand");
		return;
	}
	if (!site->arch) {
		set_unsupported(arg, "unsupported architecture");
		return;
	}
	err = site->arch->parse_operand(op, (size_t)(end - op), arg);
	if (err) {
		set_unsupported(arg, NULL);
		return;
	}
	/* The parser saw the operand: make its symbol span absolute. */
	if (arg->has_sym)
		arg->sym_pos = (uint16_t)(arg->sym_pos + (op - str));
	/*
	 * A size-less register ("%ax", "%ah", "w0") is read at its name's
	 * width, unsigned, as systemtap and bcc read it: systemtap takes a
	 * size-less argument of a current (v3) note as unsigned long and
	 * masks a register to its width without sign extension.
	 */
	if (!arg->sized && !arg->mem && arg->base_off >= 0 && arg->reg_width)
		arg->size = arg->reg_width;
	arg->reason[0] = '\0';
	resolve(site, str, arg);
}

/*
 * The BPF side keeps size bytes of a value by the shift the fast code
 * gives, reads a whole register in line where USDT_FAST_REG says the
 * value is nothing else, and returns the errno in its low bits with the
 * value: -E2BIG for a 16-byte argument's low half (usdt_spec.h).
 */
_Static_assert(E2BIG <= USDT_FAST_ERRNO_MASK, "E2BIG fits the fast code");
uint8_t usdt__arg_fast(const struct usdt_arg_spec *spec)
{
	unsigned int size = spec->size;
	uint8_t fast;

	if ((spec->kind != USDT_SPEC_VALUE && spec->kind != USDT_SPEC_MEM) ||
	    (size != 1 && size != 2 && size != 4 && size != 8))
		return 0;
	fast = (uint8_t)((64 - 8 * size) |
			 (spec->flags & USDT_SPEC_F_SIGNED ? USDT_FAST_SIGNED :
							     0) |
			 (spec->flags & USDT_SPEC_F_TRUNC ? E2BIG : 0));
	if (spec->kind == USDT_SPEC_VALUE && spec->base_off != USDT_REG_NONE &&
	    !(spec->base_off % 8) && spec->idx_off == USDT_REG_NONE &&
	    !spec->val_off && !(spec->flags & USDT_SPEC_F_IPREL))
		fast |= USDT_FAST_REG;
	return fast;
}

/* Can BPF_USDT() read argument a from a window (usdt_spec.h)? */
static bool win_fits(const struct usdt_arg_spec *a)
{
	return a->kind == USDT_SPEC_MEM && a->base_off != USDT_REG_NONE &&
	       !(a->base_off % 8) && a->idx_off == USDT_REG_NONE &&
	       !(a->flags & USDT_SPEC_F_IPREL) &&
	       (int64_t)a->val_off == (int32_t)a->val_off &&
	       (a->size == 1 || a->size == 2 || a->size == 4 || a->size == 8);
}

/*
 * A window as it grows: [lo, hi) relative to the base register, as signed
 * offsets (val_off is a two's complement displacement), and its arguments.
 */
struct win_acc {
	int64_t lo, hi;
	uint16_t base_off;
	uint16_t args; /* bit i: argument i */
};

/* Widen w to take argument a (index i) if the span stays in a window. */
static bool win_take(struct win_acc *w, const struct usdt_arg_spec *a, int i)
{
	int64_t lo = (int64_t)a->val_off, hi = lo + a->size;

	if (w->base_off != a->base_off)
		return false;
	if (lo > w->lo)
		lo = w->lo;
	if (hi < w->hi)
		hi = w->hi;
	/* Both ends are 32-bit displacements (win_fits()) plus at most 8:
	 * no overflow. */
	if (hi - lo > USDT_WIN_MAX)
		return false;
	w->lo = lo;
	w->hi = hi;
	w->args |= (uint16_t)(1U << i);
	return true;
}

/* How many arguments window candidate w holds. */
static int win_args(const struct win_acc *w)
{
	return __builtin_popcount(w->args);
}

/* The best USDT_WIN_CNT of n candidates (most arguments, the first on a
 * tie) into spec, those of fewer than two arguments left out. */
static void win_pick(struct usdt_spec *spec, struct win_acc *acc, int n)
{
	struct usdt_win *w;
	int i, k, best;

	while (spec->win_cnt < USDT_WIN_CNT) {
		for (best = -1, k = 0; k < n; k++)
			if (win_args(&acc[k]) >= 2 &&
			    (best < 0 ||
			     win_args(&acc[k]) > win_args(&acc[best])))
				best = k;
		if (best < 0)
			return;
		w = &spec->wins[spec->win_cnt++];
		w->off = (int32_t)acc[best].lo;
		w->base_off = acc[best].base_off;
		w->len = (uint8_t)(acc[best].hi - acc[best].lo);
		for (i = 0; i < USDT_MAX_ARG_CNT; i++)
			if (acc[best].args & (1U << i))
				spec->arg_win[i] =
					(uint8_t)(spec->win_cnt
							  << USDT_WIN_SHIFT |
						  ((int64_t)spec->args[i]
							   .val_off -
						   w->off));
		acc[best].args = 0;
	}
}

void usdt__spec_windows(struct usdt_spec *spec)
{
	/* Candidates: a window of two arguments or more takes at least two
	 * of them, and a lone argument is one candidate. */
	struct win_acc acc[USDT_MAX_ARG_CNT];
	int i, k, n = 0, cnt = spec->arg_cnt;

	memset(spec->arg_win, 0, sizeof(spec->arg_win));
	memset(spec->wins, 0, sizeof(spec->wins));
	spec->win_cnt = 0;
	if (cnt > USDT_MAX_ARG_CNT)
		cnt = USDT_MAX_ARG_CNT;
	/* First fit, in argument order. */
	for (i = 0; i < cnt; i++) {
		const struct usdt_arg_spec *a = &spec->args[i];

		if (!win_fits(a))
			continue;
		for (k = 0; k < n && !win_take(&acc[k], a, i); k++)
			;
		if (k < n)
			continue;
		acc[n].lo = (int64_t)a->val_off;
		acc[n].hi = acc[n].lo + a->size;
		acc[n].base_off = a->base_off;
		acc[n++].args = (uint16_t)(1U << i);
	}
	win_pick(spec, acc, n);
}

int usdt__args_parse(const struct usdt__site_ctx *site, const char *str,
		     struct usdt__arg **args_out, int *cnt_out,
		     const char **why)
{
	struct usdt__arg args[USDT_MAX_ARG_CNT];
	size_t n = strlen(str), i = 0, start;
	bool legacy;
	int cnt = 0, depth;

	*args_out = NULL;
	*cnt_out = 0;
	*why = NULL;
	if (n > UINT16_MAX) {
		*why = "argument string too long";
		return -EINVAL;
	}
	while (i < n && isspace((unsigned char)str[i]))
		i++;
	/* Notes without sizes: one operand per word. */
	legacy = i < n && !starts_arg(str + i);

	while (i < n) {
		start = i;
		depth = 0;
		for (; i < n; i++) {
			char c = str[i];

			if (c == '[' || c == '(')
				depth++;
			else if ((c == ']' || c == ')') && depth > 0)
				depth--;
			else if (isspace((unsigned char)c) && depth == 0) {
				size_t j = i;

				while (j < n && isspace((unsigned char)str[j]))
					j++;
				if (j == n || legacy || starts_arg(str + j))
					break;
			}
		}
		if (cnt == USDT_MAX_ARG_CNT) {
			*why = "more than 12 arguments";
			return -E2BIG;
		}
		usdt__arg_parse_one(site, str, start, i - start, &args[cnt++]);
		while (i < n && isspace((unsigned char)str[i]))
			i++;
	}
	if (cnt) {
		*args_out = calloc((size_t)cnt, sizeof(args[0]));
		if (!*args_out) {
			*why = "out of memory";
			return -ENOMEM;
		}
		memcpy(*args_out, args, (size_t)cnt * sizeof(args[0]));
	}
	*cnt_out = cnt;
	return 0;
}
