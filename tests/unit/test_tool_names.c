// SPDX-License-Identifier: BSD-2-Clause
/*
 * The tool's set of names (tools/common.c), which `usdt trace -p` keeps
 * the files it has read in and targets_of_pid() finds a file seen before
 * by: exact counts, its growth, and a file mapped twice apart listed
 * once. The tool's sources are compiled in.
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "test_util.h"

#include "../../tools/common.c"

#define NAME_CNT 1000

static void test_name_set(void **state)
{
	static char names[NAME_CNT][16];
	struct name_set s = { 0 };
	int i;

	(void)state;
	assert_false(name_set_has(&s, "x"));	/* empty: no slots yet */
	for (i = 0; i < NAME_CNT; i++) {
		snprintf(names[i], sizeof(names[i]), "/lib/f%d.so", i);
		assert_int_equal(name_set_add(&s, names[i]), 1);
	}
	assert_int_equal(s.cnt, NAME_CNT);
	/* At most half full: 2048 slots for 1000 names. */
	assert_int_equal(s.mask + 1, 2048);
	for (i = 0; i < NAME_CNT; i++) {
		char copy[16];

		/* By value: another string with the same text is there. */
		memcpy(copy, names[i], sizeof(copy));
		assert_true(name_set_has(&s, copy));
		assert_int_equal(name_set_add(&s, copy), 0);
	}
	assert_int_equal(s.cnt, NAME_CNT);
	assert_false(name_set_has(&s, "/lib/f1000.so"));
	assert_false(name_set_has(&s, "/lib/f1.s"));
	assert_false(name_set_has(&s, ""));
	name_set_free(&s);
	assert_null(s.slots);
	assert_int_equal(s.cnt, 0);
}

/* How many of list's cnt targets show name. */
static int shown_cnt(const struct target *list, int cnt, const char *name)
{
	int i, n = 0;

	for (i = 0; i < cnt; i++)
		n += !strcmp(list[i].shown, name);
	return n;
}

/* Files a and b mapped a, b, a (a's two mappings apart, with b's between
 * them in the maps): each is listed once. */
static void test_targets_once(void **state)
{
	char dir[] = "/tmp/usdt-names-XXXXXX", a[64], b[64];
	const char *paths[] = { a, b, a };
	void *maps[3];
	struct target *list;
	int i, cnt, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	for (i = 0; i < 3; i++) {
		fd = open(paths[i], O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, 4096), 0);
		/* One page apart at least, so no two mappings merge. */
		maps[i] = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		assert_true(maps[i] != MAP_FAILED);
		close(fd);
	}
	cnt = targets_of_pid(getpid(), &list);
	assert_true(cnt > 0);
	assert_int_equal(shown_cnt(list, cnt, a), 1);
	assert_int_equal(shown_cnt(list, cnt, b), 1);
	targets_free(list, cnt);
	for (i = 0; i < 3; i++)
		munmap(maps[i], 4096);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_set),
		cmocka_unit_test(test_targets_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
