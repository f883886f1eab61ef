// SPDX-License-Identifier: BSD-2-Clause
/*
 * The reader against files an attacker shapes: truncated while read,
 * sparse and huge, with too many notes, FIFOs and devices where a file
 * is expected; and the library-path resolver. No kernel needed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "reader/elfread.h"
#include "reader/arch_ops.h"
#include "reader/file.h"
#include "reader/noteidx.h"
#include "elf_builder.h"
#include "compact_check.h"

#define NOTE_AT 0x10000		/* where the moved .note.stapsdt starts */

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/usdt-test-file-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void path_in_dir(char *out, size_t sz, const char *name)
{
	snprintf(out, sz, "%s/%s", dir, name);
}

/*
 * Write a small valid ELF file to path whose .note.stapsdt is moved to
 * NOTE_AT and is size bytes long; the note bytes there are notes[0..len)
 * and zeros (a hole) after them.
 */
static void write_moved_notes(const char *path, const void *notes, size_t len,
			      uint64_t size)
{
	struct elfb_notes n = { .be = false };
	struct elfb e;
	int fd;

	elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "p", "n", "");
	elfb_build(&e, false, EM_X86_64, ET_DYN, &n);
	elfb_put(elfb_shdr(&e, ELFB_SEC_NOTE, 24), false, NOTE_AT, 8);
	elfb_put(elfb_shdr(&e, ELFB_SEC_NOTE, 32), false, size, 8);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, e.buf, e.len), (ssize_t)e.len);
	if (len)
		assert_int_equal(pwrite(fd, notes, len, NOTE_AT), (ssize_t)len);
	assert_int_equal(ftruncate(fd, (off_t)(NOTE_AT + size)), 0);
	close(fd);
}

/* cnt stapsdt notes (the first one bad when bad_first), malloc'ed. */
static unsigned char *make_notes(size_t cnt, bool bad_first, size_t *len)
{
	unsigned char desc[64];
	size_t dlen, one, i;
	unsigned char *buf, *p;

	dlen = elfb_desc(desc, false, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "p", "n",
			 "-4@%edi");
	one = 12 + 8 + elfb_align(dlen, 4);
	buf = calloc(cnt, one);
	assert_non_null(buf);
	for (i = 0, p = buf; i < cnt; i++, p += one) {
		/* Each at its own address: a note that repeats a site is
		 * dropped. Past the code, the sites are bad, but counted. */
		elfb_desc(desc, false, ELFB_TEXT_VA + i, ELFB_BASE_VA, 0, "p",
			  "n", "-4@%edi");
		elfb_put(p, false, 8, 4);
		elfb_put(p + 4, false, dlen, 4);
		elfb_put(p + 8, false, 3, 4);
		memcpy(p + 12, "stapsdt", 8);
		memcpy(p + 20, desc, dlen);
		/* A bad note: its strings do not end. */
		if (bad_first && !i)
			memset(p + 20 + 24, 'x', dlen - 24);
	}
	*len = cnt * one;
	return buf;
}

static struct usdt_file *open_quiet(const char *path)
{
	usdt_print_fn_t old = usdt_set_print(NULL);
	struct usdt_file *f = usdt_file__open(path, NULL);
	int err = errno;

	usdt_set_print(old);
	compact_check(path, f, err);
	errno = err;
	return f;
}

/* ---------------------------------------------------------------------- */
/* Truncated while read                                                   */

static const char *truncate_path;

/* At the reader's first message, its owner cuts the file short. */
static int truncate_on_message(enum usdt_print_level level, const char *fmt,
			       va_list ap)
{
	if (truncate_path) {
		assert_int_equal(truncate(truncate_path, NOTE_AT + 64), 0);
		truncate_path = NULL;
	}
	return 0;
}

/*
 * Read through a mapping, the reader died of SIGBUS on the pages past the
 * new end. Run in a child, so that a signal fails the test rather than
 * the runner.
 */
static void test_truncated_while_read(void **state)
{
	char path[128];
	unsigned char *notes;
	size_t len;
	pid_t pid;
	int status;

	path_in_dir(path, sizeof(path), "trunc");
	notes = make_notes(4000, true, &len);
	write_moved_notes(path, notes, len, len);
	free(notes);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct usdt_file *f;

		truncate_path = path;
		usdt_set_print(truncate_on_message);
		f = usdt_file__open(path, NULL);
		/* Either it was read before the cut, or the cut is an error. */
		_exit(f ? (usdt_file__probe_cnt(f) == 4000 ? 0 : 2) :
			  errno == ENOEXEC ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("the reader died of signal %d", WTERMSIG(status));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---------------------------------------------------------------------- */
/* Bounded work                                                           */

/* A 2 GiB hole as .note.stapsdt: refused before anything is read. */
static void test_huge_sparse_note_section(void **state)
{
	char path[128];

	path_in_dir(path, sizeof(path), "sparse");
	write_moved_notes(path, NULL, 0, 2ull << 30);
	errno = 0;
	assert_null(open_quiet(path));
	assert_int_equal(errno, EFBIG);
	assert_int_equal(unlink(path), 0);
}

/* Just under the limit, all zeros: padding, read as no notes. */
static void test_zero_padding_stops_the_walk(void **state)
{
	char path[128];
	struct usdt_file *f;
	unsigned char *notes;
	size_t len;

	path_in_dir(path, sizeof(path), "zeros");
	notes = make_notes(3, false, &len);
	write_moved_notes(path, notes, len, USDT__MAX_SECTION_SIZE);
	free(notes);
	f = open_quiet(path);
	assert_non_null(f);
	assert_int_equal(usdt_file__probe_cnt(f), 3);
	assert_int_equal(usdt_probe__status(usdt_file__probe(f, 2)), 0);
	usdt_file__close(f);
	assert_int_equal(unlink(path), 0);
}

static void test_too_many_notes(void **state)
{
	char path[128];
	struct usdt_file *f;
	unsigned char *notes;
	size_t len;

	path_in_dir(path, sizeof(path), "many");
	notes = make_notes(USDT__MAX_SITES + 1, false, &len);
	assert_true(len <= USDT__MAX_SECTION_SIZE);
	write_moved_notes(path, notes, len, len);
	errno = 0;
	assert_null(open_quiet(path));
	assert_int_equal(errno, E2BIG);
	/* The limit itself is fine. */
	write_moved_notes(path, notes, len - len / (USDT__MAX_SITES + 1),
			  len - len / (USDT__MAX_SITES + 1));
	free(notes);
	f = open_quiet(path);
	assert_non_null(f);
	assert_int_equal(usdt_file__probe_cnt(f), USDT__MAX_SITES);
	usdt_file__close(f);
	assert_int_equal(unlink(path), 0);
}

/*
 * The reader's index keeps only where each name's notes are; an
 * attach reads them again. A note its owner changed since (a name
 * rewritten in place, the file cut short) makes that site bad, and only
 * that one.
 */
static void test_compact_note_changed(void **state)
{
	char path[128];
	struct usdt_file *c = NULL;
	struct usdt_probe *p;
	unsigned char *notes;
	size_t len, one, cnt;
	int fd;

	path_in_dir(path, sizeof(path), "changed");
	notes = make_notes(3, false, &len);
	one = len / 3;
	write_moved_notes(path, notes, len, len);
	free(notes);
	fd = usdt__open_regular(path);
	assert_true(fd >= 0);
	assert_int_equal(usdt__file_open_fd(fd, path, &c), 0);
	assert_int_equal(c->probe_cnt, 3);

	/* The second note's name "n" becomes "m". */
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "m", 1, NOTE_AT + one + 20 + 24 + 2), 1);
	assert_int_equal(usdt__file_pick(c, "p", "n", &p, &cnt), 0);
	assert_int_equal(cnt, 3);
	assert_int_equal(p[0].status, 0);
	assert_int_equal(p[0].arg_cnt, 1);
	assert_int_equal(p[1].status, -EINVAL);
	assert_string_equal(p[1].error,
			    "the note changed since the file was read");
	assert_int_equal(p[2].status, 0);
	usdt__probes_free(p, cnt);

	/* Cut inside the third note: it cannot be read whole. */
	assert_int_equal(ftruncate(fd, (off_t)(NOTE_AT + 2 * one + 30)), 0);
	close(fd);
	assert_int_equal(usdt__file_pick(c, "p", "n", &p, &cnt), 0);
	assert_int_equal(cnt, 3);
	assert_int_equal(p[0].status, 0);
	assert_int_equal(p[2].status, -EINVAL);
	assert_string_equal(p[2].error,
			    "the note changed since the file was read");
	usdt__probes_free(p, cnt);
	usdt_file__close(c);
	assert_int_equal(unlink(path), 0);
}

struct racer {
	const struct usdt_file *f;
	const struct usdt_probe *p;
};

static void *race_probe(void *arg)
{
	struct racer *r = arg;

	r->p = usdt_file__probe(r->f, 1);
	return NULL;
}

/*
 * A file read as the manager reads it has only its index; the first
 * usdt_file__probe() builds every probe, and threads that race to get
 * there get the same ones, which are usdt_file__open()'s.
 */
static void test_probes_built_once(void **state)
{
	usdt_print_fn_t old = usdt_set_print(NULL);
	struct usdt_file *c = NULL, *f;
	unsigned char *notes;
	struct racer r[2];
	char path[128];
	pthread_t t[2];
	size_t len, i;
	int fd;

	path_in_dir(path, sizeof(path), "racers");
	notes = make_notes(300, false, &len);
	write_moved_notes(path, notes, len, len);
	free(notes);
	fd = usdt__open_regular(path);
	assert_true(fd >= 0);
	assert_int_equal(usdt__file_open_fd(fd, path, &c), 0);
	assert_null(c->probes);
	for (i = 0; i < 2; i++) {
		r[i] = (struct racer){ .f = c };
		assert_int_equal(pthread_create(&t[i], NULL, race_probe, &r[i]),
				 0);
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_non_null(r[0].p);
	assert_ptr_equal(r[0].p, r[1].p);
	assert_ptr_equal(usdt_file__probe(c, 1), r[0].p);
	f = usdt_file__open(path, NULL);
	assert_non_null(f);
	assert_int_equal(usdt_file__probe_cnt(c), 300);
	for (i = 0; i < 300; i++) {
		compact_probe_eq(usdt_file__probe(f, i), usdt_file__probe(c, i));
		assert_string_equal(usdt_file__probe(f, i)->args_str,
				    usdt_file__probe(c, i)->args_str);
	}
	usdt_file__close(f);
	usdt_file__close(c);
	usdt_set_print(old);
	assert_int_equal(unlink(path), 0);
}

static int warn_cnt;

static int count_warnings(enum usdt_print_level level, const char *fmt,
			  va_list ap)
{
	warn_cnt += level == USDT_WARN;
	return 0;
}

/*
 * A .symtab of 32 MiB (a hole): arguments that name no symbol never make
 * the reader look at it; one that does finds it over the limit, skipped
 * with a message, and that argument alone is unsupported.
 */
static void test_symtab_lazy_and_capped(void **state)
{
	const char *args[] = { "-4@%edi", "-4@counter(%rip)" };
	struct usdt_arg_info info = { .sz = sizeof(info) };
	usdt_print_fn_t old;
	struct usdt_file *f;
	char path[128];
	int i, fd;

	path_in_dir(path, sizeof(path), "bigsym");
	for (i = 0; i < 2; i++) {
		struct elfb_notes n = { .be = false };
		struct elfb e;

		elfb_probe(&n, ELFB_TEXT_VA, ELFB_BASE_VA, 0, "p", "n", args[i]);
		elfb_build(&e, false, EM_X86_64, ET_DYN, &n);
		elfb_put(elfb_shdr(&e, ELFB_SEC_SYMTAB, 24), false, NOTE_AT, 8);
		elfb_put(elfb_shdr(&e, ELFB_SEC_SYMTAB, 32), false, 32u << 20, 8);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, e.buf, e.len), (ssize_t)e.len);
		assert_int_equal(ftruncate(fd, NOTE_AT + (32 << 20)), 0);
		close(fd);
		warn_cnt = 0;
		old = usdt_set_print(count_warnings);
		f = usdt_file__open(path, NULL);
		usdt_set_print(old);
		assert_non_null(f);
		assert_int_equal(warn_cnt, i);
		assert_int_equal(usdt_probe__arg(usdt_file__probe(f, 0), 0,
						 &info), 0);
		assert_int_equal(info.kind,
				 i ? USDT_ARG_UNSUPPORTED : USDT_ARG_REG);
		usdt_file__close(f);
	}
	assert_int_equal(unlink(path), 0);
}

/* ---------------------------------------------------------------------- */
/* Not regular files                                                      */

static void test_not_regular_refused(void **state)
{
	char fifo[128];
	const char *paths[] = { fifo, "/dev/null", "/dev/zero", "/tmp" };
	size_t i;

	path_in_dir(fifo, sizeof(fifo), "fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(10);	/* a hang fails the test, not the run */
	for (i = 0; i < USDT__ARRAY_SIZE(paths); i++) {
		errno = 0;
		assert_null(open_quiet(paths[i]));
		assert_int_equal(errno, ENOEXEC);
		assert_int_equal(usdt__open_regular(paths[i]), -ENOEXEC);
	}
	alarm(0);
	assert_int_equal(unlink(fifo), 0);
}

/*
 * A FIFO and a directory named like the library come first on
 * LD_LIBRARY_PATH: passed over without blocking, the real one is found.
 */
static void test_resolver_skips_fifo(void **state)
{
	char d1[128], d2[128], d3[128], fifo[160], lib[160], sub[160];
	char out[4096];
	char *old = usdt_test_env_save("LD_LIBRARY_PATH");
	char list[512];
	struct elfb_notes n = { .be = false };
	struct elfb e;
	int fd;

	path_in_dir(d1, sizeof(d1), "d1");
	path_in_dir(d2, sizeof(d2), "d2");
	path_in_dir(d3, sizeof(d3), "d3");
	assert_int_equal(mkdir(d1, 0700), 0);
	assert_int_equal(mkdir(d2, 0700), 0);
	assert_int_equal(mkdir(d3, 0700), 0);
	snprintf(fifo, sizeof(fifo), "%s/libzzz.so", d1);
	snprintf(sub, sizeof(sub), "%s/libzzz.so", d2);
	snprintf(lib, sizeof(lib), "%s/libzzz.so", d3);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(mkdir(sub, 0700), 0);
	n.be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	elfb_build(&e, n.be, usdt__arch_host()->e_machine, ET_DYN, &n);
	fd = open(lib, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, e.buf, e.len), (ssize_t)e.len);
	close(fd);

	snprintf(list, sizeof(list), "%s:%s:%s", d1, d2, d3);
	setenv("LD_LIBRARY_PATH", list, 1);
	alarm(10);
	assert_int_equal(usdt_resolve_path(-1, "libzzz.so", out, sizeof(out)),
			 0);
	assert_string_equal(out, lib);
	assert_int_equal(usdt_resolve_path(-1, "libzzz", out, sizeof(out)),
			 -ENOENT);
	assert_int_equal(errno, ENOENT);
	/* A path is taken as it is, and must be a regular file. */
	assert_int_equal(usdt_resolve_path(-1, fifo, out, sizeof(out)),
			 -ENOEXEC);
	alarm(0);
	usdt_test_env_restore("LD_LIBRARY_PATH", old);
}

/* A host ELF file (with no probes) at path, with mode. */
static void write_host_elf(const char *path, mode_t mode)
{
	struct elfb_notes n = { .be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ };
	struct elfb e;
	int fd;

	elfb_build(&e, n.be, usdt__arch_host()->e_machine, ET_EXEC, &n);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, e.buf, e.len), (ssize_t)e.len);
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

/*
 * A bare name that is no library's is looked for in PATH, as a shell and
 * libbpf would: a script and a file nobody may execute are passed over,
 * an empty entry (the current directory, to a shell) is skipped, and a
 * library's name ("libzzz") is not looked for there.
 */
static void test_resolver_path(void **state)
{
	char d[3][128], p[3][512], cwd[4096], out[4096], list[2048];
	char *old = usdt_test_env_save("PATH");
	int fd, i;

	for (i = 0; i < 3; i++) {
		char name[8];

		snprintf(name, sizeof(name), "p%d", i);
		path_in_dir(d[i], sizeof(d[i]), name);
		assert_int_equal(mkdir(d[i], 0700), 0);
		snprintf(p[i], sizeof(p[i]), "%s/myexe", d[i]);
	}
	fd = open(p[0], O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	write_host_elf(p[1], 0644);
	write_host_elf(p[2], 0755);
	snprintf(list, sizeof(list), "%s:%s::%s", d[0], d[1], d[2]);
	setenv("PATH", list, 1);
	assert_int_equal(usdt_resolve_path(-1, "myexe", out, sizeof(out)), 0);
	assert_string_equal(out, p[2]);

	/* Not from the current directory, for all that it holds one. */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(d[1]), 0);
	assert_int_equal(chmod("myexe", 0755), 0);
	snprintf(list, sizeof(list), "%s:", d[0]);
	setenv("PATH", list, 1);
	assert_int_equal(usdt_resolve_path(-1, "myexe", out, sizeof(out)),
			 -ENOENT);
	assert_int_equal(chdir(cwd), 0);

	/* A library's name is not a program's. */
	snprintf(out, sizeof(out), "%s/libzzz", d[2]);
	write_host_elf(out, 0755);
	setenv("PATH", d[2], 1);
	assert_int_equal(usdt_resolve_path(-1, "libzzz", out, sizeof(out)),
			 -ENOENT);
	usdt_test_env_restore("PATH", old);
}

/* A library of this process, by bare name: found through our maps. */
static void test_resolver_maps_first(void **state)
{
	char out[4096];

	assert_int_equal(usdt_resolve_path(0, "libc.so.6", out, sizeof(out)),
			 0);
	/* The mapping itself where we may read map_files/ (as root), else
	 * its path in our root. */
	assert_true(!strncmp(out, "/proc/", 6));
	assert_true(strstr(out, "/map_files/") || strstr(out, "libc.so.6"));
	assert_int_equal(usdt_resolve_path(-1, "", out, sizeof(out)), -EINVAL);
	assert_int_equal(usdt_resolve_path(-1, "/etc/passwd", out, 4), -ENAMETOOLONG);
}

/*
 * A library by the short form of its soname, with no process: found in
 * the loader's cache ("libc" for "libc.so.6"), as among a process's
 * files, and the same file as by its exact name. (Under qemu-user, in
 * make cross-check, the cache is the build host's, of another arch.)
 */
static void test_resolver_short_name_in_cache(void **state)
{
	char out[4096], exact[4096];

	(void)state;
#ifndef USDT_CROSS_BUILD
	assert_int_equal(usdt_resolve_path(-1, "libc.so.6", exact,
					   sizeof(exact)),
			 0);
	assert_int_equal(usdt_resolve_path(-1, "libc", out, sizeof(out)), 0);
	assert_string_equal(out, exact);
#endif
	/* No entry answers to a name that only starts one. */
	assert_int_equal(usdt_resolve_path(-1, "libzzzzz", out, sizeof(out)),
			 -ENOENT);
	assert_int_equal(usdt_resolve_path(-1, "libc.so.6x", out, sizeof(out)),
			 -ENOENT);
	(void)exact;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncated_while_read),
		cmocka_unit_test(test_huge_sparse_note_section),
		cmocka_unit_test(test_zero_padding_stops_the_walk),
		cmocka_unit_test(test_too_many_notes),
		cmocka_unit_test(test_compact_note_changed),
		cmocka_unit_test(test_probes_built_once),
		cmocka_unit_test(test_symtab_lazy_and_capped),
		cmocka_unit_test(test_not_regular_refused),
		cmocka_unit_test(test_resolver_skips_fifo),
		cmocka_unit_test(test_resolver_path),
		cmocka_unit_test(test_resolver_maps_first),
		cmocka_unit_test(test_resolver_short_name_in_cache),
	};

	return cmocka_run_group_tests_name("file", tests, setup, teardown);
}
