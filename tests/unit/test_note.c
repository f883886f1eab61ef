// SPDX-License-Identifier: BSD-2-Clause
/*
 * The note reader on ELF files built here: a well-formed file of each byte
 * order, then the same file damaged in one place at a time. Every damaged
 * file must give a clear error or a per-probe status, and never a crash
 * (run under ASan+UBSan and valgrind).
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "test_util.h"
#include "base/internal.h"
#include "reader/reader.h"
#include "reader/symtab.h"
#include "reader/file.h"
#include "elf_builder.h"
#include "compact_check.h"

/* Write the image to a temporary file and open that. */
static struct usdt_file *open_img(const void *buf, size_t len)
{
	char path[] = "/tmp/usdt-test-note-XXXXXX";
	struct usdt_file *f;
	int fd, saved;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	f = usdt_file__open(path, NULL);
	saved = errno;
	compact_check(path, f, saved);
	unlink(path);
	errno = saved;
	return f;
}

static void default_notes(struct elfb_notes *n, bool be)
{
	memset(n, 0, sizeof(*n));
	n->be = be;
	elfb_probe(n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov", "a",
		   "-4@%edi 8@%rsi");
	elfb_probe(n, ELFB_TEXT_VA + 1, ELFB_BASE_VA, ELFB_PROBES_VA, "prov",
		   "b", "");
	elfb_probe(n, ELFB_TEXT_VA + 2, ELFB_BASE_VA, 0, "other", "c",
		   "1@$5");
}

static void build_default(struct elfb *e, bool be, uint16_t machine)
{
	struct elfb_notes n;

	default_notes(&n, be);
	elfb_build(e, be, machine, ET_DYN, &n);
}

static void check_default_probes(const struct usdt_file *f)
{
	const struct usdt_probe *p;
	struct usdt_arg_info info = { .sz = sizeof(info) };

	assert_int_equal(usdt_file__probe_cnt(f), 3);

	p = usdt_file__probe(f, 0);
	assert_non_null(p);
	assert_string_equal(usdt_probe__provider(p), "prov");
	assert_string_equal(usdt_probe__name(p), "a");
	assert_int_equal(usdt_probe__status(p), 0);
	assert_null(usdt_probe__error(p));
	assert_int_equal(usdt_probe__address(p), ELFB_TEXT_VA);
	assert_int_equal(usdt_probe__file_offset(p), ELFB_TEXT_OFF);
	assert_int_equal(usdt_probe__semaphore(p), 0);
	assert_int_equal(usdt_probe__semaphore_offset(p), 0);
	assert_string_equal(usdt_probe__args_str(p), "-4@%edi 8@%rsi");
	assert_int_equal(usdt_probe__arg_cnt(p), 2);
	assert_int_equal(usdt_probe__arg(p, 0, &info), 0);
	assert_string_equal(info.str, "-4@%edi");
	assert_int_equal(info.size, 4);
	assert_true(info.is_signed);
	assert_int_equal(usdt_probe__arg(p, 1, &info), 0);
	assert_string_equal(info.str, "8@%rsi");
	assert_int_equal(info.size, 8);
	assert_false(info.is_signed);

	p = usdt_file__probe(f, 1);
	assert_string_equal(usdt_probe__name(p), "b");
	assert_int_equal(usdt_probe__status(p), 0);
	assert_int_equal(usdt_probe__address(p), ELFB_TEXT_VA + 1);
	assert_int_equal(usdt_probe__file_offset(p), ELFB_TEXT_OFF + 1);
	assert_int_equal(usdt_probe__semaphore(p), ELFB_PROBES_VA);
	assert_int_equal(usdt_probe__semaphore_offset(p), ELFB_PROBES_OFF);
	assert_string_equal(usdt_probe__args_str(p), "");
	assert_int_equal(usdt_probe__arg_cnt(p), 0);

	p = usdt_file__probe(f, 2);
	assert_string_equal(usdt_probe__provider(p), "other");
	assert_string_equal(usdt_probe__name(p), "c");
	assert_int_equal(usdt_probe__arg_cnt(p), 1);
	assert_int_equal(usdt_probe__arg(p, 0, &info), 0);
	assert_string_equal(info.str, "1@$5");

	errno = 0;
	assert_null(usdt_file__probe(f, 3));
	assert_int_equal(errno, ERANGE);
}

static void test_valid_le(void **state)
{
	struct elfb e;
	struct usdt_file *f;

	build_default(&e, false, EM_X86_64);
	f = open_img(e.buf, e.len);
	assert_non_null(f);
	assert_int_equal(usdt_file__machine(f), EM_X86_64);
	assert_string_equal(usdt_file__arch_name(f), "x86_64");
	assert_true(usdt_file__is_dyn(f));
	assert_non_null(strstr(usdt_file__path(f), "usdt-test-note-"));
	check_default_probes(f);
	usdt_file__close(f);
}

static void test_valid_be(void **state)
{
	struct elfb e;
	struct usdt_file *f;

	build_default(&e, true, EM_S390);
	f = open_img(e.buf, e.len);
	assert_non_null(f);
	assert_int_equal(usdt_file__machine(f), EM_S390);
	assert_string_equal(usdt_file__arch_name(f), "s390x");
	check_default_probes(f);
	usdt_file__close(f);
}

/* The memory entry point reads the same as the file one. */
static void test_open_mem(void **state)
{
	struct elfb e;
	struct usdt_file *f;

	build_default(&e, true, EM_AARCH64);
	f = usdt__file_open_mem(e.buf, e.len, "mem");
	assert_non_null(f);
	assert_string_equal(usdt_file__path(f), "mem");
	assert_string_equal(usdt_file__arch_name(f), "aarch64");
	check_default_probes(f);
	usdt_file__close(f);
}

/* prelink moved the sections by 0x10000 after the notes were written. */
/* No program headers: the notes read, each site outside any segment (the
 * index's probes too: it copied a NULL table). */
static void test_no_program_headers(void **state)
{
	const struct usdt_probe *p;
	struct usdt_file *f;
	struct elfb e;

	build_default(&e, false, EM_X86_64);
	elfb_put(e.buf + 32, false, 0, 8);	/* e_phoff */
	elfb_put(e.buf + 56, false, 0, 2);	/* e_phnum */
	f = open_img(e.buf, e.len);
	assert_non_null(f);
	assert_true(usdt_file__probe_cnt(f) > 0);
	p = usdt_file__probe(f, 0);
	assert_int_equal(usdt_probe__status(p), -EINVAL);
	assert_string_equal(usdt_probe__error(p),
			    "address not in any loadable segment");
	usdt_file__close(f);
}

static void test_prelink(void **state)
{
	const uint64_t delta = 0x10000;
	struct elfb_notes n = { .be = false };
	const struct usdt_probe *p;
	struct usdt_file *f;
	struct elfb e;

	elfb_probe(&n, ELFB_TEXT_VA - delta, ELFB_BASE_VA - delta,
		   ELFB_PROBES_VA - delta, "p", "moved", "");
	/* A note without a base (old assemblers) is not moved. */
	elfb_probe(&n, ELFB_TEXT_VA + 3, 0, 0, "p", "nobase", "");
	elfb_build(&e, false, EM_X86_64, ET_EXEC, &n);
	f = open_img(e.buf, e.len);
	assert_non_null(f);
	assert_false(usdt_file__is_dyn(f));
	p = usdt_file__probe(f, 0);
	assert_int_equal(usdt_probe__status(p), 0);
	assert_int_equal(usdt_probe__address(p), ELFB_TEXT_VA);
	assert_int_equal(usdt_probe__file_offset(p), ELFB_TEXT_OFF);
	assert_int_equal(usdt_probe__semaphore(p), ELFB_PROBES_VA);
	assert_int_equal(usdt_probe__semaphore_offset(p), ELFB_PROBES_OFF);
	p = usdt_file__probe(f, 1);
	assert_int_equal(usdt_probe__address(p), ELFB_TEXT_VA + 3);
	usdt_file__close(f);
}

#define expect_open_err(buf, len, err) \
	expect_open_err_at(__LINE__, buf, len, err)

static void expect_open_err_at(int line, const void *buf, size_t len, int err)
{
	struct usdt_file *f;

	f = open_img(buf, len);
	if (f)
		fail_msg("line %d: opened; expected errno %d", line, err);
	assert_int_equal(errno, err);
	f = usdt__file_open_mem(buf, len, "mem");
	if (f)
		fail_msg("opened from memory; expected errno %d", err);
	assert_int_equal(errno, err);
}

static void test_open_errors(void **state)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";
	struct elfb e;

	errno = 0;
	assert_null(usdt_file__open("/nonexistent/usdt-test", NULL));
	assert_int_equal(errno, ENOENT);
	assert_null(usdt_file__open("/", NULL));
	assert_int_equal(errno, ENOEXEC);
	assert_null(usdt_file__open(NULL, NULL));
	assert_int_equal(errno, EINVAL);

	expect_open_err("", 0, ENOEXEC);
	expect_open_err(text, sizeof(text), ENOEXEC);

	/* ELFCLASS32. */
	build_default(&e, false, EM_X86_64);
	e.buf[EI_CLASS] = ELFCLASS32;
	expect_open_err(e.buf, e.len, ENOEXEC);

	/* Unknown byte order. */
	build_default(&e, false, EM_X86_64);
	e.buf[EI_DATA] = 7;
	expect_open_err(e.buf, e.len, ENOEXEC);

	/* A relocatable object. */
	build_default(&e, false, EM_X86_64);
	elfb_put(e.buf + 16, false, ET_REL, 2);
	expect_open_err(e.buf, e.len, ENOEXEC);

	/* Section headers past the end of the file. */
	build_default(&e, false, EM_X86_64);
	elfb_put(e.buf + 40, false, e.len + 4096, 8);
	expect_open_err(e.buf, e.len, ENOEXEC);

	/* Section headers partly past the end of the file. */
	build_default(&e, true, EM_S390);
	expect_open_err(e.buf, e.len - 10, ENOEXEC);

	/* An absurd section count. */
	build_default(&e, false, EM_X86_64);
	elfb_put(e.buf + 60, false, 0xfff0, 2);
	expect_open_err(e.buf, e.len, ENOEXEC);

	/* Program headers past the end of the file. */
	build_default(&e, false, EM_X86_64);
	elfb_put(e.buf + 32, false, 0x7ffffff0, 8);
	expect_open_err(e.buf, e.len, ENOEXEC);

	/* Wrong header entry sizes. */
	build_default(&e, false, EM_X86_64);
	elfb_put(e.buf + 58, false, 40, 2);
	expect_open_err(e.buf, e.len, ENOEXEC);

	/* The note section's data lies past the end of the file. */
	build_default(&e, false, EM_X86_64);
	elfb_put(elfb_shdr(&e, ELFB_SEC_NOTE, 24), false, 0x100000, 8);
	expect_open_err(e.buf, e.len, ENOEXEC);
}

/* Rejected opts. */
static void test_open_opts(void **state)
{
	struct {
		struct usdt_file_opts o;
		long extra;
	} big = { .o = { .sz = sizeof(big) }, .extra = 1 };
	struct usdt_file_opts small = { .sz = 2 };

	assert_null(usdt_file__open("/bin/true", &big.o));
	assert_int_equal(errno, EINVAL);
	assert_null(usdt_file__open("/bin/true", &small));
	assert_int_equal(errno, EINVAL);
}

/* No section headers at all (sstrip): a file without notes. */
static void test_no_section_headers(void **state)
{
	struct usdt_file *f;
	struct elfb e;

	build_default(&e, false, EM_X86_64);
	elfb_put(e.buf + 40, false, 0, 8);
	elfb_put(e.buf + 60, false, 0, 2);
	elfb_put(e.buf + 62, false, 0, 2);
	f = open_img(e.buf, e.shoff);
	assert_non_null(f);
	assert_int_equal(usdt_file__probe_cnt(f), 0);
	usdt_file__close(f);

	/* A file without a .note.stapsdt. */
	build_default(&e, false, EM_X86_64);
	memcpy(e.buf + e.sec_off[ELFB_SEC_SHSTRTAB] + 29, ".note.other",
	       11);
	f = open_img(e.buf, e.len);
	assert_non_null(f);
	assert_int_equal(usdt_file__probe_cnt(f), 0);
	usdt_file__close(f);
}

struct bad_note_case {
	const char *what;
	int status;		/* of the bad probe, at index 1 */
	const char *error;	/* a substring of its error */
	bool walk_stops;	/* probe 2 (good) is not reached */
};

/* Build "good, BAD, good" where BAD is case i. */
static void build_bad_note(struct elfb_notes *n, bool be, int i)
{
	unsigned char d[256] = { 0 }, payload[512];
	size_t len;

	memset(n, 0, sizeof(*n));
	n->be = be;
	elfb_probe(n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "p", "first", "");

	memset(payload, 0, sizeof(payload));
	memcpy(payload, "stapsdt", 8);
	switch (i) {
	case 0: /* descriptor too small for three addresses */
		elfb_note(n, "stapsdt", 3, d, 16);
		break;
	case 1: /* provider without its NUL */
		len = elfb_desc(d, be, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov",
				"", "");
		elfb_note(n, "stapsdt", 3, d, 24 + 4);
		break;
	case 2: /* name without its NUL */
		len = elfb_desc(d, be, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov",
				"name", "");
		elfb_note(n, "stapsdt", 3, d, 24 + 5 + 4);
		break;
	case 3: /* args without its NUL */
		len = elfb_desc(d, be, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov",
				"name", "8@%rax");
		elfb_note(n, "stapsdt", 3, d, len - 1);
		break;
	case 4: /* empty name */
		len = elfb_desc(d, be, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov",
				"", "");
		elfb_note(n, "stapsdt", 3, d, len);
		break;
	case 5: /* address outside every PT_LOAD */
		len = elfb_desc(d, be, 0x900000, ELFB_BASE_VA, 0, "prov",
				"far", "");
		elfb_note(n, "stapsdt", 3, d, len);
		break;
	case 6: /* address in .bss: memory, but not in the file */
		len = elfb_desc(d, be, ELFB_PROBES_VA + 0x100, ELFB_BASE_VA, 0,
				"prov", "bss", "");
		elfb_note(n, "stapsdt", 3, d, len);
		break;
	case 7: /* semaphore outside every PT_LOAD */
		len = elfb_desc(d, be, ELFB_TEXT_VA, ELFB_BASE_VA, 0x10,
				"prov", "sema", "");
		elfb_note(n, "stapsdt", 3, d, len);
		break;
	case 8: /* 13 arguments */
		len = elfb_desc(d, be, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov",
				"many", "1@$1 1@$2 1@$3 1@$4 1@$5 1@$6 1@$7 "
				"1@$8 1@$9 1@$10 1@$11 1@$12 1@$13");
		elfb_note(n, "stapsdt", 3, d, len);
		break;
	case 9: /* namesz runs past the section */
		elfb_note_raw(n, 0xfffffff0, 40, 3, payload, 48);
		break;
	case 10: /* descsz runs past the section */
		elfb_note_raw(n, 8, 0x7ffffff0, 3, payload, 48);
		break;
	case 11: /* namesz whose alignment wraps a 32-bit value */
		elfb_note_raw(n, 0xffffffff, 0, 3, payload, 48);
		break;
	case 12: /* descsz just one byte too big for the section */
		len = elfb_desc(d, be, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov",
				"name", "");
		/* The note "last" follows: 12 + 8 + 32 bytes. */
		elfb_note_raw(n, 8, (uint32_t)(elfb_align(len, 4) + 52 + 1),
			      3, payload, 8);
		memcpy(n->buf + n->len, d, len);
		n->len += elfb_align(len, 4);
		break;
	}
	elfb_probe(n, ELFB_TEXT_VA + 2, ELFB_BASE_VA, 0, "p", "last", "");
}

static const struct bad_note_case bad_notes[] = {
	{ "descsz < 24", -EINVAL, "3 addresses", false },
	{ "provider no NUL", -EINVAL, "provider", false },
	{ "name no NUL", -EINVAL, "name", false },
	{ "args no NUL", -EINVAL, "argument string", false },
	{ "empty name", -EINVAL, "empty", false },
	{ "pc far", -EINVAL, "address not in any loadable segment", false },
	{ "pc in bss", -EINVAL, "address not in any loadable segment", false },
	{ "sema far", -EINVAL, "semaphore not in any writable loadable segment", false },
	{ "13 args", -E2BIG, "12", false },
	{ "namesz lies", -EINVAL, "past the end", true },
	{ "descsz lies", -EINVAL, "past the end", true },
	{ "namesz wraps", -EINVAL, "past the end", true },
	{ "descsz +1", -EINVAL, "past the end", true },
};

static void test_bad_notes(void **state)
{
	int be, i;

	for (be = 0; be < 2; be++) {
		for (i = 0; i < (int)USDT__ARRAY_SIZE(bad_notes); i++) {
			const struct bad_note_case *c = &bad_notes[i];
			const struct usdt_probe *p;
			struct elfb_notes n;
			struct usdt_file *f;
			struct elfb e;

			build_bad_note(&n, be, i);
			elfb_build(&e, be, be ? EM_S390 : EM_X86_64, ET_DYN,
				   &n);
			f = open_img(e.buf, e.len);
			if (!f)
				fail_msg("%s (be=%d): open failed: %d", c->what,
					 be, errno);
			assert_int_equal(usdt_file__probe_cnt(f),
					 c->walk_stops ? 2 : 3);
			p = usdt_file__probe(f, 0);
			assert_string_equal(usdt_probe__name(p), "first");
			assert_int_equal(usdt_probe__status(p), 0);
			p = usdt_file__probe(f, 1);
			if (usdt_probe__status(p) != c->status ||
			    !usdt_probe__error(p) ||
			    !strstr(usdt_probe__error(p), c->error))
				fail_msg("%s (be=%d): status %d error '%s'",
					 c->what, be, usdt_probe__status(p),
					 usdt_probe__error(p));
			assert_int_equal(usdt_probe__arg_cnt(p), 0);
			assert_non_null(usdt_probe__provider(p));
			assert_non_null(usdt_probe__name(p));
			assert_non_null(usdt_probe__args_str(p));
			if (!c->walk_stops) {
				p = usdt_file__probe(f, 2);
				assert_string_equal(usdt_probe__name(p), "last");
				assert_int_equal(usdt_probe__status(p), 0);
			}
			usdt_file__close(f);
		}
	}
}

/* Notes of other owners and types are skipped; a trailing fragment of
 * zeros is padding, anything else a truncated header. */
static void test_other_notes(void **state)
{
	static const unsigned char desc[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const struct usdt_probe *p;
	struct elfb_notes n = { .be = false };
	struct usdt_file *f;
	struct elfb e;

	elfb_note(&n, "GNU", 3, desc, sizeof(desc));
	elfb_note(&n, "stapsdt", 1, desc, sizeof(desc));
	elfb_note(&n, "stapsdtx", 3, desc, sizeof(desc));
	elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "p", "only", "");
	n.len += 8;	/* zero padding */
	elfb_build(&e, false, EM_X86_64, ET_DYN, &n);
	f = open_img(e.buf, e.len);
	assert_non_null(f);
	assert_int_equal(usdt_file__probe_cnt(f), 1);
	assert_string_equal(usdt_probe__name(usdt_file__probe(f, 0)), "only");
	usdt_file__close(f);

	n.buf[n.len - 3] = 1;	/* not padding any more */
	elfb_build(&e, false, EM_X86_64, ET_DYN, &n);
	f = open_img(e.buf, e.len);
	assert_non_null(f);
	assert_int_equal(usdt_file__probe_cnt(f), 2);
	p = usdt_file__probe(f, 1);
	assert_int_equal(usdt_probe__status(p), -EINVAL);
	assert_string_equal(usdt_probe__error(p), "truncated note header");
	usdt_file__close(f);

	/* The last note without its padding is fine. */
	memset(&n, 0, sizeof(n));
	elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "p", "odd", "");
	n.len -= 1;	/* "p\0odd\0\0" + 1 byte of padding: drop it */
	elfb_build(&e, false, EM_X86_64, ET_DYN, &n);
	elfb_put(elfb_shdr(&e, ELFB_SEC_NOTE, 32), false, n.len, 8);
	f = open_img(e.buf, e.len);
	assert_non_null(f);
	assert_int_equal(usdt_file__probe_cnt(f), 1);
	p = usdt_file__probe(f, 0);
	assert_int_equal(usdt_probe__status(p), 0);
	assert_string_equal(usdt_probe__args_str(p), "");
	usdt_file__close(f);
}

/* An architecture without a parser: probes are listed, with -EOPNOTSUPP. */
static void test_unknown_arch(void **state)
{
	const struct usdt_probe *p;
	struct usdt_file *f;
	struct elfb e;

	build_default(&e, true, EM_PPC64);
	f = open_img(e.buf, e.len);
	assert_non_null(f);
	assert_null(usdt_file__arch_name(f));
	assert_int_equal(usdt_file__machine(f), EM_PPC64);
	assert_int_equal(usdt_file__probe_cnt(f), 3);
	p = usdt_file__probe(f, 0);
	assert_string_equal(usdt_probe__name(p), "a");
	assert_int_equal(usdt_probe__address(p), ELFB_TEXT_VA);
	assert_int_equal(usdt_probe__status(p), -EOPNOTSUPP);
	assert_non_null(usdt_probe__error(p));
	assert_int_equal(usdt_probe__arg_cnt(p), 0);
	usdt_file__close(f);
}

/* Smaller than the 0.1 struct (the layout of a pre-0.1 snapshot, ending
 * at str, or one byte short): refused, nothing written. */
static void arg_info_too_small(const struct usdt_probe *p)
{
	static const size_t short_sz[] = {
		offsetof(struct usdt_arg_info, read_reg),
		offsetof(struct usdt_arg_info, index_ext) +
			sizeof(((struct usdt_arg_info *)0)->index_ext) - 1,
		offsetof(struct usdt_arg_info, str),
	};
	struct {
		struct usdt_arg_info info;
		unsigned char guard[32];
	} old;
	size_t k, j;

	for (j = 0; j < sizeof(short_sz) / sizeof(short_sz[0]); j++) {
		memset(&old, 0xa5, sizeof(old));
		old.info.sz = short_sz[j];
		errno = 0;
		assert_int_equal(usdt_probe__arg(p, 0, &old.info), -EINVAL);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(old.info.sz, short_sz[j]);
		for (k = sizeof(old.info.sz); k < sizeof(old); k++)
			assert_int_equal(((unsigned char *)&old)[k], 0xa5);
	}
}

static void test_arg_info(void **state)
{
	struct usdt_arg_info info;
	const struct usdt_probe *p;
	struct usdt_file *f;
	struct elfb e;
	struct {
		struct usdt_arg_info info;
		long extra;
	} big;

	build_default(&e, false, EM_X86_64);
	f = usdt__file_open_mem(e.buf, e.len, "mem");
	assert_non_null(f);
	p = usdt_file__probe(f, 0);

	memset(&info, 0xa5, sizeof(info));
	info.sz = sizeof(info);
	assert_int_equal(usdt_probe__arg(p, 1, &info), 0);
	assert_int_equal(info.sz, sizeof(info));
	assert_string_equal(info.str, "8@%rsi");
	assert_int_equal(info.size, 8);
	if (info.kind == USDT_ARG_UNSUPPORTED) {
		assert_non_null(info.reason);
	} else {
		assert_null(info.reason);
		assert_int_equal(info.kind, USDT_ARG_REG);
		assert_string_equal(info.reg, "rsi");
	}
	assert_null(info.index);
	assert_int_equal(info.scale, 0);

	assert_string_equal(info.read_reg, info.reg);
	assert_null(info.index_ext);

	arg_info_too_small(p);
	/* Bigger, with a zero tail: fine. */
	memset(&big, 0, sizeof(big));
	big.info.sz = sizeof(big);
	assert_int_equal(usdt_probe__arg(p, 0, &big.info), 0);
	assert_string_equal(big.info.str, "-4@%edi");
	/* Bigger, with a non-zero tail. */
	big.extra = 1;
	assert_int_equal(usdt_probe__arg(p, 0, &big.info), -EINVAL);

	info.sz = sizeof(info);
	assert_int_equal(usdt_probe__arg(p, 2, &info), -ERANGE);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(usdt_probe__arg(p, -1, &info), -ERANGE);
	assert_int_equal(usdt_probe__arg(p, 0, NULL), -EINVAL);
	usdt_file__close(f);
	usdt_file__close(NULL);
}

/* Cutting the file anywhere gives an error or a readable file. */
static void test_truncated_everywhere(void **state)
{
	struct usdt_file *f;
	struct elfb e;
	size_t len, i;
	int be;

	for (be = 0; be < 2; be++) {
		build_default(&e, be, be ? EM_S390 : EM_X86_64);
		for (len = 0; len < e.len; len++) {
			f = usdt__file_open_mem(e.buf, len, "mem");
			if (!f) {
				assert_true(errno == ENOEXEC);
				continue;
			}
			for (i = 0; i < usdt_file__probe_cnt(f); i++)
				assert_non_null(usdt_probe__name(
					usdt_file__probe(f, i)));
			usdt_file__close(f);
		}
	}
}

/* Flipping any one byte gives an error or a readable file. */
static void test_flip_every_byte(void **state)
{
	static const unsigned char masks[] = { 0xff, 0x80, 0x01 };
	struct usdt_file *f;
	struct elfb e;
	size_t pos, i, m;
	int be;

	for (be = 0; be < 2; be++) {
		build_default(&e, be, be ? EM_S390 : EM_X86_64);
		for (pos = 0; pos < e.len; pos++) {
			for (m = 0; m < sizeof(masks); m++) {
				e.buf[pos] ^= masks[m];
				f = usdt__file_open_mem(e.buf, e.len, "mem");
				e.buf[pos] ^= masks[m];
				if (!f) {
					assert_true(errno == ENOEXEC ||
						    errno == EFBIG);
					continue;
				}
				for (i = 0; i < usdt_file__probe_cnt(f); i++) {
					const struct usdt_probe *p =
						usdt_file__probe(f, i);

					assert_true(usdt_probe__status(p) ||
						    !usdt_probe__error(p));
					assert_non_null(usdt_probe__args_str(p));
				}
				usdt_file__close(f);
			}
		}
	}
}

/* ---------------------------------------------------------------------- */
/* The symbol table                                                       */

static void test_symtab_basic(void **state)
{
	struct usdt__symtab *st = usdt__symtab_new();
	uint64_t addr = 0, slot = 0;
	const char *text = "counter(%rip)";
	char name[32];
	int i;

	assert_non_null(st);
	assert_int_equal(usdt__symtab_add(st, "counter", 0x1000, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "count", 0x2000, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "ext", 0, 0x3000), 0);
	/* A name at two addresses is ambiguous; at one, not. */
	assert_int_equal(usdt__symtab_add(st, "dup", 0x4000, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "dup", 0x4008, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "same", 0x5000, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "same", 0x5000, 0), 0);
	/* Defined and with a GOT slot: the definition wins, in either order. */
	assert_int_equal(usdt__symtab_add(st, "both", 0, 0x6000), 0);
	assert_int_equal(usdt__symtab_add(st, "both", 0x6100, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "both2", 0x6200, 0), 0);
	assert_int_equal(usdt__symtab_add(st, "both2", 0, 0x6300), 0);

	/* Names are spans, not C strings. */
	assert_int_equal(usdt__sym_lookup(st, text, 7, &addr, &slot), 0);
	assert_int_equal(addr, 0x1000);
	assert_int_equal(usdt__sym_lookup(st, text, 5, &addr, &slot), 0);
	assert_int_equal(addr, 0x2000);
	assert_int_equal(usdt__sym_lookup(st, text, 6, &addr, &slot), -ENOENT);
	assert_int_equal(usdt__sym_lookup(st, text, 0, &addr, &slot), -ENOENT);
	assert_int_equal(usdt__sym_lookup(st, "ext", 3, &addr, &slot), 1);
	assert_int_equal(slot, 0x3000);
	assert_int_equal(usdt__sym_lookup(st, "dup", 3, &addr, &slot),
			 -ENOTUNIQ);
	assert_int_equal(usdt__sym_lookup(st, "same", 4, &addr, &slot), 0);
	assert_int_equal(addr, 0x5000);
	assert_int_equal(usdt__sym_lookup(st, "both", 4, &addr, &slot), 0);
	assert_int_equal(addr, 0x6100);
	assert_int_equal(slot, 0x6000);
	assert_int_equal(usdt__sym_lookup(st, "counter", 7, &addr, &slot), 0);
	assert_int_equal(slot, 0);
	assert_int_equal(usdt__sym_lookup(st, "both2", 5, &addr, &slot), 0);
	assert_int_equal(addr, 0x6200);
	assert_int_equal(usdt__sym_lookup(NULL, "x", 1, &addr, &slot), -ENOENT);

	/* Growth keeps every name. */
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "sym_%d", i);
		assert_int_equal(usdt__symtab_add(st, name, 0x10000 + i, 0), 0);
	}
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "sym_%d", i);
		assert_int_equal(usdt__sym_lookup(st, name, strlen(name), &addr,
						  &slot), 0);
		assert_int_equal(addr, 0x10000 + i);
	}
	assert_int_equal(usdt__sym_lookup(st, "counter", 7, &addr, &slot), 0);
	assert_int_equal(addr, 0x1000);
	usdt__symtab_free(st);
	usdt__symtab_free(NULL);
}

/* The symbol table read from the built file. */
static void test_symtab_from_elf(void **state)
{
	struct usdt__symtab *st;
	struct usdt__elf ue;
	uint64_t addr = 0, slot = 0;
	struct elfb e;
	Elf *elf;
	int be;

	elf_version(EV_CURRENT);
	for (be = 0; be < 2; be++) {
		build_default(&e, be, EM_X86_64);
		elf = elf_memory((char *)e.buf, e.len);
		assert_non_null(elf);
		assert_int_equal(usdt__elf_begin(&ue, elf, "mem", e.len), 0);
		assert_int_equal(usdt__elf_symtab(&ue, &st), 0);
		assert_non_null(st);

		assert_int_equal(usdt__sym_lookup(st, "counter", 7, &addr,
						  &slot), 0);
		assert_int_equal(addr, ELFB_PROBES_VA);
		assert_int_equal(usdt__sym_lookup(st, "func", 4, &addr, &slot),
				 0);
		assert_int_equal(addr, ELFB_TEXT_VA);
		/* Two local "dup"s at different addresses. */
		assert_int_equal(usdt__sym_lookup(st, "dup", 3, &addr, &slot),
				 -ENOTUNIQ);
		/* TLS and undefined symbols have no address. */
		assert_int_equal(usdt__sym_lookup(st, "tlsvar", 6, &addr,
						  &slot), -ENOENT);
		assert_int_equal(usdt__sym_lookup(st, "undef", 5, &addr,
						  &slot), -ENOENT);
		/* A versioned name answers to its bare name too. */
		assert_int_equal(usdt__sym_lookup(st, "stdout", 6, &addr,
						  &slot), 0);
		assert_int_equal(addr, ELFB_PROBES_VA + 8);
		assert_int_equal(usdt__sym_lookup(st, "stdout@GLIBC_2.2.5", 18,
						  &addr, &slot), 0);
		/* Reached through the GOT. */
		assert_int_equal(usdt__sym_lookup(st, "ext_var", 7, &addr,
						  &slot), 1);
		assert_int_equal(slot, ELFB_GOT_VA);

		usdt__symtab_free(st);
		usdt__elf_end(&ue);
		elf_end(elf);
	}

	/* GOT slots are read only for x86_64. */
	build_default(&e, false, EM_AARCH64);
	elf = elf_memory((char *)e.buf, e.len);
	assert_int_equal(usdt__elf_begin(&ue, elf, "mem", e.len), 0);
	assert_int_equal(usdt__elf_symtab(&ue, &st), 0);
	assert_int_equal(usdt__sym_lookup(st, "ext_var", 7, &addr, &slot),
			 -ENOENT);
	usdt__symtab_free(st);
	usdt__elf_end(&ue);
	elf_end(elf);
}

/*
 * s390x "8@sym" reads the value of an 8-byte object and is the address of
 * anything else. The symbol table is read lazily, at the first symbol an
 * argument names: the size must come from it then too.
 */
static void test_s390x_obj8_lazy(void **state)
{
	struct elfb_notes n = { .be = true };
	struct usdt_arg_info a = { .sz = sizeof(a) };
	const struct usdt_probe *p;
	struct usdt_file *f;
	struct elfb e;

	elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "p", "n",
		   "8@counter 8@func");
	elfb_build(&e, true, EM_S390, ET_EXEC, &n);
	f = open_img(e.buf, e.len);
	assert_non_null(f);
	p = usdt_file__probe(f, 0);
	assert_int_equal(usdt_probe__status(p), 0);
	assert_int_equal(usdt_probe__arg(p, 0, &a), 0);
	assert_int_equal(a.kind, USDT_ARG_ABS);	/* counter: 8-byte object */
	assert_int_equal(usdt_probe__arg(p, 1, &a), 0);
	assert_int_equal(a.kind, USDT_ARG_CONST);	/* func: its address */
	usdt_file__close(f);
}

/*
 * A semaphore is anywhere in a writable segment's memory that the file is
 * mapped on, .bss included (a plain "unsigned short x_y_semaphore;"): the
 * data segment here is file 0x200..0x210 at ELFB_PROBES_VA, and its page
 * (4 KiB, the smallest) ends 0xe00 bytes past ELFB_PROBES_VA. Its offset
 * is vaddr - p_vaddr + p_offset even past p_filesz, as the kernel's
 * ref_ctr_offset wants it; past p_filesz it is one the loader clears when
 * it maps the file (usdt_probe__semaphore_cleared_at_load()).
 */
static void test_sema_places(void **state)
{
	static const struct {
		const char *what;
		uint64_t sema, memsz;	/* memsz 0: the builder's 0x200 */
		int status;
		const char *error;
		bool cleared;	/* past p_filesz, in its page */
	} cases[] = {
		{ "in .probes", ELFB_PROBES_VA, 0, 0, NULL, false },
		{ "last bytes of filesz", ELFB_PROBES_VA + 0xe, 0, 0, NULL,
		  false },
		{ "first bytes past filesz", ELFB_PROBES_VA + 0x10, 0, 0, NULL,
		  true },
		{ "in .bss", ELFB_PROBES_VA + 0x100, 0, 0, NULL, true },
		{ "last bytes of memsz", ELFB_PROBES_VA + 0x1fe, 0, 0, NULL,
		  true },
		{ "straddles memsz", ELFB_PROBES_VA + 0x1ff, 0, -EINVAL,
		  "not in any writable" },
		{ "past memsz", ELFB_PROBES_VA + 0x200, 0, -EINVAL,
		  "not in any writable" },
		{ "read-only segment", ELFB_TEXT_VA, 0, -EINVAL,
		  "not in any writable" },
		{ "below every segment", 0x10, 0, -EINVAL,
		  "not in any writable" },
		{ "last bytes of the file's page", ELFB_PROBES_VA + 0xdfe,
		  0x3000, 0, NULL, true },
		{ "straddles the file's page", ELFB_PROBES_VA + 0xdff, 0x3000,
		  -EINVAL, "zero-filled pages" },
		{ "anonymous pages", ELFB_PROBES_VA + 0x2000, 0x3000, -EINVAL,
		  "zero-filled pages" },
	};
	int be, i;

	for (be = 0; be < 2; be++) {
		for (i = 0; i < (int)USDT__ARRAY_SIZE(cases); i++) {
			const struct usdt_probe *p;
			struct elfb_notes n;
			struct usdt_file *f;
			struct elfb e;

			memset(&n, 0, sizeof(n));
			n.be = be;
			elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA,
				   cases[i].sema, "p", "s", "");
			elfb_build(&e, be, be ? EM_S390 : EM_X86_64, ET_DYN,
				   &n);
			if (cases[i].memsz)
				elfb_put(e.buf + ELFB_PHOFF + 56 + 40, be,
					 cases[i].memsz, 8);
			f = open_img(e.buf, e.len);
			assert_non_null(f);
			assert_int_equal(usdt_file__probe_cnt(f), 1);
			p = usdt_file__probe(f, 0);
			if (usdt_probe__status(p) != cases[i].status ||
			    (cases[i].error &&
			     !strstr(usdt_probe__error(p), cases[i].error)))
				fail_msg("%s (be=%d): status %d error '%s'",
					 cases[i].what, be,
					 usdt_probe__status(p),
					 usdt_probe__error(p));
			if (!cases[i].status) {
				assert_int_equal(usdt_probe__semaphore(p),
						 cases[i].sema);
				assert_int_equal(usdt_probe__semaphore_offset(p),
						 cases[i].sema - ELFB_PROBES_VA +
						 ELFB_PROBES_OFF);
				if (usdt_probe__semaphore_cleared_at_load(p) !=
				    cases[i].cleared)
					fail_msg("%s (be=%d): cleared at load %d",
						 cases[i].what, be,
						 !cases[i].cleared);
			}
			usdt_file__close(f);
		}
	}
}

/*
 * The kernel takes a semaphore's counter only at an even file offset
 * (uprobe_register(): IS_ALIGNED(ref_ctr_offset, sizeof(short))), and
 * refuses any other with EINVAL: the reader refuses it first, and says
 * why, as usdt list and the attach show it.
 */
static void test_sema_odd(void **state)
{
	static const uint64_t odd[] = { ELFB_PROBES_VA + 1,
					ELFB_PROBES_VA + 0x101 };
	const struct usdt_probe *p;
	struct elfb_notes n;
	struct usdt_file *f;
	struct elfb e;
	size_t i;

	for (i = 0; i < USDT__ARRAY_SIZE(odd); i++) {
		memset(&n, 0, sizeof(n));
		elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, odd[i], "p", "s",
			   "");
		elfb_build(&e, false, EM_X86_64, ET_DYN, &n);
		f = open_img(e.buf, e.len);
		assert_non_null(f);
		p = usdt_file__probe(f, 0);
		assert_int_equal(usdt_probe__status(p), -EINVAL);
		assert_string_equal(usdt_probe__error(p),
				    "semaphore at an odd file offset: the kernel counts only a 2-byte aligned one (ref_ctr_offset)");
		usdt_file__close(f);
	}
}

/* Warnings the library gave, and the last one's text. */
static int warn_cnt;
static char warn_last[512];

static int count_warn(enum usdt_print_level level, const char *fmt,
		      va_list ap)
{
	if (level == USDT_WARN) {
		warn_cnt++;
		vsnprintf(warn_last, sizeof(warn_last), fmt, ap);
	}
	return 0;
}

/* test_repeated_notes' file read as the manager reads it (index only):
 * the same sites and the same two warnings. */
static void compact_repeats(const struct elfb *e)
{
	char path[] = "/tmp/usdt-test-note-XXXXXX";
	struct usdt_file *c = NULL;
	usdt_print_fn_t old;
	int fd, err;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, e->buf, e->len), (ssize_t)e->len);
	close(fd);
	fd = usdt__open_regular(path);
	unlink(path);
	assert_true(fd >= 0);
	warn_cnt = 0;
	old = usdt_set_print(count_warn);
	err = usdt__file_open_fd(fd, path, &c);
	usdt_set_print(old);
	assert_int_equal(err, 0);
	assert_int_equal(warn_cnt, 2);
	assert_non_null(strstr(warn_last, "keeping the first"));
	assert_int_equal(c->probe_cnt, 3);
	usdt_file__close(c);
}

/*
 * Notes that repeat a site (provider:name at one address) are dropped,
 * the first kept: an exact repeat quietly, one with other arguments or
 * another semaphore with a warning. The same name elsewhere, or another
 * name at the same address, are sites of their own. open_img() reads the
 * manager's way too and checks it agrees.
 */
static void test_repeated_notes(void **state)
{
	int be;

	for (be = 0; be < 2; be++) {
		const struct usdt_probe *p;
		struct elfb_notes n;
		struct usdt_file *f;
		usdt_print_fn_t old;
		struct elfb e;

		memset(&n, 0, sizeof(n));
		n.be = be;
		elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov", "dup",
			   "-4@%edi");
		elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov", "dup",
			   "-4@%edi");
		elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov", "other",
			   "");
		elfb_probe(&n, ELFB_TEXT_VA + 1, ELFB_BASE_VA, 0, "prov",
			   "dup", "8@%rsi");
		elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "prov", "dup",
			   "8@%rsi");
		elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, ELFB_PROBES_VA,
			   "prov", "dup", "-4@%edi");
		elfb_build(&e, be, EM_X86_64, ET_DYN, &n);
		warn_cnt = 0;
		old = usdt_set_print(count_warn);
		f = open_img(e.buf, e.len);
		usdt_set_print(old);
		assert_non_null(f);
		assert_int_equal(warn_cnt, 2);
		assert_non_null(strstr(warn_last, "prov:dup at 0x400100"));
		assert_non_null(strstr(warn_last, "keeping the first"));
		assert_int_equal(usdt_file__probe_cnt(f), 3);
		p = usdt_file__probe(f, 0);
		assert_string_equal(usdt_probe__name(p), "dup");
		assert_int_equal(usdt_probe__address(p), ELFB_TEXT_VA);
		assert_string_equal(usdt_probe__args_str(p), "-4@%edi");
		assert_int_equal(usdt_probe__semaphore(p), 0);
		p = usdt_file__probe(f, 1);
		assert_string_equal(usdt_probe__name(p), "other");
		assert_int_equal(usdt_probe__address(p), ELFB_TEXT_VA);
		p = usdt_file__probe(f, 2);
		assert_string_equal(usdt_probe__name(p), "dup");
		assert_int_equal(usdt_probe__address(p), ELFB_TEXT_VA + 1);
		assert_string_equal(usdt_probe__args_str(p), "8@%rsi");
		usdt_file__close(f);
		compact_repeats(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_le),
		cmocka_unit_test(test_sema_places),
		cmocka_unit_test(test_sema_odd),
		cmocka_unit_test(test_repeated_notes),
		cmocka_unit_test(test_valid_be),
		cmocka_unit_test(test_open_mem),
		cmocka_unit_test(test_no_program_headers),
		cmocka_unit_test(test_prelink),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_open_opts),
		cmocka_unit_test(test_no_section_headers),
		cmocka_unit_test(test_bad_notes),
		cmocka_unit_test(test_other_notes),
		cmocka_unit_test(test_unknown_arch),
		cmocka_unit_test(test_arg_info),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_flip_every_byte),
		cmocka_unit_test(test_symtab_basic),
		cmocka_unit_test(test_symtab_from_elf),
		cmocka_unit_test(test_s390x_obj8_lazy),
	};

	/* Damaged files are expected here; keep the output readable. */
	usdt_set_print(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
