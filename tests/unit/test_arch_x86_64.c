// SPDX-License-Identifier: BSD-2-Clause
/*
 * x86_64 operands: argument string -> parsed and resolved argument, on an
 * executable (ET_EXEC) and on a PIE (ET_DYN) call site. The forms are
 * those GCC and clang print for sys/sdt.h at -O0/-O2, with and without
 * -fPIC, plus the symbol forms of the "g" constraint ($sym, $sym+8).
 */
#include <elf.h>

#include "arch_test.h"

/* Call sites: an executable's and a PIE's. */
enum { EX, DY };
#define EX_VADDR 0x401000ULL
#define DY_VADDR 0x1100ULL

static struct usdt__symtab *symtab;
static struct usdt__site_ctx sites[] = {
	[EX] = { .arch = &usdt__arch_x86_64, .vaddr = EX_VADDR },
	[DY] = { .arch = &usdt__arch_x86_64, .vaddr = DY_VADDR, .is_dyn = true },
};

static const struct {
	const char *name;
	uint64_t addr, got_slot;
} syms[] = {
	{ "counter.0", 0x404040, 0 },
	{ "gcounter", 0x404048, 0 },
	{ "sv", 0x404060, 0 },
	{ "buf", 0x404080, 0 },
	{ "_ZN3foo3barE", 0x404100, 0 },
	{ "a$b", 0x404200, 0 },
	{ "dd", 0x404300, 0 },
	{ ".LC0", 0x402004, 0 },
	/* Undefined here, reached through its GOT slot. */
	{ "ext_var", 0, 0x403ff0 },
	/* A definition wins over a GOT slot, in either order. */
	{ "both", 0, 0x403ff8 },
	{ "both", 0x404400, 0 },
	/* Two statics of one name: ambiguous. */
	{ "dup", 0x404500, 0 },
	{ "dup", 0x404508, 0 },
};

static int setup(void **state)
{
	size_t i;

	symtab = usdt__symtab_new();
	if (!symtab)
		return -1;
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (usdt__symtab_add(symtab, syms[i].name, syms[i].addr,
				     syms[i].got_slot))
			return -1;
	sites[EX].symtab = symtab;
	sites[DY].symtab = symtab;
	return 0;
}

static int teardown(void **state)
{
	usdt__symtab_free(symtab);
	return 0;
}

#define NEG(x) ((uint64_t)-(int64_t)(x))

static const struct arg_case reg_cases[] = {
	/* str, site, kind, offset, value, base, index, scale, sym,
	 * spec kind, size, flags, base_off, idx_off, val_off */
	{ "-4@%edi", EX, K_REG, 0, 0, "edi", NULL, 0, NULL, SV, 4, F_S, 112, NONE, 0 },
	{ "8@%rax", EX, K_REG, 0, 0, "rax", NULL, 0, NULL, SV, 8, 0, 80, NONE, 0 },
	{ "8@%rsi", DY, K_REG, 0, 0, "rsi", NULL, 0, NULL, SV, 8, 0, 104, NONE, 0 },
	/* The size comes from the prefix, whatever the register's width. */
	{ "8@%eax", EX, K_REG, 0, 0, "eax", NULL, 0, NULL, SV, 8, 0, 80, NONE, 0 },
	{ "4@%rax", EX, K_REG, 0, 0, "rax", NULL, 0, NULL, SV, 4, 0, 80, NONE, 0 },
	{ "-2@%al", EX, K_REG, 0, 0, "al", NULL, 0, NULL, SV, 2, F_S, 80, NONE, 0 },
	{ "1@%r9b", EX, K_REG, 0, 0, "r9b", NULL, 0, NULL, SV, 1, 0, 64, NONE, 0 },
	{ "-2@%di", EX, K_REG, 0, 0, "di", NULL, 0, NULL, SV, 2, F_S, 112, NONE, 0 },
	{ "-1@%sil", EX, K_REG, 0, 0, "sil", NULL, 0, NULL, SV, 1, F_S, 104, NONE, 0 },
	{ "-4@%r15d", EX, K_REG, 0, 0, "r15d", NULL, 0, NULL, SV, 4, F_S, 0, NONE, 0 },
	/* High bytes: the second byte of rax, rbx, rcx, rdx. */
	{ "-1@%ah", EX, K_REG, 0, 0, "ah", NULL, 0, NULL, SV, 1, F_S, 81, NONE, 0 },
	{ "1@%bh", EX, K_REG, 0, 0, "bh", NULL, 0, NULL, SV, 1, 0, 41, NONE, 0 },
	{ "1@%ch", EX, K_REG, 0, 0, "ch", NULL, 0, NULL, SV, 1, 0, 89, NONE, 0 },
	{ "1@%dh", EX, K_REG, 0, 0, "dh", NULL, 0, NULL, SV, 1, 0, 97, NONE, 0 },
	/* A double moved to a general-purpose register (gcc -O0). */
	{ "8f@%rax", EX, K_REG, 0, 0, "rax", NULL, 0, NULL, SV, 8, F_FL, 80, NONE, 0 },
	{ "4f@%esi", EX, K_REG, 0, 0, "esi", NULL, 0, NULL, SV, 4, F_FL, 104, NONE, 0 },
};

/*
 * No size written (assembler probes, systemtap's sdt_asm test): a register
 * is read at its name's width, unsigned, as systemtap and bcc read it;
 * %ah..%dh are bits 8-15. Other operands stay 8 bytes.
 */
static const struct arg_case sizeless_cases[] = {
	{ "%rax", EX, K_REG, 0, 0, "rax", NULL, 0, NULL, SV, 8, 0, 80, NONE, 0 },
	{ "%eax", EX, K_REG, 0, 0, "eax", NULL, 0, NULL, SV, 4, 0, 80, NONE, 0 },
	{ "%ax", EX, K_REG, 0, 0, "ax", NULL, 0, NULL, SV, 2, 0, 80, NONE, 0 },
	{ "%al", EX, K_REG, 0, 0, "al", NULL, 0, NULL, SV, 1, 0, 80, NONE, 0 },
	{ "%ah", EX, K_REG, 0, 0, "ah", NULL, 0, NULL, SV, 1, 0, 81, NONE, 0 },
	{ "%bh", EX, K_REG, 0, 0, "bh", NULL, 0, NULL, SV, 1, 0, 41, NONE, 0 },
	{ "%ch", DY, K_REG, 0, 0, "ch", NULL, 0, NULL, SV, 1, 0, 89, NONE, 0 },
	{ "%dh", EX, K_REG, 0, 0, "dh", NULL, 0, NULL, SV, 1, 0, 97, NONE, 0 },
	{ "%sil", EX, K_REG, 0, 0, "sil", NULL, 0, NULL, SV, 1, 0, 104, NONE, 0 },
	{ "%r8w", EX, K_REG, 0, 0, "r8w", NULL, 0, NULL, SV, 2, 0, 72, NONE, 0 },
	{ "%r8d", EX, K_REG, 0, 0, "r8d", NULL, 0, NULL, SV, 4, 0, 72, NONE, 0 },
	{ "%r15b", EX, K_REG, 0, 0, "r15b", NULL, 0, NULL, SV, 1, 0, 0, NONE, 0 },
	{ "%bp", EX, K_REG, 0, 0, "bp", NULL, 0, NULL, SV, 2, 0, 32, NONE, 0 },
	{ "-8(%rbp)", EX, K_DEREF, -8, 0, "rbp", NULL, 0, NULL, SM, 8, 0, 32, NONE, NEG(8) },
	{ "$5", EX, K_CONST, 0, 5, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, 5 },
};

static const struct arg_case const_cases[] = {
	{ "-4@$5", EX, K_CONST, 0, 5, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 5 },
	{ "-4@$-536", EX, K_CONST, 0, 0xfffffde8, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 0xfffffde8 },
	/* Constants are truncated to the argument's size. */
	{ "2@$-536", EX, K_CONST, 0, 65000, NULL, NULL, 0, NULL, SV, 2, 0, NONE, NONE, 65000 },
	{ "4@$-1", EX, K_CONST, 0, 4294967295u, NULL, NULL, 0, NULL, SV, 4, 0, NONE, NONE, 4294967295u },
	{ "-4@$-1", EX, K_CONST, 0, 0xffffffff, NULL, NULL, 0, NULL, SV, 4, F_S, NONE, NONE, 0xffffffff },
	{ "1@$256", EX, K_CONST, 0, 0, NULL, NULL, 0, NULL, SV, 1, 0, NONE, NONE, 0 },
	{ "8@$-1", EX, K_CONST, 0, UINT64_MAX, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, UINT64_MAX },
	{ "8@$18446744073709551615", EX, K_CONST, 0, UINT64_MAX, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, UINT64_MAX },
	{ "8@$0xFFFFFFFFFFFFFFFF", DY, K_CONST, 0, UINT64_MAX, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, UINT64_MAX },
	{ "-8@$-9223372036854775808", EX, K_CONST, 0, 0x8000000000000000ULL, NULL, NULL, 0, NULL, SV, 8, F_S, NONE, NONE, 0x8000000000000000ULL },
	{ "8@$0x10", EX, K_CONST, 0, 16, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, 16 },
	{ "8@$0", EX, K_CONST, 0, 0, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, 0 },
	{ "8@$+7", EX, K_CONST, 0, 7, NULL, NULL, 0, NULL, SV, 8, 0, NONE, NONE, 7 },
	/* A 16-byte constant keeps its low 8 bytes. */
	{ "-16@$-2", EX, K_CONST, 0, NEG(2), NULL, NULL, 0, NULL, SV, 8, F_S | F_TR, NONE, NONE, NEG(2) },
};

static const struct arg_case mem_cases[] = {
	{ "8@-16(%rbp)", EX, K_DEREF, -16, 0, "rbp", NULL, 0, NULL, SM, 8, 0, 32, NONE, NEG(16) },
	{ "-4@-36(%rbp)", DY, K_DEREF, -36, 0, "rbp", NULL, 0, NULL, SM, 4, F_S, 32, NONE, NEG(36) },
	{ "8@(%rax)", EX, K_DEREF, 0, 0, "rax", NULL, 0, NULL, SM, 8, 0, 80, NONE, 0 },
	{ "-8@(%rdx)", EX, K_DEREF, 0, 0, "rdx", NULL, 0, NULL, SM, 8, F_S, 96, NONE, 0 },
	{ "8@0x10(%rsp)", EX, K_DEREF, 16, 0, "rsp", NULL, 0, NULL, SM, 8, 0, 152, NONE, 16 },
	{ "-8@-8(%rsp)", EX, K_DEREF, -8, 0, "rsp", NULL, 0, NULL, SM, 8, F_S, 152, NONE, NEG(8) },
	{ "1@40(%rdx)", EX, K_DEREF, 40, 0, "rdx", NULL, 0, NULL, SM, 1, 0, 96, NONE, 40 },
	{ "-1@-101(%r12)", EX, K_DEREF, -101, 0, "r12", NULL, 0, NULL, SM, 1, F_S, 24, NONE, NEG(101) },
	{ "4f@-4(%rbp)", EX, K_DEREF, -4, 0, "rbp", NULL, 0, NULL, SM, 4, F_FL, 32, NONE, NEG(4) },
	/* Base plus index times scale. */
	{ "-4@8(%rdx,%r8,4)", EX, K_INDEX, 8, 0, "rdx", "r8", 4, NULL, SM, 4, F_S | F_SC(2), 96, 72, 8 },
	{ "-1@(%rcx,%r8)", EX, K_INDEX, 0, 0, "rcx", "r8", 1, NULL, SM, 1, F_S, 88, 72, 0 },
	{ "-8@(%rdx,%r8,8)", EX, K_INDEX, 0, 0, "rdx", "r8", 8, NULL, SM, 8, F_S | F_SC(3), 96, 72, 0 },
	{ "2@(%rdx,%rax,2)", EX, K_INDEX, 0, 0, "rdx", "rax", 2, NULL, SM, 2, F_SC(1), 96, 80, 0 },
	{ "8@(%rax,%rbx,1)", EX, K_INDEX, 0, 0, "rax", "rbx", 1, NULL, SM, 8, 0, 80, 40, 0 },
	{ "8@-8(,%rax,8)", EX, K_INDEX, -8, 0, NULL, "rax", 8, NULL, SM, 8, F_SC(3), NONE, 80, NEG(8) },
	{ "8@( %rax , %rbx , 2 )", EX, K_INDEX, 0, 0, "rax", "rbx", 2, NULL, SM, 8, F_SC(1), 80, 40, 0 },
	/* An absolute address. */
	{ "8@1234", EX, K_ABS, 1234, 0, NULL, NULL, 0, NULL, SM, 8, 0, NONE, NONE, 1234 },
	/* 16 bytes: the low 8, at the same address on little-endian. */
	{ "-16@-32(%rbp)", EX, K_DEREF, -32, 0, "rbp", NULL, 0, NULL, SM, 8, F_S | F_TR, 32, NONE, NEG(32) },
	{ "16@(%rdi)", EX, K_DEREF, 0, 0, "rdi", NULL, 0, NULL, SM, 8, F_TR, 112, NONE, 0 },
};

#define EXR(a) ((a) - EX_VADDR)
#define DYR(a) ((a) - DY_VADDR)

static const struct arg_case sym_cases[] = {
	/* sym(%rip): PC-relative, whatever the file type. */
	{ "-4@counter.0(%rip)", EX, K_PCREL, EXR(0x404040), 0, "rip", NULL, 0, "counter.0", SM, 4, F_S | F_IP, NONE, NONE, EXR(0x404040) },
	{ "-4@counter.0(%rip)", DY, K_PCREL, DYR(0x404040), 0, "rip", NULL, 0, "counter.0", SM, 4, F_S | F_IP, NONE, NONE, DYR(0x404040) },
	{ "8@sv+16(%rip)", EX, K_PCREL, EXR(0x404070), 0, "rip", NULL, 0, "sv", SM, 8, F_IP, NONE, NONE, EXR(0x404070) },
	{ "-8@16+sv(%rip)", DY, K_PCREL, DYR(0x404070), 0, "rip", NULL, 0, "sv", SM, 8, F_S | F_IP, NONE, NONE, DYR(0x404070) },
	{ "8@40+sv(%rip)", EX, K_PCREL, EXR(0x404088), 0, "rip", NULL, 0, "sv", SM, 8, F_IP, NONE, NONE, EXR(0x404088) },
	{ "8@sv-8(%rip)", EX, K_PCREL, EXR(0x404058), 0, "rip", NULL, 0, "sv", SM, 8, F_IP, NONE, NONE, EXR(0x404058) },
	{ "8@sv+0x10-4(%rip)", EX, K_PCREL, EXR(0x40406c), 0, "rip", NULL, 0, "sv", SM, 8, F_IP, NONE, NONE, EXR(0x40406c) },
	{ "8@_ZN3foo3barE(%rip)", EX, K_PCREL, EXR(0x404100), 0, "rip", NULL, 0, "_ZN3foo3barE", SM, 8, F_IP, NONE, NONE, EXR(0x404100) },
	{ "8@a$b(%rip)", EX, K_PCREL, EXR(0x404200), 0, "rip", NULL, 0, "a$b", SM, 8, F_IP, NONE, NONE, EXR(0x404200) },
	{ "8f@dd(%rip)", EX, K_PCREL, EXR(0x404300), 0, "rip", NULL, 0, "dd", SM, 8, F_FL | F_IP, NONE, NONE, EXR(0x404300) },
	/* Through the GOT: the slot holds the value (&sym). */
	{ "8@ext_var@GOTPCREL(%rip)", EX, K_PCREL, EXR(0x403ff0), 0, "rip", NULL, 0, "ext_var", SM, 8, F_IP, NONE, NONE, EXR(0x403ff0) },
	{ "8@ext_var@GOTPCREL(%rip)", DY, K_PCREL, DYR(0x403ff0), 0, "rip", NULL, 0, "ext_var", SM, 8, F_IP, NONE, NONE, DYR(0x403ff0) },
	/* ... unless the symbol is defined here: then the value is &sym. */
	{ "8@gcounter@GOTPCREL(%rip)", EX, K_CONST, 0, 0x404048, "rip", NULL, 0, "gcounter", SV, 8, 0, NONE, NONE, 0x404048 },
	{ "8@gcounter@GOTPCREL(%rip)", DY, K_PCADDR, DYR(0x404048), 0, "rip", NULL, 0, "gcounter", SV, 8, F_IP, NONE, NONE, DYR(0x404048) },
	{ "8@both(%rip)", EX, K_PCREL, EXR(0x404400), 0, "rip", NULL, 0, "both", SM, 8, F_IP, NONE, NONE, EXR(0x404400) },
	/* sym(%reg): a link-time address plus a register. */
	{ "-1@buf(%rdi)", EX, K_DEREF, 0x404080, 0, "rdi", NULL, 0, "buf", SM, 1, F_S, 112, NONE, 0x404080 },
	{ "-1@buf(%rdi)", DY, K_DEREF, 0x404080, 0, "rdi", NULL, 0, "buf", SM, 1, F_S | F_IP, 112, NONE, DYR(0x404080) },
	{ "8@sv+4(,%rax,8)", EX, K_INDEX, 0x404064, 0, NULL, "rax", 8, "sv", SM, 8, F_SC(3), NONE, 80, 0x404064 },
	{ "8@sv+4(,%rax,8)", DY, K_INDEX, 0x404064, 0, NULL, "rax", 8, "sv", SM, 8, F_IP | F_SC(3), NONE, 80, DYR(0x404064) },
	{ "1@buf(%rdx,%rcx)", EX, K_INDEX, 0x404080, 0, "rdx", "rcx", 1, "buf", SM, 1, 0, 96, 88, 0x404080 },
	/* $sym: the address itself. */
	{ "8@$gcounter", EX, K_CONST, 0, 0x404048, NULL, NULL, 0, "gcounter", SV, 8, 0, NONE, NONE, 0x404048 },
	{ "8@$gcounter", DY, K_PCADDR, DYR(0x404048), 0, NULL, NULL, 0, "gcounter", SV, 8, F_IP, NONE, NONE, DYR(0x404048) },
	{ "8@$72+sv", EX, K_CONST, 0, 0x4040a8, NULL, NULL, 0, "sv", SV, 8, 0, NONE, NONE, 0x4040a8 },
	{ "8@$sv+8", DY, K_PCADDR, DYR(0x404068), 0, NULL, NULL, 0, "sv", SV, 8, F_IP, NONE, NONE, DYR(0x404068) },
	{ "8@$.LC0", EX, K_CONST, 0, 0x402004, NULL, NULL, 0, ".LC0", SV, 8, 0, NONE, NONE, 0x402004 },
	/* sym alone: memory at an absolute address, IP-relative in a PIE. */
	{ "4@counter.0", EX, K_ABS, 0x404040, 0, NULL, NULL, 0, "counter.0", SM, 4, 0, NONE, NONE, 0x404040 },
	{ "4@counter.0", DY, K_PCREL, DYR(0x404040), 0, NULL, NULL, 0, "counter.0", SM, 4, F_IP, NONE, NONE, DYR(0x404040) },
	{ "8@sv+8", EX, K_ABS, 0x404068, 0, NULL, NULL, 0, "sv", SM, 8, 0, NONE, NONE, 0x404068 },
};

static const struct bad_case bad_cases[] = {
	{ "8f@%xmm0", "floating-point/vector register %xmm0: not readable by BPF" },
	{ "8f@%ymm15", "floating-point/vector register %ymm15: not readable by BPF" },
	{ "8f@%zmm31", "floating-point/vector register %zmm31: not readable by BPF" },
	{ "8f@%st", "floating-point/vector register %st: not readable by BPF" },
	{ "8f@%st(1)", "floating-point/vector register %st: not readable by BPF" },
	{ "8@%mm0", "floating-point/vector register %mm0: not readable by BPF" },
	{ "8@%k1", "mask register" },
	{ "8@%fs:0x28", "segment register %fs" },
	{ "8@%gs:(%rax)", "segment register %gs" },
	{ "8@%ds", "segment register %ds" },
	/* ss is pt_regs' last word, which the BPF side does not copy. */
	{ "8@%ss", "segment register %ss" },
	{ "8@%rax:0", "not a segment register" },
	{ "8@%rip", "only valid as a base" },
	{ "8@%ah", "holds 1 byte" },
	{ "-4@%bh", "holds 1 byte" },
	/* Parsed, but resolution refuses them. */
	{ "8@16(%rip)", "without a symbol" },
	{ "8@(%rip)", "without a symbol" },
	{ "8@missing(%rip)", "'missing' not in the symbol table" },
	{ "8@dup(%rip)", "ambiguous" },
	{ "8@ext_var(%rip)", "through the GOT" },
	/* Malformed. */
	{ "8@", "empty operand" },
	{ "8@%", "expected a register" },
	{ "8@%%rax", "expected a register" },
	{ "8@(%rax", "expected ')'" },
	{ "8@-16(%rbp", "expected ')'" },
	{ "8@(%rax %rbx)", "expected ')'" },
	{ "8@%foo", "unknown register %foo" },
	{ "8@%raxx", "unknown register" },
	{ "8@(%foo)", "unknown register" },
	{ "8@(,%rax,3)", "scale" },
	{ "8@(%rax,%rbx,16)", "scale" },
	{ "8@(%rax,%rbx,)", "expected an index scale" },
	{ "8@(%rax,%rbx,0x)", "expected a number" },
	{ "8@(%rax,)", "expected an index register" },
	{ "8@(%rax,%rsp)", "cannot be an index" },
	{ "8@(%rax,%rip)", "cannot be an index" },
	{ "8@(%rax,%ebx)", "32-bit address register" },
	{ "8@(%eax)", "32-bit address register %eax" },
	{ "8@(%ax)", "cannot be a base" },
	{ "8@(%rip,%rax)", "%rip with an index" },
	{ "8@()", "no register" },
	{ "8@0x", "expected a number" },
	{ "8@$", "expected a number or a symbol" },
	{ "8@$-", "expected a number" },
	{ "8@$sv+", "expected a number or a symbol" },
	{ "8@$1x", "garbage after a number" },
	{ "8@$0x1g", "garbage after a number" },
	{ "8@12abc", "garbage after a number" },
	{ "8@$1)", "garbage after an immediate" },
	{ "8@010(%rax)", "leading zero" },
	{ "8@$99999999999999999999", "64 bits" },
	{ "8@$0x10000000000000000", "64 bits" },
	{ "8@$-9223372036854775809", "INT64_MIN" },
	{ "8@sv@PLT(%rip)", "relocation @PLT" },
	{ "8@sv@(%rip)", "relocation @" },
	{ "8@gcounter@GOTPCREL(%rax)", "GOTPCREL" },
	{ "8@gcounter@GOTPCREL+4(%rip)", "GOTPCREL" },
	{ "8@gcounter@GOTPCREL", "GOTPCREL" },
	{ "8@$gcounter@GOTPCREL", "GOTPCREL" },
	{ "8@sv+buf(%rip)", "two symbols" },
	{ "8@-sv(%rip)", "expected a number" },
	{ "8@4-sv(%rip)", "subtracting a symbol" },
	{ "8@%rax)", "garbage after a register" },
	{ "8@%rax,%rbx", "garbage after a register" },
	{ "8@sv(%rip)x", "garbage after a memory operand" },
	{ "8@(%rax)(%rbx)", "garbage after a memory operand" },
	{ "8@*%rax", "expected a number or a symbol" },
	{ "8@[x0", "expected a number or a symbol" },
	{ "8@-@", "expected a number" },
	{ "8@\x01\xff", "expected a number or a symbol" },
	{ "8@%averyveryverylongregistername", "unknown register" },
	{ "8@a_very_long_symbol_name_that_does_not_fit_in_the_reason_buffer_"
	  "of_ninety_six_bytes_at_all_really(%rip)", "not in the symbol" },
	{ "3@%eax", "bad argument size" },
	{ "-@%eax", NULL },
	{ "32@%eax", "bad argument size" },
};

static void test_regs(void **state)
{
	CHECK_ARG_CASES(sites, reg_cases);
}

static void test_sizeless(void **state)
{
	CHECK_ARG_CASES(sites, sizeless_cases);
}

static void test_consts(void **state)
{
	CHECK_ARG_CASES(sites, const_cases);
}

static void test_mem(void **state)
{
	CHECK_ARG_CASES(sites, mem_cases);
}

static void test_syms(void **state)
{
	CHECK_ARG_CASES(sites, sym_cases);
}

static void test_bad(void **state)
{
	CHECK_BAD_CASES(&sites[EX], bad_cases);
	CHECK_BAD_CASES(&sites[DY], bad_cases);
}

/* A size no operand has is refused, and kept as written for the listing
 * (usdt list showed 24@8(%rsp) as 8 bytes) and for bpf_usdt_arg_size(),
 * in the unsupported spec's val_off (it said 8). */
static void test_bad_size_kept(void **state)
{
	static const struct { const char *str; int size; } cases[] = {
		{ "24@8(%rsp)", 24 }, { "-3@%eax", 3 }, { "0@%eax", 0 },
		{ "32@%eax", 32 }, { "999@%eax", 999 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct usdt__arg arg;

		usdt__arg_parse_one(&sites[EX], cases[i].str, 0,
				    strlen(cases[i].str), &arg);
		assert_int_equal(arg.kind, USDT_ARG_UNSUPPORTED);
		assert_int_equal(arg.size, cases[i].size);
		assert_non_null(strstr(arg.reason, "bad argument size"));
		/* The spec the BPF side gets reads at most 8 bytes, and
		 * says the size written. */
		assert_true(arg.spec.size >= 1 && arg.spec.size <= 8);
		assert_int_equal(arg.spec.val_off, cases[i].size);
	}
}

/* 16 bytes: readable ones keep their low 8 and say 16 by a flag; an
 * unsupported one says 16 in val_off, as any unsupported argument. */
static void test_size16(void **state)
{
	struct usdt__arg arg;

	usdt__arg_parse_one(&sites[EX], "-16@8(%rsp)", 0, 11, &arg);
	assert_int_equal(arg.spec.kind, USDT_SPEC_MEM);
	assert_int_equal(arg.spec.size, 8);
	assert_int_equal(arg.spec.flags, F_S | F_TR);
	usdt__arg_parse_one(&sites[EX], "16@%xmm0", 0, 8, &arg);
	assert_int_equal(arg.spec.kind, USDT_SPEC_UNSUPPORTED);
	assert_int_equal(arg.spec.val_off, 16);
	usdt__arg_parse_one(&sites[EX], "4f@%xmm1", 0, 8, &arg);
	assert_int_equal(arg.spec.kind, USDT_SPEC_UNSUPPORTED);
	assert_int_equal(arg.spec.val_off, 4);
}

/* Without a symbol table, every symbol form is refused, with a reason. */
static void test_no_symtab(void **state)
{
	struct usdt__site_ctx site = { .arch = &usdt__arch_x86_64 };
	size_t i;

	for (i = 0; i < sizeof(sym_cases) / sizeof(sym_cases[0]); i++) {
		/* .LC0 and the like: the assembler keeps no symbol. */
		bool local = sym_cases[i].sym && !strncmp(sym_cases[i].sym, ".L", 2);
		struct bad_case c = { sym_cases[i].str,
				      local ? "compiler-local label .LC0: its address is not in the file"
					    : "not in the symbol table" };

		check_bad_case(&site, &c);
	}
}

/*
 * Every name of every general-purpose register, in every width, against
 * the pt_regs offsets of the kernel's x86_64 struct pt_regs (r15 at 0 up
 * to ss at 160), written out here independently of src/reader/arch/x86_64.c.
 */
static void test_all_names(void **state)
{
	static const struct {
		const char *names[4];
		int off;
	} gprs[] = {
		{ { "rax", "eax", "ax", "al" }, 80 },
		{ { "rbx", "ebx", "bx", "bl" }, 40 },
		{ { "rcx", "ecx", "cx", "cl" }, 88 },
		{ { "rdx", "edx", "dx", "dl" }, 96 },
		{ { "rsi", "esi", "si", "sil" }, 104 },
		{ { "rdi", "edi", "di", "dil" }, 112 },
		{ { "rbp", "ebp", "bp", "bpl" }, 32 },
		{ { "rsp", "esp", "sp", "spl" }, 152 },
		{ { "r8", "r8d", "r8w", "r8b" }, 72 },
		{ { "r9", "r9d", "r9w", "r9b" }, 64 },
		{ { "r10", "r10d", "r10w", "r10b" }, 56 },
		{ { "r11", "r11d", "r11w", "r11b" }, 48 },
		{ { "r12", "r12d", "r12w", "r12b" }, 24 },
		{ { "r13", "r13d", "r13w", "r13b" }, 16 },
		{ { "r14", "r14d", "r14w", "r14b" }, 8 },
		{ { "r15", "r15d", "r15w", "r15b" }, 0 },
	};
	static const int widths[4] = { 8, 4, 2, 1 };
	const struct usdt__arch_ops *ops = &usdt__arch_x86_64;
	size_t i, j;

	for (i = 0; i < sizeof(gprs) / sizeof(gprs[0]); i++) {
		for (j = 0; j < 4; j++) {
			const char *n = gprs[i].names[j];
			char str[32], mem[32];
			struct arg_case c = {
				.str = str, .kind = K_REG, .base = n,
				.sk = SV, .ssize = (uint8_t)widths[j],
				.sbase = (uint16_t)gprs[i].off, .sidx = NONE,
			};
			int w = 0;

			assert_int_equal(ops->reg_off(n, strlen(n), &w),
					 gprs[i].off);
			assert_int_equal(w, widths[j]);
			snprintf(str, sizeof(str), "%d@%%%s", widths[j], n);
			check_arg_case(&sites[EX], &c);
			if (j)
				continue;
			/* The 64-bit name as a base, with an offset. */
			snprintf(mem, sizeof(mem), "8@24(%%%s)", n);
			c.str = mem;
			c.kind = K_DEREF;
			c.offset = 24;
			c.sk = SM;
			c.ssize = 8;
			c.val_off = 24;
			check_arg_case(&sites[EX], &c);
		}
	}
}

/*
 * The syntax fields parse_operand() fills, before resolution: sym_pos is
 * relative to the operand, and %rip with a bare number parses (it is
 * resolve() that refuses it).
 */
static void test_raw_fields(void **state)
{
	static const struct {
		const char *op;
		bool mem, pcrel, got, has_sym;
		int sym_pos, sym_len;
		int64_t disp;
		int base_off, idx_off, scale;
	} raw[] = {
		{ "16(%rip)", true, true, false, false, 0, 0, 16, 128, -1, 0 },
		{ "sv+8(%rip)", true, true, false, true, 0, 2, 8, 128, -1, 0 },
		{ "40+counter.0(%rip)", true, true, false, true, 3, 9, 40, 128, -1, 0 },
		{ "ext@GOTPCREL(%rip)", true, true, true, true, 0, 3, 0, 128, -1, 0 },
		{ "$72+sv", false, false, false, true, 4, 2, 72, -1, -1, 0 },
		{ "$-1", false, false, false, false, 0, 0, -1, -1, -1, 0 },
		{ "buf-8(,%rcx,4)", true, false, false, true, 0, 3, -8, -1, 88, 4 },
		{ "%r8w", false, false, false, false, 0, 0, 0, 72, -1, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		struct usdt__arg a;

		memset(&a, 0, sizeof(a));
		a.size = 8;
		a.base_off = -1;
		a.idx_off = -1;
		assert_int_equal(usdt__arch_x86_64.parse_operand(raw[i].op,
				 strlen(raw[i].op), &a), 0);
		assert_int_equal(a.mem, raw[i].mem);
		assert_int_equal(a.pcrel, raw[i].pcrel);
		assert_int_equal(a.got, raw[i].got);
		assert_int_equal(a.has_sym, raw[i].has_sym);
		if (a.has_sym) {
			assert_int_equal(a.sym_pos, raw[i].sym_pos);
			assert_int_equal(a.sym_len, raw[i].sym_len);
		}
		assert_int_equal(a.disp, raw[i].disp);
		assert_int_equal(a.base_off, raw[i].base_off);
		assert_int_equal(a.idx_off, raw[i].idx_off);
		assert_int_equal(a.scale, raw[i].scale);
	}
}

/* An operand longer than a symbol span can describe is refused whole. */
static void test_too_long(void **state)
{
	size_t len = (size_t)UINT16_MAX + 10;
	char *op = malloc(len);
	struct usdt__arg a;

	assert_non_null(op);
	memset(op, 'a', len);
	memset(&a, 0, sizeof(a));
	a.size = 8;
	a.base_off = a.idx_off = -1;
	assert_int_equal(usdt__arch_x86_64.parse_operand(op, len, &a), -EINVAL);
	assert_string_equal(a.reason, "operand too long");
	free(op);
}

static void test_ops(void **state)
{
	const struct usdt__arch_ops *ops = &usdt__arch_x86_64;
	int w = 0;

	assert_ptr_equal(usdt__arch_find(EM_X86_64), ops);
	assert_string_equal(ops->name, "x86_64");
	assert_int_equal(ops->pt_regs_size, 160);
	assert_int_equal(ops->ip_off, 128);
	assert_int_equal(ops->reg_off("rip", 3, &w), 128);
	assert_int_equal(w, 8);
	assert_int_equal(ops->reg_off("ah", 2, &w), 81);
	assert_int_equal(w, 1);
	/* Not NUL-terminated at len. */
	assert_int_equal(ops->reg_off("raxq", 3, NULL), 80);
	assert_int_equal(ops->reg_off("xmm0", 4, NULL), -ENOENT);
	assert_int_equal(ops->reg_off("", 0, NULL), -ENOENT);
	assert_int_equal(ops->reg_off("fs", 2, NULL), -ENOENT);
}

/* A whole argument string as GCC -O2 emits it, through the splitter. */
static void test_split_real(void **state)
{
	static const char *str =
		"-4@counter.0(%rip) -4@8(%rdx,%r8,4) 1@%r9b -8@-8(%rsp) "
		"-4@$-536 8f@%xmm0";
	static const enum usdt_arg_kind kinds[] = {
		K_PCREL, K_INDEX, K_REG, K_DEREF, K_CONST, USDT_ARG_UNSUPPORTED,
	};
	struct usdt__arg *args;
	const char *why;
	int cnt, i;

	assert_int_equal(usdt__args_parse(&sites[DY], str, &args, &cnt, &why), 0);
	assert_int_equal(cnt, 6);
	for (i = 0; i < cnt; i++)
		assert_int_equal(args[i].kind, kinds[i]);
	assert_int_equal(args[0].spec.val_off, DYR(0x404040));
	assert_string_equal(args[5].reason, "floating-point/vector register %xmm0: not readable by BPF");
	free(args);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regs),
		cmocka_unit_test(test_sizeless),
		cmocka_unit_test(test_consts),
		cmocka_unit_test(test_mem),
		cmocka_unit_test(test_syms),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_bad_size_kept),
		cmocka_unit_test(test_size16),
		cmocka_unit_test(test_no_symtab),
		cmocka_unit_test(test_all_names),
		cmocka_unit_test(test_raw_fields),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_split_real),
	};

	return cmocka_run_group_tests_name("arch_x86_64", tests, setup,
					   teardown);
}
