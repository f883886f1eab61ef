// SPDX-License-Identifier: BSD-2-Clause
/*
 * The one BPF program behind `usdt trace`. User space attaches it to every
 * probe that matches, each probe with its own cookie (an index into the
 * tool's table of probes). For each hit it applies the filter, then,
 * depending on the mode set before load, sends the arguments (and the
 * strings some of them point to) through a ring buffer, or adds the hit
 * to a summary kept here: a count, a log2 histogram of one argument, or
 * the time since a START probe on the same thread.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "usdt.bpf.h"
#include "../tools/trace_event.h"

char LICENSE[] SEC("license") = "GPL";

/* Set before load: 0 traces every process, else only this tgid. The
 * attach already filters by pid; this makes "only that process" hold even
 * where a kernel's uprobe filter lets other processes of the same file
 * through. */
const volatile __u32 target_tgid = 0;
/* The pid namespace whose ids the user sees (the tool's, set before load
 * when it is not the initial one: a container's): pids and tids printed,
 * compared with -p and --filter, and counted by --by-pid are that
 * namespace's. 0: the initial namespace, the kernel's own ids. */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
const volatile __u32 mode = TRACE_EVENTS;
const volatile __u32 by_pid = 0; /* TRACE_COUNT: one count per pid */
/* TRACE_COUNT --by: the parts of the key counted by (0: no --by), each
 * an argument's value or the string it points to (see trace_by_part). */
const volatile __u32 by_cnt = 0;
const volatile struct trace_by_part by_parts[TRACE_BY_PARTS] = { 0 };
const volatile __u32 ustack = 0;   /* events carry the user stack */
const volatile __u32 hist_arg = 0; /* TRACE_HIST: the argument */
/* TRACE_LATENCY --slower-than: send a trace_slow for each pair that took
 * this many ns or more; 0: none. */
const volatile __u64 slower_ns = 0;
/* TRACE_LATENCY: the histogram's unit in ns (--time-unit: 1000 for us),
 * so that its buckets are powers of two of that unit; sums and
 * --slower-than stay in ns. */
const volatile __u64 lat_unit = 1;
/* TRACE_COUNT --sum: also add up this argument per key (TRACE_AUX_SUM);
 * TRACE_BY_NONE: no. */
const volatile __u32 sum_arg = TRACE_BY_NONE;
/* TRACE_HIST and TRACE_LATENCY: also add up the values (TRACE_SUM_AUX);
 * left 0 without --listen, so that a hit costs what it did. */
const volatile __u32 keep_sum = 0;
const volatile __u32 str_size = 64; /* longest string read, with NUL */
const volatile struct trace_filter filter = { 0 };
const volatile __u32 page_shift = 12; /* the kernel's PAGE_SHIFT */
/* Set when probes attached a pattern at a time must be told apart by
 * their call site, found from the VMA (bpf_find_vma(), Linux 5.17): left
 * 0, that code is dead and the verifier never looks at it, so the program
 * still loads on older kernels. */
const volatile __u32 use_sites = 0;
/* The arguments a hit reads (bit i: argument i; set by the tool from the
 * options above, see arg_masks() in trace_load.c): args_first before the
 * filter, for it; args_then after it passes, for the rest. Each is read
 * once per hit, into the run's scratch (read_args()). */
const volatile __u32 args_first = 0;
const volatile __u32 args_then = 0;

/*
 * Set before load with --fault-in only, where the program loads sleepable
 * (BPF_F_SLEEPABLE, which the tool asks for when a run reads user memory
 * and the kernel takes it: Linux 6.0): the memory a hit will read
 * (strings, typed loads, filter and --by strings) is first faulted in
 * where it is not present, as the process itself would fault it, so that
 * a literal in a page it has not touched yet reads at the hit. Only in
 * processes of fault_uid, the tracer's own user. Even there, the wait is
 * that process's to set, not ours: it may hold the fault with
 * userfaultfd, or serve the file from a FUSE daemon that never answers,
 * and a program that sleeps holds up every uprobe's removal on the
 * machine. So it is opt-in, the hazard said in --help and usdt(1). Left
 * 0 (the default), that code is dead and the program loads
 * non-sleepable: it never waits.
 */
const volatile __u32 fault_in = 0;
const volatile __u32 fault_uid = 0;

/*
 * An index argument of a static function (64 bits wide: a 32-bit one is
 * zero-extended into a second register) made opaque before it is checked
 * against its bound, so that the check and the use are of one register:
 * GCC's BPF backend otherwise tests one copy and indexes with another,
 * whose bound the verifier does not know ("unbounded memory access").
 */
#define OPAQUE(x) asm volatile("" : "+r"(x))

/* Events dropped because the ring buffer was full, and summary updates
 * dropped because the summary map was full. */
__u64 lost_events = 0;
__u64 lost_sums = 0;
/* Hits skipped because RUN_SLOTS other runs of the program were under way
 * on the same CPU (see usdt_trace()). */
__u64 lost_overlap = 0;

/* 8 MiB: a Python start-up with line probes on sends a few MB at once. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* Indexed by cookie; sized to the probe table before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_probe_cfg);
} probe_cfg SEC(".maps");

/* Summaries (struct trace_sum_key -> hits); sized before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct trace_sum_key);
	__type(value, __u64);
} sums SEC(".maps");

/* --count --by: struct trace_by_key -> hits; sized before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct trace_by_key);
	__type(value, __u64);
} by_sums SEC(".maps");

/* File offset of a call site -> its probe, for TRACE_COOKIE_BY_OFFSET. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct trace_site_key);
	__type(value, __u32);
} site_probe SEC(".maps");

/* (process, address) -> probe: what probe_by_offset() found before, so
 * that a call site hit again needs no VMA lookup (which fails with EBUSY
 * when the process's mm is busy). */
struct ip_key {
	__u32 tgid;
	__u32 pad;
	__u64 ip;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct ip_key);
	__type(value, __u32);
} ip_probe SEC(".maps");

/* TRACE_LATENCY: thread -> time of its open START. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} starts SEC(".maps");

/* TRACE_LATENCY --by: thread -> the --by key its open START's arguments
 * gave (cookie TRACE_LAT_KEY, aux 0), added to by_sums at its END. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct trace_by_key);
} start_keys SEC(".maps");

/*
 * Runs of the program under way at once on one CPU, at most: each takes a
 * slot of its CPU's scratch (see usdt_trace()).
 */
#define RUN_SLOTS 4

/* One event under construction per run (a slot per CPU; see RUN_SLOTS):
 * the header and room for strings twice the area, so that every bounded
 * write stays inside it; then the copy of the hit's registers that its
 * arguments are read from and its spec's ID (read_args()), never sent. */
struct scratch {
	struct usdt_hit hit;
	char str[2 * TRACE_STR_AREA];
	struct usdt__regs regs;
	int spec_id; /* the hit's spec, for trace_arg() */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RUN_SLOTS);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* The filter's strings (zero-padded to TRACE_FSTR) -> the terms that
 * compare with each (bit i: term i); filled after load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_MAX_TERMS);
	__type(key, char[TRACE_FSTR]);
	__type(value, __u32);
} filter_strs SEC(".maps");

/*
 * Fault in the pages of [addr, addr + n) that are not present, from the
 * first on, up to one that cannot be (unmapped): a probe costs one
 * non-faulting read of a byte per page; a fault only where that fails.
 * At most two pages: n <= TRACE_STR_MAX, a page at least 4 KiB. A global
 * function, verified once; dead code unless fault_in. Returns 0.
 */
__noinline int trace_fault_in(__u64 addr, __u32 n)
{
	__u64 page = 1ull << page_shift, p = addr, last;
	char c;
	int i;

	if (!fault_in || !addr || !n || n > TRACE_STR_MAX)
		return 0;
	last = addr + n - 1;
	if (last < addr)
		return 0;
	for (i = 0; i < 2 && p <= last; i++) {
		if (bpf_probe_read_user(&c, 1, (const void *)p) &&
		    bpf_copy_from_user(&c, 1, (const void *)p))
			return 0;
		p = (p & ~(page - 1)) + page;
	}
	return 0;
}

/* The bytes read_str() reads of value i's string, at most. */
static __always_inline __u32 str_bytes(const struct trace_probe_cfg *cfg,
				       __u32 i)
{
	__u32 n = str_size, max = i < TRACE_MAX_VALS ? cfg->str_max[i] : 0;

	if (max && max < n)
		n = max;
	return n > TRACE_STR_MAX ? TRACE_STR_MAX : n;
}

static __always_inline void fault_arg(struct pt_regs *ctx, __u32 i, __s64 off,
				      __u32 n)
{
	long v = 0;

	if (!bpf_usdt_arg(ctx, i, &v) && v)
		trace_fault_in((__u64)v + (__u64)off, n);
}

/* Typed load k's string (an 8-byte load used as %s): the pointer, just
 * faulted in by fault_all(), read here, and the string it points to
 * faulted in. */
static __always_inline void
fault_load_str(struct pt_regs *ctx, const struct trace_probe_cfg *cfg, __u32 k)
{
	const struct trace_load *l = &cfg->loads[k];
	__u64 ptr = 0;
	long v = 0;

	if (!(cfg->str_mask & (1u << (TRACE_MAX_ARGS + k))) ||
	    bpf_usdt_arg(ctx, l->arg, &v) || !v ||
	    bpf_probe_read_user(&ptr, sizeof(ptr),
				(const void *)((__u64)v + (__s64)l->off)))
		return;
	trace_fault_in(ptr, str_bytes(cfg, TRACE_MAX_ARGS + k));
}

/* What the probe's format reads: its strings and typed loads. */
static __noinline int fault_values(struct pt_regs *ctx,
				   const struct trace_probe_cfg *cfg)
{
	__u32 i;

	for (i = 0; i < TRACE_MAX_ARGS; i++)
		if (cfg->str_mask & (1u << i))
			fault_arg(ctx, i, 0, str_bytes(cfg, i));
	for (i = 0; i < TRACE_MAX_LOADS; i++)
		if (i < cfg->load_cnt && cfg->loads[i].arg < TRACE_MAX_ARGS) {
			fault_arg(ctx, cfg->loads[i].arg,
				  (__s64)cfg->loads[i].off, cfg->loads[i].size);
			fault_load_str(ctx, cfg, i);
		}
	return 0;
}

/*
 * Before anything is written into the per-CPU scratch: fault in what this
 * hit will read (see fault_in). A fault may sleep, and meanwhile another
 * task may run this program on this CPU and use the scratch; after this,
 * nothing sleeps.
 */
static __noinline int fault_all(struct pt_regs *ctx, __u32 key)
{
	const struct trace_probe_cfg *cfg;
	__u32 i;

	if (!fault_in || (__u32)bpf_get_current_uid_gid() != fault_uid)
		return 0;
	for (i = 0; i < TRACE_MAX_TERMS; i++)
		if (i < filter.term_cnt && (filter.terms[i].op == TRACE_SEQ ||
					    filter.terms[i].op == TRACE_SNE))
			fault_arg(ctx, filter.terms[i].operand, 0, TRACE_FSTR);
	for (i = 0; mode != TRACE_HIST && i < TRACE_BY_PARTS; i++)
		if (i < by_cnt && by_parts[i].str)
			fault_arg(ctx, by_parts[i].arg, 0, TRACE_BY_STR);
	cfg = bpf_map_lookup_elem(&probe_cfg, &key);
	return mode == TRACE_EVENTS && cfg ? fault_values(ctx, cfg) : 0;
}

/*
 * The hit's arguments. Each is read once per hit, by trace_arg(), from a
 * copy of the hit's registers in the run's scratch, into its header; the
 * filter, --by, --sum, the histogram and the event take them from there
 * (arg_of()). trace_arg() takes scalars and no context, so the kernel
 * verifies it once whatever it has: bpf_usdt_arg(), which takes the
 * context, is verified at each call where the kernel has no BTF (about
 * 10,000 instructions each on s390x 6.1). Only --fault-in still calls
 * bpf_usdt_arg(): it reads before a slot is taken (fault_all()).
 */

/* Argument i of the hit, whose spec has ID id, read from the registers
 * copied into the scratch's slot, with its size, error and types, into
 * the header. Linux 6.1 takes no map value pointer as a global function's
 * argument, so it looks up both itself. Returns 0. */
__noinline int trace_arg(__u32 slot, __u32 i, int id)
{
	const struct usdt_spec *spec = id < 0 ? 0 : __usdt_spec_at(&id);
	struct scratch *s = bpf_map_lookup_elem(&scratch, &slot);
	__u64 n = i;
	int err, sz;

	OPAQUE(n);
	if (!s || n >= TRACE_MAX_ARGS)
		return 0;
	s->hit.args[n] = 0;
	s->hit.errs[n] = 0;
	s->hit.sizes[n] = 0;
	s->hit.str_len[n] = 0;
	/* Loads' too: the scratch keeps the last hit's. */
	if (n < TRACE_MAX_VALS - TRACE_MAX_ARGS)
		s->hit.str_len[TRACE_MAX_ARGS + n] = 0;
	if ((__s64)n >= s->hit.arg_cnt) /* arg_cnt < 0: the spec's error */
		return 0;
	sz = __usdt_arg_size(spec, n);
	s->hit.sizes[n] = sz > 0 ? sz : 0;
	/* Bit by bit, in the one function verified once: a loop over the
	 * arguments' flags in a static function made Linux 6.1's verifier
	 * walk past its limit of 1,000,000 instructions. */
	if (spec && n < USDT_MAX_ARG_CNT) {
		if (spec->args[n].flags & USDT_SPEC_F_SIGNED)
			s->hit.signed_mask |= 1u << n;
		if (spec->args[n].flags & USDT_SPEC_F_FLOAT)
			s->hit.float_mask |= 1u << n;
	}
	/* Straight into the header (a local would take stack), where what
	 * cannot be read stays 0. A 16-byte argument's low 8 bytes (-E2BIG,
	 * with them read) are read as they always were: printed, filtered,
	 * summed. */
	err = __usdt_read(&s->regs, 0, spec, n, (long *)&s->hit.args[n]);
	if (err && err != -E2BIG) {
		s->hit.err_mask |= 1u << n;
		s->hit.errs[n] = -err;
	}
	return 0;
}

/*
 * The arguments the hit reads before its filter (first: args_first) or
 * after it (args_then) into the header of its scratch s (slot slot), from
 * the copy of its registers there; the hit's first read looks the spec up
 * and makes the copy. A mask of none reads nothing: a plain --count, or
 * a filter with no argument, looks no spec up before its filter.
 */
static __noinline int read_args(struct pt_regs *ctx, struct scratch *s,
				__u32 slot, int first)
{
	__u32 mask = first ? args_first : args_then;
	const struct usdt_spec *spec;
	int i;

	if (!mask)
		return 0;
	if (first || !args_first) {
		spec = __usdt_spec_id((void *)ctx, &s->spec_id);
		s->hit.arg_cnt = spec ? spec->arg_cnt : -ESRCH;
		s->hit.err_mask = 0;
		s->hit.signed_mask = 0;
		s->hit.float_mask = 0;
		__usdt_copy_regs((void *)ctx, &s->regs);
	}
	for (i = 0; i < TRACE_MAX_ARGS; i++)
		if (mask & (1u << i))
			trace_arg(slot, i, s->spec_id);
	return 0;
}

/* Argument i as read_args() read it: 0, or -1 where it could not be
 * read or the site has no such argument. */
static __always_inline int arg_of(const struct scratch *s, __u64 i, long *v)
{
	if (i >= TRACE_MAX_ARGS || (__s64)i >= s->hit.arg_cnt ||
	    (s->hit.err_mask & (1u << i)))
		return -1;
	*v = s->hit.args[i];
	return 0;
}

/*
 * Is the string at user address ptr filter string i (term i's)? The
 * string, zero-padded, is looked up: no loop for either compiler to turn
 * into one the verifier cannot follow. With n < 0 it ends at its NUL, and
 * the read takes one byte more than any filter string has, so a longer
 * string never matches its prefix; else it is exactly n bytes (str(argN,
 * argM)), and the caller has checked n against the term's length. A
 * global function, verified once for all the terms.
 */
__noinline int trace_str_is(__u32 i, long ptr, long n, __u32 slot)
{
	struct scratch *s;
	__u32 *terms;
	char *buf;

	if (i >= TRACE_MAX_TERMS || n > TRACE_FSTR - 2 || (!ptr && n))
		return 0;
	/* The string in the scratch's area, which the event built after
	 * the filter has passed overwrites: not in the frame (see
	 * usdt_trace()). */
	s = bpf_map_lookup_elem(&scratch, &slot);
	if (!s)
		return 0;
	buf = s->str;
	__builtin_memset(buf, 0, TRACE_FSTR);
	if (n < 0) {
		if (bpf_probe_read_user_str(buf, TRACE_FSTR,
					    (const void *)ptr) <= 0)
			return 0;
	} else if (n > 0) {
		/* Against a constant again, hidden from the compiler first
		 * (see read_str()). */
		asm volatile("" : "+r"(n));
		if (n > TRACE_FSTR - 2)
			n = TRACE_FSTR - 2;
		if (n > 0 && bpf_probe_read_user(buf, n, (const void *)ptr))
			return 0;
	}
	terms = bpf_map_lookup_elem(&filter_strs, buf);
	return terms && (*terms >> i) & 1;
}

/* A string term: the string argument v points to is (is not) term i's;
 * with len_arg, as many bytes as that argument says (a negative count is
 * 0, as formats and --by take it). */
static __always_inline bool str_term(const struct scratch *s, __u32 i, long v,
				     __u32 slot)
{
	const volatile struct trace_term *t = &filter.terms[i];
	long n = -1;
	bool eq;

	if (t->len_arg && arg_of(s, t->len_arg - 1, &n))
		return false;
	if (t->len_arg)
		eq = (n < 0 ? 0 : n) == t->value &&
		     trace_str_is(i, v, n < 0 ? 0 : n, slot);
	else
		eq = trace_str_is(i, v, -1, slot);
	return eq == (t->op == TRACE_SEQ);
}

static __noinline int term_holds(const struct scratch *s, __u64 id, __u64 i,
				 __u32 slot)
{
	const volatile struct trace_term *t;
	long v = 0;
	__s64 x;

	OPAQUE(i);
	if (i >= TRACE_MAX_TERMS)
		return false;
	t = &filter.terms[i];
	if (t->operand == TRACE_OPD_PID)
		x = (__s64)(id >> 32);
	else if (t->operand == TRACE_OPD_TID)
		x = (__s64)(__u32)id;
	else if (arg_of(s, t->operand, &v))
		return false;
	else
		x = v;
	if (t->op == TRACE_SEQ || t->op == TRACE_SNE)
		return str_term(s, i, v, slot);
	switch (t->op) {
	case TRACE_EQ:
		return x == t->value;
	case TRACE_NE:
		return x != t->value;
	case TRACE_LT:
		return x < t->value;
	case TRACE_LE:
		return x <= t->value;
	case TRACE_GT:
		return x > t->value;
	default:
		return x >= t->value;
	}
}

static __noinline int passes(const struct scratch *s, __u64 id, __u32 slot)
{
	bool group = true;
	int i;

	if (!filter.term_cnt)
		return true;
	for (i = 0; i < TRACE_MAX_TERMS; i++) {
		if (i >= filter.term_cnt)
			break;
		if (group && !term_holds(s, id, (__u32)i, slot))
			group = false;
		if (filter.terms[i].group_end) {
			if (group)
				return true;
			group = true;
		}
	}
	return false;
}

/* A --by key under construction per run (168 bytes: more than the
 * stack should hold; a slot per CPU, see RUN_SLOTS). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RUN_SLOTS);
	__type(key, __u32);
	__type(value, struct trace_by_key);
} by_scratch SEC(".maps");

/* --by str(argN, argM): argument M's count of bytes at ptr into str,
 * clamped to 0 .. TRACE_BY_STR - 1 (str is zeroed: a NUL follows; a
 * failed read leaves it zeroed too). */
static __always_inline void by_read_counted(const struct scratch *s, char *str,
					    long ptr, __u32 len_arg)
{
	long n = 0;

	if (arg_of(s, len_arg, &n) || n <= 0 || !ptr)
		return;
	if (n > TRACE_BY_STR - 1)
		n = TRACE_BY_STR - 1;
	/* Against a constant again (see read_str()). */
	asm volatile("" : "+r"(n));
	if (n > TRACE_BY_STR - 1)
		n = TRACE_BY_STR - 1;
	if (n > 0)
		bpf_probe_read_user(str, n, (const void *)ptr);
}

/* Part i of the --by key into k: its argument's value or string. An
 * argument that cannot be read is value 0 or the empty string. */
static __noinline int by_part(const struct scratch *s, struct trace_by_key *k,
			      __u64 i)
{
	const volatile struct trace_by_part *bp;
	long val = 0;
	char *dst;

	OPAQUE(i);
	if (i >= TRACE_BY_PARTS)
		return 0;
	bp = &by_parts[i];
	arg_of(s, bp->arg, &val);
	if (!bp->str) {
		k->val[i] = (__u64)val;
		return 0;
	}
	dst = bp->str == 1 ? k->str[0] : k->str[1];
	if (bp->len_arg)
		by_read_counted(s, dst, val, bp->len_arg - 1u);
	else if (val && bpf_probe_read_user_str(dst, TRACE_BY_STR,
						(const void *)val) < 0)
		dst[0] = 0;
	return 0;
}

/* Add n under key k of by_sums. */
static __always_inline void by_inc(struct trace_by_key *k, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&by_sums, k);

	if (v) {
		__sync_fetch_and_add(v, n);
		return;
	}
	if (!bpf_map_update_elem(&by_sums, k, &n, BPF_NOEXIST))
		return;
	v = bpf_map_lookup_elem(&by_sums, k);
	if (v)
		__sync_fetch_and_add(v, n);
	else
		__sync_fetch_and_add(&lost_sums, 1);
}

/* The --by key of this hit, {cookie, aux, its parts}, in by_scratch's
 * slot; NULL if that cannot be had. */
static __always_inline struct trace_by_key *
by_key(const struct scratch *s, __u32 cookie, __u32 aux, __u32 slot)
{
	struct trace_by_key *k = bpf_map_lookup_elem(&by_scratch, &slot);
	__u32 i;

	if (!k)
		return NULL;
	__builtin_memset(k, 0, sizeof(*k));
	k->cookie = cookie;
	k->aux = aux;
	for (i = 0; i < TRACE_BY_PARTS; i++)
		if (i < by_cnt)
			by_part(s, k, i);
	return k;
}

/* Count a hit under its --by key, and with --sum add its argument. */
static __always_inline void by_add(const struct scratch *s, __u32 cookie,
				   __u32 aux, __u32 slot)
{
	struct trace_by_key *k = by_key(s, cookie, aux, slot);
	long v = 0;

	if (!k)
		return;
	by_inc(k, 1);
	if (sum_arg != TRACE_BY_NONE && !arg_of(s, sum_arg, &v)) {
		k->aux = aux | TRACE_AUX_SUM;
		by_inc(k, (__u64)v);
	}
}

static __noinline int sum_add(__u32 cookie, __u32 aux, __u64 n)
{
	struct trace_sum_key key = { .cookie = cookie, .aux = aux };
	__u64 *v = bpf_map_lookup_elem(&sums, &key);

	if (!v) {
		if (!bpf_map_update_elem(&sums, &key, &n, BPF_NOEXIST))
			return 0;
		/* Another CPU may have created it meanwhile. */
		v = bpf_map_lookup_elem(&sums, &key);
		if (!v) {
			__sync_fetch_and_add(&lost_sums, 1);
			return 0;
		}
	}
	__sync_fetch_and_add(v, n);
	return 0;
}

static __always_inline __u32 log2_slot(__s64 v)
{
	__u64 u = (__u64)v;
	__u32 slot = 1;

	if (v < 0)
		return TRACE_SLOT_NEG;
	if (!v)
		return 0;
	if (u >> 32) {
		u >>= 32;
		slot += 32;
	}
	if (u >> 16) {
		u >>= 16;
		slot += 16;
	}
	if (u >> 8) {
		u >>= 8;
		slot += 8;
	}
	if (u >> 4) {
		u >>= 4;
		slot += 4;
	}
	if (u >> 2) {
		u >>= 2;
		slot += 2;
	}
	if (u >> 1)
		slot += 1;
	return slot;
}

/* A latency counter (TRACE_LAT_UNMATCHED_*): in sums, or with --by in
 * by_sums under the key of no parts. */
static __noinline int lat_note(__u32 aux, __u32 slot)
{
	struct trace_by_key *k;

	if (!by_cnt) {
		sum_add(TRACE_LAT_KEY, aux, 1);
		return 0;
	}
	k = bpf_map_lookup_elem(&by_scratch, &slot);
	if (!k)
		return 0;
	__builtin_memset(k, 0, sizeof(*k));
	k->cookie = TRACE_LAT_KEY;
	k->aux = aux;
	by_inc(k, 1);
	return 0;
}

/* A START and END matched, d ns apart: the histogram, or with --by the
 * count and the total under the key the START's arguments gave. */
static __noinline int lat_add(__u32 tid, __u64 d)
{
	struct trace_by_key *k;

	if (!by_cnt) {
		sum_add(TRACE_LAT_KEY,
			log2_slot((__s64)(lat_unit > 1 ? d / lat_unit : d)), 1);
		if (keep_sum)
			sum_add(TRACE_LAT_KEY, TRACE_SUM_AUX, d);
		return 0;
	}
	k = bpf_map_lookup_elem(&start_keys, &tid);
	if (!k) {
		__sync_fetch_and_add(&lost_sums, 1);
		return 0;
	}
	k->aux = 0;
	by_inc(k, 1);
	k->aux = TRACE_AUX_SUM;
	by_inc(k, d);
	bpf_map_delete_elem(&start_keys, &tid);
	return 0;
}

/* A pair of thread id took d ns, at least slower_ns: say it, with the
 * key its START gave. */
static __noinline int send_slow(__u64 id, __u64 now, __u64 d)
{
	__u32 tid = (__u32)id;
	struct trace_by_key *k =
		by_cnt ? bpf_map_lookup_elem(&start_keys, &tid) : NULL;
	struct trace_slow *s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);

	if (!s) {
		__sync_fetch_and_add(&lost_events, 1);
		return 0;
	}
	s->ts = now;
	s->cookie = TRACE_SLOW_COOKIE;
	s->ns = d;
	s->pid = (__u32)(id >> 32);
	s->tid = tid;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	if (k)
		__builtin_memcpy(&s->key, k, sizeof(s->key));
	else
		__builtin_memset(&s->key, 0, sizeof(s->key));
	bpf_ringbuf_submit(s, 0);
	return 0;
}

static __noinline int latency(const struct scratch *s, __u64 id, __u32 role,
			      __u32 slot)
{
	__u64 now = bpf_ktime_get_ns(), *t0;
	__u32 tid = (__u32)id;
	struct trace_by_key *k;

	if (role & TRACE_ROLE_END) {
		t0 = bpf_map_lookup_elem(&starts, &tid);
		if (t0) {
			if (slower_ns && now - *t0 >= slower_ns)
				send_slow(id, now, now - *t0);
			lat_add(tid, now - *t0);
			bpf_map_delete_elem(&starts, &tid);
		} else {
			lat_note(TRACE_LAT_UNMATCHED_END, slot);
		}
	}
	if (!(role & TRACE_ROLE_START))
		return 0;
	/* A START that replaces an open one leaves that one unmatched. */
	if (bpf_map_update_elem(&starts, &tid, &now, BPF_NOEXIST)) {
		if (bpf_map_lookup_elem(&starts, &tid))
			lat_note(TRACE_LAT_UNMATCHED_START, slot);
		else
			__sync_fetch_and_add(&lost_sums, 1);
		bpf_map_update_elem(&starts, &tid, &now, BPF_ANY);
	}
	k = by_cnt ? by_key(s, TRACE_LAT_KEY, 0, slot) : NULL;
	if (k)
		bpf_map_update_elem(&start_keys, &tid, k, BPF_ANY);
	return 0;
}

/*
 * The PC of the hit, where usdt.bpf.h reads it: at the arch's fixed offset
 * in the context. PT_REGS_IP() would be a CO-RE relocation (vmlinux.h
 * marks struct pt_regs preserve_access_index), which libbpf resolves
 * against the kernel's BTF, and a kernel may have none: then the tool
 * gives libbpf an empty BTF (empty_btf() in trace.c), and the only
 * relocations left, those of the VMA lookup below, are dead code.
 */
static __always_inline __u64 hit_ip(struct pt_regs *ctx)
{
	return __usdt_pc(ctx);
}

struct vma_off {
	__u64 ip;
	struct trace_site_key key;
};

static long vma_offset(struct task_struct *task, struct vm_area_struct *vma,
		       void *data)
{
	struct vma_off *d = data;
	struct file *f = vma->vm_file;

	if (!f)
		return 0;
	d->key.ino = f->f_inode->i_ino;
	d->key.off = d->ip - vma->vm_start + (vma->vm_pgoff << page_shift);
	return 0;
}

/* The probe of the call site at ip, from where it is in its file (the
 * VMA); -1 when the mapping cannot be looked at now. */
static __noinline __s64 probe_of_site(__u64 ip)
{
	struct vma_off d = { .ip = ip };
	__u32 *idx;

	if (!use_sites ||
	    bpf_find_vma(bpf_get_current_task_btf(), ip, vma_offset, &d, 0) ||
	    !d.key.ino)
		return -1;
	idx = bpf_map_lookup_elem(&site_probe, &d.key);
	return idx ? *idx : -1;
}

/* The probe of the call site that fired: found before, or from its
 * offset in the file; -1 when the mapping cannot be looked at now. */
static __noinline __s64 probe_by_offset(struct pt_regs *ctx, __u64 id)
{
	struct ip_key k = { .tgid = id >> 32, .ip = hit_ip(ctx) };
	__u32 *idx = bpf_map_lookup_elem(&ip_probe, &k);
	__u32 found;
	__s64 p;

	if (idx)
		return *idx;
	p = probe_of_site(k.ip);
	if (p < 0)
		return -1;
	found = (__u32)p;
	bpf_map_update_elem(&ip_probe, &k, &found, BPF_ANY);
	return p;
}

/* Bytes of value i's string to read when it need not end in a NUL
 * (%.*s): what its length argument says, clamped to 0 .. n - 1, so that a
 * negative or huge length never reads past the room for it. */
static __always_inline __u32 fixed_len(const struct scratch *s,
				       const struct trace_probe_cfg *cfg,
				       __u32 i, __u32 n)
{
	__u32 k = TRACE_MAX_VALS;
	__s64 want = 0;

	if (i < TRACE_MAX_VALS)
		k = cfg->len_arg[i];
	if (k < TRACE_MAX_VALS)
		want = (__s64)s->hit.args[k];
	if (want < 0)
		want = 0;
	if (want > (__s64)n - 1)
		want = (__s64)n - 1;
	return (__u32)want;
}

/* len bytes at ptr into the scratch area at o, and a NUL: the bytes used,
 * or -EFAULT. */
static __always_inline long read_fixed(struct scratch *s, __u32 o, __u32 len,
				       const void *ptr)
{
	asm volatile("" : "+r"(len)); /* the test below stays: see there */
	if (o >= TRACE_STR_AREA || len >= TRACE_STR_MAX)
		return -7; /* not reached: for the verifier */
	if (bpf_probe_read_user(&s->str[o], len, ptr))
		return -14; /* EFAULT */
	s->str[o + len] = 0;
	return len + 1;
}

/*
 * Read value i's string (an argument's, or a typed load's from
 * TRACE_MAX_ARGS on) into the scratch area at hit.str_total: up to
 * its NUL, or (fixed_mask) exactly fixed_len() bytes, then a NUL of ours.
 * Returns 0.
 */
static __noinline int read_str(struct scratch *s,
			       const struct trace_probe_cfg *cfg, __u64 i)
{
	__u32 o, n = str_size, max;
	const void *ptr;
	long len;

	OPAQUE(i);
	if (i >= TRACE_MAX_VALS)
		return 0;
	o = s->hit.str_total;
	max = cfg->str_max[i];
	ptr = (const void *)s->hit.args[i];
	if (o >= TRACE_STR_AREA || n > TRACE_STR_MAX) {
		s->hit.errs[i] = 7; /* E2BIG: no room left */
		s->hit.err_mask |= 1u << i;
		return 0;
	}
	if (max && max < n)
		n = max;
	if (n > TRACE_STR_AREA - o)
		n = TRACE_STR_AREA - o;
	/* Again against a constant, the value hidden from the compiler
	 * first (else it drops a test it can prove): Linux 6.1's verifier
	 * keeps no bound from the comparisons above between two registers
	 * ("R1 min value is outside of the allowed memory range", size
	 * 65535). */
	asm volatile("" : "+r"(n));
	if (n > TRACE_STR_MAX)
		n = TRACE_STR_MAX;
	if (cfg->fixed_mask & (1u << i)) {
		len = read_fixed(s, o, fixed_len(s, cfg, i, n), ptr);
	} else {
		len = bpf_probe_read_user_str(&s->str[o], n, ptr);
		/* %.Ns: the read above takes byte N too, which printf does
		 * not; when that faults (N bytes and no NUL, just before an
		 * unmapped page), N bytes are what there is to print. */
		if (len == -14 && max)
			len = read_fixed(s, o, n - 1, ptr);
	}
	if (len <= 0) {
		s->hit.errs[i] = len < 0 ? -len : 14; /* EFAULT */
		s->hit.err_mask |= 1u << i;
		return 0;
	}
	s->hit.str_len[i] = len;
	s->hit.str_total = o + len;
	return 0;
}

/*
 * The signedness and floatness of each argument of the call site that
 * fired, from its spec: sites of one probe may differ (int64 at one,
 * uint64 at another), and user space then prints each hit as its own
 * site declares, with no need to find which site it was. Reads the
 * header's spec of the site (an internal of usdt.bpf.h: the tool is
 * built with the same libusdt).
 */
/*
 * Typed load k of the probe's format: size bytes at its argument plus off,
 * read from user memory and sign-extended if it says so, into value
 * TRACE_MAX_ARGS + k. Returns 0.
 */
static __noinline int load_one(struct scratch *s,
			       const struct trace_probe_cfg *cfg, __u64 k)
{
	__u32 a, v = TRACE_MAX_ARGS + k;
	const struct trace_load *l;
	const void *ptr;
	__u64 val = 0;
	long err = 0;

	OPAQUE(k);
	if (k >= TRACE_MAX_LOADS)
		return 0;
	l = &cfg->loads[k];
	a = l->arg;
	s->hit.args[v] = 0;
	s->hit.errs[v] = 0;
	s->hit.str_len[v] = 0;
	s->hit.sizes[v] = l->size;
	if (a >= TRACE_MAX_ARGS || (s->hit.err_mask & (1u << a)) ||
	    (__s32)a >= s->hit.arg_cnt) {
		s->hit.err_mask |= 1u << v;
		s->hit.errs[v] = 2; /* ENOENT: no such argument to read */
		return 0;
	}
	ptr = (const void *)(s->hit.args[a] + (__s64)l->off);
	switch (l->size) {
	case 1: {
		__u8 t = 0;

		err = bpf_probe_read_user(&t, 1, ptr);
		val = l->is_signed ? (__u64)(__s64)(__s8)t : t;
		break;
	}
	case 2: {
		__u16 t = 0;

		err = bpf_probe_read_user(&t, 2, ptr);
		val = l->is_signed ? (__u64)(__s64)(__s16)t : t;
		break;
	}
	case 4: {
		__u32 t = 0;

		err = bpf_probe_read_user(&t, 4, ptr);
		val = l->is_signed ? (__u64)(__s64)(__s32)t : t;
		break;
	}
	default:
		err = bpf_probe_read_user(&val, 8, ptr);
		break;
	}
	if (err) {
		s->hit.err_mask |= 1u << v;
		s->hit.errs[v] = (__s16)-err;
		return 0;
	}
	s->hit.args[v] = val;
	if (l->is_signed)
		s->hit.signed_mask |= 1u << v;
	return 0;
}

/*
 * Typed load i (load) or value i's string (else) of probe key's hit, in
 * the run's slot of the scratch. A global function, verified once rather
 * than at each of the calls with every mix of lengths and failures before
 * it. It takes scalars only and looks its maps up itself: Linux 6.1 takes
 * no map value pointer as a global function's argument. Returns 0.
 */
__noinline int trace_value(__u32 key, __u32 i, __u32 slot, __u32 load)
{
	const struct trace_probe_cfg *cfg;
	struct scratch *s;

	s = bpf_map_lookup_elem(&scratch, &slot);
	cfg = bpf_map_lookup_elem(&probe_cfg, &key);
	if (!s || !cfg)
		return 0;
	return load ? load_one(s, cfg, i) : read_str(s, cfg, i);
}

/* --ustack: the user stack into the scratch, TRACE_STR_AREA bytes past
 * the strings (at a fixed offset: a variable one is refused by older
 * verifiers, arm64 6.12). Returns the bytes after the header to send:
 * off, the strings', or up to the stack's end. */
static __always_inline __u32 hit_stack(struct pt_regs *ctx, struct scratch *s,
				       __u32 off)
{
	long n;

	s->hit.stack_len = 0;
	if (!ustack)
		return off;
	n = bpf_get_stack(ctx, &s->str[TRACE_STR_AREA], TRACE_STACK_MAX,
			  BPF_F_USER_STACK);
	if (n <= 0 || n > TRACE_STACK_MAX)
		return off;
	s->hit.stack_len = (__u32)n;
	return TRACE_STR_AREA + (__u32)n;
}

/* The format's typed loads, then the strings, into the scratch: the
 * bytes of strings it holds. */
static __noinline __u32 read_values(__u32 key, struct scratch *s,
				    const struct trace_probe_cfg *cfg,
				    __u32 slot)
{
	__u32 str_mask = cfg->str_mask, off;
	int i, cnt = s->hit.arg_cnt;

	for (i = 0; i < TRACE_MAX_LOADS; i++)
		if (i < cfg->load_cnt)
			trace_value(key, (__u32)i, slot, 1);
	/* After every argument and load: a string's length may be a later
	 * one. A NULL pointer is not read (the tool prints "(null)"). The
	 * offset into the strings is hit.str_total. */
	s->hit.str_total = 0;
	for (i = 0; i < TRACE_MAX_VALS; i++)
		if ((i < TRACE_MAX_ARGS ? i < cnt :
					  i - TRACE_MAX_ARGS < cfg->load_cnt) &&
		    (str_mask & (1u << i)) && !(s->hit.err_mask & (1u << i)) &&
		    s->hit.args[i])
			trace_value(key, (__u32)i, slot, 0);
	off = s->hit.str_total;
	return off > TRACE_STR_AREA ? TRACE_STR_AREA : off;
}

static __noinline int send_event(struct pt_regs *ctx, __u64 id, __u64 cookie,
				 const struct trace_probe_cfg *cfg, __u32 slot)
{
	struct scratch *s = bpf_map_lookup_elem(&scratch, &slot);
	__u32 off = 0;
	__u64 size;

	if (!s)
		return 0;
	s->hit.ts = bpf_ktime_get_ns();
	s->hit.cookie = cookie;
	s->hit.ip = hit_ip(ctx);
	s->hit.pid = id >> 32;
	s->hit.tid = (__u32)id;
	bpf_get_current_comm(s->hit.comm, sizeof(s->hit.comm));
	if (cfg)
		off = read_values((__u32)cookie, s, cfg, slot);
	s->hit.str_total = off;
	off = hit_stack(ctx, s, off);
	/* The size bounded against a constant the compiler keeps (see
	 * read_str()): with the stack, 6.1's verifier lost it. */
	size = sizeof(s->hit) + (__u64)off;
	asm volatile("" : "+r"(size));
	if (size > sizeof(s->hit) + sizeof(s->str))
		size = sizeof(s->hit) + sizeof(s->str);
	if (bpf_ringbuf_output(&events, s, size, 0))
		__sync_fetch_and_add(&lost_events, 1);
	return 0;
}

/* tgid << 32 | pid of the current task as the user sees them (see
 * pidns_ino); 0 for a task that has no id there (outside the tool's pid
 * namespace: invisible to the user, as to ps). */
struct pidns_ids { /* UAPI struct bpf_pidns_info */
	__u32 pid;
	__u32 tgid;
};

/*
 * The helper's struct is UAPI and fixed: read it as our own, not as
 * vmlinux.h's (preserve_access_index, so CO-RE-relocated), which a kernel
 * without BTF could not relocate (Debian's s390x 6.1 refused the program).
 */
static __always_inline __u64 current_ids(void)
{
	struct pidns_ids ns = { 0 };

	if (!pidns_ino)
		return bpf_get_current_pid_tgid();
	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino,
					(struct bpf_pidns_info *)&ns,
					sizeof(ns)))
		return 0;
	return (__u64)ns.tgid << 32 | ns.pid;
}

/* TRACE_COUNT: the hit counted under its probe (and pid, or --by key),
 * with --sum its argument added. */
static __noinline int count_hit(const struct scratch *s, __u64 id, __u32 key,
				__u32 slot)
{
	__u32 aux = by_pid ? (__u32)(id >> 32) : 0;
	long v = 0;

	if (by_cnt) {
		by_add(s, key, aux, slot);
		return 0;
	}
	sum_add(key, aux, 1);
	if (sum_arg != TRACE_BY_NONE && !arg_of(s, sum_arg, &v))
		sum_add(key, aux | TRACE_AUX_SUM, (__u64)v);
	return 0;
}

/* TRACE_HIST: the argument's log2 bucket counted. */
static __noinline int hist_hit(const struct scratch *s, __u32 key)
{
	long v = 0;

	if (arg_of(s, hist_arg, &v))
		return 0;
	sum_add(key, log2_slot(v), 1);
	if (keep_sum)
		sum_add(key, TRACE_SUM_AUX, (__u64)v);
	return 0;
}

/* A hit of probe cookie, as the mode says, if it passes the filter; the
 * run's slot of the per-CPU scratch is slot. */
static __noinline int hit(struct pt_regs *ctx, __u64 id, __u64 cookie,
			  __u32 slot)
{
	struct scratch *s = bpf_map_lookup_elem(&scratch, &slot);
	__u32 key = (__u32)cookie;
	struct trace_probe_cfg *cfg;

	if (!s)
		return 0;
	read_args(ctx, s, slot, 1);
	if (!passes(s, id, slot))
		return 0;
	cfg = bpf_map_lookup_elem(&probe_cfg, &key);
	if (cfg && (cfg->role & TRACE_ROLE_QUIET))
		return 0;
	/* An END of --latency reads none: only a START's make a --by key. */
	if (mode != TRACE_LATENCY || (cfg && (cfg->role & TRACE_ROLE_START)))
		read_args(ctx, s, slot, 0);
	switch (mode) {
	case TRACE_COUNT:
		return count_hit(s, id, key, slot);
	case TRACE_HIST:
		return hist_hit(s, key);
	case TRACE_LATENCY:
		return cfg ? latency(s, id, cfg->role, slot) : 0;
	default:
		return send_event(ctx, id, cookie, cfg, slot);
	}
}

/* Bit i: slot i of this CPU's scratch is a run's (see usdt_trace()). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_slots SEC(".maps");

/* A free slot of *slots, taken: its index, or RUN_SLOTS for none. */
static __always_inline __u32 slot_take(__u64 *slots)
{
	__u32 i;

	for (i = 0; i < RUN_SLOTS; i++)
		if (!(__sync_fetch_and_or(slots, 1ull << i) & (1ull << i)))
			return i;
	return RUN_SLOTS;
}

/*
 * Preemptible kernels. A uprobe program runs with migration disabled, not
 * preemption, and the kernel does not keep a second run of it off a CPU
 * where one is under way: a preemptible kernel (PREEMPT_LAZY, full) may
 * switch tasks in the middle of a run, and a --fault-in run may sleep. So:
 * - every function here keeps to 48 bytes of stack: where the JIT gives a
 *   bigger one a per-CPU private stack (x86_64 6.13, arm64 6.17), a
 *   second run would write over the first's frame, the pointers it
 *   spilled there too (tests/kernel/test_frames.c);
 * - each run takes a slot of its CPU's scratch (scratch, by_scratch) of
 *   its own, claimed atomically in cpu_slots and given back at its end;
 *   a run that finds all RUN_SLOTS taken is counted in lost_overlap and
 *   goes no further. Nothing waits.
 */
SEC("usdt")
int usdt_trace(struct pt_regs *ctx)
{
	__u64 id = current_ids();
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 zero = 0, slot;
	__u64 *slots;
	__s64 found;

	if (!id || (target_tgid && (__u32)(id >> 32) != target_tgid))
		return 0;
	if (cookie == TRACE_COOKIE_BY_OFFSET) {
		found = probe_by_offset(ctx, id);
		if (found < 0) {
			__sync_fetch_and_add(&lost_sums, 1);
			return 0;
		}
		cookie = (__u64)found;
	}
	/* Before a slot is taken: a fault may sleep. */
	fault_all(ctx, (__u32)cookie);
	slots = bpf_map_lookup_elem(&cpu_slots, &zero);
	if (!slots)
		return 0;
	slot = slot_take(slots);
	if (slot >= RUN_SLOTS) {
		__sync_fetch_and_add(&lost_overlap, 1);
		return 0;
	}
	hit(ctx, id, cookie, slot);
	__sync_fetch_and_and(slots, ~(1ull << slot));
	return 0;
}
