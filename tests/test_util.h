/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared by the test programs. Include after <cmocka.h>'s prerequisites:
 * this header includes them itself.
 */
#ifndef __LIBUSDT_TEST_UTIL_H
#define __LIBUSDT_TEST_UTIL_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* Exit status a test program uses when it cannot run at all. */
#define USDT_TEST_SKIP 77

/*
 * Kernel tests call this first in main(): without root or BPF, print one
 * line saying why and exit 77 (tests/run.sh counts it as a skip, or as a
 * failure under CI=true).
 */
static inline void usdt_test_require_kernel(const char *prog)
{
	const char *why = NULL;

	if (geteuid() != 0)
		why = "not root";
	else if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL) != 1)
		why = "the kernel cannot load BPF kprobe programs";
	else if (access("/sys/bus/event_source/devices/uprobe/type", R_OK))
		why = "the kernel has no uprobe PMU";
	if (!why)
		return;
	printf("SKIP: %s: %s%s\n", prog, why,
	       getenv("CI") && !strcmp(getenv("CI"), "true") ?
		       " (a failure under CI=true)" : "");
	fflush(stdout);
	exit(USDT_TEST_SKIP);
}

/*
 * After unshare(CLONE_NEWNS): make the mount that holds path (and those
 * under it) private, so that what this process mounts there stays in its
 * namespace. The nearest mount point of path and its parents, not always
 * "/": in a chroot "/" is none.
 */
static inline int usdt_test_private_mount(const char *path)
{
	char dir[256];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	for (;;) {
		if (!mount(NULL, dir, NULL, MS_REC | MS_PRIVATE, NULL))
			return 0;
		if (errno != EINVAL || !strcmp(dir, "/"))
			return -1;
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

/*
 * A BPF file system, which usdt_program__attach() needs with libbpf 1.1
 * and 1.2 for a uprobe_multi link without CAP_SYS_ADMIN (with it, the
 * library makes one no mount namespace sees: test_native's
 * test_no_bpffs): where none is mounted (a container, a machine without
 * systemd), one at /sys/fs/bpf in a mount namespace of this test's own,
 * so that the machine's stays as it is.
 */
static inline void usdt_test_need_bpffs(const char *prog)
{
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	FILE *f = fopen("/proc/self/mounts", "re");

	assert_non_null(f);
	while (!found && getline(&line, &cap, f) > 0)
		found = strstr(line, " bpf ") != NULL;
	free(line);
	fclose(f);
	if (found)
		return;
	printf("%s: no BPF file system mounted: one at /sys/fs/bpf, in a mount namespace of our own\n",
	       prog);
	if (unshare(CLONE_NEWNS) || usdt_test_private_mount("/sys/fs/bpf") ||
	    mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL)) {
		fprintf(stderr, "%s: mounting a BPF file system: %s\n", prog,
			strerror(errno));
		exit(1);
	}
}

/* How many kernel links run the loaded program prog; *type (if not NULL)
 * the type of one of them (0: none). Only links of prog are looked at. */
static inline int usdt_test_prog_links(const struct bpf_program *prog,
				       __u32 *type)
{
	struct bpf_prog_info pinfo = { 0 };
	__u32 len = sizeof(pinfo), id = 0;
	int n = 0, fd;

	if (type)
		*type = 0;
	assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(prog), &pinfo,
						&len), 0);
	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = { 0 };

		len = sizeof(info);
		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.prog_id == pinfo.id) {
			n++;
			if (type)
				*type = info.type;
		}
		close(fd);
	}
	return n;
}

/*
 * Run fn(arg) in a child process, whose exit status is what fn returns,
 * and fail the test unless it is 0: a signal (what names the likely
 * cause, such as a seccomp filter's kill) or the status fn chose to say
 * which step failed.
 */
static inline void usdt_test_in_child(int (*fn)(void *), void *arg,
				      const char *what)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(fn(arg));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("child killed by signal %d: %s", WTERMSIG(status),
			 what);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status))
		fail_msg("child exited with %d", WEXITSTATUS(status));
}

/* How many descriptors this process has open. */
static inline int usdt_test_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The linkage of function name in the BTF the loaded program prog was
 * loaded with (BTF_FUNC_STATIC, BTF_FUNC_GLOBAL), with how many function
 * info records it kept in *func_cnt; -1 where it kept none.
 */
static inline int usdt_test_func_linkage(const struct bpf_program *prog,
					 const char *name, __u32 *func_cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	struct btf *btf;
	int id, linkage;

	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info,
						&len),
			 0);
	*func_cnt = info.nr_func_info;
	if (!info.nr_func_info)
		return -1;
	btf = btf__load_from_kernel_by_id(info.btf_id);
	assert_non_null(btf);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	if (id <= 0)
		fail_msg("no function %s in the BTF program %s loaded with",
			 name, bpf_program__name(prog));
	linkage = btf_vlen(btf__type_by_id(btf, id));
	btf__free(btf);
	return linkage;
}

/* A copy of the environment variable name (NULL if unset), for
 * usdt_test_env_restore(). */
static inline char *usdt_test_env_save(const char *name)
{
	return getenv(name) ? strdup(getenv(name)) : NULL;
}

/* Put name back as saved (unset if it was), and free the copy. */
static inline void usdt_test_env_restore(const char *name, char *saved)
{
	if (saved)
		setenv(name, saved, 1);
	else
		unsetenv(name);
	free(saved);
}

#endif
