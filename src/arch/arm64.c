// SPDX-License-Identifier: BSD-2-Clause
/* arm64 operand parser: a stub until the parser lands. */
#include <elf.h>
#include <stdio.h>

#include "internal.h"

static int parse_operand(const char *op, size_t len, struct usdt__arg *arg)
{
	snprintf(arg->reason, sizeof(arg->reason), "arm64 parser not built yet");
	return -ENOTSUP;
}

static int reg_off(const char *name, size_t len, int *width)
{
	return -ENOENT;
}

const struct usdt__arch_ops usdt__arch_arm64 = {
	.e_machine = EM_AARCH64,
	.name = "aarch64",
	.parse_operand = parse_operand,
	.reg_off = reg_off,
};
