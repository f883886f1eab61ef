// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the note reader: the input is an ELF file, read
 * from memory through usdt__file_open_mem() (libelf's elf_memory()), and
 * every getter of every probe and argument is called, with every string
 * walked to its end, so that an unterminated or dangling string shows up
 * under ASan.
 *
 * The same bytes are then read as the manager reads a file (compact: an
 * index by name, from a descriptor, here a memfd), every site picked, and
 * each picked site must be the full read's.
 *
 * Seeds (tests/fuzz/corpus/fuzz_note/): small ELF files of the four
 * architectures, made by tests/fuzz/note_seeds.sh.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "args.h"
#include "file.h"
#include "note.h"
#include "noteidx.h"

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

struct sites {
	const struct usdt_probe *v[64];
	size_t n;
};

static int collect(const struct usdt_probe *p, void *ctx)
{
	struct sites *s = ctx;

	if (s->n < 64)
		s->v[s->n] = p;
	s->n++;
	return 0;
}

/* Picked site q against the full read's p. */
static void same_site(const struct usdt_probe *p, const struct usdt_probe *q)
{
	int j;

	use_str(q->provider);
	use_str(q->name);
	use_str(q->error);
	if (q->status && (q->arg_cnt || !q->error))
		__builtin_trap();
	if (!p)
		return;
	if (strcmp(p->provider, q->provider) || strcmp(p->name, q->name) ||
	    p->status != q->status)
		__builtin_trap();
	if (p->status)
		return;
	if (p->file_off != q->file_off || p->sema_off != q->sema_off ||
	    p->arg_cnt != q->arg_cnt)
		__builtin_trap();
	for (j = 0; j < p->arg_cnt; j++)
		if (memcmp(usdt__probe_spec(p, j), usdt__probe_spec(q, j),
			   sizeof(struct usdt_arg_spec)))
			__builtin_trap();
}

/* The manager's read of the same bytes, every site picked. */
static void compact_read(const uint8_t *data, size_t size,
			 const struct usdt_file *f)
{
	struct sites s = { .n = 0 };
	struct usdt_file *c;
	struct usdt_probe *picked;
	size_t cnt, i;
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	if (usdt__file_open_fd(fd, "fuzz", true, &c))
		return;
	if (usdt__file_pick(c, "*", "*", &picked, &cnt)) {
		usdt_file__close(c);
		return;
	}
	if (f)
		usdt__file_match(f, "*", "*", collect, &s);
	if (f && s.n != cnt)
		__builtin_trap();
	for (i = 0; i < cnt; i++)
		same_site(f && i < 64 ? s.v[i] : NULL, &picked[i]);
	usdt__probes_free(picked, cnt);
	usdt_file__close(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct usdt_file *f;
	size_t i;
	int j;

	f = usdt__file_open_mem(data, size, "fuzz");
	compact_read(data, size, f);
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
