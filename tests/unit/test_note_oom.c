// SPDX-License-Identifier: BSD-2-Clause
/*
 * The reader out of memory: the library's malloc/calloc/realloc calls are
 * wrapped (-Wl,--wrap, see LDFLAGS_test_note_oom in
 * tests/fixtures/fixtures.mk) so that the Nth one fails; N goes up from 0
 * until usdt_file__open() succeeds. Each failure must be ENOMEM and leave
 * nothing behind (run under valgrind or SANITIZE=1 to see leaks).
 * libelf's own allocations are not wrapped: it is a shared library.
 */
#include <limits.h>
#include <libgen.h>

#include "test_util.h"
#include "oom_wrap.h"
#include "base/internal.h"
#include "reader/file.h"
#include "elf_builder.h"

typedef struct usdt_file *(*open_fn)(const void *arg);

/* Fail each allocation in turn; returns how many the open makes. */
static long oom_loop(open_fn open, const void *arg, size_t want_probes)
{
	struct usdt_file *f;
	long n;

	for (n = 0; n < 100000; n++) {
		alloc_cnt = 0;
		fail_at = n;
		errno = 0;
		f = open(arg);
		fail_at = -1;
		if (f) {
			assert_int_equal(usdt_file__probe_cnt(f), want_probes);
			usdt_file__close(f);
			return n;
		}
		if (errno != ENOMEM)
			fail_msg("allocation %ld failed: errno %d, not ENOMEM",
				 n, errno);
	}
	fail_msg("open never succeeded");
	return -1;
}

static struct usdt_file *open_built(const void *arg)
{
	const struct elfb *e = arg;

	return usdt__file_open_mem(e->buf, e->len, "mem");
}

static struct usdt_file *open_path(const void *arg)
{
	return usdt_file__open(arg, NULL);
}

static void test_oom_built(void **state)
{
	static struct elfb e;
	struct elfb_notes n = { .be = false };
	int i;

	/* Enough probes and arguments to grow every array at least once. */
	for (i = 0; i < 40; i++)
		elfb_probe(&n, ELFB_TEXT_VA + i, ELFB_BASE_VA,
			   i % 3 ? 0 : ELFB_PROBES_VA, "prov", "p",
			   "-4@%edi 8@counter(%rip) 8@ext_var@GOTPCREL(%rip)");
	elfb_build(&e, false, EM_X86_64, ET_DYN, &n);
	assert_true(oom_loop(open_built, &e, 40) > 5);
}

/* A real program: a few hundred symbols. */
static void test_oom_fixture(void **state)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (len < 0)
		skip();
	exe[len] = '\0';
	snprintf(path, sizeof(path), "%s/../../fixtures/gcc-O2", dirname(exe));
	if (access(path, R_OK))
		skip();
	assert_true(oom_loop(open_path, path, 26) > 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom_built),
		cmocka_unit_test(test_oom_fixture),
	};

	usdt_set_print(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
