/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verifier-cost shapes (tests/kernel/shapes.bpf.c, built as
 * shapes-VARIANT.bpf.o), opened with a manager as a user would: shared by
 * test_verifier and test_storage. Include after test_util.h.
 */
#ifndef __LIBUSDT_TEST_SHAPES_H
#define __LIBUSDT_TEST_SHAPES_H

#include <stdbool.h>
#include <bpf/btf.h>

#include "usdt.h"

/*
 * Did the manager make the reader static, verified per call? It does
 * where the kernel would not take its argument for the context: a cross
 * build with another arch's vmlinux.h, or a kernel without BTF (Debian's
 * s390x 6.1).
 */
static inline bool shapes_per_call(struct bpf_object *obj)
{
	const struct btf *btf = bpf_object__btf(obj);
	int id = btf__find_by_name_kind(btf, "usdt__arg", BTF_KIND_FUNC);

	assert_true(id > 0);
	return btf_vlen(btf__type_by_id(btf, id)) == BTF_FUNC_STATIC;
}

/* shapes-VARIANT.bpf.o opened, with a manager in *man, not loaded. */
static inline struct bpf_object *shapes_open(const char *variant,
					     struct usdt_manager **man)
{
	char path[256];
	struct bpf_object *obj;

	snprintf(path, sizeof(path), USDT_OBJDIR "/tests/kernel/shapes-%s.bpf.o",
		 variant);
	obj = bpf_object__open_file(path, NULL);
	assert_non_null(obj);
	*man = usdt_manager__new(obj, NULL);
	assert_non_null(*man);
	return obj;
}

#endif
