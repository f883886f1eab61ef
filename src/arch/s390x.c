// SPDX-License-Identifier: BSD-2-Clause
/* s390x operand parser: a stub until the parser lands. */
#include <elf.h>
#include <stdio.h>

#include "internal.h"

static int parse_operand(const char *op, size_t len, struct usdt__arg *arg)
{
	snprintf(arg->reason, sizeof(arg->reason), "s390x parser not built yet");
	return -ENOTSUP;
}

static int reg_off(const char *name, size_t len, int *width)
{
	return -ENOENT;
}

const struct usdt__arch_ops usdt__arch_s390x = {
	.e_machine = EM_S390,
	.name = "s390x",
	.parse_operand = parse_operand,
	.reg_off = reg_off,
};
