/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verifier-cost shapes (tests/kernel/shapes.bpf.c, built as
 * shapes-VARIANT.bpf.o), opened with a manager as a user would: shared by
 * test_verifier and test_storage. Include after test_util.h.
 */
#ifndef __LIBUSDT_TEST_SHAPES_H
#define __LIBUSDT_TEST_SHAPES_H

#include <stdbool.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "usdt.h"

/*
 * Was the reader loaded to be verified per call? Where the kernel would
 * not take its argument for the context (a cross build with another
 * arch's vmlinux.h, or a kernel without BTF: Debian's s390x 6.1), a
 * manager made before load makes the header's functions static in the
 * object's BTF, and the program loads with it; without a manager,
 * libusdt's section handler loads it with a copy of that BTF in which
 * they are static (or, failing that, without function info).
 * obj is loaded.
 */
static inline bool shapes_per_call(struct bpf_object *obj)
{
	struct bpf_program *prog = bpf_object__next_program(obj, NULL);
	__u32 funcs;

	assert_non_null(prog);
	return usdt_test_func_linkage(prog, "usdt__arg", &funcs) !=
	       BTF_FUNC_GLOBAL;
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
