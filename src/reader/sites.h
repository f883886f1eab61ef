/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An ELF file's call sites as the library holds them: struct usdt_file
 * and struct usdt_probe, what the reader fills in (src/reader/noteidx.c,
 * src/reader/probe.c), src/reader/file.c opens and closes, and attach reads.
 */
#ifndef __LIBUSDT_SITES_H
#define __LIBUSDT_SITES_H

#include <time.h>

#include "reader/args.h"

struct usdt__index;
struct usdt__map_id;

/*
 * One call site. Strings point into the file's string storage.
 * Invariant: status < 0 implies arg_cnt == 0 and error != NULL. A probe
 * an attach picks (usdt__file_pick()) keeps only its arguments' specs,
 * and "" as its strings; usdt_file__probe()'s keep everything.
 */
struct usdt_probe {
	const char *provider;
	const char *name;
	const char *args_str;
	uint64_t vaddr;	     /* prelink-adjusted link-time address */
	uint64_t file_off;   /* uprobe offset */
	uint64_t sema_vaddr; /* 0 when none */
	uint64_t sema_off;   /* 0 when none */
	/* The semaphore is in .bss in the page that holds its segment's
	 * last file byte: the loader clears it after the kernel counted it
	 * at mmap, so a process that maps the file after the attach never
	 * sees the probe enabled (usdt__elf_sema_to_off()). */
	bool sema_cleared;
	int status;
	const char *error;
	int arg_cnt;
	struct usdt__arg *args;	     /* NULL in a picked probe */
	struct usdt_arg_spec *specs; /* a picked probe's: args[i].spec */
	/* Each argument's text, NUL-terminated, one after the other:
	 * what usdt_probe__arg() reports as str. */
	const char *arg_text;
	/* Owned: args_str, then room for arg_text (the arguments' texts are
	 * disjoint pieces of args_str, separated by at least one space, so
	 * they fit in strlen(args_str) + 1 bytes). */
	char *strs;
};

/*
 * An ELF file's call sites. A file opened from a path keeps its descriptor
 * (fd >= 0) until usdt_file__close(): everything an attach gives the
 * kernel (the file itself, as /proc/self/fd/N, and its offsets) comes
 * from that one open file, so renaming or replacing the path meanwhile
 * changes nothing. dev/ino/size/mtime are its fstat() at open; map, once
 * attach asks for it, says which lines of a process's maps are mappings
 * of it (the reader itself never reads /proc).
 * Every file has an index (idx) of where each name's notes are: an
 * attach builds the probes of the sites it matches (usdt__file_pick()),
 * usdt_file__probe() all of them, at its first call, kept in probes[].
 * Invariant: idx is NULL only without notes (probe_cnt 0); probes is
 * NULL or holds probe_cnt probes in note order, and once set stays.
 */
struct usdt_file {
	char *path;
	int fd;			 /* -1 for an image read from memory */
	struct usdt__index *idx; /* src/reader/noteidx.c */
	dev_t dev;
	ino_t ino;
	/* How maps shows the file: usdt__file_map_id()'s cache
	 * (src/proc/procmap.c), NULL until asked; a plain allocation. */
	struct usdt__map_id *map;
	off_t size;
	struct timespec mtime;
	uint16_t e_machine;
	uint16_t e_type;
	bool big_endian;
	const struct usdt__arch_ops *arch; /* NULL for an unknown machine */
	size_t probe_cnt;
	/* usdt_file__probe()'s (src/reader/file.c), NULL until asked; published
	 * with a compare and swap, as map. */
	struct usdt_probe *probes;
};

/* The BPF spec of argument i (< arg_cnt) of a good probe. */
static inline const struct usdt_arg_spec *
usdt__probe_spec(const struct usdt_probe *p, int i)
{
	return p->args ? &p->args[i].spec : &p->specs[i];
}

#endif /* __LIBUSDT_SITES_H */
