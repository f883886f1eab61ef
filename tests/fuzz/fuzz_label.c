// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the instruction walks that read a compiler-local
 * label's low bits before a call site (src/reader/arch/arm64_code.c,
 * src/reader/arch/riscv64_code.c).
 *
 * Input: one control byte, then the code before the site. The control
 * byte picks
 *   bit 0     the arch (arm64, riscv64),
 *   bits 1-5  the base register (x0-x31),
 *   bit 6     the code starts at the function's first byte.
 * The code is given from a heap buffer of exactly its bytes, so ASan sees
 * any read past its length. A walk either finds low bits in the range its
 * relocation allows, on a 4 KiB page, or refuses with a reason.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "reader/arch_ops.h"

#define CHECK(c)                                                             \
	do {                                                                 \
		if (!(c)) {                                                  \
			fprintf(stderr, "fuzz_label: %s:%d: %s\n", __FILE__, \
				__LINE__, #c);                               \
			abort();                                             \
		}                                                            \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct usdt__arch_ops *arch;
	struct usdt__code code = { .start = 0x400000 };
	const char *why = NULL;
	uint64_t page = 1;
	int64_t lo = 0;
	uint8_t *buf;
	int err;

	if (!size)
		return 0;
	arch = data[0] & 1 ? &usdt__arch_riscv64 : &usdt__arch_arm64;
	code.at_func_start = data[0] & 0x40;
	buf = malloc(size - 1 ? size - 1 : 1);
	CHECK(buf);
	memcpy(buf, data + 1, size - 1);
	code.bytes = buf;
	code.len = size - 1;
	err = arch->label_lo(&code, ((data[0] >> 1) & 31) * 8, &lo, &page,
			     &why);
	if (err) {
		CHECK(err == -ENOENT && why && why[0]);
	} else {
		CHECK(!(page & 0xfff));
		if (arch == &usdt__arch_arm64)
			CHECK(lo >= 0 && lo <= 0xfff);
		else
			CHECK(lo >= -2048 && lo <= 2047);
	}
	free(buf);
	return 0;
}
