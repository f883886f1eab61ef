/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Table-driven checks for the operand parsers: an argument string, parsed
 * and resolved by usdt__arg_parse_one() for one call site, must give
 * exactly the expected kind, offset or value, register names and spec.
 *
 * Every case is also fed to the arch's parse_operand() directly, from a
 * heap buffer holding exactly the operand's bytes and no NUL: under ASan
 * (make SANITIZE=1) a read past the given length is a crash.
 */
#ifndef __LIBUSDT_ARCH_TEST_H
#define __LIBUSDT_ARCH_TEST_H

#include "test_util.h"
#include "base/internal.h"
#include "reader/arch_ops.h"
#include "reader/symtab.h"

/* Shorthands for the tables. */
#define NONE USDT_REG_NONE
#define SV USDT_SPEC_VALUE
#define SM USDT_SPEC_MEM
#define K_CONST USDT_ARG_CONST
#define K_REG USDT_ARG_REG
#define K_DEREF USDT_ARG_DEREF
#define K_INDEX USDT_ARG_INDEX
#define K_PCREL USDT_ARG_PCREL
#define K_ABS USDT_ARG_ABS
#define K_PCADDR USDT_ARG_PCADDR
#define F_S USDT_SPEC_F_SIGNED
#define F_IP USDT_SPEC_F_IPREL
#define F_FL USDT_SPEC_F_FLOAT
#define F_TR USDT_SPEC_F_TRUNC
#define F_SC(shift) ((shift) << USDT_SPEC_SCALE_SHIFT)

struct arg_case {
	const char *str;	/* one argument, "[-]SIZE[f]@OPERAND" */
	int site;		/* index into the test's call sites */
	enum usdt_arg_kind kind;
	int64_t offset;
	uint64_t value;
	const char *base;	/* NULL: no base register */
	const char *index;	/* NULL: no index register */
	int scale;
	const char *sym;	/* NULL: no symbol */
	/* The spec, field by field. */
	uint8_t sk, ssize, sflags;
	uint16_t sbase, sidx;
	uint64_t val_off;
};

/* A case that must come out USDT_ARG_UNSUPPORTED. */
struct bad_case {
	const char *str;
	const char *why;	/* a substring of the reason, or NULL */
};

static inline const char *arch_test_operand(const char *str)
{
	const char *at = strchr(str, '@');

	return at ? at + 1 : str;
}

/*
 * Run the arch's parser on exactly the operand's bytes. Its result must
 * agree with what usdt__arg_parse_one() saw: success or failure.
 */
static inline int arch_test_raw(const struct usdt__arch_ops *arch,
				const char *str, const struct usdt__arg *ref)
{
	const char *op = arch_test_operand(str);
	size_t len = strlen(op);
	struct usdt__arg arg;
	char *buf;
	int err;

	memset(&arg, 0, sizeof(arg));
	arg.size = ref->size;
	arg.is_signed = ref->is_signed;
	arg.is_float = ref->is_float;
	arg.base_off = -1;
	arg.idx_off = -1;
	buf = malloc(len ? len : 1);
	assert_non_null(buf);
	memcpy(buf, op, len);
	err = arch->parse_operand(buf, len, &arg);
	if (err)
		assert_true(arg.reason[0] != '\0');
	free(buf);
	return err;
}

static inline void check_arg_case(const struct usdt__site_ctx *site,
				  const struct arg_case *c)
{
	const char *s = c->str;
	struct usdt__arg a;
	char name[64];

	usdt__arg_parse_one(site, s, 0, strlen(s), &a);
	if (a.kind != c->kind)
		fail_msg("'%s': kind %s, want %s (reason: %s)", s,
			 usdt_arg_kind_str(a.kind), usdt_arg_kind_str(c->kind),
			 a.reason);
	if (a.reason[0])
		fail_msg("'%s': reason '%s' on success", s, a.reason);
	if (a.offset != c->offset)
		fail_msg("'%s': offset %#llx, want %#llx", s,
			 (unsigned long long)a.offset,
			 (unsigned long long)c->offset);
	if (a.value != c->value)
		fail_msg("'%s': value %#llx, want %#llx", s,
			 (unsigned long long)a.value,
			 (unsigned long long)c->value);
	if (strcmp(a.base, c->base ? c->base : ""))
		fail_msg("'%s': base '%s', want '%s'", s, a.base,
			 c->base ? c->base : "");
	if (strcmp(a.index, c->index ? c->index : ""))
		fail_msg("'%s': index '%s', want '%s'", s, a.index,
			 c->index ? c->index : "");
	if (c->index && a.scale != c->scale)
		fail_msg("'%s': scale %d, want %d", s, a.scale, c->scale);
	if (a.has_sym != !!c->sym)
		fail_msg("'%s': has_sym %d", s, a.has_sym);
	if (c->sym) {
		snprintf(name, sizeof(name), "%.*s", a.sym_len, s + a.sym_pos);
		if (strcmp(name, c->sym))
			fail_msg("'%s': symbol '%s', want '%s'", s, name,
				 c->sym);
	}
	if (a.spec.kind != c->sk || a.spec.size != c->ssize ||
	    a.spec.flags != c->sflags || a.spec.base_off != c->sbase ||
	    a.spec.idx_off != c->sidx || a.spec.val_off != c->val_off ||
	    a.spec.fast)
		fail_msg("'%s': spec {kind %u size %u flags %#x base %u idx %u "
			 "val_off %#llx}, want {%u %u %#x %u %u %#llx}", s,
			 a.spec.kind, a.spec.size, a.spec.flags,
			 a.spec.base_off, a.spec.idx_off,
			 (unsigned long long)a.spec.val_off, c->sk, c->ssize,
			 c->sflags, c->sbase, c->sidx,
			 (unsigned long long)c->val_off);
	if (arch_test_raw(site->arch, s, &a))
		fail_msg("'%s': parse_operand() fails on the exact bytes", s);
}

static inline void check_bad_case(const struct usdt__site_ctx *site,
				  const struct bad_case *c)
{
	struct usdt__arg a;

	usdt__arg_parse_one(site, c->str, 0, strlen(c->str), &a);
	if (a.kind != USDT_ARG_UNSUPPORTED)
		fail_msg("'%s': kind %s, want unsupported", c->str,
			 usdt_arg_kind_str(a.kind));
	assert_int_equal(a.spec.kind, USDT_SPEC_UNSUPPORTED);
	if (!a.reason[0])
		fail_msg("'%s': no reason", c->str);
	if (c->why && !strstr(a.reason, c->why))
		fail_msg("'%s': reason '%s' lacks '%s'", c->str, a.reason,
			 c->why);
	/* The raw parser may accept what resolution refuses; only make
	 * sure it neither crashes nor reads past the operand. */
	arch_test_raw(site->arch, c->str, &a);
}

#define CHECK_ARG_CASES(sites, cases)                                       \
	do {                                                                \
		size_t _i;                                                  \
		for (_i = 0; _i < sizeof(cases) / sizeof((cases)[0]); _i++) \
			check_arg_case(&(sites)[(cases)[_i].site], &(cases)[_i]); \
	} while (0)

#define CHECK_BAD_CASES(site, cases)                                        \
	do {                                                                \
		size_t _i;                                                  \
		for (_i = 0; _i < sizeof(cases) / sizeof((cases)[0]); _i++) \
			check_bad_case((site), &(cases)[_i]);               \
	} while (0)

#endif /* __LIBUSDT_ARCH_TEST_H */
