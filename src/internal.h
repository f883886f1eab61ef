/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internal declarations shared by the library's source files: logging,
 * opts handling, error conversion, and the types that flow from the note
 * reader through the arch parsers to the manager.
 */
#ifndef __LIBUSDT_INTERNAL_H
#define __LIBUSDT_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "usdt.h"
#include "../bpf/usdt_spec.h"

#ifndef EM_RISCV
#define EM_RISCV 243
#endif

#define USDT__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------------- */
/* Logging (src/log.c). Messages start with "usdt: ".                     */

__attribute__((format(printf, 2, 3)))
void usdt__pr(enum usdt_print_level level, const char *fmt, ...);

#define pr_warn(fmt, ...) usdt__pr(USDT_WARN, "usdt: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) usdt__pr(USDT_INFO, "usdt: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) usdt__pr(USDT_DEBUG, "usdt: " fmt, ##__VA_ARGS__)

/* strerror() of a negative or positive errno, in a static per-thread buffer. */
const char *usdt__errstr(int err);

/* ---------------------------------------------------------------------- */
/* Errors: pass negative errnos inside, convert once at the exported call. */

static inline int usdt__err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

static inline void *usdt__err_ptr(int err)
{
	errno = err < 0 ? -err : err;
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Opts (the user's struct may be older or newer than ours).              */

/* True if every byte of opts from our_sz to user_sz is zero. */
bool usdt__opts_tail_zero(const void *opts, size_t our_sz, size_t user_sz);

/*
 * Valid opts of struct TYPE: sz covers at least sz itself, and every byte
 * the user passed past TYPE##__last_field's end is zero: the struct's own
 * padding before its `size_t :0` (a field a later version may add there)
 * as well as a newer, longer struct's tail. As libbpf's OPTS_VALID.
 */
#define USDT__OFFSETOFEND(type, field)                                      \
	(offsetof(struct type, field) + sizeof(((struct type *)0)->field))
#define OPTS_VALID(opts, type)                                              \
	(!(opts) ||                                                         \
	 ((opts)->sz >= USDT__OFFSETOFEND(type, sz) &&                      \
	  usdt__opts_tail_zero((opts), USDT__OFFSETOFEND(type, type##__last_field), \
			       (opts)->sz)))
#define OPTS_HAS(opts, field)                                               \
	((opts) && (opts)->sz >= offsetof(typeof(*(opts)), field) +         \
				      sizeof((opts)->field))
#define OPTS_GET(opts, field, fallback)                                     \
	(OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/* calloc-style overflow check for realloc. */
static inline void *usdt__reallocarray(void *ptr, size_t nmemb, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(nmemb, size, &total))
		return NULL;
	return realloc(ptr, total ? total : 1);
}

/* ---------------------------------------------------------------------- */
/* Arguments                                                              */

/*
 * One argument of a call site, from its text to its BPF spec.
 *
 * The generic splitter (src/args.c) fills the size fields and the text
 * span; the arch parser fills the operand fields (syntax only: it knows
 * registers, not symbols); resolution (src/args.c) turns a symbol into an
 * address using the ELF file and fills kind, spec and offset/value.
 *
 * Invariant: when kind == USDT_ARG_UNSUPPORTED, reason is non-empty and
 * spec.kind == USDT_SPEC_UNSUPPORTED; otherwise reason is empty.
 */
struct usdt__arg {
	/* From the "[-]SIZE[f]@" prefix. */
	int size;		/* 1, 2, 4, 8 or 16; as written (0-9999)
				 * when unsupported for its size */
	bool is_signed;
	bool is_float;
	uint16_t str_pos, str_len; /* the whole argument in the args string */

	/* From the arch parser. */
	bool mem;		/* the operand is memory at the address */
	bool pcrel;		/* base is the PC (x86 %rip) */
	bool got;		/* sym@GOTPCREL(%rip): value is &sym */
	bool has_sym;		/* the operand names a symbol (sym_pos/len) */
	bool sym_obj8;		/* s390x "8@sym": the value of an 8-byte
				 * object, else the address (resolution) */
	char base[8];		/* register names as written, "" for none */
	char index[8];
	int base_off;		/* pt_regs byte offsets, -1 for none */
	int idx_off;
	int scale;		/* 1, 2, 4 or 8 with an index, else 0 */
	int64_t disp;		/* displacement, or the constant itself */
	uint16_t sym_pos, sym_len; /* the symbol in the args string */
	uint8_t idx_ext;	/* USDT__IDX_*: how a 32-bit index extends */
	uint8_t lo_reloc;	/* USDT__LO_*: the operand holds only the low
				 * bits of the symbol's address; the base
				 * register holds the rest (adrp, lui) */

	/* From resolution. */
	char read_base[8];	/* the register read when not base: s390x
				 * 16-byte pairs read rN+1 */
	int64_t read_adj;	/* added to the written offset to read: 8 for
				 * a 16-byte memory operand on big-endian */
	enum usdt_arg_kind kind;
	int64_t offset;		/* as in struct usdt_arg_info */
	uint64_t value;
	struct usdt_arg_spec spec;
	char reason[96];
};

enum {
	USDT__IDX_64 = 0,	/* the whole register */
	USDT__IDX_SXTW,		/* low 32 bits, sign-extended (arm64 sxtw) */
	USDT__IDX_UXTW,		/* low 32 bits, zero-extended (arm64 uxtw) */
};

enum {
	USDT__LO_NONE = 0,
	USDT__LO_AARCH64,	/* :lo12:sym, bits 0-11, unsigned */
	USDT__LO_RISCV,		/* %lo(sym), bits 0-11, sign-extended */
};

/*
 * Operand parser of one architecture: parse op[0..len) (not NUL-terminated;
 * a pointer into the args string, which is) and fill the operand fields of
 * arg. On a form it cannot read, return -EINVAL (or -ENOTSUP for a form it
 * recognises but cannot support, like vector registers) and write why in
 * arg->reason. Size fields are already set; a parser may read them (x86
 * checks the register width against the size) but must not change them.
 */
typedef int (*usdt__parse_operand_fn)(const char *op, size_t len,
				      struct usdt__arg *arg);

struct usdt__code;

struct usdt__arch_ops {
	uint16_t e_machine;
	const char *name;		/* "x86_64", "aarch64", ... */
	usdt__parse_operand_fn parse_operand;
	/*
	 * Byte offset in the arch's kernel struct pt_regs of the register
	 * name[0..len), and its width in bytes in *width (may be NULL);
	 * -ENOENT if the name is not a general-purpose register.
	 */
	int (*reg_off)(const char *name, size_t len, int *width);
	/*
	 * Optional: how many bytes past a call site's address to put the
	 * uprobe, given the instruction bytes there (insn[0..len)); NULL
	 * means 0. x86 skips the nop of a "nop; nop5" site so the kernel
	 * can optimise the uprobe on the nop5.
	 */
	int (*attach_skip)(const unsigned char *insn, size_t len);
	/*
	 * Optional: for an operand that adds the low bits of a compiler-local
	 * label to a base register ("[x1, #:lo12:.LANCHOR0]"), recover those
	 * bits from the instructions before the site (see the arch file).
	 * code ends at the site; base_off is the base register's pt_regs
	 * offset. On success *lo is the value to add, *page what the base
	 * register holds there (a link-time address), and 0 is returned;
	 * otherwise -ENOENT with *why saying why it cannot be read.
	 */
	int (*label_lo)(const struct usdt__code *code, int base_off,
			int64_t *lo, uint64_t *page, const char **why);
	uint16_t pt_regs_size;		/* the BPF context's size */
	uint16_t ip_off;		/* where the PC is in pt_regs */
};

extern const struct usdt__arch_ops usdt__arch_x86_64;
extern const struct usdt__arch_ops usdt__arch_arm64;
extern const struct usdt__arch_ops usdt__arch_s390x;
extern const struct usdt__arch_ops usdt__arch_riscv64;

/* The parser for an ELF e_machine, or NULL (src/arch/arch.c). */
const struct usdt__arch_ops *usdt__arch_find(int e_machine);
/* The parser of the host, or NULL. */
const struct usdt__arch_ops *usdt__arch_host(void);

/*
 * Symbol lookup for resolution: the link-time address of name[0..len)
 * into *addr (return 0), or, for a symbol only reachable through the GOT,
 * the GOT slot's address into *got_slot (return 1); -ENOENT when unknown,
 * -ENOTUNIQ when several different symbols have that name (src/symtab.c).
 * A defined symbol that also has a GOT slot returns 0 with both *addr and
 * *got_slot set (*got_slot is 0 when it has none).
 */
struct usdt__symtab;
int usdt__sym_lookup(const struct usdt__symtab *st, const char *name,
		     size_t len, uint64_t *addr, uint64_t *got_slot);

/* Building a symbol table by hand (the note reader and unit tests). */
struct usdt__symtab *usdt__symtab_new(void);
/* got_slot != 0: the symbol is undefined here and reached through that
 * GOT slot; addr is then ignored. Returns 0 or -ENOMEM. */
int usdt__symtab_add(struct usdt__symtab *st, const char *name, uint64_t addr,
		     uint64_t got_slot);
/* The symbol name, added before, is a data object (STT_OBJECT) of size
 * bytes; two definitions of one name with different sizes leave it
 * unknown. */
void usdt__symtab_set_obj_size(struct usdt__symtab *st, const char *name,
			       uint64_t size);
/* The data object size of name[0..len), or 0: not a data object, unknown,
 * ambiguous or absent. */
uint64_t usdt__sym_obj_size(const struct usdt__symtab *st, const char *name,
			    size_t len);
void usdt__symtab_free(struct usdt__symtab *st);

/*
 * Where code is (for reading the instructions before a call site, see
 * usdt__label_lo()): the functions (STT_FUNC with a size) and the "$d"
 * mapping symbols, which mark data placed among instructions. Returns 0
 * or -ENOMEM.
 */
int usdt__symtab_add_func(struct usdt__symtab *st, uint64_t start,
			  uint64_t size);
int usdt__symtab_add_data_mark(struct usdt__symtab *st, uint64_t addr);
/*
 * The function that holds vaddr: its bounds into *start and *end. Returns
 * 0, -ENOENT (none), or -ENOTUNIQ (two functions of different bounds hold
 * it: the file does not say which one the site is in).
 */
int usdt__symtab_func_at(const struct usdt__symtab *st, uint64_t vaddr,
			 uint64_t *start, uint64_t *end);
/* Is there a "$d" mark in [start, end)? */
bool usdt__symtab_data_in(const struct usdt__symtab *st, uint64_t start,
			  uint64_t end);

/*
 * The instructions before a call site, for usdt__label_lo(): the file's
 * bytes [start, start + len) with start + len the site's address, all of
 * them inside the function that holds the site and inside one loadable
 * segment. Borrowed from the reader; valid while the file is being read.
 */
struct usdt__code {
	const uint8_t *bytes;
	uint64_t start;
	size_t len;
	bool at_func_start;	/* start is the function's first byte */
};

/* What resolution needs to know about the call site. */
struct usdt__site_ctx {
	const struct usdt__arch_ops *arch;
	const struct usdt__symtab *symtab; /* may be NULL */
	/* Optional, used when symtab is NULL: builds the table on the first
	 * argument that names a symbol (most files have none), or NULL. */
	const struct usdt__symtab *(*load_symtab)(void *load_arg);
	void *load_arg;
	/*
	 * Optional (NULL: no code is read): the code before the site, at most
	 * max_back bytes of it, into *code. Returns 0, or a negative errno
	 * with *why saying what is missing (no function symbol holds the
	 * site, data among the instructions, ...).
	 */
	int (*load_code)(void *load_arg, uint64_t vaddr, size_t max_back,
			 struct usdt__code *code, const char **why);
	/* Optional: is vaddr inside a loadable segment of the file? */
	bool (*mapped)(void *load_arg, uint64_t vaddr);
	uint64_t vaddr;		/* the call site's link-time address */
	bool is_dyn;		/* ET_DYN: absolute addresses need the load bias */
	bool big_endian;
};

/*
 * Split and parse an argument string into *args (malloc'ed, *cnt entries).
 * An argument that cannot be parsed or resolved becomes
 * USDT_ARG_UNSUPPORTED with a reason; that is not an error. Returns 0, or
 * -EINVAL when the string cannot be split into arguments at all, -E2BIG
 * for more than USDT_MAX_ARG_CNT, -ENOMEM; *why then says why.
 */
int usdt__args_parse(const struct usdt__site_ctx *site, const char *str,
		     struct usdt__arg **args, int *cnt, const char **why);

/* Parse one argument "[-]SIZE[f]@OPERAND" (the whole text given) into arg
 * and resolve it; used by the splitter and by the unit tests. */
void usdt__arg_parse_one(const struct usdt__site_ctx *site, const char *str,
			 size_t pos, size_t len, struct usdt__arg *arg);

/* The fast code of an argument's spec (usdt_arg_spec.fast, usdt_spec.h):
 * how the BPF side keeps its size, and whether BPF_USDT() may read it as a
 * whole register; 0 for an unsupported one. */
uint8_t usdt__arg_fast(const struct usdt_arg_spec *spec);

/* ---------------------------------------------------------------------- */
/* Probes and files (src/note.c, src/elf.c)                               */

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
 * How /proc/PID/maps shows a file, and how to tell its mappings there from
 * other files' (usdt__map_id(), usdt__mapping_is() in src/resolve.c).
 * Invariant: without confirm, no other file shows dev/ino in maps; with
 * it, no other file's mapping has mf_dev/mf_ino as the stat() of its
 * /proc/PID/map_files/START-END.
 */
struct usdt__map_id {
	dev_t dev;		/* what maps shows for it */
	ino_t ino;
	bool confirm;		/* others may show dev/ino too (btrfs) */
	int mf_err;		/* 0, or why mf_dev/mf_ino are unknown */
	dev_t mf_dev;		/* stat() of a mapping of it through */
	ino_t mf_ino;		/* /proc/PID/map_files/ */
};

/*
 * An ELF file's call sites. A file opened from a path keeps its descriptor
 * (fd >= 0) until usdt_file__close(): everything an attach gives the
 * kernel (the file itself, as /proc/self/fd/N, and its offsets) comes
 * from that one open file, so renaming or replacing the path meanwhile
 * changes nothing. dev/ino/size/mtime are its fstat() at open; map says
 * which lines of a process's maps are mappings of it.
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
	struct usdt__map_id map;
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

/* ---------------------------------------------------------------------- */
/* Targets and processes (src/resolve.c)                                  */

/* One file-backed line of /proc/PID/maps. path points into the line. */
struct usdt__mapping {
	uint64_t start, end, off;
	dev_t dev;
	ino_t ino;
	bool exec;
	bool deleted;		/* " (deleted)" was cut off path */
	const char *path;
};

/* /proc/PID/maps (pid 0: our own, /proc/self), opened for
 * usdt__maps_next(); NULL with errno. */
FILE *usdt__maps_open(pid_t pid);
/* The next file-backed mapping (1), or the end (0). *line and *cap are
 * getline()'s buffer, freed by the caller. */
int usdt__maps_next(FILE *f, char **line, size_t *cap,
		    struct usdt__mapping *m);
/*
 * How maps shows the file open at fd, whose fstat() is st: st's device and
 * inode, except on overlayfs before Linux 6.8 (the file below the overlay)
 * and on btrfs (the file system's device, not the subvolume's: inode
 * numbers repeat there, so its mappings are confirmed). src/resolve.c.
 */
struct stat;
void usdt__map_id(int fd, const struct stat *st, struct usdt__map_id *id);
/*
 * Is mapping m of process pid a mapping of the file that id describes?
 * 1 or 0; a negative errno if it could not be told (-EPERM: reading
 * /proc/PID/map_files/ needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE).
 */
int usdt__mapping_is(pid_t pid, const struct usdt__mapping *m,
		     const struct usdt__map_id *id);
/*
 * Open the file of mapping m of process pid: through /proc/PID/root/PATH
 * when that still is the mapped inode, else /proc/PID/map_files/. The
 * path used goes to out. Returns the fd or a negative errno.
 */
int usdt__open_mapping(pid_t pid, const struct usdt__mapping *m, char *out,
		       size_t out_sz);
/*
 * usdt_resolve_path(), keeping the file open: returns its fd (a regular
 * file; for a bare name, an ELF file for this host) or a negative errno;
 * the path it was found at goes to out.
 */
int usdt__resolve_open(pid_t pid, const char *name, char *out, size_t out_sz);

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
void usdt__index_free(struct usdt__index *idx);

/* Sort the file's names[] index (src/note.c). Returns 0 or -ENOMEM. */
int usdt__file_index(struct usdt_file *file);

/*
 * Call the callback for every call site whose provider and name match the
 * shell globs, grouped by name and in note order within a name. A pattern
 * without glob characters costs a binary search, not a scan. Stops at and
 * returns the first nonzero result of fn, else the number of matches.
 */
typedef int (*usdt__match_fn)(const struct usdt_probe *p, void *ctx);
long usdt__file_match(const struct usdt_file *file, const char *provider,
		      const char *name, usdt__match_fn fn, void *ctx);

#endif /* __LIBUSDT_INTERNAL_H */
