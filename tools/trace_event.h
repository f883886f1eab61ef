/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What tools/usdt_trace.bpf.c and tools/trace*.c share byte for byte: the
 * record sent through the ring buffer for each hit, the per-probe settings
 * the program looks up by cookie, the filter it evaluates, and the keys of
 * the summary map. Fixed-width fields only, so both compilers lay them out
 * alike.
 */
#ifndef __USDT_TRACE_EVENT_H
#define __USDT_TRACE_EVENT_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define TRACE_MAX_ARGS 12
#define TRACE_MAX_LOADS 8 /* typed loads per probe */
/* A hit's values: its arguments, then its loads. */
#define TRACE_MAX_VALS (TRACE_MAX_ARGS + TRACE_MAX_LOADS)
#define TRACE_COMM_LEN 16
/* Bytes of string data one event can carry, all its strings together, and
 * the longest string (including its NUL) --string-size accepts. */
#define TRACE_STR_AREA 2048
#define TRACE_STR_MAX 1024

/* What the program does with a hit that passes the filter. */
enum trace_mode {
	TRACE_EVENTS = 0, /* send a usdt_hit to user space */
	TRACE_COUNT,	  /* count it per probe (and pid) */
	TRACE_HIST,	  /* log2 histogram of one argument */
	TRACE_LATENCY,	  /* time from a START probe to the next END */
};

/*
 * Many probes are attached a pattern at a time rather than a probe at a
 * time (a kernel link costs a grace period to close): their cookie is
 * TRACE_COOKIE_BY_OFFSET and the program finds the probe from the call
 * site's offset in the file, in the map site_probe.
 */
#define TRACE_COOKIE_BY_OFFSET 0xffffffffu

/*
 * A call site: its file's inode number and its offset in that file. Not
 * the device: what stat() reports (st_dev) is not always the superblock's
 * device the kernel sees (btrfs subvolumes), and an inode number and an
 * offset that are both a call site's in two files is not a real risk.
 */
struct trace_site_key {
	__u64 ino;
	__u64 off;
};

/* Per probe (array map indexed by cookie). */
#define TRACE_ROLE_START 1u
#define TRACE_ROLE_END 2u
/* Attached only for its semaphore (--enable): its hits are dropped. */
#define TRACE_ROLE_QUIET 8u
struct trace_probe_cfg {
	/* Bit i: value i points to a string: argument i, or (from
	 * TRACE_MAX_ARGS on) an 8-byte typed load, *(uint64 *)(arg0 + 8),
	 * read first. The arrays below are per value too. */
	__u32 str_mask;
	__u32 role; /* TRACE_ROLE_* */
	/* Bit i: string i need not end in a NUL (%.*s): exactly as many
	 * bytes as argument len_arg[i] says are read, clamped to 0 ..
	 * str_size - 1, with bpf_probe_read_user(). */
	__u32 fixed_mask;
	__u8 len_arg[TRACE_MAX_VALS];
	/* String i (NUL-terminated): at most this many bytes, the NUL
	 * included (%.Ns: N + 1); 0: str_size. */
	__u16 str_max[TRACE_MAX_VALS];
	/* A format's typed loads, *(int32 *)(arg2 + 16): value
	 * TRACE_MAX_ARGS + k of the hit is loads[k] read. */
	__u32 load_cnt;
	struct trace_load {
		__u8 arg;  /* the pointer: argument arg, plus off */
		__u8 size; /* 1, 2, 4 or 8 bytes */
		__u8 is_signed;
		__u8 pad;
		__s32 off;
	} loads[TRACE_MAX_LOADS];
};

/*
 * The filter: comparisons in disjunctive normal form, evaluated in order;
 * a term with group_end closes an AND group, and the first group whose
 * terms all hold lets the hit through. No terms: everything passes.
 */
#define TRACE_MAX_TERMS 16
enum trace_operand { TRACE_OPD_PID = TRACE_MAX_ARGS, TRACE_OPD_TID };
/* TRACE_SEQ, TRACE_SNE: the string argN points to is (is not) strs[i]
 * of term i (below TRACE_FSTR - 1 bytes), which user space also puts in
 * the map filter_strs; the term's value is then its length. With len_arg
 * (str(argN, argM): M + 1), the string is argM's count of bytes, no NUL
 * needed: equal when that count is the value and the bytes match. */
enum trace_op {
	TRACE_EQ,
	TRACE_NE,
	TRACE_LT,
	TRACE_LE,
	TRACE_GT,
	TRACE_GE,
	TRACE_SEQ,
	TRACE_SNE
};
#define TRACE_FSTR 64
struct trace_term {
	__u8 operand; /* 0..11: argN; or enum trace_operand */
	__u8 op;      /* enum trace_op: signed 64-bit, or string */
	__u8 group_end;
	__u8 len_arg; /* TRACE_SEQ, TRACE_SNE: 0, or M + 1 */
	__u8 pad[4];
	__s64 value;
};
struct trace_filter {
	__u32 term_cnt;
	__u32 pad;
	struct trace_term terms[TRACE_MAX_TERMS];
	char strs[TRACE_MAX_TERMS][TRACE_FSTR];
};

/*
 * Summary map keys. TRACE_COUNT: {cookie, pid or 0}. TRACE_HIST: {cookie,
 * slot}. TRACE_LATENCY: {TRACE_LAT_KEY, slot}, plus the two counters
 * (and with keep_sum either's sum, below).
 * Slot 0 holds 0, slot k (1..64) [2^(k-1), 2^k), TRACE_SLOT_NEG negatives.
 */
#define TRACE_SLOT_NEG 65
#define TRACE_SLOTS 66
#define TRACE_LAT_KEY 0xffffffffu
#define TRACE_LAT_UNMATCHED_START 100
#define TRACE_LAT_UNMATCHED_END 101
/* With keep_sum (--listen): the sum of the values a histogram counted,
 * under {cookie or TRACE_LAT_KEY, TRACE_SUM_AUX}; Prometheus's histograms
 * have a _sum. Modulo 2^64: a signed argument's sum reads as __s64. */
#define TRACE_SUM_AUX 102
/* --count --sum ARGN: each key's sum of argument ARGN (modulo 2^64), under
 * the key with TRACE_AUX_SUM added to aux (no pid has that bit). */
#define TRACE_AUX_SUM 0x80000000u
struct trace_sum_key {
	__u32 cookie;
	__u32 aux;
};

/* --count --by PART,...: {cookie, pid or 0, each value part's argument
 * value, each string part's string (up to TRACE_BY_STR - 1 bytes)}, in
 * map by_sums. A part is argN, str(argN) or str(argN, argM); at most
 * TRACE_BY_PARTS of them, TRACE_BY_STRS strings. */
#define TRACE_BY_STR 64
#define TRACE_BY_NONE 0xffffffffu
#define TRACE_BY_PARTS 4
#define TRACE_BY_STRS 2
struct trace_by_key {
	__u32 cookie;
	__u32 aux;
	__u64 val[TRACE_BY_PARTS]; /* part i's value; 0 for a string */
	char str[TRACE_BY_STRS][TRACE_BY_STR]; /* the strings, in order */
};
struct trace_by_part {
	__u8 arg;
	__u8 str;     /* 0: a value; else 1 + its index in str[] */
	__u8 len_arg; /* str(argN, argM): M + 1; 0: to a NUL */
	__u8 pad;
};

/* --latency --slower-than: a pair slower than the bound, sent as its END
 * hits, in place of a usdt_hit (told apart by its cookie, at the same
 * offset). key: the --by key START's arguments gave, or zero. */
#define TRACE_SLOW_COOKIE 0xfffffffeull
struct trace_slow {
	__u64 ts;     /* END's bpf_ktime_get_ns() */
	__u64 cookie; /* TRACE_SLOW_COOKIE */
	__u64 ns;     /* from START to END */
	__u32 pid;
	__u32 tid;
	char comm[TRACE_COMM_LEN];
	struct trace_by_key key;
};

struct usdt_hit {
	__u64 ts;	/* bpf_ktime_get_ns() */
	__u64 cookie;	/* index into the tool's probe table */
	__u64 ip;	/* the call site's address in the process */
	__u32 pid;	/* the process (tgid) */
	__u32 tid;	/* the thread */
	__s32 arg_cnt;	/* the call site's, or its negative errno */
	__u32 err_mask; /* bit i: argument i could not be read */
	char comm[TRACE_COMM_LEN];
	__u64 args[TRACE_MAX_VALS]; /* then the loads' values */
	__s16 errs[TRACE_MAX_VALS]; /* bpf_usdt_arg()'s errno, when set */
	__u8 sizes[TRACE_MAX_VALS]; /* bpf_usdt_arg_size(), 0 if unknown */
	/* For string arguments: bytes of str[] used, with the NUL; 0 when
	 * the string could not be read (errs[] says why). The strings
	 * follow the record, at sizeof(struct usdt_hit), one after another
	 * in value order. */
	__u16 str_len[TRACE_MAX_VALS];
	__u32 str_total; /* bytes of str[] sent */
	/* The types of the call site that fired, from its spec (valid when
	 * arg_cnt >= 0; sizes[] are their sizes): so every hit prints with
	 * its own site's types, without finding which site it was. */
	__u32 signed_mask; /* bit i: value i is signed */
	__u32 float_mask;  /* bit i: argument i is a float */
	/* --ustack: bytes of user stack (u64 return addresses, innermost
	 * first) TRACE_STR_AREA bytes past the record (after the strings'
	 * area); 0 without or when it failed. */
	__u32 stack_len;
	__u32 pad;
};

#define TRACE_STACK_MAX (127 * 8) /* --ustack: 127 frames */

_Static_assert(sizeof(struct usdt_hit) == 336, "usdt_hit layout");
_Static_assert(TRACE_STR_AREA + TRACE_STACK_MAX <= 2 * TRACE_STR_AREA,
	       "the stack fits after the strings");
_Static_assert(sizeof(struct trace_probe_cfg) == 140, "trace_probe_cfg layout");
_Static_assert(sizeof(struct trace_by_key) == 168, "trace_by_key layout");
_Static_assert(sizeof(struct trace_slow) == 216, "trace_slow layout");

#endif /* __USDT_TRACE_EVENT_H */
