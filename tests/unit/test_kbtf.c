// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kernel-BTF reader (src/kernel/kbtf.c) on small BTF files written here, and
 * on this machine's /sys/kernel/btf/vmlinux against libbpf's loader.
 */
#include "test_util.h"
#include "store/store.h"

#include <bpf/btf.h>
#include <linux/btf.h>
#include <unistd.h>

/* A BTF file in the making: types, then strings. */
struct blob {
	uint32_t types[64];
	size_t ntypes;		/* words */
	char strs[256];
	size_t nstrs;
};

static uint32_t str(struct blob *b, const char *s)
{
	uint32_t off = (uint32_t)b->nstrs;

	if (!*s)
		return 0;
	strcpy(b->strs + b->nstrs, s);
	b->nstrs += strlen(s) + 1;
	return off;
}

/* One record, and `extra` words after it. */
static void type(struct blob *b, const char *name, uint32_t kind,
		 uint32_t vlen, uint32_t type_or_size, size_t extra)
{
	b->types[b->ntypes++] = str(b, name);
	b->types[b->ntypes++] = kind << 24 | vlen;
	b->types[b->ntypes++] = type_or_size;
	while (extra--)
		b->types[b->ntypes++] = 0;
}

static void blob_init(struct blob *b)
{
	memset(b, 0, sizeof(*b));
	b->nstrs = 1;		/* offset 0: "" */
}

/*
 * The header's length: the 24 bytes every kernel so far writes, or more
 * (Linux 7.x's 32, with fields this reader does not use), or too few.
 * Written by hand, never as the build's struct btf_header, whose size
 * depends on the <linux/btf.h> the test was built against.
 */
static uint32_t hdr_len = 24;

/* Write b to a temporary file (cut to `cut` bytes if not 0): its path. */
static const char *blob_write(const struct blob *b, uint16_t magic, size_t cut)
{
	static char path[] = "/tmp/test_kbtf.XXXXXX";
	struct {
		uint16_t magic;
		uint8_t version, flags;
		uint32_t hdr_len, type_off, type_len, str_off, str_len;
	} v1 = {
		.magic = magic, .version = 1, .hdr_len = hdr_len,
		.type_off = 0, .type_len = (uint32_t)(b->ntypes * 4),
		.str_off = (uint32_t)(b->ntypes * 4),
		.str_len = (uint32_t)b->nstrs,
	};
	unsigned char h[64] = { 0 };
	size_t hlen = hdr_len < sizeof(v1) ? sizeof(v1) : hdr_len;
	int fd;

	memcpy(h, &v1, sizeof(v1));
	strcpy(path, "/tmp/test_kbtf.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, h, hlen), hlen);
	assert_int_equal(write(fd, b->types, b->ntypes * 4), b->ntypes * 4);
	assert_int_equal(write(fd, b->strs, b->nstrs), b->nstrs);
	if (cut)
		assert_int_equal(ftruncate(fd, (off_t)cut), 0);
	close(fd);
	return path;
}

static int ctx_name(const struct blob *b, uint16_t magic, size_t cut,
		    char *buf, size_t size)
{
	const char *path = blob_write(b, magic, cut);
	int err = usdt__btf_ctx_name(path, buf, size);

	unlink(path);
	return err;
}

/* int, a struct, enum, func proto: the walk steps over each kind's data;
 * then the typedef through a const to the struct. */
static void common_types(struct blob *b, const char *sname)
{
	type(b, "int", BTF_KIND_INT, 0, 4, 1);			/* 1 */
	type(b, sname, BTF_KIND_STRUCT, 2, 16, 6);		/* 2 */
	type(b, "e", BTF_KIND_ENUM, 3, 4, 6);			/* 3 */
	type(b, "", BTF_KIND_FUNC_PROTO, 2, 1, 4);		/* 4 */
	type(b, "", BTF_KIND_CONST, 0, 2, 0);			/* 5 */
}

static void test_found(void **state)
{
	struct blob b;
	char buf[64];

	blob_init(&b);
	common_types(&b, "pt_regs");
	type(&b, "bpf_user_pt_regs_t", BTF_KIND_TYPEDEF, 0, 5, 0);
	assert_int_equal(ctx_name(&b, BTF_MAGIC, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "pt_regs");
	/* Too small a buffer for the name. */
	assert_int_equal(ctx_name(&b, BTF_MAGIC, 0, buf, 7), -E2BIG);

	/* An anonymous struct (s390x's): "". */
	blob_init(&b);
	common_types(&b, "");
	type(&b, "bpf_user_pt_regs_t", BTF_KIND_TYPEDEF, 0, 2, 0);
	strcpy(buf, "x");
	assert_int_equal(ctx_name(&b, BTF_MAGIC, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

static void test_not_found(void **state)
{
	struct blob b;
	char buf[64];

	/* A typedef of int. */
	blob_init(&b);
	common_types(&b, "pt_regs");
	type(&b, "bpf_user_pt_regs_t", BTF_KIND_TYPEDEF, 0, 1, 0);
	assert_int_equal(ctx_name(&b, BTF_MAGIC, 0, buf, sizeof(buf)), -ESRCH);

	/* A name that only starts like it, and a longer one. */
	blob_init(&b);
	common_types(&b, "pt_regs");
	type(&b, "bpf_user_pt_regs", BTF_KIND_TYPEDEF, 0, 2, 0);
	type(&b, "bpf_user_pt_regs_tt", BTF_KIND_TYPEDEF, 0, 2, 0);
	assert_int_equal(ctx_name(&b, BTF_MAGIC, 0, buf, sizeof(buf)), -ESRCH);

	/* A typedef pointing past the last type. */
	blob_init(&b);
	common_types(&b, "pt_regs");
	type(&b, "bpf_user_pt_regs_t", BTF_KIND_TYPEDEF, 0, 40, 0);
	assert_int_equal(ctx_name(&b, BTF_MAGIC, 0, buf, sizeof(buf)), -ESRCH);

	assert_int_equal(usdt__btf_ctx_name("/nonexistent/btf", buf,
					    sizeof(buf)), -ENOENT);
}

/* A longer header (Linux 7.x: 32 bytes) places the sections after it; a
 * header shorter than the fields read is refused. */
static void test_header_len(void **state)
{
	struct blob b;
	char buf[64];

	blob_init(&b);
	common_types(&b, "pt_regs");
	type(&b, "bpf_user_pt_regs_t", BTF_KIND_TYPEDEF, 0, 5, 0);
	hdr_len = 32;
	assert_int_equal(ctx_name(&b, BTF_MAGIC, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "pt_regs");
	hdr_len = 40;
	assert_int_equal(ctx_name(&b, BTF_MAGIC, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "pt_regs");
	hdr_len = 20;
	assert_int_equal(ctx_name(&b, BTF_MAGIC, 0, buf, sizeof(buf)),
			 -EOPNOTSUPP);
	hdr_len = 24;
}

static void test_refused(void **state)
{
	struct blob b;
	char buf[64];

	blob_init(&b);
	common_types(&b, "pt_regs");
	type(&b, "bpf_user_pt_regs_t", BTF_KIND_TYPEDEF, 0, 5, 0);
	/* Swapped magic (the other byte order), a cut file. */
	assert_int_equal(ctx_name(&b, 0x9feb, 0, buf, sizeof(buf)),
			 -EOPNOTSUPP);
	assert_int_equal(ctx_name(&b, BTF_MAGIC, 40, buf, sizeof(buf)),
			 -EOPNOTSUPP);

	/* A kind this reader does not know, before the typedef. */
	blob_init(&b);
	type(&b, "int", BTF_KIND_INT, 0, 4, 1);
	type(&b, "new", 31, 0, 0, 0);
	type(&b, "bpf_user_pt_regs_t", BTF_KIND_TYPEDEF, 0, 1, 0);
	assert_int_equal(ctx_name(&b, BTF_MAGIC, 0, buf, sizeof(buf)),
			 -EOPNOTSUPP);
}

#ifdef USDT_CROSS_BUILD
/*
 * make cross-check has no libbpf to compare with: under qemu-user the
 * running kernel's BTF is native (an answer) or of the other byte order
 * (refused), which its magic tells.
 */
static void test_vmlinux(void **state)
{
	const char *path = "/sys/kernel/btf/vmlinux";
	uint16_t magic = 0;
	char buf[64];
	FILE *f = fopen(path, "r");

	if (!f)
		skip();
	assert_int_equal(fread(&magic, sizeof(magic), 1, f), 1);
	fclose(f);
	if (magic != BTF_MAGIC) {
		assert_int_equal(usdt__btf_ctx_name(path, buf, sizeof(buf)),
				 -EOPNOTSUPP);
		return;
	}
	assert_int_equal(usdt__btf_ctx_name(path, buf, sizeof(buf)), 0);
	assert_true(strstr(buf, "regs") != NULL);
}
#else
/* The running kernel's answer, as libbpf finds it by loading all of it. */
static void test_vmlinux(void **state)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	char buf[64];
	int id;

	if (!btf || access("/sys/kernel/btf/vmlinux", R_OK)) {
		btf__free(btf);
		skip();
	}
	/* Under qemu-user for the other byte order: not native, refused. */
	if (btf__endianness(btf) != (*(const uint8_t *)&(uint16_t){ 1 } ?
				     BTF_LITTLE_ENDIAN : BTF_BIG_ENDIAN)) {
		assert_int_equal(usdt__btf_ctx_name("/sys/kernel/btf/vmlinux",
						    buf, sizeof(buf)),
				 -EOPNOTSUPP);
		btf__free(btf);
		return;
	}
	id = btf__find_by_name_kind(btf, "bpf_user_pt_regs_t",
				    BTF_KIND_TYPEDEF);
	assert_true(id > 0);
	t = btf__type_by_id(btf, id);
	while (btf_is_typedef(t) || btf_is_mod(t))
		t = btf__type_by_id(btf, t->type);
	assert_true(btf_is_struct(t) || btf_is_union(t));
	assert_int_equal(usdt__btf_ctx_name("/sys/kernel/btf/vmlinux", buf,
					    sizeof(buf)), 0);
	assert_string_equal(buf, btf__name_by_offset(btf, t->name_off));
	btf__free(btf);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_header_len),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_vmlinux),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
