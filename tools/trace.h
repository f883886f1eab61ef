/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The parts of `usdt trace`: the options and the run (trace_cmd.c), the
 * probe table (trace_table.c), the files a process maps later
 * (trace_watch.c) and those of every process, -a (trace_all.c), loading
 * and attaching (trace_load.c), the per-probe formats and event printing
 * (trace_fmt.c), the filter expression (trace_filter.c), the in-kernel
 * summaries (trace_sum.c), --listen's server (trace_http.c) of their
 * Prometheus text (trace_prom.c), and beneath them the clocks and times
 * as they print (trace_time.c).
 * Calls go one way: no two of these files need each other.
 */
#ifndef __USDT_TRACE_H
#define __USDT_TRACE_H

#include <signal.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "tool.h"
#include "trace_event.h"

/* How one argument of one call site prints by default. */
struct arg_fmt {
	bool is_signed;
	bool is_float;
	int size;
};

/* A conversion of a user's format, printf's way:
 * %[N$][flags][width][.precision][length]conversion, with conversions
 * s d i u x X o p c f, flags "-+ #0", '*' (or *N$) for a width or
 * precision taken from an argument, length hh h l ll z j t. */
#define FMT_MAX_CONVS 24
struct conv {
	char c;
	char flags[6];	  /* as written, each once, NUL-terminated */
	int8_t size;	  /* bytes the argument is taken at; 0: 8 */
	int8_t arg;	  /* the argument it prints */
	int8_t width_arg; /* '*': the argument giving the width, or -1 */
	int8_t prec_arg;  /* '.*': the one giving the precision, or -1 */
	int width;	  /* -1: none */
	int prec;	  /* -1: none */
	const char *lit;  /* text before it (not NUL-terminated) */
	size_t lit_len;
};

/*
 * Patterns and formats from the command line: every word after a TARGET
 * is a pattern, except one containing '%', which is the format of the
 * pattern before it. --latency's START and END come first, --enable's
 * patterns last (from quiet_from on).
 */
struct selection {
	struct pattern *pats;
	int pat_cnt;
	int quiet_from;		/* patterns from here on are --enable's */
	struct probe_fmt *fmts; /* per pattern */
	bool *has_fmt;
};

struct probe_fmt {
	struct conv convs[FMT_MAX_CONVS];
	int conv_cnt;
	int arg_need;	  /* 1 + the highest argument it takes */
	const char *tail; /* text after the last conversion */
	/* Which arguments the BPF side reads as strings, and how, and its
	 * typed loads (role left 0). */
	struct trace_probe_cfg str_cfg;
	char *text; /* a quoted format's, unescaped: free() */
};

#define TRACE_PROBE_FMTS 8 /* formats one probe takes */

struct probe_ent {
	const char *provider; /* borrowed from the usdt_file */
	const char *name;
	int arg_cnt;
	/* The first good site's; each hit prints with its own site's
	 * types, which it carries (site_args()). */
	struct arg_fmt args[TRACE_MAX_ARGS];
	const char *reasons[TRACE_MAX_ARGS]; /* why an argument is unreadable */
	uint32_t warned; /* bit i: reason i has been printed */
	/* The user's formats for it, one line each per hit: those of every
	 * pattern with a format that matches it, in order; none: one line
	 * with the default output. */
	const struct probe_fmt *fmts[TRACE_PROBE_FMTS];
	int fmt_cnt;
	struct trace_probe_cfg str_cfg; /* their string reads, merged */
	uint32_t role;			/* TRACE_ROLE_* */
	struct usdt_link *link;
	int file;  /* which traced file */
	dev_t dev; /* and its identity */
	ino_t ino;
};

struct trace_ctx {
	bool json;
	long max_count;
	long count;
	struct probe_ent *probes;
	size_t probe_cnt;
	size_t site_cnt; /* good call sites of the probes */
	struct site_ref {
		uint64_t off;
		uint32_t probe, file;
	} * site_refs;
	struct arg_fmt hit_args[TRACE_MAX_ARGS]; /* site_args()'s */
	bool ustack;				 /* --ustack */
	bool red_zone;				 /* --allow-red-zone-writes */
	bool text_only;	       /* --text-only: no TIME PID TID COMM PROBE */
	int time_digits;       /* --time-unit: 0 ns, 3 us, 6 ms, 9 s */
	unsigned int str_size; /* -s */
	/* Strings read again from user space (trace_fmt.c's refetch()). */
	char refetched[TRACE_MAX_VALS][TRACE_STR_MAX + 1];
	struct stack_state *stacks; /* trace_stack.c's, made at first use */
	int write_err;		    /* errno of a failed write to stdout */
	/* CLOCK_REALTIME - CLOCK_MONOTONIC (bpf_ktime_get_ns()'s), in ns,
	 * at the start: a hit's wall-clock time for --json. */
	int64_t wall_off;
	struct sum_state *sums; /* --slower-than's lines print there */
};

/* A file being traced. */
struct trace_file {
	struct target target; /* as shown, and the path opened */
	struct usdt_file *file;
	dev_t dev;
	ino_t ino;
	int group;     /* the TARGET word that named it */
	bool globbed;  /* one of a glob's matches */
	bool replaced; /* its path names another file now */
};

/* trace_files.c */
/* The file a user named (with pid > 0, as that process sees it). */
int trace_file_resolve(const char *name, pid_t pid, struct trace_file *out);
/*
 * Append the files a TARGET word names to files[0..*cnt), as group: the
 * one file, or for a word with glob characters that names no file itself,
 * each file it matches (sorted; at most TRACE_GLOB_MAX). 0, or -errno
 * (-ENOENT: no such file, or nothing matches).
 */
#define TRACE_GLOB_MAX 4096
int trace_files_add(const char *word, pid_t pid, int group,
		    struct trace_file **files, int *cnt);
/* Every file pid maps, once each; returns the count or -errno. */
int trace_files_of_pid(pid_t pid, struct trace_file **out);
void trace_files_free(struct trace_file *t, int cnt);

/* trace_fmt.c */
int fmt_parse(const char *s, struct probe_fmt *out, char *why, size_t len);
/*
 * A FORMAT word: fmt_parse()'s, or bcc's way, '"FMT", EXPR, ...' where
 * each conversion takes the value of its EXPR: argN, or a typed load
 * *(TYPE *)argN or *(TYPE *)(argN + K) (TYPE int8..int64, uint8..uint64,
 * or char, short, int, long, unsigned ...; at most TRACE_MAX_LOADS),
 * an 8-byte one also a string's pointer for %s, or in str(LOAD).
 * Returns 0 or -EINVAL with why; out->text is then to be freed.
 */
int fmt_parse_word(const char *w, struct probe_fmt *out, char *why, size_t len);
/* Add from's string reads to into's (several formats of one probe): the
 * wider bound wins; 0, or -EINVAL when they read one argument two ways
 * (up to a NUL and counted, or counted by two lengths). */
int fmt_cfg_merge(struct trace_probe_cfg *into,
		  const struct trace_probe_cfg *from);
/* "usdt: trace: PROVIDER:NAME: message" on stderr, the names escaped;
 * returns 1. */
int probe_err(const struct probe_ent *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int on_hit(void *data, void *raw, size_t len);
/* The types of the site an event came from; 0 if the file is unknown. */
const struct arg_fmt *site_args(struct trace_ctx *ctx, struct probe_ent *p,
				const struct usdt_hit *e, int *cnt);
int output_check(struct trace_ctx *ctx);

/* trace_time.c: clocks and times as they print (--time-unit's digits of
 * fraction: 0 ns, 3 us, 6 ms, 9 s). */
/* ns since the epoch as a JSON string, RFC 3339 in UTC with nanoseconds:
 * "2026-12-03T16:56:21.123456789Z". */
void print_wall(FILE *f, int64_t ns);
/* ns in text as --time-unit says: digits 0 (ns), 3 (us), 6 (ms) or 9 (s)
 * of fraction, "1234.567891" for 1234567891 ns in ms. */
void print_time(FILE *f, uint64_t ns, int digits);
/* The same into buf; returns buf. */
#define TIME_TEXT_LEN 48
char *time_text(char buf[TIME_TEXT_LEN], uint64_t ns, int digits);
/* The unit's name ("ns", "us", "ms", "s") and its length in ns. */
const char *time_unit_name(int digits);
uint64_t time_unit_ns(int digits);
/* Now, in ns since the epoch; and CLOCK_REALTIME - CLOCK_MONOTONIC. */
int64_t wall_now(void);
int64_t wall_offset(void);

/* trace_filter.c */
/*
 * "str(argN)" or "str(argN, argM)" at *sp (blanks allowed inside): N into
 * *arg, M (the string's length in bytes; -1 without) into *len_arg, and
 * *sp past it. 0; -EINVAL if it is not one or N == M, -ERANGE for an
 * argument past arg11. Nothing is consumed on error.
 */
int trace_str_expr(const char **sp, int *arg, int *len_arg);
int filter_parse(const char *s, struct trace_filter *f, char *why, size_t len);

/* trace_sum.c */
struct sum_state;
#define TRACE_BY_KEYS 16384 /* --by: distinct keys counted */

struct sum_cfg {
	enum trace_mode mode;
	bool json;
	bool by_pid;
	int hist_arg;
	int sum_arg;	    /* --sum: the argument, or -1 */
	uint64_t slower_ns; /* --slower-than, in ns; 0: none */
	int time_digits;    /* --time-unit (as trace_ctx's) */
	int by_cnt;	    /* --by's parts; 0: no --by */
	struct trace_by_part by[TRACE_BY_PARTS];
	const char *by_word; /* as given */
	const char *lat_start, *lat_end;
};
struct sum_state *sum_new(const struct sum_cfg *cfg, int map_fd,
			  const struct probe_ent *probes, size_t probe_cnt);
/* Print what was added since the last call; final: the end of the trace
 * (open latency starts count as unmatched). Returns 0 or -errno of a
 * failed write. */
int sum_print(struct sum_state *s, double t, uint64_t lost, bool final,
	      int starts_fd);
void sum_free(struct sum_state *s);
/* --slower-than: a line for pair e (at ts + wall_off on the wall clock);
 * 0 or -errno of a failed write. */
int sum_print_slow(const struct sum_state *s, const struct trace_slow *e,
		   int64_t wall_off);
/* --listen: the totals so far as Prometheus metrics, appended to out;
 * 0 or -ENOMEM. */
struct prom_buf;
int sum_metrics(struct sum_state *s, struct prom_buf *out);
/* Entries the summary map needs. */
uint32_t sum_map_size(const struct sum_cfg *cfg, size_t probe_cnt);
/* The probe table moved or grew (trace_watch.c). */
void sum_set_probes(struct sum_state *s, const struct probe_ent *probes,
		    size_t probe_cnt);

/* trace_prom.c: Prometheus's text format (0.0.4), built in memory. */
struct prom_buf {
	char *p; /* NUL-terminated; free() */
	size_t len, cap;
	bool oom; /* an append failed: the text is cut */
};
void prom_put(struct prom_buf *b, const char *s, size_t len);
void prom_printf(struct prom_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* s[0..len) as a label value: backslash, '"' and newline escaped. */
void prom_escape(struct prom_buf *b, const char *s, size_t len);
/* name="value" (escaped), after a comma unless just after a '{'. */
void prom_label(struct prom_buf *b, const char *name, const char *val,
		size_t len);
/* A metric's "# HELP" and "# TYPE" lines. */
void prom_head(struct prom_buf *b, const char *name, const char *type,
	       const char *help);
/* One log2 histogram (slots as trace_event.h numbers them) as name_bucket
 * lines with cumulative counts up to le="+Inf", name_sum and name_count;
 * bounds and sum divided by scale (1e9: nanoseconds to seconds). */
struct prom_hist {
	const char *name;
	const char *labels;    /* a="x",b="y" (escaped), or "" */
	const uint64_t *slots; /* TRACE_SLOTS counts */
	bool neg;	       /* a bucket for negatives (signed values) */
	double sum;
	double scale;
	/* 0 or 1: the slots count the values themselves; else value v of
	 * a slot stands for [v * step, (v + 1) * step) of the unit that
	 * scale divides and sum is in (--latency's --time-unit). */
	uint64_t step;
};
void prom_hist(struct prom_buf *b, const struct prom_hist *h);

/* trace_http.c: the HTTP server of --listen, run from the trace's poll
 * loop; it never blocks (see there). */
struct http_server;
/* A page's text: 0, or -ENOMEM. */
typedef int (*http_page_fn)(void *arg, struct prom_buf *out);
/* Listen on "[ADDR:]PORT" (ADDR 127.0.0.1 when left out; [V6ADDR]:PORT
 * too): the server, or NULL with why (said by the caller). */
struct http_server *http_listen(const char *where, http_page_fn page, void *arg,
				char *why, size_t len);
/* Wait up to timeout_ms for the server's sockets or fd (POLLIN; -1:
 * none), and serve what is ready. 1 when fd is readable, else 0. */
int http_poll(struct http_server *s, int fd, int timeout_ms);
void http_free(struct http_server *s);

/* The command line of `usdt trace` (trace_cmd.c). */
struct trace_opts {
	pid_t pid;
	const char *cmd;
	const char *filter;
	double duration, interval;
	enum usdt_attach_mode mode;
	struct sum_cfg sum;
	unsigned int str_size;
	uint32_t rb_size; /* the ring buffer's bytes; 0: the default */
	bool quiet;
	bool ustack;	    /* --ustack */
	bool red_zone;	    /* --allow-red-zone-writes */
	bool fault_in;	    /* --fault-in */
	bool text_only;	    /* --text-only */
	bool all;	    /* -a: every process, by the patterns */
	const char *listen; /* --listen [ADDR:]PORT */
	char **enables;	    /* --enable's patterns */
	int enable_cnt;
	char **pos; /* TARGET, patterns and formats */
	int pos_cnt;
	int pat_from; /* where the patterns start: 0 without TARGET */
};

/* A TARGET word and the patterns and formats after it, up to the next. */
struct trace_group {
	const char *target; /* NULL: every file of -p PID */
	int from, to;	    /* its words in o.pos */
	struct selection sel;
	/* A bare name (no '/') that the process of -p or -c does not map
	 * yet: its file is traced once the process maps one of that name
	 * (trace_watch.c), as a JVM maps libjvm.so. */
	bool wait_mapped;
	bool found; /* and the process mapped one */
};

struct sum_state;
struct usdt_trace;
struct ring_buffer;
struct usdt_manager;

/* One run of `usdt trace`, from the command line to the end. */
struct trace_run {
	struct trace_opts o;
	struct trace_ctx ctx;
	struct trace_group *groups;
	int group_cnt;
	struct trace_file *files;
	int file_cnt;
	const char *shown; /* TARGET, or "pid N" */
	char shown_buf[32];
	struct usdt_trace *skel;
	struct usdt_manager *man;
	struct ring_buffer *rb;
	struct sum_state *sums;
	struct http_server *http; /* --listen's */
	bool target_done;	  /* --listen: the command or process ended */
	pid_t child, attach_pid;
	int go_fd, pid_fd;
	bool child_done;
	/* Attached a pattern at a time (see TRACE_COOKIE_BY_OFFSET). */
	bool by_pattern;
	/* The BPF program looks call sites up (bpf_find_vma()); the kernel
	 * cannot run that for us (see retry_without_vma()). */
	bool use_sites, no_vma;
	/* libbpf finds no kernel BTF: it gets an empty one (empty_btf()). */
	bool no_kernel_btf;
	/* --fault-in: the program loads sleepable, to fault in what hits
	 * read (see fault_in in usdt_trace.bpf.c); no_fault_in once the
	 * kernel refused that. reads_user: hits read user memory. */
	bool fault_in, no_fault_in, reads_user;
	struct usdt_link **pat_links;
	int pat_link_cnt;
	size_t attached; /* probes attached */
	int cfg_fd;	 /* the probe_cfg map, once loaded */
	/* -p PID without TARGET: files mapped later are looked for
	 * (trace_watch.c), with room for probe_cap probes in the maps. */
	bool watch;
	size_t probe_cap;
	double next_scan;
	bool watch_full; /* said once: no room left */
	/* Files named by path with no pid or command: followed when their
	 * path comes to name another file (trace_follow_scan()). */
	bool follow;
	int follow_cnt;
	double next_follow;
	/* -a: the files of every process that have matching probes, found
	 * and let go by trace_all.c's looks at /proc. */
	bool all;
	struct all_state *as;
	double next_all;
	struct watch_state {
		bool started;
		/* The maps text last read: its length and hash. */
		size_t maps_len;
		uint64_t maps_hash;
		/* The names of files in r->files: never read again. */
		struct name_set kept;
		/* The other files mapped at the last look, read then:
		 * names (owned) and their set. */
		char **names;
		size_t name_cnt;
		struct name_set mapped;
	} ws;
};

/* trace_time.c: the signal that stops the run (trace_cmd.c's handler
 * sets it), 0 until one comes. */
extern volatile sig_atomic_t trace_stop_signal;
/* trace_files.c: open a file to trace; 0, or -errno of the open. */
int trace_open_file(struct trace_file *f);

/* trace_table.c: the patterns and formats, and the table of probes they
 * match (also for a file trace_watch.c finds mapped later). */
void trace_selection_free(struct selection *sel);
/* The patterns and formats of o->pos[from..to); 0 or the exit status. */
int trace_selection_parse(const struct trace_opts *o, int from, int to,
			  struct selection *sel);
int trace_build_table(struct trace_file *tf, int fi, struct selection *sel,
		      struct trace_ctx *ctx);
int trace_check_fmts(struct probe_ent *p);
/* Roles for --latency and the formats' fit; 0 or the exit status. */
int trace_check_table(struct trace_ctx *ctx, const struct trace_opts *o,
		      const struct selection *sel);

/* trace_load.c: the skeleton configured, loaded and attached. */
/* From how many probes on they are attached a pattern at a time: each
 * kernel link costs tens of milliseconds to close (an RCU grace period),
 * which for libjvm's 500 probes made every exit take half a minute. */
#define TRACE_BY_PATTERN_MIN 32
/* Does every probe answer to exactly one pattern, and every file appear
 * once (else a call site would be attached twice)? */
bool trace_patterns_disjoint(const struct trace_run *r);
int trace_load(struct trace_run *r);
int trace_set_probe_cfg(struct trace_run *r, uint32_t i);
int trace_attach_all(struct trace_run *r);
struct usdt_link *trace_attach_one(struct trace_run *r, size_t i);
const char *trace_attach_why(const struct trace_run *r,
			     const struct probe_ent *p, int err);
/* The "attached N probes" line on stderr. */
void trace_say_attached(const struct trace_run *r);
/* The call sites attached, and (files) in how many files. */
size_t trace_site_cnt(const struct trace_run *r, size_t *files);

/* trace_peek.c: a traced process's memory, read from user space with a
 * deadline. */
#define TRACE_PEEK_WAIT_MS 200
/*
 * process_vm_readv() of pid's remote[0..cnt) (at most 4 pieces) into buf
 * (len bytes, at most TRACE_STR_MAX), waited for at most
 * TRACE_PEEK_WAIT_MS (20 ms once trace_stop_signal is set): the bytes
 * read, or -errno: -ETIMEDOUT when it took longer, or was not tried
 * because an earlier read of pid is still waiting (a page held with
 * userfaultfd, a FUSE server that does not answer); -EAGAIN when no
 * reader thread could be made. Main thread only.
 */
ssize_t trace_peek(pid_t pid, void *buf, size_t len, const struct iovec *remote,
		   unsigned long cnt);
/* Is a read still held in the kernel? Its thread ends only with the
 * process. */
bool trace_peek_stuck(void);

/* trace_stack.c: the user stack a hit carries, symbolized. */
struct stack_state;
void stack_print(struct trace_ctx *ctx, const struct usdt_hit *e, size_t len);
void stack_free(struct stack_state *st);

/* trace_watch.c */
/* Probes of files mapped after the start that the BPF maps keep room
 * for. */
#define TRACE_WATCH_SPARE 1024
/* Look at the process's maps again and trace the matching probes of the
 * files it mapped since; 0 or the exit status (out of memory). */
int trace_watch_scan(struct trace_run *r);
void trace_watch_free(struct trace_run *r);
/* Trace the matching probes of f (opened, not yet in r->files), which
 * moves into r->files if it has any (*f zeroed); how ends the line that
 * says so. 0 or the exit status (out of memory). */
int trace_add_file(struct trace_run *r, struct trace_file *f, const char *how);
/* Paths followed when replaced on disk, in all; probes kept room for. */
#define TRACE_FOLLOW_MAX 8
#define TRACE_FOLLOW_SPARE 256
/* Follow the named files' paths to the files they name now, where they
 * changed; 0 or the exit status (out of memory). */
int trace_follow_scan(struct trace_run *r);

/* trace_all.c: -a, the matching files of every process. */
/* A look at /proc every TRACE_ALL_MS at most (see trace_all.c). */
#define TRACE_ALL_MS 200
/* Look at every process again: attach the matching files mapped since,
 * detach those no process maps any more. 0 or the exit status. */
int trace_all_scan(struct trace_run *r);
void trace_all_free(struct trace_run *r);

#endif /* __USDT_TRACE_H */
