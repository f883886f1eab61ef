// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the argument parsers: the splitter, the prefix
 * parser, the four arch operand parsers and resolution.
 *
 * Input: one control byte, then argument text. The control byte picks
 *   bits 0-1  the arch (x86_64, arm64, s390x, riscv64),
 *   bit 2     an ET_DYN call site,
 *   bit 3     a big-endian call site,
 *   bit 7     no symbol table;
 * printable digits '0'..'3' are the four arches on an ET_EXEC site, so
 * seed files stay readable.
 *
 * Each input goes through parse_operand() from a heap buffer of exactly
 * its bytes (no NUL, so ASan sees any read past the length), and through
 * usdt__args_parse() on a NUL-terminated copy. The invariants of struct
 * usdt__arg are checked, and a violation aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "reader/arch_ops.h"
#include "reader/symtab.h"

static const struct usdt__arch_ops *const arches[4] = {
	&usdt__arch_x86_64,
	&usdt__arch_arm64,
	&usdt__arch_s390x,
	&usdt__arch_riscv64,
};

static struct usdt__symtab *symtab;

#define CHECK(c)                                                            \
	do {                                                                \
		if (!(c)) {                                                 \
			fprintf(stderr, "fuzz_args: %s:%d: %s\n", __FILE__, \
				__LINE__, #c);                              \
			abort();                                            \
		}                                                           \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const names[] = { "counter.0", "sv", "buf",
					     "a$b", ".LC0", "x", "dup" };
	size_t i;

	usdt_set_print(NULL);
	symtab = usdt__symtab_new();
	CHECK(symtab);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(!usdt__symtab_add(symtab, names[i], 0x404000 + i * 8, 0));
	CHECK(!usdt__symtab_add(symtab, "dup", 0x405000, 0));
	CHECK(!usdt__symtab_add(symtab, "ext", 0, 0x403ff0));
	return 0;
}

static bool name_ok(const char *name)
{
	return memchr(name, '\0', 8) != NULL;
}

static void check_raw(const struct usdt__arch_ops *arch, const uint8_t *data,
		      size_t len)
{
	struct usdt__arg arg;
	char *buf = malloc(len ? len : 1);
	int err;

	CHECK(buf);
	memcpy(buf, data, len);
	memset(&arg, 0, sizeof(arg));
	arg.size = 8;
	arg.base_off = -1;
	arg.idx_off = -1;
	err = arch->parse_operand(buf, len, &arg);
	CHECK(err == 0 || err == -EINVAL || err == -EOPNOTSUPP);
	CHECK(memchr(arg.reason, '\0', sizeof(arg.reason)));
	if (err) {
		CHECK(arg.reason[0]);
	} else {
		CHECK(!arg.reason[0]);
		CHECK(arg.size == 8);
		CHECK(name_ok(arg.base) && name_ok(arg.index));
		CHECK(arg.base_off >= -1 && arg.base_off < arch->pt_regs_size);
		CHECK(arg.idx_off >= -1 && arg.idx_off < arch->pt_regs_size);
		CHECK(!arg.base[0] == (arg.base_off < 0));
		CHECK(!arg.index[0] == (arg.idx_off < 0));
		if (arg.idx_off >= 0)
			CHECK(arg.scale == 1 || arg.scale == 2 ||
			      arg.scale == 4 || arg.scale == 8);
		if (arg.has_sym)
			CHECK(arg.sym_len > 0 &&
			      (size_t)arg.sym_pos + arg.sym_len <= len);
	}
	free(buf);
}

/* The fast code the manager would write keeps the spec's size and sign,
 * and names a whole register of the context only for a bare register. */
static void check_fast(const struct usdt__site_ctx *site,
		       const struct usdt_arg_spec *spec)
{
	unsigned int fast = usdt__arg_fast(spec);

	CHECK((fast & USDT_FAST_SHIFT_MASK) == 64 - 8u * spec->size);
	CHECK((fast & USDT_FAST_ERRNO_MASK) ==
	      (spec->flags & USDT_SPEC_F_TRUNC ? E2BIG : 0));
	CHECK(!(fast & USDT_FAST_SIGNED) == !(spec->flags & USDT_SPEC_F_SIGNED));
	if (fast & USDT_FAST_REG)
		CHECK(spec->kind == USDT_SPEC_VALUE && !spec->val_off &&
		      spec->base_off % 8 == 0 &&
		      spec->base_off + 8u <= site->arch->pt_regs_size &&
		      spec->idx_off == USDT_REG_NONE &&
		      !(spec->flags & USDT_SPEC_F_IPREL));
}

static void check_arg(const struct usdt__site_ctx *site, const char *str,
		      const struct usdt__arg *a)
{
	size_t n = strlen(str);

	CHECK((size_t)a->str_pos + a->str_len <= n);
	CHECK(memchr(a->reason, '\0', sizeof(a->reason)));
	CHECK(a->spec.size == 1 || a->spec.size == 2 || a->spec.size == 4 ||
	      a->spec.size == 8);
	CHECK(!a->spec.fast);
	if (a->kind == USDT_ARG_UNSUPPORTED) {
		CHECK(a->reason[0]);
		CHECK(a->spec.kind == USDT_SPEC_UNSUPPORTED);
		CHECK(!usdt__arg_fast(&a->spec));
		/* bpf_usdt_arg_size() says the size written. */
		CHECK(a->spec.val_off == (uint64_t)a->size);
		return;
	}
	CHECK(!(a->spec.flags & USDT_SPEC_F_TRUNC) == (a->size != 16));
	check_fast(site, &a->spec);
	CHECK(a->kind >= USDT_ARG_CONST && a->kind < USDT_ARG_UNSUPPORTED);
	CHECK(!a->reason[0]);
	CHECK(a->size == 1 || a->size == 2 || a->size == 4 || a->size == 8 ||
	      a->size == 16);
	CHECK(a->spec.kind == USDT_SPEC_VALUE || a->spec.kind == USDT_SPEC_MEM);
	CHECK(a->spec.base_off == USDT_REG_NONE ||
	      a->spec.base_off < site->arch->pt_regs_size);
	CHECK(a->spec.idx_off == USDT_REG_NONE ||
	      a->spec.idx_off < site->arch->pt_regs_size);
	if (a->has_sym)
		CHECK((size_t)a->sym_pos + a->sym_len <= n);
	if (a->kind == USDT_ARG_CONST)
		CHECK(a->spec.kind == USDT_SPEC_VALUE &&
		      a->spec.base_off == USDT_REG_NONE &&
		      a->spec.idx_off == USDT_REG_NONE);
	if (a->kind == USDT_ARG_REG)
		CHECK(a->spec.kind == USDT_SPEC_VALUE &&
		      a->spec.base_off != USDT_REG_NONE);
	if (a->kind == USDT_ARG_PCREL || a->kind == USDT_ARG_PCADDR)
		CHECK((a->spec.flags & USDT_SPEC_F_IPREL) &&
		      a->spec.base_off == USDT_REG_NONE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct usdt__site_ctx site = { 0 };
	struct usdt__arg *args = NULL, one;
	const char *why;
	char *str;
	int cnt, err, i;

	if (!size)
		return 0;
	site.arch = arches[data[0] & 3];
	site.is_dyn = data[0] & 4;
	site.big_endian = data[0] & 8;
	site.symtab = data[0] & 0x80 ? NULL : symtab;
	site.vaddr = 0x401000;
	data++;
	size--;

	check_raw(site.arch, data, size);

	str = strndup((const char *)data, size);
	CHECK(str);
	err = usdt__args_parse(&site, str, &args, &cnt, &why);
	if (err) {
		CHECK(err == -EINVAL || err == -E2BIG || err == -ENOMEM);
		CHECK(why && !args && !cnt);
	} else {
		CHECK(cnt >= 0 && cnt <= USDT_MAX_ARG_CNT);
		CHECK(!cnt == !args);
		for (i = 0; i < cnt; i++)
			check_arg(&site, str, &args[i]);
	}
	free(args);

	/* The whole text as one argument, as the splitter would pass it. */
	if (strlen(str) <= UINT16_MAX) {
		usdt__arg_parse_one(&site, str, 0, strlen(str), &one);
		check_arg(&site, str, &one);
	}
	free(str);
	return 0;
}
