/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libusdt: attach BPF programs to USDT probes (sys/sdt.h) and read their
 * arguments, for binaries of x86_64, arm64, s390x and riscv64.
 *
 * Conventions (those of libbpf):
 *  - objects are opaque and have usdt_<object>__<verb>() methods;
 *  - calls that may grow take a trailing `const struct usdt_<x>_opts *`,
 *    NULL for defaults, declared with USDT_OPTS(); every byte past the
 *    struct's last field (its padding, or a newer struct's tail) must be
 *    zero, or the call fails with EINVAL;
 *  - int results are 0 (or a count) or a negative errno, and errno is set;
 *    pointer results are NULL with errno set.
 * Thread safety: distinct objects may be used from distinct threads; one
 * object must not be used from two threads at once.
 */
#ifndef __LIBUSDT_USDT_H
#define __LIBUSDT_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <string.h>
#include <sys/types.h>

#include "usdt_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef USDT_API
#define USDT_API __attribute__((visibility("default")))
#endif

struct bpf_object;
struct bpf_program;

/**
 * @brief **USDT_OPTS()** declares and zero-initialises an opts struct with
 * its sz set, e.g. `USDT_OPTS(usdt_attach_opts, o, .usdt_cookie = 7);`.
 */
#define USDT_OPTS(TYPE, NAME, ...)                                       \
	struct TYPE NAME = ({                                            \
		memset(&NAME, 0, sizeof(struct TYPE));                   \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
	})

/* ---------------------------------------------------------------------- */
/* Version                                                                */

/**
 * @brief the version of the libusdt running, which may be newer than the
 * USDT_MAJOR_VERSION and USDT_MINOR_VERSION a program was built with.
 */
USDT_API int usdt_major_version(void);
USDT_API int usdt_minor_version(void);
/** @brief "vMAJOR.MINOR", e.g. "v0.1", as libbpf_version_string(). */
USDT_API const char *usdt_version_string(void);

/* ---------------------------------------------------------------------- */
/* Logging                                                                */

enum usdt_print_level {
	USDT_WARN,
	USDT_INFO,
	USDT_DEBUG,
};

typedef int (*usdt_print_fn_t)(enum usdt_print_level level, const char *fmt,
			       va_list ap);

/**
 * @brief **usdt_set_print()** replaces the logging callback atomically.
 * @param fn the new callback, or NULL to silence the library.
 * @return the previous callback.
 *
 * The default prints warnings to stderr; the environment variable
 * USDT_LOG_LEVEL=warn|info|debug changes its threshold.
 */
USDT_API usdt_print_fn_t usdt_set_print(usdt_print_fn_t fn);

/**
 * @brief **usdt_strerror()** formats a libusdt error (a negative or positive
 * errno) into buf, like strerror_r(); 524, the kernel's ENOTSUPP (which
 * BPF and uprobe calls may return, and userspace's errno.h lacks), is
 * "operation not supported by the kernel (ENOTSUPP)".
 * @return buf.
 */
USDT_API const char *usdt_strerror(int err, char *buf, size_t size);

/* ---------------------------------------------------------------------- */
/* Reading the probes of an ELF file (no kernel, no privileges)           */

struct usdt_file;
/*
 * A struct usdt_probe is one call site, not one probe: one stapsdt note,
 * at one address, with its own arguments (and semaphore). A probe, a
 * provider:name pair, has a call site for each expansion of its macro
 * and each copy of one that inlining or unrolling made, so several
 * struct usdt_probe may share a provider and name. The type keeps
 * <sys/sdt.h>'s word. Attach calls take probes (provider:name patterns)
 * and attach to every call site of each.
 */
struct usdt_probe;

struct usdt_file_opts {
	size_t sz;
	size_t : 0;
};
#define usdt_file_opts__last_field sz

/**
 * @brief **usdt_file__open()** reads the USDT notes of a 64-bit ELF file
 * (executable, PIE or shared library, of any byte order and of any of the
 * supported architectures) and parses every call site's arguments.
 * @param path the file; "/proc/PID/root/PATH" is looked up inside that
 * process's root, so that no symlink there leads out of it.
 * @param opts NULL, or options.
 * @return the file, or NULL with errno: ENOENT/EACCES (cannot open),
 * ENOEXEC (not a regular file, not a 64-bit ELF file, or too damaged to
 * read), EFBIG (.note.stapsdt, the section names or the section count
 * beyond the reader's limits: 16 MiB, 65536 sections), E2BIG (more than
 * 131072 call sites or 1048576 arguments), EOPNOTSUPP (the libelf loaded
 * is older than the one libusdt was built with), ENOSYS (a path through
 * /proc/PID/root/ without openat2(): Linux 5.6 or later, not refused by a
 * seccomp filter; it is not opened another way), ENOMEM.
 *
 * A file without USDT notes opens and has no call sites. A malformed note
 * or an unreadable argument marks that call site (usdt_probe__status()) or
 * that argument (USDT_ARG_UNSUPPORTED); the others are still read. A FIFO or
 * device is refused without blocking. The file is read with read calls,
 * not mapped, so one truncated meanwhile fails to read (ENOEXEC) instead
 * of raising SIGBUS. The result keeps the file open (close-on-exec) until
 * usdt_file__close(), so that usdt_manager__attach_file() gives the kernel
 * that same file.
 */
USDT_API struct usdt_file *usdt_file__open(const char *path,
					   const struct usdt_file_opts *opts);
/** @brief **usdt_file__close()** frees the file and its call sites and
 * closes its descriptor; NULL is ok. */
USDT_API void usdt_file__close(struct usdt_file *file);
/** @brief the path the file was opened with. */
USDT_API const char *usdt_file__path(const struct usdt_file *file);
/** @brief the ELF e_machine (EM_X86_64, EM_AARCH64, EM_S390, EM_RISCV...). */
USDT_API int usdt_file__machine(const struct usdt_file *file);
/** @brief "x86_64", "aarch64", "s390x", "riscv64", or NULL if unsupported. */
USDT_API const char *usdt_file__arch_name(const struct usdt_file *file);
/** @brief true for ET_DYN (PIE or shared library). */
USDT_API bool usdt_file__is_dyn(const struct usdt_file *file);
/** @brief how many call sites the file has. */
USDT_API size_t usdt_file__probe_cnt(const struct usdt_file *file);
/**
 * @brief **usdt_file__probe()** returns call site i (0-based) in note order,
 * or NULL with errno ERANGE. Borrowed from the file. The probes are built
 * once, by usdt_file__open(); the getters only read them, so threads may
 * share a file.
 */
USDT_API const struct usdt_probe *usdt_file__probe(const struct usdt_file *file,
						   size_t i);

/* Every getter below is of one call site, and borrows from its file. */
USDT_API const char *usdt_probe__provider(const struct usdt_probe *p);
USDT_API const char *usdt_probe__name(const struct usdt_probe *p);
/** @brief the call site's virtual address, adjusted for prelink. */
USDT_API uint64_t usdt_probe__address(const struct usdt_probe *p);
/** @brief the call site's offset in the file: what a uprobe wants. */
USDT_API uint64_t usdt_probe__file_offset(const struct usdt_probe *p);
/** @brief the semaphore's virtual address, 0 when the site has none. */
USDT_API uint64_t usdt_probe__semaphore(const struct usdt_probe *p);
/** @brief the semaphore's file offset (ref_ctr_offset), 0 when none. */
USDT_API uint64_t usdt_probe__semaphore_offset(const struct usdt_probe *p);
/**
 * @brief **usdt_probe__semaphore_cleared_at_load()**: is the semaphore in
 * the zero-filled tail (.bss) of the page that holds its segment's last
 * file byte?
 *
 * The kernel counts a semaphore there when a process maps the file after
 * the attach, and the loader (the kernel's for a program, ld.so for a
 * library) then clears that page's tail: such a process never sees the
 * probe enabled, and code that tests the semaphore never fires it. A
 * process that maps the file before the attach is counted in place and
 * works. usdt_manager__attach() warns when it attaches such a site with
 * pid -1, or to a process that does not map the file yet (as one started
 * and attached to before its exec). False when the site has no semaphore.
 */
USDT_API bool usdt_probe__semaphore_cleared_at_load(const struct usdt_probe *p);
/** @brief the raw argument string of the note ("" for no arguments). */
USDT_API const char *usdt_probe__args_str(const struct usdt_probe *p);
/**
 * @brief 0 if the note was read, else a negative errno (-EINVAL malformed
 * note or argument string, -E2BIG too many arguments, -EOPNOTSUPP a file
 * of an architecture libusdt has no argument parser for);
 * usdt_probe__error() says why.
 */
USDT_API int usdt_probe__status(const struct usdt_probe *p);
/** @brief why the call site is bad, or NULL when its status is 0. */
USDT_API const char *usdt_probe__error(const struct usdt_probe *p);
/** @brief how many arguments the call site has (0 when its status < 0). */
USDT_API int usdt_probe__arg_cnt(const struct usdt_probe *p);

enum usdt_arg_kind {
	USDT_ARG_CONST,	      /* value is a constant */
	USDT_ARG_REG,	      /* value is in a register */
	USDT_ARG_DEREF,	      /* memory at register + offset */
	USDT_ARG_INDEX,	      /* memory at [base] + index * scale + offset */
	USDT_ARG_PCREL,	      /* memory at the call site's address + offset */
	USDT_ARG_ABS,	      /* memory at a fixed address */
	USDT_ARG_PCADDR,      /* value is the call site's address + offset */
	USDT_ARG_UNSUPPORTED, /* cannot be read; see reason */
};

/** @brief "const", "reg", "deref", "index", "pcrel", "abs", "pcaddr",
 * "unsupported". */
USDT_API const char *usdt_arg_kind_str(enum usdt_arg_kind kind);

/*
 * A decoded argument. For USDT_ARG_PCREL and USDT_ARG_PCADDR, offset is
 * relative to usdt_probe__address() (link-time addresses); for
 * USDT_ARG_ABS it is the address itself.
 */
struct usdt_arg_info {
	size_t sz;
	enum usdt_arg_kind kind;
	int size; /* 1, 2, 4, 8 or 16 bytes; an unsupported
				 * argument's may be any size its note
				 * wrote (0 to 9999) */
	bool is_signed;
	bool is_float;	    /* the raw bits of a float or double */
	const char *reg;    /* base register as written, or NULL */
	const char *index;  /* index register as written, or NULL */
	int scale;	    /* index scale, 0 when no index */
	int64_t offset;	    /* displacement or address */
	uint64_t value;	    /* the constant, for USDT_ARG_CONST */
	const char *reason; /* for USDT_ARG_UNSUPPORTED, else NULL */
	const char *str;    /* the argument's text, e.g. "-4@%edi" */
	/*
	 * reg and offset above are the operand as written. What is read
	 * differs for a 16-byte argument on big-endian s390x, read as its
	 * low half: 16@%r2 reads r3 (the pair's second register), and
	 * 16@-32(%r11) reads 8 bytes further on, at offset -24. A riscv64
	 * %lo(sym)(a5) is read at sym's address (USDT_ARG_ABS or _PCREL):
	 * read_reg is NULL, as the linker may have removed what set a5.
	 */
	const char *read_reg; /* the register read: reg, or the pair's */
	int64_t read_offset;  /* the offset read */
	/* An index register's low 32 bits, extended (arm64 [x3, w0, sxtw]):
	 * "sxtw" or "uxtw"; NULL for the whole register or no index. */
	const char *index_ext;
	size_t : 0;
};
#define usdt_arg_info__last_field index_ext

/**
 * @brief **usdt_probe__arg()** describes argument i of a call site.
 * @param info filled in; set info->sz = sizeof(*info) first, and zero the
 * rest (`struct usdt_arg_info a = { .sz = sizeof(a) };`). Its strings are
 * borrowed from the file.
 * @return 0, -ERANGE (no such argument), -EINVAL (info->sz smaller than
 * this struct as of 0.1, or bytes past the fields this library knows not
 * zero).
 *
 * sz lets the struct grow: a library newer than the caller's header fills
 * the fields that header has; one older than it leaves the newer fields
 * zero.
 */
USDT_API int usdt_probe__arg(const struct usdt_probe *p, int i,
			     struct usdt_arg_info *info);

/**
 * @brief **usdt_resolve_path()** finds the file a name stands for, the way
 * the dynamic loader would.
 * @param pid > 0: look among the files that process maps first; 0: the
 * caller; -1: no process.
 * @param name a path (anything with a '/', used as is) or a bare library
 * name ("libc.so.6", or "libc" for it: among a process's files and in
 * /etc/ld.so.cache, after an exact name), or a bare program name
 * ("python3": no "lib" prefix, no ".so"), looked for in PATH first, as a shell and
 * libbpf would (an executable file; an empty entry, the current directory
 * to a shell, is skipped), then as a library.
 * @param buf, size where the path goes: the name itself, a path in
 * PATH, LD_LIBRARY_PATH, /etc/ld.so.cache or the default directories, or for a
 * process's file /proc/PID/map_files/START-END, the mapping itself, where
 * the caller may read it (CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), else
 * /proc/PID/root/PATH (for a process chrooted in the caller's mount
 * namespace, whose maps show the caller's paths ROOT/PATH, PATH inside its
 * root). Paths in a process's root are looked up inside it (a symlink
 * there never leads out of it), and no path outside it is opened for it:
 * a file replaced or deleted since it was mapped, or mapped from outside
 * the process's root, is found through map_files/ only. Without
 * CAP_SYS_ADMIN, where a file on btrfs (or on an overlay before Linux
 * 6.8) cannot be told from another, the one at PATH that maps shows by
 * the same device and inode.
 * @return 0, or -ENOENT (not found), -ENOEXEC (a path that is not a
 * regular file), -ENOSYS (no way but inside a process's root, and no
 * openat2() to look there), -ENAMETOOLONG, -EINVAL, or open()'s error.
 *
 * A bare name only finds regular 64-bit ELF files of this host's machine;
 * FIFOs, devices and directories are passed over without blocking. The
 * answer is a name, which may be replaced by the time it is opened:
 * usdt_manager__attach() does not reopen it, it resolves and opens once.
 */
USDT_API int usdt_resolve_path(pid_t pid, const char *name, char *buf,
			       size_t size);

/* ---------------------------------------------------------------------- */
/* Attaching BPF programs                                                 */

struct usdt_manager;
struct usdt_link;

struct usdt_manager_opts {
	size_t sz;
	/* Before bpf_object__load() only: the most spec IDs and IP-map
	 * entries the manager hands out (exact caps; past them, attach fails
	 * with E2BIG); 0 keeps the object's limits (USDT_MAX_SPEC_CNT,
	 * USDT_MAX_IP_CNT: 65536 and 262144 by default). The maps grow on
	 * demand either way; a max_specs below the spec head's size
	 * (USDT_SPEC_HEAD_CNT, 1024) shrinks the head to it, and where the
	 * kernel verifies the BPF header's readers at every call (no kernel
	 * BTF) the manager gives the head up (docs/library.md). */
	uint32_t max_specs;
	uint32_t max_ips;
	/* Before load: per-site uprobes even where the kernel has
	 * uprobe_multi, with every libbpf (see usdt_manager__new()). */
	bool no_uprobe_multi;
	/* Before load only: the most storage slots (objects that define
	 * USDT_STORAGE_TYPE); 0 keeps USDT_MAX_STORAGE_CNT. */
	uint32_t max_storage;
	/* Before load: keep the programs' IP-map path where the kernel has
	 * bpf_cookie, for attaches with usdt_attach_opts.force_ip_map. Unset,
	 * the manager lets the verifier drop that path (about 20 instructions
	 * of each program) and such attaches fail with EINVAL. Without
	 * bpf_cookie, or with a manager created after load, the path is
	 * always there. */
	bool keep_ip_map;
	size_t : 0;
};
#define usdt_manager_opts__last_field keep_ip_map

/**
 * @brief **usdt_manager__new()** prepares a BPF object for USDT attaching.
 * @param obj the object; it must contain the maps of bpf/usdt.bpf.h. It is
 * borrowed and must outlive the manager.
 * @param opts NULL, or options.
 * @return the manager, or NULL with errno: ESRCH (the object does not
 * include bpf/usdt.bpf.h), EPROTO (its usdt.bpf.h reads another spec
 * layout than this library writes: it was built against another libusdt),
 * EINVAL (bad opts, or sizes given after load), EOPNOTSUPP
 * (no_uprobe_multi with libbpf 1.3 or newer, which loads SEC("usdt")
 * programs for uprobe_multi links anyway where the kernel has them, and
 * libusdt's section handler not registered: a static link built with
 * USDT_NO_SKEL_HANDLER), ENOMEM.
 *
 * Called before bpf_object__load(), it may resize the maps and chooses the
 * link of the object's SEC("usdt") and SEC("usdt/...") programs (and of
 * their sleepable kind, SEC("usdt.s") and SEC("usdt.s/...")), the same
 * with every libbpf from 1.1 on:
 *  - kernel with uprobe_multi (6.6+), no_uprobe_multi unset: the programs
 *    load for uprobe_multi links; USDT_MODE_PERF is then refused (-EINVAL)
 *    for them, since the kernel attaches such a program only that way;
 *  - no_uprobe_multi set, or an older kernel: they load as plain uprobe
 *    programs and every attach uses one perf uprobe per call site. libbpf
 *    1.3 and newer would load them for uprobe_multi anyway; the manager
 *    takes libbpf's SEC("usdt") handler off them (it does nothing else for
 *    these programs). Sleepable ones take per-site uprobes too (Linux
 *    6.0 and later take sleepable uprobe programs). A sleepable program
 *    waits as long as the traced process's page fault takes, which that
 *    process controls, and every uprobe removal on the machine waits
 *    with it: attach one only to processes trusted not to stall.
 * Created after load, it takes the programs as libbpf loaded them: with
 * libbpf 1.1/1.2 per-site uprobes; with libbpf 1.3+ on a uprobe_multi
 * kernel, uprobe_multi links, USDT_MODE_PERF refused. It then takes over
 * the spec store that usdt_program__attach() (a skeleton's __attach())
 * made for the object, with what the links those gave hold, and
 * usdt_program__attach() of the object's programs uses the manager's.
 */
USDT_API struct usdt_manager *
usdt_manager__new(struct bpf_object *obj, const struct usdt_manager_opts *opts);
/**
 * @brief **usdt_manager__free()** destroys the links of
 * usdt_manager__attach_all() (all at once, as usdt_links__destroy() does)
 * and frees the manager; NULL is ok.
 *
 * Links of usdt_manager__attach() may outlive it: they stay attached and
 * keep working, and usdt_link__destroy() still detaches them and gives
 * back their spec IDs and IP-map entries. They reach the maps through
 * descriptors of their own, never through the bpf_object, so the object
 * may be closed right after this call (its maps then live on in the
 * kernel until the last link is destroyed). The manager is freed at once:
 * its links hold the spec store it made, whose memory goes with the last
 * of them; no new attach can be made with the manager. Where the only links
 * left are usdt_program__attach()'s (a manager made on a loaded object
 * takes those over), the spec store goes back to the object, so that its
 * next usdt_program__attach() works as without a manager. Apart from
 * closing links, nothing here waits for an RCU grace period: the spec
 * head and the chunks stay in the object's maps, and a next manager of
 * the object in this process claims the head and puts its own chunks in
 * their place.
 */
USDT_API void usdt_manager__free(struct usdt_manager *man);

enum usdt_attach_mode {
	USDT_MODE_AUTO = 0, /* uprobe_multi if prepared and available */
	USDT_MODE_MULTI,    /* one uprobe_multi link, or fail */
	USDT_MODE_PERF,	    /* one perf uprobe per call site */
};

struct usdt_attach_opts {
	size_t sz;
	/* Read by bpf_usdt_cookie() in the BPF program (libbpf's name). */
	uint64_t usdt_cookie;
	enum usdt_attach_mode mode;
	/* Find specs through the IP map even where bpf_cookie works; needs
	 * a manager created before load with keep_ip_map (else EINVAL). */
	bool force_ip_map;
	/*
	 * Per-attach storage, for objects that define USDT_STORAGE_TYPE:
	 * the initial value (storage_sz must be the type's size), which
	 * bpf_usdt_storage() returns a pointer to, from the first hit on,
	 * and usdt_link__storage() gives user space. NULL: none (the BPF
	 * side gets NULL). One value for the whole link, or one per call
	 * site with storage_per_site.
	 */
	const void *storage;
	size_t storage_sz;
	bool storage_per_site;
	/*
	 * x86_64 "nop; nop5" call sites only: put the uprobe on the nop5,
	 * one byte in, where Linux 6.18 and later turn it into a call into
	 * a trampoline instead of a trap (a cheaper hit). HAZARD: that call
	 * and the trampoline write below the traced thread's stack pointer,
	 * into the 128-byte red zone where a leaf function may keep live
	 * values, so the traced program may compute wrong results or crash.
	 * Only for programs known to keep nothing there (built with
	 * -mno-red-zone). Default false: every uprobe stays on its site's
	 * first byte, which no kernel optimises.
	 */
	bool allow_red_zone_writes;
	size_t : 0;
};
#define usdt_attach_opts__last_field allow_red_zone_writes

/**
 * @brief **usdt_manager__attach()** attaches a BPF program to every call
 * site of the probes that match.
 * @param man the manager of the program's object (loaded).
 * @param prog a program of that object (SEC("usdt") or SEC("uprobe")).
 * @param pid -1 every process, 0 the caller, >0 that process.
 * @param path the binary or library: absolute, relative to the current
 * directory, or a bare library name ("libc.so.6") found as the dynamic
 * loader would (with pid > 0, in that process's maps first), or a bare
 * program name ("python3") found through PATH (usdt_resolve_path()); a container's
 * file as "/proc/PID/root/PATH", looked up inside that root (ENOSYS
 * without openat2(), as usdt_file__open()).
 * @param provider, name the probe; shell globs are allowed.
 * @param opts NULL, or options.
 * @return a link, or NULL with errno, one cause each:
 *  - ENOENT: no such file, or no probe matches;
 *  - ENOEXEC: not a regular file, not a 64-bit ELF file, or a file for
 *    another architecture than this host's (usdt_file__machine() says
 *    which), as execve() would say;
 *  - EFBIG: the file is beyond the reader's limits (16 MiB of notes or
 *    of section names, 65536 sections);
 *  - E2BIG: more call sites or arguments than the reader takes, or out of
 *    spec IDs, storage slots or IP-map entries (the object's limits, or
 *    the caps of usdt_manager_opts);
 *  - EINVAL: a bad argument or option, or options that do not go
 *    together: prog not loaded or not of the manager's bpf_object;
 *    USDT_MODE_PERF for a program loaded for uprobe_multi links, or
 *    USDT_MODE_MULTI for one loaded as a plain uprobe (see
 *    usdt_manager__new()); force_ip_map without the IP-map path (see
 *    usdt_manager_opts.keep_ip_map), or with pid -1 on a
 *    position-independent file (an IP-map key is an address in one
 *    process); storage for an object without USDT_STORAGE_TYPE, or not
 *    of its size;
 *  - EOPNOTSUPP: the system cannot do it: USDT_MODE_MULTI on a kernel
 *    without uprobe_multi links (6.6), a probe with a semaphore on one
 *    without uprobe ref_ctr_offset (4.20), pid -1 on a
 *    position-independent file on one without bpf_cookie (5.15), a
 *    host architecture libusdt has no attach support for, or a libelf
 *    older than libusdt's build (as usdt_file__open());
 *  - EBUSY: the object's maps are filled by another manager (one manager
 *    per object), or the manager is a fork()ed child's copy;
 *  - ESRCH: pid > 0 and that process has exited or does not run the file
 *    (give /proc/PID/exe or /proc/PID/map_files/... to reach a file
 *    replaced on disk since it started);
 *  - EACCES: as the kernel says it: per-site perf uprobes (USDT_MODE_PERF,
 *    or any attach on a kernel without uprobe_multi links) without
 *    CAP_SYS_ADMIN, which Linux 6.16 and its stable kernels from 5.15
 *    ask for them (CVE-2025-38466); uprobe_multi links need only CAP_BPF
 *    and CAP_PERFMON;
 *  - EPERM: as the kernel says it, and also: pid > 0, the file is on btrfs
 *    or on an overlay before Linux 6.8, where a process's mapping of it
 *    is told from another file's only through /proc/PID/map_files/, and
 *    that needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE;
 *  - EEXIST: two call sites at one IP in IP-map mode;
 *  - EMFILE: the attach needs more descriptors than the soft
 *    RLIMIT_NOFILE leaves (per-site uprobes take two a site, the spec
 *    map one per 256 specs); libusdt never raises the limit, which is the
 *    program's (a program that uses select() must stay below
 *    FD_SETSIZE): the message says how many are needed, and the caller
 *    may raise the soft limit with setrlimit() and attach again;
 *  - ENOMEM, or the kernel's errno.
 * On failure nothing stays attached and nothing is taken.
 *
 * The path is resolved and opened once (a FIFO, device or directory is
 * refused without blocking), and the kernel gets that open file, never
 * the path again. The manager keeps the last few files it read, by device,
 * inode, size and mtime, so that attaching many probes of one file one
 * call at a time reads it once; usdt_manager__free() closes them.
 */
USDT_API struct usdt_link *
usdt_manager__attach(struct usdt_manager *man, const struct bpf_program *prog,
		     pid_t pid, const char *path, const char *provider,
		     const char *name, const struct usdt_attach_opts *opts);

/**
 * @brief **usdt_manager__attach_file()** is usdt_manager__attach() for a
 * file already open: parse a file once, attach many probes from it.
 * @param file from usdt_file__open(); borrowed, only during the call (the
 * link keeps nothing of it, so it may be closed at once).
 * @return as usdt_manager__attach(); EINVAL also for a file not opened
 * from a path.
 *
 * The kernel is given the very file that was read (its open descriptor,
 * as /proc/self/fd/N), not its path: replacing or renaming the path after
 * usdt_file__open() changes nothing. Matching is by provider and name
 * first: a pattern without glob characters costs a binary search over the
 * file's call sites, so a miss costs next to nothing.
 */
USDT_API struct usdt_link *usdt_manager__attach_file(
	struct usdt_manager *man, const struct bpf_program *prog, pid_t pid,
	const struct usdt_file *file, const char *provider, const char *name,
	const struct usdt_attach_opts *opts);

/**
 * @brief **usdt_manager__attach_all()** attaches every loaded program of the
 * manager's object whose section names its probe, as libbpf's auto-attach
 * syntax does: SEC("usdt/PATH:PROVIDER:NAME") (PATH as for
 * usdt_manager__attach(), a bare library name included).
 * @param man the manager of a loaded object.
 * @param pid -1 every process, 0 the caller, >0 that process.
 * @param opts NULL, or options for every attach.
 * @return how many programs were attached (0 if none names a probe), or a
 * negative errno as usdt_manager__attach() gives (EINVAL for a section
 * that is not PATH:PROVIDER:NAME): all or nothing. The manager owns the
 * links and destroys them in usdt_manager__free().
 * EALREADY: an earlier call attached them, and they stay as they are
 * (whatever pid or opts this call gives): attached twice, each program
 * would run twice per hit. Unlike a skeleton's __attach(), which skips
 * what it attached and returns 0, this says so, since a pid or opts
 * differing from the first call's would otherwise be ignored silently.
 * To attach a program to more processes, use usdt_manager__attach().
 * After a failed call nothing is attached, and it may be called again.
 *
 * usdt_manager__new() turns libbpf's auto-attach off for these programs,
 * so a skeleton's __attach() succeeds and skips them (libbpf's own USDT
 * support cannot attach them): call this after it. The skeleton's
 * __destroy() does not detach them; usdt_manager__free() does, before or
 * after it.
 */
USDT_API int usdt_manager__attach_all(struct usdt_manager *man, pid_t pid,
				      const struct usdt_attach_opts *opts);

/**
 * @brief **usdt_link__destroy()** detaches and frees a link, gives back its
 * spec IDs (zeroing their specs) and IP-map entries; NULL is ok.
 * @return 0, or the first error met (closing a kernel link, deleting an
 * IP-map entry, zeroing a spec) as a negative errno; everything else is
 * still undone and the link is freed in either case.
 */
USDT_API int usdt_link__destroy(struct usdt_link *link);
/**
 * @brief **usdt_links__destroy()** destroys links[0..n) as
 * usdt_link__destroy() would, and sets each entry to NULL; NULL entries are
 * skipped. The kernel waits a grace period to close each link (~55 ms for
 * a uprobe_multi link): this closes them from up to 256 threads at once,
 * so thousands of links go in seconds instead of minutes. Links of several
 * managers may be mixed. Not to be called while another thread uses one of
 * these links' managers.
 * @return 0, or the first error met as a negative errno (EINVAL: links is
 * NULL and n is not 0); every link is destroyed in either case.
 */
USDT_API int usdt_links__destroy(struct usdt_link **links, size_t n);
/** @brief how many call sites the link is attached to. */
USDT_API size_t usdt_link__site_cnt(const struct usdt_link *link);
/** @brief how many distinct spec IDs the link holds. */
USDT_API size_t usdt_link__spec_cnt(const struct usdt_link *link);
/**
 * @brief **usdt_link__storage()** gives the storage value of call site
 * site_index of the link (the link's one value, for any site, without
 * storage_per_site), in place: a pointer into a kernel array, mapped
 * into this process, that BPF programs update as user space reads it
 * (use atomic or volatile accesses for values both sides change). Valid
 * until the link is destroyed, which zeroes the value.
 * @return the pointer, or NULL with errno ENOENT (no storage, or
 * site_index >= usdt_link__site_cnt()) or EINVAL (link NULL).
 */
USDT_API void *usdt_link__storage(const struct usdt_link *link,
				  size_t site_index);
/** @brief true if the link is one uprobe_multi link, false if perf uprobes. */
USDT_API bool usdt_link__is_multi(const struct usdt_link *link);
/**
 * @brief **usdt_link__fd()**: the fd of the link's uprobe_multi link, owned
 * by the link (for bpf_link_get_info_by_fd() and the like), or -EOPNOTSUPP
 * for per-site uprobes (one kernel object per call site), -EINVAL for NULL.
 */
USDT_API int usdt_link__fd(const struct usdt_link *link);
/**
 * @brief **usdt_link__pin()** pins the link's uprobe_multi link at path, in
 * a BPF filesystem, as bpf_link__pin() does.
 * @return 0, -EOPNOTSUPP for per-site uprobes, -EINVAL, or the kernel's
 * errno (-EEXIST, -EPERM outside a BPF filesystem, ...).
 *
 * The pinned probe keeps running after usdt_link__destroy() and after
 * this process exits, until the pin is removed (unlink()): so its spec IDs
 * and IP-map entries stay in the maps and the manager never hands them out
 * again, not even after usdt_link__destroy().
 */
USDT_API int usdt_link__pin(struct usdt_link *link, const char *path);

/* ---------------------------------------------------------------------- */
/* libbpf's own flow: skeletons and struct bpf_link                       */

struct bpf_link;
struct bpf_usdt_opts;

/**
 * @brief **usdt_program__attach()** is bpf_program__attach_usdt() for
 * programs built on libusdt's usdt.bpf.h: the same arguments (libbpf's
 * struct bpf_usdt_opts, its usdt_cookie read by bpf_usdt_cookie()), and a
 * struct bpf_link of libbpf's, destroyed by bpf_link__destroy().
 * @return the link, or NULL with errno set, as usdt_manager__attach()
 * sets it (ENOENT for no such probe, E2BIG when the spec map is full,
 * ...), and EOPNOTSUPP also where no one struct bpf_link can hold the
 * call sites: see below. An error of the kernel's in reading the
 * program's maps (ENOMEM, ...) is returned as it is, and attaches
 * nothing; so is one at load, where libusdt's section handler reads them.
 *
 * A program built on libbpf's header (one that names its maps) is handed
 * to bpf_program__attach_usdt(). One that names no spec map, whichever
 * header it was built on (it only counts hits, or reads only its
 * storage, which only a manager gives), is attached with no spec: it
 * reads none. libusdt also registers itself as libbpf's handler of SEC("usdt") when it
 * is loaded, so that a skeleton's __attach() attaches
 * SEC("usdt/PATH:PROVIDER:NAME") programs this way, into skel->links, for
 * objects with no usdt_manager (a manager attaches its own programs). A
 * program a manager prepared shares the manager's spec IDs, and what the
 * link uses stays in the maps after usdt_manager__free().
 *
 * The link is one uprobe_multi link (Linux 6.6; with libbpf before 1.3 it
 * reaches libbpf through a moment's pin in a BPF file system of the
 * library's own that no mount namespace sees, made with fsmount(), which
 * needs CAP_SYS_ADMIN; without it, in a mounted one; with neither: the
 * error of fsopen(), EPERM as a rule), or, for a single call site, a perf
 * uprobe. Several call sites without uprobe_multi: EOPNOTSUPP, and
 * usdt_manager__attach() attaches them.
 * What a link holds in the maps is given back once the kernel link is
 * gone (destroyed, and not pinned), when the spec map runs short. Links
 * are looked up by ID, or, without CAP_SYS_ADMIN, in the kernel's BPF
 * link iterator (CAP_BPF and CAP_PERFMON; Linux 6.0 with kernel BTF);
 * where neither can be had, those whose fd this process no longer has are
 * kept, as a pin may hold them.
 */
USDT_API struct bpf_link *
usdt_program__attach(const struct bpf_program *prog, pid_t pid,
		     const char *binary_path, const char *usdt_provider,
		     const char *usdt_name, const struct bpf_usdt_opts *opts);

/*
 * Referenced so that a static link of libusdt keeps its section handler,
 * which a skeleton app that calls no libusdt function still needs. One
 * weak, hidden pointer for the whole program (or shared object), however
 * many of its files include this header, not a static in each.
 * USDT_NO_SKEL_HANDLER before the include: a static link without it, and
 * without libbpf's prog-handler calls, as the reader alone needs.
 */
#ifndef USDT_NO_SKEL_HANDLER
USDT_API extern int usdt__handler_anchor;
__attribute__((weak, visibility("hidden"), used)) int *usdt__handler_ref =
	&usdt__handler_anchor;
#endif

#ifdef __cplusplus
}
#endif

#endif /* __LIBUSDT_USDT_H */
