// SPDX-License-Identifier: BSD-2-Clause
/*
 * riscv64: the low 12 bits of a compiler-local label, read from the
 * instructions before a call site.
 *
 * gcc -O2 -no-pie may write a static as "1@%lo(.LANCHOR1)(a4)" after
 * "lui a4, %hi(.LANCHOR1)": a4 holds the label's high part, the operand
 * adds its low 12 bits (signed: %hi rounds). The label has no symbol.
 * The reasoning is arm64's (src/reader/arch/arm64_code.c), with lui for adrp:
 *
 *   (P) a "%lo(X)(reg)" operand's base register was set by
 *       "lui reg, %hi(X)" for the same expression X,
 *
 * so the immediates that the users of that lui add to the register (addi,
 * loads and stores), all equal, are %lo(X). Three things differ:
 *
 *  - Instructions are 2 or 4 bytes long (the C extension), so the code
 *    cannot be read backwards: the walk goes forward from the function's
 *    first byte (it needs code->at_func_start), and keeps, for the base
 *    register, what last wrote it on the straight line reaching the site.
 *    A jump, a call or a trap ends the straight line; so does an
 *    instruction we do not decode.
 *  - The linker deletes "lui a4, %hi(X)" when X is within reach of gp (or
 *    of address 0) and rewrites its %lo users to gp- or zero-relative
 *    form, but never the note, whose a4 then holds anything. No lui then
 *    reaches the site, and the argument is refused: the register is never
 *    trusted without its lui.
 *  - The linker may also shorten a lui to c.lui; both are read.
 *
 * Every read of instruction bytes is within code->len; instructions are
 * little-endian.
 */
#include "reader/arch/arch.h"
#include "reader/arch/code.h"

enum insn_kind {
	INSN_OTHER,   /* does not write the register */
	INSN_WRITES,  /* writes it, and is not a lui */
	INSN_LUI,     /* lui or c.lui to the register */
	INSN_BARRIER, /* ends the fall-through: jump, call, trap */
	INSN_UNKNOWN, /* not decoded */
};

/* One decoded instruction, as far as the walk cares. */
struct insn {
	enum insn_kind kind;
	uint64_t page; /* INSN_LUI: the value written */
	bool user;     /* adds a 12-bit immediate to the register */
	int64_t lo;    /* that immediate */
};

static int64_t sext(uint64_t v, unsigned int bits)
{
	uint64_t m = 1ull << (bits - 1);

	return (int64_t)((v ^ m) - m);
}

/* Quadrant 1 of the C extension: c.addi, c.li, c.lui, c.j... */
static void c_quadrant1(uint16_t h, unsigned int reg, struct insn *in)
{
	unsigned int f3 = h >> 13, rd = (h >> 7) & 31;
	unsigned int rdp = ((h >> 7) & 7) + 8u;

	switch (f3) {
	case 3: /* c.lui (c.addi16sp for sp) */
		if (rd == reg && rd != 2) {
			in->kind = INSN_LUI;
			in->page = (uint64_t)sext(((h >> 12) & 1) << 5 |
							  ((h >> 2) & 31),
						  6)
				   << 12;
			return;
		}
		/* fall through */
	case 0: /* c.addi, c.nop */
	case 1: /* c.addiw */
	case 2: /* c.li */
		in->kind = rd == reg ? INSN_WRITES : INSN_OTHER;
		return;
	case 4: /* c.srli, c.srai, c.andi, c.sub... on rd' */
		in->kind = rdp == reg ? INSN_WRITES : INSN_OTHER;
		return;
	case 5: /* c.j */
		in->kind = INSN_BARRIER;
		return;
	default: /* c.beqz, c.bnez */
		in->kind = INSN_OTHER;
	}
}

/* A 16-bit instruction (the C extension). */
static void decode16(uint16_t h, unsigned int reg, struct insn *in)
{
	unsigned int f3 = h >> 13, rd = (h >> 7) & 31, rs2 = (h >> 2) & 31;
	unsigned int rdp = ((h >> 2) & 7) + 8u;

	if ((h & 3) == 1) {
		c_quadrant1(h, reg, in);
		return;
	}
	if ((h & 3) == 0) {
		/* c.addi4spn, c.lw, c.ld write rd'; c.fld reads FP; stores. */
		if (f3 == 4)
			in->kind = INSN_UNKNOWN;
		else if (f3 == 0 || f3 == 2 || f3 == 3)
			in->kind = rdp == reg ? INSN_WRITES : INSN_OTHER;
		return;
	}
	/* Quadrant 2. */
	if (f3 == 4 && rs2 == 0 && (rd != 0 || (h & 0x1000)))
		in->kind = INSN_BARRIER; /* c.jr, c.jalr, c.ebreak */
	else if (f3 == 0 || f3 == 2 || f3 == 3 || f3 == 4)
		in->kind = rd == reg ? INSN_WRITES : INSN_OTHER;
	/* c.fldsp and the stores to sp write no integer register. */
}

/* A 32-bit instruction. */
static void decode32(uint32_t w, unsigned int reg, struct insn *in)
{
	unsigned int op = w & 0x7f, rd = (w >> 7) & 31, rs1 = (w >> 15) & 31;
	unsigned int f3 = (w >> 12) & 7;

	switch (op) {
	case 0x37: /* lui */
		if (rd == reg) {
			in->kind = INSN_LUI;
			in->page = (uint64_t)sext(w & 0xfffff000, 32);
		}
		return;
	case 0x6f:
	case 0x67: /* jal, jalr */
		in->kind = INSN_BARRIER;
		return;
	case 0x63:
	case 0x0f: /* branches, fence */
		return;
	case 0x23:
	case 0x27: /* stores */
		/* Integer sb..sd, FP fsh..fsq; not vector stores (funct3 0,
		 * 5-7), whose other bits are no immediate. */
		in->user = rs1 == reg &&
			   (op == 0x23 ? f3 <= 3 : f3 >= 1 && f3 <= 4);
		in->lo = sext((w >> 25) << 5 | ((w >> 7) & 31), 12);
		return;
	case 0x03:
	case 0x07:
	case 0x13: /* loads, addi... */
		/* lb..lwu, flh..flq (not vector loads), and addi. */
		in->user = rs1 == reg && (op == 0x03 ? f3 <= 6 :
					  op == 0x07 ? f3 >= 1 && f3 <= 4 :
						       f3 == 0);
		in->lo = sext(w >> 20, 12);
		if (op != 0x07 && rd == reg)
			in->kind = INSN_WRITES;
		return;
	case 0x73: /* ecall, ebreak; csr */
		if (!f3)
			in->kind = INSN_BARRIER;
		else if (rd == reg)
			in->kind = INSN_WRITES;
		return;
	case 0x17:
	case 0x1b:
	case 0x33:
	case 0x3b:
	case 0x2f:
	case 0x53:
	case 0x43:
	case 0x47:
	case 0x4b:
	case 0x4f:
	case 0x57:
		/* auipc, arithmetic, atomics, FP and vector (some write an
		 * integer register: assume they do). */
		if (rd == reg)
			in->kind = INSN_WRITES;
		return;
	default:
		in->kind = INSN_UNKNOWN;
	}
}

/* What the straight line has shown about the register so far. */
struct line {
	bool lui;     /* set by a lui, and not written since */
	bool written; /* last set by another instruction */
	uint64_t page;
	size_t users;
	int64_t lo;
	bool differ;
};

static void step(struct line *l, const struct insn *in)
{
	switch (in->kind) {
	case INSN_LUI:
		*l = (struct line){ .lui = true, .page = in->page };
		return;
	case INSN_OTHER:
		if (l->lui && in->user) {
			l->differ |= l->users++ && in->lo != l->lo;
			l->lo = in->lo;
		}
		return;
	case INSN_WRITES:
		*l = (struct line){ .written = true };
		return;
	default:
		*l = (struct line){ 0 };
	}
}

int usdt__riscv64_label_lo(const struct usdt__code *code, int base_off,
			   int64_t *lo, uint64_t *page, const char **why)
{
	unsigned int reg = (unsigned int)base_off / 8;
	struct line l = { 0 };
	size_t pos = 0;
	uint16_t h;

	if (!code->at_func_start) {
		*why = "its function is too long to decode up to the site";
		return -ENOENT;
	}
	if (base_off < 8 || base_off % 8 || reg > 31) {
		*why = "its base register is not x1-x31";
		return -ENOENT;
	}
	while (pos + 2 <= code->len) {
		struct insn in = { .kind = INSN_OTHER };

		h = (uint16_t)(code->bytes[pos] | code->bytes[pos + 1] << 8);
		if ((h & 3) != 3) {
			decode16(h, reg, &in);
			pos += 2;
		} else if ((h & 0x1f) != 0x1f && pos + 4 <= code->len) {
			decode32(h | (uint32_t)code->bytes[pos + 2] << 16 |
					 (uint32_t)code->bytes[pos + 3] << 24,
				 reg, &in);
			pos += 4;
		} else {
			break; /* 48 bits or more, or cut short */
		}
		step(&l, &in);
	}
	if (pos == code->len && l.written) {
		*why = USDT__WHY_OTHER_WRITER;
		return -ENOENT;
	}
	if (pos != code->len || !l.lui) {
		*why = USDT__WHY_NO_PAGE_INSN;
		return -ENOENT;
	}
	if (!l.users) {
		*why = USDT__WHY_NO_USER;
		return -ENOENT;
	}
	if (l.differ) {
		*why = USDT__WHY_USERS_DIFFER;
		return -ENOENT;
	}
	*lo = l.lo;
	*page = l.page;
	return 0;
}
