// SPDX-License-Identifier: BSD-2-Clause
/*
 * The one /proc/PID/maps parser (src/proc/procmap.c), without a process: lines
 * as the kernel writes them (with a path, with none, deleted, with spaces,
 * very long) and lines it never writes, which are passed over.
 */
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "test_util.h"
#include "base/internal.h"
#include "proc/procmap.h"

struct maps_case {
	const char *line;
	int err;		/* usdt__maps_parse()'s result */
	uint64_t start, end, off;
	unsigned int maj, min;
	unsigned long long ino;
	bool exec, deleted;
	const char *path;
	bool file;		/* usdt__maps_next() returns it */
};

#define PAD "                     "	/* the kernel's padding to the name */

static const struct maps_case cases[] = {
	{ "55dfbcf1c000-55dfbcf21000 r-xp 00002000 fe:00 247134" PAD
	  "/usr/bin/cat\n",
	  0, 0x55dfbcf1c000, 0x55dfbcf21000, 0x2000, 0xfe, 0, 247134, true,
	  false, "/usr/bin/cat", true },
	/* Read-only, a large device and inode, the last line (no newline). */
	{ "7f8021f0c000-7f8021f63000 r--s 0017c000 103:1a 18446744073709551615"
	  PAD "/usr/lib/locale/C.utf8/LC_CTYPE",
	  0, 0x7f8021f0c000, 0x7f8021f63000, 0x17c000, 0x103, 0x1a,
	  18446744073709551615ull, false, false,
	  "/usr/lib/locale/C.utf8/LC_CTYPE", true },
	/* Anonymous: no name, and the line ends with a space. */
	{ "7f8021e48000-7f8021f0c000 rw-p 00000000 00:00 0 \n",
	  0, 0x7f8021e48000, 0x7f8021f0c000, 0, 0, 0, 0, false, false, "",
	  false },
	{ "55dfc6ab6000-55dfc6ad7000 rw-p 00000000 00:00 0" PAD "[heap]\n",
	  0, 0x55dfc6ab6000, 0x55dfc6ad7000, 0, 0, 0, 0, false, false,
	  "[heap]", false },
	{ "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0" PAD
	  "[vsyscall]\n",
	  0, 0xffffffffff600000, 0xffffffffff601000, 0, 0, 0, 0, true, false,
	  "[vsyscall]", false },
	/* An inode and a name that is no path. */
	{ "7f0000000000-7f0000001000 rw-s 00000000 00:0f 1063" PAD
	  "anon_inode:[perf_event]\n",
	  0, 0x7f0000000000, 0x7f0000001000, 0, 0, 0xf, 1063, false, false,
	  "anon_inode:[perf_event]", false },
	/* Deleted since: cut off and said. */
	{ "7f0000000000-7f0000002000 r-xp 00001000 fe:00 42" PAD
	  "/tmp/libx.so (deleted)\n",
	  0, 0x7f0000000000, 0x7f0000002000, 0x1000, 0xfe, 0, 42, true, true,
	  "/tmp/libx.so", true },
	{ "7f0000000000-7f0000001000 rw-s 00000000 00:01 7" PAD
	  "/dev/zero (deleted)\n",
	  0, 0x7f0000000000, 0x7f0000001000, 0, 0, 1, 7, false, true,
	  "/dev/zero", true },
	/* Only a name's end counts, and one with nothing before it is
	 * the name. */
	{ "1000-2000 r--p 00000000 fe:00 9" PAD "/a (deleted)/b\n",
	  0, 0x1000, 0x2000, 0, 0xfe, 0, 9, false, false, "/a (deleted)/b",
	  true },
	{ "1000-2000 r--p 00000000 fe:00 9 (deleted)\n",
	  0, 0x1000, 0x2000, 0, 0xfe, 0, 9, false, false, "(deleted)", false },
	/* Spaces inside a path are the path's. */
	{ "1000-2000 r-xp 00000000 fe:00 9" PAD "/opt/my app/lib x.so  \n",
	  0, 0x1000, 0x2000, 0, 0xfe, 0, 9, true, false,
	  "/opt/my app/lib x.so  ", true },
	/* A path and inode 0: not a file-backed mapping to the library. */
	{ "1000-2000 r--p 00000000 00:2a 0" PAD "/weird\n",
	  0, 0x1000, 0x2000, 0, 0, 0x2a, 0, false, false, "/weird", false },
	/* Malformed. */
	{ "", -EINVAL },
	{ "\n", -EINVAL },
	{ "garbage\n", -EINVAL },
	{ "1000-2000 r-xp 00000000 fe:00\n", -EINVAL },
	{ "1000-2000 r-xp 00000000 fe:00 12x /bin/x\n", -EINVAL },
	{ "1000-2000 r-xpq 00000000 fe:00 12 /bin/x\n", -EINVAL },
	{ "1000-2000 r-x 00000000 fe:00 12 /bin/x\n", -EINVAL },
	{ "2000-1000 r-xp 00000000 fe:00 12 /bin/x\n", -EINVAL },
	{ "1000-1000 r-xp 00000000 fe:00 12 /bin/x\n", -EINVAL },
	{ "1000 r-xp 00000000 fe:00 12 /bin/x\n", -EINVAL },
	{ "1000-2000 r-xp 00000000 fe-00 12 /bin/x\n", -EINVAL },
};

static void check_case(const struct maps_case *c,
		       const struct usdt__mapping *m)
{
	assert_true(m->start == c->start);
	assert_true(m->end == c->end);
	assert_true(m->off == c->off);
	assert_int_equal(major(m->dev), c->maj);
	assert_int_equal(minor(m->dev), c->min);
	assert_true((unsigned long long)m->ino == c->ino);
	assert_int_equal(m->exec, c->exec);
	assert_int_equal(m->deleted, c->deleted);
	assert_string_equal(m->path, c->path);
}

/* Each line by itself. A malformed one leaves m as it was. */
static void test_parse_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < USDT__ARRAY_SIZE(cases); i++) {
		const struct maps_case *c = &cases[i];
		struct usdt__mapping m, before;
		char *line = strdup(c->line);

		assert_non_null(line);
		memset(&m, 0x5a, sizeof(m));
		memcpy(&before, &m, sizeof(m));
		if (usdt__maps_parse(line, &m) != c->err)
			fail_msg("case %zu: '%s': not %d", i, c->line, c->err);
		if (c->err)
			assert_memory_equal(&m, &before, sizeof(m));
		else
			check_case(c, &m);
		free(line);
	}
}

/* Every case's line, in one stream, read as from /proc/PID/maps. */
static FILE *all_lines(char **buf, size_t *len)
{
	FILE *w = open_memstream(buf, len);
	size_t i;

	assert_non_null(w);
	for (i = 0; i < USDT__ARRAY_SIZE(cases); i++) {
		fputs(cases[i].line, w);
		if (!strchr(cases[i].line, '\n'))
			fputc('\n', w);
	}
	assert_int_equal(fclose(w), 0);
	return fmemopen(*buf, *len, "r");
}

/* usdt__maps_next() gives the file-backed lines, usdt__maps_next_any()
 * every well-formed one, both in order; malformed lines are passed over
 * and do not end the reading. */
static void test_next(void **state)
{
	struct usdt__mapping m;
	char *buf, *line = NULL;
	size_t len, cap = 0, i;
	int any;
	FILE *f;

	(void)state;
	for (any = 0; any < 2; any++) {
		f = all_lines(&buf, &len);
		assert_non_null(f);
		for (i = 0; i < USDT__ARRAY_SIZE(cases); i++) {
			const struct maps_case *c = &cases[i];

			if (c->err || (!any && !c->file))
				continue;
			assert_int_equal(any ? usdt__maps_next_any(f, &line,
								   &cap, &m) :
					       usdt__maps_next(f, &line, &cap,
							       &m), 1);
			check_case(c, &m);
		}
		assert_int_equal(any ? usdt__maps_next_any(f, &line, &cap, &m) :
				       usdt__maps_next(f, &line, &cap, &m), 0);
		fclose(f);
		free(buf);
	}
	free(line);
}

/* A path far longer than any buffer a caller would guess (PATH_MAX
 * twice), and a deleted one: whole, through getline()'s buffer. */
static void test_long_path(void **state)
{
	const size_t plen = 8192;
	char *path = malloc(plen + 1), *text, *line = NULL;
	struct usdt__mapping m;
	size_t i, cap = 0;
	int deleted;
	FILE *f;

	(void)state;
	assert_non_null(path);
	for (i = 0; i < plen; i++)
		path[i] = i % 64 ? 'a' + (char)(i % 26) : '/';
	path[plen] = '\0';
	for (deleted = 0; deleted < 2; deleted++) {
		assert_true(asprintf(&text,
				     "1000-2000 r-xp 00000000 fe:00 5" PAD
				     "%s%s\n7000-8000 r--p 0 fe:00 6 /x\n",
				     path, deleted ? " (deleted)" : "") > 0);
		f = fmemopen(text, strlen(text), "r");
		assert_non_null(f);
		assert_int_equal(usdt__maps_next(f, &line, &cap, &m), 1);
		assert_int_equal(strlen(m.path), plen);
		assert_string_equal(m.path, path);
		assert_int_equal(m.deleted, deleted);
		assert_int_equal(usdt__maps_next(f, &line, &cap, &m), 1);
		assert_string_equal(m.path, "/x");
		assert_int_equal(usdt__maps_next(f, &line, &cap, &m), 0);
		fclose(f);
		free(text);
	}
	free(line);
	free(path);
}

/* Our own maps: the parser reads the kernel's lines, and finds this
 * program's executable mapping. */
static void test_own_maps(void **state)
{
	char exe[4096], *line = NULL;
	struct usdt__mapping m;
	bool found = false;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	(void)state;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	f = usdt__maps_open(0);
	assert_non_null(f);
	while (usdt__maps_next(f, &line, &cap, &m) > 0)
		found |= m.exec && !strcmp(m.path, exe);
	assert_true(found);
	fclose(f);
	free(line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_long_path),
		cmocka_unit_test(test_own_maps),
	};

	return cmocka_run_group_tests_name("procmap", tests, NULL, NULL);
}
