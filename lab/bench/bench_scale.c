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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
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
		if (s->glob_sites && glob_attach(s))
			return -1;
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
 * the others one per link. 0, or -1 (said) when the limit cannot grow.
 */
static int fd_room(const char *impl, size_t links, size_t sites)
{
	rlim_t need = (!strcmp(impl, "lb11") ? 2 * sites : links) + 256;
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
	fds.rlim_cur = need;
	return setrlimit(RLIMIT_NOFILE, &fds);
}

/* Load, and attach the names timed: "TAG attach_ms", "TAG hwm_mb". */
static int attach_timed(struct scale *s, const char *impl, const char *dir)
{
	char obj[512];
	double t, base;

	snprintf(obj, sizeof(obj), "%s/scale.o", dir);
	if (open_scale(s, impl, obj)) {
		fprintf(stderr, "bench_scale: cannot load %s\n", obj);
		return -1;
	}
	base = vm_hwm_mb();
	t = now();
	if (attach_names(s, 0, s->n)) {
		/* Not one by one at exit: that takes minutes. */
		destroy_rest(s);
		return -1;
	}
	t = now() - t;
	printf("%s attach_ms %.1f\n", s->tag, t * 1e3);
	printf("%s hwm_mb %.2f\n", s->tag, vm_hwm_mb());
	printf("%s base_mb %.2f\n", s->tag, base);
	return 0;
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
	if (attach_timed(&s, impl, dir))
		return -1;
	return destroy_rest(&s);
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
