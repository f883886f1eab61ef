/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The reader (src/reader/noteidx.c): a file's index of its notes by name, built
 * when the file is read, and the probes built from it, those a name picks
 * or all of them.
 */
#ifndef __LIBUSDT_NOTEIDX_H
#define __LIBUSDT_NOTEIDX_H

#include "reader/probe.h"

/*
 * The file's index, from the walk of the section at file_off (size bytes)
 * of the file open at fd, which the index reads its notes from again
 * later (and closes with itself if own_fd). Returns 0 or a negative
 * errno.
 */
int usdt__index_build(const struct usdt__elf *ue, int fd, bool own_fd,
		      uint64_t file_off, size_t size, size_t align,
		      const struct usdt__stapsdt_base *base,
		      struct usdt_file *file);
void usdt__index_free(struct usdt__index *idx);

/*
 * The call sites of the file whose provider and name match the shell
 * globs, grouped by name (sorted by provider, then name) and in note
 * order within a name, read from the file now: *out (*cnt of them, each
 * with its specs, not its arguments or strings; free with
 * usdt__probes_free()). A pattern without glob characters costs a
 * binary search, not a scan; the probes cost the matching sites, not the
 * file. Returns 0 (*cnt may be 0), -ENOMEM, -E2BIG for more than
 * USDT__MAX_ARGS arguments in all, or the error of opening the file again
 * with libelf for its symbols. Reads the file only: callers may share it
 * between threads.
 */
int usdt__file_pick(const struct usdt_file *file, const char *provider,
		    const char *name, struct usdt_probe **out, size_t *cnt);

/*
 * The same sites a batch at a time, so that what an attach holds is a
 * batch's probes, not every site's: usdt__pick_begin() says how many
 * match (*cnt; with none, *out is NULL), usdt__pick_next() builds up to
 * max more into probes[] (returns how many, 0 at the end, or the error,
 * as usdt__file_pick(); USDT__MAX_ARGS counts over the whole walk); free
 * their contents with usdt__probes_clear() before the next batch.
 */
struct usdt__pick;
int usdt__pick_begin(const struct usdt_file *file, const char *provider,
		     const char *name, struct usdt__pick **out, size_t *cnt);
long usdt__pick_next(struct usdt__pick *p, struct usdt_probe *probes,
		     size_t max);
void usdt__pick_end(struct usdt__pick *p);

/*
 * Every call site of the file, in note order (file->probe_cnt of them),
 * read from the file now: *out (NULL for none). Returns as
 * usdt__file_pick().
 */
int usdt__file_probes(const struct usdt_file *file, struct usdt_probe **out);
void usdt__probes_free(struct usdt_probe *probes, size_t cnt);
/* What usdt__probes_free() frees but the array. */
void usdt__probes_clear(struct usdt_probe *probes, size_t cnt);

#endif /* __LIBUSDT_NOTEIDX_H */
