/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The code readers of the arches whose compilers write a label's low bits
 * in an instruction before the site (arm64's adrp + add/ldr, riscv64's
 * lui + addi/ld): src/reader/arch/arm64_code.c and src/reader/arch/riscv64_code.c, for
 * their parsers' label_lo hooks.
 */
#ifndef __LIBUSDT_ARCH_CODE_H
#define __LIBUSDT_ARCH_CODE_H

#include "reader/arch_ops.h"

/* The label_lo hooks (src/reader/arch/arm64_code.c, src/reader/arch/riscv64_code.c). */
int usdt__arm64_label_lo(const struct usdt__code *code, int base_off,
			 int64_t *lo, uint64_t *page, const char **why);
int usdt__riscv64_label_lo(const struct usdt__code *code, int base_off,
			   int64_t *lo, uint64_t *page, const char **why);

/*
 * Why a label's low bits cannot be read, in the same words on every arch
 * (the reason then reads "section anchor .LANCHOR0: <why>").
 */
#define USDT__WHY_NO_PAGE_INSN \
	"its base register is not set by adrp/lui in straight-line code"
#define USDT__WHY_OTHER_WRITER \
	"its base register is last set by neither adrp nor lui"
#define USDT__WHY_NO_USER "no instruction before the site gives its low 12 bits"
#define USDT__WHY_USERS_DIFFER \
	"instructions before the site give different low 12 bits"

#endif /* __LIBUSDT_ARCH_CODE_H */
