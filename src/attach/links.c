// SPDX-License-Identifier: BSD-2-Clause
/*
 * A link's life: made (usdt__link_alloc()), its kernel side taken out by
 * the maker that made it, what it holds in the store given back, and the
 * public usdt_link__*() calls; destroying many at once in parallel.
 */
#include <pthread.h>
#include <unistd.h>

#include "attach/link.h"

/* Detach a link from the kernel; the first error, and nothing to detach
 * left behind in either case. */
int usdt__link_detach(struct usdt_link *link)
{
	return link->maker->detach(link);
}

/* After usdt__link_detach(): what it holds in the store back, free. */
int usdt__link_release(struct usdt_link *link)
{
	/* A pinned kernel link goes on reading its specs and storage. */
	int err = link->pinned ? 0 : usdt__store_drop(link->st, &link->held);

	free(link); /* and its arrays */
	return err;
}

/* Undo everything the link holds and free it; the first error met. */
int usdt__link_unwind(struct usdt_link *link)
{
	/* Kernel first, so no hit sees a spec going away. */
	int err = usdt__link_detach(link), e = usdt__link_release(link);

	return err ? err : e;
}

/* The link and its arrays in one zeroed allocation: 8-byte elements
 * first, after the struct (a multiple of 8 bytes), then 4-byte ones. */
struct usdt_link *usdt__link_alloc(const struct attach_ctx *c)
{
	size_t n = c->matched, ips = c->take.use_ip ? n : 0;
	size_t perf = c->maker->per_site ? n : 0;
	size_t slots = c->take.storage ? (c->take.per_site ? n : 1) : 0;
	struct usdt_link *link;
	char *p;

	_Static_assert(sizeof(struct usdt_link) % 8 == 0, "tail alignment");
	link = calloc(1, sizeof(*link) + n * sizeof(uint64_t) +
				 ips * sizeof(long) +
				 perf * sizeof(struct bpf_link *) +
				 n * sizeof(int) + slots * sizeof(uint32_t));
	if (!link)
		return NULL;
	link->st = c->st;
	link->multi_fd = -1;
	link->cap = (uint32_t)n;
	p = (char *)(link + 1);
	link->offsets = (uint64_t *)p;
	p += n * sizeof(uint64_t);
	link->held.ips = ips ? (long *)p : NULL;
	p += ips * sizeof(long);
	link->perf = perf ? (struct bpf_link **)p : NULL;
	p += perf * sizeof(struct bpf_link *);
	link->held.ids = (int *)p;
	p += n * sizeof(int);
	link->held.slots = slots ? (uint32_t *)p : NULL;
	link->slot_per_site = c->take.per_site;
	link->maker = c->maker;
	link->ext_fd = -1;
	return link;
}

int usdt_link__destroy(struct usdt_link *link)
{
	struct usdt__store *st;
	int err;

	if (!link)
		return 0;
	st = link->st;
	err = usdt__link_unwind(link);
	usdt__store_put(st); /* the link's reference */
	return usdt__err(err);
}

/*
 * Closing a kernel link waits for a grace period (~55 ms for a
 * uprobe_multi link on 6.x): one by one, 10,000 links take ten minutes.
 * Threads close them side by side, and the grace periods overlap.
 */
#define DETACH_THREADS 256

struct detach_job {
	struct usdt_link **links;
	size_t n;
	size_t next; /* the next link to take, atomically */
	int err;     /* the first error, atomically */
};

static void *detach_worker(void *arg)
{
	struct detach_job *job = arg;
	size_t i;
	int e, none = 0;

	while ((i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED)) <
	       job->n) {
		if (!job->links[i])
			continue;
		e = usdt__link_detach(job->links[i]);
		if (e)
			__atomic_compare_exchange_n(&job->err, &none, e, false,
						    __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
		none = 0;
	}
	return NULL;
}

/* Detach links[0..n) from the kernel, in parallel where threads start. */
static int detach_all(struct usdt_link **links, size_t n)
{
	struct detach_job job = { .links = links, .n = n };
	pthread_t tids[DETACH_THREADS];
	size_t t, started = 0;

	for (t = 0; t < DETACH_THREADS && t + 1 < n; t++) {
		if (pthread_create(&tids[t], NULL, detach_worker, &job))
			break;
		started++;
	}
	/* This thread works too: with no thread started, it does it all. */
	detach_worker(&job);
	for (t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	return job.err;
}

int usdt_links__destroy(struct usdt_link **links, size_t n)
{
	struct usdt__store *st;
	int err, e;
	size_t i;

	if (!links)
		return n ? usdt__err(-EINVAL) : 0;
	/* Every kernel link first, so no hit sees a spec going away; then
	 * the bookkeeping, which is not thread-safe, in this thread. */
	err = detach_all(links, n);
	for (i = 0; i < n; i++) {
		if (!links[i])
			continue;
		st = links[i]->st;
		e = usdt__link_release(links[i]);
		err = err ? err : e;
		usdt__store_put(st); /* the link's reference */
		links[i] = NULL;
	}
	return usdt__err(err);
}

size_t usdt_link__site_cnt(const struct usdt_link *link)
{
	return link ? link->site_cnt : 0;
}

size_t usdt_link__spec_cnt(const struct usdt_link *link)
{
	return link ? link->spec_cnt : 0;
}

uint64_t usdt__link_offset(const struct usdt_link *link, size_t i)
{
	return i < link->site_cnt ? link->offsets[i] : 0;
}

void *usdt_link__storage(const struct usdt_link *link, size_t site_index)
{
	uint32_t slot;

	if (!link) {
		errno = EINVAL;
		return NULL;
	}
	if (!link->held.slot_cnt || site_index >= link->site_cnt) {
		errno = ENOENT;
		return NULL;
	}
	slot = link->held.slots[link->slot_per_site ? site_index : 0];
	return usdt__storage_at(&link->st->storage, slot);
}

bool usdt_link__is_multi(const struct usdt_link *link)
{
	return link && link->multi_fd >= 0;
}

int usdt_link__fd(const struct usdt_link *link)
{
	if (!link)
		return usdt__err(-EINVAL);
	return link->multi_fd >= 0 ? link->multi_fd : usdt__err(-EOPNOTSUPP);
}

int usdt_link__pin(struct usdt_link *link, const char *path)
{
	int err;

	if (!link || !path)
		return usdt__err(-EINVAL);
	if (link->multi_fd < 0) {
		pr_warn("cannot pin '%s': per-site uprobes are one kernel object per call site\n",
			path);
		return usdt__err(-EOPNOTSUPP);
	}
	err = bpf_obj_pin(link->multi_fd, path);
	if (err) {
		err = -errno;
		pr_warn("cannot pin the link at '%s': %s\n", path,
			usdt__errstr(err));
		return usdt__err(err);
	}
	if (!link->pinned)
		link->st->pinned_cnt++;
	link->pinned = true;
	return 0;
}
