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
 * libusdt's section handler loads the program without function info.
 * obj is loaded.
 */
static inline bool shapes_per_call(struct bpf_object *obj)
{
	struct bpf_program *prog = bpf_object__next_program(obj, NULL);
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	struct btf *btf;
	bool per_call;
	int id;

	memset(&info, 0, sizeof(info));
	assert_non_null(prog);
	assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info,
						&len), 0);
	if (!info.nr_func_info)
		return true;
	btf = btf__load_from_kernel_by_id(info.btf_id);
	assert_non_null(btf);
	id = btf__find_by_name_kind(btf, "usdt__arg", BTF_KIND_FUNC);
	assert_true(id > 0);
	per_call = btf_vlen(btf__type_by_id(btf, id)) == BTF_FUNC_STATIC;
	btf__free(btf);
	return per_call;
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
