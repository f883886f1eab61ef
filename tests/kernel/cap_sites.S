/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Many USDT call sites with distinct specs, for the capacity tests:
 * cap:big has 65536 sites whose only argument is the constant 0 to 65535,
 * cap:more 64 sites with 100000 to 100063; cap_fire_big() and
 * cap_fire_more() run through them. Written as <sys/sdt.h> writes a note,
 * in an assembler loop: 65536 probes in C take gcc minutes to compile.
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
	.altmacro
	.macro cap_site prov, name, n
990:	nop
	.pushsection .note.stapsdt,"","note"
	.balign 4
	.4byte 992f-991f, 994f-993f, 3
991:	.asciz "stapsdt"
992:	.balign 4
993:	.8byte 990b
	.8byte _.stapsdt.base
	.8byte 0
	.asciz "\prov"
	.asciz "\name"
	.ascii "-4@"
	.ascii PFX
	.asciz "\n"
994:	.balign 4
	.popsection
	.endm

	.macro cap_fn fn, prov, name, first, cnt
	.text
	.globl \fn
	.type \fn, %function
\fn:
	.set cap_i, \first
	.rept \cnt
	cap_site \prov, \name, %cap_i
	.set cap_i, cap_i + 1
	.endr
	RET
	.size \fn, . - \fn
	.endm

	cap_fn cap_fire_big, cap, big, 0, 65536
	cap_fn cap_fire_more, cap, more, 100000, 64

	.pushsection .stapsdt.base,"aG",%progbits,.stapsdt.base,comdat
	.weak _.stapsdt.base
	.hidden _.stapsdt.base
_.stapsdt.base:
	.space 1
	.size _.stapsdt.base, 1
	.popsection
	.section .note.GNU-stack,"",%progbits
