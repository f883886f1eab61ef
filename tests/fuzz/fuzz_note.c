// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the note reader: the input is an ELF file, read
 * from memory through usdt__file_open_mem() (libelf's elf_memory()), and
 * every getter of every probe and argument is called, with every string
 * walked to its end, so that an unterminated or dangling string shows up
 * under ASan.
 *
 * Seeds (tests/fuzz/corpus/fuzz_note/): small ELF files of the four
 * architectures, made by tests/fuzz/note_seeds.sh.
 */
#include <stdio.h>

#include "internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	usdt_set_print(NULL);
	return 0;
}

static volatile size_t sink;

static void use_str(const char *s)
{
	if (s)
		sink += strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct usdt_file *f;
	size_t i;
	int j;

	f = usdt__file_open_mem(data, size, "fuzz");
	if (!f)
		return 0;
	use_str(usdt_file__path(f));
	use_str(usdt_file__arch_name(f));
	sink += (size_t)usdt_file__machine(f) + usdt_file__is_dyn(f);
	for (i = 0; i < usdt_file__probe_cnt(f); i++) {
		const struct usdt_probe *p = usdt_file__probe(f, i);

		use_str(usdt_probe__provider(p));
		use_str(usdt_probe__name(p));
		use_str(usdt_probe__args_str(p));
		use_str(usdt_probe__error(p));
		sink += usdt_probe__address(p) + usdt_probe__file_offset(p) +
			usdt_probe__semaphore(p) +
			usdt_probe__semaphore_offset(p) +
			(size_t)usdt_probe__status(p);
		/* The invariant the attach engine relies on. */
		if (usdt_probe__status(p) &&
		    (p->arg_cnt || !usdt_probe__error(p)))
			__builtin_trap();
		for (j = 0; j < usdt_probe__arg_cnt(p); j++) {
			struct usdt_arg_info info = { .sz = sizeof(info) };

			if (usdt_probe__arg(p, j, &info))
				__builtin_trap();
			use_str(info.str);
			use_str(info.reg);
			use_str(info.index);
			use_str(info.reason);
			use_str(usdt_arg_kind_str(info.kind));
			if ((info.kind == USDT_ARG_UNSUPPORTED) !=
			    (p->args[j].spec.kind == USDT_SPEC_UNSUPPORTED))
				__builtin_trap();
		}
	}
	if (usdt_file__probe(f, i))
		__builtin_trap();
	usdt_file__close(f);
	return 0;
}
