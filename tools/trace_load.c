// SPDX-License-Identifier: BSD-2-Clause
/*
 * `usdt trace`: the BPF side (steps 3 and 4 of tools/trace_cmd.c's order).
 * Configure the skeleton (mode, filter, map sizes), load it with its two
 * retry paths (no kernel BTF; no VMA iterator), fill the per-probe
 * settings, and attach each probe with its cookie.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "trace.h"
#include "usdt_trace.skel.h"

static const struct selection *sel_of(const struct trace_run *r,
				      const struct trace_file *f)
{
	return &r->groups[f->group].sel;
}

/* Links a file takes, a pattern at a time: one for no pattern (all). */
static int pats_or_one(const struct selection *sel)
{
	return sel->pat_cnt ? sel->pat_cnt : 1;
}

/* Does every probe answer to exactly one pattern, and every file appear
 * once (else a call site would be attached twice)? */
bool trace_patterns_disjoint(const struct trace_run *r)
{
	const struct trace_ctx *ctx = &r->ctx;
	const struct selection *sel;
	size_t i;
	int j, hits;

	for (i = 0; i < ctx->probe_cnt; i++) {
		sel = sel_of(r, &r->files[ctx->probes[i].file]);
		for (j = 0, hits = 0; j < sel->pat_cnt; j++)
			hits += !!patterns_match(sel->pats + j, 1,
						 ctx->probes[i].provider,
						 ctx->probes[i].name);
		if (hits > 1)
			return false;
	}
	for (i = 0; r->group_cnt > 1 && i < (size_t)r->file_cnt; i++)
		for (j = (int)i + 1; j < r->file_cnt; j++)
			if (r->files[i].dev == r->files[j].dev &&
			    r->files[i].ino == r->files[j].ino)
				return false;
	return true;
}

static int page_shift(void)
{
	long sz = sysconf(_SC_PAGESIZE);
	int n = 0;

	while (sz > 1) {
		sz >>= 1;
		n++;
	}
	return n ? n : 12;
}

static int silent_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	/* One variable for both libraries' messages. */
	if (getenv("USDT_LOG_LEVEL"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* Is cap in this process's effective set? Yes when that cannot be told:
 * only a capability known to be missing is named. */
static bool has_cap(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capget, &h, d))
		return true;
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* "CAP_BPF", "CAP_PERFMON", "CAP_BPF and CAP_PERFMON": those of the two
 * that this process lacks; NULL if it has both (or CAP_SYS_ADMIN, which
 * the kernel takes for either). */
static const char *bpf_caps_missing(void)
{
	bool bpf = has_cap(CAP_BPF), perfmon = has_cap(CAP_PERFMON);

	if (has_cap(CAP_SYS_ADMIN) || (bpf && perfmon))
		return NULL;
	return !bpf && !perfmon ? "CAP_BPF and CAP_PERFMON" :
	       !bpf		? "CAP_BPF" :
				  "CAP_PERFMON";
}

/*
 * EPERM or EACCES from the kernel, with the capability this process
 * lacks (mode USDT_MODE_MULTI: where no perf uprobe is made, a load
 * too). Loading and uprobe_multi links (Linux 6.6) take CAP_BPF and
 * CAP_PERFMON. Perf uprobes (-m perf, and every attach on a kernel
 * without uprobe_multi links) take CAP_SYS_ADMIN too: Linux gave them to
 * CAP_PERFMON in 5.8 and took them back in 6.16 and its stable kernels
 * (ba677dbe77af "perf: Revert to requiring CAP_SYS_ADMIN for uprobes",
 * CVE-2025-38466: a uprobe inside an instruction corrupts the process).
 */
static const char *perm_error(enum usdt_attach_mode mode)
{
	static char why[320];
	const char *lacks = bpf_caps_missing();

	if (lacks) {
		snprintf(why, sizeof(why),
			 "permission denied: needs root, or CAP_BPF and CAP_PERFMON, and this process lacks %s%s",
			 lacks,
			 mode == USDT_MODE_PERF ?
				 " (perf uprobes need CAP_SYS_ADMIN too)" :
				 "");
		return why;
	}
	if (has_cap(CAP_SYS_ADMIN) || mode == USDT_MODE_MULTI)
		return "permission denied (not for want of a capability: a security module's refusal?)";
	if (mode == USDT_MODE_PERF)
		return "permission denied: perf uprobes need CAP_SYS_ADMIN, which this process lacks (as Linux 6.16 and its stable kernels from 5.15 ask; -m auto takes uprobe_multi links, which need only CAP_BPF and CAP_PERFMON, where the kernel has them: 6.6)";
	return "permission denied: this process lacks CAP_SYS_ADMIN, which perf uprobes need (used where the kernel has no uprobe_multi links, before 6.6; as Linux 6.16 and its stable kernels from 5.15 ask)";
}

static const char *attach_error(const struct trace_run *r, int err)
{
	switch (err) {
	case ENOENT:
		return "no such probe or file";
	case EPERM:
	case EACCES:
		return perm_error(r->o.mode);
	case ENOEXEC:
		return "the file is not for this host's architecture";
	case EOPNOTSUPP:
		return "not supported by this kernel or libbpf (USDT_LOG_LEVEL=warn says what it lacks)";
	case E2BIG:
		return "too many call sites for the BPF maps";
	case EMFILE:
		/* The tool has raised its soft limit to the hard one. */
		return "too many open files: per-site perf uprobes take two descriptors a site; raise the hard RLIMIT_NOFILE (ulimit -Hn), or trace with -m multi";
	default:
		return tool_strerror(err);
	}
}

/* The initial pid namespace's inode number (PROC_PID_INIT_INO). */
#define PID_NS_INIT_INO 0xEFFFFFFCu

/*
 * In a pid namespace of its own (a container's), the tool shows the ids of
 * that namespace, as -p, -c and --filter take them: the BPF side asks the
 * kernel for the task's ids there (bpf_get_ns_current_pid_tgid(), which
 * names the namespace by its nsfs device and inode).
 */
static void set_pid_ns(struct usdt_trace *skel)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) || st.st_ino == PID_NS_INIT_INO)
		return;
	skel->rodata->pidns_dev = (uint64_t)st.st_dev;
	skel->rodata->pidns_ino = (uint64_t)st.st_ino;
}

/*
 * Does a hit of this run read user memory: a string or a typed load of a
 * format, a string in the filter or --by? Probes found later (-p, files
 * mapped later) may have formats with strings: a watch counts as yes.
 */
static bool reads_user_memory(const struct trace_run *r,
			      const struct trace_filter *f)
{
	size_t i;

	if (r->watch || r->all)
		return true;
	for (i = 0; i < (size_t)r->o.sum.by_cnt; i++)
		if (r->o.sum.by[i].str)
			return true;
	for (i = 0; i < f->term_cnt && i < TRACE_MAX_TERMS; i++)
		if (f->terms[i].op == TRACE_SEQ || f->terms[i].op == TRACE_SNE)
			return true;
	for (i = 0; i < r->ctx.probe_cnt; i++)
		if (r->ctx.probes[i].str_cfg.str_mask ||
		    r->ctx.probes[i].str_cfg.load_cnt)
			return true;
	return false;
}

/*
 * Does the kernel load a sleepable uprobe (kprobe-type) program that calls
 * bpf_copy_from_user() (Linux 6.0+)? Asked with seven instructions, so that
 * a kernel that says no costs no failed load of the real program (whose
 * other retries, retry_without_vma(), would then be taken for the wrong
 * cause).
 */
static bool kernel_has_sleepable_uprobes(void)
{
	const struct bpf_insn insns[] = {
		/* copy_from_user(fp - 8, 1, NULL); return 0 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X,
		  .dst_reg = 1,
		  .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 1, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 2, .imm = 1 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_copy_from_user },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .prog_flags = BPF_F_SLEEPABLE);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "usdt_sleep_probe", "GPL",
			       insns, sizeof(insns) / sizeof(insns[0]), &po);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * --fault-in, where hits read user memory and the kernel takes it: the
 * program loads sleepable, and faults in what it reads in processes of
 * the tracer's own user (fault_in in usdt_trace.bpf.c). Never without the
 * flag: such a process can stall its fault for as long as it likes
 * (userfaultfd, a FUSE daemon), and while the program sleeps in it, every
 * uprobe's removal on the machine waits, and so does this tool's exit. A
 * load that fails so anyway is made again without
 * (retry_without_fault_in()).
 */
static int set_fault_in(struct trace_run *r, const struct trace_filter *f)
{
	struct bpf_program *prog = r->skel->progs.usdt_trace;

	r->reads_user = reads_user_memory(r, f);
	r->fault_in = r->o.fault_in && !r->no_fault_in && r->reads_user &&
		      kernel_has_sleepable_uprobes();
	r->skel->rodata->fault_in = r->fault_in;
	r->skel->rodata->fault_uid = (uint32_t)getuid();
	if (!r->fault_in)
		return 0;
	return bpf_program__set_flags(prog, bpf_program__flags(prog) |
						    BPF_F_SLEEPABLE);
}

/* --fault-in that a run cannot have: say so, once the program is in. */
static void say_no_fault_in(const struct trace_run *r)
{
	if (!r->o.fault_in || r->fault_in)
		return;
	if (!r->reads_user)
		fprintf(stderr,
			"%s: trace: note: --fault-in does nothing here: no hit reads user memory (no string, typed load, string filter or --by str())\n",
			tool_name);
	else
		fprintf(stderr,
			"%s: trace: note: --fault-in: this kernel loads no sleepable uprobe program (Linux 6.0 and later do); strings not present at the hit are read again from user space\n",
			tool_name);
}

/* Bit i: argument i, for an argument number of the options (0..11, or
 * anything else: none). */
static uint32_t arg_bit(unsigned int arg)
{
	return arg < TRACE_MAX_ARGS ? 1u << arg : 0;
}

/*
 * The arguments the program reads per hit, from the options as its rodata
 * has them: before the filter, for its terms (args_first), and after it,
 * for the rest (args_then). What a mode reads and this does not name
 * reads as unreadable, so a test of each option covers it.
 */
static void arg_masks(struct usdt_trace *skel)
{
	const volatile struct usdt_trace__rodata *ro = skel->rodata;
	uint32_t first = 0, then = 0, i;

	for (i = 0; i < ro->filter.term_cnt && i < TRACE_MAX_TERMS; i++) {
		first |= arg_bit(ro->filter.terms[i].operand);
		if (ro->filter.terms[i].len_arg)
			first |= arg_bit(ro->filter.terms[i].len_arg - 1u);
	}
	if (ro->mode == TRACE_EVENTS)
		then = (1u << TRACE_MAX_ARGS) - 1;
	else if (ro->mode == TRACE_HIST)
		then = arg_bit(ro->hist_arg);
	else
		then = arg_bit(ro->sum_arg);
	for (i = 0;
	     ro->mode != TRACE_HIST && i < ro->by_cnt && i < TRACE_BY_PARTS;
	     i++) {
		then |= arg_bit(ro->by_parts[i].arg);
		if (ro->by_parts[i].len_arg)
			then |= arg_bit(ro->by_parts[i].len_arg - 1u);
	}
	skel->rodata->args_first = first;
	skel->rodata->args_then = then & ~first;
}

/* Set what the BPF program reads before load: mode, filter, map sizes. */
static int configure(struct trace_run *r)
{
	struct usdt_trace *skel = r->skel;
	struct trace_filter f = { 0 };
	char why[240];
	int err;

	skel->rodata->target_tgid =
		r->attach_pid > 0 ? (uint32_t)r->attach_pid : 0;
	set_pid_ns(skel);
	skel->rodata->mode = r->o.sum.mode;
	skel->rodata->by_pid = r->o.sum.by_pid;
	skel->rodata->hist_arg = (uint32_t)r->o.sum.hist_arg;
	skel->rodata->slower_ns = r->o.sum.slower_ns;
	skel->rodata->lat_unit = time_unit_ns(r->o.sum.time_digits);
	skel->rodata->sum_arg = r->o.sum.sum_arg >= 0 ?
					(uint32_t)r->o.sum.sum_arg :
					TRACE_BY_NONE;
	skel->rodata->keep_sum = r->o.listen != NULL;
	skel->rodata->by_cnt = (uint32_t)r->o.sum.by_cnt;
	memcpy((void *)skel->rodata->by_parts, r->o.sum.by,
	       sizeof(r->o.sum.by));
	skel->rodata->ustack = r->o.ustack;
	skel->rodata->str_size = r->o.str_size;
	if (r->o.filter) {
		if (filter_parse(r->o.filter, &f, why, sizeof(why)))
			return tool_err("trace: filter '%s': %s", r->o.filter,
					why);
		memcpy((void *)&skel->rodata->filter, &f, sizeof(f));
	}
	skel->rodata->page_shift = (uint32_t)page_shift();
	r->use_sites = r->by_pattern && !r->no_vma;
	skel->rodata->use_sites = r->use_sites;
	arg_masks(skel);
	r->probe_cap =
		r->ctx.probe_cnt + (r->watch || r->all ? TRACE_WATCH_SPARE :
				    r->follow	       ? TRACE_FOLLOW_SPARE :
							 0);
	err = set_fault_in(r, &f);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.probe_cfg,
					       (uint32_t)r->probe_cap);
	if (!err && r->by_pattern)
		err = bpf_map__set_max_entries(skel->maps.site_probe,
					       (uint32_t)r->ctx.site_cnt);
	if (!err && !r->by_pattern)
		err = bpf_map__set_max_entries(skel->maps.ip_probe, 1);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.sums,
					       sum_map_size(&r->o.sum,
							    r->probe_cap));
	if (!err && r->o.sum.by_cnt)
		err = bpf_map__set_max_entries(skel->maps.by_sums,
					       TRACE_BY_KEYS *
						       (r->o.sum.sum_arg >= 0 ||
									r->o.sum.mode ==
										TRACE_LATENCY ?
								2 :
								1));
	/* 2.7 MB a hash map preallocates: only for --latency --by. */
	if (!err && (!r->o.sum.by_cnt || r->o.sum.mode != TRACE_LATENCY))
		err = bpf_map__set_max_entries(skel->maps.start_keys, 1);
	if (!err && r->o.rb_size)
		err = bpf_map__set_max_entries(skel->maps.events, r->o.rb_size);
	if (err)
		return tool_err("trace: cannot size the maps: %s",
				tool_strerror(-err));
	return 0;
}

/*
 * What libbpf takes for the kernel's BTF where it finds none (a kernel
 * without CONFIG_DEBUG_INFO_BTF, such as Debian's 6.1 for s390x): an
 * empty BTF, in a memfd. libbpf needs the kernel's BTF for every CO-RE
 * relocation of the object, dead code included, and without one fails the
 * whole load with ESRCH. Ours are all in the VMA lookup (vma_offset()),
 * which such a kernel cannot run anyway (its helpers take BTF pointers).
 * Against an empty BTF libbpf finds no candidate type and poisons those
 * instructions, which the verifier never reaches with use_sites 0.
 * Returns the memfd, or -1 with errno set.
 */
static int empty_btf(void)
{
	struct btf *btf = btf__new_empty();
	const void *raw = NULL;
	__u32 size = 0;
	int fd, err;

	if (!btf)
		return -1;
	raw = btf__raw_data(btf, &size);
	fd = raw ? memfd_create("usdt-trace-no-kernel-btf", MFD_CLOEXEC) : -1;
	err = errno;
	if (fd >= 0 && write(fd, raw, size) != (ssize_t)size) {
		err = errno ? errno : EIO;
		close(fd);
		fd = -1;
	}
	btf__free(btf);
	errno = err;
	return fd;
}

/* Open the skeleton; without kernel BTF, with empty_btf() in its place
 * (*btf_fd, to close after the load). */
static struct usdt_trace *open_skel(const struct trace_run *r, int *btf_fd)
{
	LIBBPF_OPTS(bpf_object_open_opts, oopts);
	char path[64];

	*btf_fd = -1;
	if (r->no_kernel_btf) {
		*btf_fd = empty_btf();
		if (*btf_fd < 0)
			return NULL;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", *btf_fd);
		oopts.btf_custom_path = path;
	}
	/* libbpf copies the path; the file is read at load. */
	return usdt_trace__open_opts(&oopts);
}

/* Open the BPF object, set it up and load it: 0 with *load_err the
 * load's result, or the exit status of an error before the load. */
static int open_and_load(struct trace_run *r, int *load_err)
{
	USDT_OPTS(usdt_manager_opts, mopts);
	int btf_fd, ret = 0;

	r->skel = open_skel(r, &btf_fd);
	if (!r->skel)
		return tool_err("trace: cannot open the BPF program: %s",
				tool_strerror(errno));
	if (configure(r)) {
		ret = 1;
		goto out;
	}
	mopts.no_uprobe_multi = r->o.mode == USDT_MODE_PERF;
	/* The maps grow on demand up to 65536 specs and 4 times as many
	 * IP-map entries; past that, room for every matching call site:
	 * in the worst case each needs a spec of its own, and an IP-map
	 * entry. */
	mopts.max_specs =
		r->ctx.site_cnt > 65536 ? (uint32_t)r->ctx.site_cnt : 0;
	mopts.max_ips =
		r->ctx.site_cnt > 4 * 65536 ? (uint32_t)r->ctx.site_cnt : 0;
	/* The manager must see the object before load: it prepares the
	 * program for uprobe_multi links unless told not to, and a program
	 * prepared so cannot take perf uprobes. */
	r->man = usdt_manager__new(r->skel->obj, &mopts);
	if (!r->man) {
		ret = tool_err("trace: cannot prepare the BPF object: %s",
			       attach_error(r, errno));
		goto out;
	}
	*load_err = usdt_trace__load(r->skel);
out:
	if (btf_fd >= 0)
		close(btf_fd);
	return ret;
}

/* Does libbpf find the kernel's BTF (/sys/kernel/btf/vmlinux, or a
 * vmlinux with BTF where it looks for one)? */
static bool kernel_has_btf(void)
{
	struct btf *btf = btf__load_vmlinux_btf();

	btf__free(btf);
	return btf != NULL;
}

/*
 * After a failed load: can it load without the VMA lookup? Then trace_load()
 * loads again so: a link per probe, not per pattern.
 * - EINVAL with the lookup: without a BPF JIT (none for this kernel or
 *   arch, or bpf_jit_enable=0: the s390x guests of `make vm-check`) the
 *   verifier refuses callbacks, so bpf_find_vma() too.
 * - ESRCH, when libbpf finds no kernel BTF: it refused the object's CO-RE
 *   relocations before the kernel saw it (see empty_btf()).
 */
static bool retry_without_vma(struct trace_run *r, int err)
{
	if (r->no_vma)
		return false;
	if (err == -EINVAL && !r->use_sites)
		return false;
	if (err == -ESRCH && !kernel_has_btf())
		r->no_kernel_btf = true;
	else if (err != -EINVAL)
		return false;
	r->no_vma = true;
	r->by_pattern = false;
	return true;
}

/* After a failed load that no other cause explains: was it sleepable
 * (--fault-in)? Then load without (a kernel that takes no sleepable
 * program with one of its maps, say), as by default: strings only from
 * pages present at the hit, and the tool's re-read. */
static bool retry_without_fault_in(struct trace_run *r)
{
	if (!r->fault_in)
		return false;
	r->no_fault_in = true;
	return true;
}

/* The filter's strings into map filter_strs, each with its terms. */
static int set_filter_strs(struct trace_run *r)
{
	const volatile struct trace_filter *f = &r->skel->rodata->filter;
	int fd = bpf_map__fd(r->skel->maps.filter_strs);
	uint32_t i, terms;

	for (i = 0; i < f->term_cnt && i < TRACE_MAX_TERMS; i++) {
		char key[TRACE_FSTR] = { 0 };

		if (f->terms[i].op != TRACE_SEQ && f->terms[i].op != TRACE_SNE)
			continue;
		memcpy(key, (const char *)f->strs[i], TRACE_FSTR - 1);
		terms = 0;
		bpf_map_lookup_elem(fd, key, &terms);
		terms |= 1u << i;
		if (bpf_map_update_elem(fd, key, &terms, BPF_ANY))
			return tool_err("trace: cannot set up the filter: %s",
					tool_strerror(errno));
	}
	return 0;
}

int trace_set_probe_cfg(struct trace_run *r, uint32_t i)
{
	/* Which arguments are strings, read how: the formats'. */
	struct trace_probe_cfg cfg = r->ctx.probes[i].str_cfg;

	cfg.role = r->ctx.probes[i].role;
	if (bpf_map_update_elem(r->cfg_fd, &i, &cfg, BPF_ANY))
		return tool_err("trace: cannot set up probe %u: %s", i,
				tool_strerror(errno));
	return 0;
}

int trace_load(struct trace_run *r)
{
	uint32_t i;
	int err;

	libbpf_set_print(silent_print);
	if (open_and_load(r, &err))
		return 1;
	while (err &&
	       (retry_without_vma(r, err) || retry_without_fault_in(r))) {
		usdt_manager__free(r->man);
		usdt_trace__destroy(r->skel);
		r->man = NULL;
		r->skel = NULL;
		if (open_and_load(r, &err))
			return 1;
	}
	if (err)
		return tool_err("trace: cannot load the BPF program: %s",
				err == -EPERM || err == -EACCES ?
					perm_error(USDT_MODE_MULTI) :
					tool_strerror(-err));
	say_no_fault_in(r);
	if (set_filter_strs(r))
		return 1;
	r->cfg_fd = bpf_map__fd(r->skel->maps.probe_cfg);
	for (i = 0; i < r->ctx.probe_cnt; i++)
		if (trace_set_probe_cfg(r, i))
			return 1;
	for (i = 0; r->by_pattern && i < r->ctx.site_cnt; i++) {
		const struct site_ref *s = &r->ctx.site_refs[i];
		const struct trace_file *f = &r->files[s->file];
		struct trace_site_key key = { .ino = f->ino, .off = s->off };

		if (bpf_map_update_elem(bpf_map__fd(r->skel->maps.site_probe),
					&key, &s->probe, BPF_ANY))
			return tool_err("trace: cannot set up call site %u: %s",
					i, tool_strerror(errno));
	}
	return 0;
}

/* A name from the notes as a glob that matches only itself. */
static char *glob_escape(const char *s)
{
	char *out = malloc(strlen(s) * 2 + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (strchr("*?[]\\", *s))
			*o++ = '\\';
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

struct usdt_link *trace_attach_one(struct trace_run *r, size_t i)
{
	USDT_OPTS(usdt_attach_opts, aopts, .usdt_cookie = i, .mode = r->o.mode,
		  .allow_red_zone_writes = r->o.red_zone);
	struct probe_ent *p = &r->ctx.probes[i];
	char *prov = glob_escape(p->provider);
	char *name = glob_escape(p->name);
	struct usdt_link *link = NULL;
	int err = ENOMEM;

	if (prov && name) {
		/* From the file read once: no re-parse, and the kernel
		 * gets that very file. */
		link = usdt_manager__attach_file(r->man,
						 r->skel->progs.usdt_trace,
						 r->attach_pid,
						 r->files[p->file].file, prov,
						 name, &aopts);
		err = errno;
	}
	free(prov);
	free(name);
	errno = err;
	return link;
}

/*
 * Why an attach to process pid failed with ESRCH, which the library says
 * for two causes: it exited, or it runs another file of that name, or of
 * the name the path's symlinks lead to (another install of the program, a
 * copy, an upgrade, or an overlay's layer rather than the file it sees).
 */
static const char *esrch_why(pid_t pid)
{
	if (pid > 0 && !kill(pid, 0))
		return "the process does not run this file: it maps another of that name, or of the name this path leads to (another install of the program, a copy, or an overlay's layer rather than the merged file it sees? what it runs is /proc/PID/exe; give the path as the process sees it, or /proc/PID/root/PATH)";
	return "the process has exited";
}

static bool has_sema(const struct usdt_probe *q)
{
	return usdt_probe__semaphore(q) != 0;
}

static bool sema_cleared(const struct usdt_probe *q)
{
	return usdt_probe__semaphore_cleared_at_load(q);
}

/* Does a call site of probe p that the attach takes pass test? (A bad
 * one never reaches the kernel: its EINVAL is no clash.) */
static bool probe_site_is(const struct trace_run *r, const struct probe_ent *p,
			  bool (*test)(const struct usdt_probe *q))
{
	struct usdt_file *file = r->files[p->file].file;
	size_t i;

	for (i = 0; i < usdt_file__probe_cnt(file); i++) {
		const struct usdt_probe *q = usdt_file__probe(file, i);

		if (q && !usdt_probe__status(q) && test(q) &&
		    !strcmp(usdt_probe__provider(q), p->provider) &&
		    !strcmp(usdt_probe__name(q), p->name))
			return true;
	}
	return false;
}

#define CLEARED_WHY \
	"its semaphore is in .bss, in the page that holds its segment's last file byte, which the loader clears after the kernel has counted the semaphore there"

/*
 * Probe p's semaphore is one the loader clears when it maps the file
 * (usdt_probe__semaphore_cleared_at_load()): a process that maps the file
 * after the attach never sees the probe enabled. -c's command execs after
 * the attach: p is skipped, saying why (true), unless it goes with a
 * pattern (by_pattern), which only says so. With pid -1, processes
 * started from now on are those that miss it.
 */
static bool cleared_skip(const struct trace_run *r, const struct probe_ent *p)
{
	if (!probe_site_is(r, p, sema_cleared))
		return false;
	if (r->child && !r->by_pattern) {
		probe_err(p,
			  "warning: skipped: " CLEARED_WHY
			  ": the command of -c maps the file after the attach and would never see the probe enabled (start it, then trace it with -p)");
		return true;
	}
	if (r->child)
		probe_err(p,
			  "warning: " CLEARED_WHY
			  ": the command of -c maps the file after the attach and will never see the probe enabled (start it, then trace it with -p)");
	else if (r->attach_pid < 0)
		probe_err(p,
			  "warning: " CLEARED_WHY
			  ": processes started from now on will never see the probe enabled; running ones do");
	return false;
}

/* Attach a pattern at a time; the BPF program tells the probes apart by
 * their call sites. Returns 0 or the exit status. */
static int attach_patterns(struct trace_run *r)
{
	static struct pattern any = { .provider = "*", .name = "*" };
	size_t n = 0;
	int i, k;

	for (i = 0; i < r->file_cnt; i++)
		n += (size_t)pats_or_one(sel_of(r, &r->files[i]));
	r->pat_links = calloc(n, sizeof(*r->pat_links));
	if (!r->pat_links)
		return tool_err("trace: out of memory");
	for (i = 0; i < (int)r->ctx.probe_cnt; i++)
		cleared_skip(r, &r->ctx.probes[i]);
	for (i = 0; i < r->file_cnt; i++) {
		const struct trace_file *f = &r->files[i];
		const struct selection *sel = sel_of(r, f);

		for (k = 0; f->file && k < pats_or_one(sel); k++) {
			USDT_OPTS(usdt_attach_opts, aopts, .mode = r->o.mode,
				  .usdt_cookie = TRACE_COOKIE_BY_OFFSET,
				  .allow_red_zone_writes = r->o.red_zone);
			const struct pattern *p =
				sel->pat_cnt ? &sel->pats[k] : &any;

			if (trace_stop_signal)
				return 128 + trace_stop_signal;
			r->pat_links[r->pat_link_cnt] =
				usdt_manager__attach_file(r->man,
							  r->skel->progs
								  .usdt_trace,
							  r->attach_pid,
							  f->file, p->provider,
							  p->name, &aopts);
			if (r->pat_links[r->pat_link_cnt])
				r->pat_link_cnt++;
			else if (errno != ENOENT && errno != EINVAL)
				return tool_err("trace: cannot attach to %s:%s in %s: %s",
						p->provider, p->name,
						f->target.shown,
						errno == ESRCH ?
							esrch_why(
								r->attach_pid) :
							attach_error(r, errno));
		}
	}
	if (!r->pat_link_cnt)
		return tool_err("trace: %s: no probe could be attached",
				r->shown);
	r->attached = r->ctx.probe_cnt;
	return 0;
}

/* Why an attach failed, with the likely cause of EINVAL at a semaphore
 * site, and the architecture of a file for another. */
const char *trace_attach_why(const struct trace_run *r,
			     const struct probe_ent *p, int err)
{
	static char foreign[96];
	const char *arch;

	arch = err == ENOEXEC ? usdt_file__arch_name(r->files[p->file].file) :
				NULL;
	if (arch) {
		snprintf(foreign, sizeof(foreign),
			 "the file is for %s, not for this host's architecture",
			 arch);
		return foreign;
	}
	if (err == EINVAL && probe_site_is(r, p, has_sema))
		return "invalid argument: the kernel refuses a site with a semaphore where another uprobe sits with another semaphore offset or none (another tracer's?); dmesg says \"ref_ctr_offset mismatch\"";
	if (err == ESRCH)
		return esrch_why(r->attach_pid);
	return attach_error(r, err);
}

/*
 * Attach every probe. A probe that cannot be attached for a reason of its
 * own (only broken sites, a feature the kernel lacks, a file of another
 * architecture among those traced) is skipped with a warning; anything
 * else ends the trace. Returns 0 or the exit status.
 */
int trace_attach_all(struct trace_run *r)
{
	size_t i, ok = 0;
	int err;

	if (r->by_pattern)
		return attach_patterns(r);
	for (i = 0; i < r->ctx.probe_cnt; i++) {
		struct probe_ent *p = &r->ctx.probes[i];

		if (trace_stop_signal)
			return 128 + trace_stop_signal;
		if (cleared_skip(r, p))
			continue;
		p->link = trace_attach_one(r, i);
		if (p->link) {
			ok++;
			continue;
		}
		err = errno;
		if (trace_stop_signal)
			return 128 + trace_stop_signal;
		if (err != EINVAL && err != EOPNOTSUPP && err != ENOEXEC &&
		    err != ENOENT)
			return probe_err(p, "cannot attach in %s: %s",
					 r->files[p->file].target.shown,
					 trace_attach_why(r, p, err));
		probe_err(p, "warning: skipped: %s",
			  trace_attach_why(r, p, err));
	}
	if (!ok && !((r->watch || r->all) && !r->ctx.probe_cnt))
		return tool_err("trace: %s: no probe could be attached",
				r->shown);
	r->attached = ok;
	return 0;
}

size_t trace_site_cnt(const struct trace_run *r, size_t *files)
{
	size_t sites = 0, i;
	bool *seen;

	*files = 0;
	seen = calloc((size_t)r->file_cnt + 1, sizeof(*seen));
	for (i = 0; i < r->ctx.probe_cnt; i++) {
		const struct probe_ent *p = &r->ctx.probes[i];

		if (!p->link && !r->by_pattern)
			continue;
		sites += p->link ? usdt_link__site_cnt(p->link) : 0;
		if (seen && !seen[p->file]) {
			seen[p->file] = true;
			(*files)++;
		}
	}
	free(seen);
	for (i = 0; i < (size_t)r->pat_link_cnt; i++)
		sites += usdt_link__site_cnt(r->pat_links[i]);
	return sites;
}

/*
 * Say on stderr that tracing runs: scripts wait for this line before they
 * make the traced program fire. Every call site of every probe counted is
 * attached when it prints.
 */
void trace_say_attached(const struct trace_run *r)
{
	size_t files, sites;

	if (r->o.quiet)
		return;
	sites = trace_site_cnt(r, &files);
	fprintf(stderr,
		"%s: tracing %zu probe%s (%zu call site%s) in %zu file%s; Ctrl-C to stop\n",
		tool_name, r->attached, r->attached == 1 ? "" : "s", sites,
		sites == 1 ? "" : "s", files, files == 1 ? "" : "s");
}
