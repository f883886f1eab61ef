// SPDX-License-Identifier: BSD-2-Clause
/*
 * arm64: the low 12 bits of a compiler-local label, read from the
 * instructions before a call site.
 *
 * gcc -O2 writes an argument that lives in a static or global as
 * "-4@[x1, #:lo12:.LANCHOR0]": x1 holds the 4 KiB page of the address
 * (set by "adrp x1, .LANCHOR0") and the operand adds its low 12 bits.
 * .LANCHOR0 is a section anchor, a label the assembler resolves and keeps
 * no symbol for, and the note's text is never relocated: the low 12 bits
 * are in no table of the file. BPF reads x1 at run time; the 12 bits must
 * come from somewhere else.
 *
 * Where they are. A linked instruction keeps only the result of its
 * relocation: "ldr w3, [x1, #:lo12:.LANCHOR0+8]" becomes "ldr w3, [x1,
 * #imm]", and nothing in the file says which label or addend imm came
 * from. So an instruction's immediate tells .LANCHOR0's low bits only if
 * its text was the same label and addend as the note's. That is what
 * gcc's pairing gives, and we rely on it and on nothing else:
 *
 *   (P) a ":lo12:X" operand's base register was set by "adrp reg, X" for
 *       the same expression X (label and addend), possibly through copies
 *       (a spill and reload); and a register holding an adrp's page is
 *       used only by such operands: an instruction that adds an unsigned
 *       immediate to it adds that adrp's ":lo12:".
 *
 * Both sides of a pair are split from one symbolic address (the high part
 * and the low part of the same X), which is how the adrp's page and the
 * low 12 bits add up to X whatever page X lands on; gcc's own code is
 * correct only because of it, and the note's operand is printed from the
 * same pair. (gcc writes "adrp x1, .LANCHOR0+69" with "[x1,
 * #:lo12:.LANCHOR0+69]", and reaches other objects of the block through
 * the full anchor address, "add x2, x1, :lo12:.LANCHOR0" then "[x2, 8]".)
 * Checked on gcc 12's assembly of this project and its fixtures for arm64
 * and riscv64 at -O2, -O3, -Os, with and without PIC (590 files): all
 * 8301 ":lo12:"/"%lo()" operands whose register was last set by an adrp
 * or lui in the text before them name that adrp's or lui's expression.
 *
 * The reading. Walk back from the site, one 4-byte instruction at a time,
 * over straight-line code: every instruction on the way must be one we
 * decode fully enough to know which registers it may write (unknown
 * encodings stop the walk), none may end the fall-through (b, br, ret,
 * bl/blr: a call may not return, and clobbers), and none may write the
 * base register, until the adrp that sets it. That adrp's value reaches
 * the site on the fall-through path, so by (P) it is "adrp x1, X" for the
 * note's X, and so is the pairing of every instruction between it and the
 * site that adds an unsigned 12-bit immediate to x1 (add immediate, load
 * or store with an unsigned offset): each such immediate, unscaled, is
 * lo12(X). We require at least one of them and all of them to agree, and
 * (in src/reader/args.c) the page plus the bits to fall inside the file's
 * loadable segments. Anything else is refused with the reason why; a
 * wrong address would be worse than none.
 *
 * What this does not need: function-wide branch targets (from the
 * function itself, its ".cold" part or an exception's landing pad).
 * Another path into the straight line may reach the site, but whatever set
 * the register there set it to high(X) by (P), and the fall-through path
 * from the adrp exists, so that adrp is one of the register's definitions
 * at the site and at every instruction between.
 *
 * Why a call stops the walk even for x19-x28, which a call preserves: the
 * callee may not return (abort), and the instruction after the call may
 * then be reached only by jumps, from this function, its ".cold" part or
 * an unwinder's landing pad, with the register set by some other adrp;
 * the adrp before the call would then not be a definition reaching the
 * site at all. Telling that apart needs every way into the code after the
 * call, which the file does not list; such arguments are refused.
 *
 * Every read of instruction bytes is within code->len; instructions are
 * little-endian on arm64 whatever the data byte order.
 */
#include "reader/arch/arch.h"
#include "reader/arch/code.h"

/* A walk's outcome for one instruction. */
enum insn_kind {
	INSN_OTHER,   /* decoded, does not write the register */
	INSN_WRITES,  /* writes the register (and is not the adrp) */
	INSN_ADRP,    /* adrp to the register */
	INSN_BARRIER, /* ends the fall-through: branch, call, trap */
	INSN_UNKNOWN, /* not decoded: stop */
};

static uint32_t rd32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static unsigned int rt(uint32_t w)
{
	return w & 31;
}
static unsigned int rn(uint32_t w)
{
	return (w >> 5) & 31;
}
static unsigned int rt2(uint32_t w)
{
	return (w >> 10) & 31;
}
static unsigned int rs(uint32_t w)
{
	return (w >> 16) & 31;
}

/* Branches, exception generation and system instructions (op0 101x). */
static enum insn_kind branch_sys(uint32_t w, unsigned int reg)
{
	if ((w & 0x7c000000) == 0x14000000 || /* b, bl */
	    (w & 0xfe000000) == 0xd6000000 || /* br, blr, ret, eret... */
	    (w & 0xff000000) == 0xd4000000)   /* svc, brk, hlt... */
		return INSN_BARRIER;
	if ((w & 0xff000000) == 0x54000000 || /* b.cond, bc.cond */
	    (w & 0x7e000000) == 0x34000000 || /* cbz, cbnz */
	    (w & 0x7e000000) == 0x36000000)   /* tbz, tbnz */
		return INSN_OTHER;
	if (w == 0xd503201f) /* nop: other probes' sites */
		return INSN_OTHER;
	if ((w & 0xffc00000) == 0xd5000000) {
		/* System: mrs/sysl write Rt; hints such as paciasp write x30
		 * or x17/x16. Assume the worst. */
		if (reg == rt(w) || reg == 16 || reg == 17 || reg == 30)
			return INSN_WRITES;
		return INSN_OTHER;
	}
	return INSN_UNKNOWN;
}

/* Does a load/store with writeback or a loaded register touch reg? */
static enum insn_kind ldst_writes(bool load, bool pair, bool wback, uint32_t w,
				  unsigned int reg)
{
	if (wback && rn(w) == reg)
		return INSN_WRITES;
	if (load && (rt(w) == reg || (pair && rt2(w) == reg)))
		return INSN_WRITES;
	return INSN_OTHER;
}

/* Loads and stores (op0 x1x0): the forms gcc emits; others stop. */
static enum insn_kind load_store(uint32_t w, unsigned int reg)
{
	bool simd = w & (1u << 26);
	bool load = !simd && ((w >> 22) & 3) != 0;

	if ((w & 0x3b000000) == 0x39000000) /* unsigned offset */
		return ldst_writes(load, false, false, w, reg);
	if ((w & 0x3b200000) == 0x38000000) /* ldur, pre/post-index */
		return ldst_writes(load, false, w & (1u << 10), w, reg);
	if ((w & 0x3b200c00) == 0x38200800) /* register offset */
		return ldst_writes(load, false, false, w, reg);
	if ((w & 0x3a000000) == 0x28000000) /* pairs */
		return ldst_writes(!simd && (w & (1u << 22)), true,
				   w & (1u << 23), w, reg);
	if ((w & 0x3b000000) == 0x18000000) /* load literal */
		return !simd && rt(w) == reg ? INSN_WRITES : INSN_OTHER;
	if ((w & 0x3b200c00) == 0x38200000 || /* atomics */
	    (w & 0x3f000000) == 0x08000000)   /* exclusive, acquire/release */
		/* casp writes the pair Rs, Rs+1. */
		return rt(w) == reg || rs(w) == reg || rs(w) + 1 == reg ||
				       rt2(w) == reg ?
			       INSN_WRITES :
			       INSN_OTHER;
	return INSN_UNKNOWN;
}

/* What one instruction does to reg (0-30) on the fall-through path. */
static enum insn_kind classify(uint32_t w, unsigned int reg)
{
	unsigned int op0 = (w >> 25) & 15;

	if ((w & 0x9f000000) == 0x90000000) /* adrp */
		return rt(w) == reg ? INSN_ADRP : INSN_OTHER;
	if ((op0 & 0xe) == 0x8) /* data processing, imm */
		return rt(w) == reg ? INSN_WRITES : INSN_OTHER;
	if ((op0 & 0xe) == 0xa)
		return branch_sys(w, reg);
	if ((op0 & 0x5) == 0x4)
		return load_store(w, reg);
	if ((op0 & 0x7) == 0x5) { /* data processing, register */
		/* ccmp/ccmn write only the flags (Rd is nzcv). */
		if ((w & 0x1fe00000) == 0x1a400000)
			return INSN_OTHER;
		return rt(w) == reg ? INSN_WRITES : INSN_OTHER;
	}
	if ((op0 & 0x7) == 0x7) /* FP/SIMD: fmov, umov... */
		return rt(w) == reg ? INSN_WRITES : INSN_OTHER;
	return INSN_UNKNOWN; /* SVE, SME, reserved */
}

/*
 * The unsigned 12-bit immediate w adds to base register reg, unscaled,
 * into *lo: "add xD, xN, #imm" (64-bit, unshifted) or a load or store
 * with an unsigned offset. False when w is neither, or uses another base.
 */
static bool lo12_user(uint32_t w, unsigned int reg, uint64_t *lo)
{
	unsigned int imm = (w >> 10) & 0xfff, scale;

	if (rn(w) != reg)
		return false;
	if ((w & 0xffc00000) == 0x91000000) {
		*lo = imm;
		return true;
	}
	if ((w & 0x3b000000) != 0x39000000)
		return false;
	scale = w >> 30;
	if ((w & (1u << 26)) && (w & (1u << 23)))
		scale = 4; /* 128-bit q register */
	*lo = (uint64_t)imm << scale;
	return true;
}

/* The page adrp at pc writes. */
static uint64_t adrp_page(uint32_t w, uint64_t pc)
{
	uint64_t imm = ((w >> 5) & 0x7ffff) << 2 | ((w >> 29) & 3);

	/* 21 bits, signed, in pages. */
	imm = (imm ^ (1u << 20)) - (1u << 20);
	return (pc & ~(uint64_t)0xfff) + (imm << 12);
}

int usdt__arm64_label_lo(const struct usdt__code *code, int base_off,
			 int64_t *lo, uint64_t *page, const char **why)
{
	unsigned int reg = (unsigned int)base_off / 8;
	uint64_t v, seen = 0;
	size_t pos, users = 0;
	uint32_t w;

	if (base_off < 0 || base_off % 8 || reg > 30) {
		*why = "its base register is not x0-x30";
		return -ENOENT;
	}
	/* The instruction before the site is at code->len - 4. */
	for (pos = code->len; pos >= 4; pos -= 4) {
		w = rd32le(code->bytes + pos - 4);
		switch (classify(w, reg)) {
		case INSN_ADRP:
			if (!users) {
				*why = USDT__WHY_NO_USER;
				return -ENOENT;
			}
			*lo = (int64_t)seen;
			*page = adrp_page(w, code->start + pos - 4);
			return 0;
		case INSN_OTHER:
			if (!lo12_user(w, reg, &v))
				continue;
			if (v > 0xfff || (users++ && v != seen)) {
				*why = USDT__WHY_USERS_DIFFER;
				return -ENOENT;
			}
			seen = v;
			continue;
		case INSN_WRITES:
			*why = USDT__WHY_OTHER_WRITER;
			return -ENOENT;
		case INSN_BARRIER:
		case INSN_UNKNOWN:
			break;
		}
		break;
	}
	*why = USDT__WHY_NO_PAGE_INSN;
	return -ENOENT;
}
