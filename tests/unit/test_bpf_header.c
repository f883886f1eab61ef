// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpf/usdt.bpf.h is the API, short, with the machinery behind it in
 * bpf/usdt_impl.bpf.h, which is refused on its own and sits beside it in
 * the public include directory; it compiles with clang -target bpf and
 * libbpf's headers alone, with or without __TARGET_ARCH_xxx; brings what
 * libbpf's header brings; collides loudly with libbpf's header, in one
 * file or in two linked together; two files of one object share its maps;
 * the functions that take the context are those the library lists, and
 * fit the kernel's idea of it; and the manager refuses an object that
 * reads another spec layout. No kernel needed (vmlinux.h is generated from the kernel's BTF
 * by the build).
 */
#include <sys/wait.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "test_util.h"
#include "attach/attach.h"
#include "usdt.h"
#include "usdt_spec.h"
#include "attach/attach.h"
#include "reader/args.h"

#define OUT USDT_OBJDIR "/tests/unit/bpf"

static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* tests/unit/bpf/src into OUT/out, with the headers of inc. */
static int compile_inc(const char *src, const char *out, const char *extra,
		       const char *inc)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "mkdir -p " OUT " && " USDT_CLANG " -g -O2 -target bpf -mcpu=v3 -Wall -Werror %s "
		 "-I" USDT_OBJDIR " %s -c tests/unit/bpf/%s -o " OUT "/%s 2>" OUT "/%s.err",
		 extra, inc, src, out, out);
	return run(cmd);
}

/* With the tree's bpf/, as the project's own programs are built. */
static int compile(const char *src, const char *out, const char *extra)
{
	return compile_inc(src, out, extra, "-Ibpf");
}

/* The lines of a file, or -1. */
static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int c, n = 0;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/*
 * The header a user reads is the API and no more: at most 400 lines,
 * comments included (libbpf's is 322). The machinery is the other file's.
 */
static void test_public_header_short(void **state)
{
	int n = count_lines("bpf/usdt.bpf.h");

	assert_true(n > 0);
	assert_true(n <= 400);
	assert_true(count_lines("bpf/usdt_impl.bpf.h") > n);
}

/* The machinery alone is refused, naming the header to include. */
static void test_impl_alone_refused(void **state)
{
	assert_int_not_equal(compile("impl.bpf.c", "impl.o", "-D__TARGET_ARCH_x86"), 0);
	assert_int_equal(run("grep -q 'include <usdt/usdt.bpf.h>' " OUT "/impl.o.err"), 0);
}

/*
 * A user's program with the whole API (storage too) builds from the public
 * include directory alone: OBJDIR/include has the layout `make install`
 * gives INCLUDEDIR, with every header usdt.bpf.h includes.
 */
static void test_public_include_dir(void **state)
{
	struct bpf_object *obj;

	assert_int_equal(compile_inc("public.bpf.c", "public.o",
				     "-D__TARGET_ARCH_x86 -DUSDT_STORAGE_TYPE=long",
				     "-I" USDT_OBJDIR "/include"),
			 0);
	obj = bpf_object__open_file(OUT "/public.o", NULL);
	assert_non_null(obj);
	assert_non_null(bpf_object__find_program_by_name(obj, "prog_public"));
	assert_non_null(bpf_object__find_map_by_name(obj, "usdt__storage"));
	bpf_object__close(obj);
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
	/* libbpf's first: our #error says what to do. */
	assert_int_not_equal(compile("both.bpf.c", "both.o",
				 "-D__TARGET_ARCH_x86 -idirafter /usr/include/x86_64-linux-gnu"), 0);
	assert_int_equal(run("grep -q 'is already included' " OUT "/both.o.err"), 0);
	/* Ours first: libbpf's definitions collide with ours. */
	assert_int_not_equal(compile("both_rev.bpf.c", "both_rev.o",
				 "-D__TARGET_ARCH_x86 -idirafter /usr/include/x86_64-linux-gnu"), 0);
	assert_int_equal(run("grep -q 'redefinition' " OUT "/both_rev.o.err"), 0);
}

/* A file on libbpf's header and one on ours do not link, in either order. */
static void test_mixed_objects_do_not_link(void **state)
{
	assert_int_equal(compile("a.bpf.c", "a.o", "-D__TARGET_ARCH_x86"), 0);
	assert_int_equal(compile("lb.bpf.c", "lb.o",
				 "-D__TARGET_ARCH_x86 -idirafter /usr/include/x86_64-linux-gnu"), 0);
	assert_int_not_equal(run("bpftool gen object " OUT "/mix1.o " OUT "/a.o "
				 OUT "/lb.o 2>" OUT "/mix1.err"), 0);
	assert_int_equal(run("grep -q __bpf_usdt_specs " OUT "/mix1.err"), 0);
	assert_int_not_equal(run("bpftool gen object " OUT "/mix2.o " OUT "/lb.o "
				 OUT "/a.o 2>" OUT "/mix2.err"), 0);
	assert_int_equal(run("grep -q __bpf_usdt_specs " OUT "/mix2.err"), 0);
}

static bool has_func(const struct btf *btf, const char *name)
{
	return btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) > 0;
}

/* libbpf's limits, errno values and bpf_tracing.h, without host headers;
 * our functions link under our own names. */
static void test_libbpf_names(void **state)
{
	struct usdt_manager *man;
	struct bpf_object *obj;
	struct bpf_map *map;
	const struct btf *btf;

	assert_int_equal(compile("names.bpf.c", "names.o", "-D__TARGET_ARCH_x86"), 0);
	obj = bpf_object__open_file(OUT "/names.o", NULL);
	assert_non_null(obj);
	/* 100 specs: one chunk, 100 exactly; 300 IPs. */
	map = bpf_object__find_map_by_name(obj, "usdt__specs");
	assert_non_null(map);
	assert_int_equal(bpf_map__max_entries(map),
			 (100 + USDT_SPEC_CHUNK - 1) / USDT_SPEC_CHUNK);
	man = usdt_manager__new(obj, NULL);
	assert_non_null(man);
	assert_int_equal(man->store->max_specs, 100);
	assert_int_equal(man->store->ips.cap, 300);
	usdt_manager__free(man);
	btf = bpf_object__btf(obj);
	assert_non_null(btf);
	assert_true(has_func(btf, "usdt__arg"));
	assert_false(has_func(btf, "bpf_usdt_arg"));
	assert_non_null(bpf_object__find_program_by_name(obj, "prog_kprobe"));
	bpf_object__close(obj);
}

/* Change the object's usdt__layout; returns the value it had. */
static uint32_t set_layout(struct bpf_object *obj, uint32_t layout)
{
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map;
	const struct btf *btf = bpf_object__btf(obj);
	const char *init;
	char data[4096];
	uint32_t old;
	size_t size;
	int i;

	map = bpf_object__find_map_by_name(obj, ".rodata");
	assert_non_null(map);
	init = bpf_map__initial_value(map, &size);
	assert_non_null(init);
	assert_true(size <= sizeof(data));
	memcpy(data, init, size);
	sec = btf__type_by_id(btf, btf__find_by_name_kind(btf, ".rodata",
							  BTF_KIND_DATASEC));
	vs = btf_var_secinfos(sec);
	for (i = 0; i < (int)btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), "usdt__layout"))
			continue;
		memcpy(&old, init + vs->offset, sizeof(old));
		memcpy(data + vs->offset, &layout, sizeof(layout));
		assert_int_equal(bpf_map__set_initial_value(map, data, size), 0);
		return old;
	}
	fail_msg("no usdt__layout in .rodata");
	return 0;
}

/* src built with extra flags: usdt_manager__new() refuses it, EPROTO. */
static void assert_refused(const char *src, const char *out,
			   const char *extra)
{
	struct bpf_object *obj;
	char path[256];

	assert_int_equal(compile(src, out, extra), 0);
	snprintf(path, sizeof(path), OUT "/%s", out);
	obj = bpf_object__open_file(path, NULL);
	assert_non_null(obj);
	errno = 0;
	assert_null(usdt_manager__new(obj, NULL));
	assert_int_equal(errno, EPROTO);
	bpf_object__close(obj);
}

static void test_layout_checked(void **state)
{
	struct bpf_object *obj;
	struct usdt_manager *man;

	assert_int_equal(compile("a.bpf.c", "a.o", "-D__TARGET_ARCH_x86"), 0);
	obj = bpf_object__open_file(OUT "/a.o", NULL);
	assert_non_null(obj);
	/* The header wrote this library's layout. */
	assert_int_equal(set_layout(obj, USDT_SPEC_LAYOUT + 1), USDT_SPEC_LAYOUT);
	errno = 0;
	assert_null(usdt_manager__new(obj, NULL));
	assert_int_equal(errno, EPROTO);
	/* The header before fast codes (layout 3), with these very maps:
	 * refused like any other layout. */
	set_layout(obj, 3);
	errno = 0;
	assert_null(usdt_manager__new(obj, NULL));
	assert_int_equal(errno, EPROTO);
	set_layout(obj, USDT_SPEC_LAYOUT);
	man = usdt_manager__new(obj, NULL);
	assert_non_null(man);
	usdt_manager__free(man);
	bpf_object__close(obj);

	/* Built with the header before capacity on demand (layout 2). */
	assert_refused("oldmaps.bpf.c", "layout2.o", "-DLAYOUT=2");
	/* Saying this layout, with that layout's maps: refused too. */
	assert_refused("oldmaps.bpf.c", "layout3.o", "-DLAYOUT=USDT_SPEC_LAYOUT");
	/* An object with the maps but no layout at all: an older header. */
	assert_refused("nolayout.bpf.c", "nolayout.o", "");
}

/* The linkage of FUNC name in btf: BTF_FUNC_GLOBAL, _STATIC; -1 if none. */
static int linkage(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);

	return id > 0 ? (int)btf_vlen(btf__type_by_id(btf, id)) : -1;
}

/*
 * The header's functions that take the context fit where the kernel knows
 * its context type by the name they use (x86: pt_regs), and not where it
 * calls it otherwise or, having no BTF of its own (Debian's s390x 6.1),
 * knows no context type at all: there the section handler loads them
 * without function info. The object's BTF is only read.
 */
static void test_ctx_funcs_fit_kernel(void **state)
{
	struct usdt__features x86 = { .ctx_known = true,
				      .ctx_name = "pt_regs" },
			      arm64 = { .ctx_known = true,
					.ctx_name = "user_pt_regs" },
			      no_btf = { .ctx_known = false };
	const struct usdt__features *feats[] = { &x86, &arm64, &no_btf };
	const bool want[] = { true, false, false };
	struct bpf_object *obj;
	const struct btf *btf;
	size_t i;

	assert_int_equal(compile("a.bpf.c", "a-ctx.o", "-D__TARGET_ARCH_x86"), 0);
	obj = bpf_object__open_file(OUT "/a-ctx.o", NULL);
	assert_non_null(obj);
	btf = bpf_object__btf(obj);
	assert_non_null(btf);
	for (i = 0; i < USDT__ARRAY_SIZE(feats); i++) {
		assert_int_equal(usdt__ctx_funcs_fit(btf, feats[i]), want[i]);
		assert_int_equal(linkage(btf, "usdt__args"), BTF_FUNC_GLOBAL);
		assert_int_equal(linkage(btf, "usdt__arg_size"),
				 BTF_FUNC_GLOBAL);
		/* usdt__read() takes the context too. */
		assert_int_equal(linkage(btf, "usdt__read"), BTF_FUNC_GLOBAL);
	}
	assert_true(usdt__ctx_funcs_fit(NULL, &arm64));
	bpf_object__close(obj);
}

/* Does FUNC fn take the header's context type (__USDT_CTX under vmlinux.h:
 * the typedef bpf_user_pt_regs_t) first? */
static bool takes_ctx(const struct btf *btf, const struct btf_type *fn)
{
	const struct btf_type *proto = btf__type_by_id(btf, fn->type);
	const struct btf_type *t;

	if (!proto || !btf_vlen(proto))
		return false;
	t = btf__type_by_id(btf, btf_params(proto)->type);
	if (!t || !btf_is_ptr(t))
		return false;
	do
		t = btf__type_by_id(btf, t->type);
	while (t && btf_is_mod(t));
	return t && btf_is_typedef(t) &&
	       !strcmp(btf__name_by_offset(btf, t->name_off),
		       "bpf_user_pt_regs_t");
}

static bool is_ctx_func(const char *name)
{
	size_t i;

	for (i = 0; usdt__ctx_funcs[i]; i++)
		if (!strcmp(usdt__ctx_funcs[i], name))
			return true;
	return false;
}

/*
 * The library's list of the functions that take the context (what the
 * section handler looks at) is the header's: every global function of an
 * object with all of them (arch known, storage) that takes the context is
 * on it, and everything on it is there.
 */
static void test_ctx_funcs_listed(void **state)
{
	struct bpf_object *obj;
	const struct btf *btf;
	__u32 id, n;
	size_t i;

	assert_int_equal(compile("a.bpf.c", "a-all.o",
				 "-D__TARGET_ARCH_x86 -DUSDT_STORAGE_TYPE=long"),
			 0);
	obj = bpf_object__open_file(OUT "/a-all.o", NULL);
	assert_non_null(obj);
	btf = bpf_object__btf(obj);
	assert_non_null(btf);
	for (id = 1, n = 0; id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = btf__name_by_offset(btf, t->name_off);

		if (!btf_is_func(t) || btf_vlen(t) != BTF_FUNC_GLOBAL ||
		    !takes_ctx(btf, t))
			continue;
		if (!is_ctx_func(name))
			fail_msg("%s() takes the context, not in usdt__ctx_funcs",
				 name);
		n++;
	}
	for (i = 0; usdt__ctx_funcs[i]; i++)
		assert_true(has_func(btf, usdt__ctx_funcs[i]));
	assert_int_equal(n, i);
	bpf_object__close(obj);
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
		cmocka_unit_test(test_public_header_short),
		cmocka_unit_test(test_impl_alone_refused),
		cmocka_unit_test(test_public_include_dir),
		cmocka_unit_test(test_without_target_arch),
		cmocka_unit_test(test_with_target_arch),
		cmocka_unit_test(test_both_headers_collide),
		cmocka_unit_test(test_mixed_objects_do_not_link),
		cmocka_unit_test(test_libbpf_names),
		cmocka_unit_test(test_layout_checked),
		cmocka_unit_test(test_ctx_funcs_fit_kernel),
		cmocka_unit_test(test_ctx_funcs_listed),
		cmocka_unit_test(test_two_files_share_maps),
	};

	usdt_set_print(NULL);
	return cmocka_run_group_tests_name("bpf_header", tests, NULL, NULL);
}
