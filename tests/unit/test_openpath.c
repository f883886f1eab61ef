// SPDX-License-Identifier: BSD-2-Clause
/*
 * The one resolver of paths into a process's root (src/base/openpath.c): which
 * paths are taken for /proc/PID/root/ (any other is opened as it is), and
 * opening through our own root: a regular file is opened, a FIFO is
 * refused without blocking, a magic link is not followed. That a link
 * stays inside another process's root needs a chroot, so root: the kernel
 * test test_trace's test_chrooted_links_stay_inside.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "test_util.h"
#include "base/internal.h"
#include "base/openpath.h"

struct split_case {
	const char *path;
	bool taken;
	pid_t pid;
	const char *rest;
};

static const struct split_case split_cases[] = {
	{ "/proc/1/root", true, 1, "" },
	{ "/proc/1/root/", true, 1, "/" },
	{ "/proc/42/root/usr/bin/sh", true, 42, "/usr/bin/sh" },
	{ "/proc/2147483647/root/x", true, 2147483647, "/x" },
	/* Not a process's root, or not by the name procfs gives it. */
	{ "/proc/2147483648/root/x", false, 0, NULL },
	{ "/proc/042/root/x", false, 0, NULL },
	{ "/proc/0/root/x", false, 0, NULL },
	{ "/proc/self/root/x", false, 0, NULL },
	{ "/proc/42/rootx/y", false, 0, NULL },
	{ "/proc/42/cwd/x", false, 0, NULL },
	{ "/proc/42", false, 0, NULL },
	{ "/proc/-1/root/x", false, 0, NULL },
	{ "/proc//42/root/x", false, 0, NULL },
	{ "proc/42/root/x", false, 0, NULL },
	{ "/usr/bin/sh", false, 0, NULL },
	{ "", false, 0, NULL },
};

static void test_split(void **state)
{
	const char *rest;
	size_t i;
	pid_t pid;

	(void)state;
	for (i = 0; i < USDT__ARRAY_SIZE(split_cases); i++) {
		const struct split_case *c = &split_cases[i];

		pid = 0;
		rest = NULL;
		if (usdt__proc_root_split(c->path, &pid, &rest) != c->taken)
			fail_msg("%s: taken should be %d", c->path, c->taken);
		if (!c->taken)
			continue;
		assert_int_equal(pid, c->pid);
		assert_string_equal(rest, c->rest);
		/* A pointer into path. */
		assert_ptr_equal(rest, c->path + strlen(c->path) -
					       strlen(c->rest));
	}
}

/* "/proc/OURPID/root" + path into out. */
static void in_our_root(char *out, size_t size, const char *path)
{
	snprintf(out, size, "/proc/%d/root%s", (int)getpid(), path);
}

/*
 * Through our own root: a regular file opens (by the path, and from the
 * root without the leading '/'); a FIFO, a directory and /dev/null are
 * refused with ENOEXEC, without blocking; a magic link is refused; a
 * missing file is ENOENT. Where openat2() is missing (qemu-user before
 * 8.x, a seccomp filter), every way in fails closed with ENOSYS, the FIFO
 * too (no plain open() that could block or leave the root).
 */
static void test_open_in_our_root(void **state)
{
	char dir[] = "/tmp/usdt_openpath_XXXXXX", file[64], fifo[64];
	char path[160], magic[64];
	struct stat st;
	int fd, fd2;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(fifo, sizeof(fifo), "%s/p", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mkfifo(fifo, 0600), 0);

	fd = usdt__open_in_root(getpid(), file + 1);
	if (fd == -ENOSYS) {
		print_message("no openat2() here: checking that it fails closed\n");
		alarm(10);
		in_our_root(path, sizeof(path), file);
		assert_int_equal(usdt__open_regular(path), -ENOSYS);
		in_our_root(path, sizeof(path), fifo);
		assert_int_equal(usdt__open_regular(path), -ENOSYS);
		assert_int_equal(usdt__stat_path(path, &st), -ENOSYS);
		alarm(0);
		assert_int_equal(unlink(fifo), 0);
		assert_int_equal(unlink(file), 0);
		assert_int_equal(rmdir(dir), 0);
		return;
	}
	assert_true(fd >= 0);
	in_our_root(path, sizeof(path), file);
	fd2 = usdt__open_regular(path);
	assert_true(fd2 >= 0);
	assert_int_equal(usdt__stat_path(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	close(fd2);

	alarm(10);	/* a hang fails the test, not the run */
	in_our_root(path, sizeof(path), fifo);
	assert_int_equal(usdt__open_regular(path), -ENOEXEC);
	in_our_root(path, sizeof(path), dir);
	assert_int_equal(usdt__open_regular(path), -ENOEXEC);
	in_our_root(path, sizeof(path), "/dev/null");
	assert_int_equal(usdt__open_regular(path), -ENOEXEC);
	alarm(0);
	snprintf(magic, sizeof(magic), "/proc/self/fd/%d", fd);
	in_our_root(path, sizeof(path), magic);
	assert_int_equal(usdt__open_regular(path), -ELOOP);
	in_our_root(path, sizeof(path), "/nonexistent/usdt");
	assert_int_equal(usdt__open_regular(path), -ENOENT);
	assert_int_equal(usdt__stat_path(path, &st), -ENOENT);

	close(fd);
	assert_int_equal(unlink(fifo), 0);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_open_in_our_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
