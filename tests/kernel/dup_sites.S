/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Call sites whose note is emitted twice, as some build setups do:
 * dup_fire() has test:dup at one nop with the same note twice (argument
 * the constant 42), then test:dupargs at another whose second note says
 * 8 where the first says 7. The reader keeps one site each, with the
 * first note's arguments.
 */
#if defined(__x86_64__)
#define PFX "$"
#else
#define PFX ""
#endif
#if defined(__s390x__)
#define RET br %r14
#else
#define RET ret
#endif
	/* One stapsdt note for the site at label \at. */
	.macro dup_note at, prov, name, val
	.pushsection .note.stapsdt,"","note"
	.balign 4
	.4byte 2f-1f, 4f-3f, 3
1:	.asciz "stapsdt"
2:	.balign 4
3:	.8byte \at
	.8byte _.stapsdt.base
	.8byte 0
	.asciz "\prov"
	.asciz "\name"
	.ascii "-4@"
	.ascii PFX
	.asciz "\val"
4:	.balign 4
	.popsection
	.endm

	.text
	.globl dup_fire
	.type dup_fire, %function
dup_fire:
dup_site:
	nop
	dup_note dup_site, test, dup, 42
	dup_note dup_site, test, dup, 42
dupargs_site:
	nop
	dup_note dupargs_site, test, dupargs, 7
	dup_note dupargs_site, test, dupargs, 8
	RET
	.size dup_fire, . - dup_fire

	.pushsection .stapsdt.base,"aG",%progbits,.stapsdt.base,comdat
	.weak _.stapsdt.base
	.hidden _.stapsdt.base
_.stapsdt.base:
	.space 1
	.size _.stapsdt.base, 1
	.popsection
	.section .note.GNU-stack,"",%progbits
