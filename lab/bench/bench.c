// SPDX-License-Identifier: BSD-2-Clause
/*
 * libusdt against the system's libbpf, in one run, as ratios:
 *  - attach + detach of the 50 sites of one probe;
 *  - the cost of one probe hit reading three arguments, over an
 *    unattached baseline;
 *  - BPF instructions the verifier processed for each program.
 * (Memory, and attaching at scale: bench_scale.c.) Needs root. Prints a table; exits 0 unless something failed to run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "usdt.h"
#include "bench_ours.skel.h"
#include "bench_libbpf.skel.h"

#define HITS 2000000

/* Register operands only: libbpf 1.1.2 cannot read "-8@x2(%rip)". */
__attribute__((noinline)) static void hot(long i)
{
	STAP_PROBE3(bench, hot, i, i + 1, i * 2);
}

/* The same probe as newer <sys/sdt.h> emit it: "nop; nop5". */
__attribute__((noinline)) static void hot5(long i)
{
	STAP_PROBE3(bench, hot5, i, i + 1, i * 2);
	asm volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00");
}

#define S(n) STAP_PROBE1(bench, wide, n);
#define S10(b) S(b##0) S(b##1) S(b##2) S(b##3) S(b##4) S(b##5) S(b##6) \
	S(b##7) S(b##8) S(b##9)
__attribute__((noinline)) void wide(void)
{
	S10() S10(1) S10(2) S10(3) S10(4)
}

/* 10000 sites of one probe, for the cost of a miss after the first parse. */
#define M(a, b, c, d) STAP_PROBE1(bench, many, 1##a##b##c##d);
#define M10(a, b, c) M(a, b, c, 0) M(a, b, c, 1) M(a, b, c, 2) M(a, b, c, 3) \
	M(a, b, c, 4) M(a, b, c, 5) M(a, b, c, 6) M(a, b, c, 7) M(a, b, c, 8) \
	M(a, b, c, 9)
#define M100(a, b) M10(a, b, 0) M10(a, b, 1) M10(a, b, 2) M10(a, b, 3) \
	M10(a, b, 4) M10(a, b, 5) M10(a, b, 6) M10(a, b, 7) M10(a, b, 8) \
	M10(a, b, 9)
#define M1000(a) M100(a, 0) M100(a, 1) M100(a, 2) M100(a, 3) M100(a, 4) \
	M100(a, 5) M100(a, 6) M100(a, 7) M100(a, 8) M100(a, 9)
__attribute__((noinline)) void many(void)
{
	M1000(0) M1000(1) M1000(2) M1000(3) M1000(4) M1000(5) M1000(6)
	M1000(7) M1000(8) M1000(9)
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double loop_ns(void (*fn)(long))
{
	double t = now();
	long i;

	for (i = 0; i < HITS; i++)
		fn(i);
	return (now() - t) * 1e9 / HITS;
}

/* Run time of the BPF program itself, from the kernel's BPF stats. */
static double prog_ns(const struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len) ||
	    !info.run_cnt)
		return 0;
	return (double)info.run_time_ns / info.run_cnt;
}

static unsigned int xlated_insns(const struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
		return 0;
	return info.xlated_prog_len / 8;
}

/* ns per hit of probe `name` (fired by fn) for libusdt, then libbpf. */
static int per_hit(struct bench_ours *ours, struct usdt_manager *man,
		   struct bench_libbpf *lb, const char *name,
		   void (*fn)(long), double *t_ours, double *t_lb)
{
	struct usdt_link *ul;
	struct bpf_link *ll;

	ours->bss->hits = lb->bss->hits = 0;
	ours->bss->sum = lb->bss->sum = 0;
	ul = usdt_manager__attach(man, ours->progs.on_hit, -1, "/proc/self/exe",
				  "bench", name, NULL);
	if (!ul)
		return -1;
	*t_ours = loop_ns(fn);
	usdt_link__destroy(ul);
	ll = bpf_program__attach_usdt(lb->progs.on_hit, -1, "/proc/self/exe",
				      "bench", name, NULL);
	if (!ll)
		return -1;
	*t_lb = loop_ns(fn);
	bpf_link__destroy(ll);
	if (ours->bss->hits != HITS || lb->bss->hits != HITS ||
	    ours->bss->sum != lb->bss->sum) {
		fprintf(stderr, "bench: %s: hits %ld/%ld sums %ld/%ld differ\n",
			name, ours->bss->hits, lb->bss->hits, ours->bss->sum,
			lb->bss->sum);
		return -1;
	}
	return 0;
}

static unsigned int verified_insns(const struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
		return 0;
	return info.verified_insns;
}

/*
 * A probe name the file does not have, asked of a file of 10000 sites:
 * libusdt from a file parsed once (usdt_manager__attach_file()), libbpf
 * reading the file each time. Mean seconds per miss into *ours, *lb.
 */
static int miss_cost(struct bench_ours *ours, struct usdt_manager *man,
		     struct bench_libbpf *lb, double *ours_t, double *lb_t,
		     double *parse_t)
{
	usdt_print_fn_t old = usdt_set_print(NULL);
	libbpf_print_fn_t old_lb = libbpf_set_print(NULL);
	struct usdt_file *file;
	double t = now();
	int i, n = 1000, n_lb = 20;

	file = usdt_file__open("/proc/self/exe", NULL);
	*parse_t = now() - t;
	if (!file)
		return -1;
	t = now();
	for (i = 0; i < n; i++)
		if (usdt_manager__attach_file(man, ours->progs.on_hit, -1, file,
					      "bench", "nosuch", NULL))
			return -1;
	*ours_t = (now() - t) / n;
	t = now();
	for (i = 0; i < n_lb; i++)
		if (bpf_program__attach_usdt(lb->progs.on_hit, -1,
					     "/proc/self/exe", "bench",
					     "nosuch", NULL))
			return -1;
	*lb_t = (now() - t) / n_lb;
	usdt_file__close(file);
	usdt_set_print(old);
	libbpf_set_print(old_lb);
	return 0;
}

int main(void)
{
	struct bench_ours *ours = bench_ours__open();
	struct bench_libbpf *lb = bench_libbpf__open();
	struct usdt_manager *man;
	struct usdt_link *ul;
	struct bpf_link *ll;
	double base, t_ours, t_lb, t5_ours, t5_lb, a_ours, a_lb, t;
	double m_ours, m_lb, parse;
	int stats_fd;

	if (geteuid()) {
		fprintf(stderr, "bench: needs root\n");
		return 1;
	}
	if (!ours || !lb)
		return 1;
	man = usdt_manager__new(ours->obj, NULL);
	if (!man || bench_ours__load(ours) || bench_libbpf__load(lb))
		return 1;

	/* Attach + detach, 50 sites. */
	t = now();
	ul = usdt_manager__attach(man, ours->progs.on_hit, -1, "/proc/self/exe",
				  "bench", "wide", NULL);
	if (!ul)
		return 1;
	usdt_link__destroy(ul);
	a_ours = now() - t;
	t = now();
	ll = bpf_program__attach_usdt(lb->progs.on_hit, -1, "/proc/self/exe",
				      "bench", "wide", NULL);
	if (!ll)
		return 1;
	bpf_link__destroy(ll);
	a_lb = now() - t;

	if (miss_cost(ours, man, lb, &m_ours, &m_lb, &parse))
		return 1;

	/* Per hit. The kernel times BPF programs while stats are enabled. */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	base = loop_ns(hot);
	if (per_hit(ours, man, lb, "hot", hot, &t_ours, &t_lb) ||
	    per_hit(ours, man, lb, "hot5", hot5, &t5_ours, &t5_lb))
		return 1;

	printf("%-40s %12s %12s %8s\n", "benchmark", "libusdt", "libbpf",
	       "ratio");
	printf("%-40s %10.1fms %10.1fms %8.2f\n", "attach+detach 50 sites",
	       a_ours * 1e3, a_lb * 1e3, a_ours / a_lb);
	printf("%-40s %10.1fus %10.1fus %8.4f\n", "miss, 10k-site file (parsed once)",
	       m_ours * 1e6, m_lb * 1e6, m_ours / m_lb);
	printf("%-40s %10.1fms %12s\n", "first parse of this file", parse * 1e3,
	       "-");
	printf("%-40s %10.0fns %10.0fns %8.2f\n", "probe hit, 3 args (minus loop)",
	       t_ours - base, t_lb - base, (t_ours - base) / (t_lb - base));
	printf("%-40s %10.0fns %10.0fns %8.2f\n", "probe hit, nop;nop5 site",
	       t5_ours - base, t5_lb - base, (t5_ours - base) / (t5_lb - base));
	if (stats_fd >= 0)
		printf("%-40s %10.1fns %10.1fns %8.2f\n",
		       "BPF program run time per hit",
		       prog_ns(ours->progs.on_hit), prog_ns(lb->progs.on_hit),
		       prog_ns(ours->progs.on_hit) / prog_ns(lb->progs.on_hit));
	printf("%-40s %12u %12u %8.2f\n", "program size (xlated insns)",
	       xlated_insns(ours->progs.on_hit), xlated_insns(lb->progs.on_hit),
	       (double)xlated_insns(ours->progs.on_hit) /
		       xlated_insns(lb->progs.on_hit));
	printf("%-40s %12u %12u %8.2f\n", "verifier-processed insns",
	       verified_insns(ours->progs.on_hit),
	       verified_insns(lb->progs.on_hit),
	       (double)verified_insns(ours->progs.on_hit) /
		       verified_insns(lb->progs.on_hit));
	printf("(ratio < 1: libusdt is faster or smaller; baseline loop %.1f ns/iter, %d hits)\n",
	       base, HITS);
	usdt_manager__free(man);
	bench_ours__destroy(ours);
	bench_libbpf__destroy(lb);
	return 0;
}
