/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The reader as the rest of the library sees it: an ELF file's call
 * sites (struct usdt_file, struct usdt_probe), opening a file, and
 * finding its sites by provider and name (src/file.c, src/note.c,
 * src/noteidx.c).
 */
#ifndef __LIBUSDT_FILE_H
#define __LIBUSDT_FILE_H

#include <time.h>

#include "args.h"

struct usdt__index;
struct usdt__map_id;

/*
 * One call site. Strings point into the file's string storage.
 * Invariant: status < 0 implies arg_cnt == 0 and error != NULL.
 */
struct usdt_probe {
	const char *provider;
	const char *name;
	const char *args_str;
	uint64_t vaddr;		/* prelink-adjusted link-time address */
	uint64_t file_off;	/* uprobe offset */
	uint64_t sema_vaddr;	/* 0 when none */
	uint64_t sema_off;	/* 0 when none */
	int status;
	const char *error;
	int arg_cnt;
	struct usdt__arg *args;		/* NULL in a compact file */
	struct usdt_arg_spec *specs;	/* a compact file's: args[i].spec */
	/* Each argument's text, NUL-terminated, one after the other:
	 * what usdt_probe__arg() reports as str. */
	const char *arg_text;
};

/*
 * An ELF file's call sites. A file opened from a path keeps its descriptor
 * (fd >= 0) until usdt_file__close(): everything an attach gives the
 * kernel (the file itself, as /proc/self/fd/N, and its offsets) comes
 * from that one open file, so renaming or replacing the path meanwhile
 * changes nothing. dev/ino/size/mtime are its fstat() at open; map, once
 * attach asks for it, says which lines of a process's maps are mappings
 * of it (the reader itself never reads /proc).
 * Invariant: names[] holds each index in [0, probe_cnt) once, sorted by
 * provider, then name, then index. A compact file has no probes[]: its
 * index (idx) says where each name's notes are, and an attach builds the
 * probes of the sites it matches (usdt__file_pick()).
 */
struct usdt_file {
	char *path;
	int fd;			/* -1 for an image read from memory */
	bool compact;		/* read for attaching only: an index of the
				 * notes by name, no probes */
	struct usdt__index *idx;	/* a compact file's (src/noteidx.c) */
	dev_t dev;
	ino_t ino;
	/* How maps shows the file: usdt__file_map_id()'s cache
	 * (src/procmap.c), NULL until asked; a plain allocation. */
	struct usdt__map_id *map;
	off_t size;
	struct timespec mtime;
	uint32_t *names;
	uint16_t e_machine;
	uint16_t e_type;
	bool big_endian;
	const struct usdt__arch_ops *arch; /* NULL for an unknown machine */
	size_t probe_cnt;
	struct usdt_probe *probes;
	void *storage;		/* strings the probes point into */
};

/*
 * usdt_file__open() for an ELF image in memory (the fuzzer's entry point);
 * name is only used in messages. Returns the file, or NULL with errno.
 */
struct usdt_file *usdt__file_open_mem(const void *buf, size_t size,
				      const char *name);

/*
 * Open path for reading without blocking or taking a terminal, and check
 * that it is a regular file. Returns the descriptor, -ENOEXEC for anything
 * else than a regular file, or open()'s error.
 */
int usdt__open_regular(const char *path);

/*
 * Read the call sites of the regular file open at fd (taken over: the
 * file keeps it, or it is closed on error); path is for messages. A
 * compact file keeps only an index of its notes by name (about 4 bytes a
 * call site), for usdt__file_pick(). Returns 0 or a negative errno.
 */
int usdt__file_open_fd(int fd, const char *path, bool compact,
		       struct usdt_file **out);

/* The BPF spec of argument i (< arg_cnt) of a good probe. */
static inline const struct usdt_arg_spec *
usdt__probe_spec(const struct usdt_probe *p, int i)
{
	return p->args ? &p->args[i].spec : &p->specs[i];
}

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

/*
 * Call the callback for every call site whose provider and name match the
 * shell globs, grouped by name and in note order within a name. A pattern
 * without glob characters costs a binary search, not a scan. Stops at and
 * returns the first nonzero result of fn, else the number of matches.
 */
typedef int (*usdt__match_fn)(const struct usdt_probe *p, void *ctx);
long usdt__file_match(const struct usdt_file *file, const char *provider,
		      const char *name, usdt__match_fn fn, void *ctx);

#endif /* __LIBUSDT_FILE_H */
