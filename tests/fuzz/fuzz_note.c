// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the note reader: the input is an ELF file, read
 * from memory through usdt__file_open_mem() (a memfd copy), and
 * every getter of every probe and argument is called, with every string
 * walked to its end, so that an unterminated or dangling string shows up
 * under ASan.
 *
 * The same bytes are then read as the manager reads a file (from a
 * descriptor, here a memfd), every site picked, and each picked site must
 * be the public getters' probe of that site.
 *
 * Seeds (tests/fuzz/corpus/fuzz_note/): small ELF files of the four
 * architectures, made by tests/fuzz/note_seeds.sh.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/internal.h"
#include "reader/args.h"
#include "reader/file.h"
#include "reader/noteidx.h"

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

static const struct usdt_file *sort_file;

/* By provider, then name, then note order: usdt__file_pick()'s order. */
static int cmp_site(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct usdt_probe *p = usdt_file__probe(sort_file, i);
	const struct usdt_probe *q = usdt_file__probe(sort_file, j);
	int c = strcmp(p->provider, q->provider);

	if (!c)
		c = strcmp(p->name, q->name);
	return c ? c : (i > j) - (i < j);
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
	struct usdt_file *c;
	struct usdt_probe *picked;
	size_t cnt, i, *v = NULL;
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	if (usdt__file_open_fd(fd, "fuzz", &c))
		return;
	if (usdt__file_pick(c, "*", "*", &picked, &cnt)) {
		usdt_file__close(c);
		return;
	}
	if (f && f->probe_cnt != cnt)
		__builtin_trap();
	if (f && cnt && (v = calloc(cnt, sizeof(*v)))) {
		for (i = 0; i < cnt; i++)
			v[i] = i;
		sort_file = f;
		qsort(v, cnt, sizeof(*v), cmp_site);
	}
	for (i = 0; i < cnt; i++)
		same_site(v ? usdt_file__probe(f, v[i]) : NULL, &picked[i]);
	free(v);
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
