/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the operand parsers in src/reader/arch/: bounded scanning of
 * numbers and names, register tables, and failure reasons.
 *
 * Every helper takes the operand as (s, len) and a position *pos inside it.
 * The operand is not NUL-terminated at len, so nothing here looks at
 * s[len] or beyond; a helper that fails leaves *pos where it was.
 */
#ifndef __LIBUSDT_ARCH_H
#define __LIBUSDT_ARCH_H

#include "reader/arch_ops.h"

/* One general-purpose register name and where the kernel saves it. */
struct usdt__reg_desc {
	const char *name;
	uint16_t off;  /* byte offset in the arch's struct pt_regs */
	uint8_t width; /* bytes of the register this name denotes */
};

/*
 * Look name[0..len) up in tab[0..n): its pt_regs offset, and its width in
 * *width (may be NULL); -ENOENT if it is not there.
 */
int usdt__reg_lookup(const struct usdt__reg_desc *tab, size_t n,
		     const char *name, size_t len, int *width);

/*
 * Write a reason into arg->reason (printf-style) and return err, so that a
 * parser can say `return usdt__op_fail(arg, -EINVAL, "...")`.
 */
__attribute__((format(printf, 3, 4))) int
usdt__op_fail(struct usdt__arg *arg, int err, const char *fmt, ...);

/*
 * A floating-point, vector or SIMD register (x86 %xmm0, %st, %mm0; arm64
 * d0, v0, z0; s390x %f0, %v0; riscv64 fa0, v0): not in struct pt_regs, so
 * BPF cannot read it. One reason for all of them on every arch; name is
 * as written (pfx: "%" where the syntax has it). Returns -EOPNOTSUPP.
 */
int usdt__op_fail_fpreg(struct usdt__arg *arg, const char *pfx,
			const char *name, size_t len);

/*
 * Read an integer constant at s[*pos]: an optional '-' or '+', then "0x"
 * and hex digits, or decimal digits. The magnitude may use the whole
 * unsigned 64-bit range; a negative constant may go down to INT64_MIN. The
 * result is the two's-complement bits. A leading zero followed by digits
 * (an assembler would read octal) is refused rather than guessed at. On
 * success *pos moves past the constant and 0 is returned; on failure the
 * reason is in arg->reason and -EINVAL is returned.
 */
int usdt__scan_num(const char *s, size_t len, size_t *pos, uint64_t *val,
		   struct usdt__arg *arg);

/* Is c a character that may start a number ([0-9], '-', '+')? */
static inline bool usdt__is_num_start(char c)
{
	return (c >= '0' && c <= '9') || c == '-' || c == '+';
}

static inline bool usdt__is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool usdt__is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Length of the run of [A-Za-z0-9] at s[pos], bounded by len. */
size_t usdt__span_alnum(const char *s, size_t len, size_t pos);

/* Skip blanks (space, tab) at s[*pos]. */
static inline void usdt__skip_blanks(const char *s, size_t len, size_t *pos)
{
	while (*pos < len && (s[*pos] == ' ' || s[*pos] == '\t'))
		(*pos)++;
}

/*
 * Read a decimal register number of at most two digits, without a leading
 * zero ("0".."99"), from name[0..len) entirely; -1 if it is not one.
 */
int usdt__reg_num(const char *name, size_t len);
/* Is name[0..len) exactly what? */
bool usdt__name_is(const char *name, size_t len, const char *what);
/* Does name[0..len) start with prefix and go on with a register number
 * (usdt__reg_num())? */
bool usdt__name_numbered(const char *name, size_t len, const char *prefix);

/*
 * Copy a register name into one of struct usdt__arg's name slots. Names
 * longer than the slot never reach here: the parsers only copy names they
 * found in their tables.
 */
static inline void usdt__set_name(char dst[8], const char *name, size_t len)
{
	if (len > 7)
		len = 7;
	memcpy(dst, name, len);
	dst[len] = '\0';
}

/*
 * Read an expression of numbers and at most one symbol joined by '+' and
 * '-' ("sym", "sym+8", "40+sym", "sym-8", "-16") at s[*pos]. The numbers
 * add up into arg->disp (wrapping, as an assembler does); the symbol's
 * span, relative to s, goes to sym_pos/sym_len with has_sym set. A symbol
 * starts with a letter, '_' or '.', and goes on with those, digits and '$'.
 * With gotpcrel, "sym@GOTPCREL" sets arg->got (x86); any other "@RELOC" is
 * refused.
 */
int usdt__scan_sym_expr(const char *s, size_t len, size_t *pos,
			struct usdt__arg *arg, bool gotpcrel);

/*
 * A bare symbol, "sym" or "sym+8", was read into arg: decide whether it is
 * the symbol's address, as a value (an "i"-like operand: &g_int, a
 * decayed array), or the value in memory there. gcc prints both the same
 * way: an address with STAP_SDT_ARG_CONSTRAINT=g or "i" on every arch,
 * and memory at a PC-relative symbol where the arch has such operands
 * (s390x lrl/lgrl with "g"; arm64 literal loads, riscv64 without explicit
 * relocations). The text alone does not say which, so the argument's
 * prefix decides:
 *  - a size other than 8, or a float, cannot be an address: memory;
 *  - "-8@sym" is signed, and <sys/sdt.h> writes pointers unsigned: memory;
 *  - "8@sym" is memory when sym names a data object of exactly 8 bytes
 *    (an unsigned 64-bit global, the common case), and an address
 *    otherwise (a function, a smaller or larger object, sym+N). So
 *    &obj, for obj an 8-byte object, reads obj's value: the one case the
 *    rule gets wrong, and one that cannot be told apart in the file.
 * The last is decided in resolution, which has the symbol table.
 */
void usdt__bare_symbol(struct usdt__arg *arg);

/*
 * Does name[0..len) look like a register ("x01", "s12", "fa8": one or two
 * letters, then digits)? Such a name is read as a register, known or not,
 * never as a symbol.
 */
bool usdt__reg_like(const char *name, size_t len);

/* How many characters of an operand a reason quotes at most. */
#define USDT__QUOTE_MAX 24

#endif /* __LIBUSDT_ARCH_H */
