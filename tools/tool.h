/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared by the `usdt` tool's source files. The tool is built on the public
 * API of include/usdt.h, the way any user's program would be, and on one
 * private header of the library's, src/usdt_tool.h, which says what else
 * of the library's it uses and why (one process layer, one path resolver,
 * one matcher). No tool file includes another header of src/.
 */
#ifndef __USDT_TOOL_H
#define __USDT_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "usdt.h"

/* The program name for messages ("usdt"). */
extern const char *tool_name;

/* One line on stderr, "usdt: ...", and the exit status 1 to return. */
int tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Patterns. "PROVIDER:NAME" with fnmatch() globs in either half; a bare
 * "PROVIDER" means "PROVIDER:*". No pattern at all matches everything.
 */
struct pattern {
	char *provider;
	char *name;
	bool bare; /* written without ':' */
	bool used; /* some probe matched it */
};

int patterns_parse(char **argv, int argc, struct pattern **out, int *cnt);
void patterns_free(struct pattern *pats, int cnt);
/* The pattern that provider:name matches first, or NULL. With cnt == 0
 * every probe matches and a static catch-all is returned. */
struct pattern *patterns_match(struct pattern *pats, int cnt,
			       const char *provider, const char *name);

/*
 * What a bare word W (p->bare) names in file: BARE_PROVIDER when a
 * provider of file matches W, else BARE_NAME when probes of a name W
 * matches exist (*seen: the provider of the first; *others incremented
 * for each probe of another provider), else BARE_NONE. Where no file has a
 * provider W, W means "*:W" (usdt list decides per file, usdt trace for
 * all the files of a TARGET).
 */
enum bare_kind { BARE_NONE, BARE_NAME, BARE_PROVIDER };
struct usdt_file;
enum bare_kind pattern_bare_scan(const struct pattern *p,
				 struct usdt_file *file, const char **seen,
				 size_t *others);

/*
 * A file to read, as the user sees it (shown) and as this process opens it
 * (open_path: through /proc/PID/root/ for another process's files). One
 * that targets_of_pid() found has no open_path but the mapping it came
 * from (map, owned), whose file target_open() finds.
 */
struct target_map;
struct target {
	char *shown;
	char *open_path;
	struct target_map *map;
};

/*
 * Resolve TARGET like the dynamic loader would: a path containing '/' is
 * used as is (through /proc/PID/root when pid > 0 and it is absolute); a
 * bare name is looked for first among the files pid has mapped, then in
 * the current directory, LD_LIBRARY_PATH, the loader's cache and the
 * standard directories. Returns 0 or a negative errno (-ENOENT).
 */
int target_resolve(const char *name, pid_t pid, struct target *out);
void target_free(struct target *t);
/* Has pid mapped a file whose base name answers to name ("libc.so.6", or
 * "libc" for it)? */
bool target_is_mapped(const char *name, pid_t pid);

/*
 * Every distinct file-backed mapping of pid (from /proc/PID/maps), in
 * the order of first appearance, shown as maps shows it ("PATH
 * (deleted)" for a file deleted since). Nothing is opened. Returns the
 * count or a negative errno.
 */
int targets_of_pid(pid_t pid, struct target **out);
void targets_free(struct target *t, int cnt);
/*
 * Open t's file: open_path, or for a file of targets_of_pid() the file
 * mapped there, as the process sees it, through /proc/PID/map_files/ if
 * no path reaches it. NULL with errno (ENOENT: no way to it is that file).
 */
struct usdt_file *target_open(const struct target *t);

/*
 * Hashing of names that other users choose (a traced process's file
 * names, a file's probe names): a polynomial modulo the prime 2^61 - 1 at
 * a base drawn at random once per run, so that two distinct names of n
 * bytes collide with probability at most n / 2^61 and no name can be
 * chosen to collide. tool_hash_step() adds c to h, which starts at 0: a
 * byte, 256 as a separator no byte equals, or 4 bytes at once (any c
 * below 2^32; the length, told apart otherwise, must then fix where the
 * words are).
 */
uint64_t tool_hash_step(uint64_t h, unsigned int c);

/*
 * A set of strings, by value; the strings are borrowed (they must outlive
 * their place in it). Zeroed, it is empty. name_set_add(): 1 if name was
 * added, 0 if it was there, -ENOMEM.
 */
struct name_set {
	const char **slots; /* NULL: empty */
	size_t mask;	    /* slots - 1 */
	size_t cnt;
};
bool name_set_has(const struct name_set *s, const char *name);
int name_set_add(struct name_set *s, const char *name);
void name_set_free(struct name_set *s);

/* Print s as a JSON string, with quotes and escapes. NULL prints null. */
void json_str(FILE *f, const char *s);

/*
 * Text output of bytes from files other users control (probe names,
 * argument strings, paths): printable ASCII as is, backslash doubled,
 * everything else as \n, \t or \xNN, so nothing reaches a terminal that
 * it would act on. Returns the number of characters printed.
 * escaped_len() is that number without printing (for column widths).
 */
size_t print_escaped(FILE *f, const char *s, size_t len);
size_t escaped_len(const char *s, size_t len);

/* "int32", "uint8", "double", ... for an argument's size and kind. */
const char *arg_type_name(const struct usdt_arg_info *a);

/*
 * An errno (negative or positive) as text, by libusdt's usdt_strerror(),
 * which also names the kernel's ENOTSUPP (524) that libc does not know.
 * The text is in a static buffer: one call per message.
 */
const char *tool_strerror(int err);

/*
 * Why target t (a file the user named, or one a process maps) could not
 * be opened, from target_open()'s errno (negative or positive): ENOEXEC,
 * which the library gives for anything but a regular 64-bit ELF file,
 * says which of the two t is not.
 */
const char *tool_open_error(const struct target *t, int err);

/*
 * Standard output, shared by the commands so that both fail alike.
 * stdout_closed(): with fd 1 closed (>&-), the next open() would take it
 * and the output would go into that file, or fail unseen; it says so
 * ("CMD: writing the output: standard output is closed") and returns the
 * exit status 1, or returns 0. stdout_flush(): 0, or the errno of a write
 * to stdout that failed, now or earlier (the stream's error flag stays).
 */
int stdout_closed(const char *cmd);
int stdout_flush(void);

/* Parse a pid; returns it or -1. */
pid_t parse_pid(const char *s);
/*
 * Is pid a live process that -p can take? 0, or 1 with why (a tool_err
 * line was printed, prefixed by cmd): no such process, a zombie, or a
 * thread of another process (uprobes filter by process).
 */
int pid_check(const char *cmd, pid_t pid);

int cmd_list(int argc, char **argv);
int cmd_trace(int argc, char **argv);

#endif /* __USDT_TOOL_H */
