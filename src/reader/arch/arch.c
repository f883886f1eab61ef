// SPDX-License-Identifier: BSD-2-Clause
/*
 * The table of architecture parsers. Every parser is built on every host:
 * which one reads a file is decided by the file's e_machine, never by the
 * host we were compiled for.
 */
#include <elf.h>

#include "reader/arch_ops.h"

static const struct usdt__arch_ops *const arches[] = {
	&usdt__arch_x86_64,
	&usdt__arch_arm64,
	&usdt__arch_s390x,
	&usdt__arch_riscv64,
};

const struct usdt__arch_ops *usdt__arch_find(int e_machine)
{
	size_t i;

	for (i = 0; i < USDT__ARRAY_SIZE(arches); i++)
		if (arches[i]->e_machine == e_machine)
			return arches[i];
	return NULL;
}

const struct usdt__arch_ops *usdt__arch_host(void)
{
#if defined(__x86_64__)
	return usdt__arch_find(EM_X86_64);
#elif defined(__aarch64__)
	return usdt__arch_find(EM_AARCH64);
#elif defined(__s390x__)
	return usdt__arch_find(EM_S390);
#elif defined(__riscv) && __riscv_xlen == 64
	return usdt__arch_find(EM_RISCV);
#else
	return NULL;
#endif
}

const char *usdt_arg_kind_str(enum usdt_arg_kind kind)
{
	static const char *const names[] = {
		[USDT_ARG_CONST] = "const",
		[USDT_ARG_REG] = "reg",
		[USDT_ARG_DEREF] = "deref",
		[USDT_ARG_INDEX] = "index",
		[USDT_ARG_PCREL] = "pcrel",
		[USDT_ARG_ABS] = "abs",
		[USDT_ARG_PCADDR] = "pcaddr",
		[USDT_ARG_UNSUPPORTED] = "unsupported",
	};

	if ((unsigned int)kind >= USDT__ARRAY_SIZE(names))
		return "unknown";
	return names[kind];
}
