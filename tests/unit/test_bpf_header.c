// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpf/usdt.bpf.h compiles with clang -target bpf and libbpf's headers
 * alone, with or without __TARGET_ARCH_xxx; collides loudly with libbpf's
 * header; and two files of one object share its maps. No kernel needed
 * (vmlinux.h is generated from the kernel's BTF by the build).
 */
#include <sys/wait.h>
#include <bpf/libbpf.h>

#include "test_util.h"

#define OUT USDT_OBJDIR "/tests/unit/bpf"

static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int compile(const char *src, const char *out, const char *extra)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "mkdir -p " OUT " && " USDT_CLANG " -g -O2 -target bpf -mcpu=v3 -Wall -Werror %s "
		 "-I" USDT_OBJDIR " -Ibpf -c tests/unit/bpf/%s -o " OUT "/%s 2>" OUT "/%s.err",
		 extra, src, out, out);
	return run(cmd);
}

static void test_without_target_arch(void **state)
{
	/* Registers and the IP then go through bpf_probe_read_kernel and
	 * the usdt__ip_off global the manager fills in. */
	assert_int_equal(compile("a.bpf.c", "a-noarch.o", ""), 0);
}

static void test_with_target_arch(void **state)
{
	assert_int_equal(compile("a.bpf.c", "a.o", "-D__TARGET_ARCH_x86"), 0);
	assert_int_equal(compile("a.bpf.c", "a-arm64.o", "-D__TARGET_ARCH_arm64"), 0);
	assert_int_equal(compile("a.bpf.c", "a-s390.o", "-D__TARGET_ARCH_s390"), 0);
	assert_int_equal(compile("a.bpf.c", "a-riscv.o", "-D__TARGET_ARCH_riscv"), 0);
}

static void test_both_headers_collide(void **state)
{
	assert_int_not_equal(compile("both.bpf.c", "both.o",
				 "-D__TARGET_ARCH_x86 -idirafter /usr/include/x86_64-linux-gnu"), 0);
	assert_int_equal(run("grep -q 'redefinition' " OUT "/both.o.err"), 0);
}

static void test_two_files_share_maps(void **state)
{
	struct bpf_object *obj;
	struct bpf_map *map;
	int specs = 0, ips = 0;

	assert_int_equal(compile("a.bpf.c", "a.o", "-D__TARGET_ARCH_x86"), 0);
	assert_int_equal(compile("b.bpf.c", "b.o", "-D__TARGET_ARCH_x86"), 0);
	assert_int_equal(run("bpftool gen object " OUT "/ab.o " OUT "/a.o "
			     OUT "/b.o"), 0);
	obj = bpf_object__open_file(OUT "/ab.o", NULL);
	assert_non_null(obj);
	bpf_object__for_each_map(map, obj) {
		specs += !strcmp(bpf_map__name(map), "usdt__specs");
		ips += !strcmp(bpf_map__name(map), "usdt__ip2spec");
	}
	assert_int_equal(specs, 1);
	assert_int_equal(ips, 1);
	assert_non_null(bpf_object__find_program_by_name(obj, "prog_a"));
	assert_non_null(bpf_object__find_program_by_name(obj, "prog_b"));
	bpf_object__close(obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_without_target_arch),
		cmocka_unit_test(test_with_target_arch),
		cmocka_unit_test(test_both_headers_collide),
		cmocka_unit_test(test_two_files_share_maps),
	};

	return cmocka_run_group_tests_name("bpf_header", tests, NULL, NULL);
}
