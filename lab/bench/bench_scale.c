// SPDX-License-Identifier: BSD-2-Clause
/*
 * Attaching at scale, as a libbpf user does it: one attach call per probe
 * name of a generated target with N call sites and N names
 * (tests/fixtures/gen_probes.sh), by libusdt or by libbpf, in one process of
 * its own (bench_bpf.c runs it, interleaved with the other libraries, and
 * prints the table). What one round prints, "scale KEY VALUE":
 *  - attach_ms: the N attach calls;
 *  - hwm_mb, base_mb: the process's VmHWM after them, and before the
 *    first one (the object loaded);
 *  - miss_us: one more attach call for a name the file lacks (the file
 *    parsed before), the mean of many;
 *  - detach1_ms: destroying one link, one by one, the mean over a sample
 *    of a few links (names attached a second time), and detach1_n_s the same times N: destroying N links
 *    one by one would take minutes (the kernel waits a grace period per
 *    uprobe_multi link), so it is extrapolated, never run;
 *  - destroy_s (libusdt): all N links in one usdt_links__destroy() call;
 *  - owned_free_s (libusdt): usdt_manager__free() of a manager that owns
 *    the OWNED links of usdt_manager__attach_all() (owned.bpf.c).
 * libbpf has no call that destroys many links at once: its round closes
 * the rest of its links' descriptors from many threads, then exits.
 *
 * A names round (names_round(): NAMES names over SITES call sites, one
 * attach each) measures phases instead: attach, detach (every link:
 * usdt_links__destroy(), or bpf_link__destroy() one by one), free
 * (usdt_manager__free()), close (bpf_object__close()) and teardown, the
 * last three's sum; each its wall and CPU time and its calls that wait
 * for an RCU grace period (bench_waits.h; links closed).
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifndef BENCH_LIBBPF_ONLY
#include "usdt.h"
#endif
#include "bench_scale.h"
#include "bench_waits.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of the whole process, every thread's (usdt_links__destroy()
 * closes links from many). */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * What one phase (attach, detach, free, close) cost: wall and CPU time,
 * and the calls that wait for an RCU grace period, which no load on the
 * machine changes: map calls on outer maps (bench_waits.h) and kernel
 * links closed (`links`, set by the caller).
 */
struct phase {
	double wall, cpu;
	struct bench_waits w;
	unsigned long links;
};

static void phase_start(struct phase *p)
{
	bench_waits_now(&p->w);
	p->links = 0;
	p->cpu = cpu_now();
	p->wall = now();
}

/* From the start's figures to the phase's own. */
static void phase_end(struct phase *p)
{
	struct bench_waits w;

	p->wall = now() - p->wall;
	p->cpu = cpu_now() - p->cpu;
	bench_waits_now(&w);
	p->w.map_calls = w.map_calls - p->w.map_calls;
	p->w.outer_calls = w.outer_calls - p->w.outer_calls;
	p->w.waits = w.waits - p->w.waits;
	p->w.closes = w.closes - p->w.closes;
}

static void phase_add(struct phase *sum, const struct phase *p)
{
	sum->wall += p->wall;
	sum->cpu += p->cpu;
	sum->w.map_calls += p->w.map_calls;
	sum->w.outer_calls += p->w.outer_calls;
	sum->w.waits += p->w.waits;
	sum->w.closes += p->w.closes;
	sum->links += p->links;
}

static double vm_hwm_mb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb / 1024.0;
}

struct scale {
	const char *impl;
	int ours;
	struct bpf_object *obj;
	struct bpf_program *prog;
	const char *target;
	void *man;
	void **links;
	size_t n;
	size_t sample;		/* links destroyed one by one */
	const char *tag;	/* what the printed keys start with */
	size_t glob_sites;	/* ours: attach gen:* too, over this many */
};

/*
 * A phase's "TAG NAME_ms", "TAG NAME_cpu_ms", "TAG NAME_mapw" (grace
 * periods of outer-map calls) and "TAG NAME_linkw" (kernel links
 * closed). With BENCH_WAITS_VERBOSE, on stderr, the calls behind them:
 * that the wrap sees the library's map calls at all.
 */
static void phase_print(const struct scale *s, const char *name,
			const struct phase *p)
{
	printf("%s %s_ms %.3f\n", s->tag, name, p->wall * 1e3);
	printf("%s %s_cpu_ms %.3f\n", s->tag, name, p->cpu * 1e3);
	printf("%s %s_mapw %lu\n", s->tag, name, p->w.waits);
	printf("%s %s_linkw %lu\n", s->tag, name, p->links);
	if (getenv("BENCH_WAITS_VERBOSE"))
		fprintf(stderr, "bench_scale: %s %s %s: %lu map updates/deletes, %lu of them on outer maps (%lu grace periods, batch waits %s), %lu kernel links closed, %lu close() calls\n",
			s->impl, s->tag, name, p->w.map_calls,
			p->w.outer_calls, p->w.waits,
			bench_waits_batch_once() ? "once" : "per entry",
			p->links, p->w.closes);
}

/* The kernel links this process holds (the fdinfo of a link's descriptor
 * has link_type): each closes with a wait for a grace period. */
static unsigned long links_held(void)
{
	char path[64], line[128];
	unsigned long n = 0;
	struct dirent *e;
	DIR *d = opendir("/proc/self/fdinfo");
	FILE *f;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d",
			 atoi(e->d_name));
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "link_type:", 10)) {
				n++;
				break;
			}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

static void *attach_name(struct scale *s, const char *name)
{
#ifndef BENCH_LIBBPF_ONLY
	if (s->ours)
		return usdt_manager__attach(s->man, s->prog, -1, s->target,
					    "gen", name, NULL);
#endif
	return bpf_program__attach_usdt(s->prog, -1, s->target, "gen", name,
					NULL);
}

static void destroy_one(struct scale *s, void *link)
{
#ifndef BENCH_LIBBPF_ONLY
	if (s->ours) {
		usdt_link__destroy(link);
		return;
	}
#endif
	bpf_link__destroy(link);
}

static int open_scale(struct scale *s, const char *impl, const char *obj)
{
	s->impl = impl;
	s->ours = !strcmp(impl, "ours");
	s->obj = bpf_object__open_file(obj, NULL);
	if (!s->obj)
		return -1;
	s->prog = bpf_object__find_program_by_name(s->obj, "on_hit");
#ifndef BENCH_LIBBPF_ONLY
	if (s->ours)
		s->man = usdt_manager__new(s->obj, NULL);
	if (s->ours && !s->man)
		return -1;
#endif
	s->links = calloc(s->n + s->sample, sizeof(*s->links));
	if (!s->prog || !s->links || bpf_object__load(s->obj))
		return -1;
	return 0;
}

/* Attach names p0 .. p<n-1>, from index `from` of s->links. */
static int attach_names(struct scale *s, size_t from, size_t n)
{
	char name[32];
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "p%zu", i);
		s->links[from + i] = attach_name(s, name);
		if (!s->links[from + i]) {
			fprintf(stderr, "bench_scale: attaching gen:%s: %s\n",
				name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* ENOENT each time, and said: ours is silenced for it (libbpf's is). */
static double miss_us(struct scale *s)
{
	int i, n = s->ours ? 1000 : 20;
	double t;
#ifndef BENCH_LIBBPF_ONLY
	usdt_print_fn_t old = usdt_set_print(NULL);
#endif

	t = now();
	for (i = 0; i < n && !attach_name(s, "nosuch"); i++)
		;
	t = (now() - t) * 1e6 / n;
#ifndef BENCH_LIBBPF_ONLY
	usdt_set_print(old);
#endif
	return i == n ? t : -1;
}

/* Close every descriptor above stderr, from many threads at once. */
struct closer {
	int *fds;
	size_t n, next;
};

static void *close_worker(void *arg)
{
	struct closer *c = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED)) < c->n)
		close(c->fds[i]);
	return NULL;
}

static void close_all_fds(void)
{
	struct closer c = { 0 };
	pthread_t tids[256];
	size_t cap = 0, t, started = 0;
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int fd;

	while (d && (e = readdir(d))) {
		fd = atoi(e->d_name);
		if (fd <= 2 || fd == dirfd(d))
			continue;
		if (c.n == cap) {
			cap = cap ? cap * 2 : 1024;
			c.fds = realloc(c.fds, cap * sizeof(*c.fds));
			if (!c.fds)
				return;
		}
		c.fds[c.n++] = fd;
	}
	if (d)
		closedir(d);
	for (t = 0; t < 256 && pthread_create(&tids[t], NULL, close_worker,
					     &c) == 0; t++)
		started++;
	close_worker(&c);
	for (t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	free(c.fds);
}

/* One by one: the first s->sample names attached again, then destroyed. */
static int detach_sample(struct scale *s)
{
	size_t i;
	double t;

	if (attach_names(s, s->n, s->sample))
		return -1;
	t = now();
	for (i = 0; i < s->sample; i++)
		destroy_one(s, s->links[s->n + i]);
	t = (now() - t) / s->sample;
	printf("scale detach1_ms %.3f\n", t * 1e3);
	printf("scale detach1_n_s %.3f\n", t * s->n);
	return 0;
}

#ifndef BENCH_LIBBPF_ONLY
/* One attach call for every probe of the target (gen:*), timed, and the
 * link it gives destroyed. */
static int glob_attach(struct scale *s)
{
	struct usdt_link *l;
	double t = now();

	l = usdt_manager__attach(s->man, s->prog, -1, s->target, "gen", "*",
				 NULL);
	if (!l || usdt_link__site_cnt(l) != s->glob_sites) {
		fprintf(stderr, "bench_scale: attaching gen:*: %s\n",
			l ? "not every call site" : strerror(errno));
		usdt_link__destroy(l);
		return -1;
	}
	printf("%s glob_ms %.1f\n", s->tag, (now() - t) * 1e3);
	return usdt_link__destroy(l) ? -1 : 0;
}
#endif

static int destroy_rest(struct scale *s)
{
	double t = now();

#ifndef BENCH_LIBBPF_ONLY
	if (s->ours) {
		if (usdt_links__destroy((struct usdt_link **)s->links, s->n))
			return -1;
		printf("%s destroy_s %.3f\n", s->tag, now() - t);
		t = now();
		usdt_manager__free(s->man);
		printf("%s free_s %.4f\n", s->tag, now() - t);
		bpf_object__close(s->obj);
		free(s->links);
		return 0;
	}
#endif
	/* libbpf's links are left to the process's end; their kernel
	 * links close here. */
	fflush(stdout);
	close_all_fds();
	fprintf(stderr, "bench_scale: libbpf teardown, parallel close: %.1f s\n",
		now() - t);
	_exit(s->links[s->n - 1] ? 0 : 1);
}

#ifndef BENCH_LIBBPF_ONLY
/* usdt_manager__free() of the links of usdt_manager__attach_all(). */
static int owned_round(const char *obj_path)
{
	struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
	struct usdt_manager *man = obj ? usdt_manager__new(obj, NULL) : NULL;
	double t;
	int n;

	if (!man || bpf_object__load(obj)) {
		fprintf(stderr, "bench_scale: cannot load %s\n", obj_path);
		return -1;
	}
	n = usdt_manager__attach_all(man, -1, NULL);
	if (n != SCALE_OWNED) {
		fprintf(stderr, "bench_scale: attach_all: %d\n", n);
		return -1;
	}
	t = now();
	usdt_manager__free(man);
	printf("scale owned_free_s %.3f\n", now() - t);
	bpf_object__close(obj);
	return 0;
}
#endif

/*
 * Room for the descriptors of `links` links over `sites` call sites:
 * libbpf 1.1.2 holds two per call site (a perf event and a BPF link),
 * the others one per link, and libusdt one per chunk of 64 specs too.
 * Every library gets the same soft limit, the hard one (raised to the
 * need where it is lower): libusdt makes a file's chunks in one batch
 * only where they take at most half the room left, so a limit of
 * exactly the need would make it add chunks, and wait, at later
 * attaches. 0, or -1 (said) when the limit cannot grow.
 */
static int fd_room(const char *impl, size_t links, size_t sites)
{
	rlim_t need = (!strcmp(impl, "lb11") ? 2 * sites : links) + 256 +
		      (!strcmp(impl, "ours") ? sites / 64 + 1 : 0);
	struct rlimit fds;

	if (getrlimit(RLIMIT_NOFILE, &fds))
		return -1;
	if (fds.rlim_max < need) {
		fds.rlim_max = need;	/* needs CAP_SYS_RESOURCE */
		if (setrlimit(RLIMIT_NOFILE, &fds)) {
			fprintf(stderr, "bench_scale: %s: %zu call sites need %llu descriptors, RLIMIT_NOFILE allows %llu: skipped\n",
				impl, sites, (unsigned long long)need,
				(unsigned long long)fds.rlim_cur);
			return -1;
		}
	}
	fds.rlim_cur = fds.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &fds);
}

/* Load, and attach the names as a phase ("TAG attach_ms" ...), then
 * "TAG hwm_mb" and "TAG base_mb". */
static int attach_timed(struct scale *s, const char *impl, const char *dir)
{
	struct phase p;
	char obj[512];
	double base;

	snprintf(obj, sizeof(obj), "%s/scale.o", dir);
	if (open_scale(s, impl, obj)) {
		fprintf(stderr, "bench_scale: cannot load %s\n", obj);
		return -1;
	}
	base = vm_hwm_mb();
	phase_start(&p);
	if (attach_names(s, 0, s->n)) {
		/* Not one by one at exit: that takes minutes. */
		destroy_rest(s);
		return -1;
	}
	phase_end(&p);
	phase_print(s, "attach", &p);
	printf("%s hwm_mb %.2f\n", s->tag, vm_hwm_mb());
	printf("%s base_mb %.2f\n", s->tag, base);
	return 0;
}

/*
 * The kernel links that destroying s's links closes: ours says per link
 * (one uprobe_multi link, or a perf link per call site); libbpf's are
 * counted in the process's descriptors (libbpf 1.3+ makes a uprobe_multi
 * link per attach where the kernel has them, 1.1.2 a perf link per site).
 */
static unsigned long link_closes(const struct scale *s)
{
	unsigned long n = 0;
#ifndef BENCH_LIBBPF_ONLY
	size_t i;

	for (i = 0; s->ours && i < s->n; i++)
		n += usdt_link__is_multi(s->links[i]) ?
		     1 : usdt_link__site_cnt(s->links[i]);
	if (s->ours) {
		if (getenv("BENCH_WAITS_VERBOSE"))
			fprintf(stderr, "bench_scale: ours %s: %lu link closes by the links, %lu kernel links held\n",
				s->tag, n, links_held());
		return n;
	}
#endif
	n = links_held();
	if (getenv("BENCH_WAITS_VERBOSE"))
		fprintf(stderr, "bench_scale: %s %s: %lu kernel links held by %zu links\n",
			s->impl, s->tag, n, s->n);
	return n;
}

/* Every link of s destroyed, as each library lets a user: ours in one
 * call, libbpf's one by one (it has no call for many). */
static int detach_all(struct scale *s)
{
	size_t i;

#ifndef BENCH_LIBBPF_ONLY
	if (s->ours)
		return usdt_links__destroy((struct usdt_link **)s->links,
					   s->n) ? -1 : 0;
#endif
	for (i = 0; i < s->n; i++)
		bpf_link__destroy(s->links[i]);
	return 0;
}

/*
 * The teardown of a names round as phases: detach (every link), free
 * (usdt_manager__free(); libbpf has none) and close
 * (bpf_object__close()), and their sum "teardown". Ours attaches gen:*
 * once between detach and free (glob_ms), outside the phases.
 */
static int names_teardown(struct scale *s)
{
	struct phase det, fr = { 0 }, cl, all = { 0 };
	unsigned long closes = link_closes(s);
	int err;

	phase_start(&det);
	err = detach_all(s);
	phase_end(&det);
	det.links = closes;
#ifndef BENCH_LIBBPF_ONLY
	if (s->ours && !err)
		err = glob_attach(s);
	if (s->ours) {
		phase_start(&fr);
		usdt_manager__free(s->man);
		phase_end(&fr);
	}
#endif
	phase_start(&cl);
	bpf_object__close(s->obj);
	phase_end(&cl);
	free(s->links);
	phase_print(s, "detach", &det);
	if (s->ours)
		phase_print(s, "free", &fr);
	phase_print(s, "close", &cl);
	phase_add(&all, &det);
	phase_add(&all, &fr);
	phase_add(&all, &cl);
	phase_print(s, "teardown", &all);
	return err;
}

int names_round(const char *impl, const char *dir, const char *target,
		size_t sites, size_t names)
{
	char tag[32];
	struct scale s = { .target = target, .n = names, .tag = tag,
			   .glob_sites = sites };

	snprintf(tag, sizeof(tag), "names%zu", sites);
	if (fd_room(impl, names, sites))
		return 0;
	bench_waits_batch_once();	/* asked before any thread runs */
	if (attach_timed(&s, impl, dir))
		return -1;
	return names_teardown(&s);
}

int scale_round(const char *impl, const char *dir, const char *target,
		size_t n, size_t sample)
{
	struct scale s = { .target = target, .n = n, .sample = sample,
			   .tag = "scale" };

	if (fd_room(impl, n + sample, n + sample))
		return 0;
	if (attach_timed(&s, impl, dir))
		return -1;
	printf("scale miss_us %.2f\n", miss_us(&s));
	if (detach_sample(&s) || destroy_rest(&s))
		return -1;
#ifndef BENCH_LIBBPF_ONLY
	if (s.ours) {
		char obj[512];

		snprintf(obj, sizeof(obj), "%s/owned.o", dir);
		return owned_round(obj);
	}
#endif
	return 0;
}
