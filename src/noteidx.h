/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The index of a compact file (src/noteidx.c): built when the file is
 * read, and picking the sites of a name from it at attach.
 */
#ifndef __LIBUSDT_NOTEIDX_H
#define __LIBUSDT_NOTEIDX_H

#include "probe.h"

/* The compact file's index (src/noteidx.c): built from the walk of the
 * section at file_off, of size bytes. Returns 0 or a negative errno. */
int usdt__index_build(const struct usdt__elf *ue, int fd, uint64_t file_off,
		      size_t size, size_t align,
		      const struct usdt__stapsdt_base *base,
		      struct usdt_file *file);
void usdt__index_free(struct usdt__index *idx);

/*
 * The call sites of a compact file whose provider and name match the shell
 * globs, in usdt__file_match()'s order, read from the file now: *out
 * (*cnt of them, each with its specs, not its arguments; free with
 * usdt__probes_free()). Costs the matching sites, not the file. Returns 0
 * (*cnt may be 0), -ENOMEM, -E2BIG for more than USDT__MAX_ARGS
 * arguments in all, or the error of opening the file again with libelf
 * for its symbols (src/noteidx.c).
 */
int usdt__file_pick(const struct usdt_file *file, const char *provider,
		    const char *name, struct usdt_probe **out, size_t *cnt);
void usdt__probes_free(struct usdt_probe *probes, size_t cnt);

#endif /* __LIBUSDT_NOTEIDX_H */
