// SPDX-License-Identifier: BSD-2-Clause
/*
 * TEMPORARY: weak stand-ins for the parts of include/usdt.h that the
 * library does not define yet (the note reader and the manager are being
 * written in parallel), so that the tool links and fails at run time with
 * ENOSYS instead of breaking the build. The library's archive is linked
 * whole (see tools/tools.mk), so its strong definitions replace these as
 * soon as they exist. Delete this file once main has the whole API.
 */
#include <errno.h>

#include "usdt.h"

#define WEAK __attribute__((weak))

WEAK const char *usdt_file__path(const struct usdt_file *f) { return NULL; }
WEAK int usdt_file__machine(const struct usdt_file *f) { return 0; }
WEAK const char *usdt_file__arch_name(const struct usdt_file *f) { return NULL; }
WEAK bool usdt_file__is_dyn(const struct usdt_file *f) { return false; }
WEAK size_t usdt_file__probe_cnt(const struct usdt_file *f) { return 0; }
WEAK const struct usdt_probe *usdt_file__probe(const struct usdt_file *f,
					       size_t i)
{
	errno = ENOSYS;
	return NULL;
}
WEAK const char *usdt_probe__provider(const struct usdt_probe *p) { return ""; }
WEAK const char *usdt_probe__name(const struct usdt_probe *p) { return ""; }
WEAK uint64_t usdt_probe__address(const struct usdt_probe *p) { return 0; }
WEAK uint64_t usdt_probe__file_offset(const struct usdt_probe *p) { return 0; }
WEAK uint64_t usdt_probe__semaphore(const struct usdt_probe *p) { return 0; }
WEAK uint64_t usdt_probe__semaphore_offset(const struct usdt_probe *p) { return 0; }
WEAK const char *usdt_probe__args_str(const struct usdt_probe *p) { return ""; }
WEAK int usdt_probe__status(const struct usdt_probe *p) { return -ENOSYS; }
WEAK const char *usdt_probe__error(const struct usdt_probe *p) { return "ENOSYS"; }
WEAK int usdt_probe__arg_cnt(const struct usdt_probe *p) { return 0; }
WEAK int usdt_probe__arg(const struct usdt_probe *p, int i,
			 struct usdt_arg_info *info)
{
	errno = ENOSYS;
	return -ENOSYS;
}
WEAK struct usdt_manager *usdt_manager__new(struct bpf_object *obj,
					    const struct usdt_manager_opts *o)
{
	errno = ENOSYS;
	return NULL;
}
WEAK void usdt_manager__free(struct usdt_manager *man) { }
WEAK struct usdt_link *
usdt_manager__attach(struct usdt_manager *man, const struct bpf_program *prog,
		     pid_t pid, const char *path, const char *provider,
		     const char *name, const struct usdt_attach_opts *opts)
{
	errno = ENOSYS;
	return NULL;
}
WEAK int usdt_link__destroy(struct usdt_link *link) { return 0; }
WEAK size_t usdt_link__site_cnt(const struct usdt_link *l) { return 0; }
WEAK size_t usdt_link__spec_cnt(const struct usdt_link *l) { return 0; }
WEAK bool usdt_link__is_multi(const struct usdt_link *l) { return false; }
