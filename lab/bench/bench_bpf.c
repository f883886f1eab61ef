// SPDX-License-Identifier: BSD-2-Clause
/*
 * The BPF side, side by side: tests/kernel/shapes.bpf.c built three ways
 * (on libusdt's header, on libbpf 1.1.2's, on libbpf 1.7's) and compared
 * on what the verifier processes at -mcpu=v1/v2/v3, the program's size,
 * and the BPF run time per probe hit (kernel BPF stats), min and median
 * over interleaved rounds. Needs root.
 *
 *   bench_bpf [-s TARGET N] [-m TARGET2 SITES NAMES] OURS_DIR LB11_DIR
 *             [LB17_BIN LB17_DIR]                the table
 *   bench_bpf -r IMPL DIR [verify]               one round (internal)
 *   bench_bpf -r IMPL DIR scale TARGET N         one scale round (internal)
 *   bench_bpf -r IMPL DIR names TARGET2 SITES NAMES   (internal)
 *
 * With -s, also attaching at scale (bench_scale.c): TARGET has N call
 * sites of N probe names (gen:p0 ...), attached one call per name by each
 * library in a fresh process per round, with DIR/scale.o (and ours
 * DIR/owned.o); with -m, TARGET2's SITES call sites of NAMES probe names
 * attached one call per name and torn down, each phase's wall and CPU
 * time and its calls that wait for an RCU grace period side by side
 * (phase_table()). Without -s, the -m targets alone.
 *
 * A DIR holds shapes-v1.o, shapes-v2.o and shapes-v3.o. One round runs in
 * its own process because each libbpf's user space must attach programs
 * built on its own header: libbpf 1.7's rounds run LB17_BIN, this file
 * built against libbpf 1.7 (BENCH_LIBBPF_ONLY). BENCH_QUICK=1: fewer
 * rounds and hits (about a minute).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifndef BENCH_LIBBPF_ONLY
#include "usdt.h"
#endif
#include "bench_scale.h"

static const char *const progs[] = { "checked3", "checked12", "usdt12",
				     "loop" };
#define NPROGS 4
static const char *const cpus[] = { "v1", "v2", "v3" };
#define NCPUS 3

/* Twelve register operands (libbpf 1.1.2 reads no %rip-relative ones). */
__attribute__((noinline)) static void hot12(long i)
{
	STAP_PROBE12(bench, hot12, i, i + 1, i + 2, i + 3, i + 4, i + 5,
		     i + 6, i + 7, i + 8, i + 9, i + 10, i ^ 11);
}

/*
 * Mixed operands, as a probe on a function's locals has them: five stack
 * slots within 24 bytes of the stack pointer (gcc -O2 on x86-64:
 * -8@(%rsp) -4@8(%rsp) -2@12(%rsp) -1@14(%rsp) -8@16(%rsp)), five
 * registers and two constants (issue 28).
 */
struct slots {
	long a;
	int b;
	short c;
	signed char d;
	long f;
};

__attribute__((noinline)) static void fill_slots(struct slots *s, long i)
{
	s->a = i;
	s->b = -(int)i;
	s->c = (short)i;
	s->d = -1;
	s->f = i * 3;
}

__attribute__((noinline)) static void mixed12(long i)
{
	struct slots s;

	fill_slots(&s, i);
	/* The slots stay in memory: the compiler passes them as operands
	 * on the stack, not loaded into registers. */
	__asm__ volatile("" : : "r"(&s) : "memory");
	STAP_PROBE12(bench, mixed12, s.a, s.b, s.c, s.d, s.f, i, i + 1, i ^ 3,
		     i + 4, 5, -3, i + 7);
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static long hit_count(void)
{
	return getenv("BENCH_QUICK") ? 100000 : 300000;
}

/* ------------------------------------------------------------------ */
/* One round, in its own process                                      */

static struct bpf_object *open_one(const char *dir, const char *cpu,
				   const char *prog)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	char path[512];

	snprintf(path, sizeof(path), "%s/shapes-%s.o", dir, cpu);
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "bench_bpf: cannot open %s\n", path);
		exit(1);
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), prog));
	return obj;
}

static int prog_info(const struct bpf_program *p, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_obj_get_info_by_fd(bpf_program__fd(p), info, &len);
}

/* Verified instructions, xlated and JITed size of each shape at each
 * -mcpu; "fail" where it does not load. */
static void verify(const char *impl, const char *dir)
{
	struct bpf_prog_info info;
	struct bpf_object *obj;
	struct bpf_program *p;
	int c, i;

	for (c = 0; c < NCPUS; c++) {
		for (i = 0; i < NPROGS; i++) {
			obj = open_one(dir, cpus[c], progs[i]);
#ifndef BENCH_LIBBPF_ONLY
			struct usdt_manager *man = NULL;

			if (!strcmp(impl, "ours"))
				man = usdt_manager__new(obj, NULL);
#endif
			p = bpf_object__find_program_by_name(obj, progs[i]);
			if (bpf_object__load(obj) || prog_info(p, &info)) {
				printf("verified %s %s fail\n", progs[i], cpus[c]);
			} else {
				printf("verified %s %s %u\n", progs[i], cpus[c],
				       info.verified_insns);
				printf("xlated %s %s %u\n", progs[i], cpus[c],
				       info.xlated_prog_len / 8);
				printf("jited %s %s %u\n", progs[i], cpus[c],
				       info.jited_prog_len);
			}
#ifndef BENCH_LIBBPF_ONLY
			usdt_manager__free(man);
#endif
			bpf_object__close(obj);
		}
	}
}

/* The BPF run time per hit of prog, attached to probe (hot12 or mixed12)
 * by impl; cpu "v3", or "storage" for our build with USDT_STORAGE_TYPE
 * (__u64), attached with a value. */
static double time_probe(const char *impl, const char *dir, const char *cpu,
			 const char *prog, int ip_map, const char *probe)
{
	int mixed = !strcmp(probe, "mixed12");
	struct bpf_object *obj = open_one(dir, cpu, prog);
	struct bpf_program *p = bpf_object__find_program_by_name(obj, prog);
	struct bpf_prog_info info;
	struct bpf_link *link = NULL;
	long i, hits = hit_count();
	double ns = -1;
	void *ul = NULL;
#ifndef BENCH_LIBBPF_ONLY
	struct usdt_manager *man = NULL;

	if (!strcmp(impl, "ours")) {
		__u64 init = 0;
		/* The cookie runs are timed as users load them: without
		 * the IP-map path. */
		USDT_OPTS(usdt_manager_opts, mo, .keep_ip_map = ip_map);
		USDT_OPTS(usdt_attach_opts, o, .force_ip_map = ip_map);

		if (!strcmp(cpu, "storage")) {
			o.storage = &init;
			o.storage_sz = sizeof(init);
		}

		man = usdt_manager__new(obj, &mo);
		if (man && !bpf_object__load(obj))
			/* The IP map needs the mapping address: pid 0. */
			ul = usdt_manager__attach(man, p, ip_map ? 0 : -1,
						  "/proc/self/exe", "bench",
						  probe, &o);
	} else
#endif
	if (!bpf_object__load(obj))
		link = bpf_program__attach_usdt(p, -1, "/proc/self/exe",
						"bench", probe, NULL);
	if (link || ul) {
		for (i = 0; i < hits; i++)
			if (mixed)
				mixed12(i);
			else
				hot12(i);
		if (!prog_info(p, &info) && info.run_cnt == (__u64)hits)
			ns = (double)info.run_time_ns / info.run_cnt;
	}
	bpf_link__destroy(link);
#ifndef BENCH_LIBBPF_ONLY
	usdt_link__destroy(ul);
	usdt_manager__free(man);
#endif
	bpf_object__close(obj);
	return ns;
}

static double time_prog(const char *impl, const char *dir, const char *cpu,
			const char *prog, int ip_map)
{
	return time_probe(impl, dir, cpu, prog, ip_map, "hot12");
}

/* Ours with USDT_STORAGE_TYPE: bpf_usdt_storage() by cookie and by the
 * IP map, and a shape that does not use it. */
static void storage_round(const char *impl, const char *dir)
{
	static const struct {
		const char *key, *prog;
		int ip_map;
	} runs[] = {
		{ "storage", "storage", 0 },
		{ "storage-ipmap", "storage", 1 },
		{ "storage-usdt12", "usdt12", 0 },
	};
	double ns;
	size_t i;

	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		ns = time_prog(impl, dir, "storage", runs[i].prog,
			       runs[i].ip_map);
		if (ns >= 0)
			printf("ns %s %.1f\n", runs[i].key, ns);
	}
}

/* Ours: the spec lookup alone, as the header does it (chunk, then spec)
 * and as layout 2 did (one flat array). */
static void lookup_round(const char *impl, const char *dir)
{
	static const char *const runs[] = { "spec_flat", "spec_chunked" };
	double ns;
	size_t i;

	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		ns = time_prog(impl, dir, "lookup", runs[i], 0);
		if (ns >= 0)
			printf("ns %s %.1f\n", runs[i], ns);
	}
}

static int round_main(const char *impl, const char *dir, int with_verify)
{
	int stats_fd, i;
	double ns;

	libbpf_set_print(quiet);
#ifndef BENCH_LIBBPF_ONLY
	usdt_set_print(NULL);
#endif
	if (with_verify)
		verify(impl, dir);
	/* The kernel times BPF programs while this fd is open. */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "bench_bpf: cannot enable BPF stats\n");
		return 1;
	}
	for (i = 0; i < NPROGS; i++) {
		ns = time_prog(impl, dir, "v3", progs[i], 0);
		if (ns >= 0)
			printf("ns %s %.1f\n", progs[i], ns);
	}
	ns = time_probe(impl, dir, "v3", "usdt12", 0, "mixed12");
	if (ns >= 0)
		printf("ns usdt12-mixed %.1f\n", ns);
	ns = time_prog(impl, dir, "v3", "empty", 0);
	if (ns >= 0)
		printf("ns empty %.1f\n", ns);
	/* libbpf's twelve checks load at v1 only (1.7; 1.1.2 not at all). */
	ns = time_prog(impl, dir, "v1", "checked12", 0);
	if (ns >= 0)
		printf("ns checked12-v1 %.1f\n", ns);
	if (!strcmp(impl, "ours")) {
		ns = time_prog(impl, dir, "v3", "usdt12", 1);
		if (ns >= 0)
			printf("ns usdt12-ipmap %.1f\n", ns);
		storage_round(impl, dir);
		lookup_round(impl, dir);
	}
	close(stats_fd);
	return 0;
}

/* -r IMPL DIR [verify], -r IMPL DIR scale TARGET N, or
 * -r IMPL DIR names TARGET SITES NAMES */
static int one_round(int argc, char **argv)
{
	if (argc >= 8 && !strcmp(argv[4], "names")) {
		libbpf_set_print(quiet);
		return names_round(argv[2], argv[3], argv[5],
				   strtoul(argv[6], NULL, 10),
				   strtoul(argv[7], NULL, 10)) ? 1 : 0;
	}
	if (argc >= 7 && !strcmp(argv[4], "scale")) {
		libbpf_set_print(quiet);
		return scale_round(argv[2], argv[3], argv[5],
				   strtoul(argv[6], NULL, 10),
				   getenv("BENCH_QUICK") ? 20 : 100) ? 1 : 0;
	}
	return round_main(argv[2], argv[3],
			  argc > 4 && !strcmp(argv[4], "verify"));
}

#ifndef BENCH_LIBBPF_ONLY
/* ------------------------------------------------------------------ */
/* The driver                                                         */

#define NIMPL 3
#define MAX_ROUNDS 16
#define MAX_KEYS 256

static const char *const impl_names[NIMPL] = { "ours", "lb11", "lb17" };

/* key -> one value per implementation and round. */
static struct {
	char key[48];
	double v[NIMPL][MAX_ROUNDS];
	int n[NIMPL];
} keys[MAX_KEYS];
static int nkeys;

static void record(int impl, const char *key, double v)
{
	int k;

	for (k = 0; k < nkeys && strcmp(keys[k].key, key); k++)
		;
	if (k == nkeys) {
		if (nkeys == MAX_KEYS)
			return;
		snprintf(keys[nkeys++].key, sizeof(keys[0].key), "%s", key);
	}
	if (keys[k].n[impl] < MAX_ROUNDS)
		keys[k].v[impl][keys[k].n[impl]++] = v;
}

/* How many BPF links the kernel holds now, anyone's. */
static int links_now(void)
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_link_get_next_id(id, &id))
		n++;
	return n;
}

/*
 * After a round: the kernel frees what the round's process left (its
 * links, their uprobes) for a while after it exits, a grace period each;
 * the next round would pay for that work. Wait until the links are back
 * to what was there before (others may come and go: at most 20 s).
 */
static void settle(int before)
{
	int i;

	for (i = 0; i < 400 && links_now() > before; i++)
		usleep(50000);
	usleep(100000);
}

/* Run one round of impl (args: "", "verify" or "scale TARGET N") and
 * record what it prints. */
static int run_round(int impl, const char *bin, const char *dir,
		     const char *args)
{
	char cmd[1024], line[256], what[32], name[32], arg[32], key[48];
	FILE *f;

	int links = links_now(), err;

	snprintf(cmd, sizeof(cmd), "%s -r %s %s %s", bin, impl_names[impl],
		 dir, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%31s %31s %31s %31s", what, name, arg,
			       key);

		if (n == 4) {	/* verified/xlated/jited PROG CPU VALUE */
			snprintf(line, sizeof(line), "%s %s %s", what, name,
				 arg);
			record(impl, line, strcmp(key, "fail") ? atof(key) : -1);
		} else if (n == 3) {	/* ns PROG VALUE */
			snprintf(line, sizeof(line), "%s %s", what, name);
			record(impl, line, atof(arg));
		}
	}
	err = pclose(f) ? -1 : 0;
	settle(links);
	return err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* min (or the value) and median of a key for one implementation. */
static int stats(int k, int impl, double *min, double *med)
{
	double v[MAX_ROUNDS];
	int n = keys[k].n[impl];

	if (!n)
		return -1;
	memcpy(v, keys[k].v[impl], n * sizeof(v[0]));
	qsort(v, n, sizeof(v[0]), cmp_double);
	*min = v[0];
	*med = v[n / 2];
	return 0;
}

static void cell(int k, int impl, int timed)
{
	double min, med;

	if (k < 0 || stats(k, impl, &min, &med))
		printf(" %17s", "-");
	else if (min < 0)
		printf(" %17s", "fails to load");
	else if (timed)
		printf(" %8.1f/%-8.1f", min, med);
	else
		printf(" %17.0f", min);
}

static int find_key(const char *key)
{
	int k;

	for (k = 0; k < nkeys; k++)
		if (!strcmp(keys[k].key, key))
			return k;
	return -1;
}

/* ours / other, on the min; "-" when either is missing. */
static void ratio(int k, int other)
{
	double a, b, m;

	if (k < 0 || stats(k, 0, &a, &m) || stats(k, other, &b, &m) ||
	    a < 0 || b <= 0)
		printf(" %7s", "-");
	else
		printf(" %7.2f", a / b);
}

/* ours / other, on the min less each one's empty-program floor. */
static void net_ratio(int k, int other)
{
	int e = find_key("ns empty");
	double a, b, ea, eb, m;

	if (k < 0 || e < 0 || stats(k, 0, &a, &m) || stats(k, other, &b, &m) ||
	    stats(e, 0, &ea, &m) || stats(e, other, &eb, &m) || a < 0 ||
	    b - eb <= 0)
		printf(" %7s", "-");
	else
		printf(" %7.2f", (a - ea) / (b - eb));
}

/* timed: 0 a count (the min), 1 a time per hit (min/median, and the
 * ratios less the empty program), 2 other min/median values. */
static void row(const char *label, const char *key, int timed)
{
	int k = find_key(key);

	printf("%-34s", label);
	cell(k, 0, timed);
	cell(k, 1, timed);
	cell(k, 2, timed);
	ratio(k, 1);
	ratio(k, 2);
	if (timed == 1) {
		net_ratio(k, 1);
		net_ratio(k, 2);
	}
	printf("\n");
}

/* libusdt's IP-map mode against libbpf's cookie mode (libbpf cannot be
 * told to use its IP map where the kernel has cookies). */
static void ipmap_row(void)
{
	int ki = find_key("ns usdt12-ipmap"), kc = find_key("ns usdt12");
	double a, b, m;
	int j;

	printf("%-34s", "12-arg BPF_USDT(), our IP map");
	cell(ki, 0, 1);
	printf(" %17s %17s", "(cookie)", "(cookie)");
	for (j = 1; j < NIMPL; j++) {
		if (ki < 0 || kc < 0 || stats(ki, 0, &a, &m) ||
		    stats(kc, j, &b, &m) || b <= 0)
			printf(" %7s", "-");
		else
			printf(" %7.2f", a / b);
	}
	printf("\n");
}

/* Ours only: a figure against a base (per-attach storage against the
 * empty program or the same shape without it; one spec lookup against
 * another). */
static void own_row(const char *label, const char *key, const char *base)
{
	int k = find_key(key), kb = find_key(base);
	double a, b, m;

	printf("%-42s", label);
	cell(k, 0, 1);
	if (k < 0 || kb < 0 || stats(k, 0, &a, &m) || stats(kb, 0, &b, &m) ||
	    b <= 0)
		printf(" %7s\n", "-");
	else
		printf(" %7.2f (%+.1f ns)\n", a / b, a - b);
}

static void storage_rows(void)
{
	printf("per-attach storage (libusdt, ns per hit, min/median; ratio and difference to the base):\n");
	own_row("bpf_usdt_storage() + increment / empty", "ns storage",
		"ns empty");
	own_row("the same, IP map / empty", "ns storage-ipmap", "ns empty");
	own_row("12-arg BPF_USDT(), storage declared / not", "ns storage-usdt12",
		"ns usdt12");
	printf("spec lookup alone (libusdt, ns per hit, min/median; ratio and difference):\n");
	own_row("flat array (layout 2) / empty", "ns spec_flat", "ns empty");
	own_row("chunk + array (capacity on demand) / empty",
		"ns spec_chunked", "ns empty");
	own_row("chunk + array / flat array", "ns spec_chunked",
		"ns spec_flat");
}

static void table(void)
{
	static const char *const labels[NPROGS] = {
		"3 checked bpf_usdt_arg()", "12 checked bpf_usdt_arg()",
		"12-arg BPF_USDT()", "loop over bpf_usdt_arg_cnt()",
	};
	char key[64], label[64];
	int i, c;

	printf("%-34s %17s %17s %17s %7s %7s %7s %7s\n", "figure", "libusdt",
	       "libbpf 1.1.2", "libbpf 1.7", "/1.1.2", "/1.7", "net", "net");
	for (i = 0; i < NPROGS; i++) {
		for (c = 0; c < NCPUS; c++) {
			snprintf(key, sizeof(key), "verified %s %s", progs[i],
				 cpus[c]);
			snprintf(label, sizeof(label), "%s, %s: verified", labels[i],
				 cpus[c]);
			row(label, key, 0);
		}
	}
	row("12-arg BPF_USDT(): xlated insns", "xlated usdt12 v3", 0);
	row("12-arg BPF_USDT(): JITed bytes", "jited usdt12 v3", 0);
	printf("BPF run time per hit, ns (min/median of rounds, -mcpu=v3); last two\n"
	       "columns: ratios less the empty program's time (the kernel's own):\n");
	row("empty program (the floor)", "ns empty", 1);
	for (i = 0; i < NPROGS; i++) {
		snprintf(key, sizeof(key), "ns %s", progs[i]);
		row(labels[i], key, 1);
	}
	row("12 checked bpf_usdt_arg(), v1", "ns checked12-v1", 1);
	row("12-arg BPF_USDT(), 5 stack operands", "ns usdt12-mixed", 1);
	ipmap_row();
	printf("(ratios on the min: < 1 means libusdt costs less)\n");
	storage_rows();
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* The min of key over impl's rounds, or -1. */
static double min_of(const char *key, int impl)
{
	int k = find_key(key);
	double a, m;

	return k < 0 || stats(k, impl, &a, &m) ? -1 : a;
}

/* A goal of the issue: the value, its ratio to the limit, met or not. */
static void goal(const char *what, double v, double limit)
{
	if (v < 0) {
		printf("  goal: %-56s %9s  not measured\n", what, "-");
		return;
	}
	if (limit > 0)
		printf("  goal: %-56s %9.4f  %6.3f of it, %s\n", what, v,
		       v / limit, v <= limit ? "met" : "NOT MET");
	else
		printf("  goal: %-56s %9.4f  %13s %s\n", what, v, "",
		       v <= limit ? "met" : "NOT MET");
}

/* ours' min over other's min; -1 when either is missing */
static double ratio_of(const char *key, int other)
{
	double a = min_of(key, 0), b = min_of(key, other);

	return a < 0 || b <= 0 ? -1 : a / b;
}

/*
 * The BPF side's goals: each shape loads at every -mcpu and verifies in at
 * most half of libbpf 1.7's instructions (twelve checked calls, which
 * libbpf 1.7 cannot load at v3: at most 30,000), a 12-arg BPF_USDT()
 * translates to at most 250, runs in at most half of libbpf 1.7's time
 * (on register operands and on stack operands),
 * and checked calls and the IP map run no slower than libbpf 1.7's.
 */
static void bpf_goals(void)
{
	char key[64], label[96];
	double ours, lb;
	int i, c;

	for (i = 0; i < NPROGS; i++)
		for (c = 0; c < NCPUS; c++) {
			snprintf(key, sizeof(key), "verified %s %s", progs[i],
				 cpus[c]);
			ours = min_of(key, 0);
			lb = min_of(key, 2);
			if (ours < 0) {
				printf("  goal: %s %s loads: NOT MET (fails to load)\n",
				       progs[i], cpus[c]);
			} else if (lb > 0) {
				snprintf(label, sizeof(label),
					 "verified, %s %s / libbpf 1.7's (<= 0.5)",
					 progs[i], cpus[c]);
				goal(label, ours / lb, 0.5);
			}
			if (!strcmp(progs[i], "checked12")) {
				snprintf(label, sizeof(label),
					 "verified, checked12 %s (<= 30000)",
					 cpus[c]);
				goal(label, ours, 30000);
			}
		}
	goal("12-arg BPF_USDT(): xlated insns (<= 250)",
	     min_of("xlated usdt12 v3", 0), 250);
	goal("12-arg BPF_USDT() per hit / libbpf 1.7's (<= 0.5)",
	     ratio_of("ns usdt12", 2), 0.5);
	goal("12-arg BPF_USDT(), stack operands / libbpf 1.7's (<= 0.5)",
	     ratio_of("ns usdt12-mixed", 2), 0.5);
	goal("3 checked calls per hit / libbpf 1.7's (<= 1)",
	     ratio_of("ns checked3", 2), 1);
	goal("12 checked calls at v1 per hit / libbpf 1.7's (<= 1)",
	     ratio_of("ns checked12-v1", 2), 1);
	lb = min_of("ns usdt12", 2);
	ours = min_of("ns usdt12-ipmap", 0);
	goal("12-arg BPF_USDT(), our IP map / libbpf 1.7 per hit (<= 1)",
	     ours < 0 || lb <= 0 ? -1 : ours / lb, 1);
}

#define MAX_NAMES 3

/* The -m targets: "SITES NAMES" each. */
static char names_args[MAX_NAMES][64];
static int nnames;

/* "names<SITES> what", the key of a -m target's figure. */
static const char *names_key(int i, const char *what)
{
	static char key[48];

	snprintf(key, sizeof(key), "names%lu %s",
		 strtoul(names_args[i], NULL, 10), what);
	return key;
}

/* A phase's figure (what: "_ms", "_cpu_ms", "_mapw", "_linkw") of -m
 * target i: impl's min over rounds (max: the max), or -1. */
static double phase_fig(int i, const char *phase, const char *what, int impl,
			int max)
{
	char key[48];
	double v[MAX_ROUNDS], min, med;
	int k, n;

	snprintf(key, sizeof(key), "names%lu %s%s",
		 strtoul(names_args[i], NULL, 10), phase, what);
	k = find_key(key);
	if (k < 0 || stats(k, impl, &min, &med))
		return -1;
	if (!max)
		return min;
	n = keys[k].n[impl];
	memcpy(v, keys[k].v[impl], n * sizeof(v[0]));
	qsort(v, n, sizeof(v[0]), cmp_double);
	return v[n - 1];
}

/* One library's wall and CPU ms and waits (outer-map calls + kernel
 * links closed; the max over rounds, which do not differ) in a phase. */
static void phase_cell(int i, const char *phase, int impl)
{
	double wall = phase_fig(i, phase, "_ms", impl, 0);
	char waits[32];

	if (wall < 0) {
		printf(" %27s", "-");
		return;
	}
	snprintf(waits, sizeof(waits), "%.0f+%.0f",
		 phase_fig(i, phase, "_mapw", impl, 1),
		 phase_fig(i, phase, "_linkw", impl, 1));
	printf(" %9.1f %7.1f %9s", wall, phase_fig(i, phase, "_cpu_ms", impl, 0),
	       waits);
}

static void phase_ratio(int i, const char *phase, const char *what)
{
	double a = phase_fig(i, phase, what, 0, 0);
	double b = phase_fig(i, phase, what, 2, 0);

	if (a < 0 || b <= 0)
		printf(" %8s", "-");
	else
		printf(" %8.2f", a / b);
}

/* Target i's phases: wall, CPU and grace-period waits of each library. */
static void phase_table(int i)
{
	static const char *const phases[] = { "attach", "detach", "free",
					      "close", "teardown" };
	size_t p;

	printf("per phase: wall ms, CPU ms (min of rounds), waits = outer-map updates/deletes + kernel links closed:\n");
	printf("%-9s %27s %27s %27s %8s %8s\n", "phase", "libusdt",
	       "libbpf 1.1.2", "libbpf 1.7", "wall/1.7", "CPU/1.7");
	printf("%-9s", "");
	for (p = 0; p < NIMPL; p++)
		printf(" %9s %7s %9s", "wall", "CPU", "waits");
	printf("\n");
	for (p = 0; p < sizeof(phases) / sizeof(phases[0]); p++) {
		printf("%-9s", phases[p]);
		phase_cell(i, phases[p], 0);
		phase_cell(i, phases[p], 1);
		phase_cell(i, phases[p], 2);
		phase_ratio(i, phases[p], "_ms");
		phase_ratio(i, phases[p], "_cpu_ms");
		printf("\n");
	}
}

/* Target i's goals of wall time against libbpf 1.7, with the waits that
 * explain them: ours waits for no grace period in an attach after a
 * file's first, and none in usdt_manager__free(). */
static void phase_goals(int i, unsigned long sites)
{
	char label[96];

	snprintf(label, sizeof(label),
		 "%lu sites: attach wall / libbpf 1.7's (<= 1)", sites);
	goal(label, ratio_of(names_key(i, "attach_ms"), 2), 1);
	snprintf(label, sizeof(label),
		 "%lu sites: teardown wall / libbpf 1.7's (<= 1)", sites);
	goal(label, ratio_of(names_key(i, "teardown_ms"), 2), 1);
	snprintf(label, sizeof(label),
		 "%lu sites: attach outer-map waits, %s names (<= 1)", sites,
		 strchr(names_args[i], ' ') + 1);
	goal(label, phase_fig(i, "attach", "_mapw", 0, 1), 1);
	snprintf(label, sizeof(label),
		 "%lu sites: usdt_manager__free() waits (<= 0)", sites);
	goal(label, phase_fig(i, "free", "_mapw", 0, 1) +
		    phase_fig(i, "free", "_linkw", 0, 1), 0);
	snprintf(label, sizeof(label),
		 "%lu sites: usdt_manager__free(), ms (<= %d)", sites,
		 sites >= 100000 ? 10 : 100);
	goal(label, min_of(names_key(i, "free_ms"), 0),
	     sites >= 100000 ? 10 : 100);
}

/* The -m targets' rows and goals: per name at each size, next to
 * libbpf 1.7, and the cost per site from the smallest to the largest. */
static void names_table(void)
{
	double first = -1, last = -1;
	unsigned long sites = 0, first_sites = 0;
	char label[96];
	int i;

	for (i = 0; i < nnames; i++) {
		sites = strtoul(names_args[i], NULL, 10);
		printf("%lu call sites (distinct specs) under %s probe names:\n",
		       sites, strchr(names_args[i], ' ') + 1);
		row("attach all names, ms", names_key(i, "attach_ms"), 2);
		row("teardown, ms", names_key(i, "teardown_ms"), 2);
		row("usdt_manager__free(), ms", names_key(i, "free_ms"), 2);
		row("VmHWM after, MB", names_key(i, "hwm_mb"), 2);
		row("one attach of gen:*, ms", names_key(i, "glob_ms"), 2);
		phase_table(i);
	}
	for (i = 0; i < nnames; i++) {
		sites = strtoul(names_args[i], NULL, 10);
		phase_goals(i, sites);
		snprintf(label, sizeof(label),
			 "%lu sites: VmHWM after / libbpf 1.7's (<= 1)", sites);
		goal(label, ratio_of(names_key(i, "hwm_mb"), 2), 1);
		last = min_of(names_key(i, "attach_ms"), 0) / sites;
		if (first < 0) {
			first = last;
			first_sites = sites;
		}
	}
	if (nnames > 1) {
		snprintf(label, sizeof(label),
			 "attach per site, %lu / %lu sites (<= 1.5)", sites,
			 first_sites);
		goal(label, first > 0 && last > 0 ? last / first : -1, 1.5);
	}
}

/* Attaching at scale (bench_scale.c), with the goals. */
static void scale_table(const char *n, int rounds)
{
	double d = min_of("scale destroy_s", 0);
	double b17 = min_of("scale detach1_n_s", 2);
	double b0 = min_of("scale detach1_n_s", 0);
	double b1 = min_of("scale detach1_ms", 0);
	double of = min_of("scale owned_free_s", 0);

	printf("\n%s call sites of %s probe names, one attach call per name; min/median of %d round(s):\n",
	       n, n, rounds);
	printf("%-34s %17s %17s %17s %7s %7s\n", "figure", "libusdt",
	       "libbpf 1.1.2", "libbpf 1.7", "/1.1.2", "/1.7");
	row("attach all names, ms", "scale attach_ms", 2);
	row("VmHWM after, MB", "scale hwm_mb", 2);
	row("VmHWM before (object loaded), MB", "scale base_mb", 2);
	row("a miss after the first parse, us", "scale miss_us", 2);
	row("destroy a link alone, ms (sample)", "scale detach1_ms", 2);
	row("all one by one, s (extrapolated)", "scale detach1_n_s", 2);
	row("usdt_links__destroy(all), s", "scale destroy_s", 2);
	row("usdt_manager__free() after, s", "scale free_s", 2);
	row("usdt_manager__free(), " STR(SCALE_OWNED) " owned, s",
	    "scale owned_free_s", 2);
	goal("attach all names, s (<= 1)", min_of("scale attach_ms", 0) / 1e3,
	     1);
	goal("attach all names / libbpf 1.7's (<= 0.2)",
	     ratio_of("scale attach_ms", 2), 0.2);
	goal("a miss after the first parse, ms (<= 0.1)",
	     min_of("scale miss_us", 0) / 1e3, 0.1);
	goal("usdt_links__destroy(all), s (<= 10)", d, 10);
	goal("usdt_links__destroy(all) / 1.7 one by one (<= 0.02)",
	     d < 0 || b17 <= 0 ? -1 : d / b17, 0.02);
	goal("usdt_links__destroy(all) / ours one by one (<= 0.02)",
	     d < 0 || b0 <= 0 ? -1 : d / b0, 0.02);
	goal("usdt_manager__free(), owned links / one by one (<= 0.02)",
	     of < 0 || b1 <= 0 ? -1 : of / (b1 * SCALE_OWNED / 1e3), 0.02);
	goal("VmHWM after / libbpf 1.7's (<= 1)", ratio_of("scale hwm_mb", 2),
	     1);
	if (nnames)
		names_table();
}

int main(int argc, char **argv)
{
	const char *dirs[NIMPL] = { NULL }, *bins[NIMPL], *self = argv[0];
	int rounds = getenv("BENCH_QUICK") ? 3 : 9;
	int scale_rounds = getenv("BENCH_QUICK") ? 1 : 3;
	char scale[600] = "", names[MAX_NAMES][600];
	int r, i, m;

	if (argc >= 4 && !strcmp(argv[1], "-r"))
		return one_round(argc, argv);
	if (argc >= 4 && !strcmp(argv[1], "-s")) {
		snprintf(scale, sizeof(scale), "scale %s %s", argv[2], argv[3]);
		argc -= 3;
		argv += 3;
	}
	while (argc >= 5 && !strcmp(argv[1], "-m") && nnames < MAX_NAMES) {
		snprintf(names[nnames], sizeof(names[0]), "names %s %s %s",
			 argv[2], argv[3], argv[4]);
		snprintf(names_args[nnames++], sizeof(names_args[0]), "%s %s",
			 argv[3], argv[4]);
		argc -= 4;
		argv += 4;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: %s [-s TARGET N] [-m TARGET2 SITES NAMES]... OURS_DIR LB11_DIR [LB17_BIN LB17_DIR]\n",
			self);
		return 2;
	}
	if (geteuid()) {
		fprintf(stderr, "bench_bpf: needs root\n");
		return 1;
	}
	dirs[0] = argv[1];
	dirs[1] = argv[2];
	bins[0] = bins[1] = self;
	if (argc >= 5) {
		bins[2] = argv[3];
		dirs[2] = argv[4];
	}
	/* BENCH_SCALE_ONLY: the attach rounds alone. */
	if (getenv("BENCH_SCALE_ONLY"))
		rounds = 0;
	for (r = 0; r < rounds; r++)
		for (i = 0; i < NIMPL; i++)
			if (dirs[i] && run_round(i, bins[i], dirs[i],
						 r ? "" : "verify"))
				fprintf(stderr, "bench_bpf: a %s round failed\n",
					impl_names[i]);
	if (rounds) {
		printf("%d rounds of %ld hits each, interleaved\n", rounds,
		       hit_count());
		table();
		bpf_goals();
	}
	/* Before the scale rounds' children write to the same terminal. */
	fflush(stdout);
	if (!*scale && !nnames)
		return 0;
	for (r = 0; r < scale_rounds; r++)
		for (i = 0; i < NIMPL; i++) {
			if (dirs[i] && *scale &&
			    run_round(i, bins[i], dirs[i], scale))
				fprintf(stderr, "bench_bpf: a %s scale round failed\n",
					impl_names[i]);
			for (m = 0; m < nnames; m++)
				if (dirs[i] &&
				    run_round(i, bins[i], dirs[i], names[m]))
					fprintf(stderr, "bench_bpf: a %s round failed (%s)\n",
						impl_names[i], names[m]);
		}
	if (*scale)
		scale_table(strchr(scale + 6, ' ') + 1, scale_rounds);
	else
		names_table();
	return 0;
}
#else
int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "-r"))
		return one_round(argc, argv);
	fprintf(stderr, "usage: %s -r IMPL DIR [verify]\n", argv[0]);
	return 2;
}
#endif
